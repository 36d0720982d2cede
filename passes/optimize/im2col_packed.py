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

from onnx_mlir_py.passes.optimize.im2col_text import end_channel_loop, zero_regions
from onnx_mlir_py.passes.optimize.kernel_emit import tensor_type


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


def packed_im2col(lines: list[str], x: str, xs, kh_: int, kw_: int, oh: int, ow: int, d,
                  kp: int, mp: int, kb: int, nb: int, threads: bool, thread_min: int) -> str:
    """Append the packed im2col of ``x`` ([1, C, H, W], already padded, stride
    1, dilations ``d``); returns the name of ``[kp, mp]`` (the unpack of the
    packed ``[mp/nb, kp/kb, kb, nb]``), zeros in the padding rows/columns.

    Per channel, output row and tap, the row's pieces are masked nb-lane
    transfers (at most :func:`max_pieces` of them): the first from the
    row's first column ``j0 = (oh*OW) % nb`` of panel ``(oh*OW) // nb``, the
    next ones whole panels from column 0; a piece past the row's end has an
    empty mask (its panel index clamped into range)."""
    c = xs[1]
    k, m, taps = c * kh_ * kw_, oh * ow, kh_ * kw_
    nq, ko = mp // nb, kp // kb
    full, one = [nq, kp, nb], [nq, taps, nb]
    npieces = max_pieces(ow, nb)
    par = threads and k * m >= thread_min
    vt, mt = f"vector<{nb}xf32>", f"vector<{nb}xi1>"
    consts: set[int] = {0, 1, oh, ow, nb, nq - 1, ow - 1, taps}
    lines.append(f"    %pce = tensor.empty() : {tensor_type(full)}")
    lines.append("    %pc_pad = arith.constant 0.0 : f32")
    jl = m - (nq - 1) * nb
    init = zero_regions(lines, "%pce", full, (("prow", [0, k, 0], [nq, kp - k, nb]),
                                              ("pcol", [nq - 1, 0, jl], [1, k, nb - jl])), "%pc_pad")
    at_consts = len(lines)
    if par:
        lines.append(f"    %pcolt = scf.forall (%pch) in ({c}) shared_outs(%pco = {init}) -> ({tensor_type(full)}) {{")
    else:
        lines.append(f"    %pcolt = scf.for %pch = %pc_c0 to %pc_c{c} step %pc_c1 "
                     f"iter_args(%pco = {init}) -> ({tensor_type(full)}) {{")
        consts.add(c)
    lines.append(f"      %prow0 = arith.muli %pch, %pc_c{taps} : index")
    lines.append(f"      %pcs = tensor.extract_slice %pco[0, %prow0, 0] {one} [1, 1, 1] "
                 f": {tensor_type(full)} to {tensor_type(one)}")
    ind = "        "
    lines += [f"      %prl = scf.for %pr = %pc_c0 to %pc_c{oh} step %pc_c1 "
              f"iter_args(%pra = %pcs) -> ({tensor_type(one)}) {{",
              f"{ind}%pbase = arith.muli %pr, %pc_c{ow} : index",
              f"{ind}%pq0 = arith.divui %pbase, %pc_c{nb} : index",
              f"{ind}%pj0 = arith.remui %pbase, %pc_c{nb} : index",
              f"{ind}%pfirst = arith.subi %pc_c{nb}, %pj0 : index"]
    # piece p: output columns from o_p, n_p of them, into panel q_p from column j_p
    pieces = []
    for p in range(npieces):
        if p == 0:
            lines.append(f"{ind}%pn0 = arith.minsi %pfirst, %pc_c{ow} : index")
            pieces.append(("%pc_c0", "%pn0", "%pq0", "%pj0"))
            continue
        consts.update({(p - 1) * nb, p})
        lines += [f"{ind}%po{p}_ = arith.addi %pfirst, %pc_c{(p - 1) * nb} : index",
                  f"{ind}%pn{p} = arith.subi %pc_c{ow}, %po{p}_ : index",
                  f"{ind}%po{p} = arith.minsi %po{p}_, %pc_c{ow - 1} : index",
                  f"{ind}%pq{p}_ = arith.addi %pq0, %pc_c{p} : index",
                  f"{ind}%pq{p} = arith.minsi %pq{p}_, %pc_c{nq - 1} : index"]
        pieces.append((f"%po{p}", f"%pn{p}", f"%pq{p}", "%pc_c0"))
    for p, (_o, n, _q, _j) in enumerate(pieces):
        lines.append(f"{ind}%pm{p} = vector.create_mask {n} : {mt}")
    cur = "%pra"
    for i in range(kh_):
        consts.add(i * d[0])
        lines.append(f"{ind}%ph{i} = arith.addi %pr, %pc_c{i * d[0]} : index")
        for j in range(kw_):
            t = i * kw_ + j
            consts.update({t, j * d[1]})
            for p, (o, _n, q, j0) in enumerate(pieces):
                col = o if j == 0 else f"%pcl{t}_{p}"
                if j:
                    lines.append(f"{ind}{col} = arith.addi {o}, %pc_c{j * d[1]} : index")
                v, w = f"%pv{t}_{p}", f"%pw{t}_{p}"
                lines.append(f"{ind}{v} = vector.transfer_read {x}[%pc_c0, %pch, %ph{i}, {col}], %pc_pad, "
                             f"%pm{p} : {tensor_type(xs)}, {vt}")
                lines.append(f"{ind}{w} = vector.transfer_write {v}, {cur}[{q}, %pc_c{t}, {j0}], %pm{p} "
                             f": {vt}, {tensor_type(one)}")
                cur = w
    lines.append(f"{ind}scf.yield {cur} : {tensor_type(one)}\n      }}")
    end_channel_loop(lines, par, "%prl", "%pco", "%prow0", one, full, "%pci")
    lines[at_consts:at_consts] = [f"    %pc_c{v} = arith.constant {v} : index" for v in sorted(consts)]
    p4 = [nq, ko, kb, nb]
    lines += [f"    %pcol4 = tensor.expand_shape %pcolt [[0], [1, 2], [3]] output_shape {p4} "
              f": {tensor_type(full)} into {tensor_type(p4)}",
              f"    %pue = tensor.empty() : {tensor_type([kp, mp])}",
              f"    %pcol2 = linalg.unpack %pcol4 outer_dims_perm = [1, 0] inner_dims_pos = [0, 1] "
              f"inner_tiles = [{kb}, {nb}] into %pue : {tensor_type(p4)} -> {tensor_type([kp, mp])}"]
    return "%pcol2"


def max_pieces(ow: int, nb: int) -> int:
    """The most pieces an output row of OW pixels is cut into by panels of nb
    columns (over the rows' starting columns, which repeat every
    nb / gcd(OW, nb) rows)."""
    return max(len(row_pieces(r, ow, nb)) for r in range(nb // math.gcd(ow, nb)))
