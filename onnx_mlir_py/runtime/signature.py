"""A model library's signatures (``omInputSignature`` / ``omOutputSignature``
JSON, onnx-mlir's format) in Python: element types to numpy dtypes and
ONNX_TYPE_* codes, :class:`TensorSig` entries, and the outputs whose values
the signature reinterprets (ZipMap rows).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from onnx_mlir_py.runtime.errors import ModelRunError, RuntimeInputError
from onnx_mlir_py.runtime.strings import STRING_CODE

# Signature type string -> numpy dtype, and ONNX_TYPE_* code.
SIG_TYPES: dict[str, tuple[np.dtype, int]] = {
    "f32": (np.dtype(np.float32), 1), "ui8": (np.dtype(np.uint8), 2),
    "i8": (np.dtype(np.int8), 3), "ui16": (np.dtype(np.uint16), 4),
    "i16": (np.dtype(np.int16), 5), "i32": (np.dtype(np.int32), 6),
    "i64": (np.dtype(np.int64), 7), "i1": (np.dtype(np.bool_), 9),
    "f16": (np.dtype(np.float16), 10), "f64": (np.dtype(np.float64), 11),
    "ui32": (np.dtype(np.uint32), 12), "ui64": (np.dtype(np.uint64), 13),
    # ml_dtypes (an onnx dependency): one element per byte for the 8/4/2-bit types
    "bf16": (np.dtype(ml_dtypes.bfloat16), 16),
    "f8E4M3FN": (np.dtype(ml_dtypes.float8_e4m3fn), 17),
    "f8E4M3FNUZ": (np.dtype(ml_dtypes.float8_e4m3fnuz), 18),
    "f8E5M2": (np.dtype(ml_dtypes.float8_e5m2), 19),
    "f8E5M2FNUZ": (np.dtype(ml_dtypes.float8_e5m2fnuz), 20),
    "ui4": (np.dtype(ml_dtypes.uint4), 21), "i4": (np.dtype(ml_dtypes.int4), 22),
    "f4E2M1FN": (np.dtype(ml_dtypes.float4_e2m1fn), 23),
    "f8E8M0FNU": (np.dtype(ml_dtypes.float8_e8m0fnu), 24),
    "ui2": (np.dtype(ml_dtypes.uint2), 25), "i2": (np.dtype(ml_dtypes.int2), 26),
    # numpy object arrays of str; char*[] in the library (runtime/strings.py)
    "string": (np.dtype(object), STRING_CODE),
}
CODE_TO_DTYPE = {code: dt for dt, code in SIG_TYPES.values() if code != STRING_CODE}
CODE_TO_DTYPE[STRING_CODE] = np.dtype(np.int64)     # the pointers, decoded after the copy
DTYPE_CODE = {dt: code for dt, code in SIG_TYPES.values() if code != STRING_CODE}


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
    for k, (dt, _) in SIG_TYPES.items():
        if dt == dtype:
            return k
    raise RuntimeInputError(f"unsupported numpy dtype {dtype}")


def zipmap_rows(scores: np.ndarray, labels: tuple, name: str) -> list[dict]:
    """A ZipMap output as onnxruntime returns it: one {label: score} per row."""
    if scores.ndim != 2 or scores.shape[1] != len(labels):
        raise ModelRunError(f"output '{name}' (ZipMap): scores of shape {list(scores.shape)} "
                            f"for {len(labels)} class labels")
    return [dict(zip(labels, row)) for row in scores.tolist()]
