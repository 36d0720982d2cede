// RUN: %opt %s --lower-to-linalg --split-input-file | FileCheck %s

// DynamicQuantizeLSTM, forward, int8: X's range (max / min with 0) in one
// reduction, X quantized to u8 (roundeven, clamp, fptoui); W[0] shifted by its
// per-direction zero point (W stays [input, 4H]: no transpose), X shifted by
// its dynamic one, collapsed to [S*B, I], an i32 matmul, then f32(acc) *
// (x_scale * W_scale[0]); R[0] shifted by its per-column zero points. The time
// loop quantizes H_{t-1} the same way at each step, multiplies it by R[0] in
// i32 and adds f32(acc) * (h_scale * R_scale[0, n]) to the step's projection
// rows; then LSTM's gate generic (the bias row, zeros here, as its input term)
// CHECK-LABEL: func.func @dq_lstm
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction", "reduction"]} ins(%arg0 : tensor<4x2x5xf32>)
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<4x2x5xf32>) outs(%{{.*}} : tensor<4x2x5xi8>)
// CHECK: arith.divf
// CHECK: math.roundeven
// CHECK: arith.fptoui {{.*}} : f32 to i8
// CHECK: linalg.generic {{.*}} ins(%arg1, %arg4 : tensor<1x5x12xi8>, tensor<1xi8>) outs(%{{.*}} : tensor<5x12xi32>)
// CHECK: arith.extsi
// CHECK: arith.subi
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x2x5xi8>, tensor<i8>) outs(%{{.*}} : tensor<4x2x5xi32>)
// CHECK: arith.extui
// CHECK: arith.subi
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<4x2x5xi32> into tensor<8x5xi32>
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<8x5xi32>, tensor<5x12xi32>) outs(%{{.*}} : tensor<8x12xi32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %arg3 : tensor<8x12xi32>, tensor<1xf32>) outs(%{{.*}} : tensor<8x12xf32>)
// CHECK: arith.sitofp
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK: linalg.generic {{.*}} ins(%arg2, %arg6 : tensor<1x3x12xi8>, tensor<1x12xi8>) outs(%{{.*}} : tensor<3x12xi32>)
// CHECK: scf.for {{.*}} -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<4x2x3xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%{{.*}} : tensor<2x3xf32>)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3xi8>)
// CHECK: math.roundeven
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3xi32>)
// CHECK: arith.extui
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x3xi32>, tensor<3x12xi32>) outs(%{{.*}} : tensor<2x12xi32>)
// CHECK: %[[P:.*]] = tensor.extract_slice %{{.*}} : tensor<8x12xf32> to tensor<2x12xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %arg5, %[[P]] : tensor<2x12xi32>, tensor<1x12xf32>, tensor<2x12xf32>)
// CHECK: arith.sitofp
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK-SAME: tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>
// CHECK: math.exp
// CHECK: math.tanh
// CHECK: scf.yield
// CHECK-NOT: com_microsoft.
func.func @dq_lstm(%x: tensor<4x2x5xf32>, %w: tensor<1x5x12xi8>, %r: tensor<1x3x12xi8>, %ws: tensor<1xf32>, %wz: tensor<1xi8>, %rs: tensor<1x12xf32>, %rz: tensor<1x12xi8>) -> (tensor<4x1x2x3xf32>, tensor<1x2x3xf32>) {
  %y, %yh = "com_microsoft.dynamic_quantize_lstm"(%x, %w, %r, %ws, %wz, %rs, %rz) {direction = "forward", hidden_size = 3 : si64, input_forget = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1>, resultSegmentSizes = array<i32: 1, 1, 0>} : (tensor<4x2x5xf32>, tensor<1x5x12xi8>, tensor<1x3x12xi8>, tensor<1xf32>, tensor<1xi8>, tensor<1x12xf32>, tensor<1x12xi8>) -> (tensor<4x1x2x3xf32>, tensor<1x2x3xf32>)
  return %y, %yh : tensor<4x1x2x3xf32>, tensor<1x2x3xf32>
}

// -----

// reverse, uint8, dynamic seq / batch, sequence_lens, Y: X's range covers
// its first max(sequence_lens) steps (t < max), the quantized X is reversed
// per row (within its length) before its projection; W[0] has per-column
// zero points (unsigned), R[0] one per direction; H_{t-1}'s range covers the
// rows that were within their length at step t-1 (t <= len: Y's step t-1
// holds 0 in the others)
// CHECK-LABEL: func.func @dq_lstm_reverse
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%arg3 : tensor<?xi32>)
// CHECK: arith.maxsi
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction", "reduction"]} ins(%arg0 : tensor<?x?x5xf32>)
// CHECK: arith.cmpi ult
// CHECK: arith.select
// CHECK: linalg.generic {{.*}} ins(%arg0 : tensor<?x?x5xf32>) outs(%{{.*}} : tensor<?x?x5xi8>)
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<?x?x5xi8>)
// CHECK: tensor.extract %arg3
// CHECK: linalg.generic {{.*}} ins(%arg1, %arg5 : tensor<1x5x12xi8>, tensor<1x12xi8>) outs(%{{.*}} : tensor<5x12xi32>)
// CHECK: arith.extui
// CHECK: arith.extui
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x5xi32>, tensor<5x12xi32>) outs(%{{.*}} : tensor<?x12xi32>)
// CHECK: linalg.generic {{.*}} ins(%arg2, %arg7 : tensor<1x3x12xi8>, tensor<1xi8>) outs(%{{.*}} : tensor<3x12xi32>)
// CHECK: scf.for %[[T:[a-z0-9_]+]] = {{.*}} -> (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x?x3xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%{{.*}}, %arg3 : tensor<?x3xf32>, tensor<?xi32>)
// CHECK: arith.cmpi ule, %[[T]],
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x3xi32>, tensor<3x12xi32>)
// CHECK: scf.yield
// CHECK-NOT: com_microsoft.
func.func @dq_lstm_reverse(%x: tensor<?x?x5xf32>, %w: tensor<1x5x12xui8>, %r: tensor<1x3x12xui8>, %sl: tensor<?xsi32>, %ws: tensor<1x12xf32>, %wz: tensor<1x12xui8>, %rs: tensor<1xf32>, %rz: tensor<1xui8>) -> tensor<?x1x?x3xf32> {
  %y = "com_microsoft.dynamic_quantize_lstm"(%x, %w, %r, %sl, %ws, %wz, %rs, %rz) {direction = "reverse", hidden_size = 3 : si64, input_forget = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1>, resultSegmentSizes = array<i32: 1, 0, 0>} : (tensor<?x?x5xf32>, tensor<1x5x12xui8>, tensor<1x3x12xui8>, tensor<?xsi32>, tensor<1x12xf32>, tensor<1x12xui8>, tensor<1xf32>, tensor<1xui8>) -> tensor<?x1x?x3xf32>
  return %y : tensor<?x1x?x3xf32>
}

// -----

// constant int8 W and R with zero points 0 (what quantize_dynamic writes):
// each direction's [K, 4H] slice becomes its own constant, widened with
// extsi, the B operand the -O3 int8 (VNNI) matmul kernels take
// CHECK-LABEL: func.func @dq_lstm_const
// CHECK: %[[W:.*]] = arith.constant dense<{{.*}}> : tensor<2x4xi8>
// CHECK: linalg.generic {{.*}} ins(%[[W]] : tensor<2x4xi8>) outs(%{{.*}} : tensor<2x4xi32>)
// CHECK: arith.extsi
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<6x2xi32>, tensor<2x4xi32>)
// CHECK: %[[R:.*]] = arith.constant dense<{{.*}}> : tensor<1x4xi8>
// CHECK: linalg.generic {{.*}} ins(%[[R]] : tensor<1x4xi8>) outs(%{{.*}} : tensor<1x4xi32>)
// CHECK: scf.for
// CHECK-NOT: com_microsoft.
func.func @dq_lstm_const(%x: tensor<3x2x2xf32>) -> tensor<1x2x1xf32> {
  %w = "onnx.constant"() {value = dense<[[[1, -2, 3, -4], [5, 6, -7, 8]]]> : tensor<1x2x4xi8>} : () -> tensor<1x2x4xi8>
  %r = "onnx.constant"() {value = dense<[[[9, -10, 11, 12]]]> : tensor<1x1x4xi8>} : () -> tensor<1x1x4xi8>
  %s = "onnx.constant"() {value = dense<[0.01]> : tensor<1xf32>} : () -> tensor<1xf32>
  %z = "onnx.constant"() {value = dense<[0]> : tensor<1xi8>} : () -> tensor<1xi8>
  %yh = "com_microsoft.dynamic_quantize_lstm"(%x, %w, %r, %s, %z, %s, %z) {direction = "forward", hidden_size = 1 : si64, input_forget = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1>, resultSegmentSizes = array<i32: 0, 1, 0>} : (tensor<3x2x2xf32>, tensor<1x2x4xi8>, tensor<1x1x4xi8>, tensor<1xf32>, tensor<1xi8>, tensor<1xf32>, tensor<1xi8>) -> tensor<1x2x1xf32>
  return %yh : tensor<1x2x1xf32>
}
