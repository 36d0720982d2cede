"""Hand-written tensor-level modules (the backend's input contract) for the tests."""
import numpy as np

MATMUL = """
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (j)>
func.func @main_graph(%x: tensor<32x64xf32> {onnx.name = "x"}, %w: tensor<64x48xf32> {onnx.name = "w"},
                      %b: tensor<48xf32> {onnx.name = "bias"})
    -> (tensor<32x48xf32> {onnx.name = "y"}) {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant dense<[0.5, 1.0, 1.5, 2.0, 0.5, 1.0, 1.5, 2.0, 0.5, 1.0, 1.5, 2.0,
      0.5, 1.0, 1.5, 2.0, 0.5, 1.0, 1.5, 2.0, 0.5, 1.0, 1.5, 2.0, 0.5, 1.0, 1.5, 2.0,
      0.5, 1.0, 1.5, 2.0, 0.5, 1.0, 1.5, 2.0, 0.5, 1.0, 1.5, 2.0, 0.5, 1.0, 1.5, 2.0,
      0.5, 1.0, 1.5, 2.0]> : tensor<48xf32>
  %e = tensor.empty() : tensor<32x48xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<32x48xf32>) -> tensor<32x48xf32>
  %m = linalg.matmul ins(%x, %w : tensor<32x64xf32>, tensor<64x48xf32>)
                     outs(%z : tensor<32x48xf32>) -> tensor<32x48xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #row, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%m, %b, %scale : tensor<32x48xf32>, tensor<48xf32>, tensor<48xf32>)
      outs(%e : tensor<32x48xf32>) {
  ^bb0(%a: f32, %c: f32, %s: f32, %o: f32):
    %t = arith.addf %a, %c : f32
    %u = arith.mulf %t, %s : f32
    %v = arith.maximumf %u, %zero : f32
    linalg.yield %v : f32
  } -> tensor<32x48xf32>
  return %r : tensor<32x48xf32>
}
"""
SCALE = np.tile(np.array([0.5, 1.0, 1.5, 2.0], np.float32), 12)

DYNAMIC = """
#id = affine_map<(i, j) -> (i, j)>
func.func @main_graph(%a: tensor<?x?xf32> {onnx.name = "a"}, %b: tensor<?x?xf32> {onnx.name = "b"})
    -> (tensor<?x?xf32> {onnx.name = "sum"}, tensor<?x?xf32> {onnx.name = "act"}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %a, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %a, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%d0, %d1) : tensor<?x?xf32>
  %s = linalg.add ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %e2 = tensor.empty(%d0, %d1) : tensor<?x?xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<?x?xf32>) outs(%e2 : tensor<?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %th = math.tanh %x : f32
    %ex = math.exp %th : f32
    linalg.yield %ex : f32
  } -> tensor<?x?xf32>
  return %s, %t : tensor<?x?xf32>, tensor<?x?xf32>
}
"""

INT64 = """
#id = affine_map<(i) -> (i)>
func.func @main_graph(%a: tensor<?xi64> {onnx.name = "ids"}) -> (tensor<?xi64> {onnx.name = "out"}) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?xi64>
  %e = tensor.empty(%n) : tensor<?xi64>
  %k = arith.constant 3000000000 : i64
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<?xi64>) outs(%e : tensor<?xi64>) {
  ^bb0(%x: i64, %o: i64):
    %m = arith.muli %x, %x : i64
    %s = arith.addi %m, %k : i64
    linalg.yield %s : i64
  } -> tensor<?xi64>
  return %r : tensor<?xi64>
}
"""

BOOL = """
#id = affine_map<(i, j) -> (i, j)>
func.func @main_graph(%a: tensor<3x5xf32> {onnx.name = "a"}, %m: tensor<3x5xi1> {onnx.name = "mask"})
    -> (tensor<3x5xi1> {onnx.name = "gt_and_mask"}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x5xi1>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %m : tensor<3x5xf32>, tensor<3x5xi1>) outs(%e : tensor<3x5xi1>) {
  ^bb0(%x: f32, %k: i1, %o: i1):
    %g = arith.cmpf ogt, %x, %zero : f32
    %r = arith.andi %g, %k : i1
    linalg.yield %r : i1
  } -> tensor<3x5xi1>
  return %r : tensor<3x5xi1>
}
"""

ALIASES = """
func.func @main_graph(%a: tensor<2x3xf32> {onnx.name = "a"}, %b: tensor<2x3xf32> {onnx.name = "b"})
    -> (tensor<2x3xf32> {onnx.name = "s1"}, tensor<2x3xf32> {onnx.name = "s2"},
        tensor<2x3xf32> {onnx.name = "a_again"}, tensor<2x3xf32> {onnx.name = "k"}) {
  %e = tensor.empty() : tensor<2x3xf32>
  %s = linalg.add ins(%a, %b : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %k = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  return %s, %s, %a, %k : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
"""

UINT8 = """
#id = affine_map<(i) -> (i)>
func.func @main_graph(%a: tensor<4xi8> {onnx.name = "pix", onnx.dtype = "uint8"})
    -> (tensor<4xi8> {onnx.name = "inv", onnx.dtype = "uint8"}) {
  %e = tensor.empty() : tensor<4xi8>
  %c = arith.constant -1 : i8
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : tensor<4xi8>) outs(%e : tensor<4xi8>) {
  ^bb0(%x: i8, %o: i8):
    %y = arith.subi %c, %x : i8
    linalg.yield %y : i8
  } -> tensor<4xi8>
  return %r : tensor<4xi8>
}
"""

F64_F16_SCALAR = """
func.func @main_graph(%a: tensor<f64> {onnx.name = "s"}, %h: tensor<5xf16> {onnx.name = "h"})
    -> (tensor<f64> {onnx.name = "s2"}, tensor<5xf16> {onnx.name = "h2"}) {
  %e = tensor.empty() : tensor<f64>
  %r = linalg.mul ins(%a, %a : tensor<f64>, tensor<f64>) outs(%e : tensor<f64>) -> tensor<f64>
  %e2 = tensor.empty() : tensor<5xf16>
  %r2 = linalg.add ins(%h, %h : tensor<5xf16>, tensor<5xf16>) outs(%e2 : tensor<5xf16>) -> tensor<5xf16>
  return %r, %r2 : tensor<f64>, tensor<5xf16>
}
"""

INPLACE = """
func.func @main_graph(%a: tensor<4xf32> {onnx.name = "a"}) -> (tensor<4xf32> {onnx.name = "patched"}) {
  %c1 = arith.constant 1 : index
  %v = arith.constant 42.0 : f32
  %r = tensor.insert %v into %a[%c1] : tensor<4xf32>
  return %r : tensor<4xf32>
}
"""
