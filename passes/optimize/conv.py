"""Convolutions -> im2col + (batch_)matmul, so they run on the packed kernel.

``linalg.conv_2d_nchw_fchw`` (f32, static but for a dynamic batch) with input ``[N, C, H, W]``
(already zero-padded by the lowering), weights ``[F, C, KH, KW]``, strides s
and dilations d:

    col[n, c, kh, kw, oh, ow] = x[n, c, oh*s + kh*d, ow*s + kw*d]
        per (kh, kw): a linalg.copy of a strided tensor.extract_slice of x
        into the matching slice of col (in place after bufferization;
        vectorized by the elementwise step)
    out[n] = W2[F, C*KH*KW] @ col[n][C*KH*KW, OH*OW]     (NCHW output as is)

N = 1 becomes a ``linalg.matmul``, N > 1 a ``linalg.batch_matmul`` with the
(small) weight matrix broadcast over the batch. At stride 1 the im2col is
written in the kernel's packed layout (:mod:`.im2col_packed`). A 1x1
stride-1 conv needs no im2col copy (col is a view of x) unless it pays to
pack it (:func:`pack_one_by_one`). A conv whose pixels are not whole column
panels computes ``outᵀ = colᵀ @ Wᵀ`` instead (:mod:`.conv_pixel_rows`).
``linalg.conv_2d_ngchw_gfchw`` (grouped) is the same per group, batched over
N*G. Weight reshapes/broadcasts of constants are folded at compile time
afterwards. A dynamic batch runs the batch-1 kernel once per image
(:mod:`.batch_loop`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import mlir.ir as ir

from onnx_mlir_py.passes.optimize.kernel_plan import (IM2COL_THREAD_MIN, THREAD_MIN_MACS,
                                                      assigned, conv_form, strip_rows)
from onnx_mlir_py.passes.optimize.batch_loop import (BATCHED, SHARED, add_functions,
                                                     batch_loop_function)
from onnx_mlir_py.passes.optimize.conv_row import row_conv_function
from onnx_mlir_py.passes.optimize.conv_pixel_rows import epilogue_operands, pixel_rows_product
from onnx_mlir_py.passes.optimize.im2col_packed import packed_im2col
from onnx_mlir_py.passes.optimize.im2col_shared import (channel_loop, end_channel_loop,
                                                        zero_regions)
from onnx_mlir_py.passes.optimize.kernel_emit import F32, Emitter, Value, tensor, vector
from onnx_mlir_py.passes.optimize.conv_strips import strip_functions
from onnx_mlir_py.passes.optimize import epilogue as epilogue_mod
from onnx_mlir_py.passes.optimize.epilogue import (Epilogue, epilogue_chain, epilogue_generic,
                                                   dominates, hoist_to)
from onnx_mlir_py.passes.optimize.kernel_fusion import (batch_shape, bias_add_user, call_in_place,
                                                        fill_scalar, replace_with_call, static_f32,
                                                        window_ints, zero_fill)
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.optimize.kernel_inline import inline_kernels
from onnx_mlir_py.passes.optimize.kernel_budget import building


STRIDED_LANES = 16      # output columns per strided im2col read


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _im2col(e: Emitter, x: Value, kh_, kw_, oh, ow, s, d, kp: int, mp: int,
            threads: bool = False) -> Value:
    """The im2col of ``x`` ([B, C, H, W]) as col ``[B, kp, mp]``: rows
    ``c*KH*KW + kh*KW + kw`` < C*KH*KW, columns ``oh*OW + ow`` < OH*OW, zeros
    in the padding (rows up to ``kp``, columns up to ``mp``: whole blocks for
    the matmul kernel, so it needs no padded copy).

    Written as vector code: for each channel (an ``scf.forall`` when
    ``threads`` and the copy is large), image, output row and tap, one
    ``vector.transfer_read`` of the input row and one ``vector.transfer_write``
    into col. A stride-s row is read as (OW-1)*s+1 contiguous values and every
    s-th one is kept (``vector.shuffle``)."""
    b, c = x.type.shape[0], x.type.shape[1]
    k, m, taps = c * kh_ * kw_, oh * ow, kh_ * kw_
    full, one = [b, kp, mp], [b, taps, mp]
    par = threads and b * k * m >= IM2COL_THREAD_MIN
    pad = e.f32(0.0)
    init = zero_regions(e, e.empty(full, base="ce"),
                        (([0, k, 0], [b, kp - k, mp]), ([0, 0, m], [b, k, mp - m])), pad)
    ch, carried, colt = channel_loop(e, par, c, init)
    # index arithmetic in arith, not affine.apply: affine ops may not be
    # inlined into an scf.for (the batch loop of batch_loop.py)
    row0 = e.iop("muli", ch, taps)
    ib, (images,), (filled,) = e.loop(0, b, 1, [e.extract_slice(carried, [0, row0, 0], one)],
                                      base="cb")
    r, (rows,), (done,) = e.loop(0, oh, 1, [images], base="cr")
    dcol, rs = e.iop("muli", r, ow), e.iop("muli", r, s[0])
    at = Im2colRow(ib, ch, dcol, [e.iop("addi", rs, i * d[0]) for i in range(kh_)])
    cur = rows
    if s[1] != 1:
        cur = _strided_rows(e, x, at, cur, kh_, kw_, ow, s[1], d[1])
    for i in range(kh_ if s[1] == 1 else 0):
        for j in range(kw_):
            v = e.read(x, [ib, ch, at.rows[i], j * d[1]], pad, vector(ow), base="v")
            cur = e.write(v, cur, [ib, i * kw_ + j, at.col], base="t")
    e.end([cur])
    e.end([done])
    end_channel_loop(e, par, filled, carried, row0)
    return colt


@dataclass(frozen=True)
class Im2colRow:
    """Where one output row's im2col values go: the image, the channel, its
    first column in col and the input row of each kernel row."""
    image: Value
    channel: Value
    col: Value
    rows: list


def _strided_rows(e: Emitter, x: Value, at: Im2colRow, cur: Value, kh_: int, kw_: int,
                  ow: int, s: int, d: int) -> Value:
    """Every tap's im2col row of one output row at stride ``s``, in chunks of
    V = STRIDED_LANES output columns (one row-long shuffle of (OW-1)*s+1
    lanes was slower than the matmul): a loop over the chunks whose V*s
    contiguous values are in the row for every tap, then static chunks (the
    last whole ones read (V-1)*s+1 values, the tail fewer lanes). The taps
    are unrolled in one body (chunks unrolled per tap made bufferization
    take minutes on a 6x6 kernel). Returns the new col value."""
    V = STRIDED_LANES
    width = x.type.shape[3]
    reach = (kw_ - 1) * d
    nsafe = min(ow // V, (width - reach - V * s) // (V * s) + 1) if width >= reach + V * s else 0
    pad = e.f32(0.0)

    def chunk(col0, dst, lanes: int, span_of, c: Value) -> Value:
        for i in range(kh_):
            for j in range(kw_):
                span = span_of(j)
                cj = e.iop("addi", col0, j * d)
                row = e.read(x, [at.image, at.channel, at.rows[i], cj], pad, vector(span), base="sr")
                v = e.shuffle(row, row, [q * s for q in range(lanes)], base="sv")
                c = e.write(v, c, [at.image, i * kw_ + j, dst], base="sw")
        return c

    if nsafe:
        q, (carried,), (res,) = e.loop(0, nsafe, 1, [cur], base="sl")
        col0, off = e.iop("muli", q, V * s), e.iop("muli", q, V)
        e.end([chunk(col0, e.iop("addi", at.col, off), V, lambda j: V * s, carried)])
        cur = res
    for q0 in range(nsafe * V, ow, V):
        lanes = min(V, ow - q0)
        dst = e.iop("addi", at.col, q0)

        def span_of(j, q0=q0, lanes=lanes):
            col = q0 * s + j * d
            return lanes * s if col + lanes * s <= width else (lanes - 1) * s + 1
        cur = chunk(e.index(q0 * s), dst, lanes, span_of, cur)
    return cur


def conv_function(name: str, xs, ws, os_, s, d, groups: int, threads: bool = False,
                  blocks: tuple[int, int] = (1, 1), bias: bool = False,
                  dest: bool = False, row_block: int = 0, epilogue: Epilogue | None = None) -> str:
    """``func.func private @name(x, w, init) -> out`` (NCHW / [G, F/G, C/G, KH, KW]
    for groups > 1) as im2col + (batch_)matmul. ``blocks`` = (kb, nb), the
    kernel's k and column blocks: col is built padded to them. ``bias``
    (groups == 1): the third argument is a bias ``[F]`` instead of the init;
    the matmul accumulates into the broadcast bias (no separate add pass).
    ``dest`` (with ``bias``, batch 1): ``(x, w, out, bias)``, the bias is
    broadcast into ``out`` itself (a slice of the caller's result, see
    :mod:`.batch_loop`) by vector code: a ``linalg.generic`` that does not
    read its init gets a fresh one from the elementwise fusion, and the
    result would be copied into the caller's slice. ``row_block``: the
    kernel's register tile rows (0: never the pixel-row form of
    :mod:`.conv_pixel_rows`). ``epilogue`` (see :func:`epilogue_fits`): the
    elementwise ops after the conv, on its matmul's result (a generic the
    matmul kernel fuses, :mod:`.epilogue`); its tensors and captured
    scalars are the last parameters."""
    kb, nb = blocks
    if groups == 1:
        n, c, h, w = xs
        f, _, kh_, kw_ = ws
        oh, ow = os_[2], os_[3]
        g, fg, xb = 1, f, list(xs)
    else:
        n, g, c, h, w = xs
        _, fg, _, kh_, kw_ = ws
        oh, ow = os_[3], os_[4]
        xb = [n * g, c, h, w]
    bsz, k, m = xb[0], c * kh_ * kw_, oh * ow
    form, mr = conv_form(xs, ws, s, groups, bsz, fg, (h, w), (oh, ow), bias, blocks, row_block)
    if form == "row":
        return row_conv_function(name, xs, ws, os_, bias, dest)
    e = Emitter()
    xv, wv = e.param("x", tensor(xs)), e.param("w", tensor(ws))
    out = e.param("o", tensor(os_)) if dest or not bias else None
    bv = e.param("b", tensor([os_[1]])) if bias else None
    params = [xv, wv] + [v for v in (out, bv) if v is not None]
    ets = [e.param("et", tensor(os_)) for _ in (epilogue.tensors if epilogue else ())]
    ecs = [e.param("ec", F32) for _ in (epilogue.captured if epilogue else ())]
    x = xv if groups == 1 else e.collapse(xv, "[[0, 1], [2], [3], [4]]", xb, base="x4")
    packed = False
    if form == "pixel_rows_in_place":              # the input itself, read in place
        kp, mp = k, m
        col = e.collapse(xv, "[[0, 1], [2, 3]]", [k, m], base="pr_col")
    elif form == "pixel_rows":
        kp, mp = _cdiv(k, kb) * kb, _cdiv(m, mr) * mr
        col = e.collapse(_im2col(e, x, kh_, kw_, oh, ow, s, d, kp, mp, threads),
                         "[[0, 1], [2]]", [kp, mp], base="pr_col")
    elif form == "in_place":
        kp, mp = k, m                      # col is a view of x; the kernel pads if needed
        col = e.collapse(x, "[[0], [1], [2, 3]]", [bsz, k, m], base="col")
    elif packed := form == "packed_im2col":
        kp, mp = _cdiv(k, kb) * kb, _cdiv(m, nb) * nb
        col = packed_im2col(e, x, kh_, kw_, oh, ow, d, kp, mp, kb, nb, threads, IM2COL_THREAD_MIN)
    else:
        kp, mp = _cdiv(k, kb) * kb, _cdiv(m, nb) * nb
        col = _im2col(e, x, kh_, kw_, oh, ow, s, d, kp, mp, threads)
    # weights [G, F', K] zero-padded to [G, F', kp] (a constant: folded at compile time)
    if groups == 1:
        wk = e.expand(e.collapse(wv, "[[0], [1, 2, 3]]", [f, k], base="wk0"), "[[0, 1], [2]]",
                      [1, f, k], base="wk")
    else:
        wk = e.collapse(wv, "[[0], [1], [2, 3, 4]]", [g, fg, k], base="wk")
    zero = e.f32(0.0)
    wp = e.pad(wk, [0, 0, kp - k], [g, fg, kp], zero, base="wp") if kp != k else wk
    if mr:
        r = pixel_rows_product(e, col, m, wp, bv, os_, out if dest else None, nb // 2,
                               (epilogue, ets, ecs) if epilogue is not None else None, threads)
        e(f"return {r} : {r.type}")
        return e.function(name, params + ets + ecs, r.type)
    # the result [B, F', mp] accumulates into the conv's init: the broadcast
    # bias, or the init itself (or a copy padded to whole column blocks)
    o3_shape = [bsz, fg, m]
    if bias and dest and mp == m and groups == 1 and n == 1:
        acc = _bias_into(e, out, bv)
    elif bias:
        acc = e.broadcast_rows(bv, e.empty([bsz, fg, mp], base="be"),
                               "affine_map<(a, f, p) -> (f)>, affine_map<(a, f, p) -> (a, f, p)>",
                               base="o3")
    else:
        reassoc = "[[0], [1], [2, 3]]" if groups == 1 else "[[0, 1], [2], [3, 4]]"
        acc = e.collapse(out, reassoc, o3_shape, base="o3")
        if mp != m:
            acc = e.pad(acc, [0, 0, mp - m], [bsz, fg, mp], zero, base="acc")
    if bsz == 1:
        w2 = e.collapse(wp, "[[0, 1], [2]]", [fg, kp], base="w2")
        col2 = col if packed else e.collapse(col, "[[0, 1], [2]]", [kp, mp], base="pcol2")
        a2 = e.collapse(acc, "[[0, 1], [2]]", [fg, mp], base="a2")
        r2 = e.op("r2", f"linalg.matmul ins({w2}, {col2} : {w2.type}, {col2.type}) "
                        f"outs({a2} : {a2.type}) -> {a2.type}", a2.type)
        if epilogue is not None:
            r2 = _epilogue_generic(e, r2, epilogue, ets, ecs, os_)
        r3 = e.expand(r2, "[[0, 1], [2]]", [1, fg, mp], base="r3")
    else:
        wbe = e.empty([n, g, fg, kp], base="wbe")
        wb4 = e.op("wb4", f"linalg.broadcast ins({wp} : {wp.type}) outs({wbe} : {wbe.type}) "
                          f"dimensions = [0]", wbe.type)
        wb = e.collapse(wb4, "[[0, 1], [2], [3]]", [bsz, fg, kp], base="wb")
        r3 = e.op("r3", f"linalg.batch_matmul ins({wb}, {col} : {wb.type}, {col.type}) "
                        f"outs({acc} : {acc.type}) -> {acc.type}", acc.type)
    res = e.extract_slice(r3, [0, 0, 0], o3_shape, base="rs") if mp != m else r3
    r = e.expand(res, "[[0], [1], [2, 3]]" if groups == 1 else "[[0, 1], [2], [3, 4]]",
                 list(os_), base="r")
    e(f"return {r} : {r.type}")
    return e.function(name, params + ets + ecs, r.type)


def _epilogue_generic(e: Emitter, r2: Value, epi: Epilogue, ets, ecs, os_) -> Value:
    """The epilogue generic on the matmul result ``r2`` ([F, mp]); its
    tensors (NCHW parameters) are read as [F, OH*OW] (= mp,
    :func:`epilogue_fits`)."""
    (ts,) = epilogue_operands(e, ets, os_)
    ident = "(d0, d1) -> (d0, d1)"
    return epilogue_generic(e, r2, ts, ecs, [ident] * (len(ts) + 2), epi.ops, epi.result)


def epilogue_fits(sig, bias: bool, blocks: tuple[int, int], row_block: int,
                  epi: Epilogue) -> bool:
    """The conv kernel can take the elementwise ops after the conv as an
    epilogue of its matmul: one static image, not grouped, not cut in
    strips; in an im2col form whose matmul result is [F, pixels], its
    tensors only when the pixels are not padded to whole column panels; in
    a pixel-row form, on the blocks of the transposed result."""
    xs, ws, os_, s, _d, g = sig
    if g != 1 or xs[0] != 1 or strip_rows(list(xs), list(ws), list(os_), list(s), blocks[0]) is not None:
        return False
    form, _mr = conv_form(list(xs), list(ws), list(s), 1, 1, ws[0], tuple(xs[2:]), tuple(os_[2:]),
                          bias, blocks, row_block)
    if form in ("pixel_rows", "pixel_rows_in_place"):
        return True       # applied to the blocks of the transposed result
    if form not in ("in_place", "packed_im2col", "im2col"):
        return False
    m = os_[2] * os_[3]
    mp = m if form == "in_place" else _cdiv(m, blocks[1]) * blocks[1]
    return not epi.tensors or mp == m


BIAS_LANES = 64     # vector width of the bias broadcast into a destination


def _bias_into(e: Emitter, out: Value, bias: Value) -> Value:
    """The bias ``bias`` [F] broadcast along OH*OW, written into ``out``
    ([1, F, OH, OW]) as vector code; returns it as [1, F, OH*OW]."""
    f, m = out.type.shape[1], out.type.shape[2] * out.type.shape[3]
    main, tail = m - m % BIAS_LANES, m % BIAS_LANES
    o3 = e.collapse(out, "[[0], [1], [2, 3]]", [1, f, m], base="bo")
    ch, (acc,), (res,) = e.loop(0, f, 1, [o3], base="o3")
    b = e.extract(bias, [ch])
    cur = acc
    if main:
        bw = e.broadcast(b, vector(BIAS_LANES), base="bw")
        j, (part,), (filled,) = e.loop(0, main, BIAS_LANES, [cur], base="bm")
        e.end([e.write(bw, part, [0, ch, j], base="bx")])
        cur = filled
    if tail:
        cur = e.write(e.broadcast(b, vector(tail), base="bwt"), cur, [0, ch, main], base="bxt")
    e.end([cur])
    return res


def conv_signature_and_bias(op: ir.Operation):
    """(:func:`_conv_signature`, whether its bias add is fused), or None:
    a zero-initialised plain conv whose single user adds a per-channel bias
    accumulates into the broadcast bias."""
    sig = _conv_signature(op)
    if sig is None:
        return None
    return sig, bool(sig[5] == 1 and zero_fill(op.operands[2])
                     and bias_add_user(op.results[0]) is not None)


_CONVS = ("linalg.conv_2d_nchw_fchw", "linalg.conv_2d_ngchw_gfchw")


def _conv_signature(op: ir.Operation):
    """(x shape, w shape, out shape, strides, dilations, groups); the
    batch dim of x and out may be dynamic (None)."""
    if op.name not in _CONVS:
        return None
    if len(op.operands) != 3 or len(op.results) != 1:
        return None
    x, w, o = op.operands
    shapes = [batch_shape(x), static_f32(w), batch_shape(o)]
    if any(sh is None for sh in shapes) or 0 in sum(shapes, []) \
            or (shapes[0][0] is None) != (shapes[2][0] is None):
        return None
    groups = 1 if op.name == "linalg.conv_2d_nchw_fchw" else shapes[0][1]
    return (tuple(shapes[0]), tuple(shapes[1]), tuple(shapes[2]),
            tuple(window_ints(op, "strides")), tuple(window_ints(op, "dilations")), groups)


def _conv_functions(module: ir.Module, name: str, sig, bias: bool, threads: bool,
                    blocks: tuple[int, int], row_block: int = 0,
                    epilogue: Epilogue | None = None) -> tuple[str, bool]:
    """Add the kernel for ``sig`` to ``module``; returns the function to call
    and whether it takes the output (``(x, w, out, bias)`` with a bias). A
    dynamic batch gets the batch-1 kernel and a loop over the images around
    it (:mod:`.batch_loop`); a big conv runs in strips (:mod:`.conv_strips`)."""
    xs, ws, os_, s, d, g = (list(v) if isinstance(v, tuple) else v for v in sig)
    r = strip_rows(xs, ws, os_, s, blocks[0]) if g == 1 else None
    if r is not None:
        add_functions(module, *strip_functions(name, conv_function, sig, bias, threads, blocks, r))
        return name, True
    if xs[0] is not None:
        add_functions(module, conv_function(name, xs, ws, os_, s, d, g, threads, blocks,
                                             bias=bias, row_block=row_block, epilogue=epilogue))
        return name, False
    x1, o1 = [1] + xs[1:], [1] + os_[1:]
    # images split across threads when one image is worth a parallel loop
    macs = math.prod(o1) * math.prod(ws[1:]) if g == 1 else math.prod(o1) * math.prod(ws[2:])
    image = conv_function(name + "_image", x1, ws, o1, s, d, g, threads, blocks,
                          bias=bias, dest=bias, row_block=row_block)
    args = [(xs, BATCHED), (ws, SHARED), (os_, BATCHED)]
    if bias:
        args.append(([os_[1]], SHARED))
    add_functions(module, image, batch_loop_function(name, name + "_image", args, dest=2,
                                                     parallel=threads and macs >= THREAD_MIN_MACS))
    return name, True


def convs_to_matmul(module: ir.Module, threads: bool = False,
                    blocks: tuple[int, int] = (1, 1), row_block: int = 0, plan=None) -> int:
    """Rewrite every static f32 NCHW conv (plain or grouped; with a kernel
    ``plan``, those it gave to ``conv_im2col``) as im2col + matmul (inlined
    private functions); ``row_block`` (the kernel's tile rows) allows the
    pixel-row form of :mod:`.conv_pixel_rows`. Returns how many were rewritten."""
    funcs: dict[tuple, str] = {}
    count = 0
    # collected first: rewriting erases ops (fused bias adds) a walk would visit
    convs = [(op, sig) for op in walk_ops(module.operation, _CONVS)
             if (plan is None or assigned(op, "conv_im2col"))
             and (sig := _conv_signature(op)) is not None]
    for op, sig in convs:
        with building(op):
            # a zero-initialised plain conv whose single user adds a per-channel
            # bias: the matmul accumulates into the broadcast bias instead
            fused = bias_add_user(op.results[0]) if sig[5] == 1 and zero_fill(op.operands[2]) else None
            # the elementwise ops after it (ReLU, SiLU, a residual add): the
            # matmul kernel's epilogue
            epi = epilogue_chain((fused[0] if fused is not None else op).results[0]) \
                if min(blocks) > 1 and epilogue_mod.ENABLED else None
            if epi is not None and not epilogue_fits(sig, fused is not None, blocks, row_block, epi):
                epi = None
            # the kernel replaces the chain where the conv was, so its code stays
            # in the conv's place (--profile times it as the conv's); a chain
            # reading a tensor computed after the conv (ResNet's downsampled
            # residual, exported after the block's last conv) is left to the
            # kernel that computes that tensor
            if epi is not None and not ((fused is None or dominates(fused[1], op))
                                        and hoist_to(epi, op)):
                epi = None
            key = sig + (fused is not None, epi.key if epi is not None else None)
            if key not in funcs:
                funcs[key] = _conv_functions(module, f"__om_conv_{len(funcs)}", sig,
                                             fused is not None, threads, blocks, row_block, epi)
            fn, takes_out = funcs[key]
            args = list(op.operands)
            if fused is not None and takes_out:
                # (x, w, out, bias): the fill's destination (not the fill) is the
                # batch loop's: every image's slice gets the bias broadcast
                args = args[:2] + [fill_scalar(op.operands[2])[1], fused[1]]
            elif fused is not None:
                args[2] = fused[1]
            if epi is not None:
                chain = [op] + ([fused[0]] if fused is not None else []) + list(epi.generics)
                replace_with_call(fn, args + list(epi.tensors) + list(epi.captured), chain, chain[-1],
                                  at=op)
            else:
                call_in_place(op, fused, fn, args)
            count += 1
    if funcs:
        # no canonicalize of the whole module per inlining (#29): -O3's own follows
        inline_kernels(module)
    return count
