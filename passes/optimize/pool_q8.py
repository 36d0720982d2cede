"""Max pools on 8-bit tensors -> the row kernel (:mod:`.row_kernel`).

A QDQ model's stem MaxPool becomes a MaxPool on the 8-bit tensor at the
ONNX level (``optimize_onnx/quantize.fuse_qdq_maxpool``), which lowers to

    xp = tensor.pad x (the type's minimum)
    y  = max over the window of xp into fill(the type's minimum)

as ``linalg.pooling_nchw_max`` on i8 (signed: ``arith.maxsi``) or, for
uint8 (linalg has no unsigned NCHW pool), a ``linalg.generic`` of the same
maps whose body is ``arith.maxui``. Neither was taken by :mod:`.pool`
(f32 only): they ran as linalg's scalar loop nest (ResNet-50 QDQ's
1x64x112x112 pool: 0.41 ms at 1 thread, onnxruntime 0.07).

Here they run the f32 pool's row kernel with 8-bit ends (``Conv.quant``,
as :mod:`.depthwise_q8`): the plane copy converts each 8-bit vector to f32
(``uitofp`` / ``sitofp``: exact), the maxima are f32 (exact: 8-bit values
are f32 integers), and the result is converted back (``fptoui`` /
``fptosi``: exact, a maximum of inputs or the pad). The pad and the fill
are the scratch border and the accumulators' start, their values as
unsigned or signed per the op. So the output equals the scalar loop's bit
for bit.

Taken: 2-D windows inside the padded input, at most
``depthwise.MAX_TAPS`` taps, a constant pad (or none) and fill, static
shapes but for a dynamic batch (the kernel loops over it). The kernel plan
names both ``pool_q8`` (of the generics, it plans only the unsigned max
pools, :func:`is_pool`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import mlir.ir as ir

from onnx_mlir_py.dialects.onnx.opview import owner_op
from onnx_mlir_py.passes.optimize.depthwise import MAX_TAPS
from onnx_mlir_py.passes.optimize.kernel_emit import Elem, Emitter, Value, vector
from onnx_mlir_py.passes.optimize.kernel_fusion import const_pad, single_user, window_ints
from onnx_mlir_py.passes.optimize.row_plan import Conv
from onnx_mlir_py.passes.optimize.window_rewrite import rewrite_all
from onnx_mlir_py.target import Target

KERNEL = "pool_q8"
NAMED = "linalg.pooling_nchw_max"
GENERIC = "linalg.generic"


@dataclass(frozen=True)
class Widen:
    """The 8-bit ends of a max pool's kernel (``Conv.quant``): 8-bit
    vectors to f32 in the plane copy, f32 maxima back to 8 bits."""

    unsigned: bool
    in_elem = Elem.I8
    out_elem = Elem.I8

    def params(self, e: Emitter) -> list[Value]:
        return []

    def channel(self, e: Emitter, params: list[Value], ch: Value, lanes: int):
        return None

    def prologue(self, e: Emitter, st, v: Value) -> Value:
        op = "arith.uitofp" if self.unsigned else "arith.sitofp"
        return e.cast(op, v, vector(v.type.shape[0]))

    def epilogue(self, e: Emitter, st, acc: Value) -> Value:
        op = "arith.fptoui" if self.unsigned else "arith.fptosi"
        return e.cast(op, acc, vector(acc.type.shape[0], Elem.I8))


def _i8_shape(v: ir.Value) -> list | None:
    """4-D i8 tensor shape, static but for dim 0 (None when dynamic)."""
    t = v.type
    if not isinstance(t, ir.RankedTensorType) or t.rank != 4 or \
            not isinstance(t.element_type, ir.IntegerType) or t.element_type.width != 8:
        return None
    dyn = ir.ShapedType.get_dynamic_size()
    shape = list(t.shape)
    if any(s == dyn for s in shape[1:]) or 0 in shape:
        return None
    return [None if shape[0] == dyn else shape[0]] + shape[1:]


def _const_int(v: ir.Value, unsigned: bool) -> int | None:
    o = owner_op(v)
    if o is None or o.name != "arith.constant" or \
            not isinstance(o.attributes["value"], ir.IntegerAttr):
        return None
    return _byte(ir.IntegerAttr(o.attributes["value"]).value, unsigned)


def _byte(x: int, unsigned: bool) -> int:
    """An i8 constant's value read as unsigned or signed."""
    return x & 0xFF if unsigned else (x + 128) % 256 - 128


def _pad(v: ir.Value, unsigned: bool):
    """``kernel_fusion.const_pad`` of an 8-bit tensor (the value as unsigned
    or signed)."""
    found = const_pad(v, _i8_shape, ir.IntegerAttr)
    if found is None:
        return None
    x, pads, value = found
    return x, pads, _byte(value, unsigned)


_DIM = re.compile(r"^d(\d) (?:\* (\d+) )?\+ d(\d)(?: \* (\d+))?$")


def _generic_window(op: ir.Operation):
    """(strides, dilations) of an unsigned max pool generic (maps
    ``(n, c, oh*s + kh*d, ow*s + kw*d)``, ``(kh, kw)``, ``(n, c, oh, ow)``,
    body ``maxui(out, in)``), else None."""
    if len(op.operands) != 3 or len(op.results) != 1 or len(op.regions) != 1:
        return None
    block = op.regions[0].blocks[0]
    body = [x.operation for x in block.operations]
    if len(body) != 2 or body[0].name != "arith.maxui" or body[1].name != "linalg.yield" or \
            body[1].operands[0] != body[0].results[0] or \
            {str(x) for x in body[0].operands} != {str(block.arguments[0]),
                                                   str(block.arguments[2])}:
        return None
    its = [str(a) for a in op.attributes["iterator_types"]]
    if len(its) != 6 or any(("parallel" in a) != (i < 4) for i, a in enumerate(its)):
        return None
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    res = [[str(r) for r in m.results] for m in maps]
    if res[1] != ["d4", "d5"] or res[2] != ["d0", "d1", "d2", "d3"] or res[0][:2] != ["d0", "d1"]:
        return None
    s, d = [], []
    for i, text in enumerate(res[0][2:]):
        m = _DIM.match(text)
        if m is None or int(m.group(1)) != 2 + i or int(m.group(3)) != 4 + i:
            return None
        s.append(int(m.group(2) or 1))
        d.append(int(m.group(4) or 1))
    return s, d


def is_pool(op: ir.Operation) -> bool:
    """Whether generic ``op`` is an unsigned max pool (the kernel plan's
    filter: other generics are no planned op)."""
    return _generic_window(op) is not None


def _match(op: ir.Operation):
    """``(Conv, x, pad op or None, fill op, fill value)`` of an 8-bit max pool
    the kernel takes, else None (no IR change)."""
    if op.name == NAMED:
        unsigned = False
        if len(op.operands) != 3 or len(op.results) != 1:
            return None
        s, d = window_ints(op, "strides"), window_ints(op, "dilations")
    elif op.name == GENERIC:
        unsigned = True
        win = _generic_window(op)
        if win is None:
            return None
        s, d = win
    else:
        return None
    xs, os_ = _i8_shape(op.operands[0]), _i8_shape(op.operands[2])
    ws = op.operands[1].type
    if xs is None or os_ is None or not isinstance(ws, ir.RankedTensorType) or \
            not ws.has_static_shape or ws.rank != 2 or os_[:2] != xs[:2]:
        return None
    kh, kw = ws.shape
    if kh * kw > MAX_TAPS or kh * kw == 0 or len(s) != 2 or len(d) != 2 or min(s + d) < 1 or \
            any((os_[2 + i] - 1) * s[i] + ((kh, kw)[i] - 1) * d[i] + 1 > xs[2 + i]
                for i in range(2)):
        return None
    fill = owner_op(op.operands[2])
    if fill is None or fill.name != "linalg.fill" or len(fill.operands) != 2:
        return None
    init = _const_int(fill.operands[0], unsigned)
    if init is None:
        return None
    x, pad, pad_op, value = op.operands[0], (0, 0, 0, 0), None, init
    padded = _pad(x, unsigned)
    if padded is not None:
        pad_op = owner_op(x)
        x, pad, value = padded
        xs = _i8_shape(x)
    cv = Conv(tuple(xs), tuple(pad), kh, kw, tuple(os_), tuple(s), tuple(d), "scalar",
              combine="max", pad_value=float(value), quant=Widen(unsigned))
    return cv, x, pad_op, fill, init


def _rewrite(op: ir.Operation):
    """:func:`_match` with the kernel's f32 operands made (the window's
    shape, the start value): ``(Conv, operands, erase, last, dead)``."""
    found = _match(op)
    if found is None:
        return None
    cv, x, pad_op, fill, init = found
    f32 = ir.F32Type.get()
    with ir.InsertionPoint(op), op.location:
        from mlir.dialects import arith, tensor
        window = tensor.EmptyOp([cv.kh, cv.kw], f32).result
        start = arith.ConstantOp(f32, float(init)).result
    out = fill.operands[1]
    dead = ([pad_op] if pad_op is not None else []) + \
        ([fill] if single_user(fill.results[0]) is not None else [])
    return cv, [x, window, out, start], [op], op, dead


def pools_q8(module: ir.Module, target: Target, threads: bool = False, plan=None) -> int:
    """Replace every 8-bit max pool :func:`_match` takes (with a kernel
    ``plan``: those it gave to ``pool_q8``) by the row kernel. Returns how
    many were rewritten."""
    return rewrite_all(module, {NAMED, GENERIC}, lambda op: _rewrite(op), "__om_pool_q8",
                       target, threads, plan, KERNEL)
