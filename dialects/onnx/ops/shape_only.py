"""Ops that are verified and typed (--EmitONNXIR) but have no lowering yet:
ImageDecoder. An op that gets a lowering moves to its family's file.
"""
from __future__ import annotations

from onnx_mlir_py.dialects.onnx.types import elem_type
from onnx_mlir_py.registry import shape_rule
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor


# -- data-dependent output sizes: rank and known dims only --------------------------

@shape_rule("ImageDecoder", 20)
def _image_decoder_shape(op: OnnxOp):
    return [tensor((None, None, None), elem_type(2))]  # HWC uint8
