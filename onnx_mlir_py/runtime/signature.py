"""A model library's signatures (``omInputSignature`` / ``omOutputSignature``
JSON, onnx-mlir's format) in Python: element types to numpy dtypes and
ONNX_TYPE_* codes, :class:`TensorSig` entries, and the outputs whose values
the signature reinterprets (ZipMap rows).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np

from onnx_mlir_py.runtime.errors import ModelRunError, RuntimeInputError
from onnx_mlir_py.runtime.strings import STRING_CODE

# The 8/4/2-bit and bf16 types come from ml_dtypes (an onnx dependency), one
# element per byte, imported on first need: ml_dtypes 0.7's import takes
# ~0.5 s (0.5.4's: 3 ms), and a float model's session never needs it.
# Signature type string -> (ml_dtypes name, ONNX_TYPE_* code).
_SMALL = {"bf16": ("bfloat16", 16), "f8E4M3FN": ("float8_e4m3fn", 17),
          "f8E4M3FNUZ": ("float8_e4m3fnuz", 18), "f8E5M2": ("float8_e5m2", 19),
          "f8E5M2FNUZ": ("float8_e5m2fnuz", 20), "ui4": ("uint4", 21), "i4": ("int4", 22),
          "f4E2M1FN": ("float4_e2m1fn", 23), "f8E8M0FNU": ("float8_e8m0fnu", 24),
          "ui2": ("uint2", 25), "i2": ("int2", 26)}
_SMALL_CODES = {code for _, code in _SMALL.values()}
_loaded = False


def _small(key) -> bool:
    """Whether ``key`` (a signature type, a code or a dtype) is an ml_dtypes type's."""
    if isinstance(key, str):
        return key in _SMALL
    if isinstance(key, int):
        return key in _SMALL_CODES
    return isinstance(key, np.dtype) and key.type.__module__.split(".")[0] == "ml_dtypes"


def _load_small() -> None:
    """Add the ml_dtypes types to the three tables (once)."""
    global _loaded
    if _loaded:
        return
    import ml_dtypes
    for name, (attr, code) in _SMALL.items():
        dt = np.dtype(getattr(ml_dtypes, attr))
        dict.__setitem__(SIG_TYPES, name, (dt, code))
        dict.__setitem__(CODE_TO_DTYPE, code, dt)
        dict.__setitem__(DTYPE_CODE, dt, code)
    _loaded = True


class _Types(dict):
    """A table that adds the ml_dtypes types when one is asked for (a key
    :func:`_small` names) or when it is iterated."""

    def __missing__(self, key):
        if not _loaded and _small(key):
            _load_small()
            if dict.__contains__(self, key):
                return dict.__getitem__(self, key)
        raise KeyError(key)

    def __contains__(self, key) -> bool:
        if not dict.__contains__(self, key) and not _loaded and _small(key):
            _load_small()
        return dict.__contains__(self, key)

    def get(self, key, default=None):
        return self[key] if key in self else default

    def __iter__(self):
        _load_small()
        return dict.__iter__(self)

    def keys(self):
        _load_small()
        return dict.keys(self)

    def values(self):
        _load_small()
        return dict.values(self)

    def items(self):
        _load_small()
        return dict.items(self)


# Signature type string -> numpy dtype, and ONNX_TYPE_* code.
SIG_TYPES: dict[str, tuple[np.dtype, int]] = _Types({
    "f32": (np.dtype(np.float32), 1), "ui8": (np.dtype(np.uint8), 2),
    "i8": (np.dtype(np.int8), 3), "ui16": (np.dtype(np.uint16), 4),
    "i16": (np.dtype(np.int16), 5), "i32": (np.dtype(np.int32), 6),
    "i64": (np.dtype(np.int64), 7), "i1": (np.dtype(np.bool_), 9),
    "f16": (np.dtype(np.float16), 10), "f64": (np.dtype(np.float64), 11),
    "ui32": (np.dtype(np.uint32), 12), "ui64": (np.dtype(np.uint64), 13),
    # numpy object arrays of str; char*[] in the library (runtime/strings.py)
    "string": (np.dtype(object), STRING_CODE),
})
CODE_TO_DTYPE = _Types({code: dt for dt, code in dict.values(SIG_TYPES) if code != STRING_CODE})
CODE_TO_DTYPE[STRING_CODE] = np.dtype(np.int64)     # the pointers, decoded after the copy
DTYPE_CODE = _Types({dt: code for dt, code in dict.values(SIG_TYPES) if code != STRING_CODE})


@dataclass(frozen=True)
class TensorSig:
    """One entry of a parsed signature; ``dims`` uses -1 for dynamic. A
    sequence / optional (``kind`` "seq", "opt", "opt_seq") describes its
    elements (``dims`` None: any rank)."""
    name: str
    type: str
    dims: tuple[int, ...] | None
    kind: str = "tensor"
    zipmap: tuple = ()      # class labels of an output that was a ZipMap
    labels: tuple = ()      # string class labels an int64 output indexes

    @property
    def dtype(self) -> np.dtype:
        return SIG_TYPES[self.type][0]

    @property
    def shape(self) -> tuple:
        """Dims with None for dynamic ones."""
        return None if self.dims is None else tuple(None if d < 0 else d for d in self.dims)


def parse_sig(text: str) -> list[TensorSig]:
    return [TensorSig(e.get("name", f"#{i}"), e["type"],
                      None if e["dims"] is None else tuple(int(d) for d in e["dims"]),
                      e.get("kind", "tensor"), tuple(e.get("zipmap", ())),
                      tuple(e.get("labels", ())))
            for i, e in enumerate(json.loads(text))]


def sig_type(dtype: np.dtype) -> str:
    """The signature type string of a numpy dtype."""
    if _small(dtype):
        _load_small()
    for k, (dt, _) in dict.items(SIG_TYPES):
        if dt == dtype:
            return k
    raise RuntimeInputError(f"unsupported numpy dtype {dtype}")


def zipmap_rows(scores: np.ndarray, labels: tuple, name: str) -> list[dict]:
    """A ZipMap output as onnxruntime returns it: one {label: score} per row."""
    if scores.ndim != 2 or scores.shape[1] != len(labels):
        raise ModelRunError(f"output '{name}' (ZipMap): scores of shape {list(scores.shape)} "
                            f"for {len(labels)} class labels")
    return [dict(zip(labels, row)) for row in scores.tolist()]
