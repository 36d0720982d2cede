"""MatMul/Gemm lowering (passes/onnx_to_linalg/gemm.py) with dynamic dims,
compiled once and compared with onnxruntime at three run-time shapes.

MatMul with TWO dynamic leading dims (``[S, N, K] x [K, M]``, what torch's
legacy exporter emits after a 2-layer LSTM) aborts the compiler process in
MLIR's expand-strided-metadata, so it is compiled in a child process.
"""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.testing.isolated import CompilerCrash, compile_isolated

K, M = 24, 4
RNG = np.random.default_rng(0)
W = RNG.standard_normal((K, M)).astype(np.float32)

CASES = {
    # name: (declared x dims, three run-time x shapes)
    "one_dynamic_leading_dim": (["n", 5, K], [(1, 5, K), (3, 5, K), (7, 5, K)]),
    "two_dynamic_leading_dims": (["s", "n", K], [(1, 1, K), (3, 2, K), (5, 7, K)]),
    "three_dynamic_leading_dims": (["a", "s", "n", K], [(1, 1, 1, K), (2, 3, 2, K),
                                                        (3, 1, 4, K)]),
}
ABORT = ("exit status -6: ...ExpandStridedMetadata.cpp:287: getExpandedSizes(memref::ExpandShapeOp"
         ", ...): Assertion `!dynSizeIdx && \"There must be at most one dynamic size per group\"'")
XFAIL = {"two_dynamic_leading_dims": ABORT, "three_dynamic_leading_dims": ABORT}


def _model(dims):
    g = h.make_graph([h.make_node("MatMul", ["x", "w"], ["y"])], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, dims)],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], [nh.from_array(W, "w")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def _param(name, opt):
    marks = [pytest.mark.xfail(strict=True, raises=CompilerCrash, reason=XFAIL[name])] \
        if name in XFAIL else []
    return pytest.param(name, opt, id=f"{name}-O{opt}", marks=marks)


@pytest.mark.parametrize("name,opt", [_param(n, o) for n in CASES for o in (0, 3)])
def test_matmul_dynamic_leading_dims(tmp_path, name, opt):
    dims, shapes = CASES[name]
    m = _model(dims)
    sess = ExecutionSession(compile_isolated(m, tmp_path / "mm.so", opt))
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for shape in shapes:
        x = RNG.standard_normal(shape).astype(np.float32)
        (want,) = ref.run(None, {"x": x})
        (got,) = sess.run([x])
        assert got.shape == want.shape, shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=str(shape))
