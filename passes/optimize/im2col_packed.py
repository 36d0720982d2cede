"""im2col written straight into the packed kernel's B layout (stride-1 convs).

The plain im2col of :mod:`.conv` writes ``col [K, M]`` (rows ``c*KH*KW + tap``,
columns the output pixels ``oh*OW + ow``) and the matmul kernel reads its
column panels in place: each k row of a 32-column panel is a separate 128-byte
piece of a long row. Measured on a 2 MiB-L2 Xeon (128->128 3x3 at 28x28, the
kernel alone): 150 GFLOPS in place against 166 with B packed into contiguous
panels ``[M/nb, K/kb, kb, nb]``, and packing the in-place matrix afterwards
cost more than it saved. Here the im2col itself writes that layout:

    colp[q, r, j] = col[r, q*nb + j]        (q < M/nb panels, r < kp rows)

For each channel (an ``scf.forall`` with threads), output row and tap, the
input row (contiguous at stride 1) is split where it crosses a panel
boundary, into at most :func:`max_pieces` masked nb-lane transfers whose
offsets and lengths are computed per row (pieces unrolled per row with
static offsets made ResNet-50 compile in 24 s instead of 13).

The result is ``linalg.unpack``-ed to ``[kp, mp]`` for the ``linalg.matmul``;
:func:`.matmul.pack_matmuls` packs that B with the same tiles and the
canonicalizer folds ``pack(unpack(colp))`` to ``colp``: no copy is left.
"""
from __future__ import annotations

import math

from onnx_mlir_py.passes.optimize.im2col_shared import (channel_loop, end_channel_loop,
                                                        zero_regions)
from onnx_mlir_py.passes.optimize.kernel_emit import Emitter, Value, vector


def row_pieces(r: int, ow: int, nb: int) -> list[tuple[int, int, int, int]]:
    """(first output column, length, panel offset, column in the panel) of
    the pieces of output row ``r`` of a group (whose first pixel starts a
    panel): the row's OW pixels cut where they cross a multiple of nb."""
    pieces, o = [], 0
    while o < ow:
        at = r * ow + o
        n = min(ow - o, nb - at % nb)
        pieces.append((o, n, at // nb, at % nb))
        o += n
    return pieces


def packed_im2col(e: Emitter, x: Value, kh_: int, kw_: int, oh: int, ow: int, d,
                  kp: int, mp: int, kb: int, nb: int, threads: bool, thread_min: int) -> Value:
    """The packed im2col of ``x`` ([1, C, H, W], already padded, stride 1,
    dilations ``d``) as ``[kp, mp]`` (the unpack of the packed
    ``[mp/nb, kp/kb, kb, nb]``), zeros in the padding rows/columns.

    Per channel, output row and tap, the row's pieces are masked nb-lane
    transfers (at most :func:`max_pieces` of them): the first from the
    row's first column ``j0 = (oh*OW) % nb`` of panel ``(oh*OW) // nb``, the
    next ones whole panels from column 0; a piece past the row's end has an
    empty mask (its panel index clamped into range)."""
    c = x.type.shape[1]
    k, m, taps = c * kh_ * kw_, oh * ow, kh_ * kw_
    nq, ko = mp // nb, kp // kb
    full, one = [nq, kp, nb], [nq, taps, nb]
    par = threads and k * m >= thread_min
    vt = vector(nb)
    pad = e.f32(0.0)
    jl = m - (nq - 1) * nb
    init = zero_regions(e, e.empty(full, base="pce"),
                        (([0, k, 0], [nq, kp - k, nb]), ([nq - 1, 0, jl], [1, k, nb - jl])), pad)
    ch, carried, colt = channel_loop(e, par, c, init)
    row0 = e.iop("muli", ch, taps)
    r, (rows,), (filled,) = e.loop(0, oh, 1, [e.extract_slice(carried, [0, row0, 0], one)])
    base = e.iop("muli", r, ow)
    q0, j0 = e.iop("divui", base, nb), e.iop("remui", base, nb)
    first = e.iop("subi", nb, j0)
    # piece p: output columns from o_p, n_p of them, into panel q_p from column j_p
    pieces = [(e.index(0), e.iop("minsi", first, ow), q0, j0)]
    for p in range(1, max_pieces(ow, nb)):
        o_ = e.iop("addi", first, (p - 1) * nb)
        n = e.iop("subi", ow, o_)
        pieces.append((e.iop("minsi", o_, ow - 1), n,
                       e.iop("minsi", e.iop("addi", q0, p), nq - 1), e.index(0)))
    masks = [e.create_mask(n, nb) for _o, n, _q, _j in pieces]
    cur = rows
    for i in range(kh_):
        h = e.iop("addi", r, i * d[0])
        for j in range(kw_):
            for (o, _n, q, jp), mk in zip(pieces, masks):
                col = o if j == 0 else e.iop("addi", o, j * d[1])
                v = e.read(x, [0, ch, h, col], pad, vt, mk, in_bounds=None, base="pv")
                cur = e.write(v, cur, [q, i * kw_ + j, jp], mk, in_bounds=None, base="pw")
    e.end([cur])
    end_channel_loop(e, par, filled, carried, row0)
    col4 = e.expand(colt, "[[0], [1, 2], [3]]", [nq, ko, kb, nb], base="pcol4")
    ue = e.empty([kp, mp], base="pue")
    return e.op("pcol2", f"linalg.unpack {col4} outer_dims_perm = [1, 0] inner_dims_pos = [0, 1] "
                         f"inner_tiles = [{kb}, {nb}] into {ue} : {col4.type} -> {ue.type}", ue.type)


def max_pieces(ow: int, nb: int) -> int:
    """The most pieces an output row of OW pixels is cut into by panels of nb
    columns (over the rows' starting columns, which repeat every
    nb / gcd(OW, nb) rows)."""
    return max(len(row_pieces(r, ow, nb)) for r in range(nb // math.gcd(ow, nb)))
