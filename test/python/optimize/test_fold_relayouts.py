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
from onnx_mlir_py.passes.optimize.packs import RESOURCE_MIN_BYTES, fold_constant_relayouts


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


@pytest.mark.parametrize("shape,uniform", [((64, 48), False), ((64, 48), True), ((4, 3), False)])
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
