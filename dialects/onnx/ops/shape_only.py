"""Ops that are verified and typed (--EmitONNXIR) but have no lowering yet:
DeformConv, STFT,
ImageDecoder. An op that
gets a lowering moves to its family's file.

* DeformConv: the Conv output shape of X and W.
"""
from __future__ import annotations

from onnx_mlir_py.dialects.onnx.types import elem_type
from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import const_ints, single_result
from onnx_mlir_py.dialects.onnx.ops.conv import conv_shape


shape_rule("DeformConv", 19, 22)(single_result(lambda op: conv_shape(op, 0, 1, 3)))


verifier("DeformConv", 19, 22)(lambda op: conv_shape(op, 0, 1, 3))


# -- data-dependent output sizes: rank and known dims only --------------------------

@shape_rule("ImageDecoder", 20)
def _image_decoder_shape(op: OnnxOp):
    return [tensor((None, None, None), elem_type(2))]  # HWC uint8


@shape_rule("STFT", 17)
def _stft_shape(op: OnnxOp):
    s, et = op.shape(op.input(0)), op.elem(op.input(0))
    if et is None:
        return [None]
    step = const_ints(op.input(1))
    length = None
    if op.input(3) is not None:
        c = const_ints(op.input(3))
        length = c[0] if c else None
    elif op.input(2) is not None:
        w = op.shape(op.input(2))
        length = w[0] if w else None
    if s is None:
        return [tensor(None, et)]
    frames = bins = None
    if length is not None:
        bins = length // 2 + 1 if op.attrs.onesided else length
        if step and s[1] is not None:
            frames = (s[1] - length) // step[0] + 1
    return [tensor((s[0], frames, bins, 2), et)]

