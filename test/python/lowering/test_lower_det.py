"""Det vs numpy.linalg.det (what onnx.reference runs): 2-D, batched 3-D and
4-D, f32 and f64 (f16 / bf16 compute in f32), v11 and v22; singular
matrices give exactly 0, matrices with zeros on the diagonal need row
swaps (the sign), 1x1 and 0x0 (det 1) matrices, ill-conditioned ones within
a relative tolerance; a dynamic batch and a dynamic M at two shapes each,
and a non-square run-time shape fails naming the node."""
import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession, RuntimeInputError

ONNX_TYPE = {np.float32: T.FLOAT, np.float64: T.DOUBLE, np.float16: T.FLOAT16,
             ml_dtypes.bfloat16: T.BFLOAT16}


def _model(shape, dtype, opset=22):
    node = h.make_node("Det", ["x"], ["y"], name="det")
    et = ONNX_TYPE[dtype]
    m = h.make_model(h.make_graph([node], "g", [h.make_tensor_value_info("x", et, shape)],
                                  [h.make_tensor_value_info("y", et, shape[:-2])]),
                     opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 10
    return m


def _session(tmp_path, shape, dtype, opset=22, opt_level=0):
    m = _model(shape, dtype, opset)
    return m, ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=opt_level))


def _run(sess, x):
    (got,) = sess.run([x])
    assert got.shape == x.shape[:-2] and got.dtype == x.dtype, (got.shape, got.dtype)
    return got


# Exact cases (every step is exact in binary floating point).
SINGULAR = [  # exact zeros: a zero column, a zero row, equal rows, a dependent row
    [[0, 1, 2], [0, 3, 4], [0, 5, 6]],
    [[1, 2, 3], [0, 0, 0], [4, 5, 6]],
    [[1, 2, 3], [1, 2, 3], [7, 5, 1]],
    [[1, 2, 3], [2, 4, 6], [1, 0, 1]],
]
PIVOTING = [  # zeros on the diagonal: permutations and a column swap
    ([[0, 1, 0], [0, 0, 1], [1, 0, 0]], 1.0),
    ([[0, 1, 0], [1, 0, 0], [0, 0, 1]], -1.0),
    ([[0, 2, 0], [0, 0, 3], [4, 0, 0]], 24.0),
    ([[0, 0, 5], [0, 2, 0], [3, 0, 0]], -30.0),
    ([[0, 1, 2], [3, 4, 5], [6, 7, 9]], -3.0),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("opset", [11, 22])
def test_det_2d(tmp_path, dtype, opset):
    m, sess = _session(tmp_path, [4, 4], dtype, opset)
    rng = np.random.default_rng(1)
    for _ in range(3):
        x = rng.standard_normal((4, 4)).astype(dtype)
        got = _run(sess, x)
        (want,) = ReferenceEvaluator(m).run(None, {"x": x})
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12)
        np.testing.assert_allclose(got, np.linalg.det(x.astype(np.float64)),
                                   rtol=1e-5 if dtype == np.float32 else 1e-12)
    # exact steps: block triangular, det = 2 * 3 * (4*1 - 3*2) = -12
    x = np.array([[2, 7, 1, 5], [0, 3, 8, 2], [0, 0, 4, 3], [0, 0, 2, 1]], dtype)
    assert _run(sess, x) == -12.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_det_batched_3d_exact(tmp_path, dtype):
    """Singular (exactly 0) and pivoting matrices in one [9, 3, 3] batch."""
    _, sess = _session(tmp_path, [len(SINGULAR) + len(PIVOTING), 3, 3], dtype)
    x = np.array(SINGULAR + [p for p, _ in PIVOTING], dtype)
    got = _run(sess, x)
    want = np.array([0.0] * len(SINGULAR) + [d for _, d in PIVOTING], dtype)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, np.linalg.det(x.astype(np.float64)), atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_det_batched_4d(tmp_path, dtype):
    m, sess = _session(tmp_path, [2, 3, 5, 5], dtype)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 3, 5, 5)).astype(dtype)
    x[1, 2] = [[0, 1, 0, 0, 0], [1, 0, 0, 0, 0], [0, 0, 0, 0, 2],
               [0, 0, 3, 0, 0], [0, 0, 0, 5, 0]]       # a swap and a 3-cycle: det = -30
    x[0, 1, 3] = x[0, 1, 1]                             # two equal rows: 0
    got = _run(sess, x)
    (want,) = ReferenceEvaluator(m).run(None, {"x": x})
    np.testing.assert_allclose(got, want, rtol=1e-4 if dtype == np.float32 else 1e-12,
                               atol=1e-6 if dtype == np.float32 else 1e-14)
    assert got[1, 2] == -30.0
    assert abs(got[0, 1]) <= (1e-6 if dtype == np.float32 else 1e-14)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_det_1x1(tmp_path, dtype):
    _, sess = _session(tmp_path, [3, 1, 1], dtype)
    x = np.array([[[2.5]], [[-7.0]], [[0.0]]], dtype)
    np.testing.assert_array_equal(_run(sess, x), np.array([2.5, -7.0, 0.0], dtype))


def _hilbert(n):
    i = np.arange(n)
    return 1.0 / (i[:, None] + i[None, :] + 1)


def test_det_ill_conditioned_f64(tmp_path):
    """Hilbert matrices (condition numbers 1.5e7 to 1.6e13), a nearly
    singular 2x2 (det 1e-9) and a badly scaled one: relative tolerance."""
    _, sess = _session(tmp_path, ["m", "m"], np.float64)
    for n in (5, 8):
        x = _hilbert(n)
        got, want = _run(sess, x), np.linalg.det(x)
        assert 0 < got < 1e-11 and want != 0
        np.testing.assert_allclose(got, want, rtol=1e-5)
    x = np.array([[1.0, 1.0], [1.0, 1.0 + 1e-9]])
    np.testing.assert_allclose(_run(sess, x), np.linalg.det(x), rtol=1e-6)
    x = np.diag([1e-150, 1e150, 3.0]) + np.triu(np.ones((3, 3)), 1)
    np.testing.assert_allclose(_run(sess, x), 3.0, rtol=1e-12)


def test_det_ill_conditioned_f32(tmp_path):
    _, sess = _session(tmp_path, [4, 4], np.float32)
    x = _hilbert(4).astype(np.float32)   # det 1.65e-7, condition 1.6e4
    got = _run(sess, x)
    np.testing.assert_allclose(got, np.linalg.det(x.astype(np.float64)), rtol=1e-2)
    np.testing.assert_allclose(got, np.linalg.det(x), rtol=1e-2)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_det_dynamic(tmp_path, dtype, opt_level):
    """Dynamic batch and M: two shapes each, M 1 and 0 (det 1), an empty
    batch."""
    _, sess = _session(tmp_path, ["n", "m", "m"], dtype, opt_level=opt_level)
    rng = np.random.default_rng(3)
    for shape in [(3, 4, 4), (5, 6, 6), (2, 1, 1)]:
        x = rng.standard_normal(shape).astype(dtype)
        x[0, :, 0] = 0   # a zero column: exactly 0
        got = _run(sess, x)
        assert got[0] == 0.0
        np.testing.assert_allclose(got, np.linalg.det(x.astype(np.float64)),
                                   rtol=1e-4 if dtype == np.float32 else 1e-12)
    np.testing.assert_array_equal(_run(sess, np.zeros((3, 0, 0), dtype)), np.ones(3, dtype))
    assert _run(sess, np.zeros((0, 2, 2), dtype)).shape == (0,)


def test_det_not_square(tmp_path):
    """Rows and columns declared by different names: checked at run time."""
    _, sess = _session(tmp_path, ["r", "c"], np.float32)
    assert _run(sess, np.array([[1, 2], [4, 4]], np.float32)) == -4.0
    with pytest.raises(RuntimeInputError, match=r"node 'det' \(Det\): input has 2 rows and "
                                                r"3 columns; expected square matrices"):
        sess.run([np.zeros((2, 3), np.float32)])


def test_det_dynamic_4d_batch(tmp_path):
    """Two dynamic batch dims and a static M at two batch shapes."""
    _, sess = _session(tmp_path, ["a", "b", 3, 3], np.float64)
    rng = np.random.default_rng(4)
    for shape in [(2, 3, 3, 3), (4, 1, 3, 3)]:
        x = rng.standard_normal(shape)
        np.testing.assert_allclose(_run(sess, x), np.linalg.det(x), rtol=1e-12)


@pytest.mark.parametrize("dtype, opset", [(np.float16, 11), (np.float16, 22),
                                          (ml_dtypes.bfloat16, 22)])
def test_det_half(tmp_path, dtype, opset):
    """f16 / bf16 compute in f32 and round once."""
    _, sess = _session(tmp_path, [2, 3, 3], dtype, opset)
    x = np.array([PIVOTING[4][0], [[0.5, 1, 2], [3, 0.25, 5], [6, 7, 9]]], np.float32)
    got = _run(sess, x.astype(dtype))
    want = np.linalg.det(x.astype(dtype).astype(np.float64)).astype(dtype)
    np.testing.assert_array_equal(got.astype(np.float32), want.astype(np.float32))
