// RUN: %opt %s --lower-to-linalg --split-input-file | FileCheck %s

// QGemm (transB, per-column b, int32 C, u8 output): zero-point-shifted i32
// operands, B transposed, an i32 matmul, then one epilogue adding C and
// requantizing in f32: (alpha * a_scale) * b_scale[n] / y_scale, clamped
// to [0 - zp, 255 - zp], rounded half to even, + zp
// CHECK-LABEL: func.func @qgemm
// CHECK: arith.extui
// CHECK: arith.subi
// CHECK: arith.extsi
// CHECK: arith.subi
// CHECK: linalg.transpose ins(%{{.*}} : tensor<4x8xi32>) outs(%{{.*}} : tensor<8x4xi32>) permutation = [1, 0]
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x8xi32>, tensor<8x4xi32>) outs(%{{.*}} : tensor<?x4xi32>)
// CHECK: %[[ALPHA:.*]] = arith.constant 5.000000e-01 : f32
// CHECK: %[[SA:.*]] = tensor.extract %arg1[] : tensor<f32>
// CHECK: %[[S0:.*]] = arith.mulf %[[ALPHA]], %[[SA]] : f32
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %arg6, %arg4 : tensor<?x4xi32>, tensor<4xi32>, tensor<4xf32>) outs(%{{.*}} : tensor<?x4xi8>)
// CHECK: ^bb0(%[[ACC:.*]]: i32, %[[C:.*]]: i32, %[[SB:.*]]: f32, %{{.*}}: i8):
// CHECK: arith.addi %[[ACC]], %[[C]] : i32
// CHECK: arith.mulf %[[S0]], %[[SB]] : f32
// CHECK: arith.divf
// CHECK: arith.sitofp
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: math.roundeven
// CHECK: arith.fptosi
// CHECK: arith.addi
// CHECK: arith.trunci
// CHECK-NOT: com_microsoft.
func.func @qgemm(%a: tensor<?x8xui8>, %sa: tensor<f32>, %za: tensor<ui8>, %b: tensor<4x8xi8>, %sb: tensor<4xf32>, %zb: tensor<4xi8>, %c: tensor<4xi32>, %sy: tensor<f32>, %zy: tensor<ui8>) -> tensor<?x4xui8> {
  %0 = "com_microsoft.q_gemm"(%a, %sa, %za, %b, %sb, %zb, %c, %sy, %zy) {alpha = 5.000000e-01 : f32, transA = 0 : si64, transB = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1>} : (tensor<?x8xui8>, tensor<f32>, tensor<ui8>, tensor<4x8xi8>, tensor<4xf32>, tensor<4xi8>, tensor<4xi32>, tensor<f32>, tensor<ui8>) -> tensor<?x4xui8>
  return %0 : tensor<?x4xui8>
}

// -----

// MatMulIntegerToFloat, 3-D A: the shifted A collapsed to 2-D for one i32
// matmul, then f32(acc) * (a_scale * b_scale[n]) + bias[n]
// CHECK-LABEL: func.func @mitf
// CHECK: %[[SA:.*]] = tensor.extract %arg2[] : tensor<f32>
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<?x?x8xi32> into tensor<?x8xi32>
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x8xi32>, tensor<8x4xi32>)
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %arg3, %arg6 : tensor<?x?x4xi32>, tensor<4xf32>, tensor<4xf32>) outs(%{{.*}} : tensor<?x?x4xf32>)
// CHECK: ^bb0(%[[ACC:.*]]: i32, %[[SB:.*]]: f32, %[[BIAS:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[SA]], %[[SB]] : f32
// CHECK-NEXT: %[[F:.*]] = arith.sitofp %[[ACC]] : i32 to f32
// CHECK-NEXT: %[[Y:.*]] = arith.mulf %[[F]], %[[M]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.addf %[[Y]], %[[BIAS]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK-NOT: com_microsoft.
func.func @mitf(%a: tensor<?x?x8xui8>, %b: tensor<8x4xi8>, %sa: tensor<f32>, %sb: tensor<4xf32>, %za: tensor<ui8>, %zb: tensor<4xi8>, %bias: tensor<4xf32>) -> tensor<?x?x4xf32> {
  %0 = "com_microsoft.mat_mul_integer_to_float"(%a, %b, %sa, %sb, %za, %zb, %bias) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1>} : (tensor<?x?x8xui8>, tensor<8x4xi8>, tensor<f32>, tensor<4xf32>, tensor<ui8>, tensor<4xi8>, tensor<4xf32>) -> tensor<?x?x4xf32>
  return %0 : tensor<?x?x4xf32>
}

// -----

// DynamicQuantizeMatMul: DynamicQuantizeLinear's min/max reduction and
// uint8 quantization of A, then as MatMulIntegerToFloat with its scale
// CHECK-LABEL: func.func @dqmm
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: linalg.generic
// CHECK: arith.divf
// CHECK: math.roundeven
// CHECK: arith.fptoui %{{.*}} : f32 to i8
// CHECK: arith.extui %{{.*}} : i8 to i32
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x8xi32>, tensor<8x4xi32>)
// CHECK: %[[SB:.*]] = tensor.extract %arg2[] : tensor<f32>
// CHECK: %[[M:.*]] = arith.mulf %{{.*}}, %[[SB]] : f32
// CHECK: linalg.generic
// CHECK: arith.sitofp
// CHECK-NEXT: arith.mulf %{{.*}}, %[[M]] : f32
// CHECK-NOT: com_microsoft.
func.func @dqmm(%a: tensor<?x8xf32>, %b: tensor<8x4xi8>, %sb: tensor<f32>) -> tensor<?x4xf32> {
  %0 = "com_microsoft.dynamic_quantize_mat_mul"(%a, %b, %sb) {operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>} : (tensor<?x8xf32>, tensor<8x4xi8>, tensor<f32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}

// -----

// MatMulNBits, 4 bits, block 16, K = 40 (3 blocks, the last padded),
// packed uint8 zero points: one generic dequantizes the weights into
// W [K, N] (B read at (n, k / 16, (k mod 16) / 2), the nibble k mod 2,
// the zero point nibble (k / 16) mod 2), then A (collapsed) @ W and the bias
// CHECK-DAG: #[[B:.*]] = affine_map<(d0, d1) -> (d1, d0 floordiv 16, (d0 mod 16) floordiv 2)>
// CHECK-DAG: #[[S:.*]] = affine_map<(d0, d1) -> (d1, d0 floordiv 16)>
// CHECK-DAG: #[[Z:.*]] = affine_map<(d0, d1) -> (d1, (d0 floordiv 16) floordiv 2)>
// CHECK-LABEL: func.func @nbits
// CHECK: linalg.generic {indexing_maps = [#[[B]], #[[S]], #[[Z]], #{{.*}}], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: outs(%{{.*}} : tensor<40x4xf32>)
// CHECK: linalg.index 0 : index
// CHECK: arith.shrui
// CHECK: arith.andi
// CHECK: arith.shrui
// CHECK: arith.andi
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: tensor.collapse_shape %arg0 {{\[}}[0, 1], [2]] : tensor<?x?x40xf32> into tensor<?x40xf32>
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x40xf32>, tensor<40x4xf32>)
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK-NOT: com_microsoft.
func.func @nbits(%a: tensor<?x?x40xf32>, %b: tensor<4x3x8xui8>, %s: tensor<4x3xf32>, %z: tensor<4x2xui8>, %bias: tensor<4xf32>) -> tensor<?x?x4xf32> {
  %0 = "com_microsoft.mat_mul_n_bits"(%a, %b, %s, %z, %bias) {K = 40 : si64, N = 4 : si64, accuracy_level = 0 : si64, bits = 4 : si64, block_size = 16 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 1>, weight_prepacked = 0 : si64} : (tensor<?x?x40xf32>, tensor<4x3x8xui8>, tensor<4x3xf32>, tensor<4x2xui8>, tensor<4xf32>) -> tensor<?x?x4xf32>
  return %0 : tensor<?x?x4xf32>
}

// -----

// MatMulNBits, 8 bits without zero points: the byte itself, zero point 128
// CHECK-LABEL: func.func @nbits8
// CHECK: linalg.generic
// CHECK: ^bb0(%[[Q:.*]]: i8, %[[SC:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[E:.*]] = arith.extui %[[Q]] : i8 to i32
// CHECK-NEXT: %[[F:.*]] = arith.uitofp %[[E]] : i32 to f32
// CHECK-NEXT: %[[Z:.*]] = arith.constant 1.280000e+02 : f32
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[F]], %[[Z]] : f32
// CHECK-NEXT: arith.mulf %[[D]], %[[SC]] : f32
// CHECK: linalg.matmul ins(%arg0, %{{.*}} : tensor<?x32xf32>, tensor<32x4xf32>)
func.func @nbits8(%a: tensor<?x32xf32>, %b: tensor<4x2x16xui8>, %s: tensor<8xf32>) -> tensor<?x4xf32> {
  %0 = "com_microsoft.mat_mul_n_bits"(%a, %b, %s) {K = 32 : si64, N = 4 : si64, accuracy_level = 0 : si64, bits = 8 : si64, block_size = 16 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0>, weight_prepacked = 0 : si64} : (tensor<?x32xf32>, tensor<4x2x16xui8>, tensor<8xf32>) -> tensor<?x4xf32>
  return %0 : tensor<?x4xf32>
}
