"""-O3 direct convs with an inf or NaN weight: the zero pad's taps count.

The direct kernels (conv_direct's rows tile and its filters-in-lanes form)
read the unpadded image and skip the taps that fall in the zero pad. That is
exact for finite weights, but 0 * inf and 0 * NaN are NaN: at the border the
spec (the zero-padded input times the kernel) and onnx.reference give NaN
where a skipped tap gives a finite sum. Such convs keep their pad (fuzz case
'Conv with inf weights', session 27: 5 NaN outputs instead of 25).
onnxruntime is no oracle here: its im2col path gives the NaN, its NCHWc
direct kernels (these shapes) skip the pad as we did.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from onnx_mlir_py.testing.check import reference, run_compiled

CASES = {          # c, filters, stride: the rows tile (few channels) and filters in lanes
    "rows": (3, 32, 1),
    "rows_s2": (3, 32, 2),
    "pixels": (64, 64, 1),
    "pixels_s2": (64, 64, 2),
}


def _model(c, f, s, bad):
    rng = np.random.default_rng(3)
    w = rng.standard_normal((f, c, 3, 3)).astype(np.float32)
    if bad is not None:
        w[0, 0, 0, 0] = bad         # a corner tap: it lies in the pad at the border
        w[1, 0, 2, 2] = -bad
    node = h.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1], strides=[s, s])
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", TP.FLOAT, [1, c, 10, 20])],
                     [h.make_tensor_value_info("y", TP.FLOAT, None)], [nh.from_array(w, "w")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def _same(y, r):
    assert np.array_equal(np.isnan(y), np.isnan(r)), \
        f"NaN at {int(np.isnan(y).sum())} outputs, the reference at {int(np.isnan(r).sum())}"
    fin = np.isfinite(r)
    assert np.array_equal(np.isinf(y), np.isinf(r))
    np.testing.assert_allclose(y[fin], r[fin], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("bad", [np.inf, np.nan])
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_nonfinite_weight_in_the_pad_gives_nan(case, bad):
    c, f, s = CASES[case]
    m = _model(c, f, s, bad)
    x = {"x": np.random.default_rng(5).uniform(0.5, 1.0, (1, c, 10, 20)).astype(np.float32)}
    r = reference(m, x, "reference")[0]
    assert np.isnan(r[0, :2]).any()     # the case reaches the border taps
    for opt in (0, 3):
        _same(run_compiled(m, x, opt)[0], r)


def test_finite_weights_still_skip_the_pad():
    from onnx_mlir_py.passes.optimize.conv_direct import finite_constant
    import mlir.ir as ir
    from mlir.dialects import arith
    with ir.Context(), ir.Location.unknown():
        t = ir.RankedTensorType.get([2, 2], ir.F32Type.get())
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            ok = arith.ConstantOp(t, ir.DenseElementsAttr.get(np.ones((2, 2), np.float32), type=t))
            bad = arith.ConstantOp(t, ir.DenseElementsAttr.get(
                np.array([[1, np.inf], [0, 1]], np.float32), type=t))
        assert finite_constant(ok.result) and not finite_constant(bad.result)
