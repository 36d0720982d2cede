"""codegen/parallel_for.py: scf.forall loops -> outlined functions called
through om_parallel_for(n, fn, ctx).

The outlined code is run by MLIR's execution engine with om_parallel_for
provided from Python: it cuts [0, n) into uneven chunks and runs them in
reverse order, so a result that depends on the chunking or on the order
(wrong linearization, a captured value passed wrongly) fails."""
from __future__ import annotations

import ctypes

import numpy as np
import pytest

import mlir.ir as ir
from mlir.execution_engine import ExecutionEngine
from mlir.runtime import get_ranked_memref_descriptor

from onnx_mlir_py.codegen.llvm import LOWER_PIPELINE, PRE_LLVM_PIPELINE
from onnx_mlir_py.codegen.parallel_for import (PARALLEL_FOR_FN, lower_parallel_calls,
                                               outline_parallel_loops, uses_parallel_for)
from onnx_mlir_py.codegen.passes import run_pipeline
from onnx_mlir_py.ir_util import walk_ops

pytestmark = pytest.mark.quick   # the quick tier (README, Tests)

# out[i, j] = a[i, j] * s + j  for i in [2, n) step 3, j in [1, m) step 2 (m
# dynamic), inside an outer loop (nested forall) over k that adds k to a
# second output; constants, a dynamic bound, a scalar and memrefs are captured
SRC = """
func.func @f(%a: memref<?x?xf32>, %out: memref<?x?xf32>, %s: f32, %acc: memref<4xf32>)
    attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %a, %c1 : memref<?x?xf32>
  %n = memref.dim %a, %c0 : memref<?x?xf32>
  scf.forall (%i, %j) = (2, 1) to (%n, %m) step (3, 2) {
    %v = memref.load %a[%i, %j] : memref<?x?xf32>
    %jf = arith.index_cast %j : index to i64
    %jj = arith.sitofp %jf : i64 to f32
    %p = arith.mulf %v, %s : f32
    %q = arith.addf %p, %jj : f32
    memref.store %q, %out[%i, %j] : memref<?x?xf32>
  }
  scf.forall (%k) in (4) {
    scf.forall (%l) in (3) {
      %kf = arith.index_cast %k : index to i64
      %lf = arith.index_cast %l : index to i64
      %x = arith.muli %kf, %lf : i64
      %xf = arith.sitofp %x : i64 to f32
      %o = memref.load %acc[%k] : memref<4xf32>
      %y = arith.addf %o, %xf : f32
      memref.store %y, %acc[%k] : memref<4xf32>
    }
  }
  return
}
"""

BODY = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
calls = []


@ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)
def _parallel_for(n, fn, ctx):
    calls.append(n)
    body = BODY(fn)
    bounds = [0]
    while bounds[-1] < n:                   # chunks of 1, 2, 3, ... iterations
        bounds.append(min(n, bounds[-1] + len(bounds)))
    for lo, hi in reversed(list(zip(bounds, bounds[1:]))):
        body(ctx, lo, hi)


def _lowered():
    ctx = ir.Context()
    module = ir.Module.parse(SRC, ctx)
    assert outline_parallel_loops(module) == 3       # the nested loop too
    assert not walk_ops(module, ("scf.forall", "scf.parallel"))
    run_pipeline(module, PRE_LLVM_PIPELINE, "pre")
    run_pipeline(module, LOWER_PIPELINE, "lower")
    assert lower_parallel_calls(module) == 3
    assert uses_parallel_for(module)
    return ctx, module


def test_outlined_loops_compute_the_loop():
    ctx, module = _lowered()
    with ctx:
        ee = ExecutionEngine(module, opt_level=2)
    ee.raw_register_runtime(PARALLEL_FOR_FN, ctypes.cast(_parallel_for, ctypes.c_void_p))
    rng = np.random.default_rng(0)
    for n, m in [(9, 7), (2, 1), (14, 12)]:
        a = rng.standard_normal((n, m)).astype(np.float32)
        out = np.zeros_like(a)
        acc = np.zeros(4, np.float32)
        want = out.copy()
        for i in range(2, n, 3):
            for j in range(1, m, 2):
                want[i, j] = a[i, j] * np.float32(1.5) + j
        calls.clear()
        args = [ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(v))) for v in (a, out)]
        args += [ctypes.pointer(ctypes.c_float(1.5)),
                 ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(acc)))]
        ee.invoke("f", *args)
        np.testing.assert_array_equal(out, want)
        np.testing.assert_array_equal(acc, [0, 3, 6, 9])       # sum over l of k * l
        trips = len(range(2, n, 3)) * len(range(1, m, 2))
        assert calls[0] == trips and calls[1] == 4 and calls[2:] == [3] * 4


def test_no_loop_no_runtime():
    ctx = ir.Context()
    module = ir.Module.parse("func.func @f() { return }", ctx)
    assert outline_parallel_loops(module) == 0
    run_pipeline(module, LOWER_PIPELINE, "lower")
    assert lower_parallel_calls(module) == 0 and not uses_parallel_for(module)


@pytest.mark.parametrize("threads", ["0", "1"])
def test_compiled_model_calls_the_pool_only_when_threaded(tmp_path, monkeypatch, threads):
    """ONNX_MLIR_PY_O3_THREADS=0 builds no parallel loop and links no pool."""
    from onnx import TensorProto as T, helper as h, numpy_helper as nh
    import onnx_mlir_py
    monkeypatch.setenv("ONNX_MLIR_PY_O3_THREADS", threads)
    w = nh.from_array(np.ones((256, 256), np.float32), "w")
    g = h.make_graph([h.make_node("MatMul", ["x", "w"], ["y"])], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [192, 256])],
                     [h.make_tensor_value_info("y", T.FLOAT, [192, 256])], [w])
    so = onnx_mlir_py.compile(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]),
                              output=tmp_path / "m.so", opt_level=3)
    lib = ctypes.CDLL(str(so))
    assert hasattr(lib, "omSetNumThreads") == (threads == "1")
