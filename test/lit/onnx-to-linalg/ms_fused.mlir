// RUN: %opt %s --lower-to-linalg --split-input-file | FileCheck %s

// FusedMatMul, transB on 2-D operands: a transpose feeding MatMul's linalg.matmul (alpha 1: nothing after)
// CHECK-LABEL: func.func @fused_matmul_2d
// CHECK: %[[T:.*]] = linalg.transpose ins(%arg1 : tensor<6x5xf32>) outs(%{{.*}} : tensor<5x6xf32>) permutation = [1, 0]
// CHECK: %[[Y:.*]] = linalg.matmul ins(%arg0, %[[T]] : tensor<3x5xf32>, tensor<5x6xf32>)
// CHECK-NEXT: return %[[Y]]
func.func @fused_matmul_2d(%a: tensor<3x5xf32>, %w: tensor<6x5xf32>) -> tensor<3x6xf32> {
  %0 = "com_microsoft.fused_mat_mul"(%a, %w) {alpha = 1.0 : f32, transA = 0 : si64, transB = 1 : si64, transBatchA = 0 : si64, transBatchB = 0 : si64} : (tensor<3x5xf32>, tensor<6x5xf32>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

// transA (last two dims swapped) and transBatchB (B stored [K, batch, N]): a
// batch_matmul of the reordered operands, then the alpha scaling
// CHECK-LABEL: func.func @fused_matmul_batch
// CHECK: linalg.transpose ins(%arg0 : tensor<2x5x4xf32>) outs(%{{.*}} : tensor<2x4x5xf32>) permutation = [0, 2, 1]
// CHECK: linalg.transpose ins(%arg1 : tensor<5x2x6xf32>) outs(%{{.*}} : tensor<2x5x6xf32>) permutation = [1, 0, 2]
// CHECK: %[[Y:.*]] = linalg.batch_matmul
// CHECK: linalg.generic {{.*}} ins(%[[Y]] : tensor<2x4x6xf32>)
// CHECK: arith.constant 5.000000e-01 : f32
// CHECK: arith.mulf
func.func @fused_matmul_batch(%a: tensor<2x5x4xf32>, %w: tensor<5x2x6xf32>) -> tensor<2x4x6xf32> {
  %0 = "com_microsoft.fused_mat_mul"(%a, %w) {alpha = 5.000000e-01 : f32, transA = 1 : si64, transB = 0 : si64, transBatchA = 0 : si64, transBatchB = 1 : si64} : (tensor<2x5x4xf32>, tensor<5x2x6xf32>) -> tensor<2x4x6xf32>
  return %0 : tensor<2x4x6xf32>
}

// -----

// transBatchA with transA: A stored [K, b, M] read as [b, M, K]
// CHECK-LABEL: func.func @fused_matmul_trans_batch
// CHECK: linalg.transpose ins(%arg0 : tensor<5x2x4xf32>) outs(%{{.*}} : tensor<2x4x5xf32>) permutation = [1, 2, 0]
// CHECK: linalg.batch_matmul
func.func @fused_matmul_trans_batch(%a: tensor<5x2x4xf32>, %w: tensor<2x5x6xf32>) -> tensor<2x4x6xf32> {
  %0 = "com_microsoft.fused_mat_mul"(%a, %w) {alpha = 1.0 : f32, transA = 1 : si64, transB = 0 : si64, transBatchA = 1 : si64, transBatchB = 0 : si64} : (tensor<5x2x4xf32>, tensor<2x5x6xf32>) -> tensor<2x4x6xf32>
  return %0 : tensor<2x4x6xf32>
}

// -----

// FusedConv: Conv's lowering (conv op, bias generic), then + Z, then the activation
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[CH:.*]] = affine_map<(d0, d1, d2, d3) -> (d1)>
// CHECK-LABEL: func.func @fused_conv
// CHECK: tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[C:.*]] = linalg.conv_2d_nchw_fchw
// CHECK: %[[B:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[CH]], #[[ID]]], {{.*}} ins(%[[C]], %arg2
// CHECK: arith.addf
// CHECK: %[[Z:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]]], {{.*}} ins(%[[B]], %arg3
// CHECK: arith.addf
// CHECK: %[[Y:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ID]]], {{.*}} ins(%[[Z]]
// CHECK: arith.cmpf olt
// CHECK: arith.constant 2.000000e-01 : f32
// CHECK: arith.select
// CHECK: return %[[Y]]
func.func @fused_conv(%x: tensor<1x2x5x5xf32>, %k: tensor<4x2x3x3xf32>, %c: tensor<4xf32>, %z: tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32> {
  %0 = "com_microsoft.fused_conv"(%x, %k, %c, %z) {activation = "LeakyRelu", activation_params = array<f32: 2.000000e-01>, auto_pad = "NOTSET", group = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>, tensor<1x4x5x5xf32>) -> tensor<1x4x5x5xf32>
  return %0 : tensor<1x4x5x5xf32>
}

// -----

// Clip: max then min with the constant bounds; no bias, no Z
// CHECK-LABEL: func.func @fused_conv_clip
// CHECK: %[[C:.*]] = linalg.conv_2d_nchw_fchw
// CHECK: linalg.generic {{.*}} ins(%[[C]]
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK: arith.minimumf %{{.*}}, %{{.*}} : f32
func.func @fused_conv_clip(%x: tensor<1x2x5x5xf32>, %k: tensor<4x2x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %0 = "com_microsoft.fused_conv"(%x, %k) {activation = "Clip", activation_params = array<f32: 0.0, 6.0>, auto_pad = "NOTSET", group = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x3x3xf32>
  return %0 : tensor<1x4x3x3xf32>
}
