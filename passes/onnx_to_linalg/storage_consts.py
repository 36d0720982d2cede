"""Constants of the one-byte storage types (float8, float4, int4, int2;
builder.STORAGE_TYPES) as ``i8`` elements holding their bits.

The MLIR Python bindings cannot read such attributes (no buffer protocol,
no element access for f8/f4/i4/i2), so the bits come from the printed form:
``dense_resource`` blobs through ir_resources, dense elements from their
text (integers in decimal, floats in decimal or as ``0xHH`` bits; a decimal
float is rounded to the format with ml_dtypes, exact since the printed
value is far closer than half a step of an 8-bit format).
"""
from __future__ import annotations

import re

import ml_dtypes
import mlir.ir as ir
import numpy as np

from onnx_mlir_py.ir_resources import resource_blobs, resource_name

_ML = {"f8E4M3FN": ml_dtypes.float8_e4m3fn, "f8E4M3FNUZ": ml_dtypes.float8_e4m3fnuz,
       "f8E5M2": ml_dtypes.float8_e5m2, "f8E5M2FNUZ": ml_dtypes.float8_e5m2fnuz,
       "f8E8M0FNU": ml_dtypes.float8_e8m0fnu, "f4E2M1FN": ml_dtypes.float4_e2m1fn}
_BITS = {"i4": 4, "si4": 4, "ui4": 4, "i2": 2, "si2": 2, "ui2": 2}


def resource_bytes(attr: ir.Attribute, t: ir.RankedTensorType) -> bytes:
    """The bytes of the ``dense_resource`` constant ``attr`` of type ``t``
    (through a print of a scratch constant, ir_resources.py)."""
    from mlir.dialects import arith
    name = resource_name(attr)
    with ir.Location.unknown():
        scratch = ir.Module.create()
        with ir.InsertionPoint(scratch.body):
            op = arith.ConstantOp(t, attr).operation
        return resource_blobs([op])[name]


def _tokens(text: str) -> list[str]:
    body = text[text.index("dense<") + 6:text.rindex("> :")]
    if body.startswith('"0x'):
        return ["#" + body[3:-1]]
    return [tok.strip() for tok in body.replace("[", "").replace("]", "").split(",")]


def _element_bits(tok: str, et: str) -> int:
    if tok.startswith("0x"):
        return int(tok, 16) & 0xFF
    if et in _BITS:                       # MLIR prints a zero i2 as nothing
        return (int(tok) if tok else 0) & ((1 << _BITS[et]) - 1)
    if et == "f8E8M0FNU":                 # a power of two: its exponent
        return int(round(np.log2(float(tok)))) + 127
    v = np.array([float(tok)], np.float64).astype(_ML[et])
    return int(v.view(np.uint8)[0])


def storage_bits(attr: ir.Attribute, t: ir.RankedTensorType) -> np.ndarray:
    """The elements of ``attr`` (type ``t``) as uint8 bits, in ``t``'s shape."""
    et = str(t.element_type)
    n = int(np.prod(list(t.shape), dtype=np.int64))
    if n == 0:                            # printed as dense<>: no tokens to read
        return np.zeros(list(t.shape), np.uint8)
    if resource_name(attr) is not None:
        data = np.frombuffer(resource_bytes(attr, t), np.uint8)
        if data.size != n:
            raise ValueError(f"resource of {data.size} bytes for {n} elements of {et}")
        mask = (1 << _BITS[et]) - 1 if et in _BITS else 0xFF
        return (data & mask).reshape(list(t.shape))
    toks = _tokens(str(attr))
    if len(toks) == 1 and toks[0].startswith("#"):
        data = np.frombuffer(bytes.fromhex(toks[0][1:]), np.uint8)
        vals = data if data.size == n else np.full(n, data[0], np.uint8)
    else:
        vals = np.array([_element_bits(tok, et) for tok in toks], np.uint8)
        if vals.size == 1 and n != 1:
            vals = np.full(n, vals[0], np.uint8)
    if vals.size != n:
        raise ValueError(f"read {vals.size} elements of {et} for {n}")
    return vals.reshape(list(t.shape))


def storage_elements(attr: ir.Attribute, t: ir.RankedTensorType,
                     st: ir.RankedTensorType) -> ir.Attribute:
    """``attr`` retyped to the i8 container type ``st``."""
    bits = storage_bits(attr, t)
    if bits.size == 0:
        return ir.DenseElementsAttr.get(np.zeros((0,), np.int8), type=st)
    return ir.DenseElementsAttr.get(np.ascontiguousarray(bits.view(np.int8)), type=st)
