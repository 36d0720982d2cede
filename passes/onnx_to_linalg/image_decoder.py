"""ImageDecoder (opset 20): decodes in the C runtime (runtime/c/om_image.c).

The encoded bytes go in as their strided view (``bufferization.to_buffer`` +
``memref.extract_strided_metadata``); ``om_image_decode`` decodes them into
the run arena and returns the image, ``om_image_dim`` gives H and W (known
only at run time), and ``om_image_read`` copies the pixels into a fresh
``memref.alloc`` [H, W, C] wrapped by ``bufferization.to_tensor`` (restrict),
as sequence.py reads a sequence element. C is 3 (RGB, BGR) or 1 (Grayscale:
Pillow's convert("L"), as onnx.reference).

Decoded: BMP, PNG (not interlaced, bit depth 8, or 1/2/4 for gray and
palette), PNM (P1-P6, maxval up to 255); alpha is dropped. A corrupt or
truncated image, or a format or feature not decoded, fails the call with one
line naming the node (``MESSAGES``: the check ids the C code fails with, in
its OM_IMG_* order); the decoder checks every length and offset before it
reads.

Known limits: JPEG, JPEG 2000, TIFF, WebP and GIF images are refused at run
time ("JPEG images are not supported by this build (supported: BMP, PNG,
PNM)"). A JPEG decoder whose pixels equal the reference's (Pillow, i.e.
libjpeg) must reproduce libjpeg's IDCT and chroma upsampling rounding, and
linking a codec library (libjpeg, libtiff, libwebp, openjpeg) would add a
system dependency the pip install does not have. 16-bit and interlaced PNGs
and compressed (RLE) or 16-bit BMPs are refused the same way.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, bufferization, memref

from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.image_decoder import PIXEL_FORMATS, pixel_format
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext
from onnx_mlir_py.passes.onnx_to_linalg.strings_ml import call_i64
from onnx_mlir_py.registry import lowering

DECODED = "BMP, PNG, PNM"
# om_image.c's OM_IMG_* codes, in order ({0}..{2}: the values it passes)
MESSAGES = (
    f"JPEG images are not supported by this build (supported: {DECODED})",
    f"JPEG 2000 images are not supported by this build (supported: {DECODED})",
    f"TIFF images are not supported by this build (supported: {DECODED})",
    f"WebP images are not supported by this build (supported: {DECODED})",
    f"GIF images are not supported by this build (supported: {DECODED})",
    f"the {{0}} input bytes are not an image of a known format (supported: {DECODED})",
    "the BMP image ({0} bytes) is corrupt or truncated (at byte {1})",
    "the BMP image has {0} bits per pixel, compression {1}, header size {2}: supported are "
    "1/4/8-bit palette and 24-bit uncompressed, 32-bit uncompressed or with 8-bit bitfields",
    "the PNG image ({0} bytes) is corrupt or truncated (at byte {1})",
    "the PNG image has bit depth {0}, colour type {1}, interlace {2}: supported are bit "
    "depth 8 (1/2/4 for gray and palette), not interlaced",
    "the PNM image ({0} bytes) is corrupt or truncated (at byte {1})",
    "the PNM image P{0} has maxval {1}: supported are maxval 1..255",
    "the image is {0} x {1} pixels: expected 1 to 178956970 pixels (Pillow's limit)",
    "the input view has stride {0}",
)
_MODES = {"RGB": 0, "BGR": 1, "Grayscale": 2}


@lowering("ImageDecoder", 20)
def lower_image_decoder(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    t = b.ranked(op, x)
    if t.rank != 1:
        op.fail(f"input 'encoded_stream' has rank {t.rank}: expected 1")
    fmt = pixel_format(op)
    i64 = ir.IntegerType.get_signless(64)
    base = len(b.check_messages)
    b.check_messages.extend(f"node '{op.name}' (ImageDecoder): {m}" for m in MESSAGES)
    layout = ir.Attribute.parse("strided<[?], offset: ?>")
    m = bufferization.to_buffer(ir.MemRefType.get(list(t.shape), t.element_type, layout), x,
                                read_only=True)
    meta = memref.ExtractStridedMetadataOp(m).results   # base, offset, size, stride
    ptr = memref.extract_aligned_pointer_as_index(m)

    def c64(v):
        return arith.constant(i64, v)

    def as_i64(v):
        return arith.index_cast(i64, v)

    img = call_i64(b, "om_image_decode", [as_i64(ptr), as_i64(meta[1]), as_i64(meta[3]),
                                          as_i64(meta[2]), c64(_MODES[fmt]), c64(base)])
    h, w = (arith.index_cast(ir.IndexType.get(), call_i64(b, "om_image_dim", [img, c64(k)]))
            for k in (0, 1))
    rt = b.result_type(op)
    out = ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size()] * 2
                                  + [PIXEL_FORMATS[fmt]], rt.element_type)
    buf = memref.alloc(ir.MemRefType.get(list(out.shape), out.element_type), [h, w], [])
    call_i64(b, "om_image_read", [img, as_i64(memref.extract_aligned_pointer_as_index(buf))])
    return [bufferization.to_tensor(out, buf, restrict=True, writable=True)]
