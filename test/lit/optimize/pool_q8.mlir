// RUN: %opt %s --o3-pools=target=x86-64-v4 | FileCheck %s

// uint8 MaxPool 3x3/2 pads 1 (linalg has no unsigned NCHW pool: a generic of
// arith.maxui): output rows of at most 64 bytes take the byte kernel. Per
// channel and output row the maxui of its 3 input rows (the row above the
// first clamped to it: max of bytes, no conversion), read as 128 bytes,
// split into even / odd bytes, the odd ones shifted one lane right with the
// pad (0) shifted in, two more maxui, one 64-byte store (masked to 4).
// CHECK-LABEL: func.func @maxpool_u8
// CHECK-NOT: linalg.generic
// CHECK-NOT: tensor.pad
// CHECK: arith.maxsi {{.*}} : index
// CHECK: vector.transfer_read {{.*}} : tensor<2x8x8xi8>, vector<128xi8>
// CHECK-COUNT-2: arith.maxui {{.*}} : vector<128xi8>
// CHECK: vector.shuffle {{.*}} [0, 2, 4,
// CHECK: vector.shuffle {{.*}} [1, 3, 5,
// CHECK: vector.shuffle {{.*}} [64, 0, 1, 2,
// CHECK-COUNT-2: arith.maxui {{.*}} : vector<64xi8>
// CHECK: vector.transfer_write {{.*}} : vector<64xi8>, tensor<2x4x4xi8>
// CHECK-NOT: uitofp
#in = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * 2 + d4, d3 * 2 + d5)>
#win = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
#out = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
func.func @maxpool_u8(%x: tensor<1x2x8x8xi8>) -> tensor<1x2x4x4xi8> {
  %c0 = arith.constant 0 : i8
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %c0 : i8
  } : tensor<1x2x8x8xi8> to tensor<1x2x10x10xi8>
  %e = tensor.empty() : tensor<1x2x4x4xi8>
  %f = linalg.fill ins(%c0 : i8) outs(%e : tensor<1x2x4x4xi8>) -> tensor<1x2x4x4xi8>
  %w = tensor.empty() : tensor<3x3xi8>
  %y = linalg.generic {indexing_maps = [#in, #win, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%p, %w : tensor<1x2x10x10xi8>, tensor<3x3xi8>) outs(%f : tensor<1x2x4x4xi8>) {
  ^bb0(%in: i8, %in_0: i8, %o: i8):
    %m = arith.maxui %o, %in : i8
    linalg.yield %m : i8
  } -> tensor<1x2x4x4xi8>
  return %y : tensor<1x2x4x4xi8>
}

// Output rows wider than 64 bytes (65 here): the row kernel with 8-bit ends.
// The plane copy widens each 8-bit vector to f32 (uitofp) into the scratch
// whose border is the pad's 0, the maxima are f32, the result goes back to
// 8 bits (fptoui).
// CHECK-LABEL: func.func @maxpool_u8_wide
// CHECK-NOT: linalg.generic
// CHECK: arith.uitofp {{.*}} : vector<16xi8> to vector<16xf32>
// CHECK: arith.cmpf ogt, {{.*}} : vector<16xf32>
// CHECK: arith.fptoui {{.*}} : vector<16xf32> to vector<16xi8>
func.func @maxpool_u8_wide(%x: tensor<1x2x8x130xi8>) -> tensor<1x2x4x65xi8> {
  %c0 = arith.constant 0 : i8
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %c0 : i8
  } : tensor<1x2x8x130xi8> to tensor<1x2x10x132xi8>
  %e = tensor.empty() : tensor<1x2x4x65xi8>
  %f = linalg.fill ins(%c0 : i8) outs(%e : tensor<1x2x4x65xi8>) -> tensor<1x2x4x65xi8>
  %w = tensor.empty() : tensor<3x3xi8>
  %y = linalg.generic {indexing_maps = [#in, #win, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%p, %w : tensor<1x2x10x132xi8>, tensor<3x3xi8>) outs(%f : tensor<1x2x4x65xi8>) {
  ^bb0(%in: i8, %in_0: i8, %o: i8):
    %m = arith.maxui %o, %in : i8
    linalg.yield %m : i8
  } -> tensor<1x2x4x65xi8>
  return %y : tensor<1x2x4x65xi8>
}

// int8 MaxPool (signed: the named op on i8, arith.maxsi): the byte kernel
// with maxsi, the pad -128 read past the row and shifted in.
// CHECK-LABEL: func.func @maxpool_s8
// CHECK-NOT: linalg.pooling_nchw_max
// CHECK-DAG: arith.constant dense<-128> : vector<64xi8>
// CHECK: arith.maxsi {{.*}} : vector<128xi8>
// CHECK: arith.maxsi {{.*}} : vector<64xi8>
func.func @maxpool_s8(%x: tensor<1x2x8x8xi8>) -> tensor<1x2x4x4xi8> {
  %lo = arith.constant -128 : i8
  %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %lo : i8
  } : tensor<1x2x8x8xi8> to tensor<1x2x10x10xi8>
  %e = tensor.empty() : tensor<1x2x4x4xi8>
  %f = linalg.fill ins(%lo : i8) outs(%e : tensor<1x2x4x4xi8>) -> tensor<1x2x4x4xi8>
  %w = tensor.empty() : tensor<3x3xi8>
  %y = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %w : tensor<1x2x10x10xi8>, tensor<3x3xi8>) outs(%f : tensor<1x2x4x4xi8>) -> tensor<1x2x4x4xi8>
  return %y : tensor<1x2x4x4xi8>
}

// A generic that is no unsigned max pool (a sum of bytes): left alone.
// CHECK-LABEL: func.func @not_a_max
// CHECK: linalg.generic
// CHECK: arith.addi
func.func @not_a_max(%x: tensor<1x2x10x10xi8>) -> tensor<1x2x4x4xi8> {
  %c0 = arith.constant 0 : i8
  %e = tensor.empty() : tensor<1x2x4x4xi8>
  %f = linalg.fill ins(%c0 : i8) outs(%e : tensor<1x2x4x4xi8>) -> tensor<1x2x4x4xi8>
  %w = tensor.empty() : tensor<3x3xi8>
  %y = linalg.generic {indexing_maps = [#in, #win, #out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : tensor<1x2x10x10xi8>, tensor<3x3xi8>) outs(%f : tensor<1x2x4x4xi8>) {
  ^bb0(%in: i8, %in_0: i8, %o: i8):
    %m = arith.addi %o, %in : i8
    linalg.yield %m : i8
  } -> tensor<1x2x4x4xi8>
  return %y : tensor<1x2x4x4xi8>
}
