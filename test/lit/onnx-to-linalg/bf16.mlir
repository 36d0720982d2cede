// RUN: %opt %s --lower-to-linalg | FileCheck %s
// --precision bf16 (the module attribute onnx_mlir_py.precision): the f32
// contractions read bf16 inputs (activations through arith.truncf, constant
// weights rounded at compile time) and accumulate in an f32 output.

module attributes {onnx_mlir_py.precision = "bf16"} {
// CHECK-LABEL: func.func @matmul_const
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[W:.*]] = arith.constant dense_resource<[[BLOB:.*]]> : tensor<2x3xbf16>
// CHECK: linalg.matmul ins(%{{.*}}, %[[W]] : tensor<?x2xbf16>, tensor<2x3xbf16>) outs(%{{.*}} : tensor<?x3xf32>)
func.func @matmul_const(%a: tensor<?x2xf32>) -> tensor<?x3xf32> {
  %w = "onnx.constant"() {value = dense<[[1.0, 1.00390625, 3.0], [1.01171875, -2.0, 0.5]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %0 = "onnx.mat_mul"(%a, %w) : (tensor<?x2xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// CHECK-LABEL: func.func @gemm
// CHECK-COUNT-2: arith.truncf %{{.*}} : f32 to bf16
// CHECK: linalg.transpose ins(%{{.*}} : tensor<10x8xbf16>)
// CHECK: linalg.matmul ins({{.*}} : tensor<?x8xbf16>, tensor<8x10xbf16>) outs({{.*}} : tensor<?x10xf32>)
// CHECK: arith.addf {{.*}} : f32
func.func @gemm(%a: tensor<?x8xf32>, %b: tensor<10x8xf32>, %c: tensor<10xf32>) -> tensor<?x10xf32> {
  %0 = "onnx.gemm"(%a, %b, %c) {alpha = 1.0 : f32, beta = 1.0 : f32, transA = 0 : si64, transB = 1 : si64} : (tensor<?x8xf32>, tensor<10x8xf32>, tensor<10xf32>) -> tensor<?x10xf32>
  return %0 : tensor<?x10xf32>
}

// CHECK-LABEL: func.func @broadcast_batch
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
// CHECK-SAME: ins({{.*}} : tensor<2x1x4x5xbf16>, tensor<3x5x6xbf16>) outs({{.*}} : tensor<2x3x4x6xf32>)
// CHECK: ^bb0(%[[X:[a-z0-9_]+]]: bf16, %[[Y:[a-z0-9_]+]]: bf16, %{{.*}}: f32):
// CHECK: arith.extf %[[X]] : bf16 to f32
// CHECK: arith.extf %[[Y]] : bf16 to f32
func.func @broadcast_batch(%a: tensor<2x1x4x5xf32>, %b: tensor<3x5x6xf32>) -> tensor<2x3x4x6xf32> {
  %0 = "onnx.mat_mul"(%a, %b) : (tensor<2x1x4x5xf32>, tensor<3x5x6xf32>) -> tensor<2x3x4x6xf32>
  return %0 : tensor<2x3x4x6xf32>
}

// CHECK-LABEL: func.func @conv
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: tensor.pad
// CHECK: linalg.conv_2d_nchw_fchw {{.*}} ins({{.*}} : tensor<1x2x6x6xbf16>, tensor<4x2x3x3xbf16>) outs({{.*}} : tensor<1x4x4x4xf32>)
func.func @conv(%x: tensor<1x2x4x4xf32>, %w: tensor<4x2x3x3xf32>) -> tensor<1x4x4x4xf32> {
  %0 = "onnx.conv"(%x, %w) {auto_pad = "NOTSET", group = 1 : si64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}

// NhwcConv as Conv: the channels-last input rounded (truncf) then padded on
// H, W, the relaid-out constant filter [F, KH, KW, C] rounded at compile
// time, f32 accumulation, the bias on the last dim (f32)
// CHECK-LABEL: func.func @nhwc_conv
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[W:.*]] = arith.constant dense_resource<{{.*}}> : tensor<4x3x3x2xbf16>
// CHECK: %[[XP:.*]] = tensor.pad %{{.*}} low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK: %[[Y:.*]] = linalg.conv_2d_nhwc_fhwc {{.*}} ins(%[[XP]], %[[W]] : tensor<?x6x6x2xbf16>, tensor<4x3x3x2xbf16>) outs(%{{.*}} : tensor<?x4x4x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[Y]], %arg1 : tensor<?x4x4x4xf32>, tensor<4xf32>)
// CHECK: arith.addf {{.*}} : f32
func.func @nhwc_conv(%x: tensor<?x4x4x2xf32>, %b: tensor<4xf32>) -> tensor<?x4x4x4xf32> {
  %w = "onnx.constant"() {value = dense<0.5> : tensor<4x2x3x3xf32>} : () -> tensor<4x2x3x3xf32>
  %0 = "com_microsoft.nhwc_conv"(%x, %w, %b) {auto_pad = "NOTSET", group = 1 : si64, pads = array<i64: 1, 1, 1, 1>} : (tensor<?x4x4x2xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<?x4x4x4xf32>
  return %0 : tensor<?x4x4x4xf32>
}

// f16 models keep their f16 -> f32 contractions
// CHECK-LABEL: func.func @half
// CHECK-NOT: bf16
// CHECK: return
func.func @half(%a: tensor<2x3xf16>, %b: tensor<3x4xf16>) -> tensor<2x4xf16> {
  %0 = "onnx.mat_mul"(%a, %b) : (tensor<2x3xf16>, tensor<3x4xf16>) -> tensor<2x4xf16>
  return %0 : tensor<2x4xf16>
}
}

// the weights rounded to nearest even: 1.0, 1+2^-8 (a tie: even 1.0), 3.0,
// 1+3*2^-8 (a tie: even 1+2^-6), -2.0, 0.5
// CHECK: [[BLOB]]: "0x02000000803F803F4040823F00C0003F"
