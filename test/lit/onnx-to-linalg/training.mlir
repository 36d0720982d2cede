// RUN: %opt %s --lower-to-linalg | FileCheck %s

// Adam, two tensors (a dynamic first dim and a scalar): R and T read once,
// a run-time check of G's/V's/H's dynamic dim against X's; R's bias
// correction in f64 (powf of beta and alpha, selected by T > 0) then rounded
// to f32;
// one generic per tensor yielding X_new, V_new, H_new.
// CHECK-LABEL: func.func @adam
// CHECK: %[[R:.*]] = tensor.extract %arg0[] : tensor<f32>
// CHECK: arith.extf %[[R]] : f32 to f64
// CHECK: %[[T:.*]] = tensor.extract %arg1[] : tensor<i64>
// CHECK: tensor.dim %arg4, %c0
// CHECK: call @om_check_failed
// CHECK: arith.sitofp %[[T]] : i64 to f64
// CHECK: math.powf
// CHECK: math.powf
// CHECK: arith.cmpi sgt, %[[T]]
// CHECK: %[[S:.*]] = arith.truncf {{.*}} : f64 to f32
// CHECK: %[[A:.*]]:3 = linalg.generic {{.*}} ins(%arg2, %arg4, %arg6, %arg8 : tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>) outs({{.*}} : tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>)
// CHECK: math.sqrt
// CHECK: arith.mulf %[[S]]
// CHECK: %[[B:.*]]:3 = linalg.generic {{.*}} ins(%arg3, %arg5, %arg7, %arg9 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>)
// CHECK: return %[[A]]#0, %[[B]]#0, %[[A]]#1, %[[B]]#1, %[[A]]#2, %[[B]]#2
// CHECK-NOT: onnx_training
func.func @adam(%arg0: tensor<f32>, %arg1: tensor<i64>, %arg2: tensor<?x3xf32>, %arg3: tensor<f32>, %arg4: tensor<?x3xf32>, %arg5: tensor<f32>, %arg6: tensor<?x3xf32>, %arg7: tensor<f32>, %arg8: tensor<?x3xf32>, %arg9: tensor<f32>) -> (tensor<?x3xf32>, tensor<f32>, tensor<?x3xf32>, tensor<f32>, tensor<?x3xf32>, tensor<f32>) {
  %0:6 = "onnx_training.adam"(%arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7, %arg8, %arg9) {alpha = 0.899999976 : f32, beta = 9.990000e-01 : f32, epsilon = 9.99999997E-7 : f32, norm_coefficient = 0.000000e+00 : f32, norm_coefficient_post = 5.000000e-01 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<f32>, tensor<i64>, tensor<?x3xf32>, tensor<f32>, tensor<?x3xf32>, tensor<f32>, tensor<?x3xf32>, tensor<f32>, tensor<?x3xf32>, tensor<f32>) -> (tensor<?x3xf32>, tensor<f32>, tensor<?x3xf32>, tensor<f32>, tensor<?x3xf32>, tensor<f32>)
  return %0#0, %0#1, %0#2, %0#3, %0#4, %0#5 : tensor<?x3xf32>, tensor<f32>, tensor<?x3xf32>, tensor<f32>, tensor<?x3xf32>, tensor<f32>
}

// Nesterov momentum in f64: beta or 1 selected by T > 0 (no rounding), then
// X - R * (G_reg + alpha * V_new); static shapes: no run-time check.
// CHECK-LABEL: func.func @momentum
// CHECK: %[[T:.*]] = tensor.extract %arg1[] : tensor<i64>
// CHECK: arith.cmpi sgt, %[[T]]
// CHECK: %[[BETA:.*]] = arith.select
// CHECK-NOT: om_check_failed
// CHECK: %[[M:.*]]:2 = linalg.generic {{.*}} ins(%arg2, %arg3, %arg4 : tensor<2xf64>, tensor<2xf64>, tensor<2xf64>)
// CHECK: ^bb0(%[[X:[a-z0-9_]+]]: f64, %[[G:[a-z0-9_]+]]: f64, %[[V:[a-z0-9_]+]]: f64,
// CHECK: %[[GR:.*]] = arith.addf %{{.*}}, %[[G]] : f64
// CHECK: %[[VN:.*]] = arith.addf %{{.*}}, %{{.*}} : f64
// CHECK: %[[AV:.*]] = arith.mulf %{{.*}}, %[[VN]] : f64
// CHECK: %[[D:.*]] = arith.addf %[[GR]], %[[AV]] : f64
// CHECK: %[[RD:.*]] = arith.mulf %{{.*}}, %[[D]] : f64
// CHECK: %[[XN:.*]] = arith.subf %[[X]], %[[RD]] : f64
// CHECK: linalg.yield %[[XN]], %[[VN]] : f64, f64
// CHECK: return %[[M]]#0, %[[M]]#1
func.func @momentum(%arg0: tensor<f64>, %arg1: tensor<i64>, %arg2: tensor<2xf64>, %arg3: tensor<2xf64>, %arg4: tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>) {
  %0:2 = "onnx_training.momentum"(%arg0, %arg1, %arg2, %arg3, %arg4) {alpha = 0.899999976 : f32, beta = 1.000000e-01 : f32, mode = "nesterov", norm_coefficient = 0.000000e+00 : f32, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0>} : (tensor<f64>, tensor<i64>, tensor<2xf64>, tensor<2xf64>, tensor<2xf64>) -> (tensor<2xf64>, tensor<2xf64>)
  return %0#0, %0#1 : tensor<2xf64>, tensor<2xf64>
}
