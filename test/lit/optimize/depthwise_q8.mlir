// RUN: %opt %s --o3-depthwise-q8=target=x86-64-v4 | FileCheck %s

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
#sc = affine_map<(d0, d1, d2, d3) -> ()>

// A QDQ depthwise conv: DequantizeLinear (8-bit -> f32), zero pad, 3x3
// stride 1, + bias, Clip(0, 6) (bounds extracted outside the generic),
// QuantizeLinear (f32 -> 8-bit): one kernel reading the 8-bit input plane
// (converted and dequantized as it is copied into the f32 scratch plane)
// and writing the 8-bit output; the bias read once per channel, the
// accumulators start at the fill's 0.0.
// CHECK-LABEL: func.func @dwq8_s1
// CHECK-NOT: linalg.depthwise_conv_2d_nchw_chw
// CHECK-NOT: tensor.pad
// CHECK-NOT: linalg.generic
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, tensor<22x34xf32>
// CHECK: scf.for
// CHECK: tensor.extract %{{.*}} : tensor<4xf32>
// CHECK: vector.transfer_read %arg0{{.*}} : tensor<1x4x20x20xi8>, vector<16xi8>
// CHECK: arith.sitofp %{{.*}} : vector<16xi8> to vector<16xf32>
// CHECK: arith.subf {{.*}} : vector<16xf32>
// CHECK: arith.mulf {{.*}} : vector<16xf32>
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, tensor<22x34xf32>
// CHECK-COUNT-9: vector.fma {{.*}} : vector<16xf32>
// CHECK: arith.addf {{.*}} : vector<16xf32>
// CHECK: arith.maximumf {{.*}} : vector<16xf32>
// CHECK: arith.minimumf {{.*}} : vector<16xf32>
// CHECK: arith.divf {{.*}} : vector<16xf32>
// CHECK: math.roundeven {{.*}} : vector<16xf32>
// CHECK: arith.fptosi %{{.*}} : vector<16xf32> to vector<16xi8>
// CHECK: vector.transfer_write {{.*}} : vector<16xi8>, tensor<1x4x20x20xi8>
// CHECK: vector.extract_strided_slice {{.*}} sizes = [4]
// CHECK: vector.transfer_write {{.*}} : vector<4xi8>, tensor<1x4x20x20xi8>
// CHECK-NOT: linalg.generic
func.func @dwq8_s1(%xq: tensor<1x4x20x20xi8>, %w: tensor<4x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x20x20xi8> {
  %sx = arith.constant dense<0.05> : tensor<f32>
  %zx = arith.constant dense<-3> : tensor<i8>
  %sy = arith.constant dense<0.03> : tensor<f32>
  %zy = arith.constant dense<-128> : tensor<i8>
  %lo_t = arith.constant dense<0.0> : tensor<f32>
  %hi_t = arith.constant dense<6.0> : tensor<f32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x4x20x20xf32>
  %xf = linalg.generic {indexing_maps = [#id, #sc, #sc, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%xq, %sx, %zx : tensor<1x4x20x20xi8>, tensor<f32>, tensor<i8>) outs(%e0 : tensor<1x4x20x20xf32>) {
  ^bb0(%in: i8, %s: f32, %z: i8, %o: f32):
    %a = arith.sitofp %in : i8 to f32
    %zf = arith.sitofp %z : i8 to f32
    %d = arith.subf %a, %zf : f32
    %r = arith.mulf %d, %s : f32
    linalg.yield %r : f32
  } -> tensor<1x4x20x20xf32>
  %p = tensor.pad %xf low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x20x20xf32> to tensor<1x4x22x22xf32>
  %e = tensor.empty() : tensor<1x4x20x20xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x20x20xf32>) -> tensor<1x4x20x20xf32>
  %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<1x4x22x22xf32>, tensor<4x3x3xf32>) outs(%z0 : tensor<1x4x20x20xf32>) -> tensor<1x4x20x20xf32>
  %e2 = tensor.empty() : tensor<1x4x20x20xf32>
  %cb = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%c, %b : tensor<1x4x20x20xf32>, tensor<4xf32>) outs(%e2 : tensor<1x4x20x20xf32>) {
  ^bb0(%in: f32, %bb: f32, %o: f32):
    %s = arith.addf %in, %bb : f32
    linalg.yield %s : f32
  } -> tensor<1x4x20x20xf32>
  %lo = tensor.extract %lo_t[] : tensor<f32>
  %hi = tensor.extract %hi_t[] : tensor<f32>
  %e3 = tensor.empty() : tensor<1x4x20x20xf32>
  %cl = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%cb : tensor<1x4x20x20xf32>) outs(%e3 : tensor<1x4x20x20xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %lo : f32
    %n = arith.minimumf %m, %hi : f32
    linalg.yield %n : f32
  } -> tensor<1x4x20x20xf32>
  %e4 = tensor.empty() : tensor<1x4x20x20xi8>
  %y = linalg.generic {indexing_maps = [#id, #sc, #sc, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%cl, %sy, %zy : tensor<1x4x20x20xf32>, tensor<f32>, tensor<i8>) outs(%e4 : tensor<1x4x20x20xi8>) {
  ^bb0(%in: f32, %s: f32, %z: i8, %o: i8):
    %q = arith.divf %in, %s : f32
    %r = math.roundeven %q : f32
    %zf = arith.sitofp %z : i8 to f32
    %t = arith.addf %r, %zf : f32
    %lo8 = arith.constant -1.280000e+02 : f32
    %u = arith.maximumf %t, %lo8 : f32
    %hi8 = arith.constant 1.270000e+02 : f32
    %v = arith.minimumf %u, %hi8 : f32
    %i = arith.fptosi %v : f32 to i8
    linalg.yield %i : i8
  } -> tensor<1x4x20x20xi8>
  return %y : tensor<1x4x20x20xi8>
}

// A dynamic batch, stride 2, u8 data (uitofp), no pad: the kernel loops
// over the images itself (tensor.dim of its input), no batch loop.
// CHECK-LABEL: func.func @dwq8_dyn_s2
// CHECK-NOT: linalg.depthwise_conv_2d_nchw_chw
// CHECK: tensor.dim %arg0
// CHECK: arith.uitofp %{{.*}} : vector<16xi8> to vector<16xf32>
// CHECK: vector.fma
// CHECK: vector.transfer_write {{.*}} : vector<{{[0-9]+}}xi8>, tensor<?x4x9x9xi8>
// CHECK-NOT: linalg.generic
func.func @dwq8_dyn_s2(%xq: tensor<?x4x19x19xi8>, %w: tensor<4x3x3xf32>) -> tensor<?x4x9x9xi8> {
  %sx = arith.constant dense<0.05> : tensor<f32>
  %sy = arith.constant dense<0.03> : tensor<f32>
  %zy = arith.constant dense<7> : tensor<i8>
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %xq, %c0 : tensor<?x4x19x19xi8>
  %e0 = tensor.empty(%n) : tensor<?x4x19x19xf32>
  %xf = linalg.generic {indexing_maps = [#id, #sc, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%xq, %sx : tensor<?x4x19x19xi8>, tensor<f32>) outs(%e0 : tensor<?x4x19x19xf32>) {
  ^bb0(%in: i8, %s: f32, %o: f32):
    %a = arith.uitofp %in : i8 to f32
    %r = arith.mulf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<?x4x19x19xf32>
  %e = tensor.empty(%n) : tensor<?x4x9x9xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e : tensor<?x4x9x9xf32>) -> tensor<?x4x9x9xf32>
  %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%xf, %w : tensor<?x4x19x19xf32>, tensor<4x3x3xf32>) outs(%z0 : tensor<?x4x9x9xf32>) -> tensor<?x4x9x9xf32>
  %e4 = tensor.empty(%n) : tensor<?x4x9x9xi8>
  %y = linalg.generic {indexing_maps = [#id, #sc, #sc, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%c, %sy, %zy : tensor<?x4x9x9xf32>, tensor<f32>, tensor<i8>) outs(%e4 : tensor<?x4x9x9xi8>) {
  ^bb0(%in: f32, %s: f32, %z: i8, %o: i8):
    %q = arith.divf %in, %s : f32
    %r = math.roundeven %q : f32
    %zf = arith.uitofp %z : i8 to f32
    %t = arith.addf %r, %zf : f32
    %lo8 = arith.constant 0.0 : f32
    %u = arith.maximumf %t, %lo8 : f32
    %hi8 = arith.constant 2.550000e+02 : f32
    %v = arith.minimumf %u, %hi8 : f32
    %i = arith.fptoui %v : f32 to i8
    linalg.yield %i : i8
  } -> tensor<?x4x9x9xi8>
  return %y : tensor<?x4x9x9xi8>
}

// The dequantized input has a second user: not fused (the f32 depthwise
// pass takes such convs).
// CHECK-LABEL: func.func @dwq8_shared
// CHECK: linalg.depthwise_conv_2d_nchw_chw
func.func @dwq8_shared(%xq: tensor<1x4x8x8xi8>, %w: tensor<4x3x3xf32>) -> (tensor<1x4x6x6xi8>, tensor<1x4x8x8xf32>) {
  %sx = arith.constant dense<0.05> : tensor<f32>
  %sy = arith.constant dense<0.03> : tensor<f32>
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<1x4x8x8xf32>
  %xf = linalg.generic {indexing_maps = [#id, #sc, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%xq, %sx : tensor<1x4x8x8xi8>, tensor<f32>) outs(%e0 : tensor<1x4x8x8xf32>) {
  ^bb0(%in: i8, %s: f32, %o: f32):
    %a = arith.sitofp %in : i8 to f32
    %r = arith.mulf %a, %s : f32
    linalg.yield %r : f32
  } -> tensor<1x4x8x8xf32>
  %e = tensor.empty() : tensor<1x4x6x6xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%xf, %w : tensor<1x4x8x8xf32>, tensor<4x3x3xf32>) outs(%z0 : tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %e4 = tensor.empty() : tensor<1x4x6x6xi8>
  %y = linalg.generic {indexing_maps = [#id, #sc, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%c, %sy : tensor<1x4x6x6xf32>, tensor<f32>) outs(%e4 : tensor<1x4x6x6xi8>) {
  ^bb0(%in: f32, %s: f32, %o: i8):
    %q = arith.divf %in, %s : f32
    %i = arith.fptosi %q : f32 to i8
    linalg.yield %i : i8
  } -> tensor<1x4x6x6xi8>
  return %y, %xf : tensor<1x4x6x6xi8>, tensor<1x4x8x8xf32>
}
