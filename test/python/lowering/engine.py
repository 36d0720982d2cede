"""Run a lowered (tensor-level) module with ``mlir.execution_engine``.

Independent of onnx_mlir_py.codegen: adds a destination-passing entry
``@__entry(in memrefs..., out memrefs...)`` that calls ``@main_graph``, runs
a standard bufferize -> loops -> LLVM pipeline and invokes it. Outputs are
allocated by the caller with shapes the test knows (from the reference).
"""
from __future__ import annotations

import ctypes
import os

import mlir.ir as ir
import numpy as np
import onnx
from mlir.dialects import arith, bufferization, func
from mlir.execution_engine import ExecutionEngine
from mlir.passmanager import PassManager
from mlir.runtime import get_ranked_memref_descriptor

from onnx_mlir_py.importer import import_model
from onnx_mlir_py.passes.pipeline import run_passes

# bool (i1) buffers abort finalize-memref-to-llvm in this MLIR build
# (StoreOpLowering asserts width >= 8): the entry passes bools as i8 and
# elementwise fusion keeps i1 tensors out of memory.
PIPELINE = ("builtin.module(inline, symbol-dce, convert-elementwise-to-linalg, linalg-fuse-elementwise-ops, "
            "one-shot-bufferize{bufferize-function-boundaries "
            "function-boundary-type-conversion=identity-layout-map},"
            "convert-linalg-to-loops, lower-affine, convert-scf-to-cf, "
            "convert-math-to-llvm, convert-math-to-libm, expand-strided-metadata, lower-affine, "
            "finalize-memref-to-llvm, convert-arith-to-llvm, convert-func-to-llvm, "
            "convert-cf-to-llvm, reconcile-unrealized-casts)")

# import -> ONNX IR -> linalg. (verify-onnx is skipped: it currently rejects
# dense_resource constants, see the lowering report.)
FRONT = ["verify-mlir", "shape-inference", "canonicalize-onnx", "verify-mlir",
         "lower-to-linalg", "verify-mlir"]

# The runner-utils library (memrefCopy, ...) is opened here with ctypes, i.e.
# RTLD_LOCAL, and its functions are handed to each engine by address. Given
# as ``shared_libs``, the engine would dlopen it RTLD_GLOBAL, and with it
# libLLVM.so and libMLIR.so: a TensorFlow imported later in the same pytest
# worker then binds its own LLVM's static initializers to them and aborts
# (SmallPtrSet assertion in cl::Option::addArgument), which CI saw.
_RUNNER_UTILS = None
try:
    import mlir as _m
    _path = os.path.join(os.path.dirname(_m.__path__[0]), "mlir", "lib",
                         "libmlir_c_runner_utils.so")
    if os.path.exists(_path):
        _RUNNER_UTILS = ctypes.CDLL(_path)
except Exception:  # pragma: no cover
    pass


def _register_runner_utils(ee: ExecutionEngine, module: ir.Module) -> None:
    """Register every external function of ``module`` that the runner-utils
    library defines (the rest, libm's, resolve in the process)."""
    if _RUNNER_UTILS is None:
        return
    for op in module.body.operations:
        if op.operation.name != "llvm.func" or len(op.regions[0].blocks) > 0:
            continue
        name = ir.StringAttr(op.attributes["sym_name"]).value
        try:
            fn = _RUNNER_UTILS[name]
        except AttributeError:
            continue
        ee.raw_register_runtime(name, ctypes.cast(fn, ctypes.c_void_p))


def lower_model(model: onnx.ModelProto | str) -> ir.Module:
    m = import_model(model)
    run_passes(m, FRONT)
    return m


def _is_bool(t) -> bool:
    return isinstance(t.element_type, ir.IntegerType) and t.element_type.width == 1


def _memref_type(t: ir.RankedTensorType) -> ir.MemRefType:
    et = ir.IntegerType.get_signless(8) if _is_bool(t) else t.element_type
    return ir.MemRefType.get(list(t.shape), et)


def _with_elem(t: ir.RankedTensorType, et) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(t.shape), et)


def _add_entry(module: ir.Module, name: str = "main_graph") -> None:
    main = None
    for op in module.body.operations:
        if op.operation.name == "func.func" and \
                ir.StringAttr(op.operation.attributes["sym_name"]).value == name:
            main = op
    assert main is not None, f"no @{name}"
    ft = ir.FunctionType(ir.TypeAttr(main.operation.attributes["function_type"]).value)
    main.operation.attributes["sym_visibility"] = ir.StringAttr.get("private", module.context)
    ins, outs = list(ft.inputs), list(ft.results)
    with module.context, ir.Location.unknown(), ir.InsertionPoint(module.body):
        entry = func.FuncOp("__entry", ir.FunctionType.get(
            [_memref_type(t) for t in ins + outs], []))
        entry.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
        blk = entry.add_entry_block()
        with ir.InsertionPoint(blk):
            i8 = ir.IntegerType.get_signless(8)
            ts = []
            for t, a in zip(ins, list(blk.arguments)[:len(ins)]):
                if _is_bool(t):
                    v = bufferization.to_tensor(_with_elem(t, i8), a, restrict=True)
                    ts.append(arith.trunci(t, v))
                else:
                    ts.append(bufferization.to_tensor(t, a, restrict=True))
            call = func.CallOp(outs, ir.FlatSymbolRefAttr.get(name), ts)
            for r, dst in zip(call.results, list(blk.arguments)[len(ins):]):
                if _is_bool(r.type):
                    r = arith.extui(_with_elem(r.type, i8), r)
                bufferization.materialize_in_destination(None, r, dst, restrict=True,
                                                         writable=True)
            func.ReturnOp([])


_CHECK_FN = ctypes.CFUNCTYPE(None, *[ctypes.c_int64] * 5)


def run(module: ir.Module, inputs: list[np.ndarray], out_specs: list[tuple]) -> list[np.ndarray]:
    """out_specs: [(shape, numpy dtype)] of the results."""
    m = ir.Module.parse(str(module), context=module.context)  # keep the caller's copy
    _add_entry(m)
    with m.context:
        PassManager.parse(PIPELINE).run(m.operation)
    ee = ExecutionEngine(m, opt_level=2)
    _register_runner_utils(ee, m)
    # run-time checks (LoweringContext.require) call om_check_failed: record
    # the failure (the C runtime's version longjmps out; tests here feed
    # valid inputs, so a call is a test failure)
    failed = []
    cb = _CHECK_FN(lambda cid, *vals: failed.append((cid, vals)))
    ee.raw_register_runtime("om_check_failed", ctypes.cast(cb, ctypes.c_void_p))
    ins = [np.ascontiguousarray(a) for a in inputs]
    ins = [a.view(np.int8) if a.dtype == np.bool_ else a for a in ins]
    outs = [np.zeros(s, dtype=np.int8 if np.dtype(d) == np.bool_ else d) for s, d in out_specs]
    args = [ctypes.pointer(ctypes.pointer(get_ranked_memref_descriptor(a))) for a in ins + outs]
    ee.invoke("__entry", *args)
    assert not failed, f"run-time check failed: {failed}"
    return [o.view(np.bool_) if np.dtype(d) == np.bool_ else o for o, (s, d) in zip(outs, out_specs)]


def run_model(model: onnx.ModelProto, feeds: dict[str, np.ndarray], expected: list[np.ndarray]
              ) -> list[np.ndarray]:
    module = lower_model(model)
    ins = [feeds[i.name] for i in model.graph.input]
    return run(module, ins, [(e.shape, e.dtype) for e in expected])
