// RUN: %opt %s --split-input-file --o3-bf16-conv=target=sapphirerapids | FileCheck %s
// RUN: %opt %s --split-input-file --o3-bf16-conv=target=znver4 | FileCheck %s --check-prefix=ZEN4
// A channels-last bf16 conv (linalg.conv_2d_nhwc_fhwc: NhwcConv under
// --precision bf16) on AMX-BF16 (passes/optimize/matmul_bf16_amx.py, rows_out):
// the NHWC input is read in place (a 1x1 conv's pixels are A; else an im2col
// of 32 pixels per block, one piece of KW * C elements per filter row, C = 3
// odd: the pieces need not be pairs), and the result's rows [N * OH * OW, F]
// are written from the C tiles: whole blocks and column tiles tile-stored
// into the result, with the epilogue (bias on the last dim, residual add,
// ReLU: the generics after the conv, now gone) applied to each column
// pair's rows in place; a part block (36 pixels) or column tile (F = 20)
// goes through a [32, F'] buffer, the epilogue on the way. Zen 4 (no AMX)
// keeps the linalg conv and its generics.

// CHECK: module attributes {om.cpu_features = [{{.*}}"amx-tile", "amx-bf16"]}
// CHECK-LABEL: func.func @pointwise_epilogue
// CHECK-NOT: linalg.conv_2d_nhwc_fhwc
// CHECK: tensor.collapse_shape {{.*}} into tensor<36x32xbf16>
// CHECK: %[[R:.*]] = call @__om_amx_bf16_matmul_32x32_nhwc0({{.*}}, %arg1) : (tensor<?x32xbf16>, tensor<32x32xbf16>, tensor<32xf32>, tensor<1x6x6x32xf32>) -> tensor<1x6x6x32xf32>
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]
// CHECK: func.func private @__om_amx_bf16_matmul_32x32_nhwc0
// CHECK: %[[OUT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<1x6x6x32xf32>
// CHECK: %[[ROWS:.*]] = memref.collapse_shape %[[OUT]] {{\[\[}}0, 1, 2], [3]] : memref<1x6x6x32xf32> into memref<36x32xf32>
// CHECK: %[[RES:.*]] = memref.collapse_shape {{.*}} into memref<36x32xf32>
// CHECK-COUNT-4: amx.tile_mulf
// CHECK-COUNT-4: amx.tile_store %[[ROWS]]
// CHECK: scf.for
// CHECK: vector.transfer_read %[[ROWS]]
// CHECK: vector.transfer_read %[[RES]]
// CHECK: arith.addf
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: vector.transfer_write {{.*}}, %[[ROWS]]
// CHECK: scf.if
// CHECK: %[[CBUF:.*]] = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
// CHECK-COUNT-4: amx.tile_store %[[CBUF]]
// CHECK: vector.transfer_read %[[CBUF]]
// CHECK: arith.maximumf
// CHECK: vector.transfer_write {{.*}}, %[[ROWS]]
// CHECK: bufferization.to_tensor %[[OUT]] restrict writable
// ZEN4-LABEL: func.func @pointwise_epilogue
// ZEN4-NOT: amx.
// ZEN4: linalg.conv_2d_nhwc_fhwc
// ZEN4-COUNT-2: arith.addf
// ZEN4: arith.maximumf
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#last = affine_map<(d0, d1, d2, d3) -> (d3)>
func.func @pointwise_epilogue(%x: tensor<1x6x6x32xf32>, %r: tensor<1x6x6x32xf32>) -> tensor<1x6x6x32xf32> {
  %e = tensor.empty() : tensor<1x6x6x32xbf16>
  %xb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x6x6x32xf32>) outs(%e : tensor<1x6x6x32xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x6x6x32xbf16>
  %w = arith.constant dense<5.000000e-01> : tensor<32x1x1x32xbf16>
  %z = arith.constant 0.0 : f32
  %ea = tensor.empty() : tensor<1x6x6x32xf32>
  %acc = linalg.fill ins(%z : f32) outs(%ea : tensor<1x6x6x32xf32>) -> tensor<1x6x6x32xf32>
  %y0 = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%xb, %w : tensor<1x6x6x32xbf16>, tensor<32x1x1x32xbf16>) outs(%acc : tensor<1x6x6x32xf32>) -> tensor<1x6x6x32xf32>
  %bias = arith.constant dense<[0.000000e+00, 1.250000e-01, 2.500000e-01, 3.750000e-01, 5.000000e-01, 6.250000e-01, 7.500000e-01, 8.750000e-01, 1.000000e+00, 1.125000e+00, 1.250000e+00, 1.375000e+00, 1.500000e+00, 1.625000e+00, 1.750000e+00, 1.875000e+00, 2.000000e+00, 2.125000e+00, 2.250000e+00, 2.375000e+00, 2.500000e+00, 2.625000e+00, 2.750000e+00, 2.875000e+00, 3.000000e+00, 3.125000e+00, 3.250000e+00, 3.375000e+00, 3.500000e+00, 3.625000e+00, 3.750000e+00, 3.875000e+00]> : tensor<32xf32>
  %e_y1 = tensor.empty() : tensor<1x6x6x32xf32>
  %y1 = linalg.generic {indexing_maps = [#id, #last, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y0, %bias : tensor<1x6x6x32xf32>, tensor<32xf32>) outs(%e_y1 : tensor<1x6x6x32xf32>) {
  ^bb0(%a0: f32, %a1: f32, %o: f32):
    %s = arith.addf %a0, %a1 : f32
    linalg.yield %s : f32
  } -> tensor<1x6x6x32xf32>
  %e_y2 = tensor.empty() : tensor<1x6x6x32xf32>
  %y2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y1, %r : tensor<1x6x6x32xf32>, tensor<1x6x6x32xf32>) outs(%e_y2 : tensor<1x6x6x32xf32>) {
  ^bb0(%a0: f32, %a1: f32, %o: f32):
    %s = arith.addf %a0, %a1 : f32
    linalg.yield %s : f32
  } -> tensor<1x6x6x32xf32>
  %e_y3 = tensor.empty() : tensor<1x6x6x32xf32>
  %y3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y2 : tensor<1x6x6x32xf32>) outs(%e_y3 : tensor<1x6x6x32xf32>) {
  ^bb0(%a0: f32, %o: f32):
    %zr = arith.constant 0.0 : f32
    %s = arith.maximumf %a0, %zr : f32
    linalg.yield %s : f32
  } -> tensor<1x6x6x32xf32>
  return %y3 : tensor<1x6x6x32xf32>
}

// -----

// CHECK-LABEL: func.func @stride2_c3
// CHECK: tensor.collapse_shape {{.*}} into tensor<243xbf16>
// CHECK: call @__om_amx_bf16_matmul_27x32_gather0_nhwc0({{.*}}) : (tensor<243xbf16>, tensor<32x32xbf16>, tensor<?xi32>) -> tensor<1x4x4x20xf32>
// CHECK: func.func private @__om_amx_bf16_matmul_27x32_gather0_nhwc0
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<1x4x4x20xf32>
// CHECK: vector.constant_mask [9] : vector<32xi1>
// CHECK: vector.transfer_write {{.*}}, %{{.*}}[%{{.*}}, %c9]
// CHECK: vector.transfer_write {{.*}}, %{{.*}}[%{{.*}}, %c18]
// CHECK: %[[CBUF:.*]] = memref.alloc() {alignment = 64 : i64} : memref<32x32xf32>
// CHECK: amx.tile_store %[[CBUF]]
// CHECK: vector.transfer_write {{.*}} : vector<16xf32>, memref<16x20xf32>
// ZEN4-LABEL: func.func @stride2_c3
// ZEN4: linalg.conv_2d_nhwc_fhwc
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @stride2_c3(%x: tensor<1x7x7x3xf32>) -> tensor<1x4x4x20xf32> {
  %e = tensor.empty() : tensor<1x7x7x3xbf16>
  %xb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x7x7x3xf32>) outs(%e : tensor<1x7x7x3xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x7x7x3xbf16>
  %zb = arith.constant 0.0 : bf16
  %xp = tensor.pad %xb low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zb : bf16
  } : tensor<1x7x7x3xbf16> to tensor<1x9x9x3xbf16>
  %w = arith.constant dense<5.000000e-01> : tensor<20x3x3x3xbf16>
  %z = arith.constant 0.0 : f32
  %ea = tensor.empty() : tensor<1x4x4x20xf32>
  %acc = linalg.fill ins(%z : f32) outs(%ea : tensor<1x4x4x20xf32>) -> tensor<1x4x4x20xf32>
  %y0 = linalg.conv_2d_nhwc_fhwc {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%xp, %w : tensor<1x9x9x3xbf16>, tensor<20x3x3x3xbf16>) outs(%acc : tensor<1x4x4x20xf32>) -> tensor<1x4x4x20xf32>
  return %y0 : tensor<1x4x4x20xf32>
}
