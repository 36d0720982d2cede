// RUN: %opt %s --o3-conv-to-matmul=blocks=0 | FileCheck %s

// 3x3 stride-2 conv, batch 1: im2col as vector code (per channel, its 9 rows
// of col; per output row, one read per tap and chunk of up to 16 columns;
// stride 2 reads twice as many values, fewer where the row ends, and keeps
// every second one), then W[F, C*9] @ col[C*9, OH*OW] (NCHW output without a
// transpose).
// CHECK-LABEL: func.func @conv
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK: %[[COL:.*]] = tensor.empty() : tensor<1x36x16xf32>
// CHECK: scf.for %[[CH:.*]] = %c0 to %c4 {{.*}} iter_args(%{{.*}} = %[[COL]])
// CHECK: tensor.extract_slice {{.*}} [1, 9, 16] [1, 1, 1] : tensor<1x36x16xf32> to tensor<1x9x16xf32>
// CHECK: scf.for %[[R:.*]] = %c0 to %c4
// CHECK: %[[DC:.*]] = arith.muli %[[R]], %c4
// CHECK: %[[ROW:.*]] = arith.muli %[[R]], %c2
// CHECK: %[[V:.*]] = vector.transfer_read %arg0[%c0, %[[CH]], %[[ROW]], %c0]{{.*}} vector<8xf32>
// CHECK: vector.shuffle %[[V]], %[[V]] [0, 2, 4, 6]
// CHECK: vector.transfer_write {{.*}}[%c0, %c0, %[[DC]]]
// CHECK-COUNT-8: vector.transfer_write
// CHECK: tensor.collapse_shape {{.*}} {{\[\[}}0, 1], [2]] : tensor<1x36x16xf32> into tensor<36x16xf32>
// CHECK: linalg.matmul ins({{.*}} : tensor<8x36xf32>, tensor<36x16xf32>) outs({{.*}} : tensor<8x16xf32>)
// CHECK: tensor.expand_shape {{.*}} into tensor<1x8x4x4xf32>
func.func @conv(%x: tensor<1x4x9x9xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%x, %w : tensor<1x4x9x9xf32>, tensor<8x4x3x3xf32>) outs(%z : tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  return %c : tensor<1x8x4x4xf32>
}

// Dilation 2, batch 2: batch_matmul with the weights broadcast over the batch.
// The last tap reads row r + 4 from column 4, contiguous (stride 1).
// CHECK-LABEL: func.func @dilated_batch
// CHECK: %[[ROW:.*]] = arith.addi %{{.*}}, %c4
// CHECK: vector.transfer_read %arg0[%{{.*}}, %{{.*}}, %[[ROW]], %c4]{{.*}} vector<5xf32>
// CHECK-NOT: vector.shuffle
// CHECK: linalg.broadcast
func.func @dilated_batch(%x: tensor<2x4x9x9xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<2x8x5x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x5x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x5x5xf32>) -> tensor<2x8x5x5xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<2x4x9x9xf32>, tensor<8x4x3x3xf32>) outs(%z : tensor<2x8x5x5xf32>) -> tensor<2x8x5x5xf32>
  return %c : tensor<2x8x5x5xf32>
}

// 1x1 stride 1: no im2col copy, col is a view of the input.
// CHECK-LABEL: func.func @pointwise
// CHECK-NOT: tensor.extract_slice
// CHECK: tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2, 3]] : tensor<1x4x9x9xf32> into tensor<4x81xf32>
// CHECK: linalg.matmul ins({{.*}} : tensor<8x4xf32>, tensor<4x81xf32>)
func.func @pointwise(%x: tensor<1x4x9x9xf32>, %w: tensor<8x4x1x1xf32>) -> tensor<1x8x9x9xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x9x9xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x9x9xf32>) -> tensor<1x8x9x9xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x4x9x9xf32>, tensor<8x4x1x1xf32>) outs(%z : tensor<1x8x9x9xf32>) -> tensor<1x8x9x9xf32>
  return %c : tensor<1x8x9x9xf32>
}

// Grouped conv (2 groups): a batch_matmul over N*G.
// CHECK-LABEL: func.func @grouped
// CHECK-NOT: linalg.conv_2d_ngchw_gfchw
// CHECK: linalg.batch_matmul ins({{.*}} : tensor<2x3x18xf32>, tensor<2x18x49xf32>)
func.func @grouped(%x: tensor<1x2x2x9x9xf32>, %w: tensor<2x3x2x3x3xf32>) -> tensor<1x2x3x7x7xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x2x3x7x7xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x2x3x7x7xf32>) -> tensor<1x2x3x7x7xf32>
  %c = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
       ins(%x, %w : tensor<1x2x2x9x9xf32>, tensor<2x3x2x3x3xf32>) outs(%z : tensor<1x2x3x7x7xf32>) -> tensor<1x2x3x7x7xf32>
  return %c : tensor<1x2x3x7x7xf32>
}

// RUN: %opt %s --o3-conv-to-matmul=target=x86-64-v4,pixel-rows=0 | FileCheck %s --check-prefix=BLOCKED
// With the kernel's blocks (k 8, columns 32) col is built padded: 36 -> 40
// rows, 16 -> 32 columns, zeros written once into the padding; the weights
// are padded to match, the init (zeros here) is padded (canonicalized into
// a fill) and the result sliced back.
// BLOCKED-LABEL: func.func @conv
// BLOCKED: %[[COL:.*]] = tensor.empty() : tensor<1x40x32xf32>
// BLOCKED: tensor.extract_slice %[[COL]][0, 36, 0] [1, 4, 32] [1, 1, 1]
// BLOCKED: linalg.fill
// BLOCKED: tensor.extract_slice {{.*}}[0, 0, 16] [1, 36, 16] [1, 1, 1]
// BLOCKED: linalg.fill
// BLOCKED: tensor.pad %{{.*}} low[0, 0, 0] high[0, 0, 4]
// BLOCKED: linalg.fill {{.*}} -> tensor<8x32xf32>
// BLOCKED: linalg.matmul ins({{.*}} : tensor<8x40xf32>, tensor<40x32xf32>) outs({{.*}} : tensor<8x32xf32>)
// BLOCKED: tensor.extract_slice {{.*}}[0, 0, 0] [1, 8, 16] [1, 1, 1]

// Dynamic batch: a loop over the images around the batch-1 kernel (its
// im2col and matmul on static per-image shapes). The fused bias is broadcast
// by vector code straight into the image's slice of the result (the slice
// of the fill's destination, not the fill), and the matmul accumulates there:
// in place after bufferization.
// CHECK-LABEL: func.func @dynamic_batch
// CHECK-NOT: linalg.fill
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<?x8x4x4xf32>
// CHECK: scf.for %[[I:.*]] = %c0 to %{{.*}} step %c1 iter_args(%[[ACC:.*]] = %[[E]])
// CHECK: tensor.extract_slice %arg0[%[[I]], 0, 0, 0] [1, 4, 9, 9] [1, 1, 1, 1] : tensor<?x4x9x9xf32> to tensor<1x4x9x9xf32>
// CHECK: %[[OUT:.*]] = tensor.extract_slice %[[ACC]][%[[I]], 0, 0, 0] [1, 8, 4, 4]
// CHECK: vector.transfer_read {{.*}} : tensor<1x4x9x9xf32>, vector<7xf32>
// CHECK: %[[O3:.*]] = tensor.collapse_shape %[[OUT]] {{\[\[}}0], [1], [2, 3]] : tensor<1x8x4x4xf32> into tensor<1x8x16xf32>
// CHECK: scf.for {{.*}} iter_args(%[[BT:.*]] = %[[O3]])
// CHECK: %[[BS:.*]] = tensor.extract %arg2
// CHECK: %[[BV:.*]] = vector.broadcast %[[BS]] : f32 to vector<16xf32>
// CHECK: vector.transfer_write %[[BV]], %[[BT]]
// CHECK: linalg.matmul ins({{.*}} : tensor<8x36xf32>, tensor<36x16xf32>) outs({{.*}} : tensor<8x16xf32>)
// CHECK: tensor.insert_slice {{.*}} into %[[ACC]][%[[I]], 0, 0, 0] [1, 8, 4, 4] [1, 1, 1, 1] : tensor<1x8x4x4xf32> into tensor<?x8x4x4xf32>
// CHECK-NOT: linalg.generic
// CHECK-NOT: linalg.conv_2d_nchw_fchw
func.func @dynamic_batch(%x: tensor<?x4x9x9xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<8xf32>) -> tensor<?x8x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x9x9xf32>
  %e = tensor.empty(%n) : tensor<?x8x4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x8x4x4xf32>) -> tensor<?x8x4x4xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
       ins(%x, %w : tensor<?x4x9x9xf32>, tensor<8x4x3x3xf32>) outs(%z : tensor<?x8x4x4xf32>) -> tensor<?x8x4x4xf32>
  %e2 = tensor.empty(%n) : tensor<?x8x4x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c, %b : tensor<?x8x4x4xf32>, tensor<8xf32>) outs(%e2 : tensor<?x8x4x4xf32>) {
  ^bb0(%in: f32, %in2: f32, %out: f32):
    %s = arith.addf %in, %in2 : f32
    linalg.yield %s : f32
  } -> tensor<?x8x4x4xf32>
  return %r : tensor<?x8x4x4xf32>
}
