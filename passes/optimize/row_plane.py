"""The row kernel's scratch plane (:mod:`.row_kernel`, when the window op's
input pad is fused).

Padding: each (n, c) plane is copied into the interior of a per-task scratch
plane whose border was set to the pad's value once (the pad of the whole
tensor cost more than the convolution itself: a memset and a copy of the
full activation through memory). The scratch is wider than the padded row,
so rows are computed in whole vectors only (the last one stores just the
columns that are left) and the copy's last vector per row is a masked read
whose zero lanes land on the border.

Prologue: with a unary elementwise generic before the pad (a 1x1 conv's
ReLU6 / HardSwish before a depthwise conv, the MobileNet block), the copy
reads that generic's input and applies its ops to each vector it copies
(lanes of a row's masked last read are reset to the border's value: the op
need not map 0 to 0), so the activation is no separate pass through memory.
"""
from __future__ import annotations

from onnx_mlir_py.passes.optimize.kernel_emit import Emitter, Value, mask, vector
from onnx_mlir_py.passes.optimize.row_emit import emit_ops
from onnx_mlir_py.passes.optimize.row_plan import Conv, geometry, split


def plane_init(e: Emitter, cv: Conv, hp: int, limit: int, vw: int, padv: Value) -> Value:
    """The scratch plane ([hp, limit]) with the pad value ``padv`` wherever
    no channel's :func:`plane_copy` writes: the rows above and below the
    image and, beside each image row, the columns left of it and right of
    its whole-vector copy. Filled once per task, before the copies (so a
    border vector may overlap the interior); a fill of the whole plane was
    as many stores as the copy itself for a task of one channel (MobileNetV3's
    16-channel 112x112 depthwise conv: 16 tasks)."""
    lanes = min(vw, limit)
    padvv = e.broadcast(padv, vector(lanes))
    cur = e.empty([hp, limit])
    for lo, hi, cols in border(cv, hp, limit, vw):
        cur = _fill_rows(e, cur, lo, hi, cols, padvv)
    return cur


def border(cv: Conv, hp: int, limit: int, vw: int) -> list[tuple[int, int, list[int]]]:
    """What :func:`plane_init` fills: ``(first row, end row, starts of
    min(vw, limit)-lane vectors)``: every column of the rows above and below
    the image; beside the image rows, the columns left of ``pl`` and from
    the end of the copies' whole vectors ``[pl, pl + ceil(w / vw) * vw)``."""
    pt, pl = cv.pad[0], cv.pad[1]
    h, w = cv.xs[2], cv.xs[3]
    lanes = min(vw, limit)
    full = _starts(0, limit, limit, lanes)
    if split(cv):       # per half: left of the copy's first index, right of its last
        half, side = limit // 2, []
        for q in (0, 1):
            at = (pl + q) % 2 * half
            first = at + (pl + q) // 2
            side += _starts(at, first, limit, lanes) + \
                _starts(first + -(-w // (2 * vw)) * vw, at + half, limit, lanes)
    else:
        right = pl + -(-w // vw) * vw
        side = _starts(0, pl, limit, lanes) + _starts(right, limit, limit, lanes)
    return [(lo, hi, cols) for lo, hi, cols in ((0, pt, full), (pt, pt + h, side),
                                                (pt + h, hp, full)) if hi > lo and cols]


def _starts(lo: int, hi: int, limit: int, lanes: int) -> list[int]:
    """Starts of ``lanes``-wide vectors that cover columns [lo, hi) of a row
    of ``limit`` columns (one that would pass the row's end moved back)."""
    return sorted({min(st, limit - lanes) for st in range(lo, hi, lanes)})


def _fill_rows(e: Emitter, init: Value, lo: int, hi: int, cols: list[int], padvv: Value) -> Value:
    """``init`` with ``padvv`` written at ``cols`` of rows [lo, hi)."""
    fr, (cur,), (res,) = e.loop(e.index(lo), e.index(hi), e.index(1), [init])
    for col in cols:
        cur = e.write(padvv, cur, [fr, col], base="fw")
    e.end([cur])
    return res


class Prologue:
    """Per channel: the prologue's captured scalars as vectors (``caps``)
    and, when rows end in a masked read, its mask and border vector; with
    an 8-bit input (``cv.quant``), its per-channel values ``quant``."""

    def __init__(self, e: Emitter, cv: Conv, vw: int, pcaps: list[Value], padv: Value,
                 quant=None):
        w = cv.xs[3]
        self.cv, self.quant = cv, quant
        self.caps = [e.broadcast(p, vector(vw), base="pcv") for p in pcaps]
        self.mask = self.zero = None
        if (cv.prologue or cv.quant) and w % vw:
            # a row's masked last read: the lanes past the row keep the border's zeros
            self.mask = e.op("pmask", f"vector.constant_mask [{w % vw}] : {mask(vw)}", mask(vw))
            self.zero = e.broadcast(padv, vector(vw), base="pzero")

    def apply(self, e: Emitter, v: Value) -> Value:
        """The prologue on a vector of the input (an 8-bit one: converted to f32)."""
        if self.cv.quant is not None:
            return self.cv.quant.prologue(e, self.quant, v)
        return emit_ops(e, self.cv.prologue, self.cv.pro_result, v, self.caps)


def rows_needed(e: Emitter, cv: Conv, oh0, count: int):
    """The input rows [0, end) that output rows ``oh0 .. oh0 + count - 1``
    (and those before them) read: ``end`` (an int when ``oh0`` is one, else
    an index value), clamped to [0, H]."""
    h, pt = cv.xs[2], cv.pad[0]
    c = (count - 1) * cv.s[0] + (cv.kh - 1) * cv.d[0] - pt + 1
    if isinstance(oh0, int):
        return min(h, max(0, oh0 * cv.s[0] + c))
    t = e.mul(oh0, cv.s[0])
    t = e.add(t, c) if c >= 0 else e.sub(e.iop("maxsi", t, -c), -c)
    return e.iop("minsi", t, h)


def plane_copy(e: Emitter, cv: Conv, x: Value, n: Value, c: Value, plane: Value, vw: int,
               pro: Prologue, padv: Value, lo=0, hi=None) -> Value:
    """``plane`` with rows ``lo .. hi - 1`` (default: all) of ``x[n, c]``
    (prologue applied) written into its interior; the border keeps the
    fill. The row kernel copies the rows each group of output rows needs
    just before computing it (:func:`rows_needed`): the rows it reads were
    just written (in L1), and the input's loads overlap the FMAs."""
    h, w = cv.xs[2], cv.xs[3]
    pt, pl = cv.pad[0], cv.pad[1]
    r, (cur,), (res,) = e.loop(lo, h if hi is None else hi, e.index(1), [plane])
    rr = e.add(r, pt)
    if split(cv):
        cur = _split_copy(e, cv, x, [n, c, r], rr, cur, vw, pro, padv)
    else:
        for col in range(0, w, vw):
            # whole vectors: a row's last one is a masked read (zeros past
            # the row), written over the right border's zeros
            v = _row_vector(e, cv, x, [n, c, r], col, vw, pro, padv)
            cur = e.write(v, cur, [rr, col + pl], base="sc")
    e.end([cur])
    return res


def _row_vector(e: Emitter, cv: Conv, x: Value, at: list, col: int, vw: int, pro: Prologue,
                padv: Value) -> Value:
    """``x[at + [col:col+vw]]`` with the prologue applied; lanes past the row
    hold the border's value."""
    w = cv.xs[3]
    inb = col + vw <= w
    el = x.type.elem
    zero = padv if el == padv.type.elem else e.const("0", x.type.scalar)   # an 8-bit input
    v = e.read(x, at + [col], zero, vector(vw, el), in_bounds=inb, base="cp")
    if cv.prologue or cv.quant:
        v = pro.apply(e, v)
        if not inb:
            v = e.select(pro.mask, v, pro.zero, base="cp")
    return v


def _split_copy(e: Emitter, cv: Conv, x: Value, at: list, rr: Value, cur: Value, vw: int,
                pro: Prologue, padv: Value) -> Value:
    """The loop body of :func:`plane_copy` for a :func:`.row_plan.split`
    plane: each 2*vw input columns go, as their even and odd columns, to
    padded column ``p = pl + col`` at index ``p // 2`` of half ``p % 2``."""
    w, pl = cv.xs[3], cv.pad[1]
    half = geometry(cv, vw)[1] // 2
    for col in range(0, w, 2 * vw):
        a = _row_vector(e, cv, x, at, col, vw, pro, padv)
        b = _row_vector(e, cv, x, at, col + vw, vw, pro, padv) if col + vw < w else \
            e.broadcast(padv, vector(vw), base="cp")
        for q in (0, 1):
            v = e.shuffle(a, b, [q + 2 * k for k in range(vw)])
            cur = e.write(v, cur, [rr, (pl + q) % 2 * half + (pl + col + q) // 2], base="sc")
    return cur
