"""Convolutions over few pixels: the pixels are the rows of the product.

The im2col conv of :mod:`.conv` computes ``out [F, M] = W [F, K] @ col [K, M]``
with the pixels M = OH*OW as the kernel's vector columns, in panels of nb
(32 on AVX-512). A map whose pixel count is not a multiple of nb computes
zeros in its last panel: 49 pixels (7x7) take 64 columns (1.31x the work),
196 (14x14) take 224 (1.14x). onnxruntime's NCHWc convs have the output
channels in the vector lanes instead, so they have no such waste.

Here the product is transposed, ``outᵀ [M, F] = colᵀ [M, K] @ Wᵀ [K, F]``:

- the filters F (a multiple of 32 in real networks) are the vector columns
  and Wᵀ, a constant, is packed at compile time;
- the pixels are the rows of the register tile, whose height
  (:func:`.matmul.row_tile`, 6..8 on AVX-512) is chosen to divide M when it
  can (7 rows for 7x7 and 14x14 maps);
- colᵀ is not materialised: the kernel reads ``col [K, M]`` in place
  (``linalg.matmul`` with A's map transposed; :mod:`.matmul_text`'s
  ``a_cols``), each k step one row piece of mb contiguous pixels. A 1x1
  stride-1 conv's ``col`` is its input itself;
- the bias is the accumulators' initial value (a row broadcast), and the
  ``[M, F]`` result is transposed into the NCHW output ``[F, M]``.
"""
from __future__ import annotations

from onnx_mlir_py.passes.optimize.matmul import row_tile
from onnx_mlir_py.passes.optimize.kernel_emit import Elem, Emitter, Value, vector
from onnx_mlir_py.passes.optimize.matmul_text import _cdiv

# The pixel-row form is used when the pixel panels pad the work by more than
# this factor: any padding. Measured on Zen 4 (AVX-512, 1 thread), pixel rows
# / im2col form, as ratios to onnxruntime: 3x3 convs 512@7x7 1.20 -> 1.11,
# 256@14x14 1.24 -> 1.14, 128@28x28 (784 pixels: 2% padding) 1.19 -> 1.13,
# 64@20x20 1.29 -> 1.17; 1x1 convs 960->160@7x7 1.32 -> 1.02, 160->960@7x7
# 1.35 -> 1.09; at 56x56 (whole panels) the two forms measured the same.
MIN_PANEL_WASTE = 1.0

# The transpose of a pixel-row result into NCHW (a pass over memory after the
# product, 8-16% of a 1x1 conv with few input channels) is split across the
# threads from this many elements (F x pixels) up: below it, the pool's
# wake-up and join cost about what the second thread saves.
TRANSPOSE_THREAD_MIN = 1 << 15
#
# Measured and not kept (#27; Zen 4, 1 thread, thread CPU, bit-identical
# outputs): the product and its transpose per static group of 32 / 64 / 96
# filters (each group's [mp, g] result transposed while in cache): 32->192
# at 28x28 0.963-0.989 of one product + one transpose, 96->576 at 14x14
# 0.984-1.01, 7x7 convs 0.99-1.02, but MobileNetV2 as a whole 1.04-1.08
# slower with groups of 32: the transpose's cost is its shuffles more than
# its memory pass. The im2col form for few-channel expanding convs at 28x28
# (K <= 64, F >= 4K: 784 pixels pad 800 columns by 2%): 1 thread 0.94-0.97,
# but at 2 threads with the second vCPU free ~1.15 (32->192: the pixel-row
# transpose splits across the pool).


def pixel_rows(bsz: int, groups: int, bias: bool, f: int, m: int, nb: int, mb: int) -> int:
    """The register tile's rows for a conv of ``f`` filters over ``m``
    output pixels in pixel-row form, or 0 to keep the im2col form: one
    image (or one image of a batch loop), not grouped, with its bias (the
    accumulators' init; a conv without one keeps its own init), at least
    one vector panel of filters (whole vectors of them), when the pixel
    panels pad the work by more than MIN_PANEL_WASTE and pixel rows (with
    the filter panels' padding) pad it less."""
    if mb <= 0 or bsz != 1 or groups != 1 or not bias or f < nb or f % (nb // 2):
        return 0
    waste_cols = _cdiv(m, nb) * nb / m
    mr = row_tile(m, mb)
    waste_rows = _cdiv(m, mr) * mr / m * (_cdiv(f, nb) * nb / f)
    return mr if waste_cols > MIN_PANEL_WASTE and waste_rows < waste_cols else 0


def pixel_rows_product(e: Emitter, col: Value, m: int, w: Value, b: Value, os_,
                       out: Value | None, blk: int, epi=None, threads: bool = False) -> Value:
    """The conv's NCHW result ``os_`` = [1, F, OH, OW] from ``col`` ([kp, mp]:
    rows c*KH*KW + tap, zero rows past K; columns the pixels, zero columns
    past ``m``), the padded weights ``w`` ([1, F, kp], a constant) and the
    bias ``b`` [F]; written into ``out`` (the caller's output slice) when
    given. ``blk``: the side of the transpose's blocks (the vector width).
    ``epi``: (the :class:`.epilogue.Epilogue` after the conv, its tensor
    parameters, its scalar parameters), applied to each transposed block.
    ``threads``: the transpose's filter blocks are split across the pool
    when it is large (:data:`TRANSPOSE_THREAD_MIN`)."""
    kp, mp = col.type.shape
    f = os_[1]
    w2 = e.collapse(w, "[[0, 1], [2]]", [f, kp], base="pr_w2")
    wte = e.empty([kp, f], base="pr_wte")
    wt = e.op("pr_wt", f"linalg.transpose ins({w2} : {w2.type}) outs({wte} : {wte.type}) "
                       f"permutation = [1, 0]", wte.type)
    init = e.broadcast_rows(b, e.empty([mp, f], base="pr_be"),
                            "affine_map<(p, q) -> (q)>, affine_map<(p, q) -> (p, q)>", base="pr_init")
    rt = e.op("pr_rt", f"linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, "
                       f"affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] "
                       f"ins({col}, {wt} : {col.type}, {wt.type}) outs({init} : {init.type}) "
                       f"-> {init.type}", init.type)
    oe = e.collapse(out, "[[0, 1], [2, 3]]", [f, m], base="pr_oe") if out is not None \
        else e.empty([f, m], base="pr_oe")
    if epi is not None:
        epi = (epi[0],) + epilogue_operands(e, epi[1], os_) + (epi[2],)
    res = transpose_blocks(e, rt, oe, m, blk, epi, threads and f * m >= TRANSPOSE_THREAD_MIN)
    return e.expand(res, "[[0, 1], [2, 3]]", list(os_), base="r")


def epilogue_operands(e: Emitter, tensors: list[Value], os_) -> tuple[list[Value]]:
    """An :class:`.epilogue.Epilogue`'s tensor parameters (NCHW ``os_``)
    viewed as [F, OH*OW]."""
    f, m = os_[1], os_[2] * os_[3]
    return ([e.collapse(t, "[[0, 1], [2, 3]]", [f, m], base="etc") for t in tensors],)


def transpose_blocks(e: Emitter, src: Value, dest: Value, m: int, blk: int, epi=None,
                     par: bool = False) -> Value:
    """(A 16x16 block of 32-bit elements on AVX-512: 16 registers transposed
    with shuffles, see passes.optimize.VECTOR_CLEANUP's lower_transpose; f32
    here, i32 for the int8 conv's result, conv_q8.)
    ``dest`` [F, m] with ``dest[f, p] = src[p, f]`` (``src`` = [mp, F], rows
    past ``m`` ignored; F a multiple of ``blk``), as loops over blk x blk
    blocks: one 2-D read of blk rows, a ``vector.transpose``, one 2-D write;
    the last partial block of pixels has static bounds. ``epi``: (epilogue,
    its tensors as [F, m], its scalars), applied to each block before it is
    written. ``par``: the loop over the filter blocks is an ``scf.forall``
    (each iteration writes its own [blk, m] rows of ``dest``)."""
    f = src.type.shape[1]
    if not par or f // blk < 2:
        q, (acc,), (res,) = e.loop(0, f, blk, [dest], base="tb")
        e.end([_filter_block(e, src, acc, q, q, m, blk, epi)])
        return res
    i, acc, res = e.forall(f // blk, dest, base="tb")
    q = e.iop("muli", i, blk)
    rows = e.extract_slice(acc, [q, 0], [blk, m], base="tb_rows")
    e.end_forall(_filter_block(e, src, rows, q, 0, m, blk, epi), acc, [q, 0], [blk, m])
    return res


def _filter_block(e: Emitter, src: Value, dest: Value, q, row, m: int, blk: int, epi) -> Value:
    """The filters [q, q + blk) of :func:`transpose_blocks`, written into
    ``dest`` at row ``row`` (``q`` itself, or 0 in the block's own slice)."""
    elem = src.type.elem
    whole, tail = m // blk, m % blk
    pad = e.f32(0.0) if elem is Elem.F32 else e.const("0", src.type.scalar)
    cur = dest
    if whole:
        vt = vector([blk, blk], elem)
        p, (blocks,), (done,) = e.loop(0, whole * blk, blk, [cur], base="tbw")
        v = e.read(src, [p, q], pad, vt, base="tb_v")
        t = e.op("tb_t", f"vector.transpose {v}, [1, 0] : {vt} to {vt}", vt)
        e.end([e.write(_epilogue(e, epi, t, q, p), blocks, [row, p], base="tb_x")])
        cur = done
    if tail:
        # the last pixels: a [tail, blk] read (rows in bounds of src) and a
        # [blk, tail] write, both static
        rt, wt = vector([tail, blk], elem), vector([blk, tail], elem)
        v = e.read(src, [whole * blk, q], pad, rt, base="tb_vt")
        t = e.op("tb_tt", f"vector.transpose {v}, [1, 0] : {rt} to {wt}", wt)
        cur = e.write(_epilogue(e, epi, t, q, whole * blk), cur, [row, whole * blk], base="tb_xt")
    return cur


def _epilogue(e: Emitter, epi, val: Value, row, col) -> Value:
    """The epilogue ``epi`` (see :func:`transpose_blocks`) on block ``val``
    of the output at [row, col]; returns the value to write."""
    if epi is None:
        return val
    from onnx_mlir_py.passes.optimize.epilogue import vector_lines
    epilogue, tensors, caps = epi
    pad = e.f32(0.0)
    reads = [e.read(t, [row, col], pad, val.type, base="tb_e") for t in tensors]
    return vector_lines(e, epilogue.ops, epilogue.result, val, reads, caps)
