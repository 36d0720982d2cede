// RUN: %opt %s --split-input-file --o3-nbits-decode | FileCheck %s
// RUN: %opt %s --split-input-file --o3-nbits-decode=target=x86-64-v3 | FileCheck %s --check-prefix=AVX2
// MatMulNBits' matmul (the lowering's dequantizing generic, tagged om.nbits =
// [bits, block, K, N, zero-point form], times A) at a static M <= 8 becomes
// the nbits_decode kernel (passes/optimize/matmul_nbits.py): the 4-bit bytes
// re-laid out per 64-column tile ([T, K'/2, 64] i8: K = 40 padded to 3 blocks
// of 16, N = 20 to one tile), unpacked in registers (zero-extended, masked /
// shifted, converted), never an f32 [K, N] tensor; a dynamic M is dispatched
// at run time (M = 1: the kernel); a static M > 8 keeps the matmul.

#w = affine_map<(d0, d1) -> (d1, d0 floordiv 16, (d0 mod 16) floordiv 2)>
#s = affine_map<(d0, d1) -> (d1 * 3 + d0 floordiv 16)>
#z = affine_map<(d0, d1) -> (d1 * 2 + (d0 floordiv 16) floordiv 2)>
#o = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @int4_m1
// CHECK-NOT: linalg.matmul
// CHECK-NOT: tensor<40x20xf32>
// CHECK-DAG: arith.constant {{.*}} : tensor<1x24x64xi8>
// CHECK-DAG: arith.constant {{.*}} : tensor<1x3x64xf32>
// CHECK: tensor.pad {{.*}} high[0, 8]
// CHECK: scf.for
// CHECK: vector.transfer_read {{.*}} : tensor<1x24x64xi8>, vector<16xi8>
// CHECK: arith.extui {{.*}} : vector<16xi8> to vector<16xi32>
// CHECK: arith.andi
// CHECK: arith.shrui
// CHECK: arith.sitofp {{.*}} : vector<16xi32> to vector<16xf32>
// CHECK: vector.fma
// CHECK: tensor.extract_slice {{.*}} [1, 20] [1, 1] : tensor<1x64xf32> to tensor<1x20xf32>
// AVX2-LABEL: func.func @int4_m1
// AVX2: vector.transfer_read {{.*}} : tensor<1x24x32xi8>, vector<8xi8>
func.func @int4_m1(%a: tensor<1x40xf32>) -> tensor<1x20xf32> {
  %bc = arith.constant dense<7> : tensor<20x3x8xi8>
  %sc = arith.constant dense<0.25> : tensor<60xf32>
  %zp = arith.constant dense<-119> : tensor<40xi8>
  %e = tensor.empty() : tensor<40x20xf32>
  %w = linalg.generic {indexing_maps = [#w, #s, #z, #o], iterator_types = ["parallel", "parallel"]} ins(%bc, %sc, %zp : tensor<20x3x8xi8>, tensor<60xf32>, tensor<40xi8>) outs(%e : tensor<40x20xf32>) attrs = {om.nbits = array<i64: 4, 16, 40, 20, 1>} {
  ^bb0(%q: i8, %s: f32, %z: i8, %out: f32):
    %k = linalg.index 0 : index
    %q32 = arith.extui %q : i8 to i32
    %ki = arith.index_cast %k : index to i32
    %c2 = arith.constant 2 : i32
    %c4 = arith.constant 4 : i32
    %c15 = arith.constant 15 : i32
    %c16 = arith.constant 16 : i32
    %f = arith.remui %ki, %c2 : i32
    %sh = arith.muli %f, %c4 : i32
    %qs = arith.shrui %q32, %sh : i32
    %qm = arith.andi %qs, %c15 : i32
    %qf = arith.uitofp %qm : i32 to f32
    %z32 = arith.extui %z : i8 to i32
    %blk = arith.divui %ki, %c16 : i32
    %zf0 = arith.remui %blk, %c2 : i32
    %zsh = arith.muli %zf0, %c4 : i32
    %zs = arith.shrui %z32, %zsh : i32
    %zm = arith.andi %zs, %c15 : i32
    %zf = arith.uitofp %zm : i32 to f32
    %d = arith.subf %qf, %zf : f32
    %r = arith.mulf %d, %s : f32
    linalg.yield %r : f32
  } -> tensor<40x20xf32>
  %zero = arith.constant 0.0 : f32
  %ec = tensor.empty() : tensor<1x20xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ec : tensor<1x20xf32>) -> tensor<1x20xf32>
  %y = linalg.matmul ins(%a, %w : tensor<1x40xf32>, tensor<40x20xf32>) outs(%c : tensor<1x20xf32>) -> tensor<1x20xf32>
  return %y : tensor<1x20xf32>
}

// -----

// A dynamic M (a decode export's [batch, sequence, K]) is dispatched at run
// time: the M = 1 kernel when M is 1, else a copy of the dequantizing
// generic and the matmul (tagged for no kernel, so the pass leaves it).
#s = affine_map<(d0, d1) -> (d1, d0 floordiv 32)>
#o = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @int8_dynamic_m
// CHECK: %[[M:.*]] = tensor.dim %arg0
// CHECK: %[[ONE:.*]] = arith.cmpi eq, %[[M]], %c1
// CHECK: scf.if %[[ONE]] -> (tensor<?x16xf32>)
// CHECK: tensor.cast %arg0 : tensor<?x32xf32> to tensor<1x32xf32>
// CHECK: arith.extui {{.*}} : vector<16xi8> to vector<16xi32>
// CHECK: vector.fma
// CHECK: } else {
// CHECK: linalg.generic {{.*}}om.nbits = array<i64: 8, 32, 32, 16, 0>
// CHECK: linalg.matmul {om.kernel = "linalg"}
// CHECK-NOT: linalg.matmul
func.func @int8_dynamic_m(%a: tensor<?x32xf32>) -> tensor<?x16xf32> {
  %bc = arith.constant dense<-100> : tensor<16x1x32xi8>
  %sc = arith.constant dense<0.5> : tensor<16x1xf32>
  %e = tensor.empty() : tensor<32x16xf32>
  %w = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0 floordiv 32, d0 mod 32)>, #s, #o], iterator_types = ["parallel", "parallel"]} ins(%bc, %sc : tensor<16x1x32xi8>, tensor<16x1xf32>) outs(%e : tensor<32x16xf32>) attrs = {om.nbits = array<i64: 8, 32, 32, 16, 0>} {
  ^bb0(%q: i8, %s: f32, %out: f32):
    %q32 = arith.extui %q : i8 to i32
    %qf = arith.uitofp %q32 : i32 to f32
    %c128 = arith.constant 128.0 : f32
    %d = arith.subf %qf, %c128 : f32
    %r = arith.mulf %d, %s : f32
    linalg.yield %r : f32
  } -> tensor<32x16xf32>
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x32xf32>
  %ec = tensor.empty(%m) : tensor<?x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ec : tensor<?x16xf32>) -> tensor<?x16xf32>
  %y = linalg.matmul ins(%a, %w : tensor<?x32xf32>, tensor<32x16xf32>) outs(%c : tensor<?x16xf32>) -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}

// -----

// A static M above 8 (a prefill): the dequantize-then-matmul path stays.
#s = affine_map<(d0, d1) -> (d1, d0 floordiv 32)>
#o = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @int8_m9
// CHECK-NOT: scf.if
// CHECK: linalg.matmul ins
// CHECK-NOT: vector.fma
func.func @int8_m9(%a: tensor<9x32xf32>) -> tensor<9x16xf32> {
  %bc = arith.constant dense<-100> : tensor<16x1x32xi8>
  %sc = arith.constant dense<0.5> : tensor<16x1xf32>
  %e = tensor.empty() : tensor<32x16xf32>
  %w = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0 floordiv 32, d0 mod 32)>, #s, #o], iterator_types = ["parallel", "parallel"]} ins(%bc, %sc : tensor<16x1x32xi8>, tensor<16x1xf32>) outs(%e : tensor<32x16xf32>) attrs = {om.nbits = array<i64: 8, 32, 32, 16, 0>} {
  ^bb0(%q: i8, %s: f32, %out: f32):
    %q32 = arith.extui %q : i8 to i32
    %qf = arith.uitofp %q32 : i32 to f32
    %c128 = arith.constant 128.0 : f32
    %d = arith.subf %qf, %c128 : f32
    %r = arith.mulf %d, %s : f32
    linalg.yield %r : f32
  } -> tensor<32x16xf32>
  %zero = arith.constant 0.0 : f32
  %ec = tensor.empty() : tensor<9x16xf32>
  %c = linalg.fill ins(%zero : f32) outs(%ec : tensor<9x16xf32>) -> tensor<9x16xf32>
  %y = linalg.matmul ins(%a, %w : tensor<9x32xf32>, tensor<32x16xf32>) outs(%c : tensor<9x16xf32>) -> tensor<9x16xf32>
  return %y : tensor<9x16xf32>
}
