"""Random generators: shape, dtype and distribution moments over many
samples (not values): uniform mean/variance/range, normal mean/variance,
Bernoulli frequencies per probability, Multinomial class frequencies
against softmax(x); a seed repeats its values, another seed does not;
dynamic dims at two run-time shapes for the *Like ops."""
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession

from dynamic_util import model


def _run(tmp_path, m, feeds=(), name="m.so"):
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / name))
    return sess.run(list(feeds))


def test_random_uniform_moments_and_seed(tmp_path):
    node = h.make_node("RandomUniform", [], ["y"], shape=[200, 500], low=-1.0, high=3.0,
                       seed=7.0)
    m = model([node], [], opset=22)
    (y,) = _run(tmp_path, m)
    assert y.shape == (200, 500) and y.dtype == np.float32
    assert y.min() >= -1.0 and y.max() < 3.0
    assert abs(y.mean() - 1.0) < 0.02 and abs(y.var() - 16 / 12) < 0.02
    # 10 equal bins hold 10% each (+-0.5%)
    hist = np.histogram(y, bins=10, range=(-1, 3))[0] / y.size
    assert np.all(np.abs(hist - 0.1) < 0.005), hist
    (y2,) = _run(tmp_path, m, name="m2.so")
    np.testing.assert_array_equal(y, y2)           # the same seed, the same values
    next(a for a in node.attribute if a.name == "seed").f = 8.0
    (y3,) = _run(tmp_path, model([node], [], opset=22), name="m3.so")
    assert np.mean(y == y3) < 0.01


@pytest.mark.parametrize("dtype", [T.FLOAT, T.DOUBLE, T.FLOAT16])
def test_random_normal_moments(tmp_path, dtype):
    m = model([h.make_node("RandomNormal", [], ["y"], shape=[100000], mean=2.0, scale=3.0,
                           dtype=dtype)], [], opset=22)
    (y,) = _run(tmp_path, m)
    assert y.shape == (100000,) and y.dtype == h.tensor_dtype_to_np_dtype(dtype)
    y = y.astype(np.float64)
    assert abs(y.mean() - 2.0) < 0.05 and abs(y.std() - 3.0) < 0.05
    z = (y - 2.0) / 3.0
    assert abs(np.mean(z ** 3)) < 0.05 and abs(np.mean(z ** 4) - 3.0) < 0.1  # skew, kurtosis
    assert abs(np.mean(np.abs(z) < 1) - 0.6827) < 0.01


@pytest.mark.parametrize("op", ["RandomUniformLike", "RandomNormalLike"])
def test_random_like_dynamic(tmp_path, op):
    m = model([h.make_node(op, ["x"], ["y"], dtype=T.DOUBLE)], [("x", T.FLOAT, ["a", "b"])],
              opset=22)
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so"))
    for shape in [(300, 200), (7, 5000)]:
        (y,) = sess.run([np.zeros(shape, np.float32)])
        assert y.shape == shape and y.dtype == np.float64
        if op == "RandomUniformLike":
            assert 0 <= y.min() and y.max() < 1 and abs(y.mean() - 0.5) < 0.01
        else:
            assert abs(y.mean()) < 0.02 and abs(y.std() - 1) < 0.02


def test_bernoulli_frequencies(tmp_path):
    p = np.repeat(np.array([0.0, 0.1, 0.5, 0.9, 1.0], np.float32)[:, None], 20000, axis=1)
    m = model([h.make_node("Bernoulli", ["p"], ["y"], seed=3.0)], [("p", T.FLOAT, ["a", "b"])],
              opset=22)
    (y,) = _run(tmp_path, m, [p])
    assert y.shape == p.shape and y.dtype == np.float32
    assert set(np.unique(y)) <= {0.0, 1.0}
    np.testing.assert_allclose(y.mean(axis=1), [0, 0.1, 0.5, 0.9, 1], atol=0.01)
    m = model([h.make_node("Bernoulli", ["p"], ["y"], dtype=T.BOOL)],
              [("p", T.DOUBLE, [3])], opset=22)
    (yb,) = _run(tmp_path, m, [np.array([0.0, 1.0, 1.0])], name="b.so")
    assert yb.dtype == np.bool_ and yb.tolist() == [False, True, True]


@pytest.mark.parametrize("dtype", [T.INT32, T.INT64])
def test_multinomial_frequencies(tmp_path, dtype):
    logits = np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.0 + 1e-9, 0.5]], np.float32)) + 50
    m = model([h.make_node("Multinomial", ["x"], ["y"], sample_size=30000, dtype=dtype,
                           seed=1.0)], [("x", T.FLOAT, ["b", "c"])], opset=22)
    (y,) = _run(tmp_path, m, [logits])
    assert y.shape == (2, 30000) and y.dtype == h.tensor_dtype_to_np_dtype(dtype)
    assert y.min() >= 0 and y.max() <= 2
    freq = np.stack([np.bincount(r, minlength=3) / r.size for r in y])
    np.testing.assert_allclose(freq, [[0.1, 0.2, 0.7], [0.5, 0.0, 0.5]], atol=0.015)
