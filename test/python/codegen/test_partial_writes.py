"""Partial vector writes that MLIR 22's one-shot bufferization took for full
overwrites (onnx_mlir_py/codegen/partial_writes.py). Fuzzer case s3101-130:
two MaxPools at -O3 shared one -inf padding plane, and the second pool read
the first pool's input as its padding."""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from onnx_mlir_py.codegen.partial_writes import mark_partial_writes
from onnx_mlir_py.testing.check import assert_match, reference, run_compiled

# a -1e30 plane; row 1 written then row 0 read, and (from the same plane)
# row 0 written at [0, 0] then row 1 read: %x must be the fill value
TWO_WRITES = """
func.func @main_graph(%v: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cst = arith.constant 0.0 : f32
  %ninf = arith.constant -1.0e30 : f32
  %vv = vector.transfer_read %v[%c0], %cst {in_bounds = [true]} : tensor<16xf32>, vector<16xf32>
  %e = tensor.empty() : tensor<2x16xf32>
  %plane = linalg.fill ins(%ninf : f32) outs(%e : tensor<2x16xf32>) -> tensor<2x16xf32>
  %p = vector.transfer_write %vv, %plane[%c1, %c0] {in_bounds = [true]} : vector<16xf32>, tensor<2x16xf32>
  %w = vector.transfer_read %p[%c0, %c0], %cst {in_bounds = [true]} : tensor<2x16xf32>, vector<16xf32>
  %q = vector.transfer_write %vv, %plane[%c0, %c0] {in_bounds = [true]} : vector<16xf32>, tensor<2x16xf32>
  %x = vector.transfer_read %q[%c1, %c0], %cst {in_bounds = [true]} : tensor<2x16xf32>, vector<16xf32>
  %o1 = tensor.empty() : tensor<16xf32>
  %r1 = vector.transfer_write %w, %o1[%c0] {in_bounds = [true]} : vector<16xf32>, tensor<16xf32>
  %o2 = tensor.empty() : tensor<16xf32>
  %r2 = vector.transfer_write %x, %o2[%c0] {in_bounds = [true]} : vector<16xf32>, tensor<16xf32>
  return %r1, %r2 : tensor<16xf32>, tensor<16xf32>
}
"""

# writes the analysis judges right: not marked
FULL_OR_OFFSET = """
func.func @f(%v: vector<16xf32>, %m: vector<2x16xf32>, %a: tensor<2x16xf32>, %b: tensor<1x16xf32>,
             %d: tensor<?x16xf32>) -> (tensor<2x16xf32>, tensor<2x16xf32>, tensor<1x16xf32>, tensor<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %0 = vector.transfer_write %v, %a[%c1, %c0] {in_bounds = [true]} : vector<16xf32>, tensor<2x16xf32>
  %1 = vector.transfer_write %m, %a[%c0, %c0] {in_bounds = [true, true]} : vector<2x16xf32>, tensor<2x16xf32>
  %2 = vector.transfer_write %v, %b[%c0, %c0] {in_bounds = [true]} : vector<16xf32>, tensor<1x16xf32>
  %3 = vector.transfer_write %v, %d[%c0, %c0] : vector<16xf32>, tensor<?x16xf32>
  return %0, %1, %2, %3 : tensor<2x16xf32>, tensor<2x16xf32>, tensor<1x16xf32>, tensor<?x16xf32>
}
"""


def test_marks_only_the_misjudged_write():
    with ir.Context():
        m = ir.Module.parse(TWO_WRITES)
        assert mark_partial_writes(m) == 1
        text = str(m)
        # the [0, 0] row write now has a non-constant first index
        assert text.count("arith.index_cast") == 1
        assert "[%c1, %c0]" in text          # the row-1 write is left alone
        m = ir.Module.parse(FULL_OR_OFFSET)
        assert mark_partial_writes(m) == 0
        assert "arith.index_cast" not in str(m)


def test_shared_plane_keeps_its_fill(compile_mlir):
    c = compile_mlir(TWO_WRITES, "two_writes")
    v = np.arange(16, dtype=np.float32)
    w, x = c.session.run([v])
    np.testing.assert_array_equal(w, np.full(16, -1e30, np.float32))   # row 0 of the first
    np.testing.assert_array_equal(x, np.full(16, -1e30, np.float32))   # row 1 of the second


def _two_pools(n):
    g = h.make_graph(
        [h.make_node("MaxPool", ["a"], ["ya"], auto_pad="SAME_LOWER", kernel_shape=[2, 1]),
         h.make_node("MaxPool", ["b"], ["yb"], auto_pad="SAME_UPPER", kernel_shape=[2, 1],
                     strides=[3, 1])], "g",
        [h.make_tensor_value_info("a", T.FLOAT, [n, 1, 1, 6]),
         h.make_tensor_value_info("b", T.FLOAT, [n, 1, 1, 1])],
        [h.make_tensor_value_info("ya", T.FLOAT, None),
         h.make_tensor_value_info("yb", T.FLOAT, None)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 18)])


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("n", [6, 2, "n"])
def test_two_maxpools_do_not_share_padding(opt_level, n):
    """s3101-130 reduced (static N, as found, and a dynamic N): at -O3 the
    second pool returned max(b, a's row)."""
    m = _two_pools(n)
    rng = np.random.default_rng(0)
    for n in ((6, 2) if n == "n" else (n,)):
        feeds = {"a": rng.standard_normal((n, 1, 1, 6)).astype(np.float32) + 10,
                 "b": rng.standard_normal((n, 1, 1, 1)).astype(np.float32)}
        got = run_compiled(m, feeds, opt_level)
        np.testing.assert_array_equal(got[1], feeds["b"])   # a 1-row window: b itself
        assert_match(got, reference(m, feeds, "onnxruntime"))
