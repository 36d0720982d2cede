"""Depthwise convolutions -> a vector kernel over output rows.

``linalg.depthwise_conv_2d_nchw_chw`` (f32, static; a dynamic batch runs the
batch-1 kernel once per image, see :mod:`.batch_loop`) with input ``[N, C, H, W]``,
weights ``[C, KH, KW]``, strides s and dilations d is replaced by a kernel
written in the vector dialect on tensors (a private function, inlined, like
the packed matmul of :mod:`.matmul_text`):

    for c (blocks of an scf.forall when threaded), n:
      plane = zero-padded x[n, c]            (scratch [Hp, Wp'], border stays 0)
      wv_kh_kw = broadcast(w[c, kh, kw])     KH*KW registers
      for oh, for ow in chunks of U vectors of V lanes (then the tail):
        acc_u = init                                 (bias[c], fill scalar or out)
        for kh, kw:  acc_u = fma(row read of plane, wv_kh_kw, acc_u)
        out[n, c, oh, ow + u*V ...] = epilogue(acc_u)

Why not upstream: linalg's conv vectorizer only handles 1-D layouts, and a
tap-sum ``linalg.generic`` over strided views, tiled and vectorized, turned
stride-2 reads into scalar loads and spilled its hoisted weight broadcasts.

Reads: stride 1 reads ``V`` contiguous elements per tap. A stride s > 1
reads ``s*V`` contiguous elements once per group of taps whose column
offsets round down to the same multiple of s, and each tap keeps every s-th
lane (``vector.shuffle``). For s = 2 on 8-lane vectors the kept lanes follow
the in-128-bit-lane order of AVX's ``vshufps`` (one instruction instead of a
shuffle and a cross-lane permute); the accumulator is put back in order once,
before the store. How a row is cut into chunks: :func:`row_plan`.

Padding: when the conv's input is a ``tensor.pad`` with zeros (the Conv
lowering's) used only by the conv, the pad is fused: each (n, c) plane is
copied into the interior of a per-task scratch plane whose border was zeroed
once (the pad of the whole tensor cost more than the convolution itself: a
memset and a copy of the full activation through memory). The scratch is
wider than the padded row, so rows are computed in whole vectors only (the
last one stores just the columns that are left) and the copy's last vector
per row is a masked read whose zero lanes land on the border. Without a
fused pad the kernel reads the input directly; a row then ends in whole
vectors and one shorter vector (static sizes), and a strided read that
would run past the row's end is shortened.

Prologue: with a fused pad whose input is a unary elementwise generic used
only by it (a 1x1 conv's ReLU6 / HardSwish before a depthwise conv, the
MobileNet block), the kernel reads that generic's input and applies its ops
to each vector it copies into the scratch plane (lanes of a row's masked
last read are reset to the border's zero: the op need not map 0 to 0), so the
activation is no separate pass through memory.

Fused neighbours (each only when it is the single user): a per-channel bias
add (``x + b[c]``, as produced by the Conv lowering) becomes the
accumulator's initial value, and a following elementwise generic whose body
uses only arith/math ops on f32 and scalars defined outside it (ReLU,
Clip, ...) is applied to the accumulator before the store. Other inits: the
scalar of the ``linalg.fill`` that produced the output, else the output
tensor itself. The bias is added first, so results differ from the unfused
``conv + bias`` in rounding only.

Threads: with ``threads`` and at least ``THREAD_MIN_MACS`` multiply-adds the
channel loop is split into about ``THREAD_TASKS`` blocks of an
``scf.forall`` (tasks on the library's thread pool, see the package
docstring).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, replace

import mlir.ir as ir

from onnx_mlir_py.passes.optimize.batch_loop import (BATCHED, SHARED, add_functions,
                                                     batch_loop_function)
from onnx_mlir_py.passes.optimize.kernel_fusion import (batch_shape, bias_add_user, epilogue_user,
                                                 fill_scalar, prologue_producer, static_f32,
                                                 zero_fill, zero_pad)
from onnx_mlir_py.passes.optimize.matmul import THREAD_MIN_MACS
from onnx_mlir_py.dialects.onnx.opview import owner_op
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.optimize.target import Target

UNROLL = 4           # vectors per output chunk (accumulators in registers)
THREAD_TASKS = 16    # scf.forall channel blocks (about: a divisor of C is used)
# s = 2, 8 lanes: output column held by each accumulator lane (and its own
# inverse): vshufps of two 8-lane vectors takes [0, 2, 8, 10, 4, 6, 12, 14]
_INLANE8 = [0, 1, 4, 5, 2, 3, 6, 7]

def _t(shape) -> str:
    return "tensor<" + "x".join(str(s) for s in shape) + "xf32>"


def _v(n: int) -> str:
    return f"vector<{n}xf32>"


def _ints(op, name) -> list[int]:
    if name not in op.attributes:
        return [1, 1]
    return [int(x) for x in ir.DenseIntElementsAttr(op.attributes[name])]


@dataclass(frozen=True)
class Conv:
    """Everything the kernel text depends on (the key of its function)."""
    xs: tuple            # the kernel's input [N, C, H, W] (unpadded when pad is fused)
    pad: tuple           # fused zero padding (top, left, bottom, right), or ()
    kh: int
    kw: int
    os: tuple            # output [N, C, OH, OW]
    s: tuple
    d: tuple
    init: str            # "scalar" | "bias" | "out"
    epilogue: tuple = ()  # ((op name, result, operands, attr text), ...) on %e_in / %e_cap<k>
    epi_result: str = ""
    n_cap: int = 0
    combine: str = "fma"  # "fma": acc += x * w (conv); "max" / "add": pools (w unread)
    pad_value: float = 0.0  # the fused pad's value (the scratch border)
    prologue: tuple = ()  # elementwise ops applied to the input as it is copied
    pro_result: str = ""  # into the scratch plane (fused pad only), on %e_in / %e_cap<k>
    n_pcap: int = 0


# -- matching -------------------------------------------------------------------------

def window_fits(op: ir.Operation, xs, kernel, os_) -> tuple[list, list] | None:
    """(strides, dilations) of a 2-D window op whose every output window
    (``kernel`` taps, NCHW ``xs`` -> ``os_``) lies in the input; else None."""
    s, d = _ints(op, "strides"), _ints(op, "dilations")
    if len(s) != 2 or len(d) != 2 or min(s + d) < 1:
        return None
    if any((os_[2 + i] - 1) * s[i] + (kernel[i] - 1) * d[i] + 1 > xs[2 + i] for i in range(2)):
        return None
    return s, d


def kernel_operands(op: ir.Operation, x: ir.Value, fill, bias=None):
    """``(init, operands, ops to erase, op whose result is replaced, Conv
    keywords)`` of the row kernel for the window op ``op`` on ``x``: its start
    (the fused bias add, the output's constant fill, or the output itself)
    and the fused elementwise user with its captured operands."""
    operands = [x, op.operands[1]]
    if bias is not None:
        init = "bias"
        operands += [fill[1], bias[1]]
    elif fill is not None:
        init = "scalar"
        operands += [fill[1], fill[0]]
    else:
        init = "out"
        operands += [op.operands[2]]
    erase = [op] + ([bias[0]] if bias is not None else [])
    last = bias[0] if bias is not None else op
    kw = {}
    epi = epilogue_user(last.results[0])
    if epi is not None:
        kw = dict(epilogue=epi[1], epi_result=epi[2], n_cap=len(epi[3]))
        operands += list(epi[3])
        erase.append(epi[0])
        last = epi[0]
    return init, operands, erase, last, kw


def _match(op: ir.Operation):
    """``(Conv, operands, ops to erase, op whose result is replaced)`` or None."""
    if op.name != "linalg.depthwise_conv_2d_nchw_chw":
        return None
    if len(op.operands) != 3 or len(op.results) != 1:
        return None
    # static, but for a dynamic batch (None): a loop around the batch-1 kernel
    shapes = [batch_shape(op.operands[0]), static_f32(op.operands[1]), batch_shape(op.operands[2])]
    if any(sh is None for sh in shapes) or 0 in sum(shapes, []):
        return None
    xs, ws, os_ = shapes
    if len(xs) != 4 or len(ws) != 3 or len(os_) != 4 or ws[0] != xs[1] \
            or os_[:2] != xs[:2]:
        return None
    win = window_fits(op, xs, ws[1:], os_)
    if win is None:
        return None
    s, d = win
    x = op.operands[0]
    padded = zero_pad(x)
    pad: tuple = ()
    pro = None
    if padded is not None:
        x, pad = padded
        # the elementwise op before the pad (a 1x1 conv's ReLU6): applied in the plane copy
        pro = prologue_producer(x)
        if pro is not None:
            x = pro[4]
        xs = batch_shape(x)
    fill = fill_scalar(op.operands[2])
    # the bias replaces the fill value as the start: only when that is 0.0
    bias = bias_add_user(op.results[0]) if zero_fill(op.operands[2]) else None
    init, operands, erase, last, kw = kernel_operands(op, x, fill, bias)
    dead = []
    if pro is not None:
        kw.update(prologue=pro[1], pro_result=pro[2], n_pcap=len(pro[3]))
        operands += list(pro[3])
        dead = [owner_op(op.operands[0]), pro[0]]      # the pad, then the prologue generic
    cv = Conv(tuple(xs), tuple(pad), ws[1], ws[2], tuple(os_), tuple(s), tuple(d), init, **kw)
    return cv, operands, erase, last, dead


# -- kernel text ------------------------------------------------------------------------

class _Emit:
    def __init__(self):
        self.lines: list[str] = []
        self.consts: dict[int, str] = {}
        self.k = 0
        self.ind = 2

    def __call__(self, text: str):
        self.lines.append("  " * self.ind + text)

    def val(self, base: str, text: str) -> str:
        """Emit ``%<fresh> = text``; returns the name."""
        self.k += 1
        nm = f"%{base}{self.k}"
        self(f"{nm} = {text}")
        return nm

    def idx(self, v: int) -> str:
        if v not in self.consts:
            self.consts[v] = f"%i{v}"
        return self.consts[v]

    def add(self, a: str, b: int) -> str:
        return a if b == 0 else self.val("ix", f"arith.addi {a}, {self.idx(b)} : index")

    def mul(self, a: str, b: int) -> str:
        return a if b == 1 else self.val("ix", f"arith.muli {a}, {self.idx(b)} : index")


def _lane_sizes(ow: int, vw: int) -> list[int]:
    sizes = [vw] if ow >= vw else []
    if ow % vw:
        sizes.append(ow % vw)
    return sizes


def _bases(cv: Conv) -> dict[int, list[int]]:
    """Strided read groups: base column offset -> the phases of its taps."""
    s1, d1 = cv.s[1], cv.d[1]
    out: dict[int, list[int]] = {}
    for j in range(cv.kw):
        off = j * d1
        out.setdefault(off - off % s1, []).append(off % s1)
    return out


def _wide(cv: Conv) -> bool:
    """Whole vectors only (the scratch has room for them): a fused pad, and
    accumulators that do not start from the output tensor."""
    return bool(cv.pad) and cv.init != "out"


def _geometry(cv: Conv, vw: int):
    """(padded H, width that bounds the reads: the scratch's when the pad is fused)."""
    n, c, h, w = cv.xs
    if not cv.pad:
        return h, w
    pt, pl, pb, pr = cv.pad
    hp, wp = h + pt + pb, w + pl + pr
    ow, s1 = cv.os[3], cv.s[1]
    top = max(_bases(cv))
    wsc = max(wp, pl + -(-w // vw) * vw)             # whole-vector row copies
    last = -(-ow // vw) * vw if _wide(cv) else ow    # output columns computed
    wsc = max(wsc, last * s1 + top if s1 > 1 else last + top)
    return hp, wsc


def row_plan(cv: Conv, vw: int) -> tuple[int, list[tuple[int, int, int, int]]]:
    """How an output row is covered: ``(m, chunks)``: a loop of ``m`` chunks
    of UNROLL whole vectors from column 0, then static chunks ``(first
    column, lanes, vectors, lanes stored by the last vector)``. Stores never
    pass the row's end; a full-length strided read in the loop never passes
    the readable width (the scratch's when the pad is fused)."""
    ow, s1 = cv.os[3], cv.s[1]
    step = UNROLL * vw
    _hp, limit = _geometry(cv, vw)
    m = ow // step
    if s1 > 1:
        top = max(_bases(cv))
        while m > 0 and (m * step - vw) * s1 + top + s1 * vw > limit:
            m -= 1
    pos, chunks = m * step, []
    if _wide(cv):       # whole vectors, the last one stores what is left
        nv = -(-(ow - pos) // vw)
        while nv > 0:
            cnt = min(UNROLL, nv)
            end = pos + cnt * vw
            chunks.append((pos, vw, cnt, vw - (end - ow) if end > ow else vw))
            pos, nv = end, nv - cnt
    while pos < ow:     # whole vectors, then one shorter vector
        lanes = vw if ow - pos >= vw else ow - pos
        cnt = min(UNROLL, (ow - pos) // lanes)
        chunks.append((pos, lanes, cnt, lanes))
        pos += lanes * cnt
    return m, chunks


def channel_blocks(c: int, threads: bool) -> int:
    """How many scf.forall blocks the C channels are split into (1: no forall)."""
    if not threads:
        return 1
    want = max(1, -(-c // THREAD_TASKS))
    cb = min(b for b in range(want, c + 1) if c % b == 0)
    return c // cb


def kernel_function(name: str, cv: Conv, vw: int, blocks: int = 1) -> str:
    """``func.func private @name(x, w, out[, init | bias], captured...) -> out``."""
    n, c, h, w = cv.xs
    _, _, oh, ow = cv.os
    s0, s1 = cv.s
    d0, d1 = cv.d
    hp, limit = _geometry(cv, vw)
    wide = _wide(cv)
    fused = bool(cv.pad)
    taps = [(i, j) for i in range(cv.kh) for j in range(cv.kw)]
    wt = _t([c, cv.kh, cv.kw] if cv.combine == "fma" else [cv.kh, cv.kw])   # pools: the window
    ot = _t(cv.os)
    xt = _t(cv.xs)
    st = _t([hp, limit])
    cb = c // blocks
    e = _Emit()

    args = [f"%x: {xt}", f"%w: {wt}", f"%o: {ot}"]
    if cv.init == "scalar":
        args.append("%init: f32")
    elif cv.init == "bias":
        args.append(f"%bias: {_t([c])}")
    args += [f"%e_cap{k}: f32" for k in range(cv.n_cap)]
    args += [f"%p_cap{k}: f32" for k in range(cv.n_pcap)]

    if blocks > 1:
        tt = _t([n, cb, oh, ow])
        e(f"%res = scf.forall (%blk) in ({blocks}) shared_outs(%oo = %o) -> ({ot}) {{")
        e.ind += 1
        e(f"%cbase = arith.muli %blk, {e.idx(cb)} : index")
        e(f"%tile = tensor.extract_slice %oo[0, %cbase, 0, 0] [{n}, {cb}, {oh}, {ow}] [1, 1, 1, 1] "
          f": {ot} to {tt}")
        tile = "%tile"
    else:
        tt, tile = ot, "%o"
    carried = f"%t0 = {tile}"
    types = tt
    if fused:
        e(f"%se = tensor.empty() : {st}")
        if cv.pad_value == 0.0:     # a memset
            e(f"%sf = linalg.fill ins(%padv : f32) outs(%se : {st}) -> {st}")
        else:                       # rows of vector stores (linalg.fill became scatters)
            _vector_fill(e, "%sf", "%se", st, hp, limit, vw)
        carried += ", %s0 = %sf"
        types += f", {st}"
    e(f"%cres:{2 if fused else 1} = scf.for %cc = {e.idx(0)} to {e.idx(cb)} step {e.idx(1)} "
      f"iter_args({carried}) -> ({types}) {{")
    e.ind += 1
    e(f"%c = arith.addi {'%cbase' if blocks > 1 else e.idx(0)}, %cc : index")
    for i, j in taps if cv.combine == "fma" else ():
        e(f"%ws{i}_{j} = tensor.extract %w[%c, {e.idx(i)}, {e.idx(j)}] : {wt}")
    init_scalar = None
    if cv.init == "bias":
        e(f"%binit = tensor.extract %bias[%c] : {_t([c])}")
        init_scalar = "%binit"
    elif cv.init == "scalar":
        init_scalar = "%init"
    lane_sizes = [vw] if wide else _lane_sizes(ow, vw)

    def splat(nm: str, scalar: str):
        full = f"{nm}_{vw}"
        if vw in lane_sizes:
            e(f"{full} = vector.broadcast {scalar} : f32 to {_v(vw)}")
        for lanes in lane_sizes:
            if lanes == vw:
                continue
            if vw in lane_sizes:
                e(f"{nm}_{lanes} = vector.extract_strided_slice {full} {{offsets = [0], "
                  f"sizes = [{lanes}], strides = [1]}} : {_v(vw)} to {_v(lanes)}")
            else:
                e(f"{nm}_{lanes} = vector.broadcast {scalar} : f32 to {_v(lanes)}")

    for i, j in taps if cv.combine == "fma" else ():
        splat(f"%wv{i}_{j}", f"%ws{i}_{j}")
    if init_scalar:
        splat("%iv", init_scalar)
    for k in range(cv.n_cap):
        splat(f"%ecv{k}", f"%e_cap{k}")
    for k in range(cv.n_pcap):
        e(f"%pcv{k} = vector.broadcast %p_cap{k} : f32 to {_v(vw)}")
    if cv.prologue and w % vw:
        # a row's masked last read: the lanes past the row keep the border's zeros
        e(f"%pmask = vector.constant_mask [{w % vw}] : vector<{vw}xi1>")
        e(f"%pzero = vector.broadcast %padv : f32 to {_v(vw)}")

    carried = "%t1 = %t0" + (", %s1 = %s0" if fused else "")
    e(f"%nres:{2 if fused else 1} = scf.for %n = {e.idx(0)} to {e.idx(n)} step {e.idx(1)} "
      f"iter_args({carried}) -> ({types}) {{")
    e.ind += 1
    if fused:
        # the plane's interior; the border keeps the zeros of the fill
        pt, pl = cv.pad[0], cv.pad[1]
        e(f"%sp = scf.for %r = {e.idx(0)} to {e.idx(h)} step {e.idx(1)} "
          f"iter_args(%sr = %s1) -> ({st}) {{")
        e.ind += 1
        rr = e.add("%r", pt)
        cur = "%sr"
        for col in range(0, w, vw):
            # whole vectors: a row's last one is a masked read (zeros past
            # the row), written over the right border's zeros
            inb = "true" if col + vw <= w else "false"
            v = e.val("cp", f"vector.transfer_read %x[%n, %c, %r, {e.idx(col)}], %padv "
                            f"{{in_bounds = [{inb}]}} : {xt}, {_v(vw)}")
            if cv.prologue:
                v = _emit_ops(e, cv.prologue, cv.pro_result, v, "%pcv{}", vw)
                if inb == "false":
                    v = e.val("cp", f"arith.select %pmask, {v}, %pzero : vector<{vw}xi1>, {_v(vw)}")
            cur = e.val("sc", f"vector.transfer_write {v}, {cur}[{rr}, {e.idx(col + pl)}] "
                              f"{{in_bounds = [true]}} : {_v(vw)}, {st}")
        e(f"scf.yield {cur} : {st}")
        e.ind -= 1
        e("}")

    def read(row: str, col: str, length: int) -> str:
        if fused:
            return e.val("x", f"vector.transfer_read %sp[{row}, {col}], %zero "
                              f"{{in_bounds = [true]}} : {st}, {_v(length)}")
        return e.val("x", f"vector.transfer_read %x[%n, %c, {row}, {col}], %zero "
                          f"{{in_bounds = [true]}} : {xt}, {_v(length)}")

    def shuffle(v: str, length: int, idx: list[int]) -> str:
        return e.val("sh", f"vector.shuffle {v}, {v} [{', '.join(map(str, idx))}] "
                           f": {_v(length)}, {_v(length)}")

    bases = _bases(cv)

    def chunk(ow0: str, lanes: int, count: int, tin: str, static_ow0: int | None,
              last_lanes: int | None = None) -> str:
        """``count`` vectors of ``lanes`` output columns from ``ow0`` (the last
        one stores only ``last_lanes``); returns the updated output tensor."""
        inlane = s1 == 2 and lanes == 8
        cols, accs = [], []
        for u in range(count):
            col = e.add(ow0, u * lanes)
            cols.append(col)
            if init_scalar:
                accs.append(f"%iv_{lanes}")
            else:
                a = e.val("acc", f"vector.transfer_read {tin}[%n, %cc, %oh, {col}], %zero "
                                 f"{{in_bounds = [true]}} : {tt}, {_v(lanes)}")
                accs.append(shuffle(a, lanes, _INLANE8) if inlane else a)
        xcols = [e.mul(col, s1) for col in cols]
        leaves: list[list[str]] = [[] for _ in range(count)]
        for i in range(cv.kh):
            row = f"%row{i}"
            reads: dict = {}
            for j in range(cv.kw):
                off = j * d1
                base, phase = off - off % s1, off % s1
                for u in range(count):
                    if (base, u) not in reads:
                        xcol = e.add(xcols[u], base)
                        length = lanes if s1 == 1 else s1 * lanes
                        if s1 > 1 and static_ow0 is not None and \
                                (static_ow0 + u * lanes) * s1 + base + length > limit:
                            length = max(bases[base]) + s1 * (lanes - 1) + 1
                        reads[(base, u)] = (read(row, xcol, length), length)
                    r, length = reads[(base, u)]
                    if s1 == 1:
                        v = r
                    else:
                        order = _INLANE8 if inlane else range(lanes)
                        v = shuffle(r, length, [phase + s1 * q for q in order])
                    if cv.combine == "max":
                        leaves[u].append(v)
                    else:
                        accs[u] = e.val("acc", _combine(cv, v, f"%wv{i}_{j}_{lanes}", accs[u],
                                                        lanes))
        for u in range(count if cv.combine == "max" else 0):
            # a balanced tree (max is exact in any order): a chain of K*K
            # dependent maxima was latency-bound
            vals = [accs[u]] + leaves[u]
            while len(vals) > 1:
                pairs = [e.val("acc", _combine(cv, a, "", b, lanes))
                         for a, b in zip(vals[0::2], vals[1::2])]
                vals = pairs + vals[len(pairs) * 2:]
            accs[u] = vals[0]
        cur = tin
        for u in range(count):
            val = shuffle(accs[u], lanes, _INLANE8) if inlane else accs[u]
            val = _emit_epilogue(e, cv, val, lanes)
            keep = lanes
            if u == count - 1 and last_lanes is not None and last_lanes < lanes:
                keep = last_lanes
                val = e.val("part", f"vector.extract_strided_slice {val} {{offsets = [0], "
                                    f"sizes = [{keep}], strides = [1]}} : {_v(lanes)} to {_v(keep)}")
            cur = e.val("t", f"vector.transfer_write {val}, {cur}[%n, %cc, %oh, {cols[u]}] "
                             f"{{in_bounds = [true]}} : {_v(keep)}, {tt}")
        return cur

    e(f"%hres = scf.for %oh = {e.idx(0)} to {e.idx(oh)} step {e.idx(1)} "
      f"iter_args(%t2 = %t1) -> ({tt}) {{")
    e.ind += 1
    ohs = e.mul("%oh", s0)
    for i in range(cv.kh):
        e(f"%row{i} = arith.addi {ohs}, {e.idx(i * d0)} : index")
    step = UNROLL * vw
    main, chunks = row_plan(cv, vw)
    cur = "%t2"
    if main:
        e(f"%wres = scf.for %owb = {e.idx(0)} to {e.idx(main * step)} step {e.idx(step)} "
          f"iter_args(%t3 = %t2) -> ({tt}) {{")
        e.ind += 1
        r = chunk("%owb", vw, UNROLL, "%t3", None)
        e(f"scf.yield {r} : {tt}")
        e.ind -= 1
        e("}")
        cur = "%wres"
    for pos, lanes, cnt, keep in chunks:
        cur = chunk(e.idx(pos), lanes, cnt, cur, pos, keep)
    e(f"scf.yield {cur} : {tt}")
    e.ind -= 1
    e("}")
    e(f"scf.yield %hres, %sp : {types}" if fused else f"scf.yield %hres : {types}")
    e.ind -= 1
    e("}")
    e(f"scf.yield {', '.join(f'%nres#{k}' for k in range(2 if fused else 1))} : {types}")
    e.ind -= 1
    e("}")
    if blocks > 1:
        e("scf.forall.in_parallel {")
        e.ind += 1
        e(f"tensor.parallel_insert_slice %cres#0 into %oo[0, %cbase, 0, 0] [{n}, {cb}, {oh}, {ow}] "
          f"[1, 1, 1, 1] : {tt} into {ot}")
        e.ind -= 1
        e("}")
        e.ind -= 1
        e("}")
        e(f"return %res : {ot}")
    else:
        e(f"return %cres#0 : {ot}")
    consts = [f"    {nm} = arith.constant {v} : index" for v, nm in sorted(e.consts.items())]
    consts.append("    %zero = arith.constant 0.0 : f32")
    consts.append(f"    %padv = arith.constant {_f32_hex(cv.pad_value)} : f32")
    head = f"  func.func private @{name}({', '.join(args)}) -> {ot} {{"
    return "\n".join([head] + consts + e.lines + ["  }"])


def _vector_fill(e: _Emit, res: str, init: str, st: str, rows: int, cols: int, vw: int) -> None:
    """``res`` = ``init`` ([rows, cols]) filled with ``%padv``: per row whole
    vectors, the last one overlapping the previous when cols % vw != 0."""
    lanes = min(vw, cols)
    e(f"%padvv = vector.broadcast %padv : f32 to {_v(lanes)}")
    e(f"{res} = scf.for %fr = {e.idx(0)} to {e.idx(rows)} step {e.idx(1)} "
      f"iter_args(%fs = {init}) -> ({st}) {{")
    cur = "%fs"
    starts = list(range(0, cols - lanes + 1, lanes))
    if starts[-1] + lanes < cols:
        starts.append(cols - lanes)
    for col in starts:
        cur = e.val("fw", f"vector.transfer_write %padvv, {cur}[%fr, {e.idx(col)}] "
                          f"{{in_bounds = [true]}} : {_v(lanes)}, {st}")
    e(f"  scf.yield {cur} : {st}")
    e("}")


def _f32_hex(v: float) -> str:
    """An f32 constant's exact text (-inf, -0.0 included)."""
    return f"0x{struct.unpack('<I', struct.pack('<f', v))[0]:08X}"


def _combine(cv: Conv, v: str, w: str, acc: str, lanes: int) -> str:
    if cv.combine == "fma":
        return f"vector.fma {v}, {w}, {acc} : {_v(lanes)}"
    op = {"max": "arith.maximumf", "add": "arith.addf"}[cv.combine]
    return f"{op} {acc}, {v} : {_v(lanes)}"


def _emit_epilogue(e: _Emit, cv: Conv, val: str, lanes: int) -> str:
    if not cv.epilogue:
        return val
    return _emit_ops(e, cv.epilogue, cv.epi_result, val, "%ecv{}_" + str(lanes), lanes)


def _emit_ops(e: _Emit, ops: tuple, result: str, val: str, cap: str, lanes: int) -> str:
    """The fused elementwise ``ops`` (see :class:`Conv`) on vector ``val``;
    captured scalar k is the splat named ``cap.format(k)``."""
    names = {"%e_in": val}
    for op_name, res, opnds, attrs in ops:
        for a in opnds:
            if a.startswith("%e_cap"):
                names.setdefault(a, cap.format(int(a[len("%e_cap"):])))
        names[res] = e.val("ep", f"{op_name} {', '.join(names[a] for a in opnds)}{attrs} "
                                 f": {_v(lanes)}")
    return names[result]


# -- the rewrite ------------------------------------------------------------------------

def _macs(cv: Conv) -> int:
    n, c, oh, ow = cv.os
    return n * c * oh * ow * cv.kh * cv.kw


def depthwise_convs(module: ir.Module, target: Target, threads: bool = False) -> int:
    """Replace every static f32 depthwise conv (with its zero pad, bias add
    and elementwise epilogue when fusable) by the row kernel (inlined private
    functions). Returns how many were rewritten."""
    return rewrite_all(module, "linalg.depthwise_conv_2d_nchw_chw", _match, "__om_depthwise",
                       target, threads)


def rewrite_all(module: ir.Module, select, match, prefix: str, target: Target,
                threads: bool) -> int:
    """Every op ``select`` names that ``match`` accepts -> a call of its row
    kernel (one private function per distinct kernel, ``prefix``), inlined;
    returns how many were rewritten."""
    funcs: dict[tuple, str] = {}
    count = 0
    for op in walk_ops(module.operation, select):
        found = match(op)
        if found is not None:
            replace_with_kernel(module, funcs, prefix, found, target, threads)
            count += 1
    inline_kernels(module, funcs)
    return count


def inline_kernels(module: ir.Module, funcs: dict) -> None:
    from mlir.passmanager import PassManager
    if funcs:
        PassManager.parse("builtin.module(inline, symbol-dce)", module.context).run(module.operation)


def replace_with_kernel(module: ir.Module, funcs: dict, prefix: str, found, target: Target,
                        threads: bool) -> None:
    """Replace a matched window op (``found``: (Conv, operands (x, w, out,
    init..., captured...), ops to erase, op whose result is replaced)) by a
    call of its row kernel, added to ``module`` once per key in ``funcs``."""
    from mlir.dialects import func
    cv, operands, erase, last = found[:4]
    dead = found[4] if len(found) > 4 else []    # unused once the call replaces the op
    dynamic = cv.xs[0] is None
    image = replace(cv, xs=(1,) + cv.xs[1:], os=(1,) + cv.os[1:]) if dynamic else cv
    blocks = channel_blocks(cv.os[1], threads and _macs(image) >= THREAD_MIN_MACS)
    key = (cv, blocks, target.vector_width)
    if key not in funcs:
        name = f"{prefix}_{len(funcs)}"
        if not dynamic:
            add_functions(module, kernel_function(name, cv, target.vector_width, blocks))
        else:
            # the batch-1 kernel, once per image (its args: x, w, out, init..., captured...)
            args = [(list(cv.xs), BATCHED), (list(static_f32(operands[1])), SHARED),
                    (list(cv.os), BATCHED)]
            args += [([] if str(v.type) == "f32" else list(static_f32(v)), SHARED)
                     for v in operands[3:]]
            add_functions(module,
                          kernel_function(name + "_image", image, target.vector_width, blocks),
                          batch_loop_function(name, name + "_image", args, dest=2,
                                              parallel=blocks > 1))
        funcs[key] = name
    # before the last fused op: every operand dominates it; the call's location
    # names every fused node, the window op's first (erase[0]: errors, --profile)
    with ir.InsertionPoint(last), ir.Location.fused([o.location for o in erase + dead]):
        call = func.CallOp([last.results[0].type], ir.FlatSymbolRefAttr.get(funcs[key]),
                           operands)
    last.results[0].replace_all_uses_with(call.results[0])
    for o in reversed(erase):
        o.erase()
    for o in dead:
        o.erase()
