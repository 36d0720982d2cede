"""What ``llc --version`` says of the build machine, without running llc.

The compiler needs LLVM's default target triple (the host's, given to
``opt`` / ``llc`` explicitly: ``link.target_triple``) and its name for the
build machine's CPU (``-mcpu=native``, the -O3 default's tuning:
``target.host_cpu_name``). They came from ``llc --version`` ("Default
target", "Host CPU"): a process loading all of LLVM, ~15 ms of every
compile (#29). The MLIR wheel's ``libMLIRPythonCAPI.so``, already loaded by
the bindings, links the LLVM the tools run on (see ``llvm_capi``), whose C
API answers the same two questions: ``LLVMGetDefaultTargetTriple`` and
``LLVMGetHostCPUName``, the functions behind llc's two lines
(``sys::getDefaultTargetTriple``, ``sys::getHostCPUName``). When that
library or those functions are missing, or ``ONNX_MLIR_PY_LLVM_IN_PROCESS=0``
asks for the tools, the caller runs llc as before.
"""
from __future__ import annotations

import ctypes
import os
from functools import lru_cache


@lru_cache(maxsize=1)
def host_llvm() -> tuple[str, str] | None:
    """(default target triple, host CPU name) from the in-process LLVM, or
    None (the caller asks ``llc --version``)."""
    from onnx_mlir_py.codegen.llvm_capi import IN_PROCESS_ENV
    if os.environ.get(IN_PROCESS_ENV, "1") == "0":
        return None
    try:
        import mlir._mlir_libs as libs
        lib = ctypes.CDLL(os.path.join(list(libs.__path__)[0], "libMLIRPythonCAPI.so"))
        triple, cpu, dispose = (lib.LLVMGetDefaultTargetTriple, lib.LLVMGetHostCPUName,
                                lib.LLVMDisposeMessage)
    except (ImportError, OSError, AttributeError, IndexError):
        return None
    for fn in (triple, cpu):
        fn.restype, fn.argtypes = ctypes.c_void_p, []
    dispose.restype, dispose.argtypes = None, [ctypes.c_void_p]

    def text(fn) -> str:
        ptr = fn()
        if not ptr:
            return ""
        try:
            return ctypes.string_at(ptr).decode(errors="replace").strip()
        finally:
            dispose(ptr)
    found = text(triple), text(cpu)
    return found if found[0] else None
