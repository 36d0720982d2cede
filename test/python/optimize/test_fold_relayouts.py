"""passes/optimize/packs.py: relayouts of constants folded at compile time.
A large folded value becomes a ``dense_resource`` over the folded array (not
copied into a DenseElementsAttr; codegen reads it back from the array), a
small or uniform one a DenseElementsAttr; the values are the relayout's."""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
import pytest

from onnx_mlir_py import ir_resources as R
from onnx_mlir_py.context import make_context
from onnx_mlir_py.passes.optimize.packs import (RESOURCE_MIN_BYTES, _uniform, fold_constant_relayouts,
                                                transpose)


def _transpose_module(w: np.ndarray):
    """func @f() -> W^T, W a dense_resource constant (as the importer makes them)."""
    ctx = make_context()
    with ctx, ir.Location.unknown():
        f32 = ir.F32Type.get()
        t = ir.RankedTensorType.get(list(w.shape), f32)
        tt = ir.RankedTensorType.get(list(w.shape[::-1]), f32)
        text = (f"func.func @f() -> {tt} {{\n"
                f"  %w = arith.constant dense<0.0> : {t}\n"
                f"  %e = tensor.empty() : {tt}\n"
                f"  %t = linalg.transpose ins(%w : {t}) outs(%e : {tt}) permutation = [1, 0]\n"
                f"  return %t : {tt}\n}}")
        m = ir.Module.parse(text)
        const = m.body.operations[0].regions[0].blocks[0].operations[0]
        const.attributes["value"] = R.resource_attr(np.ascontiguousarray(w), "w", t)
    return ctx, m, w


def _folded(m):
    f = m.body.operations[0]
    ret = f.regions[0].blocks[0].operations[len(f.regions[0].blocks[0].operations) - 1]
    return ret.operands[0].owner


@pytest.mark.parametrize("shape,uniform", [((64, 48), False), ((64, 48), True), ((4, 3), False),
                                           ((300, 130), False)])
def test_folded_transpose(shape, uniform):
    rng = np.random.default_rng(0)
    w = np.full(shape, 0.5, np.float32) if uniform else rng.standard_normal(shape).astype(np.float32)
    ctx, m, w = _transpose_module(w)
    with ctx:
        assert fold_constant_relayouts(m) == 1
        c = _folded(m)
        assert c.name == "arith.constant"
        attr = c.attributes["value"]
        key = R.resource_name(attr)
        large = w.nbytes >= RESOURCE_MIN_BYTES and not uniform
        assert (key is not None) == large, str(attr)[:80]
        if large:
            got = np.frombuffer(R.resource_blobs([c])[key], np.float32).reshape(shape[::-1])
        else:
            got = np.array(ir.DenseElementsAttr(attr)) if not ir.DenseElementsAttr(attr).is_splat \
                else np.full(shape[::-1], ir.DenseElementsAttr(attr).get_splat_value().value)
        np.testing.assert_array_equal(got, w.T)


@pytest.mark.parametrize("shape", [(128, 128), (130, 300), (1000, 257), (127, 4096), (5, 7)])
def test_blocked_transpose_is_numpys(shape):
    """The tiled 2-D transpose (large weights) gives numpy's bytes, contiguous,
    ragged edge tiles included; other permutations are numpy's own."""
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    y = transpose(x, [1, 0])
    assert y.flags.c_contiguous and y.shape == shape[::-1]
    np.testing.assert_array_equal(y, x.T)
    np.testing.assert_array_equal(transpose(x, [0, 1]), x)
    z = np.arange(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
    np.testing.assert_array_equal(transpose(z, [0, 2, 3, 1]), z.transpose(0, 2, 3, 1))


@pytest.mark.parametrize("values", [
    np.zeros(2048, np.float32), np.full(2048, np.nan, np.float32),
    np.r_[np.zeros(2047), 1.0], np.r_[1.0, np.zeros(2047)],
    np.r_[np.zeros(100), -0.0, 2.0, np.zeros(1946)], np.full(4096, 3, np.int8)])
def test_uniform_is_the_full_comparison(values):
    """The early-out uniformity test decides as the full comparison does
    (a difference past the first elements, NaN, -0.0 == 0.0)."""
    assert _uniform(values) == bool((values.flat[0] == values).all())
