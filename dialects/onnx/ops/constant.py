"""Constant: the type of whichever value* attribute is set (exactly one)."""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import i64


CONSTANT = (1, 9, 11, 12, 13, 19, 21, 23, 24, 25)
_VALUE_ATTRS = ("value", "sparse_value", "value_float", "value_floats", "value_int",
                "value_ints", "value_string", "value_strings")


@shape_rule("Constant", *CONSTANT)
def _constant_shape(op: OnnxOp):
    attrs = op.op.attributes
    if "value" in attrs:
        return [attrs["value"].type]
    string = ir.Type.parse("!onnx.string")
    for name, shape, et in (("value_int", lambda a: [], i64),
                            ("value_float", lambda a: [], ir.F32Type.get),
                            ("value_string", lambda a: [], lambda: string),
                            ("value_ints", lambda a: [len(a)], i64),
                            ("value_floats", lambda a: [len(a)], ir.F32Type.get),
                            ("value_strings", lambda a: [len(a)], lambda: string)):
        if name in attrs:
            return [tensor(shape(attrs[name]), et())]
    return [None]  # sparse_value: left to the importer's type


@verifier("Constant", *CONSTANT)
def _constant_verify(op: OnnxOp):
    given = [n for n in _VALUE_ATTRS if n in op.op.attributes]
    if len(given) != 1:
        op.fail(f"exactly one value attribute must be set, got "
                f"{len(given)}{' (' + ', '.join(given) + ')' if given else ''}")
