"""MLIR's C API through ctypes, for what the Python bindings do while they
hold the GIL (#29).

The bindings' ``PassManager.run`` keeps the GIL for most of a run (a
counting Python thread ran at ~15% of its rate beside one), so the
LLVM pool's threads (:class:`.llvm_capi.Pool`), which need it between
their LLVM-C calls, stall until the run ends (a 10 ms part took ~300 ms
beside back-to-back pass-manager runs). :func:`run_pass_manager` calls
``mlirPassManagerRunOnOp`` of the same library by ctypes, which releases
the GIL while MLIR works: the module it leaves is the same.

The errors: the bindings turn a failed run's error diagnostics into an
``MLIRError``; here a diagnostic handler made by ctypes collects them
(:class:`diagnostics`). A ctypes callback takes the GIL itself, so it may
run on any thread (MLIR's own pass threads too).
"""
from __future__ import annotations

import ctypes
import os
from functools import lru_cache

_P = ctypes.c_void_p


class _StringRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("length", ctypes.c_size_t)]


# void (*)(MlirStringRef, void *); MlirLogicalResult (*)(MlirDiagnostic, void *)
_STRING_CALLBACK = ctypes.CFUNCTYPE(None, _StringRef, _P)
_HANDLER = ctypes.CFUNCTYPE(ctypes.c_int8, _P, _P)
_ERROR = 0          # MlirDiagnosticError

_SIGNATURES = {
    "mlirPassManagerRunOnOp": (ctypes.c_int8, [_P, _P]),
    "mlirContextAttachDiagnosticHandler": (ctypes.c_uint64, [_P, _HANDLER, _P, _P]),
    "mlirContextDetachDiagnosticHandler": (None, [_P, ctypes.c_uint64]),
    "mlirDiagnosticGetSeverity": (ctypes.c_int, [_P]),
    "mlirDiagnosticGetLocation": (_P, [_P]),
    "mlirDiagnosticPrint": (None, [_P, _STRING_CALLBACK, _P]),
    "mlirLocationPrint": (None, [_P, _STRING_CALLBACK, _P]),
    "mlirDiagnosticGetNumNotes": (ctypes.c_ssize_t, [_P]),
    "mlirDiagnosticGetNote": (_P, [_P, ctypes.c_ssize_t]),
}


class _Lib:
    def __init__(self, path: str):
        lib = ctypes.CDLL(path)         # ctypes releases the GIL in each call
        for name, (res, args) in _SIGNATURES.items():
            fn = getattr(lib, name)     # AttributeError: not available
            fn.restype, fn.argtypes = res, args
            setattr(self, name[4:], fn)


@lru_cache(maxsize=1)
def _lib() -> _Lib | None:
    """The wheel's MLIR C API (the library the bindings use), or None."""
    try:
        import mlir._mlir_libs as libs
        return _Lib(os.path.join(list(libs.__path__)[0], "libMLIRPythonCAPI.so"))
    except (ImportError, OSError, AttributeError, IndexError):
        return None


def available() -> bool:
    return _lib() is not None


def _capsule_api():
    """``PyCapsule_GetName`` / ``PyCapsule_GetPointer`` with their prototypes
    (a ctypes function object of its own: ``ctypes.pythonapi``'s attributes
    are shared with every other user of it)."""
    api = ctypes.PyDLL(None)
    name, get = api.PyCapsule_GetName, api.PyCapsule_GetPointer
    name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get.restype, get.argtypes = _P, [ctypes.py_object, ctypes.c_char_p]
    return name, get


_CAPSULE = None


def capi_pointer(obj) -> int:
    """The C pointer in a Python binding object's ``_CAPIPtr`` capsule."""
    global _CAPSULE
    if _CAPSULE is None:
        _CAPSULE = _capsule_api()
    name, get = _CAPSULE
    cap = obj._CAPIPtr
    return get(cap, name(cap))


def _printed(lib: _Lib, fn, ptr) -> str:
    parts: list[bytes] = []
    cb = _STRING_CALLBACK(lambda s, _: parts.append(ctypes.string_at(s.data, s.length)))
    fn(ptr, cb, None)
    return b"".join(parts).decode(errors="replace")


def _line(lib: _Lib, diag) -> str:
    """"<location>: <message>", as the bindings' MLIRError prints it."""
    loc = _printed(lib, lib.LocationPrint, lib.DiagnosticGetLocation(diag))
    if loc.startswith("loc(") and loc.endswith(")"):
        loc = loc[4:-1]
    return f"{loc}: {_printed(lib, lib.DiagnosticPrint, diag)}"


class diagnostics:
    """The error diagnostics the context ``ctx`` emits inside the block, as
    lines (a list): "error: <location>: <message>", then " note: ..." for
    each of its notes. Warnings and remarks are dropped, not passed on: a
    handler of the bindings attached earlier would run without the GIL
    (and a compile that succeeds prints nothing)."""

    def __init__(self, ctx):
        self.ctx, self.found = ctx, []

    def __enter__(self) -> list[str]:
        lib = _lib()

        def handler(diag, _) -> int:
            try:
                if lib.DiagnosticGetSeverity(diag) != _ERROR:
                    return 1            # handled, dropped (see the class docstring)
                self.found.append("error: " + _line(lib, diag))
                for i in range(lib.DiagnosticGetNumNotes(diag)):
                    self.found.append(" note: " + _line(lib, lib.DiagnosticGetNote(diag, i)))
            except Exception:           # noqa: BLE001 (never raise into C++)
                self.found.append("(a diagnostic that could not be read)")
            return 1                    # handled: not printed
        self._callback = _HANDLER(handler)      # kept alive while attached
        self._ptr = capi_pointer(self.ctx)
        self._id = lib.ContextAttachDiagnosticHandler(self._ptr, self._callback, None, None)
        return self.found

    def __exit__(self, *exc) -> None:
        _lib().ContextDetachDiagnosticHandler(self._ptr, self._id)
        self._callback = None
        self.ctx = None


def run_pass_manager(pm, op) -> list[str] | None:
    """Run the parsed pass manager ``pm`` on the operation ``op`` without
    the GIL: None when it succeeded, else the error diagnostics (a list,
    possibly empty). The caller keeps ``pm`` and ``op`` alive."""
    lib = _lib()
    with diagnostics(op.context) as found:
        ok = lib.PassManagerRunOnOp(capi_pointer(pm), capi_pointer(op))
    return None if ok else found
