"""Back end: tensor-level MLIR -> LLVM dialect -> LLVM IR -> object -> ``.so``.

The compiler's codegen stages (each adds its time to a ``Timings``)::

    to_llvm_ir(module, options, timings) -> bytes     # optimised LLVM IR
    to_object(module, path, options, timings)
    to_library(module, path, options, timings)

The same for a tensor-level module and plain options::

    emit_mlir_llvm(module) -> module              # LLVM dialect
    emit_llvm_ir(module, opt_level) -> str        # optimised LLVM IR text
    emit_object(module, path, opt_level, mcpu, march)
    emit_library(module, path, opt_level=3, mcpu=None, march=None)

The ``.so`` embeds the C runtime (``onnx_mlir_py/runtime/c``) and exposes
onnx-mlir's entry ABI (``run_main_graph``, ``omInputSignature``, ...).
"""
from onnx_mlir_py.codegen.link import (emit_library, emit_llvm_ir, emit_object, to_library,
                                       to_llvm_ir, to_object)
from onnx_mlir_py.codegen.llvm import emit_mlir_llvm
from onnx_mlir_py.codegen.signature import EntrySignature, TensorSpec, extract_signature

__all__ = ["emit_mlir_llvm", "emit_llvm_ir", "emit_object", "emit_library",
           "to_llvm_ir", "to_object", "to_library",
           "extract_signature", "EntrySignature", "TensorSpec"]
