"""ImageDecoder (runtime/c/om_image.c) against onnx.reference (Pillow), uint8
exactly, for RGB, BGR and Grayscale, with the input length dynamic (one
library per pixel format, images of several sizes through it):

* PNG: colour types gray (bit depths 1, 2, 4, 8), RGB, palette (1, 2, 4, 8),
  gray + alpha, RGBA; written by Pillow and by hand (every filter type, and
  zlib streams of stored, fixed-Huffman and dynamic-Huffman blocks, split
  over several IDAT chunks);
* BMP: 24-bit, 32-bit (BI_RGB and BI_BITFIELDS), 1/4/8-bit palette,
  bottom-up and top-down, the 12-byte core header;
* PNM: P1-P6, maxval 255 and smaller (scaled as Pillow).

Where onnx.reference's output is not [H, W, 3] (it returns Pillow's array
as it is: 2-D for gray and palette images, 4 channels with alpha) the
expected pixels are Pillow's convert("RGB"), which the op's spec asks for.
Corrupt and truncated images (every cut of a file, bytes flipped in the
zlib stream with valid CRCs) give one RuntimeInputError line naming the
node and never crash; JPEG, JPEG 2000, TIFF, WebP and GIF give the
one-line refusal naming the formats that are decoded.
"""
from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx.reference import ReferenceEvaluator
from PIL import Image

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession, RuntimeInputError

FORMATS = ("RGB", "BGR", "Grayscale")
SIZES = ((5, 7), (33, 18))          # (height, width)


def _model(fmt: str):
    node = h.make_node("ImageDecoder", ["x"], ["y"], name="dec", pixel_format=fmt)
    m = h.make_model(h.make_graph([node], "g", [h.make_tensor_value_info("x", T.UINT8, [None])],
                                  [h.make_tensor_value_info("y", T.UINT8, [None, None, None])]),
                     opset_imports=[h.make_opsetid("", 20)])
    m.ir_version = 10
    return m


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    d = tmp_path_factory.mktemp("image_decoder")
    return {f: ExecutionSession(onnx_mlir_py.compile(_model(f), d / f"{f}.so")) for f in FORMATS}


def _expected(data: bytes, fmt: str) -> np.ndarray:
    try:
        (ref,) = ReferenceEvaluator(_model(fmt)).run(None, {"x": np.frombuffer(data, np.uint8)})
    except IndexError:          # BGR of a 2-D array
        ref = np.zeros(0)
    if ref.ndim == 3 and ref.shape[2] == (1 if fmt == "Grayscale" else 3):
        return ref
    rgb = np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))   # the spec's RGB
    return rgb[:, :, ::-1] if fmt == "BGR" else rgb


def _check(sessions, data: bytes, fmts=FORMATS):
    for fmt in fmts:
        (got,) = sessions[fmt].run([np.frombuffer(data, np.uint8)])
        want = _expected(data, fmt)
        assert got.dtype == np.uint8 and got.shape == want.shape, (fmt, got.shape, want.shape)
        np.testing.assert_array_equal(got, want, err_msg=fmt)


def _pixels(hw, channels, seed=0):
    return np.random.default_rng(seed).integers(0, 256, (*hw, channels), dtype=np.uint8)


def _saved(img: Image.Image, fmt: str, **kw) -> bytes:
    b = io.BytesIO()
    img.save(b, fmt, **kw)
    return b.getvalue()


def _pil_images(hw):
    """Pillow images of every mode the decoders handle."""
    rgb = Image.fromarray(_pixels(hw, 3))
    pal = Image.fromarray(_pixels(hw, 1, 1)[:, :, 0] % 200, "L").convert("P")
    pal.putpalette(list(_pixels((200, 1), 3, 2).ravel()))
    return {"RGB": rgb, "RGBA": Image.fromarray(_pixels(hw, 4, 3), "RGBA"),
            "L": Image.fromarray(_pixels(hw, 1, 4)[:, :, 0], "L"),
            "LA": Image.fromarray(_pixels(hw, 2, 5), "LA"), "P": pal,
            "1": Image.fromarray(_pixels(hw, 1, 6)[:, :, 0]).convert("1")}


# -- PNG ---------------------------------------------------------------------------
@pytest.mark.parametrize("hw", SIZES)
@pytest.mark.parametrize("mode", ["RGB", "RGBA", "L", "LA", "P", "1"])
def test_png_pillow(sessions, hw, mode):
    img = _pil_images(hw)[mode]
    _check(sessions, _saved(img, "PNG"))
    if mode == "P":                                  # 1/2/4-bit palette PNGs
        small = img.point(lambda v: v % 3)
        small.putpalette(list(_pixels((3, 1), 3, 7).ravel()))
        for bits in (1, 2, 4):
            _check(sessions, _saved(small, "PNG", bits=bits))


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def _filtered(rows: np.ndarray, bpp: int, kinds) -> bytes:
    """PNG scanlines of uint8 ``rows`` [H, rowbytes], row y with filter kinds[y % 5]."""
    out = bytearray()
    prev = np.zeros(rows.shape[1], np.int64)
    for y, row in enumerate(rows.astype(np.int64)):
        f = kinds[y % len(kinds)]
        a = np.concatenate([np.zeros(bpp, np.int64), row[:-bpp]])
        c = np.concatenate([np.zeros(bpp, np.int64), prev[:-bpp]])
        if f == 4:
            p = a + prev - c
            pa, pb, pc = abs(p - a), abs(p - prev), abs(p - c)
            pred = np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, prev, c))
        else:
            pred = [np.zeros_like(row), a, prev, (a + prev) // 2][f]
        out += bytes([f]) + ((row - pred) % 256).astype(np.uint8).tobytes()
        prev = row
    return bytes(out)


def _png(rows, w, h, depth, ctype, palette=None, zdata=None, kinds=(0, 1, 2, 3, 4),
         bpp=None, idat_parts=3):
    raw = _filtered(rows, bpp or max(1, rows.shape[1] // w), kinds)
    z = zlib.compress(raw, 6) if zdata is None else zdata(raw)
    parts = [z[i * len(z) // idat_parts:(i + 1) * len(z) // idat_parts] for i in range(idat_parts)]
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, depth, ctype,
                                                                0, 0, 0))
            + (_chunk(b"PLTE", palette) if palette is not None else b"")
            + b"".join(_chunk(b"IDAT", p) for p in parts) + _chunk(b"IEND", b""))


def _fixed(raw: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, 15, 8, zlib.Z_FIXED)
    return c.compress(raw) + c.flush()


ZSTREAMS = {"stored": lambda raw: zlib.compress(raw, 0), "fixed": _fixed,
            "dynamic": lambda raw: zlib.compress(raw, 9)}


@pytest.mark.parametrize("hw", SIZES)
@pytest.mark.parametrize("blocks", list(ZSTREAMS))
def test_png_filters_and_block_types(sessions, hw, blocks):
    hh, w = hw
    for ctype, ch in ((2, 3), (6, 4), (0, 1), (4, 2)):
        px = _pixels(hw, ch, ctype) // 3 * 3           # smooth enough to compress
        data = _png(px.reshape(hh, w * ch), w, hh, 8, ctype, zdata=ZSTREAMS[blocks])
        _check(sessions, data)
    idx = _pixels(hw, 1, 9)[:, :, 0] % 5
    data = _png(idx.reshape(hh, w), w, hh, 8, 3, palette=_pixels((5, 1), 3).tobytes(),
                zdata=ZSTREAMS[blocks])
    _check(sessions, data)


def test_png_long_matches(sessions):
    """A large, repetitive image: long back-references across rows."""
    px = np.tile(_pixels((3, 40), 3), (70, 5, 1))
    _check(sessions, _saved(Image.fromarray(px), "PNG", optimize=True))


def test_png_gray_bit_depths(sessions):
    hh, w = 6, 13
    for depth in (1, 2, 4):
        v = _pixels((hh, w), 1, depth)[:, :, 0] % (1 << depth)
        bits = np.unpackbits(v[..., None], axis=2)[:, :, 8 - depth:].reshape(hh, -1)
        rows = np.packbits(bits, axis=1)
        _check(sessions, _png(rows, w, hh, depth, 0, bpp=1))


# -- BMP ---------------------------------------------------------------------------
@pytest.mark.parametrize("hw", SIZES)
@pytest.mark.parametrize("mode", ["RGB", "RGBA", "L", "P", "1"])
def test_bmp_pillow(sessions, hw, mode):
    _check(sessions, _saved(_pil_images(hw)[mode], "BMP"))


def _bmp(px: np.ndarray, bpp: int, top_down=False, compression=0, masks=b"", palette=b"",
         core=False):
    """A BMP of [H, W, C] BGR(X) bytes or [H, W] palette indices (bpp 8)."""
    hh, w = px.shape[:2]
    stride = (w * bpp + 31) // 32 * 4
    rows = [px[y].tobytes().ljust(stride, b"\0") for y in range(hh)]
    pixels = b"".join(rows if top_down else rows[::-1])
    if core:
        info = struct.pack("<IHHHH", 12, w, hh, 1, bpp)
    else:
        info = struct.pack("<IiiHHIIiiII", 40, w, -hh if top_down else hh, 1, bpp, compression,
                           len(pixels), 2835, 2835, 0, 0)
    off = 14 + len(info) + len(masks) + len(palette)
    return b"BM" + struct.pack("<IHHI", off + len(pixels), 0, 0, off) + info + masks + \
        palette + pixels


@pytest.mark.parametrize("hw", SIZES)
def test_bmp_by_hand(sessions, hw):
    bgr = _pixels(hw, 3, 11)
    _check(sessions, _bmp(bgr, 24))
    _check(sessions, _bmp(bgr, 24, top_down=True))
    bgrx = _pixels(hw, 4, 12)
    _check(sessions, _bmp(bgrx, 32))
    _check(sessions, _bmp(bgrx, 32, top_down=True))
    masks = struct.pack("<III", 0xFF0000, 0xFF00, 0xFF)
    _check(sessions, _bmp(bgrx, 32, compression=3, masks=masks))
    idx = _pixels(hw, 1, 13)[:, :, 0]
    pal = _pixels((256, 1), 4, 14).tobytes()
    _check(sessions, _bmp(idx, 8, palette=pal))
    _check(sessions, _bmp(idx, 8, top_down=True, palette=pal))
    _check(sessions, _bmp(bgr, 24, core=True))


def test_bmp_4bit(sessions):
    img = _pil_images((9, 11))["P"].point(lambda v: v % 16)
    data = bytearray(_saved(img, "BMP"))          # Pillow writes 8 bits: repack to 4
    off, w, hh = struct.unpack_from("<I", data, 10)[0], 11, 9
    idx = np.frombuffer(bytes(data[off:]), np.uint8).reshape(hh, -1)[:, :w]
    stride = (w * 4 + 31) // 32 * 4
    packed = b"".join(bytes((idx[y, 2 * k] << 4 | (idx[y, 2 * k + 1] if 2 * k + 1 < w else 0))
                            for k in range((w + 1) // 2)).ljust(stride, b"\0") for y in range(hh))
    pal = bytes(data[54:54 + 16 * 4])
    info = struct.pack("<IiiHHIIiiII", 40, w, hh, 1, 4, 0, len(packed), 0, 0, 16, 0)
    off = 14 + 40 + len(pal)
    _check(sessions, b"BM" + struct.pack("<IHHI", off + len(packed), 0, 0, off) + info + pal
           + packed)


# -- PNM ---------------------------------------------------------------------------
@pytest.mark.parametrize("hw", SIZES)
@pytest.mark.parametrize("mode", ["RGB", "L", "1"])
def test_pnm_binary(sessions, hw, mode):
    _check(sessions, _saved(_pil_images(hw)[mode], "PPM"))


@pytest.mark.parametrize("maxval", [255, 100, 15, 1])
def test_pnm_ascii_and_maxval(sessions, maxval):
    hh, w = 4, 6
    v = _pixels((hh, w), 3, maxval)
    v = (v.astype(np.int64) * maxval // 255)
    txt = " ".join(map(str, v.ravel())).encode()
    _check(sessions, b"P3\n# a comment\n%d %d\n%d\n" % (w, hh, maxval) + txt)
    _check(sessions, b"P2 %d %d %d\n" % (w, hh, maxval)
           + " ".join(map(str, v[:, :, 0].ravel())).encode())
    _check(sessions, b"P6\n%d %d\n%d\n" % (w, hh, maxval) + v.astype(np.uint8).tobytes())
    _check(sessions, b"P5 %d %d %d\n" % (w, hh, maxval)
           + v[:, :, 0].astype(np.uint8).tobytes())
    bits = v[:, :, 0] % 2
    _check(sessions, b"P1\n%d %d\n" % (w, hh) + "".join(map(str, bits.ravel())).encode())


# -- errors ------------------------------------------------------------------------
def _fails(sessions, data: bytes, *words, fmt="RGB"):
    with pytest.raises(RuntimeInputError) as e:
        sessions[fmt].run([np.frombuffer(data, np.uint8)])
    msg = str(e.value)
    assert "\n" not in msg and "node 'dec' (ImageDecoder)" in msg, msg
    for w in words:
        assert w in msg, msg
    return msg


@pytest.mark.parametrize("kind,name", [("JPEG", "JPEG"), ("JPEG2000", "JPEG 2000"),
                                       ("TIFF", "TIFF"), ("WEBP", "WebP"), ("GIF", "GIF")])
def test_refused_formats(sessions, kind, name):
    data = _saved(Image.fromarray(_pixels((8, 8), 3)), kind)
    _fails(sessions, data, f"{name} images are not supported",
           "(supported: BMP, PNG, PNM)", fmt="Grayscale")


def test_unknown_and_empty(sessions):
    _fails(sessions, b"", "the 0 input bytes are not an image")
    _fails(sessions, b"hello world", "the 11 input bytes are not an image")


def _every_cut_fails(sessions, data: bytes, words, start):
    for n in range(start, len(data) - 1):    # from the end of the magic bytes
        _fails(sessions, data[:n], *words)


def test_truncated(sessions):
    img = Image.fromarray(_pixels((6, 5), 3))
    png = _saved(img, "PNG")
    _every_cut_fails(sessions, png[:-12], ["PNG image", "corrupt or truncated"], 8)  # no IEND
    _every_cut_fails(sessions, _saved(img, "BMP"), ["BMP image"], 2)
    _every_cut_fails(sessions, _saved(img, "PPM"), ["PNM image"], 3)
    _fails(sessions, b"P3 2 1 255 1 2 3 4 5", "PNM image (20 bytes) is corrupt or truncated")


def test_corrupt_zlib_streams_fail_cleanly(sessions):
    """Bytes of the zlib stream flipped (CRCs made valid): an error, or an
    image whenever the damage still inflates; never a crash."""
    hh, w = 9, 10
    px = _pixels((hh, w), 3) // 16 * 16
    rng = np.random.default_rng(5)
    errors = 0
    for blocks, zfn in ZSTREAMS.items():
        z = zfn(_filtered(px.reshape(hh, -1), 3, (0, 1, 2, 3, 4)))
        for _ in range(60):
            bad = bytearray(z)
            for k in rng.integers(0, len(z), 2):
                bad[k] ^= 1 << int(rng.integers(0, 8))
            data = _png(px.reshape(hh, -1), w, hh, 8, 2, zdata=lambda raw, b=bytes(bad): b)
            try:
                (got,) = sessions["RGB"].run([np.frombuffer(data, np.uint8)])
                assert got.shape == (hh, w, 3)
            except RuntimeInputError as e:
                assert "PNG image" in str(e) and "\n" not in str(e)
                errors += 1
    assert errors > 100


def test_corrupt_headers(sessions):
    png = bytearray(_saved(Image.fromarray(_pixels((4, 4), 3)), "PNG"))
    png[20] ^= 1                                   # in IHDR: its CRC no longer matches
    _fails(sessions, bytes(png), "PNG image", "corrupt or truncated")
    ihdr = lambda depth, ctype, interlace: (b"\x89PNG\r\n\x1a\n" + _chunk(   # noqa: E731
        b"IHDR", struct.pack(">IIBBBBB", 2, 2, depth, ctype, 0, 0, interlace)))
    _fails(sessions, ihdr(16, 2, 0), "bit depth 16, colour type 2, interlace 0")
    _fails(sessions, ihdr(8, 2, 1), "interlace 1")
    _fails(sessions, ihdr(8, 5, 0), "colour type 5")
    zero = b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", 0, 3, 8, 2, 0, 0, 0)) \
        + _chunk(b"IDAT", zlib.compress(b"")) + _chunk(b"IEND", b"")
    _fails(sessions, zero, "the image is 0 x 3 pixels")
    huge = _bmp(_pixels((1, 1), 3), 24)
    huge = huge[:18] + struct.pack("<ii", 100000, 100000) + huge[26:]
    _fails(sessions, huge, "the image is 100000 x 100000 pixels")
    _fails(sessions, _bmp(_pixels((2, 2), 3), 24, compression=1), "compression 1")
    _fails(sessions, b"P6\n2 2\n65535\n" + bytes(24), "P6 has maxval 65535")
    _fails(sessions, b"P2\n2 1\n255\n1 x", "PNM image")
    _fails(sessions, b"P2 3 1 100 0 100 200", "PNM image")      # above maxval (Pillow too)
    _check(sessions, b"P5 3 1 100 \x00\x64\xc8")                # binary: clamped (Pillow too)


def test_palette_index_past_the_palette(sessions):
    """Indices past PLTE's entries are black (Pillow's zero-filled palette)."""
    idx = np.array([[0, 1, 5, 200], [255, 1, 0, 2]], np.uint8)
    _check(sessions, _png(idx, 4, 2, 8, 3, palette=bytes([10, 20, 30, 40, 50, 60, 70, 80, 90])))


def test_strided_input(tmp_path):
    """The bytes as a strided view (every second byte of the input, a Slice
    with step 2): gathered before decoding."""
    nodes = [h.make_node("Slice", ["x", "s", "e", "a", "st"], ["b"]),
             h.make_node("ImageDecoder", ["b"], ["y"], name="dec", pixel_format="RGB")]
    ints = [h.make_tensor(n, T.INT64, [1], [v])
            for n, v in (("s", 1), ("e", 2 ** 40), ("a", 0), ("st", 2))]
    m = h.make_model(h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.UINT8, [None])],
                                  [h.make_tensor_value_info("y", T.UINT8, [None, None, 3])],
                                  ints), opset_imports=[h.make_opsetid("", 20)])
    m.ir_version = 10
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "s.so"))
    for hw in SIZES:
        px = _pixels(hw, 3, 21)
        data = np.frombuffer(_saved(Image.fromarray(px), "PNG"), np.uint8)
        doubled = np.stack([np.full_like(data, 7), data], 1).ravel()
        (got,) = sess.run([doubled])
        np.testing.assert_array_equal(got, px)
