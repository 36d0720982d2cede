"""optimize_onnx/pow_mul.py: Pow(x, 2 | 3 | 4) of a float x becomes Muls
(GPT-2's GELU: no libm powf call), other exponents stay a Pow. Compiled at
-O3, compared with onnxruntime at two run-time shapes and on special values.
The product x * x * x can differ from powf by an ulp or so (two roundings):
hence rtol 4 ulp of f32 (no absolute slack: zeros and subnormals exact in
sign and value up to that)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnx_mlir_py
from onnx_mlir_py.importer import import_model
from onnx_mlir_py.passes.optimize_onnx import optimize_onnx
from onnx_mlir_py.passes.pipeline import to_onnx_ir
from onnx_mlir_py.testing.check import reference

ULP4 = 4 * np.finfo(np.float32).eps


def _model(exponent: np.ndarray, shape=("n", 7)):
    g = h.make_graph([h.make_node("Pow", ["x", "e"], ["p"]), h.make_node("Neg", ["p"], ["y"])],
                     "pow", [h.make_tensor_value_info("x", T.FLOAT, list(shape))],
                     [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [nh.from_array(exponent, "e")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def _rewrites(model) -> int:
    module = import_model(model)
    to_onnx_ir(module)
    return optimize_onnx(module)["pow-to-mul"]


@pytest.mark.parametrize("exponent, fires", [
    (np.array(2.0, np.float32), True),
    (np.array(3.0, np.float32), True),
    (np.array([4.0], np.float32), True),
    (np.array(3, np.int64), True),
    (np.array(2.5, np.float32), False),
    (np.array(5.0, np.float32), False),
    (np.array(-2.0, np.float32), False),
    (np.array([[3.0]], np.float32), True),       # [1, 1]: broadcasts to x's shape
    (np.array([[[3.0]]], np.float32), False),    # [1, 1, 1]: makes the result rank 3
])
def test_pow_rewrite_matches_onnxruntime(exponent, fires, tmp_path):
    model = _model(exponent)
    assert _rewrites(model) == (1 if fires else 0)
    so = onnx_mlir_py.compile(model, output=tmp_path / "m.so", opt_level=3)
    sess = onnx_mlir_py.ExecutionSession(so)
    rng = np.random.default_rng(abs(int(exponent.sum() * 10)))
    for n in (1, 5):
        x = rng.uniform(-3, 3, (n, 7)).astype(np.float32)
        want = reference(model, {"x": x}, "onnxruntime")[0]
        np.testing.assert_allclose(sess.run([x])[0], want, rtol=ULP4, atol=0)


@pytest.mark.parametrize("e", [2.0, 3.0, 4.0])
def test_pow_special_values(e, tmp_path):
    """inf, -inf, NaN, signed zeros, subnormals, overflow as onnxruntime's powf."""
    special = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-40, -1e-40, 1e-20, -1e-20,
                        1e13, -1e13, 1e30, -1e30, 1.0, -1.0, 0.5, -7.25, 3e-13, -2e-13,
                        1e-10, -1e-10], np.float32)
    model = _model(np.array(e, np.float32), shape=(len(special),))
    so = onnx_mlir_py.compile(model, output=tmp_path / "m.so", opt_level=3)
    got = onnx_mlir_py.ExecutionSession(so).run([special])[0]
    want = reference(model, {"x": special}, "onnxruntime")[0]
    np.testing.assert_allclose(got, want, rtol=ULP4, atol=0)
    num = ~np.isnan(want)       # a NaN's sign bit is not specified
    np.testing.assert_array_equal(np.signbit(got[num]), np.signbit(want[num]))


def test_no_powf_call_left(tmp_path):
    path = onnx_mlir_py.compile(_model(np.array(3.0, np.float32)), output=tmp_path / "m.ll",
                                opt_level=3, emit="EmitLLVMIR")
    text = open(path).read()
    assert "llvm.pow" not in text and "powf" not in text    # before: @llvm.pow.v7f32
