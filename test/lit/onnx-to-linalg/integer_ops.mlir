// RUN: %opt %s --lower-to-linalg | FileCheck %s

// zero points subtracted in i32 (unsigned: extui), then an i32 matmul
// CHECK-LABEL: func.func @matmul_integer
// CHECK: linalg.generic
// CHECK: arith.extui {{.*}} : i8 to i32
// CHECK: arith.subi
// CHECK: linalg.matmul ins({{.*}} : tensor<4x5xi32>, tensor<5x3xi32>) outs({{.*}} : tensor<4x3xi32>)
func.func @matmul_integer(%a: tensor<4x5xui8>, %b: tensor<5x3xui8>, %az: tensor<ui8>, %bz: tensor<3xui8>) -> tensor<4x3xsi32> {
  %0 = "onnx.mat_mul_integer"(%a, %b, %az, %bz) {operandSegmentSizes = array<i32: 1, 1, 1, 1>} : (tensor<4x5xui8>, tensor<5x3xui8>, tensor<ui8>, tensor<3xui8>) -> tensor<4x3xsi32>
  return %0 : tensor<4x3xsi32>
}

// requantize as onnxruntime: scale product, f32 multiply, round half to even,
// then add the zero point, saturate
// CHECK-LABEL: func.func @qlinear_matmul
// CHECK: arith.extsi {{.*}} : i8 to i32
// CHECK: linalg.matmul
// CHECK: linalg.generic
// CHECK: arith.mulf {{.*}} : f32
// CHECK: arith.divf {{.*}} : f32
// CHECK: arith.sitofp {{.*}} : i32 to f32
// CHECK: arith.mulf
// CHECK: math.roundeven
// CHECK: arith.addf
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: arith.fptosi {{.*}} : f32 to i8
func.func @qlinear_matmul(%a: tensor<2x4xsi8>, %sa: tensor<f32>, %za: tensor<si8>, %b: tensor<4x3xsi8>, %sb: tensor<f32>, %zb: tensor<si8>, %sy: tensor<f32>, %zy: tensor<si8>) -> tensor<2x3xsi8> {
  %0 = "onnx.q_linear_mat_mul"(%a, %sa, %za, %b, %sb, %zb, %sy, %zy) : (tensor<2x4xsi8>, tensor<f32>, tensor<si8>, tensor<4x3xsi8>, tensor<f32>, tensor<si8>, tensor<f32>, tensor<si8>) -> tensor<2x3xsi8>
  return %0 : tensor<2x3xsi8>
}

// min/max per row (a row reduction), then of the rows' maxima and minima
// CHECK-LABEL: func.func @dynamic_quantize_linear
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction"]} ins(%{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xf32>)
// CHECK: arith.maximumf
// CHECK: arith.minimumf
// CHECK-NOT: iterator_types = ["reduction"]
// CHECK: arith.select
// CHECK: math.roundeven
// CHECK: arith.fptoui {{.*}} : f32 to i8
// CHECK: tensor.from_elements
func.func @dynamic_quantize_linear(%x: tensor<3x4xf32>) -> (tensor<3x4xui8>, tensor<f32>, tensor<ui8>) {
  %y, %s, %z = "onnx.dynamic_quantize_linear"(%x) : (tensor<3x4xf32>) -> (tensor<3x4xui8>, tensor<f32>, tensor<ui8>)
  return %y, %s, %z : tensor<3x4xui8>, tensor<f32>, tensor<ui8>
}
