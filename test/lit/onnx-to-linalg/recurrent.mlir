// RUN: %opt %s --lower-to-linalg | FileCheck %s

// input projection of all steps (one matmul over [S*B, I] x [I, 4H]), then a
// time loop with a matmul H·Rᵀ and one gate generic on rows [t*B, (t+1)*B) of
// the projection; the new state is copied into the carried one
// CHECK-LABEL: func.func @lstm
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<4x2x5xf32> into tensor<8x5xf32>
// CHECK: linalg.transpose ins({{.*}} : tensor<12x5xf32>)
// CHECK: linalg.matmul ins({{.*}} : tensor<8x5xf32>, tensor<5x12xf32>) outs({{.*}} : tensor<8x12xf32>)
// CHECK: linalg.transpose
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<4x2x3xf32>)
// CHECK: linalg.matmul ins({{.*}} : tensor<2x3xf32>, tensor<3x12xf32>)
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK: math.tanh
// CHECK: linalg.copy
// CHECK: linalg.copy
// CHECK: tensor.insert_slice
// CHECK: scf.yield
func.func @lstm(%x: tensor<4x2x5xf32>, %w: tensor<1x12x5xf32>, %r: tensor<1x12x3xf32>) -> (tensor<4x1x2x3xf32>, tensor<1x2x3xf32>) {
  %y, %yh = "onnx.lstm"(%x, %w, %r) {direction = "forward", hidden_size = 3 : si64, input_forget = 0 : si64, layout = 0 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 0>} : (tensor<4x2x5xf32>, tensor<1x12x5xf32>, tensor<1x12x3xf32>) -> (tensor<4x1x2x3xf32>, tensor<1x2x3xf32>)
  return %y, %yh : tensor<4x1x2x3xf32>, tensor<1x2x3xf32>
}

// reverse: X (before the projection) and the outputs are reversed per row
// within sequence_lens (i32), the loop runs forward; rows past their length keep their state
// CHECK-LABEL: func.func @gru_reverse_seq_lens
// CHECK: tensor.extract %arg3
// CHECK: tensor.extract %arg0
// CHECK: tensor.collapse_shape
// CHECK: linalg.matmul ins({{.*}} : tensor<8x5xf32>, tensor<5x9xf32>)
// CHECK: scf.for
// CHECK: linalg.matmul
// CHECK: arith.cmpi ult
// CHECK: arith.select
// CHECK: scf.yield
// CHECK: tensor.extract %arg3
func.func @gru_reverse_seq_lens(%x: tensor<4x2x5xf32>, %w: tensor<1x9x5xf32>, %r: tensor<1x9x3xf32>, %sl: tensor<2xsi32>) -> tensor<4x1x2x3xf32> {
  %y = "onnx.gru"(%x, %w, %r, %sl) {direction = "reverse", hidden_size = 3 : si64, layout = 0 : si64, linear_before_reset = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0>, resultSegmentSizes = array<i32: 1, 0>} : (tensor<4x2x5xf32>, tensor<1x9x5xf32>, tensor<1x9x3xf32>, tensor<2xsi32>) -> tensor<4x1x2x3xf32>
  return %y : tensor<4x1x2x3xf32>
}
