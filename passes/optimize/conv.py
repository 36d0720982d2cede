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

import mlir.ir as ir

from onnx_mlir_py.passes.optimize.kernel_plan import (IM2COL_THREAD_MIN, THREAD_MIN_MACS,
                                                      assigned, conv_form, strip_rows)
from onnx_mlir_py.passes.optimize.batch_loop import (BATCHED, SHARED, add_functions,
                                                     batch_loop_function)
from onnx_mlir_py.passes.optimize.conv_row import row_conv_function
from onnx_mlir_py.passes.optimize.conv_pixel_rows import epilogue_operands, pixel_rows_product
from onnx_mlir_py.passes.optimize.im2col_packed import packed_im2col
from onnx_mlir_py.passes.optimize.im2col_text import end_channel_loop, zero_regions
from onnx_mlir_py.passes.optimize.kernel_emit import tensor_type
from onnx_mlir_py.passes.optimize.conv_strips import strip_functions
from onnx_mlir_py.passes.optimize import epilogue as epilogue_mod
from onnx_mlir_py.passes.optimize.epilogue import (Epilogue, epilogue_chain, epilogue_generic,
                                                   dominates, hoist_to)
from onnx_mlir_py.passes.optimize.kernel_fusion import (batch_shape, bias_add_user, call_in_place,
                                                        fill_scalar, replace_with_call, static_f32,
                                                        window_ints, zero_fill)
from onnx_mlir_py.ir_util import walk_ops


STRIDED_LANES = 16      # output columns per strided im2col read


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _im2col(lines, x: str, xs, kh_, kw_, oh, ow, s, d, kp: int, mp: int,
            threads: bool = False) -> str:
    """Append the im2col of ``x`` ([B, C, H, W]); returns the name of col,
    ``[B, kp, mp]``: rows ``c*KH*KW + kh*KW + kw`` < C*KH*KW, columns
    ``oh*OW + ow`` < OH*OW, zeros in the padding (rows up to ``kp``, columns
    up to ``mp``: whole blocks for the matmul kernel, so it needs no padded
    copy).

    Written as vector code: for each channel (an ``scf.forall`` when
    ``threads`` and the copy is large), image, output row and tap, one
    ``vector.transfer_read`` of the input row and one ``vector.transfer_write``
    into col. A stride-s row is read as (OW-1)*s+1 contiguous values and every
    s-th one is kept (``vector.shuffle``)."""
    b, c = xs[0], xs[1]
    k, m, taps = c * kh_ * kw_, oh * ow, kh_ * kw_
    full, one = [b, kp, mp], [b, taps, mp]
    par = threads and b * k * m >= IM2COL_THREAD_MIN
    lines += [f"    %ce = tensor.empty() : {tensor_type(full)}",
              "    %i2c_0 = arith.constant 0 : index", "    %i2c_1 = arith.constant 1 : index",
              f"    %i2c_b = arith.constant {b} : index", f"    %i2c_oh = arith.constant {oh} : index",
              f"    %i2c_c = arith.constant {c} : index", "    %i2c_pad = arith.constant 0.0 : f32"]
    lines += [f"    %i2c_w{j} = arith.constant {j * d[1]} : index" for j in range(kw_)]
    lines += [f"    %i2c_t{t} = arith.constant {t} : index" for t in range(taps)]
    lines += [f"    %i2c_h{i} = arith.constant {i * d[0]} : index" for i in range(kh_)]
    lines += [f"    %i2c_taps = arith.constant {taps} : index", f"    %i2c_ow = arith.constant {ow} : index",
              f"    %i2c_s0 = arith.constant {s[0]} : index"]
    init = zero_regions(lines, "%ce", full, (("rows", [0, k, 0], [b, kp - k, mp]),
                                             ("cols", [0, 0, m], [b, k, mp - m])), "%i2c_pad")
    if par:
        lines.append(f"    %colt = scf.forall (%ch) in ({c}) shared_outs(%co = {init}) -> ({tensor_type(full)}) {{")
    else:
        lines.append(f"    %colt = scf.for %ch = %i2c_0 to %i2c_c step %i2c_1 "
                     f"iter_args(%co = {init}) -> ({tensor_type(full)}) {{")
    # index arithmetic in arith, not affine.apply: affine ops may not be
    # inlined into an scf.for (the batch loop of batch_loop.py)
    lines.append(f"      %row0 = arith.muli %ch, %i2c_taps : index")
    lines.append(f"      %cs = tensor.extract_slice %co[0, %row0, 0] {one} [1, 1, 1] "
                 f": {tensor_type(full)} to {tensor_type(one)}")
    lines.append(f"      %cb = scf.for %ib = %i2c_0 to %i2c_b step %i2c_1 iter_args(%ab = %cs) -> ({tensor_type(one)}) {{")
    lines.append(f"      %cr = scf.for %r = %i2c_0 to %i2c_oh step %i2c_1 iter_args(%ar = %ab) -> ({tensor_type(one)}) {{")
    lines.append("        %dcol = arith.muli %r, %i2c_ow : index")
    lines.append(f"        %rs = arith.muli %r, %i2c_s0 : index")
    cur = "%ar"
    consts: set[int] = set()
    for i in range(kh_):
        lines.append(f"        %row{i}_ = arith.addi %rs, %i2c_h{i} : index")
    if s[1] != 1:
        cur = _strided_rows(lines, consts, x, xs, one, cur, kh_, kw_, ow, s[1], d[1])
    for i in range(kh_ if s[1] == 1 else 0):
        for j in range(kw_):
            v = f"%v{i}_{j}"
            lines.append(f"        {v} = vector.transfer_read {x}[%ib, %ch, %row{i}_, %i2c_w{j}], "
                         f"%i2c_pad {{in_bounds = [true]}} : {tensor_type(xs)}, vector<{ow}xf32>")
            nxt = f"%t{i}_{j}"
            lines.append(f"        {nxt} = vector.transfer_write {v}, {cur}[%ib, %i2c_t{i * kw_ + j}, %dcol] "
                         f"{{in_bounds = [true]}} : vector<{ow}xf32>, {tensor_type(one)}")
            cur = nxt
    lines.append(f"        scf.yield {cur} : {tensor_type(one)}\n      }}")
    lines.append(f"        scf.yield %cr : {tensor_type(one)}\n      }}")
    # the strided chunks' column constants, declared before the loops
    at = lines.index(f"    %i2c_taps = arith.constant {taps} : index")
    lines[at:at] = [f"    %i2c_c{v} = arith.constant {v} : index" for v in sorted(consts)]
    end_channel_loop(lines, par, "%cb", "%co", "%row0", one, full, "%ci")
    return "%colt"


def _strided_rows(lines, consts: set, x: str, xs, one, cur: str, kh_: int, kw_: int, ow: int,
                  s: int, d: int) -> str:
    """Every tap's im2col row of one output row at stride ``s``, in chunks of
    V = STRIDED_LANES output columns (one row-long shuffle of (OW-1)*s+1
    lanes was slower than the matmul): a loop over the chunks whose V*s
    contiguous values are in the row for every tap, then static chunks (the
    last whole ones read (V-1)*s+1 values, the tail fewer lanes). The taps
    are unrolled in one body (chunks unrolled per tap made bufferization
    take minutes on a 6x6 kernel). Returns the new col value."""
    V = STRIDED_LANES
    reach = (kw_ - 1) * d
    nsafe = min(ow // V, (xs[3] - reach - V * s) // (V * s) + 1) if xs[3] >= reach + V * s else 0
    consts.update({V * s, V, nsafe})

    def chunk(ind: str, col0: str, dst: str, lanes: int, span_of, sfx: str, c: str) -> str:
        for i in range(kh_):
            for j in range(kw_):
                p, span = f"%s{i}_{j}{sfx}", span_of(j)
                consts.add(j * d)
                lines.append(f"{ind}{p}c = arith.addi {col0}, %i2c_c{j * d} : index")
                lines.append(f"{ind}{p}r = vector.transfer_read {x}[%ib, %ch, %row{i}_, {p}c], "
                             f"%i2c_pad {{in_bounds = [true]}} : {tensor_type(xs)}, vector<{span}xf32>")
                lines.append(f"{ind}{p}v = vector.shuffle {p}r, {p}r "
                             f"[{', '.join(str(q * s) for q in range(lanes))}] "
                             f": vector<{span}xf32>, vector<{span}xf32>")
                lines.append(f"{ind}{p}w = vector.transfer_write {p}v, {c}[%ib, %i2c_t{i * kw_ + j}, "
                             f"{dst}] {{in_bounds = [true]}} : vector<{lanes}xf32>, {tensor_type(one)}")
                c = f"{p}w"
        return c

    if nsafe:
        lines += [f"        %sl = scf.for %q = %i2c_0 to %i2c_c{nsafe} step %i2c_1 "
                  f"iter_args(%su = {cur}) -> ({tensor_type(one)}) {{",
                  f"          %sq = arith.muli %q, %i2c_c{V * s} : index",
                  f"          %so = arith.muli %q, %i2c_c{V} : index",
                  "          %sd = arith.addi %dcol, %so : index"]
        c = chunk("          ", "%sq", "%sd", V, lambda j: V * s, "", "%su")
        lines += [f"          scf.yield {c} : {tensor_type(one)}", "        }"]
        cur = "%sl"
    for q0 in range(nsafe * V, ow, V):
        lanes = min(V, ow - q0)
        consts.update({q0 * s, q0})
        lines.append(f"        %sd{q0} = arith.addi %dcol, %i2c_c{q0} : index")

        def span_of(j, q0=q0, lanes=lanes):
            col = q0 * s + j * d
            return lanes * s if col + lanes * s <= xs[3] else (lanes - 1) * s + 1
        cur = chunk("        ", f"%i2c_c{q0 * s}", f"%sd{q0}", lanes, span_of, f"_{q0}", cur)
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
        kk = c * kh_ * kw_
        wk = (f"    %wk0 = tensor.collapse_shape %w [[0], [1, 2, 3]] : {tensor_type(ws)} into {tensor_type([f, kk])}\n"
              f"    %wk = tensor.expand_shape %wk0 [[0, 1], [2]] output_shape [1, {f}, {kk}] "
              f": {tensor_type([f, kk])} into {tensor_type([1, f, kk])}")
        o3 = f"    %o3 = tensor.collapse_shape %o [[0], [1], [2, 3]] : {tensor_type(os_)} into {tensor_type([n, f, oh * ow])}"
        x = "%x"
        pre = []
    else:
        n, g, cg, h, w = xs
        _, fg, _, kh_, kw_ = ws
        oh, ow = os_[3], os_[4]
        c, xb = cg, [n * g, cg, h, w]
        wk = f"    %wk = tensor.collapse_shape %w [[0], [1], [2, 3, 4]] : {tensor_type(ws)} into {tensor_type([g, fg, cg * kh_ * kw_])}"
        o3 = (f"    %o3 = tensor.collapse_shape %o [[0, 1], [2], [3, 4]] : {tensor_type(os_)} "
              f"into {tensor_type([n * g, fg, oh * ow])}")
        x = "%x4"
        pre = [f"    %x4 = tensor.collapse_shape %x [[0, 1], [2], [3], [4]] : {tensor_type(xs)} into {tensor_type(xb)}"]
    bsz, k, m = xb[0], c * kh_ * kw_, oh * ow
    third = f"%b: {tensor_type([os_[1]])}" if bias else f"%o: {tensor_type(os_)}"
    if bias and dest:
        third = f"%o: {tensor_type(os_)}, {third}"
    if epilogue is not None:
        third += "".join(f", %et{k}: {tensor_type(os_)}" for k in range(len(epilogue.tensors)))
        third += "".join(f", %ec{k}: f32" for k in range(len(epilogue.captured)))
    lines = [f"  func.func private @{name}(%x: {tensor_type(xs)}, %w: {tensor_type(ws)}, {third}) "
             f"-> {tensor_type(os_)} {{"] + pre
    lines.append("    %zero = arith.constant 0.0 : f32")
    packed = False
    form, mr = conv_form(xs, ws, s, groups, bsz, fg, (h, w), (oh, ow), bias, blocks, row_block)
    if form == "row":
        return row_conv_function(name, xs, ws, os_, bias, dest)
    if form == "pixel_rows_in_place":              # the input itself, read in place
        kp, mp = k, m
        lines.append(f"    %pr_col = tensor.collapse_shape %x [[0, 1], [2, 3]] : {tensor_type(xs)} into {tensor_type([k, m])}")
    elif form == "pixel_rows":
        kp, mp = _cdiv(k, kb) * kb, _cdiv(m, mr) * mr
        col = _im2col(lines, x, xb, kh_, kw_, oh, ow, s, d, kp, mp, threads)
        lines.append(f"    %pr_col = tensor.collapse_shape {col} [[0, 1], [2]] "
                     f": {tensor_type([1, kp, mp])} into {tensor_type([kp, mp])}")
    elif form == "in_place":
        kp, mp = k, m                      # col is a view of x; the kernel pads if needed
        lines.append(f"    %col = tensor.collapse_shape {x} [[0], [1], [2, 3]] : {tensor_type(xb)} into {tensor_type([bsz, k, m])}")
        col = "%col"
    elif packed := form == "packed_im2col":
        kp, mp = _cdiv(k, kb) * kb, _cdiv(m, nb) * nb
        col = packed_im2col(lines, x, xb, kh_, kw_, oh, ow, d, kp, mp, kb, nb, threads,
                            IM2COL_THREAD_MIN)
    else:
        kp, mp = _cdiv(k, kb) * kb, _cdiv(m, nb) * nb
        col = _im2col(lines, x, xb, kh_, kw_, oh, ow, s, d, kp, mp, threads)
    # weights [G, F', K] zero-padded to [G, F', kp] (a constant: folded at compile time)
    lines.append(wk)
    wsh = [g, fg, kp]
    if kp != k:
        lines += [f"    %wp = tensor.pad %wk low[0, 0, 0] high[0, 0, {kp - k}] {{",
                  "    ^bb0(%p0: index, %p1: index, %p2: index):\n      tensor.yield %zero : f32",
                  f"    }} : {tensor_type([g, fg, k])} to {tensor_type(wsh)}"]
        wv = "%wp"
    else:
        wv = "%wk"
    if mr:
        pixel_rows_product(lines, "%pr_col", kp, mp, m, fg, wv, os_, dest, nb // 2, epilogue)
        lines.append(f"    return %r : {tensor_type(os_)}\n  }}")
        return "\n".join(lines)
    # the result [B, F', mp] accumulates into the conv's init: the broadcast
    # bias, or the init itself (or a copy padded to whole column blocks)
    if bias and dest and mp == m and groups == 1 and n == 1:
        _bias_into(lines, os_)
        acc = "%o3"
    elif bias:
        at = tensor_type([bsz, fg, mp])
        lines += [f"    %be = tensor.empty() : {at}",
                  f"    %o3 = linalg.generic {{indexing_maps = [affine_map<(a, f, p) -> (f)>, "
                  f"affine_map<(a, f, p) -> (a, f, p)>], iterator_types = "
                  f'["parallel", "parallel", "parallel"]}} ins(%b : {tensor_type([fg])}) outs(%be : {at}) {{',
                  "    ^bb0(%bv: f32, %bo: f32):\n      linalg.yield %bv : f32",
                  f"    }} -> {at}"]
        acc = "%o3"
    elif mp == m:
        lines.append(o3)
        acc = "%o3"
    else:
        lines.append(o3)
        lines += [f"    %acc = tensor.pad %o3 low[0, 0, 0] high[0, 0, {mp - m}] {{",
                  "    ^bb0(%q0: index, %q1: index, %q2: index):\n      tensor.yield %zero : f32",
                  f"    }} : {tensor_type([bsz, fg, m])} to {tensor_type([bsz, fg, mp])}"]
        acc = "%acc"
    if bsz == 1:
        lines.append(f"    %w2 = tensor.collapse_shape {wv} [[0, 1], [2]] : {tensor_type(wsh)} into {tensor_type([fg, kp])}")
        if not packed:        # the packed im2col is [kp, mp] already
            lines.append(f"    %pcol2 = tensor.collapse_shape {col} [[0, 1], [2]] "
                         f": {tensor_type([1, kp, mp])} into {tensor_type([kp, mp])}")
        lines += [f"    %a2 = tensor.collapse_shape {acc} [[0, 1], [2]] : {tensor_type([1, fg, mp])} into {tensor_type([fg, mp])}",
                  f"    %r2 = linalg.matmul ins(%w2, %pcol2 : {tensor_type([fg, kp])}, {tensor_type([kp, mp])}) "
                  f"outs(%a2 : {tensor_type([fg, mp])}) -> {tensor_type([fg, mp])}"]
        r2 = "%r2"
        if epilogue is not None:
            r2 = _epilogue_lines(lines, epilogue, os_, mp)
        lines.append(f"    %r3 = tensor.expand_shape {r2} [[0, 1], [2]] output_shape [1, {fg}, {mp}] "
                     f": {tensor_type([fg, mp])} into {tensor_type([1, fg, mp])}")
    else:
        lines += [f"    %wbe = tensor.empty() : {tensor_type([n, g, fg, kp])}",
                  f"    %wb4 = linalg.broadcast ins({wv} : {tensor_type(wsh)}) outs(%wbe : {tensor_type([n, g, fg, kp])}) dimensions = [0]",
                  f"    %wb = tensor.collapse_shape %wb4 [[0, 1], [2], [3]] : {tensor_type([n, g, fg, kp])} into {tensor_type([bsz, fg, kp])}",
                  f"    %r3 = linalg.batch_matmul ins(%wb, {col} : {tensor_type([bsz, fg, kp])}, {tensor_type([bsz, kp, mp])}) "
                  f"outs({acc} : {tensor_type([bsz, fg, mp])}) -> {tensor_type([bsz, fg, mp])}"]
    res = "%r3"
    if mp != m:
        lines.append(f"    %rs = tensor.extract_slice %r3[0, 0, 0] [{bsz}, {fg}, {m}] [1, 1, 1] "
                     f": {tensor_type([bsz, fg, mp])} to {tensor_type([bsz, fg, m])}")
        res = "%rs"
    if groups == 1:
        lines.append(f"    %r = tensor.expand_shape {res} [[0], [1], [2, 3]] output_shape {list(os_)} "
                     f": {tensor_type([n, fg, m])} into {tensor_type(os_)}")
    else:
        lines.append(f"    %r = tensor.expand_shape {res} [[0, 1], [2], [3, 4]] output_shape {list(os_)} "
                     f": {tensor_type([bsz, fg, m])} into {tensor_type(os_)}")
    lines.append(f"    return %r : {tensor_type(os_)}\n  }}")
    return "\n".join(lines)


def _epilogue_lines(lines, epi: Epilogue, os_, mp: int) -> str:
    """Append the epilogue generic on ``%r2`` ([F, mp]); its tensors
    (``%et<k>``, the NCHW output's shape) are read as [F, OH*OW] (= mp,
    :func:`epilogue_fits`). Returns its result's name."""
    ts, caps = epilogue_operands(lines, epi, os_)
    ident = "(d0, d1) -> (d0, d1)"
    lines += epilogue_generic("%r2epi", "%r2", ts, caps, [os_[1], mp], [ident] * (len(ts) + 2), 2,
                              epi.ops, epi.result)
    return "%r2epi"


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


def _bias_into(lines, os_) -> None:
    """``%o3`` [1, F, OH*OW] = bias ``%b`` [F] broadcast along OH*OW, written
    into ``%o`` (``os_`` = [1, F, OH, OW]) as vector code."""
    f, m = os_[1], os_[2] * os_[3]
    main, tail = m - m % BIAS_LANES, m % BIAS_LANES
    ot = tensor_type([1, f, m])
    lines += [f"    %bo = tensor.collapse_shape %o [[0], [1], [2, 3]] : {tensor_type(os_)} into {ot}",
              f"    %b_f = arith.constant {f} : index", f"    %b_main = arith.constant {main} : index",
              f"    %b_step = arith.constant {BIAS_LANES} : index",
              "    %b_0 = arith.constant 0 : index", "    %b_1 = arith.constant 1 : index",
              f"    %o3 = scf.for %bf = %b_0 to %b_f step %b_1 iter_args(%bt = %bo) -> ({ot}) {{",
              f"      %bs = tensor.extract %b[%bf] : {tensor_type([f])}"]
    cur = "%bt"
    if main:
        lines += [f"      %bw = vector.broadcast %bs : f32 to vector<{BIAS_LANES}xf32>",
                  f"      %bm = scf.for %bj = %b_0 to %b_main step %b_step iter_args(%bu = %bt) -> ({ot}) {{",
                  f"        %bx = vector.transfer_write %bw, %bu[%b_0, %bf, %bj] {{in_bounds = [true]}} "
                  f": vector<{BIAS_LANES}xf32>, {ot}",
                  f"        scf.yield %bx : {ot}\n      }}"]
        cur = "%bm"
    if tail:
        lines += [f"      %bwt = vector.broadcast %bs : f32 to vector<{tail}xf32>",
                  f"      %bxt = vector.transfer_write %bwt, {cur}[%b_0, %bf, %b_main] {{in_bounds = [true]}} "
                  f": vector<{tail}xf32>, {ot}"]
        cur = "%bxt"
    lines.append(f"      scf.yield {cur} : {ot}\n    }}")


def conv_signature_and_bias(op: ir.Operation):
    """(:func:`_conv_signature`, whether its bias add is fused), or None:
    a zero-initialised plain conv whose single user adds a per-channel bias
    accumulates into the broadcast bias."""
    sig = _conv_signature(op)
    if sig is None:
        return None
    return sig, bool(sig[5] == 1 and zero_fill(op.operands[2])
                     and bias_add_user(op.results[0]) is not None)


def _conv_signature(op: ir.Operation):
    """(x shape, w shape, out shape, strides, dilations, groups); the
    batch dim of x and out may be dynamic (None)."""
    if op.name not in ("linalg.conv_2d_nchw_fchw", "linalg.conv_2d_ngchw_gfchw"):
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
    from mlir.passmanager import PassManager
    funcs: dict[tuple, str] = {}
    count = 0
    # collected first: rewriting erases ops (fused bias adds) a walk would visit
    convs = [(op, sig) for op in walk_ops(module.operation)
             if (plan is None or assigned(op, "conv_im2col"))
             and (sig := _conv_signature(op)) is not None]
    for op, sig in convs:
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
        PassManager.parse("builtin.module(inline, symbol-dce)", module.context).run(module.operation)
    return count
