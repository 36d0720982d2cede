// RUN: %opt %s --o3-depthwise=target=x86-64-v4 | FileCheck %s
// RUN: %opt %s --o3-depthwise=target=x86-64-v4,threads=1 | FileCheck %s --check-prefix=THREADS

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>

// 3x3 stride 1 on a zero-padded input, + bias, + Clip(0, 6): one kernel; the
// pad becomes a scratch plane (border zeroed once, interior copied per
// channel: whole vectors, the row's last one a masked read), the bias the
// accumulators' start and the clip their epilogue. 20 columns at 16 lanes
// (AVX-512): two vectors computed (the scratch is 34 wide, so every read is
// a whole vector), the second stored as 4 lanes.
// CHECK-LABEL: func.func @dw_s1
// THREADS-LABEL: func.func @dw_s1
// THREADS-NOT: scf.forall
// CHECK-NOT: linalg.depthwise_conv_2d_nchw_chw
// CHECK-NOT: tensor.pad
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, tensor<22x34xf32>
// CHECK: scf.for
// CHECK: tensor.extract %{{.*}} : tensor<4xf32>
// CHECK: vector.broadcast {{.*}} : f32 to vector<16xf32>
// CHECK: vector.transfer_read %arg0{{.*}} {in_bounds = [true]} : tensor<1x4x20x20xf32>, vector<16xf32>
// CHECK: vector.transfer_read %arg0[{{.*}}], %{{[a-z_0-9]+}} : tensor<1x4x20x20xf32>, vector<16xf32>
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, tensor<22x34xf32>
// CHECK: vector.transfer_read {{.*}} : tensor<22x34xf32>, vector<16xf32>
// CHECK-COUNT-18: vector.fma {{.*}} : vector<16xf32>
// CHECK: arith.maximumf {{.*}} : vector<16xf32>
// CHECK: arith.minimumf {{.*}} : vector<16xf32>
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, tensor<1x4x20x20xf32>
// CHECK: vector.extract_strided_slice {{.*}} sizes = [4]
// CHECK: vector.transfer_write {{.*}} : vector<4xf32>, tensor<1x4x20x20xf32>
// CHECK-NOT: linalg.generic
func.func @dw_s1(%x: tensor<1x4x20x20xf32>, %w: tensor<4x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x20x20xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x20x20xf32> to tensor<1x4x22x22xf32>
  %e = tensor.empty() : tensor<1x4x20x20xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x20x20xf32>) -> tensor<1x4x20x20xf32>
  %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<1x4x22x22xf32>, tensor<4x3x3xf32>) outs(%z : tensor<1x4x20x20xf32>) -> tensor<1x4x20x20xf32>
  %e2 = tensor.empty() : tensor<1x4x20x20xf32>
  %a = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%c, %b : tensor<1x4x20x20xf32>, tensor<4xf32>) outs(%e2 : tensor<1x4x20x20xf32>) {
  ^bb0(%in: f32, %bb: f32, %o: f32):
    %s = arith.addf %in, %bb : f32
    linalg.yield %s : f32
  } -> tensor<1x4x20x20xf32>
  %e3 = tensor.empty() : tensor<1x4x20x20xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%a : tensor<1x4x20x20xf32>) outs(%e3 : tensor<1x4x20x20xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    %n = arith.minimumf %m, %six : f32
    linalg.yield %n : f32
  } -> tensor<1x4x20x20xf32>
  return %r : tensor<1x4x20x20xf32>
}

// Stride 2 without a pad (read in place): taps kw = 0 and 1 share one
// contiguous 32-element read (even / odd lanes), kw = 2 reads from column
// +2; the last row chunk would run past the row, so its read is shortened
// to the 31 elements it needs.
// CHECK-LABEL: func.func @dw_s2
// CHECK-NOT: linalg.depthwise_conv_2d_nchw_chw
// CHECK: vector.transfer_read %arg0{{.*}} : tensor<1x2x9x33xf32>, vector<32xf32>
// CHECK: vector.shuffle {{.*}} [0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30] : vector<32xf32>, vector<32xf32>
// CHECK: vector.shuffle {{.*}} [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31] : vector<32xf32>, vector<32xf32>
// CHECK: vector.transfer_read %arg0{{.*}} : tensor<1x2x9x33xf32>, vector<31xf32>
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, tensor<1x2x4x16xf32>
func.func @dw_s2(%x: tensor<1x2x9x33xf32>, %w: tensor<2x3x3xf32>) -> tensor<1x2x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x4x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x4x16xf32>) -> tensor<1x2x4x16xf32>
  %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%x, %w : tensor<1x2x9x33xf32>, tensor<2x3x3xf32>) outs(%z : tensor<1x2x4x16xf32>) -> tensor<1x2x4x16xf32>
  return %c : tensor<1x2x4x16xf32>
}

// A fill of 1.0, then a bias add: the accumulators start from the 1.0 and the
// bias add stays a separate op (starting from the bias alone would drop the
// 1.0).
// CHECK-LABEL: func.func @dw_one_fill_bias
// CHECK-NOT: linalg.depthwise_conv_2d_nchw_chw
// CHECK: arith.constant dense<1.000000e+00> : vector<4xf32>
// CHECK: vector.fma
// CHECK: linalg.generic
// CHECK: arith.addf
func.func @dw_one_fill_bias(%x: tensor<1x2x6x6xf32>, %w: tensor<2x3x3xf32>, %b: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<1x2x4x4xf32>
  %z = linalg.fill ins(%one : f32) outs(%e : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x2x6x6xf32>, tensor<2x3x3xf32>) outs(%z : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %e2 = tensor.empty() : tensor<1x2x4x4xf32>
  %a = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%c, %b : tensor<1x2x4x4xf32>, tensor<2xf32>) outs(%e2 : tensor<1x2x4x4xf32>) {
  ^bb0(%in: f32, %bb: f32, %o: f32):
    %s = arith.addf %in, %bb : f32
    linalg.yield %s : f32
  } -> tensor<1x2x4x4xf32>
  return %a : tensor<1x2x4x4xf32>
}

// An output that is not a fill: the accumulators start from it.
// CHECK-LABEL: func.func @dw_accumulate
// CHECK: vector.transfer_read {{.*}} : tensor<1x2x5x5xf32>, vector<5xf32>
// CHECK-COUNT-4: vector.fma {{.*}} : vector<5xf32>
func.func @dw_accumulate(%x: tensor<1x2x6x6xf32>, %w: tensor<2x2x2xf32>, %o: tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32> {
  %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x2x6x6xf32>, tensor<2x2x2xf32>) outs(%o : tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32>
  return %c : tensor<1x2x5x5xf32>
}

// Dynamic batch, with a fused pad, bias and Clip: a loop over the images
// around the batch-1 kernel (the same kernel as the static @dw_s1). A dynamic
// spatial dim and f64 are left to the loop lowering.
// CHECK-LABEL: func.func @dw_dynamic
// CHECK-NOT: linalg.depthwise_conv_2d_nchw_chw
// CHECK-NOT: tensor.pad
// CHECK: tensor.dim %arg0, %c0 : tensor<?x4x20x20xf32>
// CHECK: scf.for %[[I:.*]] = %c0 to %{{.*}} step %c1 iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<?x4x20x20xf32>)
// CHECK: tensor.extract_slice %arg0[%[[I]], 0, 0, 0] [1, 4, 20, 20] [1, 1, 1, 1] : tensor<?x4x20x20xf32> to tensor<1x4x20x20xf32>
// CHECK: tensor.extract_slice %[[ACC]][%[[I]], 0, 0, 0] [1, 4, 20, 20]
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, tensor<22x34xf32>
// CHECK-COUNT-18: vector.fma {{.*}} : vector<16xf32>
// CHECK: arith.minimumf {{.*}} : vector<16xf32>
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, tensor<1x4x20x20xf32>
// CHECK: tensor.insert_slice {{.*}} into %[[ACC]][%[[I]], 0, 0, 0] [1, 4, 20, 20] [1, 1, 1, 1] : tensor<1x4x20x20xf32> into tensor<?x4x20x20xf32>
// CHECK-NOT: linalg.generic
// CHECK-LABEL: func.func @dw_dynamic_h
// CHECK: linalg.depthwise_conv_2d_nchw_chw
// CHECK-LABEL: func.func @dw_f64
// CHECK: linalg.depthwise_conv_2d_nchw_chw
func.func @dw_dynamic(%x: tensor<?x4x20x20xf32>, %w: tensor<4x3x3xf32>, %b: tensor<4xf32>) -> tensor<?x4x20x20xf32> {
  %zero = arith.constant 0.0 : f32
  %six = arith.constant 6.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x20x20xf32>
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<?x4x20x20xf32> to tensor<?x4x22x22xf32>
  %e = tensor.empty(%n) : tensor<?x4x20x20xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x4x20x20xf32>) -> tensor<?x4x20x20xf32>
  %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<?x4x22x22xf32>, tensor<4x3x3xf32>) outs(%z : tensor<?x4x20x20xf32>) -> tensor<?x4x20x20xf32>
  %e2 = tensor.empty(%n) : tensor<?x4x20x20xf32>
  %a = linalg.generic {indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%c, %b : tensor<?x4x20x20xf32>, tensor<4xf32>) outs(%e2 : tensor<?x4x20x20xf32>) {
  ^bb0(%in: f32, %bb: f32, %o: f32):
    %s = arith.addf %in, %bb : f32
    linalg.yield %s : f32
  } -> tensor<?x4x20x20xf32>
  %e3 = tensor.empty(%n) : tensor<?x4x20x20xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%a : tensor<?x4x20x20xf32>) outs(%e3 : tensor<?x4x20x20xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %in, %zero : f32
    %m2 = arith.minimumf %m, %six : f32
    linalg.yield %m2 : f32
  } -> tensor<?x4x20x20xf32>
  return %r : tensor<?x4x20x20xf32>
}
func.func @dw_dynamic_h(%x: tensor<1x2x?x6xf32>, %w: tensor<2x3x3xf32>, %o: tensor<1x2x?x4xf32>) -> tensor<1x2x?x4xf32> {
  %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x2x?x6xf32>, tensor<2x3x3xf32>) outs(%o : tensor<1x2x?x4xf32>) -> tensor<1x2x?x4xf32>
  return %c : tensor<1x2x?x4xf32>
}
func.func @dw_f64(%x: tensor<1x2x6x6xf64>, %w: tensor<2x3x3xf64>, %o: tensor<1x2x4x4xf64>) -> tensor<1x2x4x4xf64> {
  %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x2x6x6xf64>, tensor<2x3x3xf64>) outs(%o : tensor<1x2x4x4xf64>) -> tensor<1x2x4x4xf64>
  return %c : tensor<1x2x4x4xf64>
}

// Above 2^21 multiply-adds (threads on): the channels are split into 16
// blocks of an scf.forall, each with its own scratch plane.
// CHECK-LABEL: func.func @dw_big
// CHECK-NOT: scf.forall
// THREADS-LABEL: func.func @dw_big
// THREADS: scf.forall (%{{.*}}) in (16)
// THREADS: tensor.empty() : tensor<66x66xf32>
// THREADS: tensor.parallel_insert_slice {{.*}} : tensor<1x4x64x64xf32> into tensor<1x64x64x64xf32>
func.func @dw_big(%x: tensor<1x64x64x64xf32>, %w: tensor<64x3x3xf32>) -> tensor<1x64x64x64xf32> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x64x64x64xf32> to tensor<1x64x66x66xf32>
  %e = tensor.empty() : tensor<1x64x64x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x64x64x64xf32>) -> tensor<1x64x64x64xf32>
  %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<1x64x66x66xf32>, tensor<64x3x3xf32>) outs(%z : tensor<1x64x64x64xf32>) -> tensor<1x64x64x64xf32>
  return %c : tensor<1x64x64x64xf32>
}

// The activation before the pad (a 1x1 conv's HardSigmoid, with constants
// in its body) is applied as the plane is copied into the scratch: no
// generic left; 20 columns at 16 lanes, so the row's second read is masked
// and its lanes past the row are reset to the border's zero (HardSigmoid(0)
// is 0.5) before the write.
// CHECK-LABEL: func.func @dw_prologue
// CHECK-NOT: linalg.generic
// CHECK-NOT: tensor.pad
// CHECK: vector.constant_mask [4] : vector<16xi1>
// CHECK: vector.transfer_read %arg0{{.*}} {in_bounds = [true]} : tensor<1x4x20x20xf32>, vector<16xf32>
// CHECK: arith.mulf {{.*}} : vector<16xf32>
// CHECK: arith.maximumf {{.*}} : vector<16xf32>
// CHECK: arith.minimumf {{.*}} : vector<16xf32>
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, tensor<22x34xf32>
// CHECK: vector.transfer_read %arg0[{{.*}}], %{{[a-z_0-9]+}} : tensor<1x4x20x20xf32>, vector<16xf32>
// CHECK: arith.select {{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, tensor<22x34xf32>
// CHECK-COUNT-18: vector.fma {{.*}} : vector<16xf32>
// CHECK-NOT: linalg.generic
func.func @dw_prologue(%x: tensor<1x4x20x20xf32>, %w: tensor<4x3x3xf32>) -> tensor<1x4x20x20xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e0 = tensor.empty() : tensor<1x4x20x20xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
       ins(%x : tensor<1x4x20x20xf32>) outs(%e0 : tensor<1x4x20x20xf32>) {
  ^bb0(%in: f32, %o: f32):
    %alpha = arith.constant 0.2 : f32
    %beta = arith.constant 0.5 : f32
    %m = arith.mulf %in, %alpha : f32
    %a = arith.addf %m, %beta : f32
    %lo = arith.maximumf %a, %zero : f32
    %hi = arith.minimumf %lo, %one : f32
    linalg.yield %hi : f32
  } -> tensor<1x4x20x20xf32>
  %p = tensor.pad %h low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i: index, %j: index, %k: index, %l: index):
    tensor.yield %zero : f32
  } : tensor<1x4x20x20xf32> to tensor<1x4x22x22xf32>
  %e = tensor.empty() : tensor<1x4x20x20xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x20x20xf32>) -> tensor<1x4x20x20xf32>
  %c = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%p, %w : tensor<1x4x22x22xf32>, tensor<4x3x3xf32>) outs(%z : tensor<1x4x20x20xf32>) -> tensor<1x4x20x20xf32>
  return %c : tensor<1x4x20x20xf32>
}
