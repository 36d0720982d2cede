// RUN: %opt %s --o3-vectorize-elementwise=target=x86-64-v4,threads=1 | FileCheck %s

// A big elementwise op (2^22 elements, over THREAD_MIN_WORK = 2^16): the outermost loop is an scf.forall
// (run on the thread pool at codegen), the row is vectorized as without threads.
// CHECK-LABEL: func.func @big_bias_relu
// CHECK: scf.forall (%{{.*}}) in (16384)
// CHECK: vector.transfer_read {{.*}} vector<1x256xf32>
// CHECK: arith.maximumf {{.*}} : vector<1x256xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: linalg.generic
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
func.func @big_bias_relu(%x: tensor<16384x256xf32>, %b: tensor<256xf32>) -> tensor<16384x256xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16384x256xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<16384x256xf32>, tensor<256xf32>) outs(%e : tensor<16384x256xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %t = arith.addf %a, %c : f32
    %u = arith.maximumf %t, %zero : f32
    linalg.yield %u : f32
  } -> tensor<16384x256xf32>
  return %r : tensor<16384x256xf32>
}

// A small one stays serial: scf.for loops only.
// CHECK-LABEL: func.func @small
// CHECK-NOT: scf.forall
// CHECK: scf.for
// CHECK: arith.maximumf {{.*}} : vector<1x16xf32>
// CHECK: return
func.func @small(%x: tensor<8x16xf32>, %b: tensor<16xf32>) -> tensor<8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<8x16xf32>, tensor<16xf32>) outs(%e : tensor<8x16xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %t = arith.addf %a, %c : f32
    %u = arith.maximumf %t, %zero : f32
    linalg.yield %u : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}

// Short leading loops (1 x 4 heads) join the next one: a 2-D forall over
// (4, 1024) with the unit loop and the row inside.
// CHECK-LABEL: func.func @heads
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (4, 1024)
// CHECK: math.exp {{.*}} : vector<1x1x1x256xf32>
#id4 = affine_map<(i, j, k, l) -> (i, j, k, l)>
func.func @heads(%x: tensor<1x4x1024x256xf32>) -> tensor<1x4x1024x256xf32> {
  %e = tensor.empty() : tensor<1x4x1024x256xf32>
  %r = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<1x4x1024x256xf32>) outs(%e : tensor<1x4x1024x256xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.exp %a : f32
    linalg.yield %t : f32
  } -> tensor<1x4x1024x256xf32>
  return %r : tensor<1x4x1024x256xf32>
}

// One long loop: a forall over 64-lane chunks, the last one masked.
// CHECK-LABEL: func.func @flat
// CHECK: scf.forall (%{{.*}}) in (15626)
// CHECK: vector.create_mask
// CHECK: vector.mask {{.*}} vector.transfer_read
// CHECK: math.tanh {{.*}} : vector<64xf32>
#id1 = affine_map<(i) -> (i)>
func.func @flat(%x: tensor<1000001xf32>) -> tensor<1000001xf32> {
  %e = tensor.empty() : tensor<1000001xf32>
  %r = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]}
      ins(%x : tensor<1000001xf32>) outs(%e : tensor<1000001xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.tanh %a : f32
    linalg.yield %t : f32
  } -> tensor<1000001xf32>
  return %r : tensor<1000001xf32>
}

// Row reduction: only the parallel (row) loop is distributed, each row is
// one vector reduction.
// CHECK-LABEL: func.func @row_sum
// CHECK: scf.forall (%{{.*}}) in (65536)
// CHECK: vector.multi_reduction <add>, {{.*}} [1] : vector<1x100xf32> to vector<1xf32>
// CHECK: scf.forall.in_parallel
#in = affine_map<(i, j) -> (i, j)>
#out = affine_map<(i, j) -> (i)>
func.func @row_sum(%x: tensor<65536x100xf32>) -> tensor<65536xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<65536xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<65536xf32>) -> tensor<65536xf32>
  %r = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<65536x100xf32>) outs(%z : tensor<65536xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.addf %a, %o : f32
    linalg.yield %t : f32
  } -> tensor<65536xf32>
  return %r : tensor<65536xf32>
}

// A copy-like transpose (the pack/unpack lowering's): forall over the first
// output loop, the others scf.for, rows copied as vectors.
// CHECK-LABEL: func.func @transpose_rows
// CHECK: scf.forall (%{{.*}}) in (16)
// CHECK: scf.for
// CHECK: vector.transfer_read {{.*}} vector<1x1x1x128xf32>
func.func @transpose_rows(%x: tensor<64x16x32x128xf32>) -> tensor<16x64x32x128xf32> {
  %e = tensor.empty() : tensor<16x64x32x128xf32>
  %t = linalg.transpose ins(%x : tensor<64x16x32x128xf32>) outs(%e : tensor<16x64x32x128xf32>) permutation = [1, 0, 2, 3]
  return %t : tensor<16x64x32x128xf32>
}

// Dynamic rows (batch x sequence): the work is known at run time only, so
// the op is one scf.forall over the rows whose tile size is chosen at run time
// on (rows x work of one row) >= 2^16 (dynamic_threads.py): 1 (a row per
// iteration, on the thread pool), else all rows (one iteration, run inline);
// the rows of a tile are a loop inside it. The op is emitted once.
// CHECK-LABEL: func.func @dynamic_rows
// CHECK: %[[W:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK: %[[BIG:.*]] = arith.cmpi uge, %[[W]], %c65536
// CHECK: scf.execute_region
// CHECK: %[[TS:.*]] = arith.select %[[BIG]], %{{.*}}, %{{.*}} : index
// CHECK-NOT: onnx_mlir_py.forall_tile
// CHECK: scf.forall (%{{.*}}) in (%{{.*}})
// CHECK: affine.min {{.*}}[%{{.*}}, %[[TS]]]
// CHECK: scf.for
// CHECK: arith.maximumf {{.*}} : vector<1x256xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: arith.maximumf
// CHECK-NOT: scf.if
// CHECK: return
func.func @dynamic_rows(%x: tensor<?x256xf32>, %b: tensor<256xf32>) -> tensor<?x256xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?x256xf32>
  %e = tensor.empty(%d) : tensor<?x256xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<?x256xf32>, tensor<256xf32>) outs(%e : tensor<?x256xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %t = arith.addf %a, %c : f32
    %u = arith.maximumf %t, %zero : f32
    linalg.yield %u : f32
  } -> tensor<?x256xf32>
  return %r : tensor<?x256xf32>
}

// Run-time N, H and W: H and W are one row (collapse_rows.py), and the forall spreads
// N and the static channels, each with a run-time tile size (1 when the work,
// N x H*W x the work of one unit, is at least 2^16, else the whole extent, at
// least 1: the trip count divides by it, and N may be 0).
// CHECK-LABEL: func.func @dynamic_planes
// CHECK: tensor.collapse_shape %arg0 {{\[}}[0], [1], [2, 3]]
// CHECK: %[[N:.*]] = tensor.dim %{{.*}}, %c0
// CHECK: %[[HW:.*]] = tensor.dim %{{.*}}, %c2
// CHECK: arith.muli %{{.*}}, %[[N]] : index
// CHECK: arith.muli %{{.*}}, %[[HW]] : index
// CHECK: scf.execute_region
// CHECK: %[[N1:.*]] = arith.maxui %[[N]], %{{.*}} : index
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[N1]] : index
// CHECK: arith.select %{{.*}}, %{{.*}}, %c8 : index
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (%{{.*}}, %{{.*}})
// CHECK: arith.negf {{.*}} : vector<1x1x64xf32>
// CHECK: scf.forall.in_parallel
// CHECK-NOT: arith.negf
// CHECK: tensor.reshape
func.func @dynamic_planes(%x: tensor<?x8x?x?xf32>) -> tensor<?x8x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %n = tensor.dim %x, %c0 : tensor<?x8x?x?xf32>
  %h = tensor.dim %x, %c2 : tensor<?x8x?x?xf32>
  %w = tensor.dim %x, %c3 : tensor<?x8x?x?xf32>
  %e = tensor.empty(%n, %h, %w) : tensor<?x8x?x?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(n, c, h, w) -> (n, c, h, w)>, affine_map<(n, c, h, w) -> (n, c, h, w)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<?x8x?x?xf32>) outs(%e : tensor<?x8x?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = arith.negf %a : f32
    linalg.yield %t : f32
  } -> tensor<?x8x?x?xf32>
  return %r : tensor<?x8x?x?xf32>
}
