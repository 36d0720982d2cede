"""Ops that are verified and typed (--EmitONNXIR) but have no lowering yet:
DeformConv,
ImageDecoder. An op that
gets a lowering moves to its family's file.

* DeformConv: the Conv output shape of X and W.
"""
from __future__ import annotations

from onnx_mlir_py.dialects.onnx.types import elem_type
from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import single_result
from onnx_mlir_py.dialects.onnx.ops.conv import conv_shape


shape_rule("DeformConv", 19, 22)(single_result(lambda op: conv_shape(op, 0, 1, 3)))


verifier("DeformConv", 19, 22)(lambda op: conv_shape(op, 0, 1, 3))


# -- data-dependent output sizes: rank and known dims only --------------------------

@shape_rule("ImageDecoder", 20)
def _image_decoder_shape(op: OnnxOp):
    return [tensor((None, None, None), elem_type(2))]  # HWC uint8
