"""Tensor-level MLIR -> .so -> ExecutionSession, compared with numpy."""
from __future__ import annotations

import json

import numpy as np
import pytest


from codegen_samples import (ALIASES, BOOL, DYNAMIC, F64_F16_SCALAR, INPLACE, INT64, MATMUL, SCALE,
                             UINT8)


@pytest.fixture(scope="module")
def matmul(compile_mlir):
    return compile_mlir(MATMUL, "matmul")


def matmul_ref(x, w, b):
    return np.maximum((x @ w + b) * SCALE, 0)


def test_matmul_bias_relu(matmul):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 64), dtype=np.float32)
    w = rng.standard_normal((64, 48), dtype=np.float32)
    b = rng.standard_normal(48, dtype=np.float32)
    (y,) = matmul.session.run([x, w, b])
    assert y.shape == (32, 48) and y.dtype == np.float32 and y.flags.owndata
    np.testing.assert_allclose(y, matmul_ref(x, w, b), rtol=1e-4, atol=1e-4)
    print(f"\nmatmul compile time: {matmul.seconds:.2f}s {dict(matmul.timings)}")


def test_signatures(matmul):
    s = matmul.session
    assert s.entry_points() == ["run_main_graph"]
    assert json.loads(s.input_signature()) == [
        {"type": "f32", "dims": [32, 64], "name": "x"},
        {"type": "f32", "dims": [64, 48], "name": "w"},
        {"type": "f32", "dims": [48], "name": "bias"}]
    assert json.loads(s.output_signature()) == [{"type": "f32", "dims": [32, 48], "name": "y"}]
    assert [t.name for t in s.input_specs] == ["x", "w", "bias"]
    assert s.input_specs[0].dtype == np.float32


def test_non_contiguous_input(matmul):
    rng = np.random.default_rng(1)
    xt = rng.standard_normal((64, 32), dtype=np.float32)
    w = rng.standard_normal((64, 48), dtype=np.float32)
    b = np.zeros(48, np.float32)
    (y,) = matmul.session.run([xt.T, w, b])
    np.testing.assert_allclose(y, matmul_ref(xt.T, w, b), rtol=1e-4, atol=1e-4)


def test_read_only_and_view_inputs(matmul):
    """Inputs' data addresses: read-only arrays (no writable buffer) and
    offset views of a larger buffer are passed at their own address."""
    rng = np.random.default_rng(3)
    big = rng.standard_normal((3, 32, 64), dtype=np.float32)
    x = big[1]                                   # a view at an offset
    w = rng.standard_normal((64, 48), dtype=np.float32)
    w.setflags(write=False)
    b = np.frombuffer(rng.standard_normal(48, dtype=np.float32).tobytes(), np.float32)
    assert not b.flags.writeable and x.base is big
    (y,) = matmul.session.run([x, w, b])
    np.testing.assert_allclose(y, matmul_ref(x, w, b), rtol=1e-4, atol=1e-4)


@pytest.mark.quick
def test_dynamic_shapes(compile_mlir):
    c = compile_mlir(DYNAMIC, "dynamic")
    assert json.loads(c.session.input_signature())[0]["dims"] == [-1, -1]
    rng = np.random.default_rng(2)
    for shape in [(3, 5), (1, 1), (17, 33), (0, 4)]:
        a = rng.standard_normal(shape, dtype=np.float32)
        b = rng.standard_normal(shape, dtype=np.float32)
        s, t = c.session.run([a, b])
        assert s.shape == shape and t.shape == shape
        np.testing.assert_allclose(s, a + b, rtol=1e-6)
        np.testing.assert_allclose(t, np.exp(np.tanh(a + b)), rtol=1e-5)


def test_int64(compile_mlir):
    c = compile_mlir(INT64, "int64")
    a = np.array([0, -7, 123456789, 2**31], dtype=np.int64)
    (r,) = c.session.run([a])
    assert r.dtype == np.int64
    np.testing.assert_array_equal(r, a * a + 3000000000)
    assert json.loads(c.session.output_signature())[0]["type"] == "i64"


@pytest.mark.quick
def test_bool(compile_mlir):
    c = compile_mlir(BOOL, "bool")
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 5), dtype=np.float32)
    m = rng.random((3, 5)) > 0.3
    (r,) = c.session.run([a, m])
    assert r.dtype == np.bool_
    np.testing.assert_array_equal(r, (a > 0) & m)
    assert json.loads(c.session.input_signature())[1]["type"] == "i1"


def test_same_value_twice_input_and_constant_returned(compile_mlir):
    c = compile_mlir(ALIASES, "aliases")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), 10, np.float32)
    for _ in range(50):     # repeated runs: no double free, no stale buffers
        s1, s2, a2, k = c.session.run([a, b])
    np.testing.assert_array_equal(s1, a + b)
    np.testing.assert_array_equal(s2, a + b)
    assert not np.shares_memory(s1, s2)
    np.testing.assert_array_equal(a2, a)
    assert not np.shares_memory(a2, a)
    np.testing.assert_array_equal(k, np.arange(1, 7, dtype=np.float32).reshape(2, 3))
    s1[...] = 0     # outputs are independent buffers
    np.testing.assert_array_equal(c.session.run([a, b])[1], a + b)


def test_uint8_dtype_attribute(compile_mlir):
    c = compile_mlir(UINT8, "uint8")
    assert json.loads(c.session.input_signature())[0]["type"] == "ui8"
    a = np.array([0, 1, 200, 255], np.uint8)
    (r,) = c.session.run([a])
    assert r.dtype == np.uint8
    np.testing.assert_array_equal(r, 255 - a)


def test_f64_scalar_and_f16(compile_mlir):
    c = compile_mlir(F64_F16_SCALAR, "f64f16", opt_level=0)
    s = np.array(1.5, np.float64)
    h = np.array([1, 2, 3, 0.5, -4], np.float16)
    s2, h2 = c.session.run([s, h])
    assert s2.shape == () and s2.dtype == np.float64 and float(s2) == 2.25
    assert h2.dtype == np.float16
    np.testing.assert_array_equal(h2, h + h)


@pytest.mark.quick
def test_inputs_are_never_written(compile_mlir):
    c = compile_mlir(INPLACE, "inplace")
    a = np.arange(4, dtype=np.float32)
    (r,) = c.session.run([a])
    np.testing.assert_array_equal(r, [0, 42, 2, 3])
    np.testing.assert_array_equal(a, [0, 1, 2, 3])
