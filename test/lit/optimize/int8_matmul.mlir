// RUN: %opt %s --split-input-file --o3-int8-matmul=target=znver4 | FileCheck %s
// RUN: %opt %s --split-input-file --o3-int8-matmul=target=x86-64-v4 | FileCheck %s --check-prefix=NOVNNI
// An i32 matmul of a u8 tensor minus its zero point and a constant s8 matrix
// (MatMulInteger's lowering) becomes the VNNI kernel on a CPU with VNNI
// (passes/optimize/matmul_q8.py); an ISA level without VNNI keeps the matmul.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @u8_zp
// CHECK-NOT: linalg.matmul
// CHECK: arith.constant {{.*}} : tensor<1x2x128xi8>
// CHECK: scf.for
// CHECK: vector.transfer_read {{.*}} : tensor<1x2x128xi8>, vector<64xi8>
// CHECK: vector.bitcast {{.*}} : vector<4xi8> to vector<1xi32>
// CHECK: func.call @__om_vnni_dpbusd({{.*}}) {no_inline} : (vector<16xi32>, vector<64xi8>, vector<64xi8>) -> vector<16xi32>
// CHECK: func.func private @__om_vnni_dpbusd
// NOVNNI-LABEL: func.func @u8_zp
// NOVNNI: linalg.matmul
// NOVNNI-NOT: __om_vnni_dpbusd
func.func @u8_zp(%a: tensor<?x8xi8>) -> tensor<?x32xi32> {
  %b = arith.constant dense<[[1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12, 13, -14, 15, -16, 17, -18, 19, -20, 21, -22, 23, -24, 25, -26, 27, -28, 29, -30, 31, -32], [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], [2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2], [3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3], [4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5], [6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6], [-128, 127, -128, 127, -128, 127, -128, 127, -128, 127, -128, 127, -128, 127, -128, 127, -128, 127, -128, 127, -128, 127, -128, 127, -128, 127, -128, 127, -128, 127, -128, 127]]> : tensor<8x32xi8>
  %zp = arith.constant dense<-125> : tensor<i8>
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x8xi8>
  %e = tensor.empty(%m) : tensor<?x8xi32>
  %a32 = linalg.generic {indexing_maps = [#id2, #scalar, #id2], iterator_types = ["parallel", "parallel"]} ins(%a, %zp : tensor<?x8xi8>, tensor<i8>) outs(%e : tensor<?x8xi32>) {
  ^bb0(%x: i8, %z: i8, %o: i32):
    %0 = arith.extui %x : i8 to i32
    %1 = arith.extui %z : i8 to i32
    %2 = arith.subi %0, %1 : i32
    linalg.yield %2 : i32
  } -> tensor<?x8xi32>
  %eb = tensor.empty() : tensor<8x32xi32>
  %b32 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<8x32xi8>) outs(%eb : tensor<8x32xi32>) {
  ^bb0(%x: i8, %o: i32):
    %0 = arith.extsi %x : i8 to i32
    linalg.yield %0 : i32
  } -> tensor<8x32xi32>
  %zero = arith.constant 0 : i32
  %ec = tensor.empty(%m) : tensor<?x32xi32>
  %c = linalg.fill ins(%zero : i32) outs(%ec : tensor<?x32xi32>) -> tensor<?x32xi32>
  %r = linalg.matmul ins(%a32, %b32 : tensor<?x8xi32>, tensor<8x32xi32>) outs(%c : tensor<?x32xi32>) -> tensor<?x32xi32>
  return %r : tensor<?x32xi32>
}

// -----

// A u8 (unsigned) B is no VNNI operand: the matmul stays.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @u8_weights
// CHECK: linalg.matmul
// CHECK-NOT: __om_vnni_dpbusd
func.func @u8_weights(%a: tensor<4x8xi8>) -> tensor<4x16xi32> {
  %b = arith.constant dense<7> : tensor<8x16xi8>
  %e = tensor.empty() : tensor<4x8xi32>
  %a32 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x8xi8>) outs(%e : tensor<4x8xi32>) {
  ^bb0(%x: i8, %o: i32):
    %0 = arith.extui %x : i8 to i32
    linalg.yield %0 : i32
  } -> tensor<4x8xi32>
  %eb = tensor.empty() : tensor<8x16xi32>
  %b32 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<8x16xi8>) outs(%eb : tensor<8x16xi32>) {
  ^bb0(%x: i8, %o: i32):
    %0 = arith.extui %x : i8 to i32
    linalg.yield %0 : i32
  } -> tensor<8x16xi32>
  %zero = arith.constant 0 : i32
  %ec = tensor.empty() : tensor<4x16xi32>
  %c = linalg.fill ins(%zero : i32) outs(%ec : tensor<4x16xi32>) -> tensor<4x16xi32>
  %r = linalg.matmul ins(%a32, %b32 : tensor<4x8xi32>, tensor<8x16xi32>) outs(%c : tensor<4x16xi32>) -> tensor<4x16xi32>
  return %r : tensor<4x16xi32>
}
