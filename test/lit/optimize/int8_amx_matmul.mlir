// RUN: %opt %s --split-input-file --o3-int8-amx-matmul=target=sapphirerapids | FileCheck %s
// RUN: %opt %s --split-input-file --o3-int8-amx-matmul=target=znver4 | FileCheck %s --check-prefix=ZEN4
// An i32 matmul of an 8-bit tensor minus its zero point and a constant s8
// matrix becomes the AMX-INT8 kernel on a CPU with AMX (passes/optimize/
// matmul_q8_amx.py): B packed as [N/16 * Kp/4, 64], the C tiles start from
// -za * colsum (16 rows), u8 A is tdpbusd (zext), s8 A tdpbssd; the result
// has M padded to 32 rows and is sliced back. Zen 4 (VNNI, no AMX) keeps the
// matmul for the VNNI step.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
// CHECK: module attributes {om.cpu_features = ["amx-tile", "amx-int8"]}
// CHECK-LABEL: func.func @u8_zp
// CHECK-NOT: linalg.matmul
// CHECK: %[[R:.*]] = call @[[K:__om_q8_amx_matmul_[0-9]+]]({{.*}}) : (tensor<?x8xi8>, tensor<32x64xi8>, tensor<32xi32>, i32) -> tensor<?x32xi32>
// CHECK: tensor.extract_slice %[[R]][0, 0] [%{{.*}}, 32] [1, 1]
// CHECK: func.func private @[[K]]
// CHECK: memref.alloc({{.*}}) {alignment = 64 : i64} : memref<?x32xi32>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<16x32xi32>
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<32x64xi8>
// CHECK: amx.tile_load {{.*}} : memref<16x32xi32> into !amx.tile<16x16xi32>
// CHECK: amx.tile_muli %{{.*}} zext, %{{[0-9]+}}, %{{.*}} : !amx.tile<16x64xi8>, !amx.tile<16x64xi8>, !amx.tile<16x16xi32>
// CHECK: amx.tile_store
// CHECK: bufferization.to_tensor %{{.*}} restrict writable
// ZEN4-LABEL: func.func @u8_zp
// ZEN4: linalg.matmul
// ZEN4-NOT: amx.
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

// s8 A (tdpbssd: no zext), K = 128 (A's tiles read in place, 2 K steps), N = 48.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @s8
// CHECK: func.func private
// CHECK: amx.tile_load %{{.*}} : memref<?x128xi8> into !amx.tile<16x64xi8>
// CHECK: amx.tile_muli %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} : !amx.tile<16x64xi8>
// CHECK-NOT: zext
// ZEN4-LABEL: func.func @s8
// ZEN4: linalg.matmul
func.func @s8(%a: tensor<?x128xi8>) -> tensor<?x48xi32> {
  %b = arith.constant dense<3> : tensor<128x48xi8>
  %c0 = arith.constant 0 : index
  %m = tensor.dim %a, %c0 : tensor<?x128xi8>
  %e = tensor.empty(%m) : tensor<?x128xi32>
  %a32 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<?x128xi8>) outs(%e : tensor<?x128xi32>) {
  ^bb0(%x: i8, %o: i32):
    %0 = arith.extsi %x : i8 to i32
    linalg.yield %0 : i32
  } -> tensor<?x128xi32>
  %eb = tensor.empty() : tensor<128x48xi32>
  %b32 = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<128x48xi8>) outs(%eb : tensor<128x48xi32>) {
  ^bb0(%x: i8, %o: i32):
    %0 = arith.extsi %x : i8 to i32
    linalg.yield %0 : i32
  } -> tensor<128x48xi32>
  %zero = arith.constant 0 : i32
  %ec = tensor.empty(%m) : tensor<?x48xi32>
  %c = linalg.fill ins(%zero : i32) outs(%ec : tensor<?x48xi32>) -> tensor<?x48xi32>
  %r = linalg.matmul ins(%a32, %b32 : tensor<?x128xi32>, tensor<128x48xi32>) outs(%c : tensor<?x48xi32>) -> tensor<?x48xi32>
  return %r : tensor<?x48xi32>
}
