// RUN: %opt %s --lower-to-linalg | FileCheck %s
// RUN: %opt %s --lower-to-linalg --o3-attention=target=x86-64-v4,threads=1 | FileCheck %s --check-prefix=O3

// Attention (GQA: 4 query heads on 2 kv heads, mask [Sq, Skv]) -> K
// transposed, the mask viewed at rank 4, checks on the dynamic dims, and a
// call of the reference function (plain linalg, kv head = h floordiv 2).
// CHECK: affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 2, d4, d3)>
// CHECK-LABEL: func.func private @__om_attention_0
// CHECK-SAME: (%{{.*}}: tensor<?x4x?x8xf32>, %{{.*}}: tensor<?x2x8x?xf32>, %{{.*}}: tensor<?x2x?x16xf32>, %{{.*}}: tensor<1x1x?x?xf32>
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: arith.select
// CHECK-LABEL: func.func @att
// CHECK: call @om_check_failed
// CHECK: tensor.expand_shape %arg3 {{\[\[}}0, 1, 2], [3]]
// CHECK: linalg.transpose {{.*}} permutation = [0, 1, 3, 2]
// CHECK: call @__om_attention_0({{.*}}) {om.attention = {group = 2 : i64, mask = true, nan_rows = false, scale = 3.000000e-01 : f32}}
//
// -O3 (AVX-512): the call goes to the vector kernel (no scores argument):
// a loop over batch x heads, 6 x 4 register tiles of FMAs; the reference is gone.
// O3-NOT: func.func private @__om_attention_0
// O3-LABEL: func.func @att
// O3: call @__om_attention_k16_0(%arg0, %{{.*}}, %arg2, %{{.*}}, %{{.*}}) :
// O3-LABEL: func.func private @__om_attention_k16_0
// O3-SAME: (%{{.*}}: tensor<?x4x?x8xf32>, %{{.*}}: tensor<?x2x8x?xf32>, %{{.*}}: tensor<?x2x?x16xf32>, %{{.*}}: tensor<1x1x?x?xf32>, %{{.*}}: tensor<?x4x?x16xf32>)
// O3: scf.forall
// O3-COUNT-24: vector.fma {{.*}} : vector<16xf32>
// O3: vector.create_mask
// O3: vector.reduction <maximumf>
// O3: vector.reduction <add>
module attributes {onnx.opset_import = {ai.onnx = 23 : i64}} {
func.func @att(%q: tensor<?x4x?x8xf32>, %k: tensor<?x2x?x8xf32>, %v: tensor<?x2x?x16xf32>, %m: tensor<?x?xf32>) -> tensor<?x4x?x16xf32> {
  %y = "onnx.attention_v23"(%q, %k, %v, %m) {is_causal = 0 : si64, qk_matmul_output_mode = 0 : si64, scale = 3.000000e-01 : f32, softcap = 0.000000e+00 : f32, softmax_precision = 1 : si64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0>, resultSegmentSizes = array<i32: 1, 0, 0, 0>} : (tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x16xf32>, tensor<?x?xf32>) -> tensor<?x4x?x16xf32>
  return %y : tensor<?x4x?x16xf32>
}
}
