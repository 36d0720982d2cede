// RUN: %opt %s --lower-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @concat_dyn
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?x8x4xf32>
// CHECK: %[[I0:.*]] = tensor.insert_slice %arg0 into %[[E]][0, 0, 0] [%{{.*}}, 3, 4] [1, 1, 1] : tensor<?x3x4xf32> into tensor<?x8x4xf32>
// CHECK: tensor.insert_slice %arg1 into %[[I0]][0, 3, 0] [%{{.*}}, 5, 4] [1, 1, 1] : tensor<?x5x4xf32> into tensor<?x8x4xf32>
func.func @concat_dyn(%x: tensor<?x3x4xf32>, %y: tensor<?x5x4xf32>) -> tensor<?x8x4xf32> {
  %0 = "onnx.concat"(%x, %y) {axis = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<?x3x4xf32>, tensor<?x5x4xf32>) -> tensor<?x8x4xf32>
  return %0 : tensor<?x8x4xf32>
}

// CHECK-LABEL: func.func @split_num_outputs
// CHECK: tensor.extract_slice %arg0[0, 0, 0] [%{{.*}}, 3, 3] [1, 1, 1] : tensor<?x3x5xf32> to tensor<?x3x3xf32>
// CHECK: tensor.extract_slice %arg0[0, 0, 3] [%{{.*}}, 3, 2] [1, 1, 1] : tensor<?x3x5xf32> to tensor<?x3x2xf32>
func.func @split_num_outputs(%x: tensor<?x3x5xf32>) -> (tensor<?x3x3xf32>, tensor<?x3x2xf32>) {
  %0:2 = "onnx.split"(%x) {axis = 2 : si64, num_outputs = 2 : si64, resultSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<?x3x5xf32>) -> (tensor<?x3x3xf32>, tensor<?x3x2xf32>)
  return %0#0, %0#1 : tensor<?x3x3xf32>, tensor<?x3x2xf32>
}
