"""Convolutions with dynamic spatial dims -> im2col (or strips) + the packed kernel.

``linalg.conv_2d_nchw_fchw`` (f32, static weights and channel counts) whose
H/W (and maybe batch) are only known at run time runs, per image (the
batch loop of :mod:`.batch_loop`), as

    col[kp, mp]   = im2col(x)        rows c*KH*KW + kh*KW + kw (< kp = whole k blocks),
                                     columns oh*OW + ow (< mp = whole nb blocks, run time)
    acc[Fp, mp]   = bias[f] (or 0)   Fp = whole mb blocks
    acc           = packed contraction (W [MO, mb, KO, kb], col viewed [KO, kb, NO, nb])
    out[0, f, :]  = acc[f, 0 : OH*OW]                 (one row copy per channel)

The contraction is the static kernel's (:func:`.matmul_text.contraction`,
B viewed in place, column blocks outermost) with a run-time column block
count: its schedule tiles the block loops by 1, so every tile is static and
vectorizes as in the static kernel. Rows of a run-time length (im2col
reads, the copy out) are vector code: whole chunks of ``V`` lanes in a loop,
then one masked chunk for the remainder (a mask of 0 lanes does nothing).
A stride s > 1 reads (V-1)*s+1 contiguous values and keeps every s-th
(``vector.shuffle``). The result is copied out rather than viewed: the
columns are padded to whole blocks. The kernel writes the output viewed
[N, F, OH*OW] (a ``collapse_shape`` before the call), so each channel is
one row of OH*OW values, not OH rows of OW (each with its masked chunk: a
7x7 map was 7 chunks of 7 lanes), and its result is ``tensor.reshape``d
back to [N, F, OH, OW] (an ``expand_shape`` with two run-time sizes in one
group is not taken by ``expand-strided-metadata``; both are views after
bufferization). A 1x1 stride-1 conv (:func:`flat_input`) reads x viewed
[N, C, H*W] the same way: its im2col is one row copy per channel
(EfficientNet-B0 as below, dynamic / static, three runs: 1 thread
1.74 / 1.56 / 1.56 -> 1.48 / 1.44 / 1.43, 2 threads 2.06 / 2.07 / 2.07 ->
1.78 / 1.91 / 2.02).

A conv that reads ``x * s`` with ``s`` a per-image, per-channel [N, C, 1, 1]
gate (squeeze-excitation, :func:`channel_scale`; EfficientNet's project
convs) reads ``x`` instead and multiplies each channel's rows by its scale
in the im2col copy: the Mul's pass writing a whole feature map is gone
(EfficientNet-B0, dynamic N/H/W, 1x3x224x224, Emerald Rapids, load 4-5,
the libraries of clean clones in alternating blocks in one process, three
runs: dynamic / static 1.73 / 1.74 / 1.54 -> 1.74 / 1.56 / 1.56 at 1 thread,
2.19 / 2.18 / 2.21 -> 2.06 / 2.07 / 2.07 at 2: its project convs alone,
96 -> 24 at 56x56 with the gate, 1.5-1.75x the static build's conv + Mul ->
~1.15x).

A 1x1 stride-1 conv runs in strips instead (:func:`_strips`): one loop (the
one parallel region per image with threads; the whole-image kernel above
has three: im2col's channels, the contraction's column blocks, the copy
out's filters) over strips of whole column blocks, each copying its columns
in (with the scale), contracting them with all the filters (static
register tiles, a run-time number of at most ``S / nb`` column blocks) and
copying them out with the epilogue while its rows [Kp, S] and accumulators
[Fp, S] are in L2 (S from :func:`.kernel_plan.dyn_strip_columns`: a quarter
of L2, at most 8 blocks); a map of few blocks is cut into up to
DYN_STRIP_TASKS strips so that the threads share it. The image's whole
im2col matrix and accumulators are never built. Emerald Rapids (2 vCPUs),
strips / whole-image kernel time (a clean clone against this tree, both
libraries and the static one alternating in one process, two runs, load
0.6-1.6; benchmarks/results/dynamic.md), 1 thread; 2 threads: 16 -> 96 +
SiLU at 112x112 0.89, 0.69; 0.88, 0.62. 24 -> 144 + SiLU at 56x56 0.88,
0.87; 0.58, 0.69. 96 -> 24 and 144 -> 24 with the gate at 56x56
0.74-0.89; 0.70-0.77. 672 -> 112 at 14x14 (4 strips) 1.06, 0.98; 0.95,
1.00. 1152 -> 320 at 7x7 (2 strips of one block) 1.01, 0.99; 0.67, 0.56.
EfficientNet-B0 dynamic / static at 1x3x224x224, three runs: 1 thread
1.21 / 1.14 / 1.19 -> 1.16 / 1.14 / 1.17, 2 threads 1.39 / 1.54 / 1.43 ->
1.12 / 1.22 / 1.14.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import func

from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.optimize.collapse_rows import collapsed, reshaped_like
from onnx_mlir_py.passes.optimize.batch_loop import (BATCHED, SHARED, add_functions,
                                                     batch_loop_function)
from onnx_mlir_py.dialects.onnx.opview import owner_op
from onnx_mlir_py.passes.optimize.kernel_fusion import (attr_text, bias_add_user, epilogue_user,
                                                        fill_scalar,
                                                        single_user, static_f32, window_ints,
                                                        zero_fill)
from onnx_mlir_py.passes.optimize.epilogue import call_site, dynamic_chain, vector_lines
from onnx_mlir_py.passes.optimize.kernel_emit import F32, Emitter, Value, tensor, vector
from onnx_mlir_py.passes.optimize.matmul_text import contraction
from onnx_mlir_py.passes.optimize.row_emit import emit_ops
from onnx_mlir_py.target import Target
from onnx_mlir_py.passes.optimize.kernel_budget import building
from onnx_mlir_py.passes.optimize.kernel_plan import (DYN_STRIP_TASKS, assigned,
                                                      dyn_strip_columns)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _dyn_shape(v: ir.Value) -> list[int | None] | None:
    t = v.type
    if not isinstance(t, ir.RankedTensorType) or not isinstance(t.element_type, ir.F32Type) \
            or t.rank != 4:
        return None
    dyn = ir.ShapedType.get_dynamic_size()
    return [None if d == dyn else d for d in t.shape]


def signature(op: ir.Operation):
    """(x shape, w shape, out shape, strides, dilations) of a plain f32
    NCHW conv whose spatial dims are (partly) dynamic, channels and weights
    static, output starting from a fill of 0.0; else None."""
    if op.name != "linalg.conv_2d_nchw_fchw" or len(op.operands) != 3 or len(op.results) != 1:
        return None
    x, w, o = op.operands
    xs, ws, os_ = _dyn_shape(x), static_f32(w), _dyn_shape(o)
    if xs is None or ws is None or os_ is None or 0 in ws:
        return None
    if None in (xs[1], os_[1]) or None not in xs[2:] + os_[2:]:
        return None           # dynamic channels: not handled; static H/W: conv.py
    if not zero_fill(o):
        return None
    return (tuple(xs), tuple(ws), tuple(os_), tuple(window_ints(op, "strides")),
            tuple(window_ints(op, "dilations")))


_ID4 = "(d0, d1, d2, d3) -> (d0, d1, d2, d3)"
_SCALE4 = "(d0, d1, d2, d3) -> (d0, d1, 0, 0)"


def channel_scale(x: ir.Value):
    """``(source, scale)`` when ``x`` is ``source * scale`` with ``scale`` a
    per-image, per-channel ``[N, C, 1, 1]`` tensor (a squeeze-excitation gate)
    and the conv is ``x``'s only user: the im2col copy then multiplies each
    channel's rows by its scale as it reads ``source`` (no pass writing ``x``).
    The Mul is a 2-input all-parallel generic whose body is one ``arith.mulf``
    of its two elements (either order)."""
    g = owner_op(x)
    if g is None or g.name != "linalg.generic" or len(g.operands) != 3 \
            or len(g.results) != 1 or single_user(x) is None:
        return None
    if any("parallel" not in str(a) for a in g.attributes["iterator_types"]):
        return None
    maps = [str(ir.AffineMapAttr(a).value) for a in g.attributes["indexing_maps"]]
    if maps[2] != _ID4 or sorted(maps[:2]) != sorted([_ID4, _SCALE4]):
        return None
    body = g.regions[0].blocks[0]
    ops = [o.operation for o in body.operations]
    if len(ops) != 2 or ops[0].name != "arith.mulf" or ops[1].name != "linalg.yield" \
            or attr_text(ops[0]) != "" or ops[1].operands[0] != ops[0].results[0] \
            or set(ops[0].operands) != {body.arguments[0], body.arguments[1]}:
        return None
    src, scale = (g.operands[0], g.operands[1]) if maps[0] == _ID4 else \
        (g.operands[1], g.operands[0])
    if src.type != x.type or _dyn_shape(scale) is None or list(scale.type.shape)[1:] != \
            [x.type.shape[1], 1, 1]:
        return None
    return g, src, scale


def _row_copy(e: Emitter, dst: Value, dst_idx: list, src: Value, src_idx: list, length: Value,
              lanes: int, stride: int, zero: Value, post=None) -> Value:
    """Copy ``length`` (run-time) values ``src[..., s0 + q*stride]`` ->
    ``dst[..., d0 + q]``: ``src_idx``/``dst_idx`` are index lists whose last
    entry (s0, d0) is the row start. Whole chunks of ``lanes`` in a loop,
    then one masked chunk. Returns the new ``dst`` value."""
    span = (lanes - 1) * stride + 1
    *spre, s0 = src_idx
    *dpre, d0 = dst_idx

    def read(col: Value, mask: Value | None) -> Value:
        if stride != 1:
            col = e.iop("muli", col, e.index(stride))
        at = e.iop("addi", col, s0)
        r = e.read(src, spre + [at], zero, vector(span if stride != 1 else lanes), mask, base="s")
        if stride != 1:
            r = e.shuffle(r, r, [q * stride for q in range(lanes)])
        return post(r) if post is not None else r

    rem = e.rem(length, lanes)
    full = e.iop("subi", length, rem)
    q, (u,), (done,) = e.loop(e.index(0), full, e.index(lanes), [dst])
    v = read(q, None)
    e.end([e.write(v, u, dpre + [e.iop("addi", q, d0)])])
    # the remainder: one masked chunk (no lanes when the length is whole chunks)
    m = e.create_mask(rem, lanes)
    smask = m
    if stride != 1:
        rs = e.iop("muli", rem, e.index(stride))
        rs1 = e.iop("subi", rs, e.index(stride - 1))
        smask = e.create_mask(e.iop("maxsi", rs1, e.index(0)), span)
    v = read(full, smask)
    return e.write(v, done, dpre + [e.iop("addi", full, d0)], m)


def flat_input(ws, s) -> bool:
    """A 1x1 stride-1 conv reads its input as the im2col matrix itself: row
    c is x[c] viewed [H*W] (its input is passed collapsed, [N, C, H*W])."""
    return ws[2:] == (1, 1) and tuple(s) == (1, 1)


def _out_size(e: Emitter, x: Value, i: int, k: int, s: int, d: int):
    """Output size along dim ``i`` of the (padded) input ``x``: static or read."""
    size = x.type.shape[i] if x.type.shape[i] is not None else e.dim(x, i)
    return e.add(e.div(e.sub(size, (k - 1) * d + 1), s), 1)


def _im2col_rows(e: Emitter, xin: Value, cs: Value, ch: Value, ws, s, d, nb: int, zero: Value,
                 post) -> Value:
    """Channel ``ch``'s KH*KW rows of the im2col matrix written into ``cs``
    ([KH*KW, mp]): per output row and tap, one row copy of OW values."""
    _, _, kh_, kw_ = ws
    oh, ow = (_out_size(e, xin, 2 + i, ws[2 + i], s[i], d[i]) for i in range(2))
    r, (ar,), (cr,) = e.loop(e.index(0), e.ix(oh), e.index(1), [cs])
    dcol = e.iop("muli", r, e.ix(ow))
    rs = e.iop("muli", r, e.index(s[0]))
    # the taps are loops (unrolled, the slice chains made bufferization's
    # analysis run for minutes on a 7x7 kernel)
    kh, (ah,), (ti,) = e.loop(e.index(0), e.index(kh_), e.index(1), [ar])
    hrow = e.iop("addi", rs, e.iop("muli", kh, e.index(d[0])))
    t0 = e.iop("muli", kh, e.index(kw_))
    kw, (aw,), (tj,) = e.loop(e.index(0), e.index(kw_), e.index(1), [ah])
    tap = e.iop("addi", t0, kw)
    wd = e.iop("muli", kw, e.index(d[1]))
    e.end([_row_copy(e, aw, [tap, dcol], xin, [e.index(0), ch, hrow, wd], e.ix(ow), nb, s[1],
                     zero, post)])
    e.end([tj])
    e.end([ti])
    return cr


def image_function(name: str, xs, ws, os_, s, d, tile: tuple[int, int, int],
                   bias: bool, threads: bool, epilogue: tuple = (), epi_result: str = "",
                   n_cap: int = 0, chain: bool = False, scale: bool = False,
                   strip: int = 0) -> str:
    """``func.func private @name(x [1, C, H, W], w, out [1, F, OH*OW][, bias [F]]
    [, scale [1, C, 1, 1]], captured f32...) -> out``: one image (H, W, OH, OW
    may be dynamic; x is [1, C, H*W] when :func:`flat_input`), written into
    ``out`` viewed [F, OH*OW] (each channel one row, copied in whole chunks);
    ``scale`` (:func:`channel_scale`): the conv reads ``x * scale``, each
    channel multiplied as im2col copies it; ``epilogue`` (an elementwise op
    after the conv and its bias, on ``n_cap`` captured scalars) applied as the
    result is copied out.
    ``chain``: ``epilogue`` is a :func:`.epilogue.dynamic_chain`'s ops (a
    SiLU), written by :func:`.epilogue.vector_lines` (exp as math_approx's).
    ``strip`` (columns, whole blocks; a :func:`flat_input` conv): the image
    runs as :func:`_strips` of at most that width; 0: the whole-image
    kernel (:func:`_whole_image`)."""
    mb, nb, kb = tile
    _, c, _, _ = xs
    f, _, kh_, kw_ = ws
    k = c * kh_ * kw_
    kp, fp = _cdiv(k, kb) * kb, _cdiv(f, mb) * mb
    flat = flat_input(ws, s)
    assert not strip or flat, "strips: a 1x1 stride-1 conv only"
    e = Emitter()
    zero = e.const("0.0", F32)
    xin = e.param("x", tensor(_flat(xs) if flat else [1] + list(xs[1:])))
    wgt = e.param("w", tensor(ws))
    dst = e.param("dst", tensor(_flat(os_)))
    ot = dst.type
    params = [xin, wgt, dst] + ([e.param("b", tensor([f]))] if bias else [])
    sc = e.param("sc", tensor([1, c, 1, 1])) if scale else None
    ecaps = [e.param("ecap", F32) for _ in range(n_cap)]
    ecv = [e.broadcast(p, vector(nb), base="ecv") for p in ecaps]
    m = e.dim(dst, 2) if ot.shape[2] is None else e.index(ot.shape[2])
    # weights [Fp, kp] (a constant after inlining: folded at compile time)
    wv = e.collapse(wgt, "[[0], [1, 2, 3]]", [f, k])
    if (fp, kp) != (f, k):
        wv = e.pad(wv, [fp - f, kp - k], [fp, kp], zero)
    a4v = e.expand(wv, "[[0, 1], [2, 3]]", [fp // mb, mb, kp // kb, kb])
    bv = params[3] if bias else None
    if bv is not None and fp != f:
        bv = e.pad(bv, [fp - f], [fp], zero)
    post = None
    if epilogue:
        post = (lambda v: vector_lines(e, epilogue, epi_result, v, [], ecaps)) if chain \
            else (lambda v: emit_ops(e, epilogue, epi_result, v, ecv))
    k_ = _Conv(xs, ws, s, d, tile, f, c, k, kp, fp, threads, zero)
    if strip:
        out = _strips(e, k_, xin, dst, a4v, bv, sc, m, post, strip)
    else:
        out = _whole_image(e, k_, xin, dst, a4v, bv, sc, m, post)
    e(f"return {out} : {ot}")
    return e.function(name, params + ([sc] if sc is not None else []) + ecaps, ot)


class _Conv:
    """The static facts of one conv kernel (see :func:`image_function`)."""

    def __init__(self, xs, ws, s, d, tile, f, c, k, kp, fp, threads, zero):
        self.xs, self.ws, self.s, self.d, self.tile = xs, ws, s, d, tile
        self.f, self.c, self.k, self.kp, self.fp = f, c, k, kp, fp
        self.threads, self.zero = threads, zero


def _channel_scale(e: Emitter, sc: Value | None, ch: Value, nb: int):
    """The vector function multiplying by channel ``ch``'s scale, or None."""
    if sc is None:
        return None
    sv = e.broadcast(e.extract(sc, [0, ch, 0, 0]), vector(nb), base="scv")
    return lambda v: e.binary("arith.mulf", v, sv, base="xs")


def _accumulators(e: Emitter, bv: Value | None, fp: int, cols) -> Value:
    """[fp, cols]: the (padded) bias broadcast along the columns, or 0."""
    acce = e.empty([fp, cols])
    if bv is not None:
        return e.broadcast_rows(bv, acce, "affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>")
    return e.fill(e.const("0.0", F32), acce)


def _whole_image(e: Emitter, k_: _Conv, xin: Value, dst: Value, a4v: Value, bv, sc, m: Value,
                 post) -> Value:
    """The whole image at once: im2col [kp, mp] (channels split across
    threads), the contraction over all its column blocks, the copy out
    (filters split across threads)."""
    mb, nb, kb = k_.tile
    ws, s, d, f, c, k, kp, fp, zero = k_.ws, k_.s, k_.d, k_.f, k_.c, k_.k, k_.kp, k_.fp, k_.zero
    threads, taps = k_.threads, ws[2] * ws[3]
    no = e.iop("ceildivui", m, e.index(nb))
    mp = e.iop("muli", no, e.index(nb))
    mpad = e.iop("subi", mp, m)
    # im2col, zeros in the padding rows (k..kp) and columns (m..mp)
    init = e.empty([kp, mp])
    if kp != k:
        zr = e.fill(zero, e.extract_slice(init, [k, 0], [kp - k, mp]))
        init = e.insert_slice(zr, init, [k, 0], [kp - k, mp])
    zc = e.fill(zero, e.extract_slice(init, [0, m], [k, mpad]))
    zc = e.insert_slice(zc, init, [0, m], [k, mpad])
    if threads:
        ch, co, col = e.forall(c, zc)
    else:
        ch, (co,), (col,) = e.loop(e.index(0), e.index(c), e.index(1), [zc])
    row0 = e.iop("muli", ch, e.index(taps))
    scaled = _channel_scale(e, sc, ch, nb)
    cs = e.extract_slice(co, [row0, 0], [taps, mp])
    if flat_input(ws, s):                   # the channel's plane is its one row
        cr = _row_copy(e, cs, [e.index(0), e.index(0)], xin, [e.index(0), ch, e.index(0)], m,
                       nb, 1, zero, scaled)
    else:
        cr = _im2col_rows(e, xin, cs, ch, ws, s, d, nb, zero, scaled)
    if threads:
        e.end_forall(cr, co, [row0, 0], [taps, mp])
    else:
        e.end([e.insert_slice(cr, co, [row0, 0], [taps, mp])])
    b4v = e.expand(col, "[[0, 1], [2, 3]]", [kp // kb, kb, no, nb])
    # accumulators: the bias (zero-padded to Fp rows) broadcast along the columns, or 0
    c4v = e.expand(_accumulators(e, bv, fp, mp), "[[0, 1], [2, 3]]", [fp // mb, mb, no, nb])
    r4 = contraction(e, a4v, b4v, c4v, False, False, True)
    res = e.collapse(r4, "[[0, 1], [2, 3]]", [fp, None])
    # the copy out: channel f is res[f, 0 : OH*OW], one row
    # (with threads the channels split across them)
    if threads:
        fv, of, out = e.forall(f, dst)
        row = e.extract_slice(of, [0, fv, 0], [1, 1, m])
        at = [e.index(0), e.index(0), e.index(0)]
    else:
        fv, (of,), (out,) = e.loop(e.index(0), e.index(f), e.index(1), [dst])
        row, at = of, [e.index(0), fv, e.index(0)]
    orow = _row_copy(e, row, at, res, [fv, e.index(0)], m, nb, 1, zero, post)
    if threads:
        e.end_forall(orow, of, [0, fv, 0], [1, 1, m])
    else:
        e.end([orow])
    return out


def _strips(e: Emitter, k_: _Conv, xin: Value, dst: Value, a4v: Value, bv, sc, m: Value, post,
            strip: int) -> Value:
    """A :func:`flat_input` conv as one loop (the parallel one with threads)
    over strips of at most ``strip`` columns (whole ``nb`` blocks), each

        col[:, 0 : w]  = x[c, j0 : j0 + len] * scale[c]   (zeros up to w = len in whole blocks)
        acc[Fp, w]     = bias (or 0)
        acc            = the packed contraction over the strip's w / nb column blocks
        out[f, j0 : j0 + len] = epilogue(acc[f, 0 : len])

    so a strip's rows and accumulators are written and read back while they
    are in L2, and the image's whole im2col and accumulators are never
    built: one parallel region per image (the whole-image kernel has three).
    The map's column blocks are spread evenly over the strips, and a map of
    fewer than DYN_STRIP_TASKS strips is cut into that many (as many as it
    has blocks, if fewer): a 7x7 map (2 blocks of 32) is 2 strips, a 14x14
    one 4, so the threads share it (each strip's contraction reads all the
    filters, as the whole-image kernel's column blocks do)."""
    mb, nb, kb = k_.tile
    f, c, kp, fp, zero = k_.f, k_.c, k_.kp, k_.fp, k_.zero
    blocks = e.iop("ceildivui", m, e.index(nb))
    want = e.iop("maxui", e.iop("ceildivui", m, e.index(strip)),
                 e.iop("minui", blocks, e.index(DYN_STRIP_TASKS)))
    bper = e.iop("ceildivui", blocks, want)                  # blocks per strip
    ns = e.iop("ceildivui", blocks, bper)                    # none empty
    per = e.iop("muli", bper, e.index(nb))
    if k_.threads:
        sv, so, out = e.forall(ns, dst)
    else:
        sv, (so,), (out,) = e.loop(e.index(0), ns, e.index(1), [dst])
    j0 = e.iop("muli", sv, per)
    ln = e.iop("minui", e.iop("subi", m, j0), per)
    nbk = e.iop("ceildivui", ln, e.index(nb))
    w = e.iop("muli", nbk, e.index(nb))
    col = e.empty([kp, strip])
    if kp != c:                             # the padding rows (k..kp): zeros
        zr = e.fill(zero, e.extract_slice(col, [c, 0], [kp - c, strip]))
        col = e.insert_slice(zr, col, [c, 0], [kp - c, strip])
    # copy in: channel ch's columns j0.. in whole chunks, each masked to len
    # (zeros past the map: the last block's padding columns)
    ch, (cc,), (colr,) = e.loop(e.index(0), e.index(c), e.index(1), [col])
    scaled = _channel_scale(e, sc, ch, nb)
    q, (cq,), (cqr,) = e.loop(e.index(0), w, e.index(nb), [cc])
    mk = e.create_mask(e.iop("subi", ln, q), nb)
    v = e.read(xin, [e.index(0), ch, e.iop("addi", j0, q)], zero, vector(nb), mk, base="s")
    if scaled is not None:
        v = scaled(v)
    e.end([e.write(v, cq, [ch, q])])
    e.end([cqr])
    colw = e.extract_slice(colr, [0, 0], [kp, w])
    b4v = e.expand(colw, "[[0, 1], [2, 3]]", [kp // kb, kb, nbk, nb])
    c4v = e.expand(_accumulators(e, bv, fp, w), "[[0, 1], [2, 3]]", [fp // mb, mb, nbk, nb])
    r4 = contraction(e, a4v, b4v, c4v, False, False, True)
    res = e.collapse(r4, "[[0, 1], [2, 3]]", [fp, None])
    # copy out (with the epilogue): out[f, j0 : j0 + len]
    osl = e.extract_slice(so, [0, 0, j0], [1, f, ln])
    fv, (of,), (orows,) = e.loop(e.index(0), e.index(f), e.index(1), [osl])
    e.end([_row_copy(e, of, [e.index(0), fv, e.index(0)], res, [fv, e.index(0)], ln, nb, 1, zero,
                     post)])
    if k_.threads:
        e.end_forall(orows, so, [0, 0, j0], [1, f, ln])
    else:
        e.end([e.insert_slice(orows, so, [0, 0, j0], [1, f, ln])])
    return out


def _flat(shape) -> list:
    """[1, C, H*W] of an NCHW shape (None when H or W is)."""
    hw = None if None in shape[2:] else shape[2] * shape[3]
    return [1, shape[1], hw]


def _functions(module: ir.Module, name: str, sig, tile, bias: bool, threads: bool,
               epi=None, scale: bool = False, strip: int = 0) -> str:
    xs, ws, os_, s, d = sig
    kw = dict(epilogue=epi[1], epi_result=epi[2], n_cap=len(epi[3]),
              chain=isinstance(epi[0], tuple)) if epi else {}
    image = image_function(name + "_image", xs, ws, os_, s, d, tile, bias, threads,
                           scale=scale, strip=strip, **kw)
    xb = [xs[0]] + _flat(xs)[1:] if flat_input(ws, s) else list(xs)
    args = [(xb, BATCHED), (list(ws), SHARED), ([os_[0]] + _flat(os_)[1:], BATCHED)]
    if bias:
        args.append(([os_[1]], SHARED))
    if scale:
        args.append(([xs[0], xs[1], 1, 1], BATCHED))
    args += [([], SHARED)] * kw.get("n_cap", 0)
    add_functions(module, image, batch_loop_function(name, name + "_image", args, dest=2,
                                                            parallel=threads))
    return name


def _call_flat(fn: str, operands: list, chain: list, dead: list, flat: bool) -> None:
    """The conv ``chain`` (the conv, its fused users) replaced by a call of
    ``fn`` whose destination (operand 2; and x, operand 0, when ``flat``) is
    passed viewed [N, F, OH*OW], its result reshaped back (a
    ``tensor.reshape``: an ``expand_shape`` of OH*OW into two run-time sizes
    is not taken by ``expand-strided-metadata``; a view after bufferization).
    The call stands at the conv when :func:`.epilogue.call_site` allows."""
    last = chain[-1]
    at = call_site(chain[0], operands) or last
    with ir.InsertionPoint(at), ir.Location.fused([o.location for o in chain + dead]):
        dst = operands[2]
        ops = [collapsed(v, 2) if i == 2 or (flat and i == 0) else v for i, v in enumerate(operands)]
        call = func.CallOp([ops[2].type], ir.FlatSymbolRefAttr.get(fn), ops)
        r = reshaped_like(call.results[0], dst)
    last.results[0].replace_all_uses_with(r)
    for o in reversed(chain):
        o.erase()
    for o in dead:
        o.erase()


def dynamic_convs_to_matmul(module: ir.Module, target: Target, threads: bool = False,
                            plan=None) -> int:
    """Rewrite every plain f32 NCHW conv with dynamic spatial dims (see
    :func:`signature`; with a kernel ``plan``: those it gave to ``conv_dyn``)
    as im2col + the packed contraction, per image; its
    bias add and an elementwise op after it (ReLU, Clip, ...) are fused, or a
    chain of them that reads the result twice (SiLU: :func:`.epilogue.dynamic_chain`).
    Returns how many were rewritten."""
    from mlir.passmanager import PassManager
    funcs: dict[tuple, str] = {}
    convs = [(op, sig) for op in walk_ops(module.operation)
             if (plan is None or assigned(op, "conv_dyn")) and (sig := signature(op)) is not None]
    for op, sig in convs:
        with building(op):
            scaled = channel_scale(op.operands[0])
            fused = bias_add_user(op.results[0])
            last = fused[0] if fused is not None else op
            # a single elementwise user, or a chain of them (SiLU: its Sigmoid and Mul
            # both read the conv): epi[0] the generic, or a tuple of the chain's
            epi = epilogue_user(last.results[0]) or dynamic_chain(last.results[0])
            key = sig + (fused is not None, epi[1:3] if epi else None, len(epi[3]) if epi else 0,
                         isinstance(epi[0], tuple) if epi else False, scaled is not None)
            if key not in funcs:
                strip = dyn_strip_columns(op, target)
                funcs[key] = _functions(module, f"__om_dconv_{len(funcs)}", sig, target.matmul_tile,
                                        fused is not None, threads, epi, scaled is not None, strip)
            # (x, w, out[, bias][, scale], captured...): the fill's destination;
            # every element is written; a scaled conv reads the Mul's source
            x = scaled[1] if scaled is not None else op.operands[0]
            args = [x, op.operands[1], fill_scalar(op.operands[2])[1]]
            if fused is not None:
                args.append(fused[1])
            if scaled is not None:
                args.append(scaled[2])
            # at the conv, or at the chain's last op when a captured scalar of the
            # epilogue is defined after the conv (epilogue.call_site)
            chain = [op] + ([fused[0]] if fused is not None else []) \
                + (list(epi[0]) if epi and isinstance(epi[0], tuple) else [epi[0]] if epi else [])
            _call_flat(funcs[key], args + (list(epi[3]) if epi else []), chain,
                       [scaled[0]] if scaled is not None else [], flat_input(sig[1], sig[3]))
    if funcs:
        PassManager.parse("builtin.module(inline, symbol-dce)", module.context).run(module.operation)
    return len(convs)
