"""The row kernel's scratch plane (:mod:`.row_kernel`, when the window op's
input pad is fused).

Padding: each (n, c) plane is copied into the interior of a per-task scratch
plane whose border was set to the pad's value once (the pad of the whole
tensor cost more than the convolution itself: a memset and a copy of the
full activation through memory). The scratch is wider than the padded row,
so rows are computed in whole vectors only (the last one stores just the
columns that are left) and the copy's last vector per row is a masked read
whose zero lanes land on the border.

Prologue: with a unary elementwise generic before the pad (a 1x1 conv's
ReLU6 / HardSwish before a depthwise conv, the MobileNet block), the copy
reads that generic's input and applies its ops to each vector it copies
(lanes of a row's masked last read are reset to the border's value: the op
need not map 0 to 0), so the activation is no separate pass through memory.
"""
from __future__ import annotations

from onnx_mlir_py.passes.optimize.row_emit import Emit, emit_ops, vtype
from onnx_mlir_py.passes.optimize.row_plan import Conv


def plane_init(e: Emit, cv: Conv, st: str, hp: int, limit: int, vw: int) -> None:
    """``%sf``: the scratch plane (type ``st``, [hp, limit]) filled with the pad value."""
    e(f"%se = tensor.empty() : {st}")
    if cv.pad_value == 0.0:     # a memset
        e(f"%sf = linalg.fill ins(%padv : f32) outs(%se : {st}) -> {st}")
    else:                       # rows of vector stores (linalg.fill became scatters)
        _vector_fill(e, "%sf", "%se", st, hp, limit, vw)


def _vector_fill(e: Emit, res: str, init: str, st: str, rows: int, cols: int, vw: int) -> None:
    """``res`` = ``init`` ([rows, cols]) filled with ``%padv``: per row whole
    vectors, the last one overlapping the previous when cols % vw != 0."""
    lanes = min(vw, cols)
    e(f"%padvv = vector.broadcast %padv : f32 to {vtype(lanes)}")
    e(f"{res} = scf.for %fr = {e.idx(0)} to {e.idx(rows)} step {e.idx(1)} "
      f"iter_args(%fs = {init}) -> ({st}) {{")
    cur = "%fs"
    starts = list(range(0, cols - lanes + 1, lanes))
    if starts[-1] + lanes < cols:
        starts.append(cols - lanes)
    for col in starts:
        cur = e.val("fw", f"vector.transfer_write %padvv, {cur}[%fr, {e.idx(col)}] "
                          f"{{in_bounds = [true]}} : {vtype(lanes)}, {st}")
    e(f"  scf.yield {cur} : {st}")
    e("}")


def prologue_splats(e: Emit, cv: Conv, vw: int) -> None:
    """Per channel: the prologue's captured scalars as vectors ``%pcv<k>``
    and, when rows end in a masked read, its mask and border vector."""
    w = cv.xs[3]
    for k in range(cv.n_pcap):
        e(f"%pcv{k} = vector.broadcast %p_cap{k} : f32 to {vtype(vw)}")
    if cv.prologue and w % vw:
        # a row's masked last read: the lanes past the row keep the border's zeros
        e(f"%pmask = vector.constant_mask [{w % vw}] : vector<{vw}xi1>")
        e(f"%pzero = vector.broadcast %padv : f32 to {vtype(vw)}")


def plane_copy(e: Emit, cv: Conv, xt: str, st: str, vw: int) -> None:
    """``%sp``: the plane ``%s1`` with ``%x[%n, %c]`` (prologue applied)
    written into its interior; the border keeps the fill."""
    h, w = cv.xs[2], cv.xs[3]
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
                        f"{{in_bounds = [{inb}]}} : {xt}, {vtype(vw)}")
        if cv.prologue:
            v = emit_ops(e, cv.prologue, cv.pro_result, v, "%pcv{}", vw)
            if inb == "false":
                v = e.val("cp", f"arith.select %pmask, {v}, %pzero : vector<{vw}xi1>, "
                                f"{vtype(vw)}")
        cur = e.val("sc", f"vector.transfer_write {v}, {cur}[{rr}, {e.idx(col + pl)}] "
                          f"{{in_bounds = [true]}} : {vtype(vw)}, {st}")
    e(f"scf.yield {cur} : {st}")
    e.ind -= 1
    e("}")
