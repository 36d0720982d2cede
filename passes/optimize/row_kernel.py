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

from onnx_mlir_py.passes.optimize.kernel_emit import F32, Elem, Emitter, Value, tensor, vector
from onnx_mlir_py.passes.optimize.row_emit import emit_ops
from onnx_mlir_py.passes.optimize.row_plan import (UNROLL, Conv, bases, geometry, lane_sizes,
                                                   row_plan, wide)
from onnx_mlir_py.passes.optimize.row_plane import Prologue, plane_copy, plane_init

# s = 2, 8 lanes: output column held by each accumulator lane (and its own
# inverse): vshufps of two 8-lane vectors takes [0, 2, 8, 10, 4, 6, 12, 14]
_INLANE8 = [0, 1, 4, 5, 2, 3, 6, 7]


def splat(e: Emitter, scalar: Value, sizes: list[int], vw: int, base: str) -> dict[int, Value]:
    """``scalar`` broadcast to each vector length in ``sizes`` (the shorter
    ones sliced off the full vector when there is one)."""
    out = {}
    if vw in sizes:
        out[vw] = e.broadcast(scalar, vector(vw), base=base)
    for lanes in sizes:
        if lanes != vw:
            out[lanes] = e.prefix(out[vw], lanes, base=base) if vw in sizes else \
                e.broadcast(scalar, vector(lanes), base=base)
    return out


class _Body:
    """The loop body's emitter: reads, shuffles and chunks of output vectors."""

    def __init__(self, e: Emitter, cv: Conv, limit: int, src: Value, at: list[Value],
                 out_at: list[Value], rows: list[Value], wv: dict, init: dict | None,
                 ecv: list[dict], zero: Value, quant=None):
        """``src[at + (row, col)]``: the rows read (the plane or x[n, c]);
        ``out_at``: the output's leading indices; ``wv[(i, j)][lanes]``,
        ``init[lanes]``, ``ecv[k][lanes]``: the splat weights, accumulator
        start (None: the output's values) and epilogue scalars; ``quant``:
        the channel's values of an 8-bit output's epilogue (``cv.quant``)."""
        self.e, self.cv, self.limit, self.quant = e, cv, limit, quant
        self.src, self.at, self.out_at, self.rows = src, at, out_at, rows
        self.wv, self.init, self.ecv, self.zero = wv, init, ecv, zero
        self.bases = bases(cv)

    def read(self, row: Value, col, length: int) -> Value:
        return self.e.read(self.src, self.at + [row, col], self.zero, vector(length))

    def shuffle(self, v: Value, idx: list[int]) -> Value:
        return self.e.shuffle(v, v, idx)

    def chunk(self, ow0, lanes: int, count: int, tin: Value, static_ow0: int | None,
              last_lanes: int | None = None) -> Value:
        """``count`` vectors of ``lanes`` output columns from ``ow0`` (the last
        one stores only ``last_lanes``); returns the updated output tensor."""
        e, cv = self.e, self.cv
        s1, d1 = cv.s[1], cv.d[1]
        inlane = s1 == 2 and lanes == 8
        cols, accs = [], []
        for u in range(count):
            col = e.add(ow0, u * lanes)
            cols.append(col)
            if self.init is not None:
                accs.append(self.init[lanes])
            else:
                a = e.read(tin, self.out_at + [col], self.zero, vector(lanes), base="acc")
                accs.append(self.shuffle(a, _INLANE8) if inlane else a)
        xcols = [e.mul(col, s1) for col in cols]
        leaves: list[list[Value]] = [[] for _ in range(count)]
        for i in range(cv.kh):
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
                        reads[(base, u)] = self.read(self.rows[i], xcol, length)
                    r = reads[(base, u)]
                    if s1 == 1:
                        v = r
                    else:
                        order = _INLANE8 if inlane else range(lanes)
                        v = self.shuffle(r, [phase + s1 * q for q in order])
                    if cv.combine == "max":
                        leaves[u].append(v)
                    else:
                        accs[u] = _combine(e, cv, v, self.wv.get((i, j), {}).get(lanes), accs[u])
        for u in range(count if cv.combine == "max" else 0):
            # a balanced tree (max is exact in any order): a chain of K*K
            # dependent maxima was latency-bound
            vals = [accs[u]] + leaves[u]
            while len(vals) > 1:
                pairs = [_combine(e, cv, a, None, b) for a, b in zip(vals[0::2], vals[1::2])]
                vals = pairs + vals[len(pairs) * 2:]
            accs[u] = vals[0]
        cur = tin
        for u in range(count):
            val = self.shuffle(accs[u], _INLANE8) if inlane else accs[u]
            if cv.epilogue:
                val = emit_ops(e, cv.epilogue, cv.epi_result, val, [c[lanes] for c in self.ecv])
            elif cv.quant is not None:
                val = cv.quant.epilogue(e, self.quant, val)
            if u == count - 1 and last_lanes is not None and last_lanes < lanes:
                val = e.prefix(val, last_lanes)
            cur = e.write(val, cur, self.out_at + [cols[u]])
        return cur


def _combine(e: Emitter, cv: Conv, v: Value, w: Value | None, acc: Value) -> Value:
    if cv.combine == "fma":
        return e.fma(v, w, acc)
    return e.binary({"max": "arith.maximumf", "add": "arith.addf"}[cv.combine], acc, v)


def kernel_function(name: str, cv: Conv, vw: int, blocks: int = 1) -> str:
    """``func.func private @name(x, w, out[, init | bias], captured...) -> out``."""
    n, c = cv.xs[:2]
    _, _, oh, ow = cv.os
    s0 = cv.s[0]
    d0 = cv.d[0]
    hp, limit = geometry(cv, vw)
    fused = bool(cv.pad)
    taps = [(i, j) for i in range(cv.kh) for j in range(cv.kw)]
    cb = c // blocks
    e = Emitter()
    zero, padv = e.const("0.0", F32), e.f32(cv.pad_value)
    q = cv.quant
    ot = tensor(cv.os, q.out_elem if q else Elem.F32)
    x = e.param("x", tensor(cv.xs, q.in_elem if q else Elem.F32))
    w = e.param("w", tensor([c, cv.kh, cv.kw] if cv.combine == "fma" else [cv.kh, cv.kw]))
    o = e.param("o", ot)                    # pools: w is the window
    params = [x, w, o]
    if cv.init == "scalar":
        params.append(e.param("init", F32))
    elif cv.init == "bias":
        params.append(e.param("bias", tensor([c])))
    ecaps = [e.param("ecap", F32) for _ in range(cv.n_cap)]
    pcaps = [e.param("pcap", F32) for _ in range(cv.n_pcap)]
    params += ecaps + pcaps
    qcaps = q.params(e) if q else []
    params += qcaps
    if n is None:       # a dynamic batch: 8-bit kernels loop over it themselves
        n = e.dim(x, 0)

    if blocks > 1:
        blk, oo, res = e.forall(blocks, o)
        cbase = e.mul(blk, e.index(cb))
        tile = e.extract_slice(oo, [0, cbase, 0, 0], [n, cb, oh, ow], base="tile")
    else:
        cbase, tile = e.index(0), o
    carried = [tile]
    if fused:
        carried.append(plane_init(e, cv, hp, limit, vw, padv))
    cc, carried, cres = e.loop(e.index(0), e.index(cb), e.index(1), carried)
    ch = e.add(cbase, cc)
    qch = q.channel(e, qcaps, ch, vw) if q else None
    ws = {(i, j): e.extract(w, [ch, i, j]) for i, j in (taps if cv.combine == "fma" else ())}
    init_scalar = None
    if cv.init == "bias":
        init_scalar = e.extract(params[3], [ch])
    elif cv.init == "scalar":
        init_scalar = params[3]
    sizes = [vw] if wide(cv) else lane_sizes(ow, vw)
    wv = {t: splat(e, ws[t], sizes, vw, "wv") for t in ws}
    init = splat(e, init_scalar, sizes, vw, "iv") if init_scalar is not None else None
    ecv = [splat(e, p, sizes, vw, "ecv") for p in ecaps]
    pro = Prologue(e, cv, vw, pcaps, padv, qch)

    nn, carried, nres = e.loop(e.index(0), n, e.index(1), carried)
    plane = plane_copy(e, cv, x, nn, ch, carried[1], vw, pro, padv) if fused else None

    ohv, (t2,), (hres,) = e.loop(e.index(0), e.index(oh), e.index(1), carried[:1])
    ohs = e.mul(ohv, s0)
    rows = [e.add(ohs, e.index(i * d0)) for i in range(cv.kh)]
    src, at = (plane, []) if fused else (x, [nn, ch])
    body = _Body(e, cv, limit, src, at, [nn, cc, ohv], rows, wv, init, ecv, zero, qch)
    step = UNROLL * vw
    main, chunks = row_plan(cv, vw)
    cur = t2
    if main:
        owb, (t3,), (wres,) = e.loop(e.index(0), e.index(main * step), e.index(step), [cur])
        e.end([body.chunk(owb, vw, UNROLL, t3, None)])
        cur = wres
    for pos, lanes, cnt, keep in chunks:
        cur = body.chunk(e.index(pos), lanes, cnt, cur, pos, keep)
    e.end([cur])
    e.end([hres] + ([plane] if fused else []))
    e.end(nres)
    if blocks > 1:
        e.end_forall(cres[0], oo, [0, cbase, 0, 0], [n, cb, oh, ow])
        e(f"return {res} : {ot}")
    else:
        e(f"return {cres[0]} : {ot}")
    return e.function(name, params, ot)
