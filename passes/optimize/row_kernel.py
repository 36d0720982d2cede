"""The row kernel of 2-D window ops (depthwise convs, :mod:`.depthwise`;
pools, :mod:`.pool`), written in the vector dialect on tensors as a private
function (inlined, like the packed matmul of :mod:`.matmul_text`):

    for c (blocks of an scf.forall when threaded), n:
      plane = zero-padded x[n, c]            (scratch [Hp, Wp'], border stays 0)
      wv_kh_kw = broadcast(w[c, kh, kw])     KH*KW registers
      for oh, for ow in chunks of U vectors of V lanes (then the tail):
        acc_u = init                                 (bias[c], fill scalar or out)
        for kh, kw:  acc_u = fma(row read of plane, wv_kh_kw, acc_u)
        out[n, c, oh, ow + u*V ...] = epilogue(acc_u)

Pools combine the taps with max / add instead of the FMA and read no weights.

Reads: stride 1 reads ``V`` contiguous elements per tap. A stride s > 1
reads ``s*V`` contiguous elements once per group of taps whose column
offsets round down to the same multiple of s, and each tap keeps every s-th
lane (``vector.shuffle``). For s = 2 on 8-lane vectors the kept lanes follow
the in-128-bit-lane order of AVX's ``vshufps`` (one instruction instead of a
shuffle and a cross-lane permute); the accumulator is put back in order once,
before the store. How a row is cut into chunks: :func:`.row_plan.row_plan`.
The scratch plane of a fused pad (and its prologue): :mod:`.row_plane`.
Without a fused pad the kernel reads the input directly; a row then ends in
whole vectors and one shorter vector (static sizes), and a strided read that
would run past the row's end is shortened.
"""
from __future__ import annotations

from onnx_mlir_py.passes.optimize.row_emit import Emit, emit_ops, f32_hex, ttype, vtype
from onnx_mlir_py.passes.optimize.row_plan import (UNROLL, Conv, bases, geometry, lane_sizes,
                                                   row_plan, wide)
from onnx_mlir_py.passes.optimize.row_plane import plane_copy, plane_init, prologue_splats

# s = 2, 8 lanes: output column held by each accumulator lane (and its own
# inverse): vshufps of two 8-lane vectors takes [0, 2, 8, 10, 4, 6, 12, 14]
_INLANE8 = [0, 1, 4, 5, 2, 3, 6, 7]


class _Body:
    """The loop body's emitter: reads, shuffles and chunks of output vectors."""

    def __init__(self, e: Emit, cv: Conv, vw: int, xt: str, st: str, tt: str, limit: int,
                 init_scalar: str | None):
        self.e, self.cv, self.vw = e, cv, vw
        self.xt, self.st, self.tt, self.limit = xt, st, tt, limit
        self.init_scalar = init_scalar
        self.bases = bases(cv)

    def splat(self, nm: str, scalar: str, sizes: list[int]) -> None:
        """``nm_<lanes>`` = ``scalar`` broadcast, for each vector length in ``sizes``."""
        e, vw = self.e, self.vw
        full = f"{nm}_{vw}"
        if vw in sizes:
            e(f"{full} = vector.broadcast {scalar} : f32 to {vtype(vw)}")
        for lanes in sizes:
            if lanes == vw:
                continue
            if vw in sizes:
                e(f"{nm}_{lanes} = vector.extract_strided_slice {full} {{offsets = [0], "
                  f"sizes = [{lanes}], strides = [1]}} : {vtype(vw)} to {vtype(lanes)}")
            else:
                e(f"{nm}_{lanes} = vector.broadcast {scalar} : f32 to {vtype(lanes)}")

    def read(self, row: str, col: str, length: int) -> str:
        if self.cv.pad:
            return self.e.val("x", f"vector.transfer_read %sp[{row}, {col}], %zero "
                                   f"{{in_bounds = [true]}} : {self.st}, {vtype(length)}")
        return self.e.val("x", f"vector.transfer_read %x[%n, %c, {row}, {col}], %zero "
                               f"{{in_bounds = [true]}} : {self.xt}, {vtype(length)}")

    def shuffle(self, v: str, length: int, idx: list[int]) -> str:
        return self.e.val("sh", f"vector.shuffle {v}, {v} [{', '.join(map(str, idx))}] "
                                f": {vtype(length)}, {vtype(length)}")

    def chunk(self, ow0: str, lanes: int, count: int, tin: str, static_ow0: int | None,
              last_lanes: int | None = None) -> str:
        """``count`` vectors of ``lanes`` output columns from ``ow0`` (the last
        one stores only ``last_lanes``); returns the updated output tensor."""
        e, cv, tt = self.e, self.cv, self.tt
        s1, d1 = cv.s[1], cv.d[1]
        inlane = s1 == 2 and lanes == 8
        cols, accs = [], []
        for u in range(count):
            col = e.add(ow0, u * lanes)
            cols.append(col)
            if self.init_scalar:
                accs.append(f"%iv_{lanes}")
            else:
                a = e.val("acc", f"vector.transfer_read {tin}[%n, %cc, %oh, {col}], %zero "
                                 f"{{in_bounds = [true]}} : {tt}, {vtype(lanes)}")
                accs.append(self.shuffle(a, lanes, _INLANE8) if inlane else a)
        xcols = [e.mul(col, s1) for col in cols]
        leaves: list[list[str]] = [[] for _ in range(count)]
        for i in range(cv.kh):
            row = f"%row{i}"
            reads: dict = {}
            for j in range(cv.kw):
                off = j * d1
                base, phase = off - off % s1, off % s1
                for u in range(count):
                    if (base, u) not in reads:
                        xcol = e.add(xcols[u], base)
                        length = lanes if s1 == 1 else s1 * lanes
                        if s1 > 1 and static_ow0 is not None and \
                                (static_ow0 + u * lanes) * s1 + base + length > self.limit:
                            length = max(self.bases[base]) + s1 * (lanes - 1) + 1
                        reads[(base, u)] = (self.read(row, xcol, length), length)
                    r, length = reads[(base, u)]
                    if s1 == 1:
                        v = r
                    else:
                        order = _INLANE8 if inlane else range(lanes)
                        v = self.shuffle(r, length, [phase + s1 * q for q in order])
                    if cv.combine == "max":
                        leaves[u].append(v)
                    else:
                        accs[u] = e.val("acc", _combine(cv, v, f"%wv{i}_{j}_{lanes}", accs[u],
                                                        lanes))
        for u in range(count if cv.combine == "max" else 0):
            # a balanced tree (max is exact in any order): a chain of K*K
            # dependent maxima was latency-bound
            vals = [accs[u]] + leaves[u]
            while len(vals) > 1:
                pairs = [e.val("acc", _combine(cv, a, "", b, lanes))
                         for a, b in zip(vals[0::2], vals[1::2])]
                vals = pairs + vals[len(pairs) * 2:]
            accs[u] = vals[0]
        cur = tin
        for u in range(count):
            val = self.shuffle(accs[u], lanes, _INLANE8) if inlane else accs[u]
            if cv.epilogue:
                val = emit_ops(e, cv.epilogue, cv.epi_result, val, "%ecv{}_" + str(lanes), lanes)
            keep = lanes
            if u == count - 1 and last_lanes is not None and last_lanes < lanes:
                keep = last_lanes
                val = e.val("part", f"vector.extract_strided_slice {val} {{offsets = [0], "
                                    f"sizes = [{keep}], strides = [1]}} : {vtype(lanes)} to "
                                    f"{vtype(keep)}")
            cur = e.val("t", f"vector.transfer_write {val}, {cur}[%n, %cc, %oh, {cols[u]}] "
                             f"{{in_bounds = [true]}} : {vtype(keep)}, {tt}")
        return cur


def _combine(cv: Conv, v: str, w: str, acc: str, lanes: int) -> str:
    if cv.combine == "fma":
        return f"vector.fma {v}, {w}, {acc} : {vtype(lanes)}"
    op = {"max": "arith.maximumf", "add": "arith.addf"}[cv.combine]
    return f"{op} {acc}, {v} : {vtype(lanes)}"


def kernel_function(name: str, cv: Conv, vw: int, blocks: int = 1) -> str:
    """``func.func private @name(x, w, out[, init | bias], captured...) -> out``."""
    n, c = cv.xs[:2]
    _, _, oh, ow = cv.os
    s0 = cv.s[0]
    d0 = cv.d[0]
    hp, limit = geometry(cv, vw)
    fused = bool(cv.pad)
    taps = [(i, j) for i in range(cv.kh) for j in range(cv.kw)]
    wt = ttype([c, cv.kh, cv.kw] if cv.combine == "fma" else [cv.kh, cv.kw])  # pools: the window
    ot = ttype(cv.os)
    xt = ttype(cv.xs)
    st = ttype([hp, limit])
    cb = c // blocks
    e = Emit()

    args = [f"%x: {xt}", f"%w: {wt}", f"%o: {ot}"]
    if cv.init == "scalar":
        args.append("%init: f32")
    elif cv.init == "bias":
        args.append(f"%bias: {ttype([c])}")
    args += [f"%e_cap{k}: f32" for k in range(cv.n_cap)]
    args += [f"%p_cap{k}: f32" for k in range(cv.n_pcap)]

    if blocks > 1:
        tt = ttype([n, cb, oh, ow])
        e(f"%res = scf.forall (%blk) in ({blocks}) shared_outs(%oo = %o) -> ({ot}) {{")
        e.ind += 1
        e(f"%cbase = arith.muli %blk, {e.idx(cb)} : index")
        e(f"%tile = tensor.extract_slice %oo[0, %cbase, 0, 0] [{n}, {cb}, {oh}, {ow}] [1, 1, 1, 1] "
          f": {ot} to {tt}")
        tile = "%tile"
    else:
        tt, tile = ot, "%o"
    carried = f"%t0 = {tile}"
    types = tt
    if fused:
        plane_init(e, cv, st, hp, limit, vw)
        carried += ", %s0 = %sf"
        types += f", {st}"
    e(f"%cres:{2 if fused else 1} = scf.for %cc = {e.idx(0)} to {e.idx(cb)} step {e.idx(1)} "
      f"iter_args({carried}) -> ({types}) {{")
    e.ind += 1
    e(f"%c = arith.addi {'%cbase' if blocks > 1 else e.idx(0)}, %cc : index")
    for i, j in taps if cv.combine == "fma" else ():
        e(f"%ws{i}_{j} = tensor.extract %w[%c, {e.idx(i)}, {e.idx(j)}] : {wt}")
    init_scalar = None
    if cv.init == "bias":
        e(f"%binit = tensor.extract %bias[%c] : {ttype([c])}")
        init_scalar = "%binit"
    elif cv.init == "scalar":
        init_scalar = "%init"
    body = _Body(e, cv, vw, xt, st, tt, limit, init_scalar)
    sizes = [vw] if wide(cv) else lane_sizes(ow, vw)
    for i, j in taps if cv.combine == "fma" else ():
        body.splat(f"%wv{i}_{j}", f"%ws{i}_{j}", sizes)
    if init_scalar:
        body.splat("%iv", init_scalar, sizes)
    for k in range(cv.n_cap):
        body.splat(f"%ecv{k}", f"%e_cap{k}", sizes)
    prologue_splats(e, cv, vw)

    carried = "%t1 = %t0" + (", %s1 = %s0" if fused else "")
    e(f"%nres:{2 if fused else 1} = scf.for %n = {e.idx(0)} to {e.idx(n)} step {e.idx(1)} "
      f"iter_args({carried}) -> ({types}) {{")
    e.ind += 1
    if fused:
        plane_copy(e, cv, xt, st, vw)

    e(f"%hres = scf.for %oh = {e.idx(0)} to {e.idx(oh)} step {e.idx(1)} "
      f"iter_args(%t2 = %t1) -> ({tt}) {{")
    e.ind += 1
    ohs = e.mul("%oh", s0)
    for i in range(cv.kh):
        e(f"%row{i} = arith.addi {ohs}, {e.idx(i * d0)} : index")
    step = UNROLL * vw
    main, chunks = row_plan(cv, vw)
    cur = "%t2"
    if main:
        e(f"%wres = scf.for %owb = {e.idx(0)} to {e.idx(main * step)} step {e.idx(step)} "
          f"iter_args(%t3 = %t2) -> ({tt}) {{")
        e.ind += 1
        r = body.chunk("%owb", vw, UNROLL, "%t3", None)
        e(f"scf.yield {r} : {tt}")
        e.ind -= 1
        e("}")
        cur = "%wres"
    for pos, lanes, cnt, keep in chunks:
        cur = body.chunk(e.idx(pos), lanes, cnt, cur, pos, keep)
    e(f"scf.yield {cur} : {tt}")
    e.ind -= 1
    e("}")
    e(f"scf.yield %hres, %sp : {types}" if fused else f"scf.yield %hres : {types}")
    e.ind -= 1
    e("}")
    e(f"scf.yield {', '.join(f'%nres#{k}' for k in range(2 if fused else 1))} : {types}")
    e.ind -= 1
    e("}")
    if blocks > 1:
        e("scf.forall.in_parallel {")
        e.ind += 1
        e(f"tensor.parallel_insert_slice %cres#0 into %oo[0, %cbase, 0, 0] [{n}, {cb}, {oh}, {ow}] "
          f"[1, 1, 1, 1] : {tt} into {ot}")
        e.ind -= 1
        e("}")
        e.ind -= 1
        e("}")
        e(f"return %res : {ot}")
    else:
        e(f"return %cres#0 : {ot}")
    consts = [f"    {nm} = arith.constant {v} : index" for v, nm in sorted(e.consts.items())]
    consts.append("    %zero = arith.constant 0.0 : f32")
    consts.append(f"    %padv = arith.constant {f32_hex(cv.pad_value)} : f32")
    head = f"  func.func private @{name}({', '.join(args)}) -> {ot} {{"
    return "\n".join([head] + consts + e.lines + ["  }"])
