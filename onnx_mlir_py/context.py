"""One MLIR context with the ONNX dialects loaded (IRDL, generated)."""
from __future__ import annotations

import io
from functools import lru_cache
from pathlib import Path

import mlir.ir as ir
from mlir.dialects import irdl

from onnx_mlir_py.dialects.onnx.schema import IRDL_FILE


@lru_cache(maxsize=1)
def _irdl_text() -> str:
    return IRDL_FILE.read_text()


_BYTECODE_MAGIC = b"ML\xefR"


def _irdl_bytecode_path() -> Path:
    """The cache's bytecode of the IRDL text, keyed by the text and the MLIR
    library that writes and reads it (folders created private)."""
    import hashlib
    from onnx_mlir_py.backend.cache import cache_dir
    from onnx_mlir_py.backend.cache_files import private_dir
    from onnx_mlir_py.native_walk import capi_library
    h = hashlib.sha256(_irdl_text().encode())
    capi = capi_library()
    if capi is not None:
        st = capi.stat()
        h.update(f"\0{capi}\0{st.st_size}\0{st.st_mtime_ns}".encode())
    return private_dir(private_dir(cache_dir()) / "irdl") / f"onnx-{h.hexdigest()[:24]}.mlirbc"


def _irdl_module() -> ir.Module:
    """The ONNX dialects' IRDL module (in the current context): parsed from
    the cache's bytecode of it, ~half the time of the 0.5 MB text (~30 ms of
    every compiling process, #29), else from the text, whose bytecode is
    then stored (checked against its sha256 when read; any cache trouble:
    the text)."""
    from onnx_mlir_py.backend.cache_files import read_verified, store_verified
    from onnx_mlir_py.errors import UnsafeCacheError
    try:
        path = _irdl_bytecode_path()
        data, _ = read_verified(path, _BYTECODE_MAGIC)
    except (OSError, UnsafeCacheError):
        path = data = None
    if data is not None:
        try:
            return ir.Module.parse(data)
        except ir.MLIRError:
            pass                        # (another MLIR's bytecode): the text
    m = ir.Module.parse(_irdl_text())
    if path is not None:
        try:
            buf = io.BytesIO()
            m.operation.write_bytecode(buf)
            store_verified(path, buf.getvalue(), durable=False)
        except OSError:
            pass                        # the cache only saves time
    return m


def make_context() -> ir.Context:
    """A fresh context with ``onnx``, ``onnx_ml``, ``onnx_training`` and
    ``onnx_preview`` registered, plus the upstream dialects we emit."""
    from onnx_mlir_py.dialects.upstream import register
    register()      # the modules of the upstream dialects the wheel lacks (amx, x86vector)
    ctx = ir.Context()
    # the per-function passes run on the functions in parallel (codegen's
    # pipelines nest them under func.func) on the context's thread pool, as
    # many threads as codegen may use cores ($ONNX_MLIR_PY_CODEGEN_JOBS)
    from onnx_mlir_py.tool_process import split_jobs
    if split_jobs() < 2:
        ctx.enable_multithreading(False)
    with ctx, ir.Location.unknown():
        irdl.load_dialects(_irdl_module())
    return ctx
