// RUN: %opt %s --lower-to-linalg | FileCheck %s

// Dynamic rois and X, avg, half_pixel, sampling_ratio 0: rois and
// batch_indices counts checked, the batch indices range-checked against N
// (one scf.for reducing them to an unsigned maximum), then one generic over
// [num_rois, C, 2, 3] whose body reads the roi (minus 0.5: half_pixel),
// takes the sample grid ceil(roi size / output size) at run time, loops
// over it (scf.for), reads the four taps only when the sample is inside
// [-1, H] x [-1, W] (scf.if), and divides by max(grid_h * grid_w, 1).
// CHECK-LABEL: func.func @roi_align_dynamic
// CHECK: %[[NR:.*]] = tensor.dim %arg1, %c0
// CHECK: %[[NB:.*]] = tensor.dim %arg2, %c0
// CHECK: arith.cmpi eq, %[[NR]], %[[NB]]
// CHECK: call @om_check_failed
// CHECK: scf.for {{.*}} -> (i64)
// CHECK: arith.maxui
// CHECK: arith.cmpi ult
// CHECK: call @om_check_failed
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<?x?x2x3xf32>)
// CHECK: %[[B:.*]] = tensor.extract %arg2
// CHECK: %[[BI:.*]] = arith.index_cast %[[B]] : i64 to index
// CHECK: tensor.extract %arg1
// CHECK: arith.subf
// CHECK: math.ceil
// CHECK: %[[GH:.*]] = arith.index_cast {{.*}} : i64 to index
// CHECK: math.ceil
// CHECK: %[[GW:.*]] = arith.index_cast {{.*}} : i64 to index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[GH]] {{.*}} -> (f32)
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[GW]] {{.*}} -> (f32)
// CHECK: arith.cmpf oge
// CHECK: arith.cmpf ole
// CHECK: scf.if %{{.*}} -> (f32)
// CHECK: tensor.extract %arg0[%[[BI]], {{.*}}] : tensor<?x?x?x?xf32>
// CHECK-COUNT-3: tensor.extract %arg0
// CHECK: arith.addf
// CHECK: arith.muli %[[GH]], %[[GW]]
// CHECK: arith.maxsi
// CHECK: arith.divf
// CHECK: linalg.yield
func.func @roi_align_dynamic(%x: tensor<?x?x?x?xf32>, %r: tensor<?x4xf32>, %b: tensor<?xi64>) -> tensor<?x?x2x3xf32> {
  %0 = "onnx.roi_align_v16"(%x, %r, %b) {coordinate_transformation_mode = "half_pixel", mode = "avg", output_height = 2 : si64, output_width = 3 : si64, sampling_ratio = 0 : si64, spatial_scale = 5.000000e-01 : f32} : (tensor<?x?x?x?xf32>, tensor<?x4xf32>, tensor<?xi64>) -> tensor<?x?x2x3xf32>
  return %0 : tensor<?x?x2x3xf32>
}

// v10 (output_half_pixel: no 0.5 offset, the roi forced to at least 1 x 1),
// max, sampling_ratio 2: a fixed 2 x 2 grid; the largest weighted tap per
// sample and the largest over the samples, 0 when the grid is empty.
// CHECK-LABEL: func.func @roi_align_max_v10
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<5x3x2x2xf64>)
// CHECK-NOT: math.ceil
// CHECK-COUNT-4: arith.subf %{{.*}}, %cst : f64
// CHECK: %[[RW:.*]] = arith.subf %{{.*}}, %{{.*}} : f64
// CHECK-NEXT: %[[RH:.*]] = arith.subf %{{.*}}, %{{.*}} : f64
// CHECK: arith.maximumf %[[RW]], %{{.*}} : f64
// CHECK: arith.maximumf %[[RH]], %{{.*}} : f64
// CHECK: scf.for {{.*}} to %c2{{.*}} -> (f64)
// CHECK: scf.for {{.*}} to %c2{{.*}} -> (f64)
// CHECK: scf.if %{{.*}} -> (f64)
// CHECK: arith.maximumf
// CHECK: arith.maximumf
// CHECK: arith.maximumf
// CHECK: scf.yield
// CHECK: arith.maximumf
// CHECK: arith.select
// CHECK: linalg.yield
func.func @roi_align_max_v10(%x: tensor<2x3x6x7xf64>, %r: tensor<5x4xf64>, %b: tensor<5xi64>) -> tensor<5x3x2x2xf64> {
  %0 = "onnx.roi_align_v10"(%x, %r, %b) {mode = "max", output_height = 2 : si64, output_width = 2 : si64, sampling_ratio = 2 : si64, spatial_scale = 1.000000e+00 : f32} : (tensor<2x3x6x7xf64>, tensor<5x4xf64>, tensor<5xi64>) -> tensor<5x3x2x2xf64>
  return %0 : tensor<5x3x2x2xf64>
}
