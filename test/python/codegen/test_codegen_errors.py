"""Bad inputs raise RuntimeInputError (Python) / NULL + message (C);
malformed modules raise CompileError before MLIR runs."""
from __future__ import annotations

import ctypes

import mlir.ir as ir
import numpy as np
import pytest

from onnx_mlir_py.codegen import emit_library, emit_object
from onnx_mlir_py.codegen.passes import run_pipeline
from onnx_mlir_py.errors import CompileError
from onnx_mlir_py.runtime import ModelRunError, RuntimeInputError

from codegen_samples import DYNAMIC, MATMUL


@pytest.fixture(scope="module")
def sess(compile_mlir):
    return compile_mlir(MATMUL, "matmul_err").session


def ok_inputs():
    return [np.zeros((32, 64), np.float32), np.zeros((64, 48), np.float32),
            np.zeros(48, np.float32)]


@pytest.mark.parametrize("mutate, pattern", [
    (lambda xs: xs[:2], r"expected 3 input\(s\) \('x', 'w', 'bias'\), got 2"),
    (lambda xs: xs + [xs[0]], r"expected 3 input\(s\).*got 4"),
    (lambda xs: [xs[0].astype(np.float64)] + xs[1:],
     r"input 0 \('x'\): expected dtype float32 \(f32\), got float64"),
    (lambda xs: xs[:2] + [xs[2].reshape(1, 48)],
     r"input 2 \('bias'\): expected rank 1 .*got rank 2"),
    (lambda xs: [xs[0], np.zeros((64, 47), np.float32), xs[2]],
     r"input 1 \('w'\): dimension 1: expected 48, got 47"),
    (lambda xs: [xs[0].tolist()] + xs[1:], r"input 0 \('x'\): expected a numpy array"),
])
def test_bad_inputs_python(sess, mutate, pattern):
    with pytest.raises(RuntimeInputError, match=pattern):
        sess.run(mutate(ok_inputs()))
    assert isinstance(RuntimeInputError("x"), ValueError)


def test_bad_inputs_checked_in_the_library(sess, monkeypatch):
    """Bypass the Python checks: the .so itself refuses, no crash."""
    monkeypatch.setattr(sess, "_check", lambda xs: xs)
    bad = ok_inputs()
    bad[1] = np.zeros((64, 47), np.float32)
    with pytest.raises(ModelRunError, match=r"input 1 \('w'\): dimension 1: expected shape "
                                              r"\[64,48\], got \[64,47\]"):
        sess.run(bad)
    with pytest.raises(ModelRunError, match=r"expected 3 input\(s\), got 2"):
        sess.run(ok_inputs()[:2])
    with pytest.raises(ModelRunError, match=r"input 2 \('bias'\): expected rank 1, got 0"):
        sess.run(ok_inputs()[:2] + [np.zeros((), np.float32)])
    with pytest.raises(ModelRunError, match=r"input 0 \('x'\): expected element type 1, got 7"):
        sess.run([np.zeros((32, 64), np.int64)] + ok_inputs()[1:])
    assert ctypes.get_errno() is not None
    (y,) = sess.run(ok_inputs())        # still usable afterwards
    assert y.shape == (32, 48)


def test_dynamic_dims_accept_any_size_but_check_rank(compile_mlir):
    s = compile_mlir(DYNAMIC, "dyn_err").session
    with pytest.raises(RuntimeInputError, match=r"input 1 \('b'\): expected rank 2"):
        s.run([np.zeros((2, 2), np.float32), np.zeros(4, np.float32)])


def test_unknown_entry_point(sess):
    assert sess._in_sig(b"run_other") is None
    assert "unknown entry point 'run_other'" in sess._error()


def test_missing_library(tmp_path):
    from onnx_mlir_py.runtime import ExecutionSession
    with pytest.raises(ModelRunError, match="not found"):
        ExecutionSession(tmp_path / "nope.so")
    (tmp_path / "bad.so").write_bytes(b"not an elf")
    with pytest.raises(ModelRunError, match="cannot load"):
        ExecutionSession(tmp_path / "bad.so")


@pytest.mark.parametrize("text, pattern", [
    ("func.func @other(%a: tensor<2xf32>) -> tensor<2xf32> { return %a : tensor<2xf32> }",
     "no func.func @main_graph"),
    ("func.func @main_graph(%a: tensor<*xf32>) -> tensor<*xf32> { return %a : tensor<*xf32> }",
     r"input #0 of @main_graph must be a ranked tensor"),
    ("func.func @main_graph(%a: tensor<2xf8E4M3FN>) -> tensor<2xf8E4M3FN> "
     "{ return %a : tensor<2xf8E4M3FN> }", "unsupported element type f8E4M3FN"),
    ("func.func @main_graph(%a: tensor<2xi8> {onnx.dtype = \"float\"}) -> tensor<2xi8> "
     "{ return %a : tensor<2xi8> }", "does not match the element type i8"),
    ("func.func @main_graph(%a: memref<2xf32>) -> memref<2xf32> "
     "{ return %a : memref<2xf32> }", "must be a ranked tensor"),
    ("func.func @main_graph(%a: tensor<2xf32>) { return }", "has no results"),
    ("func.func private @main_graph(%a: tensor<2xf32>) -> tensor<2xf32>",
     "declaration without a body"),
])
def test_compile_errors(tmp_path, text, pattern):
    with ir.Context():
        m = ir.Module.parse(text)
        with pytest.raises(CompileError, match=pattern):
            emit_library(m, tmp_path / "x.so")


def test_bad_options(tmp_path):
    with ir.Context():
        m = ir.Module.parse(DYNAMIC)
        with pytest.raises(CompileError, match="opt_level"):
            emit_library(m, tmp_path / "x.so", opt_level=5)
        with pytest.raises(CompileError, match="bad pass pipeline"):
            run_pipeline(m, "no-such-pass", "tensor-level pipeline")
        with pytest.raises(CompileError, match="failed"):
            emit_object(m, tmp_path / "x.o", march="no-such-arch")
