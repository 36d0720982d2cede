"""String ops and text/signal helpers.

* StringSplit: Y is X's shape plus a (dynamic) last dim; Z (int64) is X's shape.
* StringConcat: broadcast of X and Y. RegexFullMatch: bool, X's shape.
* StringNormalizer: [C] -> [?], [1, C] -> [1, ?] (stopwords may drop items).
* HannWindow / HammingWindow / BlackmanWindow: [size] (MelWeightMatrix:
  dft.py);
  CenterCropPad: the input with the given dims replaced.
"""
from __future__ import annotations


import mlir.ir as ir
import onnx

from onnx_mlir_py.dialects.onnx.types import elem_type
from onnx_mlir_py.registry import shape_rule
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.broadcast import broadcast_shapes
from onnx_mlir_py.dialects.onnx.ops.common import i64, int_values, norm_axes
from onnx_mlir_py.dialects.onnx.ops.conv import opt_attr


def string() -> ir.Type:
    return ir.Type.parse("!onnx.string")


@shape_rule("StringSplit", 20)
def _string_split_shape(op: OnnxOp):
    s = op.shape(op.input(0))
    return [tensor(None if s is None else s + (None,), string()), tensor(s, i64())]


@shape_rule("StringConcat", 20)
def _string_concat_shape(op: OnnxOp):
    return [tensor(broadcast_shapes(op, [op.shape(op.input(0)), op.shape(op.input(1))]),
                   string())]


@shape_rule("RegexFullMatch", 20)
def _regex_shape(op: OnnxOp):
    return [tensor(op.shape(op.input(0)), ir.IntegerType.get_signless(1))]


@shape_rule("StringNormalizer", 10)
def _string_normalizer_shape(op: OnnxOp):
    s = op.shape(op.input(0))
    if s is None:
        return [tensor(None, string())]
    return [tensor(s[:-1] + (None,), string())]


def _window_shape(op: OnnxOp):
    size = int_values(op.input(0))
    et = elem_type(opt_attr(op, "output_datatype", onnx.TensorProto.FLOAT))
    return [tensor((size[0] if size else None,), et)]


for _w in ("HannWindow", "HammingWindow", "BlackmanWindow"):
    shape_rule(_w, 17)(_window_shape)


@shape_rule("CenterCropPad", 18)
def _center_crop_pad_shape(op: OnnxOp):
    x = op.shape(op.input(0))
    et = op.elem(op.input(0))
    if et is None:
        return [None]
    target = int_values(op.input(1))
    if x is None or target is None:
        return [tensor(None if x is None else (None,) * len(x), et)]
    axes = op.attrs.axes
    axes = norm_axes(op, axes, len(x)) if axes else list(range(len(x)))
    out = list(x)
    for a, t in zip(axes, target):
        out[a] = t
    return [tensor(out, et)]
