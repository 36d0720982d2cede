"""The public backend functions: LLVM dialect, LLVM IR, object, options."""
from __future__ import annotations

import subprocess

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.codegen import (emit_library, emit_llvm_ir, emit_mlir_llvm, emit_object,
                                  extract_signature)
from onnx_mlir_py.codegen.passes import run_pipeline
from onnx_mlir_py.codegen.tools import tool
from onnx_mlir_py.runtime import ExecutionSession

from codegen_samples import DYNAMIC, MATMUL


def test_emit_mlir_llvm_leaves_input_untouched():
    with ir.Context():
        m = ir.Module.parse(DYNAMIC)
        before = str(m)
        low = emit_mlir_llvm(m)
        assert str(m) == before
        names = {op.operation.name for op in low.body.operations}
        assert names <= {"llvm.func", "llvm.mlir.global"}, names
        assert "_mlir_ciface_main_graph" in str(low)


def test_emit_llvm_ir_and_object(tmp_path):
    with ir.Context():
        m = ir.Module.parse(MATMUL)
        ll = emit_llvm_ir(m, 2)
        assert "define void @_mlir_ciface_main_graph" in ll
        obj = emit_object(m, tmp_path / "m.o", opt_level=1)
    syms = subprocess.run([tool("llvm-nm"), obj], capture_output=True, text=True).stdout
    assert "_mlir_ciface_main_graph" in syms


def test_signature_of_module():
    with ir.Context():
        sig = extract_signature(ir.Module.parse(DYNAMIC))
    assert [(t.name, t.sig_type, t.dims) for t in sig.inputs] == \
        [("a", "f32", (-1, -1)), ("b", "f32", (-1, -1))]
    assert [t.name for t in sig.outputs] == ["sum", "act"]


def test_native_cpu_and_o0(tmp_path):
    x = np.random.default_rng(0).standard_normal((3, 4), dtype=np.float32)
    outs = []
    for kw in ({"mcpu": "native"}, {"opt_level": 0}):
        with ir.Context():
            path = emit_library(ir.Module.parse(DYNAMIC), tmp_path / f"{len(outs)}.so", **kw)
        outs.append(ExecutionSession(path).run([x, x]))
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-6)


def test_library_is_self_contained(tmp_path):
    with ir.Context():
        path = emit_library(ir.Module.parse(MATMUL), tmp_path / "m.so")
    deps = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    assert "python" not in deps and "mlir" not in deps
    dyn = subprocess.run([tool("llvm-nm"), "-D", "--defined-only", path],
                         capture_output=True, text=True).stdout
    for sym in ("run_main_graph", "omInputSignature", "omOutputSignature",
                "omQueryEntryPoints", "omTensorCreate", "omTensorListDestroy",
                "omGetLastError"):
        assert f" {sym}\n" in dyn, sym


def test_tensor_level_passes_before_codegen(tmp_path):
    """Tensor-level passes run on the module before codegen (as the compiler's
    -O3 stage does); the library built from the result still computes the same."""
    with ir.Context():
        m = ir.Module.parse(MATMUL)
        run_pipeline(m, "func.func(linalg-generalize-named-ops), "
                        "func.func(linalg-fuse-elementwise-ops)", "tensor-level pipeline")
        assert "linalg.generic" in str(m) and "linalg.matmul" not in str(m)
        path = emit_library(m, tmp_path / "h.so")
    x = np.ones((32, 64), np.float32)
    (y,) = ExecutionSession(path).run([x, np.ones((64, 48), np.float32),
                                       np.zeros(48, np.float32)])
    np.testing.assert_allclose(y[0, :4], [32.0, 64.0, 96.0, 128.0])
