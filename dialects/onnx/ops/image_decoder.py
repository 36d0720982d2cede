"""ImageDecoder (opset 20): encoded bytes [N] uint8 -> pixels [H, W, C] uint8
(lowering: passes/onnx_to_linalg/image_decoder.py, decoding in the C runtime,
runtime/c/om_image.c). H and W are known only at run time; C is 3 for RGB and
BGR, 1 for Grayscale."""
from __future__ import annotations

from onnx_mlir_py.dialects.onnx.types import elem_type
from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import fmt

PIXEL_FORMATS = {"RGB": 3, "BGR": 3, "Grayscale": 1}


def pixel_format(op: OnnxOp) -> str:
    return op.attrs.pixel_format or "RGB"


@verifier("ImageDecoder", 20)
def _image_decoder_verify(op: OnnxOp):
    if pixel_format(op) not in PIXEL_FORMATS:
        op.fail(f"attribute 'pixel_format' = {pixel_format(op)!r}: expected one of "
                + ", ".join(map(repr, PIXEL_FORMATS)))
    x = op.shape(op.input(0))
    if x is not None and len(x) != 1:
        op.fail(f"input 'encoded_stream' has shape {fmt(x)}: expected [N] (1-D bytes)")


@shape_rule("ImageDecoder", 20)
def _image_decoder_shape(op: OnnxOp):
    return [tensor((None, None, PIXEL_FORMATS.get(pixel_format(op))), elem_type(2))]  # HWC uint8
