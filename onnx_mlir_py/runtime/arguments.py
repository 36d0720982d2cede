"""``ExecutionSession.run``'s arguments checked against the input signature
(count, dtype, rank, static dims: a :class:`RuntimeInputError` naming the
input), and the data addresses handed to the library.
"""
from __future__ import annotations

import ctypes

import numpy as np

from onnx_mlir_py.runtime.errors import RuntimeInputError


def check_inputs(inputs, fast: list, specs: list) -> list[np.ndarray]:
    """``inputs`` as C-contiguous arrays; ``fast``: per input (dtype, rank,
    static shape or None, code), ``specs``: the input TensorSigs."""
    # common case first: C-contiguous arrays of the expected dtype and static shape
    if type(inputs) in (list, tuple) and len(inputs) == len(fast):
        ok = True
        for x, (dt, _, shape, _) in zip(inputs, fast):
            if type(x) is not np.ndarray or x.dtype != dt or shape is None or \
                    x.shape != shape or not x.flags.c_contiguous:
                ok = False
                break
        if ok:
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


def address(a: np.ndarray) -> int | None:
    """Data address of a C-contiguous array (None when empty). A writable
    array's comes from the buffer protocol, about 4x cheaper than
    ``a.ctypes.data``."""
    if not a.size:
        return None
    if a.flags.writeable and a.dtype.isbuiltin == 1:  # ml_dtypes: no buffer format
        return ctypes.addressof(ctypes.c_char.from_buffer(a))
    return a.ctypes.data
