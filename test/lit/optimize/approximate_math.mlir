// RUN: %opt %s --o3-approximate-math | FileCheck %s
// RUN: %opt %s --o3-approximate-math | FileCheck %s --check-prefix=GONE

// f32 exp / erf / tanh / log in a linalg.generic body become inlined
// branch-free arith sequences (no math.exp/erf/tanh/log, no calls left).
// CHECK-LABEL: func.func @unary
// CHECK: linalg.generic
// exp: the 1.5*2^23 shifter (0x4B400000 = 1262485504) and 2^n from the bits
// CHECK: arith.cmpf olt
// CHECK: arith.select
// CHECK: arith.mulf {{.*}} fastmath<contract> : f32
// CHECK: arith.subi {{.*}} : i32
// CHECK: arith.shli {{.*}} : i32
// CHECK: arith.bitcast {{.*}} : i32 to f32
// erf: two polynomials, a select and the sign
// CHECK: math.absf
// CHECK: arith.select
// CHECK: math.copysign
// tanh: a rational
// CHECK: arith.divf
// log: exponent and mantissa from the bits
// CHECK: arith.andi {{.*}} : i32
// CHECK: arith.sitofp {{.*}} : i32 to f32
// CHECK: linalg.yield
// GONE-LABEL: func.func @unary
// GONE-NOT: math.{{(exp|erf|tanh|log)}}
// GONE-NOT: call
// GONE-LABEL: func.func @sum_exp
// GONE-NOT: math.exp
// GONE-LABEL: func.func @untouched
// GONE-NOT: __om_approx
#id = affine_map<(i, j) -> (i, j)>
func.func @unary(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %e = tensor.empty() : tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.exp %a : f32
    %u = math.erf %t : f32
    %v = math.tanh %u : f32
    %w = math.log %v : f32
    linalg.yield %w : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// Softmax-like row reduction: exp inside a reduction body is replaced too.
// CHECK-LABEL: func.func @sum_exp
// CHECK: linalg.generic
// CHECK: arith.bitcast
// CHECK: arith.addf
// CHECK: linalg.yield
#in = affine_map<(i, j) -> (i, j)>
#out = affine_map<(i, j) -> (i)>
func.func @sum_exp(%x: tensor<4x32xf32>, %acc: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x32xf32>) outs(%acc : tensor<4xf32>) {
  ^bb0(%a: f32, %s: f32):
    %t = math.exp %a : f32
    %u = arith.addf %s, %t : f32
    linalg.yield %u : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// Left alone: f64 and f16 (only f32 is approximated), and ops outside a
// linalg.generic body.
// CHECK-LABEL: func.func @untouched
// CHECK: math.exp {{.*}} : f64
// CHECK: math.erf {{.*}} : f16
// CHECK: math.tanh {{.*}} : f32
#id2 = affine_map<(i) -> (i)>
func.func @untouched(%x: tensor<8xf64>, %y: tensor<8xf16>, %s: f32) -> (tensor<8xf64>, tensor<8xf16>, f32) {
  %e = tensor.empty() : tensor<8xf64>
  %r = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf64>) outs(%e : tensor<8xf64>) {
  ^bb0(%a: f64, %o: f64):
    %t = math.exp %a : f64
    linalg.yield %t : f64
  } -> tensor<8xf64>
  %e2 = tensor.empty() : tensor<8xf16>
  %r2 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel"]}
      ins(%y : tensor<8xf16>) outs(%e2 : tensor<8xf16>) {
  ^bb0(%a: f16, %o: f16):
    %t = math.erf %a : f16
    linalg.yield %t : f16
  } -> tensor<8xf16>
  %th = math.tanh %s : f32
  return %r, %r2, %th : tensor<8xf64>, tensor<8xf16>, f32
}
