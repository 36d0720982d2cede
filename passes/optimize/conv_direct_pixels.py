"""The direct conv with the filters in the vector lanes: convs over many
channels (a ResNet's 3x3 convs) without an im2col matrix.

The im2col form (:mod:`.conv`, :mod:`.conv_pixel_rows`) writes the
C*KH*KW x OH*OW matrix (9x the input for a 3x3 conv) and reads it back in the
packed matmul; its pixel-row form reads that matrix in place, one k step a
row piece of 8 pixels 3 KB apart. Here the taps read the image itself
(each pixel's value is one broadcast read, wherever it lies: no copy; the
row's edge tiles are static and leave out the taps in the zero pad
columns, as the kernel rows in the pad are left out). Per output row (an
``scf.forall`` over the rows when threaded):

    for each panel fo of NB filters (two vectors):
      for each tile of MR output pixels of the row (ow0):
        acc[p][j] = bias[fo*NB + j*V ...]           (MR x 2 vectors)
        for c:  for kh in the row's kernel rows:     (loops carrying acc)
          for kw:                                    (unrolled)
            w_j = wp[fo, c, kh, kw, j*V ...]         (two vector reads)
            acc[p][j] += broadcast(x[c, row(kh), s*(ow0 + p) + kw*d - left]) * w_j
        out[fo*NB ..., oh, ow0 ...] = epilogue(transpose(acc))

the register tile of the packed matmul (MR pixel rows x 2 vectors of
filters, :mod:`.conv_pixel_rows`), but each k step's MR pixels are one
run of an input row (every s-th value; a broadcast read per pixel that
LLVM shares between the taps that read the same value) and the MR x NB
tile is transposed in registers into NCHW (a 5-7 pixel tile padded to 8:
rows of 8 stored with a mask). The weights are repacked at compile time to
[F/NB, C, KH, KW, NB].

Session 27 (Zen 4, 1 thread, thread CPU, one process, alternating, B/A
min / median, bit-identical), reading the image instead of a phase plane
of :mod:`.conv_direct` (the image copied once, the pad's columns in place,
stride phases de-interleaved; its fill is gone; the 7- and 14-wide maps'
edge tiles also skip the pad's taps, 4 of 42 FMAs per channel and kernel
row for a 7-wide row): stride 1 64x56x56 0.985 / 0.960, 128x28 0.954 /
0.961, 256x14 0.944 / 0.955, 512x7 0.906 / 0.900, YOLO's 64x40 0.972 /
0.957, 128x20 0.967 / 0.943; stride 2 128x56 0.972 / 0.931, 256x28 0.940
/ 0.957, 512x14 0.926 / 0.932, YOLO's 64x80->128 0.959 / 0.941. The masked
rows of 8 for the 7-pixel tiles (a 4 + 2 + 1-lane store per row before)
are neutral (128x28 0.98-1.01, 256x14 0.97-1.00, 128x20 1.00), shorter code.
The inner loop is at the machine's peak: a C model of it (same tile, loop
order and sizes, no fill or transpose) runs at 99.3-99.5% of 118.2 GFLOPS;
blocking the channels by 8-32 so that the weights stay in L1 was slower
(88-97%): the weights stream from L2 fast enough. The kernel's time outside
that loop was the fill (1.4-3.4%) and the transpose (2.4-3%).
"""
from __future__ import annotations

import math

from onnx_mlir_py.passes.optimize.kernel_emit import Emitter, Value, mask, tensor, vector
from onnx_mlir_py.passes.optimize.row_emit import emit_ops

# Input channels from which a conv with a window of 2+ taps takes this
# kernel (conv_direct.takes), at least one filter panel (2 vectors); below
# 32 channels conv_direct's own tile takes the rows of 80+ columns first.
# Session 25 (Zen 4, 1 thread, thread CPU, this kernel / the im2col form,
# min): 32x40x40->32 0.850, 32x80x80->64 /2 0.942, 16x32x32->32 0.906,
# 48x40x40->64 0.912, 32x20x20->64 0.897, same error against onnxruntime.
# Bit-identical to the im2col form when an epilogue follows the bias (ReLU);
# a bare conv + bias differs in the last bits (im2col adds the bias after
# the k loop, here it is the accumulators' start).
MIN_CHANNELS = 16
# On a core with two FMA pipes (Intel server cores; Target.fma_pipes) the
# filter panels are the image's outer loop, the output rows the inner one,
# when the weights take more than this share of L2 (panels_outer): rows
# outermost, each row streamed all the weights from L3 (ResNet's 512 x 3x3
# x 512 convs: 9.4 MB per row of a 7x7 map), at the rate two pipes eat them
# (a weight vector per 7-8 cycles per pipe pair). Measured (Emerald Rapids,
# 2 MiB L2, 1 thread, thread CPU, alternating, load 3.6-4.3), panels / rows
# outermost, min: ResNet-18 0.775 (0.751 median), ResNet-50 0.922; every 3x3
# conv panels-outer (the 147-590 KB weights too) was no better than this
# threshold (1.00 min, 0.955 median). Zen 4 (1 pipe) keeps the rows outermost.
PANELS_OUTER_L2 = 0.5
MAX_TILE = 8              # pixels of the register tile (x 2 vectors of filters)


def takes(c: int, f: int, kh: int, kw: int, vw: int, num_registers: int) -> bool:
    """Whether a conv over ``c`` channels with ``f`` filters and a ``kh`` x
    ``kw`` window is this kernel's (32 vector registers: the 8 x 2 tile)."""
    return num_registers >= 32 and c >= MIN_CHANNELS and kh * kw > 1 and f % (2 * vw) == 0


def pixel_tile(ow: int) -> int:
    """Pixels of the register tile for output rows of ``ow``: of 6..8 the
    one that leaves the smallest last tile unfilled (a divisor when there is
    one; the larger on a tie)."""
    if ow <= MAX_TILE:
        return ow
    return min(range(MAX_TILE - 2, MAX_TILE + 1), key=lambda t: (-(-ow // t) * t - ow, -t))


def panels_outer(dv, target) -> bool:
    """Whether the image's loop runs the filter panels outermost and the
    output rows inside (else the rows, each over every panel): on a core
    with two FMA pipes whose L2 holds less than twice the weights
    (PANELS_OUTER_L2)."""
    return target.fma_pipes >= 2 and 4 * math.prod(dv.ws) > PANELS_OUTER_L2 * target.l2


def padded_tile(mr: int) -> int:
    """The tile's pixels rounded up to a power of two: its transposed rows'
    width (a 7-pixel tile is stored as masked rows of 8)."""
    return 1 << (mr - 1).bit_length()


def inner_tiles(dv, mr: int, whole: int) -> tuple[int, int]:
    """Tiles [lo, hi) of the ``whole`` tiles of ``mr`` pixels whose taps all
    lie in the image row (read in the loop; the others are static tiles):
    tile t reads columns s*t*mr - left .. s*(t*mr + mr - 1) + reach - left."""
    s, reach = dv.s[1], (dv.ws[3] - 1) * dv.d[1]
    left, width = dv.pad[1], dv.xs[3]
    lo = min(whole, -(-left // (s * mr)))
    hi = max(lo, min(whole, ((width - 1 + left - reach) // s + 1) // mr))
    return lo, hi


def row_tiles(ow: int, mr: int) -> tuple[int, int]:
    """(whole tiles of ``mr`` pixels, pixels of the last, shorter tile or 0)."""
    return ow // mr, ow % mr


def emit_row(e: Emitter, dv, vw: int, v: dict, orow: Value, panel: Value | None = None) -> Value:
    """The output row ``orow`` ([1, F, 1, OW]; with ``panel``, that filter
    panel's [1, NB, 1, OW]) of the filters-in-lanes kernel, from the image
    ``v["x"]`` (row ``v["brow"](kernel row)``) and the repacked weights
    ``v["wp"]`` ([F/NB, C, KH, KW, NB])."""
    f, ow = dv.ws[0], dv.os[3]
    nb = 2 * vw
    mr = pixel_tile(ow)
    whole, tail = row_tiles(ow, mr)
    fr = f if panel is None else nb
    o2 = e.collapse(orow, "[[0, 1], [2, 3]]", [fr, ow], base="o2")
    if panel is None:
        fo, (ot,), (ores,) = e.loop(e.index(0), e.index(f // nb), e.index(1), [o2], base="fp")
    else:
        fo, ot = panel, o2
    f0 = e.mul(fo, nb)
    d0 = f0 if panel is None else 0        # the panel's first row in orow
    if dv.init == "bias":
        iv = [e.read(v["init"], [e.add(f0, j * vw)], v["zero"], vector(vw), base="iv")
              for j in range(2)]
    else:
        iv = [e.broadcast(v["init"], vector(vw), base="iv")] * 2
    cur = ot
    lo, hi = inner_tiles(dv, mr, whole)
    for t0 in list(range(lo)) + [None] + list(range(hi, whole)):
        if t0 is not None:                 # a static tile: the taps past the row skipped
            cur = _tile(e, dv, vw, v, iv, fo, d0, e.index(t0 * mr), mr, cur, t0 * mr)
        elif hi > lo:
            t, (tt,), (tres,) = e.loop(e.index(lo * mr), e.index(hi * mr), e.index(mr), [cur],
                                       base="pt")
            e.end([_tile(e, dv, vw, v, iv, fo, d0, t, mr, tt)])
            cur = tres
    if tail:
        cur = _tile(e, dv, vw, v, iv, fo, d0, e.index(whole * mr), tail, cur, whole * mr)
    if panel is None:
        e.end([cur])
        cur = ores
    return e.expand(cur, "[[0, 1], [2, 3]]", [1, fr, 1, ow], base="orow")


def _tile(e: Emitter, dv, vw: int, v: dict, iv, fo, f0, ow0, mr: int, dst: Value,
          static0: int | None = None) -> Value:
    """One MR-pixel x NB-filter tile at output column ``ow0`` (``static0``
    when known) of filter panel ``fo`` written into ``dst`` ([F or NB, OW])
    from its row ``f0``; the taps read the image ``v["x"]`` (a static tile
    leaves out those in the zero pad columns)."""
    _f, _c, _kh, kw = dv.ws
    s, d = dv.s[1], dv.d[1]
    left, width = dv.pad[1], dv.xs[3]
    ch, accs, res = e.loop(e.index(0), e.index(dv.ws[1]), e.index(1),
                           [iv[k % 2] for k in range(2 * mr)], base="pc")
    i, accs, kres = e.loop(v["khlo"], v["khhi"], e.index(1), list(accs), base="pk")
    accs = list(accs)
    row = v["brow"](i)                     # the image row of kernel row i
    for j in range(kw):
        ws_ = [e.read(v["wp"], [fo, ch, i, j, h * vw], v["zero"], vector(vw), base="wv")
               for h in range(2)]
        for p in range(mr):
            if static0 is not None and not 0 <= s * (static0 + p) + j * d - left < width:
                continue                   # a tap in the zero pad
            col = e.add(e.mul(ow0, s), s * p + j * d - left)
            a = e.broadcast(e.extract(v["x"], [v["n"], ch, row, col]), vector(vw), base="av")
            for h in range(2):
                accs[2 * p + h] = e.fma(a, ws_[h], accs[2 * p + h])
    e.end(accs)
    e.end(kres)
    vals = list(res)
    if dv.epilogue:
        vals = [emit_ops(e, dv.epilogue, dv.epi_result, a, v["ecv"]) for a in vals]
    nb = 2 * vw
    pm = padded_tile(mr)
    tt = vector([pm, 2, vw])
    blk = e.const("dense<0.0>", tt)
    for p in range(mr):
        for h in range(2):
            blk = e.op("pins", f"vector.insert {vals[2 * p + h]}, {blk} [{p}, {h}] : "
                               f"{vals[0].type} into {tt}", tt)
    flat = vector([pm, nb])
    blk2 = e.op("pfl", f"vector.shape_cast {blk} : {tt} to {flat}", flat)
    tr = vector([nb, pm])
    blkt = e.op("ptr", f"vector.transpose {blk2}, [1, 0] : {flat} to {tr}", tr)
    if pm == mr:
        return e.write(blkt, dst, [f0, ow0], base="pw")
    # a 5-7 pixel tile: its rows of 8, each one masked store of the tile's
    # pixels (the 7 columns were a 4 + 2 + 1-lane store per row); in_bounds
    # false: the masked-off lane of the row's last tile is past its end
    m = e.op("pmk", f"vector.constant_mask [{mr}] : {mask(pm)}", mask(pm))
    for k in range(nb):
        row = e.op("prow", f"vector.extract {blkt}[{k}] : {vector(pm)} from {tr}", vector(pm))
        dst = e.write(row, dst, [e.add(f0, k), ow0], mask_=m, in_bounds=None, base="pw")
    return dst


def weights(e: Emitter, w: Value, dv, nb: int) -> Value:
    """``w`` [F, C, KH, KW] repacked to [F/nb, C, KH, KW, nb] (a constant: folded)."""
    f, c, kh, kw = dv.ws
    et = tensor([f // nb, nb, c, kh, kw])
    wexp = e.op("wexp", f"tensor.expand_shape {w} [[0, 1], [2], [3], [4]] output_shape "
                        f"[{f // nb}, {nb}, {c}, {kh}, {kw}] : {w.type} into {et}", et)
    wpt = tensor([f // nb, c, kh, kw, nb])
    return e.op("wp", f"linalg.transpose ins({wexp} : {et}) outs({e.empty(wpt.shape)} : {wpt}) "
                      "permutation = [0, 2, 3, 4, 1]", wpt)

