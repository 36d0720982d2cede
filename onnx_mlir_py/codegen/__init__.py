"""Back end: tensor-level MLIR -> LLVM dialect -> LLVM IR -> object -> ``.so``.

Public entry points::

    emit_mlir_llvm(module, opt_level) -> module   # LLVM dialect
    emit_llvm_ir(module, opt_level) -> str        # optimised LLVM IR text
    emit_object(module, path, opt_level, mcpu, march)
    emit_library(module, path, opt_level=3, mcpu=None, march=None)

The ``.so`` embeds the C runtime (``onnx_mlir_py/runtime/c``) and exposes
onnx-mlir's entry ABI (``run_main_graph``, ``omInputSignature``, ...).
"""
from .link import emit_library, emit_llvm_ir, emit_object
from .llvm import emit_mlir_llvm
from .signature import EntrySignature, TensorSpec, extract_signature

__all__ = ["emit_mlir_llvm", "emit_llvm_ir", "emit_object", "emit_library",
           "extract_signature", "EntrySignature", "TensorSpec"]
