// RUN: %opt %s --o3-fuse-elementwise | FileCheck %s

#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// A bias add followed by a ReLU: one generic, one loop nest, reading x and
// the bias once.
// CHECK-LABEL: func.func @bias_relu
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @bias_relu(%x: tensor<64x512xf32>, %b: tensor<512xf32>) -> tensor<64x512xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x512xf32>
  %add = linalg.generic {indexing_maps = [#map, #row, #map], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<64x512xf32>, tensor<512xf32>) outs(%e : tensor<64x512xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<64x512xf32>
  %relu = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%add : tensor<64x512xf32>) outs(%e : tensor<64x512xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<64x512xf32>
  return %relu : tensor<64x512xf32>
}

// A value with two uses is not fused (it would be computed twice).
// CHECK-LABEL: func.func @shared
// CHECK-COUNT-3: linalg.generic
// CHECK: return
func.func @shared(%x: tensor<128xf32>) -> (tensor<128xf32>, tensor<128xf32>) {
  %e = tensor.empty() : tensor<128xf32>
  %sq = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<128xf32>) outs(%e : tensor<128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<128xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%sq : tensor<128xf32>) outs(%e : tensor<128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.negf %a : f32
    linalg.yield %m : f32
  } -> tensor<128xf32>
  %x2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%sq : tensor<128xf32>) outs(%e : tensor<128xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = math.sqrt %a : f32
    linalg.yield %m : f32
  } -> tensor<128xf32>
  return %n, %x2 : tensor<128xf32>, tensor<128xf32>
}
