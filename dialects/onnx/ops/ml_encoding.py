"""Categorical encoders of ai.onnx.ml: OneHotEncoder (v1) and LabelEncoder
(v1, v2, v4).

* OneHotEncoder: X [...] -> [..., len(cats)] f32.
* LabelEncoder: X's shape, the type of the values_* attribute (v1: int64
  <-> string by classes_strings).
"""
from __future__ import annotations

import math

import mlir.ir as ir
import numpy as np
import onnx

from onnx_mlir_py.dialects.onnx.types import elem_type
from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import i64
from onnx_mlir_py.dialects.onnx.attributes import is_string_tensor_attr, strings_of

ML = "ai.onnx.ml"
LABEL_ENCODER = (1, 2, 4)


def string() -> ir.Type:
    return ir.Type.parse("!onnx.string")


@shape_rule("OneHotEncoder", 1, domain=ML)
def _one_hot_encoder_shape(op: OnnxOp):
    cats = op.attrs.cats_int64s or op.attrs.cats_strings or []
    x = op.shape(op.input(0))
    return [tensor(None if x is None else x + (len(cats),), ir.F32Type.get())]


@verifier("OneHotEncoder", 1, domain=ML)
def _one_hot_encoder_verify(op: OnnxOp):
    if bool(op.attrs.cats_int64s) == bool(op.attrs.cats_strings):
        op.fail("exactly one of cats_int64s and cats_strings must be given")


_VALUE_TYPES = (("values_strings", onnx.TensorProto.STRING),
                ("values_int64s", onnx.TensorProto.INT64),
                ("values_floats", onnx.TensorProto.FLOAT))
_KEY_ATTRS = ("keys_strings", "keys_int64s", "keys_floats")


def label_table(op: OnnxOp) -> tuple[np.ndarray, np.ndarray, object] | None:
    """(keys, values, default) as numpy arrays (object arrays of str for
    string keys / values); None for v1 (string <-> int64 by classes_strings)."""
    if op.version == 1:
        return None
    keys = vals = None
    if op.version >= 4 and op.attrs.has("keys_tensor"):
        keys = _tensor_values(op, "keys_tensor")
    if op.version >= 4 and op.attrs.has("values_tensor"):
        vals = _tensor_values(op, "values_tensor")
    for name in _KEY_ATTRS:
        if keys is None and op.attrs.has(name):
            keys = np.asarray(getattr(op.attrs, name))
    for name, _ in _VALUE_TYPES:
        if vals is None and op.attrs.has(name):
            vals = np.asarray(getattr(op.attrs, name))
    if keys is None or vals is None:
        op.fail("keys and values must be given")
    if len(keys) != len(vals):
        op.fail(f"{len(keys)} keys for {len(vals)} values")
    if vals.dtype.kind in "USO":
        default = op.attrs.default_string
        default = "_Unused" if default is None else default
        vals = vals.astype(object)
    elif vals.dtype.kind == "f":
        default = op.attrs.default_float
    else:
        default = op.attrs.default_int64
    if op.version >= 4 and op.attrs.has("default_tensor"):
        default = _tensor_values(op, "default_tensor")[0]
    if keys.dtype.kind in "USO":
        keys = keys.astype(object)
    return keys, vals, default


def _tensor_values(op: OnnxOp, name: str) -> np.ndarray:
    a = op.op.attributes[name]
    if is_string_tensor_attr(a):
        return np.array(strings_of(a), dtype=object)
    return np.asarray(getattr(op.attrs, name)).reshape(-1)


@shape_rule("LabelEncoder", *LABEL_ENCODER, domain=ML)
def _label_encoder_shape(op: OnnxOp):
    et = None
    if "values_tensor" in op.spec.attributes and op.attrs.has("values_tensor"):
        a = op.op.attributes["values_tensor"]
        if isinstance(a, ir.DenseElementsAttr) or is_string_tensor_attr(a):
            et = a.type.element_type
    for name, code in _VALUE_TYPES:
        if et is None and name in op.spec.attributes and op.attrs.has(name):
            et = elem_type(code)
    if et is None and op.version == 1:  # v1: classes_strings <-> int64
        et = string() if str(op.elem(op.input(0))) == "i64" else i64()
    return [tensor(op.shape(op.input(0)), et) if et is not None else None]


@verifier("LabelEncoder", 2, 4, domain=ML)
def _label_encoder_verify(op: OnnxOp):
    t = label_table(op)
    if t is not None and t[0].dtype.kind == "f" and \
            len({k for k in t[0].tolist() if not math.isnan(k)}) != \
            len([k for k in t[0].tolist() if not math.isnan(k)]):
        op.fail("keys_floats has a key twice")
