"""Cast (element type ``to``) and CastLike (the element type of input 1):
the input's shape. BitCast (v26): the input's shape, type ``to`` of the
same bit width."""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.types import elem_type
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import input_shape, single_result


CAST = (6, 9, 13, 19, 21, 23, 24, 25, 28)
CAST_LIKE = (15, 19, 21, 23, 24, 25)


def _cast_elem(op: OnnxOp):
    try:
        return elem_type(op.attrs.to)
    except ValueError:
        op.fail(f"attribute 'to' ({op.attrs.to}) is not a supported element type")


@shape_rule("Cast", *CAST)
def _cast_shape(op: OnnxOp):
    return [tensor(op.shape(op.input(0)), _cast_elem(op))]


@verifier("Cast", *CAST)
def _cast_verify(op: OnnxOp):
    _cast_elem(op)


shape_rule("CastLike", *CAST_LIKE)(single_result(input_shape, elem_input=1))


@shape_rule("BitCast", 26)
def _bitcast_shape(op: OnnxOp):
    return [tensor(op.shape(op.input(0)), elem_type(op.attrs.to))]


@verifier("BitCast", 26)
def _bitcast_verify(op: OnnxOp):
    src = op.elem(op.input(0))
    dst = elem_type(op.attrs.to)
    width = _bit_width
    if src is not None and width(src) and width(dst) and width(src) != width(dst):
        op.fail(f"cannot bit-cast {src} ({width(src)} bits) to {dst} ({width(dst)} bits): "
                f"the widths must be equal")


def _bit_width(t) -> int | None:
    import mlir.ir as ir
    if isinstance(t, (ir.IntegerType,)):
        return 8 if t.width == 1 else t.width  # bool is one byte
    if isinstance(t, ir.FloatType):
        return t.width
    if isinstance(t, ir.ComplexType):
        w = _bit_width(t.element_type)
        return None if w is None else 2 * w
    return None
