// RUN: %opt %s --lower-to-linalg --split-input-file | FileCheck %s

// Gelu: erf form, one elementwise generic
// CHECK-LABEL: func.func @gelu
// CHECK: linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK: math.erf
// CHECK-NOT: com_microsoft.
func.func @gelu(%x: tensor<?x3x8xf32>) -> tensor<?x3x8xf32> {
  %0 = "com_microsoft.gelu"(%x) : (tensor<?x3x8xf32>) -> tensor<?x3x8xf32>
  return %0 : tensor<?x3x8xf32>
}

// -----

// BiasGelu: the bias read along the last dim, added before the erf
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[LAST:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @bias_gelu
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[LAST]], #[[ID]]]
// CHECK: ^bb0(%[[X:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[X]], %[[B]] : f32
// CHECK: arith.divf %[[S]]
// CHECK: math.erf
func.func @bias_gelu(%x: tensor<?x3x8xf32>, %b: tensor<8xf32>) -> tensor<?x3x8xf32> {
  %0 = "com_microsoft.bias_gelu"(%x, %b) : (tensor<?x3x8xf32>, tensor<8xf32>) -> tensor<?x3x8xf32>
  return %0 : tensor<?x3x8xf32>
}

// -----

// FastGelu: a dynamic bias length is checked against X's last dim; tanh form
// CHECK-LABEL: func.func @fast_gelu
// CHECK: tensor.dim %arg1
// CHECK: arith.cmpi eq
// CHECK: scf.if
// CHECK: tensor.cast %arg1 : tensor<?xf32> to tensor<8xf32>
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: math.tanh
func.func @fast_gelu(%x: tensor<2x8xf32>, %b: tensor<?xf32>) -> tensor<2x8xf32> {
  %0 = "com_microsoft.fast_gelu"(%x, %b) : (tensor<2x8xf32>, tensor<?xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// QuickGelu: x * sigmoid(alpha * x)
// CHECK-LABEL: func.func @quick_gelu
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[A:.*]] = arith.constant -7.500000e-01 : f32
// CHECK: %[[AX:.*]] = arith.mulf %[[X]], %[[A]] : f32
// CHECK: arith.negf %[[AX]]
// CHECK: math.exp
// CHECK: %[[SIG:.*]] = arith.divf
// CHECK: arith.mulf %[[X]], %[[SIG]] : f32
func.func @quick_gelu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "com_microsoft.quick_gelu"(%x) {alpha = -7.500000e-01 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// f16: computed in f32, rounded once
// CHECK-LABEL: func.func @quick_gelu_f16
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: math.exp %{{.*}} : f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @quick_gelu_f16(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = "com_microsoft.quick_gelu"(%x) {alpha = 1.702 : f32} : (tensor<4xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// BiasAdd: (X + bias) + skip, skip's dims checked against X's
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[LAST:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @bias_add
// CHECK: scf.if
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[LAST]], #[[ID]]]
// CHECK: ^bb0(%[[X:.*]]: f32, %[[S:.*]]: f32, %[[B:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[T:.*]] = arith.addf %[[X]], %[[B]] : f32
// CHECK-NEXT: %[[Y:.*]] = arith.addf %[[T]], %[[S]] : f32
// CHECK-NEXT: linalg.yield %[[Y]]
func.func @bias_add(%x: tensor<?x4x8xf32>, %b: tensor<8xf32>, %s: tensor<?x4x8xf32>) -> tensor<?x4x8xf32> {
  %0 = "com_microsoft.bias_add"(%x, %b, %s) : (tensor<?x4x8xf32>, tensor<8xf32>, tensor<?x4x8xf32>) -> tensor<?x4x8xf32>
  return %0 : tensor<?x4x8xf32>
}
