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

Rows of up to 64 outputs take a kernel of byte maxima instead
(:func:`byte_pool_function`: no conversions, 64 lanes; ResNet-50 QDQ's
stem pool 207 -> 25 us at 1 thread).

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
from onnx_mlir_py.passes.optimize.kernel_emit import F32, Elem, Emitter, Value, vector
from onnx_mlir_py.passes.optimize.matmul_q8 import Type_I8
from onnx_mlir_py.passes.optimize.kernel_fusion import const_pad, single_user, window_ints
from onnx_mlir_py.passes.optimize.row_plan import Conv
from onnx_mlir_py.passes.optimize.window_rewrite import replace_with_kernel, rewrite_all
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

    def epilogue(self, e: Emitter, st, acc: Value, whole: bool = False) -> Value:
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
    shape, the start value): ``(Conv, operands, erase, last, dead, init)``."""
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
    return cv, [x, window, out, start], [op], op, dead, init


def pools_q8(module: ir.Module, target: Target, threads: bool = False, plan=None) -> int:
    """Replace every 8-bit max pool :func:`_match` takes (with a kernel
    ``plan``: those it gave to ``pool_q8``) by the byte kernel
    (:func:`bytes_fit`) or the row kernel. Returns how many were rewritten."""
    return rewrite_all(module, {NAMED, GENERIC}, lambda op: _rewrite(op), "__om_pool_q8",
                       target, threads, plan, KERNEL, replace=_replace)


def _replace(module: ir.Module, funcs: dict, prefix: str, found, target: Target,
             threads: bool) -> None:
    """:func:`.window_rewrite.replace_with_kernel` for :func:`pools_q8`: a
    call of the byte kernel where it fits, else of the row kernel."""
    from onnx_mlir_py.passes.optimize.batch_loop import add_functions
    from onnx_mlir_py.passes.optimize.kernel_fusion import replace_with_call
    cv, init = found[0], found[5]
    if not bytes_fit(cv, init, target):
        replace_with_kernel(module, funcs, prefix, found, target, threads)
        return
    blocks = byte_blocks(cv, threads)
    key = ("bytes", cv, init, blocks)
    if key not in funcs:
        funcs[key] = f"{prefix}b_{len(funcs)}"
        add_functions(module, byte_pool_function(funcs[key], cv, init, blocks))
    replace_with_call(funcs[key], *found[1:5])


# False: every 8-bit max pool runs the row kernel (f32 maxima, 16 lanes)
BYTE_POOLS = True
LANES8 = 64     # bytes per vector (AVX-512)


def _type_min(unsigned: bool) -> int:
    return 0 if unsigned else -128


def bytes_fit(cv: Conv, init: int, target: Target) -> bool:
    """Whether the byte kernel (:func:`byte_pool_function`) takes the pool
    ``cv`` (filled with ``init``) on ``target``: AVX-512, a static batch,
    dilation 1, strides 1 or 2, each output row in one vector of LANES8
    bytes and its input row in
    one read of stride x LANES8 bytes, every window with at least one row
    inside the input, and a pad (if any) of the type's minimum (so a
    padded row may be left out: its maximum changes nothing)."""
    (n, c, h, w), (_, _, oh, ow) = cv.xs, cv.os
    pt, pl, pb, pr = cv.pad or (0, 0, 0, 0)
    lo = _type_min(cv.quant.unsigned)
    return (BYTE_POOLS and target.vector_width * 4 == LANES8 and n is not None
            and tuple(cv.d) == (1, 1) and cv.s[0] in (1, 2) and cv.s[1] in (1, 2)
            and ow <= LANES8 and w <= cv.s[1] * LANES8
            and (not any((pt, pl, pb, pr)) or int(cv.pad_value) == lo)
            and pt <= cv.kh - 1 and (oh - 1) * cv.s[0] - pt <= h - 1)


def plan(op: ir.Operation, target: Target):
    """The kernel plan's rule for an 8-bit max pool: (tile, threaded,
    reason) of the byte kernel or the row kernel, or None."""
    from onnx_mlir_py.passes.optimize.kernel_plan import WINDOW_THREAD_MIN_MACS, _macs_str, _window
    from onnx_mlir_py.passes.optimize.row_plan import macs
    found = _match(op)
    if found is None:
        return None
    cv = found[0]
    if bytes_fit(cv, found[4], target):
        n = macs(cv)
        return (f"rows of {LANES8} bytes", n >= WINDOW_THREAD_MIN_MACS,
                f"8-bit max pool (byte maxima), {cv.kh}x{cv.kw} window inside the input; "
                f"{_macs_str(n)} per image")
    return _window(_match, "8-bit max pool (f32 maxima, exact)")(op, target)


def byte_blocks(cv: Conv, threads: bool) -> int:
    """The scf.forall blocks of the byte kernel's N*C channel rows (1: none)."""
    from onnx_mlir_py.passes.optimize.kernel_plan import WINDOW_THREAD_MIN_MACS
    from onnx_mlir_py.passes.optimize.row_plan import channel_blocks, macs
    return channel_blocks(cv.xs[0] * cv.xs[1], threads and macs(cv) >= WINDOW_THREAD_MIN_MACS)


def byte_pool_function(name: str, cv: Conv, init: int, blocks: int) -> str:
    """``@name(x: i8 [N, C, H, W], window, out: i8 [N, C, OH, OW], start)
    -> out`` (``window`` and ``start``, the row kernel's operands, unread):
    per channel and output row, the maximum of its KH input rows (clamped
    into the input: a window's rows past the edge are pad, the type's
    minimum, and the clamped row is one of the window's), one read of
    stride x 64 bytes each (padded with the pad past the row), split into
    its stride phases (even / odd bytes: ``vector.shuffle``, vpermt2b), then
    the maximum of the KW taps' phase vectors, each shifted by its column
    offset with the pad shifted in (``vector.shuffle``), with ``init``
    unless it is the type's minimum; 64 output bytes written, masked to OW.
    Maxima of bytes (``arith.maxui`` / ``maxsi``): the same values as the
    scalar loop nest."""
    from onnx_mlir_py.passes.optimize.kernel_emit import tensor
    (n, c, h, w), (_, _, oh, ow) = cv.xs, cv.os
    pt, pl = (cv.pad or (0, 0, 0, 0))[:2]
    (s0, s1), kh, kw = cv.s, cv.kh, cv.kw
    unsigned = cv.quant.unsigned
    mx = "arith.maxui" if unsigned else "arith.maxsi"
    lanes, i8 = LANES8, Elem.I8
    e = Emitter()
    x = e.param("x", tensor([n, c, h, w], i8))
    win = e.param("win", tensor([kh, kw]))
    out = e.param("out", tensor([n, c, oh, ow], i8))
    start = e.param("start", F32)
    pad8 = e.const(str(_byte(int(cv.pad_value), False)), Type_I8)
    padv = e.splat_const(str(_byte(int(cv.pad_value), False)), vector(lanes, i8))
    rows = n * c
    xc = e.op("pq", f"tensor.collapse_shape {x} [[0, 1], [2], [3]] : {x.type} into "
                    f"{tensor([rows, h, w], i8)}", tensor([rows, h, w], i8))
    oc = e.op("pq", f"tensor.collapse_shape {out} [[0, 1], [2], [3]] : {out.type} into "
                    f"{tensor([rows, oh, ow], i8)}", tensor([rows, oh, ow], i8))
    per = rows // blocks
    if blocks > 1:
        blk, dst, res = e.forall(blocks, oc)
        r0 = e.mul(blk, per)
        cur = e.extract_slice(dst, [r0, 0, 0], [per, oh, ow])
    else:
        r0, cur = 0, oc
    m, (t1,), (done,) = e.loop(0, per, 1, [cur], base="pqm")
    row = e.add(r0, m)
    o, (t2,), (r2,) = e.loop(0, oh, 1, [t1], base="pqh")
    vm = None
    for a in range(kh):
        ih = e.mul(o, s0)
        ih = e.add(ih, a - pt) if a >= pt else e.sub(ih, pt - a)
        if (oh - 1) * s0 + a - pt > h - 1:     # past the last row: the last row
            ih = e.iop("minsi", ih, h - 1)
        if a < pt:                             # above the first row: the first row
            ih = e.iop("maxsi", ih, 0)
        v = e.read(xc, [row, ih, 0], pad8, vector(s1 * lanes, i8),
                   in_bounds=s1 * lanes <= w, base="pqr")
        vm = v if vm is None else e.binary(mx, vm, v, base="pqv")
    phases = [vm] if s1 == 1 else \
        [e.shuffle(vm, vm, list(range(r, 2 * lanes, 2)), base="pqp") for r in (0, 1)]
    acc = None
    for b in range(kw):
        q, r = divmod(b - pl, s1)
        u = phases[r]
        if q:       # lane j reads lane j + q of the phase, the pad outside it
            u = e.shuffle(u, padv, [j + q if 0 <= j + q < lanes else lanes
                                    for j in range(lanes)], base="pqs")
        acc = u if acc is None else e.binary(mx, acc, u, base="pqa")
    if init != _type_min(unsigned):
        acc = e.binary(mx, acc, e.splat_const(str(_byte(init, False)), vector(lanes, i8)),
                       base="pqa")
    e.end([e.write(acc, t2, [m, o, 0], in_bounds=lanes <= ow, base="pqw")])
    e.end([r2])
    if blocks > 1:
        e.end_forall(done, dst, [r0, 0, 0], [per, oh, ow])
    else:
        res = done
    ot = tensor([n, c, oh, ow], i8)
    y = e.op("pq", f"tensor.expand_shape {res} [[0, 1], [2], [3]] output_shape "
                   f"[{n}, {c}, {oh}, {ow}] : {res.type} into {ot}", ot)
    e(f"return {y} : {ot}")
    return e.function(name, [x, win, out, start], ot)
