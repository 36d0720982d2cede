"""Scalar conversions to and from the small element types, in integer
arithmetic (exact, no libcalls, vectorizable), with the rounding and
saturation rules of the ONNX Cast spec:

* float8 (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ), float4 E2M1, bfloat16:
  round to nearest even; beyond the largest finite value (after rounding)
  ``saturate`` gives +-max, else inf (E5M2, bf16) or NaN; FNUZ types have
  no -0 (a negative value that rounds to 0 is +0) and one NaN (0x80);
  float4 has no inf/NaN and always saturates (as ml_dtypes, whose NaN
  conversion is mimicked so results are bit-exact with onnx.reference).
* float8 E8M0 (an exponent): ``round_mode`` up / down / nearest and
  ``saturate`` exactly as ``onnx.numpy_helper.to_float8e8m0``.
* int4 / uint4 / int2 / uint2: stored one per byte, the bits in the low
  part (ml_dtypes' layout); read sign- or zero-extended, written masked.

A small float value is carried in the lowered IR as its bits (``i8`` for the
8-bit and 4-bit formats, ``i16`` for bf16 inside Cast; see
builder.STORAGE_TYPES). ``encode`` takes an f32 or f64 value (extending a
narrower float first is exact, so there is one rounding); ``decode`` gives
the exact f32 value.
"""
from __future__ import annotations

from dataclasses import dataclass

import mlir.ir as ir
from mlir.dialects import arith


@dataclass(frozen=True)
class Fmt:
    ebits: int
    mbits: int
    bias: int
    kind: str          # "fn" (E4M3FN), "ieee" (E5M2, bf16), "fnuz", "f4" (no inf/NaN)

    @property
    def width(self) -> int:
        return 1 + self.ebits + self.mbits

    @property
    def max_bits(self) -> int:
        """Largest finite magnitude, as bits."""
        top = (1 << (self.ebits + self.mbits)) - 1
        if self.kind == "fn":
            return top - 1                     # S.1111.111 is NaN
        if self.kind == "ieee":
            return (((1 << self.ebits) - 1) << self.mbits) - 1    # below the inf exponent
        return top                             # fnuz, f4: every pattern is finite


FORMATS = {
    "f8E4M3FN": Fmt(4, 3, 7, "fn"),
    "f8E4M3FNUZ": Fmt(4, 3, 8, "fnuz"),
    "f8E5M2": Fmt(5, 2, 15, "ieee"),
    "f8E5M2FNUZ": Fmt(5, 2, 16, "fnuz"),
    "f4E2M1FN": Fmt(2, 1, 1, "f4"),
    "bf16": Fmt(8, 7, 127, "ieee"),
}
E8M0 = "f8E8M0FNU"
SUB_BYTE_INTS = {"i4": (4, True), "si4": (4, True), "ui4": (4, False),
                 "i2": (2, True), "si2": (2, True), "ui2": (2, False)}


def _i(w: int) -> ir.IntegerType:
    return ir.IntegerType.get_signless(w)


def _c(t: ir.Type, v: int) -> ir.Value:
    w = t.width
    v &= (1 << w) - 1
    return arith.constant(t, v - (1 << w) if v >= 1 << (w - 1) else v)


def _sel(c, a, b):
    return arith.select(c, a, b)


def _cmp(pred: str, a, b):
    return arith.cmpi(getattr(arith.CmpIPredicate, pred), a, b)


def _rne_shift(v: ir.Value, k: ir.Value, t: ir.Type) -> ir.Value:
    """v >> k rounded to nearest, ties to even (k >= 1, v >= 0)."""
    one = _c(t, 1)
    half_m1 = arith.subi(arith.shli(one, arith.subi(k, one)), one)
    odd = arith.andi(arith.shrui(v, k), one)
    return arith.shrui(arith.addi(arith.addi(v, half_m1), odd), k)


def encode(x: ir.Value, fmt: Fmt, saturate: bool) -> ir.Value:
    """f32/f64 ``x`` -> the bits of ``fmt`` (an i8, or i16 for bf16)."""
    W = x.type.width
    ms, bs = (23, 127) if W == 32 else (52, 1023)
    t = _i(W)
    u = arith.bitcast(t, x)
    sign = arith.shrui(u, _c(t, W - 1))
    a = arith.andi(u, _c(t, (1 << (W - 1)) - 1))
    is_nan = _cmp("ugt", a, _c(t, ((1 << (W - 1 - ms)) - 1) << ms))
    e_s = arith.shrui(a, _c(t, ms))
    m = arith.andi(a, _c(t, (1 << ms) - 1))
    normal = _cmp("ne", e_s, _c(t, 0))
    sig = _sel(normal, arith.ori(m, _c(t, 1 << ms)), m)
    e_t = arith.addi(_sel(normal, e_s, _c(t, 1)), _c(t, fmt.bias - bs))
    sub = _cmp("slt", e_t, _c(t, 1))
    shift = arith.addi(_c(t, ms - fmt.mbits), _sel(sub, arith.subi(_c(t, 1), e_t), _c(t, 0)))
    shift = arith.minui(shift, _c(t, ms + 2))      # beyond: below half the least subnormal
    r = _rne_shift(sig, shift, t)
    r = arith.addi(r, _sel(sub, _c(t, 0), arith.shli(arith.subi(e_t, _c(t, 1)),
                                                      _c(t, fmt.mbits))))
    over = _cmp("ugt", r, _c(t, fmt.max_bits))
    inf_bits = fmt.max_bits + 1
    nan_mag = {"fn": (1 << (fmt.width - 1)) - 1,
               "ieee": inf_bits | (1 << (fmt.mbits - 1)), "fnuz": 0, "f4": 0}[fmt.kind]
    if fmt.kind == "f4" or saturate:
        big = fmt.max_bits
    elif fmt.kind == "ieee":
        big = inf_bits
    else:
        big = nan_mag
    mag = _sel(over, _c(t, big), r)
    ot = _i(fmt.width if fmt.width > 8 else 8)
    sign_o = arith.trunci(ot, arith.shli(sign, _c(t, fmt.width - 1)))
    out = arith.ori(arith.trunci(ot, mag), sign_o)
    if fmt.kind == "fnuz":
        nan = _c(ot, 0x80)
        out = _sel(_cmp("eq", arith.trunci(ot, mag), _c(ot, 0)), _c(ot, 0), out)
        if not saturate:
            out = _sel(over, nan, out)
    elif fmt.kind == "f4":
        # ml_dtypes: NaN -> zero of the opposite sign
        nan = arith.xori(sign_o, _c(ot, 1 << (fmt.width - 1)))
    else:
        nan = arith.ori(_c(ot, nan_mag), sign_o)
    return _sel(is_nan, nan, out)


def decode(v: ir.Value, fmt: Fmt) -> ir.Value:
    """Bits of ``fmt`` (i8, or i16 for bf16) -> the exact f32 value."""
    f32, i32 = ir.F32Type.get(), _i(32)
    u = arith.extui(i32, v)
    if fmt.width < v.type.width:
        u = arith.andi(u, _c(i32, (1 << fmt.width) - 1))
    if fmt.kind == "ieee" and fmt.ebits == 8:                     # bf16
        return arith.bitcast(f32, arith.shli(u, _c(i32, 16)))
    M, E = fmt.mbits, fmt.ebits
    sign = arith.shli(arith.shrui(u, _c(i32, fmt.width - 1)), _c(i32, 31))
    e = arith.andi(arith.shrui(u, _c(i32, M)), _c(i32, (1 << E) - 1))
    m = arith.andi(u, _c(i32, (1 << M) - 1))
    norm = arith.ori(arith.shli(arith.addi(e, _c(i32, 127 - fmt.bias)), _c(i32, 23)),
                     arith.shli(m, _c(i32, 23 - M)))
    # subnormal: m * 2^(1 - bias - M), exact in f32
    scale = float(2.0 ** (1 - fmt.bias - M))
    subv = arith.bitcast(i32, arith.mulf(arith.uitofp(f32, m), arith.constant(f32, scale)))
    bits = arith.ori(_sel(_cmp("eq", e, _c(i32, 0)), subv, norm), sign)
    nan = arith.ori(_c(i32, 0x7FC00000), sign)
    if fmt.kind == "fn":
        bits = _sel(_cmp("eq", arith.andi(u, _c(i32, 0x7F)), _c(i32, 0x7F)), nan, bits)
    elif fmt.kind == "fnuz":
        bits = _sel(_cmp("eq", u, _c(i32, 0x80)), _c(i32, 0x7FC00000), bits)
    elif fmt.kind == "ieee":
        top = _cmp("eq", e, _c(i32, (1 << E) - 1))
        inf = arith.ori(_c(i32, 0x7F800000), sign)
        bits = _sel(top, _sel(_cmp("eq", m, _c(i32, 0)), inf, nan), bits)
    return arith.bitcast(f32, bits)


def encode_e8m0(x: ir.Value, saturate: bool, round_mode: str) -> ir.Value:
    """f32 ``x`` -> float8e8m0 bits, as onnx.numpy_helper.to_float8e8m0."""
    i32, i8 = _i(32), _i(8)
    u = arith.bitcast(i32, x)
    e = arith.andi(arith.shrui(u, _c(i32, 23)), _c(i32, 0xFF))
    special = _cmp("eq", e, _c(i32, 0xFF))
    one, zero = _c(i32, 1), _c(i32, 0)
    if round_mode == "nearest":
        def bit(k):
            return _cmp("ne", arith.andi(u, _c(i32, 1 << k)), zero)
        s = _cmp("ne", arith.andi(u, _c(i32, 0x1FFFFF)), zero)
        lsb = _cmp("ne", e, zero)
        up = arith.andi(bit(22), arith.ori(arith.ori(bit(21), s), lsb))
    elif round_mode == "up":
        up = _cmp("ne", arith.andi(u, _c(i32, 0x7FFFFF)), zero)
    elif round_mode == "down":
        up = None
    else:
        raise ValueError(f"round_mode '{round_mode}' is not up, down or nearest")
    if up is not None:
        if saturate:
            up = arith.andi(up, _cmp("ne", e, _c(i32, 0xFE)))
        e = arith.addi(e, _sel(up, one, zero))
    return arith.trunci(i8, _sel(special, _c(i32, 0xFF), e))


def decode_e8m0(v: ir.Value) -> ir.Value:
    f32, i32 = ir.F32Type.get(), _i(32)
    u = arith.andi(arith.extui(i32, v), _c(i32, 0xFF))
    bits = arith.shli(u, _c(i32, 23))
    bits = _sel(_cmp("eq", u, _c(i32, 0)), _c(i32, 0x00400000), bits)      # 2^-127
    bits = _sel(_cmp("eq", u, _c(i32, 0xFF)), _c(i32, 0x7FC00000), bits)
    return arith.bitcast(f32, bits)


def decode_int(v: ir.Value, bits: int, signed: bool) -> ir.Value:
    """i8 container of an int4/int2 (low bits) -> its value as i8."""
    t = v.type
    if signed:
        k = _c(t, t.width - bits)
        return arith.shrsi(arith.shli(v, k), k)
    return arith.andi(v, _c(t, (1 << bits) - 1))


def encode_int(v: ir.Value, bits: int) -> ir.Value:
    """An integer -> the i8 container of its low ``bits`` (wraps, as the spec's
    'discard higher bits' and ml_dtypes)."""
    i8 = _i(8)
    if v.type.width > 8:
        v = arith.trunci(i8, v)
    elif v.type.width < 8:
        v = arith.extui(i8, v)
    return arith.andi(v, _c(i8, (1 << bits) - 1))
