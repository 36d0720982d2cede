"""Sequence and optional values across the Python runtime (ctypes).

A model whose signature has a ``"kind"`` (``seq``, ``opt``, ``opt_seq``:
runtime/c/OnnxMlirRuntime.h) takes and returns, in those positions, a list
of numpy arrays (a sequence) and, for an optional, its value or ``None``.
Used by ``ExecutionSession.run`` instead of the one-call array path.
"""
from __future__ import annotations

import ctypes

import numpy as np

from onnx_mlir_py.runtime.errors import ModelRunError, RuntimeInputError

_P, _I64 = ctypes.c_void_p, ctypes.c_int64


class ValueAPI:
    """The sequence / None entry points of one library."""

    def __init__(self, lib, bind):
        self.create_seq = bind(lib, "omTensorCreateSeq", _P, [_P])
        self.get_seq = bind(lib, "omTensorGetSeq", _P, [_P])
        self.create_none = bind(lib, "omTensorCreateNone", _P, [])
        self.is_none = bind(lib, "omTensorIsNone", _I64, [_P])
        self.list_create_owning = bind(lib, "omTensorListCreateWithOwnership", _P,
                                       [ctypes.POINTER(_P), _I64, _I64])


def check_value(x, spec, what: str, check_array) -> object:
    """``x`` checked against a sequence / optional ``spec`` (element arrays via
    ``check_array(array, spec, what)``); returns the normalised value."""
    kind = spec.kind
    if kind in ("opt", "opt_seq") and x is None:
        return None
    if kind == "opt":
        return check_array(x, spec, what)
    if not isinstance(x, (list, tuple)):
        raise RuntimeInputError(f"{what}: expected a list of numpy arrays (a sequence), got "
                                f"{type(x).__name__}")
    return [check_array(e, spec, f"{what} element {j}") for j, e in enumerate(x)]


def make_input(sess, x, spec, keep: list) -> int:
    """An OMTensor for input value ``x`` (arrays referenced, not copied: kept
    alive through ``keep``)."""
    api = sess._values
    if x is None:
        t = api.create_none()
    elif isinstance(x, list):
        elems = (_P * max(1, len(x)))()
        for j, a in enumerate(x):
            elems[j] = _tensor(sess, a, keep)
        keep.append(elems)
        lst = sess._list_create(elems, len(x))
        if not lst:
            raise ModelRunError(f"omTensorListCreate failed: {sess._error()}")
        t = api.create_seq(lst)
    else:
        t = _tensor(sess, x, keep)
    if not t:
        raise ModelRunError(f"creating an input value failed: {sess._error()}")
    return t


def _tensor(sess, a: np.ndarray, keep: list) -> int:
    keep.append(a)
    return sess._new_tensor(a)


def read_output(sess, t, spec) -> object:
    """Python value of output OMTensor ``t``: an array, a list of arrays, or None."""
    api = sess._values
    if api.is_none(t):
        return None
    lst = api.get_seq(t)
    if lst:
        return [sess._to_numpy(sess._list_get(lst, j)) for j in range(sess._list_size(lst))]
    return sess._to_numpy(t)


def empty_array_check(x, spec, what):
    """Default element check: a numpy array of the element dtype and rank."""
    if isinstance(x, np.generic):
        x = np.asarray(x)
    if not isinstance(x, np.ndarray):
        raise RuntimeInputError(f"{what}: expected a numpy array, got {type(x).__name__}")
    if x.dtype != spec.dtype:
        raise RuntimeInputError(f"{what}: expected dtype {spec.dtype} ({spec.type}), "
                                f"got {x.dtype}")
    if spec.dims is not None:
        if x.ndim != len(spec.dims):
            raise RuntimeInputError(f"{what}: expected rank {len(spec.dims)}, got rank "
                                    f"{x.ndim} (shape {list(x.shape)})")
        for k, (want, got) in enumerate(zip(spec.dims, x.shape)):
            if want >= 0 and want != got:
                raise RuntimeInputError(f"{what}: dimension {k}: expected {want}, got {got}")
    return x if x.flags.c_contiguous else np.array(x, order="C")


def run_values(sess, inputs) -> list:
    """``ExecutionSession.run`` for a model with sequence / optional values."""
    specs = sess.input_specs
    if isinstance(inputs, np.ndarray) or not hasattr(inputs, "__len__") or \
            len(inputs) != len(specs):
        n = len(inputs) if hasattr(inputs, "__len__") else "no list"
        raise RuntimeInputError(f"expected {len(specs)} input(s), got {n}")
    vals = []
    for i, (x, s) in enumerate(zip(inputs, specs)):
        what = f"input {i} ('{s.name}')"
        vals.append(empty_array_check(x, s, what) if s.kind == "tensor"
                    else check_value(x, s, what, empty_array_check))
    keep: list = []
    ts = (_P * max(1, len(vals)))()
    made = 0
    try:
        for i, (x, s) in enumerate(zip(vals, specs)):
            ts[i] = make_input(sess, x, s, keep)
            made += 1
        in_list = sess._list_create(ts, len(vals))
        if not in_list:
            raise ModelRunError(f"omTensorListCreate failed: {sess._error()}")
        made = 0          # the list destroys the tensors (and their sequences)
        try:
            out = sess._run(in_list)
            if not out:
                raise sess._run_failure()
            try:
                return [read_output(sess, sess._list_get(out, i), s)
                        for i, s in enumerate(sess.output_specs)]
            finally:
                sess._list_destroy(out)
        finally:
            sess._list_destroy(in_list)
    finally:
        for i in range(made):
            sess._destroy(ts[i])
