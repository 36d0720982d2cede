// RUN: %opt %s --lower-to-linalg | FileCheck %s

// Dynamic batch and spatial dims, group 2, offset_group 2, mask and bias:
// offset / mask checked against the output size (run-time checks), one
// parallel generic sampling the columns [N, C, kh, kw, OH, OW] in f32 (the
// offset group c / (C / offset_group), the offset channel
// ((g * 9 + kflat) * 2 + axis), floor and the bilinear taps, the mask
// multiplied in), the columns and W viewed per group, one contraction over
// (c, kh, kw), the bias added.
// CHECK-LABEL: func.func @deform_conv_dynamic
// CHECK: call @om_check_failed
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]} outs(%{{.*}} : tensor<?x4x3x3x?x?xf32>)
// CHECK: %[[C:.*]] = linalg.index 1 : index
// CHECK: %[[G:.*]] = arith.divui %[[C]], %{{.*}} : index
// CHECK: arith.muli %[[G]], %{{.*}} : index
// CHECK: %[[CH:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK: tensor.extract %arg2[%{{.*}}, %[[CH]], %{{.*}}, %{{.*}}] : tensor<?x36x?x?xf32>
// CHECK: math.floor
// CHECK: math.floor
// CHECK: tensor.extract %arg0
// CHECK: tensor.extract %arg4
// CHECK: arith.mulf
// CHECK: linalg.yield
// CHECK: tensor.expand_shape {{.*}} into tensor<?x2x2x3x3x?x?xf32>
// CHECK: tensor.expand_shape %arg1 {{.*}} into tensor<2x3x2x3x3xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK: tensor.collapse_shape {{.*}} into tensor<?x6x?x?xf32>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %arg3 : tensor<?x6x?x?xf32>, tensor<6xf32>)
func.func @deform_conv_dynamic(%x: tensor<?x4x?x?xf32>, %w: tensor<6x2x3x3xf32>, %o: tensor<?x36x?x?xf32>, %b: tensor<6xf32>, %m: tensor<?x18x?x?xf32>) -> tensor<?x6x?x?xf32> {
  %0 = "onnx.deform_conv"(%x, %w, %o, %b, %m) {group = 2 : si64, offset_group = 2 : si64, pads = [1, 1, 1, 1], operandSegmentSizes = array<i32: 1, 1, 1, 1, 1>} : (tensor<?x4x?x?xf32>, tensor<6x2x3x3xf32>, tensor<?x36x?x?xf32>, tensor<6xf32>, tensor<?x18x?x?xf32>) -> tensor<?x6x?x?xf32> loc("dc")
  return %0 : tensor<?x6x?x?xf32>
}

// 1-D, f64, no mask and no bias: columns [N, C, k, O] in f64, the
// contraction's result is the result (no conversion, no bias).
// CHECK-LABEL: func.func @deform_conv_1d
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3x2x5xf64>)
// CHECK-NOT: tensor.extract %arg3
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x1x4x5xf64>)
// CHECK: %[[Y:.*]] = tensor.collapse_shape {{.*}} into tensor<2x4x5xf64>
// CHECK-NEXT: return %[[Y]]
func.func @deform_conv_1d(%x: tensor<2x3x6xf64>, %w: tensor<4x3x2xf64>, %o: tensor<2x2x5xf64>) -> tensor<2x4x5xf64> {
  %0 = "onnx.deform_conv"(%x, %w, %o) {group = 1 : si64, offset_group = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>} : (tensor<2x3x6xf64>, tensor<4x3x2xf64>, tensor<2x2x5xf64>) -> tensor<2x4x5xf64> loc("dc1")
  return %0 : tensor<2x4x5xf64>
}
