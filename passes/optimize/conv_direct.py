"""Convs over few input channels (a network's stem: 3 channels, 3x3 to 7x7,
stride 1 or 2; a window over up to 32 channels: YOLO's first 3x3 convs) -> a
direct, register-tiled kernel. Other windows over 16+ channels with whole
panels of 2 vectors of filters (AVX-512) take the filters-in-lanes variant of
:mod:`.conv_direct_pixels` (``variant``), which reads the image itself.

The im2col form (:mod:`.conv`) spends most of a stem conv on the im2col
copy (a strided gather of 27 to 147 short rows) and on padding K = C*KH*KW
to whole blocks, for a matmul of only 16 to 64 rows: MobileNetV3's
3 -> 16 3x3/2 stem ran at 34 GFLOPS against onnxruntime's 62. Here the
input vectors are read from a per-row phase buffer:

    for each output row oh (an scf.forall over the rows when threaded):
      buf[c, i, r, m] = x[c, oh*s - top + i*d, m*s + r - left]   (0 in the pad;
                        for the kernel rows i of the row inside the image)
      for each group of U vectors of V output columns:
        for each block of FB filters fo:
          acc[f][u] = bias[fo*FB + f] (or the fill scalar)
          for c:                                  (scf.for, accumulators carried)
            for kh in the row's kernel rows:      (scf.for)
              for kw:                             (unrolled)
                x_u = buf[c, kh, (kw*d) % s, ow_u + (kw*d) // s ...]   (one read)
                acc[f][u] += x_u * broadcast(w[fo, c, kh, kw, f])
          out[fo*FB + f, oh, ow_u ...] = epilogue(acc[f][u])

The buffer is the row's input, de-interleaved by stride phase with the
zero pad's columns in place: a stride-2 column gather (a read of 2V-1
values and a shuffle) is done once per input value of the row instead of
once per tap, filter block and vector, and every group (also at the row's
ends) runs the same code. The filter blocks are the inner loop: the group's
columns of the buffer stay in L1 across them (YOLO's 3x640 stem has a 48 KB
buffer). The weights are repacked at compile time to [F/FB, C, KH, KW, FB]
(one contiguous run of FB scalars per tap). The register tile is FB x U
accumulators: 8 x 3 with 32 vector registers (AVX-512), 4 x 2 with 16.
Rows of the pad are left out of each output row's loop over kernel rows.
A per-channel bias add after the conv is the accumulators' start and an
elementwise op after that (ReLU, HardSwish, Clip, ...) their epilogue, as
in the depthwise kernel.

Zen 4, 1 thread, thread CPU time, against onnxruntime in the same process
(loaded machine): 3->64 7x7/2 at 224 (ResNet) 3.21-3.77 -> 2.25-2.41 ms
(onnxruntime 2.20-2.40); 3->16 6x6/2 at 640 (YOLO) 5.57-5.87 -> 4.18-4.92
(3.61-4.34); 3->32 3x3/2 at 224 (MobileNetV2) 0.297-0.398 -> 0.278-0.285
(0.268-0.305); 3->16 3x3/2 at 224 (MobileNetV3) unchanged, 0.161 -> 0.164
(0.126). Before, a tap's vector was a shuffle of a strided read
and the row's ends were static code gathering single lanes.
"""
from __future__ import annotations

from dataclasses import dataclass

import mlir.ir as ir

from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.optimize.batch_loop import (BATCHED, SHARED, add_functions,
                                                     batch_loop_function)
from onnx_mlir_py.passes.optimize.kernel_fusion import (batch_shape, fill_scalar,
                                                        replace_with_call, static_f32,
                                                        window_ints)
from onnx_mlir_py.passes.optimize import conv_direct_pixels as pixels
from onnx_mlir_py.passes.optimize.kernel_emit import F32, Emitter, Value, tensor, vector
from onnx_mlir_py.passes.optimize.row_emit import emit_ops
from onnx_mlir_py.passes.optimize.epilogue import vector_lines
from onnx_mlir_py.target import Target
from onnx_mlir_py.passes.optimize.kernel_plan import DIRECT_THREAD_MIN_MACS, assigned
from onnx_mlir_py.passes.optimize.kernel_budget import building

MAX_CHANNELS = 4          # input channels of a stem conv (any window)
# Input channels of a conv with a window of 2+ taps. Zen 4, 1 thread, thread CPU
# against onnxruntime in the same process (YOLO's 3x3 convs), im2col form -> this
# kernel: 16x320x320->32 /2 1.19 -> 1.00, 32x160x160->64 /2 1.09 -> 1.00,
# 16x160x160->16 1.20 -> 1.05, 32x80x80->32 1.16 -> 1.04; but 64 channels lose
# (64x40x40->64 1.18 -> 1.28, 64x56x56->64 1.08 -> 1.22, 64x80x80->128 /2 1.17 ->
# 1.23, 128x40x40->256 /2 1.11 -> 1.62): a group's columns of the buffer
# (C*KH*s*(3*16 + reach) floats) then no longer fit L1 with the weights. Narrow
# maps lose as well (a row of 2-3 vectors, one partial group): 16x32x32->16
# 1.35 -> 1.58, 32x40x40->32 1.24 -> 1.36, 32x80x80->64 /2 (40 wide) 1.12 -> 1.24;
# hence output rows of at least MIN_WINDOW_WIDTH columns (80 and 160 measured).
# (Convs over 64+ channels, and the narrower maps over 16+ channels, with whole
# panels of 32 filters now take the filters-in-lanes variant instead:
# conv_direct_pixels.py, measured there.)
MAX_WINDOW_CHANNELS = 32
MIN_WINDOW_WIDTH = 80
MAX_KW = 11               # kernel columns (the unrolled taps of one kernel row)
PLANE_L2 = 8            # the rows tile fills one plane per image up to 8x L2 (row_reuse)


def takes(c: int, kh: int, kw: int, ow: int) -> bool:
    """Whether a conv over ``c`` input channels with a ``kh`` x ``kw`` window
    and output rows of ``ow`` is this kernel's (the stems and the few-channel
    3x3 convs of wide maps)."""
    return kw <= MAX_KW and (c <= MAX_CHANNELS or (
        c <= MAX_WINDOW_CHANNELS and kh * kw > 1 and ow >= MIN_WINDOW_WIDTH))


@dataclass(frozen=True)
class Direct:
    """What the kernel text depends on (the key of its function)."""
    xs: tuple            # the input the kernel reads [N, C, H, W] (unpadded when pad is fused)
    ws: tuple            # weights [F, C, KH, KW]
    os: tuple            # output [N, F, OH, OW]
    s: tuple
    d: tuple
    init: str            # "bias" | "scalar"
    pad: tuple = (0, 0, 0, 0)  # the fused zero pad (top, left, bottom, right); xs unpadded
    epilogue: tuple = ()
    epi_result: str = ""
    n_cap: int = 0
    # an :func:`.epilogue.epilogue_chain` (``epilogue`` in its op form: SiLU's
    # Sigmoid and Mul, a residual add) on ``n_ten`` tensors of the output's shape
    chain: bool = False
    n_ten: int = 0


def tile(target: Target) -> tuple[int, int]:
    """(FB filters, U vectors) of the register tile."""
    return (8, 3) if target.num_registers >= 32 else (4, 2)


def variant(c: int, f: int, kh: int, kw: int, ow: int, target: Target) -> str | None:
    """``"rows"`` (output columns in the lanes, this module's tile), ``"pixels"``
    (filters in the lanes, :mod:`.conv_direct_pixels`) or None (not direct)."""
    fb, _u = tile(target)
    if takes(c, kh, kw, ow) and f % fb == 0 and ow >= target.vector_width:
        return "rows"
    if kw <= MAX_KW and pixels.takes(c, f, kh, kw, target.vector_width, target.num_registers):
        return "pixels"
    return None


def _match(op: ir.Operation, target: Target):
    """``(Direct, operands, ops to erase, op whose result is replaced)`` or None."""
    from onnx_mlir_py.passes.optimize.depthwise import kernel_operands
    from onnx_mlir_py.dialects.onnx.opview import owner_op
    from onnx_mlir_py.passes.optimize.kernel_fusion import bias_add_user, zero_fill, zero_pad
    if op.name != "linalg.conv_2d_nchw_fchw" or len(op.operands) != 3 or len(op.results) != 1:
        return None
    xs, ws, os_ = batch_shape(op.operands[0]), static_f32(op.operands[1]), \
        batch_shape(op.operands[2])
    if xs is None or ws is None or os_ is None or 0 in ws + xs[1:] + os_[1:]:
        return None
    if len(xs) != 4 or len(ws) != 4 or (xs[0] is None) != (os_[0] is None):
        return None
    f, c, kh, kw = ws
    s, d = window_ints(op, "strides"), window_ints(op, "dilations")
    if variant(c, f, kh, kw, os_[3], target) is None \
            or s[0] != s[1] or s[0] not in (1, 2) or min(d) < 1:
        return None
    if (os_[2] - 1) * s[0] + (kh - 1) * d[0] + 1 > xs[2] \
            or (os_[3] - 1) * s[1] + (kw - 1) * d[1] + 1 > xs[3]:
        return None
    fill = fill_scalar(op.operands[2])
    if fill is None:
        return None
    x, pad = op.operands[0], (0, 0, 0, 0)
    padded = zero_pad(x)
    if padded is not None and not finite_constant(op.operands[1]):
        padded = None       # the pad's zeros times an inf / NaN weight are NaN: read them
    if padded is not None:                 # read the unpadded image, the border skipped
        x, pad = padded[0], tuple(padded[1])
        xs = batch_shape(x)
        if xs is None or 0 in xs[1:]:
            return None
    bias = bias_add_user(op.results[0]) if zero_fill(op.operands[2]) else None
    init, operands, erase, last, kw_ = kernel_operands(op, x, fill, bias)
    at = None
    if not kw_ and variant(c, f, kh, kw, os_[3], target) == "rows":
        found = _chain(op, last, bias)
        if found is not None:
            epi, at = found
            kw_ = dict(epilogue=epi.ops, epi_result=epi.result, n_cap=len(epi.captured),
                       chain=True, n_ten=len(epi.tensors))
            operands += list(epi.tensors) + list(epi.captured)
            erase += list(epi.generics)
            last = epi.generics[-1]
    dv = Direct(tuple(xs), tuple(ws), tuple(os_), tuple(s), tuple(d), init, pad, **kw_)
    dead = [owner_op(op.operands[0])] if padded is not None else []
    return dv, operands, erase, last, dead, at


def finite_constant(w: ir.Value) -> bool:
    """``w`` is a constant whose values are all finite. A kernel that skips
    the zero pad's taps computes sum(x * w) without the 0 * w terms, which
    are NaN, not 0, where w is inf or NaN (the spec, onnxruntime and
    onnx.reference give NaN there); so it may skip them only then."""
    from onnx_mlir_py.dialects.onnx.opview import owner_op
    from onnx_mlir_py.passes.optimize.value_reads import test
    c = owner_op(w)
    return c is not None and test(c, "finite")


def _chain(op: ir.Operation, last: ir.Operation, bias):
    """``(Epilogue, at)``: the elementwise ops after the conv (or its fused
    bias add ``last``) that are no single unary generic (SiLU: a Sigmoid and
    a Mul of the same value; a residual add), as the rows tile's epilogue
    (:func:`.epilogue.epilogue_chain`, static shapes only); ``at`` the conv
    when the call may stay in its place (:func:`.epilogue.hoist_to`), else
    None (at the chain's last op). None when there is no such chain."""
    from onnx_mlir_py.passes.optimize import epilogue as epilogue_mod
    from onnx_mlir_py.passes.optimize.epilogue import dominates, epilogue_chain, hoist_to
    if not epilogue_mod.ENABLED:
        return None
    epi = epilogue_chain(last.results[0])
    if epi is None:
        return None
    here = (bias is None or dominates(bias[1], op)) and hoist_to(epi, op)
    return epi, (op if here else None)


def phase_width(dv: Direct, vw: int) -> int:
    """M, the length of one phase row of the kernel's input buffer: the
    output row's vectors plus the taps' reach ((KW-1)*d // s columns),
    rounded up to whole vectors."""
    nv = -(-dv.os[3] // vw)
    reach = ((dv.ws[3] - 1) * dv.d[1]) // dv.s[1]
    return -(-(nv * vw + reach) // vw) * vw


def plane_bytes(dv: Direct, vw: int) -> int:
    """Bytes of one image's phase plane (every input row, :meth:`_Row.fill_plane`)."""
    return dv.ws[1] * dv.xs[2] * dv.s[1] * phase_width(dv, vw) * 4


def row_reuse(dv: Direct) -> float:
    """Output rows that read each input row (KH*d / s): the per-row buffer
    copies each input row that many times, the plane once. The rows tile
    takes the plane from 2 (Zen 4, 1 thread, thread CPU, plane / per-row
    buffer, min: YOLO's 3x640 6x6/2 stem (3) 0.938, 16x160x160->16 3x3 (3)
    0.920, 32x80x80->32 3x3 (3) 0.974, ResNet's 3x224 7x7/2 stem (3.5)
    0.975; but 16x320x320->32 3x3/2 (1.5) 1.174: a 7.3 MB plane read back
    from L3 saves only a third of the fill)."""
    return dv.ws[2] * dv.d[0] / dv.s[0]


def loop_span(vw: int, s: int) -> int:
    """Input columns a loop chunk of the phase fill reads for one vector of
    a stride-``s`` phase: ``s`` whole vectors (the lanes picked by one
    shuffle). The (vw-1)*s+1 columns the lanes span (31 at stride 2) were
    an odd-length read that LLVM splits into 16+8+4+2+1-lane loads and
    inserts: the fill was ~20% of YOLO's 6x6/2 stem conv."""
    return vw * s


class _Row:
    """The emitter of one output row: the phase buffer's fill and the
    groups of vectors that read it."""

    def __init__(self, e: Emitter, dv: Direct, vw: int, fb: int, v: dict):
        """``v``: the values the row reads (x, wp, zero, n, fo, f0, iv, ecv,
        ohs_p, khlo, khhi, and buf once filled)."""
        self.e, self.dv, self.vw, self.fb, self.v = e, dv, vw, fb, v

    def _chunk(self, ch: Value, row: Value, r: int, t, static_t: int | None) -> Value:
        """Lanes q of phase ``r``'s vector ``t``: x[row, (t*vw + q)*s + r - left]
        (0 outside the image row)."""
        e, dv, vw, v = self.e, self.dv, self.vw, self.v
        s, w = dv.s[1], dv.xs[3]
        span = loop_span(vw, s)
        if static_t is None:               # a loop chunk: the whole span lies in the row
            col = e.add(e.mul(t, vw * s), r - dv.pad[1]) if r != dv.pad[1] else e.mul(t, vw * s)
            x = e.read(v["x"], [v["n"], ch, row, col], v["zero"], vector(span))
            return x if s == 1 else e.shuffle(x, x, [s * q for q in range(vw)])
        cols = [(static_t * vw + q) * s + r - dv.pad[1] for q in range(vw)]
        valid = [q for q in range(vw) if 0 <= cols[q] < w]
        if not valid:
            return e.const("dense<0.0>", vector(vw))
        lo, hi = cols[valid[0]], cols[valid[-1]]
        length = hi - lo + 1
        x = e.read(v["x"], [v["n"], ch, row, lo], v["zero"], vector(length))
        idx = [cols[q] - lo if q in valid else length for q in range(vw)]
        if length == vw and idx == list(range(vw)):
            return x
        return e.shuffle(x, e.const("dense<0.0>", vector(length)), idx)

    def fill(self, buf: Value) -> Value:
        """buf[c, i, r, m] = x[c, oh*s - top + i*d, m*s + r - left] for the
        row's kernel rows i in [khlo, khhi): one strided gather per input
        value, so that every tap of the groups is one contiguous read."""
        e, v = self.e, self.v
        return self._fill_channels(buf, v["khlo"], v["khhi"],
                                   lambda i: e.add(v["ohs_p"], e.mul(i, self.dv.d[0])))

    def _fill_channels(self, buf: Value, lo, hi, row_of) -> Value:
        """:meth:`fill_rows` of rows [lo, hi) for each channel in turn."""
        e = self.e
        ch, (b1,), (bres,) = e.loop(e.index(0), e.index(self.dv.ws[1]), e.index(1), [buf])
        e.end([self.fill_rows(b1, ch, ch, lo, hi, row_of)])
        return bres

    def fill_plane(self, plane: Value, par: bool) -> Value:
        """plane[c, h, r, m] = x[c, h, m*s + r - left] for every image row h
        (an scf.forall over the channels when ``par``): each input row
        copied once, read by the KH output rows that use it."""
        e, dv = self.e, self.dv
        c, hgt = dv.ws[1], dv.xs[2]
        if not par:
            return self._fill_channels(plane, e.index(0), e.index(hgt), lambda i: i)
        sizes = [1] + list(plane.type.shape[1:])
        ch, po, pres = e.forall(c, plane, base="pf")
        one = e.extract_slice(po, [ch, 0, 0, 0], sizes, base="pc")
        filled = self.fill_rows(one, ch, 0, e.index(0), e.index(hgt), lambda i: i)
        e.end_forall(filled, po, [ch, 0, 0, 0], sizes)
        return pres

    def fill_rows(self, buf: Value, ch, cb, lo, hi, row_of) -> Value:
        """buf[cb, i, r, m] = x[n, ch, row_of(i), m*s + r - left] for i in
        [lo, hi) (0 in the pad's columns)."""
        e, dv, vw = self.e, self.dv, self.vw
        s, w = dv.s[1], dv.xs[3]
        span = loop_span(vw, s)
        mw = buf.type.shape[3]
        i, (b2,), (ires,) = e.loop(lo, hi, e.index(1), [buf])
        row = row_of(i)
        cur = b2
        for r in range(s):
            def safe(t: int) -> bool:
                col = t * vw * s + r - dv.pad[1]
                return col >= 0 and col + span <= w
            chunks = list(range(mw // vw))
            inner = [t for t in chunks if safe(t)]
            lo_t, hi_t = (inner[0], inner[-1] + 1) if inner else (0, 0)
            if hi_t - lo_t > 0 and all(safe(t) for t in range(lo_t, hi_t)):
                statics = [t for t in chunks if t < lo_t or t >= hi_t]
            else:
                lo_t = hi_t = 0
                statics = chunks
            for t in statics:
                cur = e.write(self._chunk(ch, row, r, t, t), cur, [cb, i, r, t * vw])
            if hi_t > lo_t:
                t, (bt,), (tres,) = e.loop(e.index(lo_t), e.index(hi_t), e.index(1), [cur])
                e.end([e.write(self._chunk(ch, row, r, t, None), bt, [cb, i, r, e.mul(t, vw)])])
                cur = tres
        e.end([cur])
        return ires

    def group(self, ow0, count: int, tin: Value, keep: int | None) -> Value:
        """``count`` vectors of output columns from ``ow0`` for the filter
        block ``fo`` (the last vector stores ``keep`` lanes when given);
        returns the updated row tensor."""
        e, dv, vw, fb, v = self.e, self.dv, self.vw, self.fb, self.v
        _f, c, _kh, kw = dv.ws
        s = dv.s[1]
        cols = [e.add(ow0, u * vw) for u in range(count)]
        ch, accs, res = e.loop(e.index(0), e.index(c), e.index(1),
                               [v["iv"][k // count] for k in range(fb * count)])
        i, accs, kres = e.loop(v["khlo"], v["khhi"], e.index(1), accs)
        accs = list(accs)
        bi = v["brow"](i) if "brow" in v else i      # the buffer's row of kernel row i
        for j in range(kw):
            r, off = (j * dv.d[1]) % s, (j * dv.d[1]) // s
            xs_ = [e.read(v["buf"], [ch, bi, r, e.add(col, off)], v["zero"], vector(vw))
                   for col in cols]
            for f in range(fb):
                wv = e.broadcast(e.extract(v["wp"], [v["fo"], ch, i, j, f]), vector(vw))
                for u in range(count):
                    accs[f * count + u] = e.fma(xs_[u], wv, accs[f * count + u])
        e.end(accs)
        e.end(kres)
        cur = tin
        for f in range(fb):
            frow = e.add(v["f0"], f)
            for u in range(count):
                val = res[f * count + u]
                part = u == count - 1 and keep is not None and keep < vw
                if dv.chain:
                    ts = [e.read(t, [v["n"], frow, v["oh"], cols[u]], v["zero"], vector(vw),
                                 in_bounds=not part) for t in v["etens"]]
                    val = vector_lines(e, dv.epilogue, dv.epi_result, val, ts, v["ecaps"])
                elif dv.epilogue:
                    val = emit_ops(e, dv.epilogue, dv.epi_result, val, v["ecv"])
                if part:
                    val = e.prefix(val, keep)
                cur = e.write(val, cur, [0, frow, 0, cols[u]])
        return cur


def row_groups(ow: int, vw: int, u: int) -> tuple[int, list]:
    """(loop iterations of ``u`` whole vectors, static tail groups: (first
    vector, count, lanes kept by the last one or None)) of an output row of
    ``ow`` columns."""
    loops = (ow // vw) // u
    out, j, nv = [], loops * u, -(-ow // vw)
    while j < nv:
        cnt = min(u, nv - j)
        last = ow - (j + cnt - 1) * vw
        out.append((j, cnt, last if last < vw else None))
        j += cnt
    return loops, out


def kernel_function(name: str, dv: Direct, target: Target, threads: bool) -> str:
    """``func.func private @name(x, w, out, init | bias, captured...) -> out``."""
    vw = target.vector_width
    fb, u = tile(target)
    pix = variant(dv.ws[1], dv.ws[0], dv.ws[2], dv.ws[3], dv.os[3], target) == "pixels"
    n, c, _hp, _wp = dv.xs
    f, _c, kh, kw = dv.ws
    _, _, oh, ow = dv.os
    s = dv.s[1]
    ot = tensor(dv.os)
    e = Emitter()
    v = {"zero": e.const("0.0", F32)}
    x, w, o = e.param("x", tensor(dv.xs)), e.param("w", tensor(dv.ws)), e.param("o", ot)
    v["x"] = x
    init = e.param("init", F32) if dv.init == "scalar" else e.param("bias", tensor([f]))
    v["etens"] = [e.param("eten", ot) for _ in range(dv.n_ten)]
    ecaps = [e.param("ecap", F32) for _ in range(dv.n_cap)]
    # weights [F, C, KH, KW] -> [F/FB, C, KH, KW, FB] (a constant: folded)
    v["wp"] = pixels.weights(e, w, dv, 2 * vw if pix else fb)
    v["init"] = init
    v["ecv"] = [e.broadcast(p, vector(vw), base="ecv") for p in ecaps]
    v["ecaps"] = ecaps
    rows = n * oh
    macs = rows * ow * f * c * kh * kw
    par = threads and macs >= DIRECT_THREAD_MIN_MACS
    row = _Row(e, dv, vw, fb, v)
    image = pix                            # its taps read x itself: no plane
    plane = image or (plane_bytes(dv, vw) <= PLANE_L2 * target.l2 and row_reuse(dv) >= 2)
    if plane:                              # per image: the plane (rows tile), then its rows
        nn, (on,), (nres,) = e.loop(e.index(0), e.index(n), e.index(1), [o], base="img")
        v["n"] = nn
        panels = f // (2 * vw) if pix else 1
        # one output row (a 1-D conv) still splits by filter panels
        par = par and oh * panels > 1
        v["buf"] = None if image else row.fill_plane(
            e.empty([c, dv.xs[2], s, phase_width(dv, vw)], base="plane"), par)
        if pix and panels > 1 and pixels.panels_outer(dv, target):
            # filter panels x rows (panels_outer): a panel's weights come
            # from L3 once and stay in L2 over the rows
            if par:
                ip, oo, res = e.forall(oh * panels, on)
            else:
                ip, (oo,), (res,) = e.loop(e.index(0), e.index(oh * panels), e.index(1), [on])
            v["panel"], ohv = e.iop("divui", ip, e.index(oh)), e.rem(ip, oh)
        elif par and panels > 1:           # rows x filter panels: even shares of short maps
            ip, oo, res = e.forall(oh * panels, on)
            ohv, v["panel"] = e.iop("divui", ip, e.index(panels)), e.rem(ip, panels)
        elif par:
            ohv, oo, res = e.forall(oh, on)
        else:
            ohv, (oo,), (res,) = e.loop(e.index(0), e.index(oh), e.index(1), [on])
    else:
        par = par and rows > 1
        if par:
            i, oo, res = e.forall(rows, o)
        else:
            i, (oo,), (res,) = e.loop(e.index(0), e.index(rows), e.index(1), [o])
        v["n"] = e.iop("divui", i, e.index(oh))
        ohv = e.rem(i, oh)
    # the output row's slice: every filter, or the forall's panel of 2 vectors
    fs, f0s = (f, 0) if "panel" not in v else (2 * vw, e.mul(v["panel"], 2 * vw))
    orow = e.extract_slice(oo, [v["n"], f0s, ohv, 0], [1, fs, 1, ow], base="orow")
    v["oh"] = ohv
    ohs = e.mul(ohv, dv.s[0])
    top, bottom = dv.pad[0], dv.pad[2]
    v["ohs_p"] = e.iop("subi", ohs, e.index(top)) if top else ohs
    if top or bottom:
        # kernel rows in the image: kh*d in [top - oh*s, H - 1 + top - oh*s]
        hgt, d0 = dv.xs[2], dv.d[0]
        lo_t = e.iop("subi", e.index(top), ohs)
        lo_d = e.iop("ceildivsi", lo_t, e.index(d0))
        v["khlo"] = e.iop("maxsi", lo_d, e.index(0))
        hi_t = e.iop("subi", e.index(hgt - 1 + top), ohs)
        hi_d = e.iop("floordivsi", hi_t, e.index(d0))
        hi_1 = e.iop("addi", hi_d, e.index(1))
        v["khhi"] = e.iop("minsi", hi_1, e.index(kh))
    else:
        v["khlo"], v["khhi"] = e.index(0), e.index(kh)
    if plane:                              # the row's kernel row i: image row oh*s - top + i*d
        v["brow"] = lambda i: e.add(v["ohs_p"], e.mul(i, dv.d[0]))
    else:
        v["buf"] = row.fill(e.empty([c, kh, s, phase_width(dv, vw)], base="buf"))
    if pix:
        rres = pixels.emit_row(e, dv, vw, v, orow, v.get("panel"))
    else:
        rres = _row_groups(e, dv, vw, fb, u, v, row, init, orow)
    if par:
        e.end_forall(rres, oo, [v["n"], f0s, ohv, 0], [1, fs, 1, ow])
    else:
        e.end([e.insert_slice(rres, oo, [v["n"], f0s, ohv, 0], [1, fs, 1, ow])])
    if plane:
        e.end([res])
        res = nres
    e(f"return {res} : {ot}")
    return e.function(name, [x, w, o, init] + v["etens"] + ecaps, ot)


def _row_groups(e: Emitter, dv: Direct, vw: int, fb: int, u: int, v: dict, row: "_Row",
                init: Value, orow: Value) -> Value:
    """The output row ``orow`` in groups of ``u`` vectors of columns, every
    filter block of ``fb`` per group (output columns in the lanes)."""
    f, ow = dv.ws[0], dv.os[3]

    def blocks(ow0, count: int, tin: Value, keep: int | None) -> Value:
        """The group of ``count`` vectors at ``ow0`` for every filter block."""
        fo, (bt,), (bres,) = e.loop(e.index(0), e.index(f // fb), e.index(1), [tin])
        v["fo"] = fo
        v["f0"] = e.iop("muli", fo, e.index(fb))
        v["iv"] = []
        for k in range(fb):
            b = e.extract(init, [e.add(v["f0"], k)]) if dv.init == "bias" else init
            v["iv"].append(e.broadcast(b, vector(vw), base="iv"))
        e.end([row.group(ow0, count, bt, keep)])
        return bres
    loops, tail = row_groups(ow, vw, u)
    cur = orow
    if loops:
        owb, (rt1,), (gres,) = e.loop(e.index(0), e.index(loops * u * vw), e.index(u * vw), [cur])
        e.end([blocks(owb, u, rt1, None)])
        cur = gres
    for j, cnt, keep in tail:
        cur = blocks(e.index(j * vw), cnt, cur, keep)
    return cur


def direct_convs(module: ir.Module, target: Target, threads: bool = False, plan=None) -> int:
    """Replace every matched stem conv (with a kernel ``plan``: those it
    gave to ``conv_direct``; with its bias add and elementwise epilogue when
    fusable) by a call of the direct kernel (inlined private functions).
    Returns how many were rewritten."""
    from dataclasses import replace

    from onnx_mlir_py.passes.optimize.kernel_inline import inline_kernels
    funcs: dict[tuple, str] = {}
    count = 0
    # matched one at a time, each after the rewrite of the one before: in a
    # chain conv -> ReLU -> pad -> conv (ResNet-18's 3x3 convs) the second's
    # input is the first's fused ReLU, replaced by the first's call
    convs = [op for op in walk_ops(module.operation, "linalg.conv_2d_nchw_fchw")
             if plan is None or assigned(op, "conv_direct")]
    for op in convs:
        with building(op):
            found = _match(op, target)
            if found is None:
                continue
            dv, operands, erase, last, dead, at = found
            dynamic = dv.xs[0] is None
            key = (dv, target, threads)
            if key not in funcs:
                name = f"__om_direct_conv_{len(funcs)}"
                if not dynamic:
                    add_functions(module, kernel_function(name, dv, target, threads))
                else:
                    image = replace(dv, xs=(1,) + dv.xs[1:], os=(1,) + dv.os[1:])
                    args = [(list(dv.xs), BATCHED), (list(dv.ws), SHARED), (list(dv.os), BATCHED)]
                    args += [([] if isinstance(v.type, ir.F32Type) else list(static_f32(v)), SHARED)
                             for v in operands[3:]]
                    add_functions(module, kernel_function(name + "_image", image, target, threads),
                                  batch_loop_function(name, name + "_image", args, dest=2))
                funcs[key] = name
            replace_with_call(funcs[key], operands, erase, last, dead, at)   # dead: the pad
            count += 1
    if funcs:
        # without the inliner's canonicalize (#29; the depthwise convs' and
        # pools' need theirs, window_rewrite.py): -O3's own after the packs
        # folds the same (the -O3 IR is identical)
        inline_kernels(module)
    return count
