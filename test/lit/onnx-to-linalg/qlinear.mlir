// RUN: %opt %s --lower-to-linalg --split-input-file | FileCheck %s

// QLinearAdd as MLAS's AVX2 kernel: F = zC - fma(rA, zA, rB*zB), then
// fma(A, rA, fma(B, rB, F)); A [?x3x4] against B [3x1]: the innermost dim
// decides at compile time that A is no per-span scalar (no swap)
// CHECK-LABEL: func.func @add
// CHECK: %[[RA:.*]] = arith.divf
// CHECK: %[[RB:.*]] = arith.divf
// CHECK: %[[RBZB:.*]] = arith.mulf %[[RB]]
// CHECK: %[[T:.*]] = math.fma %[[RA]], %{{.*}}, %[[RBZB]] : f32
// CHECK: %[[F:.*]] = arith.subf %{{.*}}, %[[T]] : f32
// CHECK: linalg.generic
// CHECK: ^bb0(%[[A:.*]]: i8, %[[B:.*]]: i8, %{{.*}}: i8):
// CHECK: %[[AF:.*]] = arith.uitofp %[[A]] : i8 to f32
// CHECK: %[[BF:.*]] = arith.uitofp %[[B]] : i8 to f32
// CHECK: %[[IN:.*]] = math.fma %[[BF]], %[[RB]], %[[F]] : f32
// CHECK: %[[V:.*]] = math.fma %[[AF]], %[[RA]], %[[IN]] : f32
// CHECK: math.roundeven %[[V]]
// CHECK: arith.fptoui
// CHECK-NOT: com_microsoft.
func.func @add(%a: tensor<?x3x4xui8>, %b: tensor<3x1xui8>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<?x3x4xui8> {
  %0 = "com_microsoft.q_linear_add"(%a, %s, %z, %b, %s, %z, %s, %z) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1>} : (tensor<?x3x4xui8>, tensor<f32>, tensor<ui8>, tensor<3x1xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<?x3x4xui8>
  return %0 : tensor<?x3x4xui8>
}

// -----

// dynamic dims: whether onnxruntime swaps A and B is an i1 computed from the
// dims, selecting the operands of the two FMAs
// CHECK-LABEL: func.func @add_swap
// CHECK: %[[SW:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : i1
// CHECK: %[[R1:.*]] = arith.select %[[SW]], %{{.*}}, %{{.*}} : f32
// CHECK: %[[R2:.*]] = arith.select %[[SW]], %{{.*}}, %{{.*}} : f32
// CHECK: %[[F:.*]] = arith.select %[[SW]], %{{.*}}, %{{.*}} : f32
// CHECK: linalg.generic
// CHECK: %[[X1:.*]] = arith.select %[[SW]], %{{.*}}, %{{.*}} : f32
// CHECK: %[[X2:.*]] = arith.select %[[SW]], %{{.*}}, %{{.*}} : f32
// CHECK: %[[IN:.*]] = math.fma %[[X2]], %[[R2]], %[[F]] : f32
// CHECK: math.fma %[[X1]], %[[R1]], %[[IN]] : f32
// CHECK: arith.fptosi
func.func @add_swap(%a: tensor<?x?xi8>, %b: tensor<?x?xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<?x?xi8> {
  %0 = "com_microsoft.q_linear_add"(%a, %s, %z, %b, %s, %z, %s, %z) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1>} : (tensor<?x?xi8>, tensor<f32>, tensor<i8>, tensor<?x?xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<?x?xi8>
  return %0 : tensor<?x?xi8>
}

// -----

// QLinearMul: the i32 product of the shifted operands, times sA*sB/sC, plus zC
// (no zero points for A and B here)
// CHECK-LABEL: func.func @mul
// CHECK: %[[P:.*]] = arith.mulf
// CHECK: %[[RATIO:.*]] = arith.divf %[[P]]
// CHECK: linalg.generic
// CHECK: %[[I:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// CHECK: %[[F:.*]] = arith.sitofp %[[I]] : i32 to f32
// CHECK: %[[M:.*]] = arith.mulf %[[F]], %[[RATIO]] : f32
// CHECK: arith.addf %[[M]]
// CHECK: math.roundeven
func.func @mul(%a: tensor<2x3xui8>, %b: tensor<3xui8>, %s: tensor<1xf32>, %z: tensor<ui8>) -> tensor<2x3xui8> {
  %0 = "com_microsoft.q_linear_mul"(%a, %s, %b, %s, %s, %z) {operandSegmentSizes = array<i32: 1, 1, 0, 1, 1, 0, 1, 1>} : (tensor<2x3xui8>, tensor<1xf32>, tensor<3xui8>, tensor<1xf32>, tensor<1xf32>, tensor<ui8>) -> tensor<2x3xui8>
  return %0 : tensor<2x3xui8>
}

// -----

// QLinearGlobalAveragePool: onnxruntime's range check, an i32 sum over the
// image (one reduction dim), then MLAS's requantization, viewed as [N, C, 1, 1]
// CHECK-LABEL: func.func @gap
// CHECK: arith.cmpf oge
// CHECK: func.call @om_check_failed
// CHECK: tensor.reshape
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}}outs(%{{.*}} : tensor<?x8xi32>)
// CHECK: arith.addi
// CHECK: linalg.generic
// CHECK: arith.sitofp
// CHECK: math.roundeven
// CHECK: tensor.expand_shape
func.func @gap(%x: tensor<?x8x7x7xui8>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<?x8x1x1xui8> {
  %0 = "com_microsoft.q_linear_global_average_pool"(%x, %s, %z, %s, %z) {channels_last = 0 : si64} : (tensor<?x8x7x7xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<?x8x1x1xui8>
  return %0 : tensor<?x8x1x1xui8>
}

// -----

// QLinearAveragePool: dequantize, pad with zeros, sum the window with the
// reduction loops before the output's spatial loops (the f32 sum keeps
// onnxruntime's order), divide by the cells counted, nearbyint(y / sY + zY)
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4 * 2 + d2, d5 * 2 + d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>
// CHECK-LABEL: func.func @avgpool
// CHECK: linalg.generic
// CHECK: arith.mulf
// CHECK: tensor.pad %{{.*}} low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #{{.*}}, #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction", "reduction", "parallel", "parallel"]}
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK: linalg.index
// CHECK: arith.divf
// CHECK: arith.divf
// CHECK: arith.addf
// CHECK: math.roundeven
func.func @avgpool(%x: tensor<?x8x7x7xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<?x8x4x4xi8> {
  %0 = "com_microsoft.q_linear_average_pool"(%x, %s, %z, %s, %z) {auto_pad = "NOTSET", ceil_mode = 0 : si64, channels_last = 0 : si64, count_include_pad = 0 : si64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<?x8x7x7xi8>, tensor<f32>, tensor<i8>, tensor<f32>, tensor<i8>) -> tensor<?x8x4x4xi8>
  return %0 : tensor<?x8x4x4xi8>
}

// -----

// a kernel covering the unpadded image: onnxruntime's global pool (i32 sum)
// CHECK-LABEL: func.func @avgpool_whole
// CHECK-NOT: tensor.pad
// CHECK: outs(%{{.*}} : tensor<?x8xi32>)
// CHECK: arith.addi
// CHECK-NOT: tensor.pad
func.func @avgpool_whole(%x: tensor<?x7x7x8xui8>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<?x1x1x8xui8> {
  %0 = "com_microsoft.q_linear_average_pool"(%x, %s, %z, %s, %z) {auto_pad = "NOTSET", ceil_mode = 0 : si64, channels_last = 1 : si64, count_include_pad = 0 : si64, kernel_shape = array<i64: 7, 7>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<?x7x7x8xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<?x1x1x8xui8>
  return %0 : tensor<?x1x1x8xui8>
}

// -----

// QLinearConcat: each input requantized (or copied when its scale and zero
// point are Y's), then inserted
// CHECK-LABEL: func.func @concat
// CHECK: %[[SAME:.*]] = arith.andi
// CHECK: linalg.generic
// CHECK: ^bb0(%[[X:.*]]: i8, %{{.*}}: i8):
// CHECK: math.roundeven
// CHECK: arith.select %[[SAME]], %[[X]], %{{.*}} : i8
// CHECK: tensor.insert_slice %{{.*}}[0, 0] [%{{.*}}, 3] [1, 1] : tensor<?x3xi8> into tensor<?x8xi8>
// CHECK: tensor.insert_slice %{{.*}}[0, 3] [%{{.*}}, 5] [1, 1] : tensor<?x5xi8> into tensor<?x8xi8>
func.func @concat(%x: tensor<?x3xui8>, %y: tensor<?x5xui8>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<?x8xui8> {
  %0 = "com_microsoft.q_linear_concat"(%s, %z, %x, %s, %z, %y, %s, %z) {axis = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<f32>, tensor<ui8>, tensor<?x3xui8>, tensor<f32>, tensor<ui8>, tensor<?x5xui8>, tensor<f32>, tensor<ui8>) -> tensor<?x8xui8>
  return %0 : tensor<?x8xui8>
}

// -----

// QLinearSigmoid: MLAS's logistic, x * p(x^2) / q(x^2) + 0.5 in FMAs
// CHECK-LABEL: func.func @sigmoid
// CHECK: linalg.generic
// CHECK-COUNT-9: math.fma
// CHECK: arith.divf
// CHECK: math.roundeven
func.func @sigmoid(%x: tensor<?x16xui8>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<?x16xui8> {
  %0 = "com_microsoft.q_linear_sigmoid"(%x, %s, %z, %s, %z) {operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<?x16xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<?x16xui8>
  return %0 : tensor<?x16xui8>
}

// -----

// QLinearLeakyRelu without zero points
// CHECK-LABEL: func.func @leaky
// CHECK: linalg.generic
// CHECK: %[[V:.*]] = arith.mulf
// CHECK: %[[N:.*]] = arith.mulf %{{.*}}, %[[V]] : f32
// CHECK: %[[GE:.*]] = arith.cmpf oge, %[[V]]
// CHECK: arith.select %[[GE]], %[[V]], %[[N]] : f32
// CHECK: math.roundeven
func.func @leaky(%x: tensor<?x16xi8>, %s: tensor<f32>) -> tensor<?x16xi8> {
  %0 = "com_microsoft.q_linear_leaky_relu"(%x, %s, %s) {alpha = 0.1 : f32, operandSegmentSizes = array<i32: 1, 1, 0, 1, 0>} : (tensor<?x16xi8>, tensor<f32>, tensor<f32>) -> tensor<?x16xi8>
  return %0 : tensor<?x16xi8>
}

// -----

// QLinearSoftmax: row maxima, onnxruntime's exp table (logf and exp of
// libm), the f32 row sums with the reduction loop first, f64 normalization
// CHECK-LABEL: func.func @softmax
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.maxui
// CHECK: math.log %{{.*}} : f32
// CHECK: linalg.generic {{.*}}outs(%{{.*}} : tensor<256xf32>)
// CHECK: math.exp %{{.*}} : f64
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]
// CHECK: tensor.extract
// CHECK: arith.addf %{{.*}} : f32
// CHECK: math.floor
// CHECK: linalg.generic
// CHECK: arith.divf %{{.*}} : f64
// CHECK: math.roundeven %{{.*}} : f64
func.func @softmax(%x: tensor<?x10xui8>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<?x10xui8> {
  %0 = "com_microsoft.q_linear_softmax"(%x, %s, %z, %s, %z) {axis = -1 : si64, opset = 13 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<?x10xui8>, tensor<f32>, tensor<ui8>, tensor<f32>, tensor<ui8>) -> tensor<?x10xui8>
  return %0 : tensor<?x10xui8>
}

// -----

// opset < 13: the rows are X coerced to 2-D at axis 1 ([N, 3*4])
// CHECK-LABEL: func.func @softmax_v12
// CHECK: tensor.reshape %{{.*}} : (tensor<?x3x4xi8>, tensor<2xindex>) -> tensor<?x12xi8>
// CHECK: iterator_types = ["reduction", "parallel"]
// CHECK: tensor.reshape %{{.*}} -> tensor<?x3x4xi8>
func.func @softmax_v12(%x: tensor<?x3x4xi8>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<?x3x4xi8> {
  %0 = "com_microsoft.q_linear_softmax"(%x, %s, %s, %z) {axis = 1 : si64, opset = 12 : si64, operandSegmentSizes = array<i32: 1, 1, 0, 1, 1>} : (tensor<?x3x4xi8>, tensor<f32>, tensor<f32>, tensor<i8>) -> tensor<?x3x4xi8>
  return %0 : tensor<?x3x4xi8>
}
