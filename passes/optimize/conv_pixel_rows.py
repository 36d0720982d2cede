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
from onnx_mlir_py.passes.optimize.kernel_emit import tensor_type
from onnx_mlir_py.passes.optimize.matmul_text import _cdiv

# The pixel-row form is used when the pixel panels pad the work by more than
# this factor: any padding. Measured on Zen 4 (AVX-512, 1 thread), pixel rows
# / im2col form, as ratios to onnxruntime: 3x3 convs 512@7x7 1.20 -> 1.11,
# 256@14x14 1.24 -> 1.14, 128@28x28 (784 pixels: 2% padding) 1.19 -> 1.13,
# 64@20x20 1.29 -> 1.17; 1x1 convs 960->160@7x7 1.32 -> 1.02, 160->960@7x7
# 1.35 -> 1.09; at 56x56 (whole panels) the two forms measured the same.
MIN_PANEL_WASTE = 1.0


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


def pixel_rows_product(lines: list[str], col: str, kp: int, mp: int, m: int, f: int,
                       w: str, os_, dest: bool, blk: int, epilogue=None) -> None:
    """Append ``%r`` (the conv's NCHW result ``os_`` = [1, F, OH, OW]) from
    ``col`` ([kp, mp]: rows c*KH*KW + tap, zero rows past K; columns the
    pixels, zero columns past ``m``), the padded weights ``w`` ([1, F, kp],
    a constant) and the bias ``%b`` [F]; with ``dest`` the result is
    written into ``%o`` (the caller's output slice). ``blk``: the side of
    the transpose's blocks (the vector width). ``epilogue``: the
    :class:`.epilogue.Epilogue` after the conv, applied to each transposed
    block (its tensors are the parameters ``%et<k>``, its scalars ``%ec<k>``)."""
    lines += [
        f"    %pr_w2 = tensor.collapse_shape {w} [[0, 1], [2]] : {tensor_type([1, f, kp])} into {tensor_type([f, kp])}",
        f"    %pr_wte = tensor.empty() : {tensor_type([kp, f])}",
        f"    %pr_wt = linalg.transpose ins(%pr_w2 : {tensor_type([f, kp])}) outs(%pr_wte : {tensor_type([kp, f])}) "
        f"permutation = [1, 0]",
        f"    %pr_be = tensor.empty() : {tensor_type([mp, f])}",
        f"    %pr_init = linalg.generic {{indexing_maps = [affine_map<(p, q) -> (q)>, "
        f"affine_map<(p, q) -> (p, q)>], iterator_types = [\"parallel\", \"parallel\"]}} "
        f"ins(%b : {tensor_type([f])}) outs(%pr_be : {tensor_type([mp, f])}) {{",
        "    ^bb0(%pr_bv: f32, %pr_bo: f32):\n      linalg.yield %pr_bv : f32",
        f"    }} -> {tensor_type([mp, f])}",
        f"    %pr_rt = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>, "
        f"affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>] "
        f"ins({col}, %pr_wt : {tensor_type([kp, mp])}, {tensor_type([kp, f])}) outs(%pr_init : {tensor_type([mp, f])}) "
        f"-> {tensor_type([mp, f])}"]
    if dest:
        lines.append(f"    %pr_oe = tensor.collapse_shape %o [[0, 1], [2, 3]] : {tensor_type(os_)} into {tensor_type([f, m])}")
    else:
        lines.append(f"    %pr_oe = tensor.empty() : {tensor_type([f, m])}")
    epi = None
    if epilogue is not None:
        epi = (epilogue,) + epilogue_operands(lines, epilogue, os_)
    transpose_blocks(lines, "%pr_o", "%pr_rt", [mp, f], "%pr_oe", m, blk, epi)
    lines.append(f"    %r = tensor.expand_shape %pr_o [[0, 1], [2, 3]] output_shape {list(os_)} "
                 f": {tensor_type([f, m])} into {tensor_type(os_)}")


def epilogue_operands(lines: list[str], epi, os_) -> tuple[list[str], list[str]]:
    """The names of an :class:`.epilogue.Epilogue`'s operands in a conv
    kernel: its tensors (the parameters ``%et<k>``, NCHW ``os_``) viewed
    as [F, OH*OW] (lines appended), and its captured scalars (``%ec<k>``)."""
    f, m = os_[1], os_[2] * os_[3]
    for k in range(len(epi.tensors)):
        lines.append(f"    %etc{k} = tensor.collapse_shape %et{k} [[0, 1], [2, 3]] "
                     f": {tensor_type(os_)} into {tensor_type([f, m])}")
    return [f"%etc{k}" for k in range(len(epi.tensors))], [f"%ec{k}" for k in range(len(epi.captured))]


def transpose_blocks(lines: list[str], res: str, src: str, src_shape, dest: str, m: int,
                     blk: int, epi=None) -> None:
    """(A 16x16 f32 block on AVX-512: 16 registers transposed with shuffles,
    see passes.optimize.VECTOR_CLEANUP's lower_transpose.)
    ``res`` = ``dest`` [F, m] with ``dest[f, p] = src[p, f]`` (``src`` =
    [mp, F], rows past ``m`` ignored; F a multiple of ``blk``), as loops over
    blk x blk blocks: one 2-D read of blk rows, a ``vector.transpose``, one
    2-D write; the last partial block of pixels has static bounds. ``epi``:
    (epilogue, its tensors' [F, m] names, its scalars' names), applied to
    each block before it is written."""
    mp, f = src_shape
    whole, tail = m // blk, m % blk
    vt = f"vector<{blk}x{blk}xf32>"
    dt = tensor_type([f, m])
    lines += [f"    %tb_0 = arith.constant 0 : index", f"    %tb_b = arith.constant {blk} : index",
              f"    %tb_f = arith.constant {f} : index", f"    %tb_m = arith.constant {whole * blk} : index",
              "    %tb_pad = arith.constant 0.0 : f32",
              f"    {res} = scf.for %tb_q = %tb_0 to %tb_f step %tb_b iter_args(%tb_a = {dest}) -> ({dt}) {{"]
    cur = "%tb_a"
    if whole:
        lines += [f"      %tb_w = scf.for %tb_p = %tb_0 to %tb_m step %tb_b iter_args(%tb_c = {cur}) -> ({dt}) {{",
                  f"        %tb_v = vector.transfer_read {src}[%tb_p, %tb_q], %tb_pad {{in_bounds = [true, true]}} "
                  f": {tensor_type(src_shape)}, {vt}",
                  f"        %tb_t = vector.transpose %tb_v, [1, 0] : {vt} to {vt}"]
        val = _epilogue(lines, epi, "%tb_t", vt, "%tb_q", "%tb_p", dt, "w", "        ")
        lines += [f"        %tb_x = vector.transfer_write {val}, %tb_c[%tb_q, %tb_p] {{in_bounds = [true, true]}} "
                  f": {vt}, {dt}",
                  f"        scf.yield %tb_x : {dt}\n      }}"]
        cur = "%tb_w"
    if tail:
        # the last pixels: a [tail, blk] read (rows in bounds of src) and a
        # [blk, tail] write, both static
        rt, wt = f"vector<{tail}x{blk}xf32>", f"vector<{blk}x{tail}xf32>"
        lines += [f"      %tb_vt = vector.transfer_read {src}[%tb_m, %tb_q], %tb_pad {{in_bounds = [true, true]}} "
                  f": {tensor_type(src_shape)}, {rt}",
                  f"      %tb_tt = vector.transpose %tb_vt, [1, 0] : {rt} to {wt}"]
        val = _epilogue(lines, epi, "%tb_tt", wt, "%tb_q", "%tb_m", dt, "t", "      ")
        lines += [f"      %tb_xt = vector.transfer_write {val}, {cur}[%tb_q, %tb_m] {{in_bounds = [true, true]}} "
                  f": {wt}, {dt}"]
        cur = "%tb_xt"
    lines.append(f"      scf.yield {cur} : {dt}\n    }}")


def _epilogue(lines: list[str], epi, val: str, vt: str, row: str, col: str, dt: str, tag: str,
              ind: str) -> str:
    """The epilogue ``epi`` (see :func:`transpose_blocks`) on block ``val``
    (``vt``) of the output at [row, col]; returns the value to write."""
    if epi is None:
        return val
    from onnx_mlir_py.passes.optimize.epilogue import vector_lines
    epilogue, tensors, caps = epi
    reads = []
    for k, t in enumerate(tensors):
        lines.append(f"{ind}%tb_e{k}{tag} = vector.transfer_read {t}[{row}, {col}], %tb_pad "
                     f"{{in_bounds = [true, true]}} : {dt}, {vt}")
        reads.append(f"%tb_e{k}{tag}")
    body, out = vector_lines(epilogue.ops, epilogue.result, val, reads, caps, vt, tag, ind)
    lines += body
    return out
