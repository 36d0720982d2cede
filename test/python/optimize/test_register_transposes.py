"""passes/optimize/register_transposes.py: the narrow and broadcast
transposes rewritten into shuffle networks, compiled and run against numpy
(every shape the network takes: 2-8 rows, 4-lane groups of columns, f32 and
i32), and the ones it leaves to upstream's lowering."""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
import pytest

from onnx_mlir_py.codegen import emit_library
from onnx_mlir_py.context import make_context
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.optimize import cleanup_vectors
from onnx_mlir_py.passes.optimize.register_transposes import rewrite_register_transposes
from onnx_mlir_py.runtime import ExecutionSession

_NP = {"f32": np.float32, "i32": np.int32}
_PAD = {"f32": "arith.constant 0.0 : f32", "i32": "arith.constant 0 : i32"}


def _transpose(r: int, c: int, e: str) -> str:
    return f"""
func.func @main_graph(%x: tensor<{r}x{c}x{e}> {{onnx.name = "x"}}) -> (tensor<{c}x{r}x{e}> {{onnx.name = "y"}}) {{
  %c0 = arith.constant 0 : index
  %p = {_PAD[e]}
  %v = vector.transfer_read %x[%c0, %c0], %p {{in_bounds = [true, true]}} : tensor<{r}x{c}x{e}>, vector<{r}x{c}x{e}>
  %t = vector.transpose %v, [1, 0] : vector<{r}x{c}x{e}> to vector<{c}x{r}x{e}>
  %o = tensor.empty() : tensor<{c}x{r}x{e}>
  %w = vector.transfer_write %t, %o[%c0, %c0] {{in_bounds = [true, true]}} : vector<{c}x{r}x{e}>, tensor<{c}x{r}x{e}>
  return %w : tensor<{c}x{r}x{e}>
}}"""


def _broadcast(r: int, c: int) -> str:
    return f"""
func.func @main_graph(%b: tensor<{r}xf32> {{onnx.name = "b"}}) -> (tensor<{r}x{c}xf32> {{onnx.name = "y"}}) {{
  %c0 = arith.constant 0 : index
  %p = arith.constant 0.0 : f32
  %v = vector.transfer_read %b[%c0], %p {{in_bounds = [true]}} : tensor<{r}xf32>, vector<{r}xf32>
  %s = vector.broadcast %v : vector<{r}xf32> to vector<{c}x{r}xf32>
  %t = vector.transpose %s, [1, 0] : vector<{c}x{r}xf32> to vector<{r}x{c}xf32>
  %o = tensor.empty() : tensor<{r}x{c}xf32>
  %w = vector.transfer_write %t, %o[%c0, %c0] {{in_bounds = [true, true]}} : vector<{r}x{c}xf32>, tensor<{r}x{c}xf32>
  return %w : tensor<{r}x{c}xf32>
}}"""


def _run(tmp_path, text: str, name: str, x: np.ndarray, expect_rewrites: int,
         mcpu: str | None = None) -> np.ndarray:
    with make_context():
        module = ir.Module.parse(text)
        assert rewrite_register_transposes(module) == expect_rewrites
        assert module.operation.verify()
        cleanup_vectors(module)         # what -O3 runs next (lower_transpose on what is left)
        left = walk_ops(module, ("vector.transpose",))
        assert not left if expect_rewrites else True
        path = tmp_path / f"{name}.so"
        emit_library(module, path, mcpu=mcpu)
    (y,) = ExecutionSession(str(path)).run([x])
    return y


@pytest.mark.parametrize("r,c,e", [(2, 16, "f32"), (3, 8, "f32"), (4, 16, "f32"), (4, 8, "i32"), (2, 4, "i32"),
                                   (5, 32, "f32"), (7, 8, "i32"), (8, 32, "f32"), (8, 12, "f32")])
def test_narrow_transpose(tmp_path, r, c, e):
    rng = np.random.default_rng(r * 100 + c)
    x = (rng.standard_normal((r, c)) * 100).astype(_NP[e])
    y = _run(tmp_path, _transpose(r, c, e), f"t{r}x{c}{e}", x, 1)
    np.testing.assert_array_equal(y, x.T)


@pytest.mark.parametrize("r,c", [(8, 16), (4, 8), (6, 24)])
def test_narrow_transpose_avx2(tmp_path, r, c):
    """The AVX2 target's tiles (8-lane vectors: the direct conv's 8 x 16)."""
    x = np.random.default_rng(c).standard_normal((r, c)).astype(np.float32)
    y = _run(tmp_path, _transpose(r, c, "f32"), f"v3_{r}x{c}", x, 1, mcpu="x86-64-v3")
    np.testing.assert_array_equal(y, x.T)


@pytest.mark.parametrize("r,c", [(8, 32), (3, 16), (16, 4)])
def test_broadcast_transpose(tmp_path, r, c):
    b = np.random.default_rng(r).standard_normal(r).astype(np.float32)
    y = _run(tmp_path, _broadcast(r, c), f"b{r}x{c}", b, 1)
    np.testing.assert_array_equal(y, np.repeat(b[:, None], c, axis=1))


def test_a_long_broadcast_is_left_to_upstream(tmp_path):
    """(42 rows: more than a register tile's; its [8, 42] source is no
    narrow transpose either, 42 columns not in groups of 4)"""
    b = np.random.default_rng(5).standard_normal(42).astype(np.float32)
    y = _run(tmp_path, _broadcast(42, 8), "b42x8", b, 0)
    np.testing.assert_array_equal(y, np.repeat(b[:, None], 8, axis=1))


@pytest.mark.parametrize("r,c", [(16, 16), (9, 16), (4, 6), (1, 16), (8, 4)])
def test_left_to_upstream(tmp_path, r, c):
    """16x16 blocks (upstream's own network), more rows than the network
    takes, columns not in groups of 4, one row, no more columns than rows:
    not rewritten, and still right."""
    x = np.arange(r * c, dtype=np.float32).reshape(r, c)
    y = _run(tmp_path, _transpose(r, c, "f32"), f"u{r}x{c}", x, 0)
    np.testing.assert_array_equal(y, x.T)
