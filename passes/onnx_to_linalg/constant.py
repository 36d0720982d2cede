"""Constant -> arith.constant (dense and dense_resource, signless types)."""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
from mlir.dialects import arith, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, is_storage_type, to_signless
from onnx_mlir_py.passes.onnx_to_linalg.storage_consts import storage_elements

_SIGNED = {1: np.int8, 8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


def is_dense_resource(attr: ir.Attribute) -> bool:
    # parsed attributes are not downcast to DenseResourceElementsAttr in Python
    return isinstance(attr, ir.DenseResourceElementsAttr) or \
        str(attr).startswith("dense_resource<")


def _signless_resource(attr: ir.Attribute, t: ir.RankedTensorType,
                       st: ir.RankedTensorType) -> ir.Attribute | None:
    """The unsigned ``dense_resource`` ``attr`` (type ``t``) as a new
    resource of the signless type ``st`` with the same bytes, or None when
    its element width has no numpy type. A ``tensor.bitcast`` of the
    unsigned constant does not bufferize (a uint8 initializer read at run
    time: a Gather from a uint8 embedding table, a DequantizeLinear of uint8
    weights at -O0 failed to compile)."""
    from onnx_mlir_py.ir_resources import resource_attr, resource_name
    from onnx_mlir_py.passes.onnx_to_linalg.storage_consts import resource_bytes
    name, width = resource_name(attr), st.element_type.width
    if name is None or width not in _SIGNED or width == 1:
        return None
    arr = np.frombuffer(resource_bytes(attr, t), dtype=_SIGNED[width])
    if arr.size != int(np.prod(st.shape, dtype=np.int64)):
        return None
    return resource_attr(np.ascontiguousarray(arr.reshape(list(st.shape))),
                         f"{name}_signless", st)


def signless_elements(attr: ir.Attribute, t: ir.Type) -> tuple[ir.Attribute, bool]:
    """(attribute with signless type, needs_bitcast). Dense data is retyped;
    an unsigned dense_resource becomes a signless resource of the same
    bytes (:func:`_signless_resource`); needs_bitcast only when its bytes
    cannot be read (the caller bitcasts the constant)."""
    st = to_signless(t)
    if st == t:
        return attr, False
    if is_storage_type(t.element_type):
        return storage_elements(attr, t, st), False
    if isinstance(attr, ir.DenseElementsAttr):
        width = t.element_type.width
        if attr.is_splat:
            v = int(ir.IntegerAttr(attr.get_splat_value()).value)
            return ir.DenseElementsAttr.get_splat(st, ir.IntegerAttr.get(
                st.element_type, v - (1 << width) if v >= 1 << (width - 1) else v)), False
        arr = np.ascontiguousarray(np.array(attr)).reshape(list(t.shape))
        arr = arr.view(_SIGNED[width]) if arr.dtype.itemsize * 8 == width else \
            arr.astype(_SIGNED[width])
        return ir.DenseElementsAttr.get(arr, type=st), False
    retyped = _signless_resource(attr, t, st) if t.has_static_shape else None
    return (attr, True) if retyped is None else (retyped, False)


def _scalar_attr(op: OnnxOp, t: ir.RankedTensorType) -> ir.Attribute:
    a = op.op.attributes
    et = t.element_type
    for name, dtype in (("value_float", np.float32), ("value_floats", np.float32),
                        ("value_int", np.int64), ("value_ints", np.int64)):
        if name in a:
            val = np.asarray(op.attrs.__getattr__(name), dtype=dtype).reshape(list(t.shape))
            return ir.DenseElementsAttr.get(np.ascontiguousarray(val), type=t) \
                if val.size else ir.DenseElementsAttr.get(np.zeros((0,), dtype), type=t)
    op.fail(f"Constant without a supported value attribute ({', '.join(n.name for n in a)})")


@lowering("Constant", 9, 11, 12, 13, 19, 21, 23, 24, 25)
def lower_constant(op: OnnxOp, b: LoweringContext) -> list[ir.Value]:
    t = op.op.results[0].type
    if str(getattr(t, "element_type", "")) == "!onnx.string":
        return [_string_constant(op, b, t)]
    if "value" in op.op.attributes:
        attr = op.op.attributes["value"]
        if not (isinstance(attr, ir.DenseElementsAttr) or is_dense_resource(attr)):
            op.fail(f"unsupported constant value {attr}")
    else:
        attr = _scalar_attr(op, t)
    attr, bitcast = signless_elements(attr, t)
    c = arith.constant(t if bitcast else to_signless(t), attr)
    if bitcast:
        c = tensor.bitcast(to_signless(t), c)
    return [c]


def _string_constant(op: OnnxOp, b: LoweringContext, t: ir.RankedTensorType) -> ir.Value:
    """A string tensor constant: an i64 tensor of char* to literals (strings_ml.py)."""
    from onnx_mlir_py.dialects.onnx.attributes import strings_of
    from onnx_mlir_py.passes.onnx_to_linalg.strings_ml import string_literal
    a = op.op.attributes
    if "value" in a:
        vals = strings_of(a["value"])
    elif "value_string" in a:
        vals = [ir.StringAttr(a["value_string"]).value]
    elif "value_strings" in a:
        arr = a["value_strings"]
        vals = [ir.StringAttr(arr[i]).value for i in range(len(arr))]
    else:
        op.fail("string Constant without a value")
    st = to_signless(t)
    if not vals:
        return tensor.empty(list(st.shape), st.element_type)
    return tensor.from_elements(st, [string_literal(b, v) for v in vals])
