"""String tensors in and out of a model library (docs/design.md, "Strings").

In the C ABI a string tensor is an ONNX_TYPE_STRING OMTensor whose data is
``char *[]``: one pointer per element to a NUL-terminated UTF-8 buffer (as
onnx-mlir). Inputs: the strings of all string inputs are packed into one
bytes buffer per input, kept alive for the call; the pointer array is the
tensor's data. Outputs: the pointers are read back into a numpy object array
of ``str`` before the call's buffers are released.
"""
from __future__ import annotations

import ctypes

import numpy as np

from onnx_mlir_py.runtime.errors import RuntimeInputError

STRING_CODE = 8      # ONNX_TYPE_STRING


def as_object_array(x, what: str):
    """A str / bytes / object numpy array -> object array (other values unchanged,
    left to the session's checks)."""
    if isinstance(x, np.ndarray) and x.dtype.kind in "US":
        return x.astype(object)
    return x


def _utf8(v, what: str) -> bytes:
    if isinstance(v, str):
        b = v.encode("utf-8")
    elif isinstance(v, (bytes, np.bytes_)):
        b = bytes(v)
    else:
        raise RuntimeInputError(f"{what}: string tensor element {v!r} is a "
                                f"{type(v).__name__}, not str")
    if b"\0" in b:
        raise RuntimeInputError(f"{what}: string tensor element {v!r} contains a NUL character")
    return b


def to_pointers(x: np.ndarray, what: str) -> tuple[np.ndarray, object]:
    """Object array of str -> (int64 array of char* of the same shape, the
    buffer the pointers point into: keep it alive for the call)."""
    parts = [_utf8(v, what) for v in x.reshape(-1)]
    buf = ctypes.create_string_buffer(b"\0".join(parts) + b"\0")
    base = ctypes.addressof(buf)
    offs = np.zeros(len(parts), np.int64)
    if parts:
        offs[1:] = np.cumsum([len(p) + 1 for p in parts[:-1]], dtype=np.int64)
    return (offs + base).reshape(x.shape), buf


def from_pointers(p: np.ndarray) -> np.ndarray:
    """int64 array of char* -> object array of str (same shape)."""
    out = np.empty(p.shape, object)
    flat = out.reshape(-1)
    for k, a in enumerate(p.reshape(-1).tolist()):
        flat[k] = ctypes.string_at(a).decode("utf-8", errors="replace") if a else ""
    return out
