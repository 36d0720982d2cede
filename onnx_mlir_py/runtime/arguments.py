"""``ExecutionSession.run``'s arguments checked against the input signature
(count, dtype, rank, static dims: a :class:`RuntimeInputError` naming the
input), and the data addresses handed to the library.
"""
from __future__ import annotations

import ctypes

import numpy as np

from onnx_mlir_py.runtime.errors import RuntimeInputError


def fast_specs(specs: list) -> list:
    """Per input TensorSig: (dtype, static shape or None when a dim is
    dynamic, the C-contiguous strides of that shape or None), for
    :func:`check_inputs`' common case."""
    fast = []
    for s in specs:
        shape = tuple(s.dims) if s.dims is not None and min(s.dims, default=0) >= 0 else None
        fast.append((s.dtype, shape, None if shape is None else
                     np.empty(0, s.dtype).reshape(0, *shape).strides[1:] if shape else ()))
    return fast


def static_match(inputs, fast: list) -> bool:
    """True when ``inputs`` is a list or tuple of exactly the signature's
    arrays: its dtypes, static shapes and C strides (``fast``:
    :func:`fast_specs`). Tuple compares, no flags object: the common case's
    whole check. Anything else (a dynamic dim, a contiguous array with odd
    strides on a dim of 1, ...) is False: it takes the full check."""
    if type(inputs) not in (list, tuple) or len(inputs) != len(fast):
        return False
    for x, (dt, shape, strides) in zip(inputs, fast):
        if type(x) is not np.ndarray or x.dtype != dt or shape is None or \
                x.shape != shape or x.strides != strides:
            return False
    return True


def check_inputs(inputs, fast: list, specs: list) -> list[np.ndarray]:
    """``inputs`` as C-contiguous arrays; ``fast``: :func:`fast_specs`,
    ``specs``: the input TensorSigs."""
    if static_match(inputs, fast):
        return list(inputs)
    if isinstance(inputs, np.ndarray) or not hasattr(inputs, "__len__"):
        raise RuntimeInputError("run() takes a list of numpy arrays, got "
                                f"{type(inputs).__name__}")
    if len(inputs) != len(specs):
        names = ", ".join(f"'{s.name}'" for s in specs)
        raise RuntimeInputError(f"expected {len(specs)} input(s) ({names}), "
                                f"got {len(inputs)}")
    arrays = []
    for i, (x, s) in enumerate(zip(inputs, specs)):
        what = f"input {i} ('{s.name}')"
        if isinstance(x, np.generic):        # a numpy scalar is a 0-d array
            x = np.asarray(x)
        if not isinstance(x, np.ndarray):
            raise RuntimeInputError(f"{what}: expected a numpy array, got "
                                    f"{type(x).__name__}")
        if x.dtype != s.dtype:
            raise RuntimeInputError(f"{what}: expected dtype {s.dtype} ({s.type}), "
                                    f"got {x.dtype}")
        if x.ndim != len(s.dims):
            raise RuntimeInputError(f"{what}: expected rank {len(s.dims)} "
                                    f"(shape {list(s.shape)}), got rank {x.ndim} "
                                    f"(shape {list(x.shape)})")
        for k, (want, got) in enumerate(zip(s.dims, x.shape)):
            if want >= 0 and want != got:
                raise RuntimeInputError(f"{what}: dimension {k}: expected {want}, got "
                                        f"{got} (expected shape {list(s.shape)}, got "
                                        f"{list(x.shape)})")
        arrays.append(x if x.flags.c_contiguous else np.array(x, order="C"))
    return arrays


_addressof, _from_buffer = ctypes.addressof, ctypes.c_char.from_buffer


def address(a: np.ndarray) -> int | None:
    """Data address of a C-contiguous array (None when empty). A writable
    array's comes from the buffer protocol, about 4x cheaper than
    ``a.ctypes.data`` (0.27 against 1.0 us, Zen 4); a read-only or empty
    array, or one whose dtype exports no buffer, fails there and takes
    ``a.ctypes.data``."""
    try:
        return _addressof(_from_buffer(a))
    except Exception:       # read-only, empty (0 bytes), no buffer format
        return a.ctypes.data if a.size else None
