"""The row kernel's maximum (row_kernel.max_tree: vmaxps-form selects and
one unordered compare per pair for the NaN lanes) keeps arith.maximumf's
NaN rule: a window holding a NaN gives NaN, infinities are ordinary values.
MaxPool at -O3 (the row kernel, with and without a fused pad, stride 1 and
the stride-2 split rows) against onnx.reference (NaN-free values) and
onnxruntime (windows without a NaN)."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession

CASES = [
    ((1, 3, 40, 40), dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2])),
    ((1, 2, 17, 23), dict(kernel_shape=[3, 3], pads=[1, 1, 1, 1])),
    ((1, 2, 19, 37), dict(kernel_shape=[2, 2], strides=[2, 2])),
    ((2, 2, 9, 30), dict(kernel_shape=[5, 5], pads=[2, 2, 2, 2], strides=[2, 2])),
]


@pytest.mark.parametrize("shape,attrs", CASES)
def test_maxpool_nan_and_inf(tmp_path, shape, attrs):
    g = h.make_graph([h.make_node("MaxPool", ["x"], ["y"], **attrs)], "mp",
                     [h.make_tensor_value_info("x", T.FLOAT, shape)],
                     [h.make_tensor_value_info("y", T.FLOAT, None)])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    rng = np.random.default_rng(7)
    x = rng.standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    picks = rng.choice(flat.size, size=3 * max(1, flat.size // 60), replace=False)
    third = len(picks) // 3
    flat[picks[:third]] = np.nan
    flat[picks[third:2 * third]] = np.inf
    flat[picks[2 * third:]] = -np.inf
    # arith.maximumf's rule: NaN where the window holds one (onnx.reference
    # skips NaNs, onnxruntime's vmaxps keeps some): the reference's maximum
    # of the other values, and NaN where the window's maximum of isnan(x) is 1
    ref = ReferenceEvaluator(model)
    want = ref.run(None, {"x": np.where(np.isnan(x), -np.inf, x).astype(np.float32)})[0]
    want[ref.run(None, {"x": np.isnan(x).astype(np.float32)})[0] > 0] = np.nan
    assert np.isnan(want).any() and np.isinf(want).any()
    # where no window holds a NaN, onnxruntime agrees
    got_ort = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got_ort[~np.isnan(want)], want[~np.isnan(want)])
    so = onnx_mlir_py.compile(model, output=tmp_path / "m.so", opt_level=3)
    for n in (1, 2):
        got = ExecutionSession(so, num_threads=n).run([x])[0]
        np.testing.assert_array_equal(got, want, err_msg=f"threads={n}")
