"""Cast / CastLike / BitCast -> one elementwise linalg.generic converting each element
(``builder.convert_scalar``: float <-> int, widths, signedness; the small
types through cast_bits: bf16, float8, float4, int4/int2, with the
``saturate`` and ``round_mode`` rules of the spec). Strings <-> numbers call
the C runtime per element (runtime/c/om_string.c, onnxruntime's semantics):
floats widened to f64 and printed "%.8g" ("NaN", "INF", "-INF"), integers
and bool in decimal; text parsed as std::stod (then rounded to f32, and from
f32 to the smaller floats) / stoll / stoull (bool, unsigned) / stoi (int4,
int2), each then wrapped to the width; a string that is not a number or is
out of range fails the call naming the node."""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg import cast_bits as cb
from onnx_mlir_py.passes.onnx_to_linalg.builder import (LoweringContext, convert_scalar, elem_of,
                                                        is_string_type, to_signless)
from onnx_mlir_py.passes.onnx_to_linalg.broadcast import broadcast_generic

_PLAIN = (ir.F16Type, ir.F32Type, ir.F64Type, ir.IntegerType)


def is_small(t: ir.Type) -> bool:
    """An element type converted through cast_bits."""
    s = str(t)
    return s in cb.FORMATS or s == cb.E8M0 or s in cb.SUB_BYTE_INTS


def read_scalar(v: ir.Value, onnx_t: ir.Type) -> tuple[ir.Value, bool]:
    """A lowered element of ONNX type ``onnx_t`` -> (a value of a plain type:
    f32 for the small floats, i8 for int4/int2; whether it is unsigned)."""
    s = str(onnx_t)
    if s == "bf16":
        return cb.decode(arith.bitcast(ir.IntegerType.get_signless(16), v), cb.FORMATS[s]), False
    if s in cb.FORMATS:
        return cb.decode(v, cb.FORMATS[s]), False
    if s == cb.E8M0:
        return cb.decode_e8m0(v), False
    if s in cb.SUB_BYTE_INTS:
        bits, signed = cb.SUB_BYTE_INTS[s]
        return cb.decode_int(v, bits, signed), not signed
    return v, isinstance(onnx_t, ir.IntegerType) and onnx_t.is_unsigned


def write_scalar(x: ir.Value, x_uns: bool, onnx_t: ir.Type, saturate: bool = True,
                 round_mode: str = "up") -> ir.Value:
    """A plain scalar -> the lowered element of ONNX type ``onnx_t``."""
    s = str(onnx_t)
    f32, f64 = ir.F32Type.get(), ir.F64Type.get()
    src = x.type
    if s in cb.FORMATS or s == cb.E8M0:
        if s == cb.E8M0:                   # onnx.numpy_helper.to_float8e8m0: via float32
            return cb.encode_e8m0(convert_scalar(x, x_uns, f32), saturate, round_mode)
        # exact widening first (f16 / bf16 -> f32, int -> f64), then one rounding
        wide = x if isinstance(src, (ir.F32Type, ir.F64Type)) else \
            convert_scalar(x, x_uns, f64 if isinstance(src, ir.IntegerType) else f32)
        # ``saturate`` is for the float8 types only (bf16 overflows to inf)
        bits = cb.encode(wide, cb.FORMATS[s], saturate and s != "bf16")
        return arith.bitcast(ir.BF16Type.get(), bits) if s == "bf16" else bits
    if s in cb.SUB_BYTE_INTS:
        bits, _ = cb.SUB_BYTE_INTS[s]
        if not isinstance(src, ir.IntegerType):   # truncate toward zero, then wrap
            x = convert_scalar(x, False, ir.IntegerType.get_signless(max(32, src.width)), False)
        elif src.width == 1:
            x = arith.extui(ir.IntegerType.get_signless(8), x)
        return cb.encode_int(x, bits)
    dst = to_signless(onnx_t)
    return convert_scalar(x, x_uns, dst, isinstance(onnx_t, ir.IntegerType) and
                          onnx_t.is_unsigned)


def _attr(op: OnnxOp, name: str, default):
    return getattr(op.attrs, name) if name in op.spec.attributes else default


def _to_string(b: LoweringContext, v: ir.Value, src: ir.Type, uns: bool) -> ir.Value:
    from onnx_mlir_py.passes.onnx_to_linalg.strings_ml import call_i64
    i64, f64 = ir.IntegerType.get_signless(64), ir.F64Type.get()
    x, x_uns = read_scalar(v, src) if is_small(src) or str(src) == "bf16" else (v, uns)
    if isinstance(x.type, ir.FloatType):
        bits = arith.bitcast(i64, convert_scalar(x, False, f64))
        return call_i64(b, "om_str_from_f64", [bits])
    wide = x if x.type == i64 else (arith.extui(i64, x) if x_uns or x.type.width == 1
                                    else arith.extsi(i64, x))
    return call_i64(b, "om_str_from_int", [wide, arith.constant(i64, int(x_uns))])


def _from_string(op: OnnxOp, b: LoweringContext, v: ir.Value, dst: ir.Type, saturate: bool,
                 round_mode: str) -> ir.Value:
    from onnx_mlir_py.passes.onnx_to_linalg.strings_ml import call_i64
    i64, f32, f64 = ir.IntegerType.get_signless(64), ir.F32Type.get(), ir.F64Type.get()
    cid = len(b.check_messages)
    b.check_messages.append(f"node '{op.name}' ({op.op_type}): a string is not a number of "
                            f"type {dst} (code {{0}}: 0 = no number at its start, 1 = out of "
                            "range)")
    check = arith.constant(i64, cid)
    if isinstance(dst, ir.FloatType):
        d = arith.bitcast(f64, call_i64(b, "om_str_to_f64", [v, check]))
        return d if isinstance(dst, ir.F64Type) else \
            write_scalar(arith.truncf(f32, d), False, dst, saturate, round_mode)
    s = str(dst)
    mode = 2 if s in cb.SUB_BYTE_INTS else (1 if dst.width == 1 or dst.is_unsigned else 0)
    n = call_i64(b, "om_str_to_int", [v, arith.constant(i64, mode), check])
    if s in cb.SUB_BYTE_INTS:
        return write_scalar(arith.trunci(ir.IntegerType.get_signless(32), n), False, dst)
    if dst.width == 1:
        return arith.cmpi(arith.CmpIPredicate.ne, n, arith.constant(i64, 0))
    return n if dst.width == 64 else arith.trunci(to_signless(dst), n)


@lowering("Cast", 6, 9, 13, 19, 21, 23, 24, 25, 28)
def lower_cast(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    src = b.onnx_elem(x)
    dst = elem_of(op.op.results[0].type)
    if is_string_type(src) or is_string_type(dst):
        return [_cast_string(op, b, x, src, dst)]
    for t in (src, dst):
        if not (isinstance(t, _PLAIN) or isinstance(t, ir.BF16Type) or is_small(t)) or \
                (isinstance(t, ir.IntegerType) and not is_small(t) and
                 t.width not in (1, 8, 16, 32, 64)):
            op.fail(f"cast with element type {t} is not supported")
    saturate = bool(_attr(op, "saturate", 1))
    round_mode = _attr(op, "round_mode", "up")
    if round_mode not in ("up", "down", "nearest"):
        op.fail(f"round_mode '{round_mode}' is not one of up, down, nearest")

    def body(v):
        if not (is_small(src) or is_small(dst) or "bf16" in (str(src), str(dst))):
            return convert_scalar(v, b.unsigned(x), to_signless(dst),
                                  isinstance(dst, ir.IntegerType) and dst.is_unsigned)
        if str(src) == str(dst):
            return v
        plain, uns = read_scalar(v, src)
        return write_scalar(plain, uns, dst, saturate, round_mode)
    return [broadcast_generic(op, b, [x], body)]


def _cast_string(op: OnnxOp, b: LoweringContext, x: ir.Value, src: ir.Type, dst: ir.Type):
    if is_string_type(src) and is_string_type(dst):
        return x
    saturate = bool(_attr(op, "saturate", 1))
    round_mode = _attr(op, "round_mode", "up")
    uns = b.unsigned(x)
    if is_string_type(dst):
        return broadcast_generic(op, b, [x], lambda v: _to_string(b, v, src, uns))
    return broadcast_generic(op, b, [x],
                             lambda v: _from_string(op, b, v, dst, saturate, round_mode))


@lowering("CastLike", 15, 19, 21, 23, 24, 25)
def lower_cast_like(op: OnnxOp, b: LoweringContext):
    return lower_cast(op, b)


@lowering("BitCast", 26)
def lower_bitcast(op: OnnxOp, b: LoweringContext):
    """The same bits as another type of the width (arith.bitcast); a bool
    is a byte 0/1 (a byte other than 0 or 1 read as bool is true); the
    small types keep their storage byte (its bits are the value's)."""
    x = op.input(0)
    dst = to_signless(elem_of(op.op.results[0].type))
    src = x.type.element_type
    if not isinstance(src, (*_PLAIN, ir.BF16Type)) or not isinstance(dst, (*_PLAIN, ir.BF16Type)):
        op.fail(f"bit-cast from {src} to {dst} is not supported")

    def body(v):
        if v.type == dst:
            return v
        if v.type.width == 1:
            return arith.extui(dst, v)
        if dst.width == 1:
            return arith.cmpi(arith.CmpIPredicate.ne, v, arith.constant(v.type, 0))
        return arith.bitcast(dst, v)
    return [broadcast_generic(op, b, [x], body)]
