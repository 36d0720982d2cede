"""The row kernel of 2-D window ops (depthwise convs, :mod:`.depthwise`;
pools, :mod:`.pool`), written in the vector dialect on tensors as a private
function (inlined, like the packed matmul of :mod:`.matmul_text`):

    for c (blocks of an scf.forall when threaded), n:
      plane = zero-padded x[n, c]            (scratch [Hp, Wp'], border stays 0;
                                              a large one row by row, in the oh loop)
      wv_kh_kw = broadcast(w[c, kh, kw])     KH*KW registers
      for oh (in groups: row_group), for ow in chunks of U vectors of V lanes (then the tail):
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
                                                   row_plan, split, wide)
from onnx_mlir_py.target import GENERIC, VECTORS
from onnx_mlir_py.passes.optimize.row_plane import Prologue, plane_copy, plane_init, rows_needed

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
                 out_at: list[Value], wv: dict, init: dict | None,
                 ecv: list[dict], zero: Value, quant=None):
        """``src[at + (row, col)]``: the rows read (the plane or x[n, c]);
        ``out_at``: the output's leading indices (before the row);
        ``wv[(i, j)][lanes]``, ``init[lanes]``, ``ecv[k][lanes]``: the splat
        weights, accumulator start (None: the output's values) and epilogue
        scalars; ``quant``: the channel's values of an 8-bit output's
        epilogue (``cv.quant``). :meth:`group` sets the output rows."""
        self.e, self.cv, self.limit, self.quant = e, cv, limit, quant
        self.src, self.at, self.out_at = src, at, out_at
        self.wv, self.init, self.ecv, self.zero = wv, init, ecv, zero
        self.bases = bases(cv)
        self.split = split(cv)      # tap j reads half j % 2 of the row, from column j // 2

    def group(self, oh0: Value, count: int) -> None:
        """The next chunks cover output rows ``oh0 .. oh0 + count - 1``."""
        e, cv = self.e, self.cv
        self.outs = [e.add(oh0, g) for g in range(count)]
        ohs = e.mul(oh0, cv.s[0])
        offs = {g * cv.s[0] + i * cv.d[0] for g in range(count) for i in range(cv.kh)}
        self.rows = {off: e.add(ohs, e.index(off)) for off in sorted(offs)}

    def read(self, row: Value, col, length: int) -> Value:
        return self.e.read(self.src, self.at + [row, col], self.zero, vector(length))

    def shuffle(self, v: Value, idx: list[int]) -> Value:
        return self.e.shuffle(v, v, idx)

    def strided(self, reads: dict, row: int, base: int, phase: int, u: int, xcol0: Value,
                lanes: int, static_ow0: int | None, inlane: bool) -> Value:
        """The ``lanes`` input columns of a tap at column offset ``base +
        phase`` (stride s: every s-th of s*lanes read once per ``(row, base,
        u)`` in ``reads``) for the output vector ``u`` whose columns start at
        ``xcol0 / s``."""
        s1 = self.cv.s[1]
        if (row, base, u) not in reads:
            xcol = self.e.add(xcol0, base)
            length = lanes if s1 == 1 else s1 * lanes
            if s1 > 1 and static_ow0 is not None and \
                    (static_ow0 + u * lanes) * s1 + base + length > self.limit:
                length = max(self.bases[base]) + s1 * (lanes - 1) + 1
            reads[row, base, u] = self.read(self.rows[row], xcol, length)
        r = reads[row, base, u]
        if s1 == 1:
            return r
        order = _INLANE8 if inlane else range(lanes)
        return self.shuffle(r, [phase + s1 * q for q in order])

    def chunk(self, ow0, lanes: int, count: int, tin: Value, static_ow0: int | None,
              last_lanes: int | None = None) -> Value:
        """``count`` vectors of ``lanes`` output columns from ``ow0`` (the last
        one stores only ``last_lanes``) in each row of the :meth:`group`;
        returns the updated output tensor."""
        e, cv = self.e, self.cv
        s1, d1 = cv.s[1], cv.d[1]
        inlane = s1 == 2 and lanes == 8 and not self.split
        accs: dict = {}
        cols = [e.add(ow0, u * lanes) for u in range(count)]
        slots = [(g, u) for g in range(len(self.outs)) for u in range(count)]
        for g, u in slots:
            if self.init is not None:
                accs[g, u] = self.init[lanes]
            else:
                a = e.read(tin, self.out_at + [self.outs[g], cols[u]], self.zero, vector(lanes),
                           base="acc")
                accs[g, u] = self.shuffle(a, _INLANE8) if inlane else a
        xcols = [e.mul(col, s1) for col in cols]
        leaves: dict = {k: [] for k in slots}
        reads: dict = {}      # rows shared by the group's output rows are read once
        for i in range(cv.kh):
            for j in range(cv.kw):
                off = j * d1
                base, phase = off - off % s1, off % s1
                for g, u in slots:
                    row = g * cv.s[0] + i * cv.d[0]
                    if self.split:
                        col = e.add(cols[u], j % 2 * (self.limit // 2) + j // 2)
                        v = self.read(self.rows[row], col, lanes)
                    else:
                        v = self.strided(reads, row, base, phase, u, xcols[u], lanes, static_ow0,
                                         inlane)
                    if cv.combine == "max":
                        leaves[g, u].append(v)
                    else:
                        accs[g, u] = _combine(e, cv, v, self.wv.get((i, j), {}).get(lanes),
                                              accs[g, u])
        for k in (slots if cv.combine == "max" else ()):
            # a balanced tree (max is exact in any order): a chain of K*K
            # dependent maxima was latency-bound
            accs[k] = max_tree(e, [accs[k]] + leaves[k])
        cur = tin
        for g, u in slots:
            val = self.shuffle(accs[g, u], _INLANE8) if inlane else accs[g, u]
            if cv.epilogue:
                val = emit_ops(e, cv.epilogue, cv.epi_result, val, [c[lanes] for c in self.ecv])
            part = u == count - 1 and last_lanes is not None and last_lanes < lanes
            if cv.quant is not None and not cv.epilogue:
                # whole vectors (wide) but the row's last prefix are one
                # unmasked store each: the magic-number rounding (MAGIC_ROUND)
                val = cv.quant.epilogue(e, self.quant, val, whole=wide(cv) and not part)
            if part:
                val = e.prefix(val, last_lanes)
            cur = e.write(val, cur, self.out_at + [self.outs[g], cols[u]])
        return cur


def max_tree(e: Emitter, vals: list[Value]) -> Value:
    """The maximum of the f32 vectors ``vals``, NaN when any lane of them is
    NaN (``arith.maximumf``'s NaN rule), as a balanced tree of
    ``a > b ? a : b`` (one vmaxps each; a chain of K*K dependent maxima was
    latency-bound) and one unordered compare per pair of values for the NaN
    lanes. Each ``arith.maximumf`` was a compare, an unordered compare, a
    mask or and a blend (Zen 4, 1 thread, thread CPU, min / median, 150
    runs, bit-identical: Relu -> 3x3/2 MaxPool 64x112x112, ResNet's, 0.291 /
    0.347 -> 0.223 / 0.256 ms). Signed zeros: either zero."""
    nan = [e.cmpf("uno", a, b) for a, b in zip(vals[0::2], vals[1::2])]
    if len(vals) % 2:
        nan.append(e.cmpf("uno", vals[-1], vals[-1]))
    while len(vals) > 1:
        pairs = [e.select(e.cmpf("ogt", a, b), a, b) for a, b in zip(vals[0::2], vals[1::2])]
        vals = pairs + vals[len(pairs) * 2:]
    while len(nan) > 1:
        ors = [e.binary("arith.ori", a, b, base="nan") for a, b in zip(nan[0::2], nan[1::2])]
        nan = ors + nan[len(ors) * 2:]
    return e.select(nan[0], e.splat_const("0x7FC00000", vals[0].type), vals[0])


def _combine(e: Emitter, cv: Conv, v: Value, w: Value | None, acc: Value) -> Value:
    if cv.combine == "fma":
        return e.fma(v, w, acc)
    return e.binary({"max": "arith.maximumf", "add": "arith.addf"}[cv.combine], acc, v)


def lane_width(cv: Conv, vw: int) -> int:
    """Lanes of the kernel's vectors: the target's ``vw``, halved (down to 8)
    while an output row fits in half a vector. A 7-wide map (MobileNetV3's
    last depthwise convs) used 7 of 16 lanes; an 8-lane FMA does the same
    work, and on Zen 4 (a 512-bit FMA takes both 256-bit pipes) twice as
    many of them issue per cycle."""
    while vw > 8 and cv.os[3] <= vw // 2:
        vw //= 2
    return vw


def row_group(cv: Conv, vw: int, target_vw: int) -> int:
    """Output rows computed together: a row of fewer than UNROLL (target)
    vectors alone had too few accumulators to hide the FMA latency (one
    dependent chain of KH*KW FMAs per vector of a 14-wide row); rows in a
    group also share their input rows' reads; at least :func:`shared_rows`
    rows (those of whole UNROLL-vector chunks: just that)."""
    main, chunks = row_plan(cv, vw)
    if main:
        return shared_rows(cv, target_vw)
    per_row = sum(cnt for _pos, _lanes, cnt, _keep in chunks)
    return max(1, min(cv.os[2], UNROLL * target_vw // vw // per_row),
               shared_rows(cv, target_vw, per_row))


# A fused pad's scratch plane of at least this many bytes (more than Zen 4's
# 32 KiB L1) is filled row by row, each input row just before the first
# output rows that read it (:func:`.row_plane.rows_needed`): the rows read
# were just written (in L1) and the input's loads overlap the FMAs. Smaller
# planes stay in L1 anyway and are copied whole, in one loop of static
# bounds (row by row, a 192x28x28 depthwise conv was 1.3x slower). Measured
# on Zen 4 (1 thread, thread CPU time, MobileNetV2's Clip -> depthwise 3x3 ->
# Clip), with :func:`shared_rows`: 32x112x112 0.155 -> 0.139 ms, 96x112x112
# stride 2 0.275 -> 0.249 ms (min).
INTERLEAVE_MIN_PLANE = 32 * 1024
# Groups of output rows whose input rows an 8-bit conv's kernel copies ahead
# of the group it computes (:func:`copy_ahead`).
COPY_AHEAD = 1


def copy_ahead(cv: Conv) -> int:
    """Groups of output rows copied ahead (:data:`COPY_AHEAD`) by an 8-bit
    depthwise conv (``cv.quant``): the rows a group reads were written one
    group earlier. Read just after their copy, a tap whose columns straddle
    two of the copy's vector stores (3x3: one of the two taps reading a
    half of a split row is one column off the stores) waited for the stores
    to reach L1 (no store-to-load forwarding: perf's hottest instruction).
    Zen 4, 1 thread, thread CPU, min, bit-identical: QDQ 1x1 conv -> ReLU6
    -> depthwise 96x112x112/2 block 0.427 -> 0.370 ms, MobileNetV2 QDQ
    2.982 -> 2.789 ms. Not f32 convs: 1.01-1.04x slower (96x112x112/2,
    64x112x112/2, 32x112x112 Relu -> depthwise -> Relu)."""
    return COPY_AHEAD if cv.quant is not None and cv.combine == "fma" else 0

# Output rows of UNROLL-vector chunks computed together (their input rows
# read once): at most this many, with REG_RESERVE vector registers left for
# the reads besides the accumulators and the splat weights.
MAX_SHARED_ROWS = 3
REG_RESERVE = 4


def shared_rows(cv: Conv, target_vw: int, per_row: int = UNROLL) -> int:
    """Output rows computed together so that each input row their windows
    share is read once for all of them (a 3x3 stride-1 conv: 5 input rows
    for 3 output rows instead of 9, the reads as many as the FMAs when
    alone), with ``per_row`` accumulators per row (UNROLL for rows of whole
    UNROLL-vector chunks): as many as the vector registers (the target's,
    by its vector width) hold beside the KH*KW weights and REG_RESERVE
    reads, up to MAX_SHARED_ROWS. Measured on Zen 4 (1 thread, thread CPU
    time, the MobileNetV2 block Clip -> depthwise 3x3 -> Clip, min):
    32x112x112 (the plane copied row by row) 1 -> 2 -> 3 rows 0.180 ->
    0.144 -> 0.139 ms; 144x56x56 (4 vectors a row) 1 -> 3 rows 0.215 ->
    0.176; 192x28x28 (2 vectors) 2 -> 3 rows 0.0674 -> 0.0667.
    1 for pools and strided rows (stride 2 shares 5 input rows of 6:
    96x112x112 stride 2, 3 rows / 1 row, min 0.999)."""
    if cv.combine != "fma" or cv.s[0] != 1 or cv.kh < 2:
        return 1
    regs = {w: r for w, r in VECTORS.values()}.get(target_vw, GENERIC[1])
    fit = (regs - cv.kh * cv.kw - REG_RESERVE) // per_row
    return max(1, min(MAX_SHARED_ROWS, cv.os[2], fit))


def kernel_function(name: str, cv: Conv, vw: int, blocks: int = 1) -> str:
    """``func.func private @name(x, w, out[, init | bias], captured...) -> out``
    on vectors of :func:`lane_width` lanes (``vw``: the target's)."""
    target_vw, vw = vw, lane_width(cv, vw)
    n, c = cv.xs[:2]
    _, _, oh, ow = cv.os
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
    # the plane's copy: row by row, just before the rows that read them,
    # when the plane exceeds L1 (:data:`INTERLEAVE_MIN_PLANE`), else whole
    interleave = fused and hp * limit * 4 >= INTERLEAVE_MIN_PLANE
    src = plane_copy(e, cv, x, nn, ch, carried[1], vw, pro, padv) \
        if fused and not interleave else x
    at = [] if fused else [nn, ch]
    body = _Body(e, cv, limit, src, at, [nn, cc], wv, init, ecv, zero, qch)
    step = UNROLL * vw
    main, chunks = row_plan(cv, vw)
    group = row_group(cv, vw, target_vw)

    def rows(oh0, count: int, state: list[Value]) -> list[Value]:
        """Output rows oh0 .. oh0 + count - 1; ``state``: the output, and
        with a fused pad the plane and the input rows copied into it so far
        (the rows these output rows read are copied first)."""
        cur = state[0]
        if interleave:
            hi = rows_needed(e, cv, oh0, count * (1 + copy_ahead(cv)))
            body.src = plane_copy(e, cv, x, nn, ch, state[1], vw, pro, padv, state[2], hi)
        body.group(e.ix(oh0), count)
        if main:
            owb, (t3,), (wres,) = e.loop(e.index(0), e.index(main * step), e.index(step), [cur])
            e.end([body.chunk(owb, vw, UNROLL, t3, None)])
            cur = wres
        for pos, lanes, cnt, keep in chunks:
            cur = body.chunk(e.index(pos), lanes, cnt, cur, pos, keep)
        return [cur, body.src, e.ix(hi)] if interleave else [cur]

    state = carried[:1] + ([carried[1], e.index(0)] if interleave else [])
    ohv, st2, hres = e.loop(e.index(0), e.index(oh - oh % group), e.index(group), state)
    e.end(rows(ohv, group, st2))
    if oh % group:      # the rows left, one static group
        hres = rows(oh - oh % group, oh % group, hres)
    e.end(hres[:2] if interleave else hres[:1] + ([src] if fused else []))
    e.end(nres)
    if blocks > 1:
        e.end_forall(cres[0], oo, [0, cbase, 0, 0], [n, cb, oh, ow])
        e(f"return {res} : {ot}")
    else:
        e(f"return {cres[0]} : {ot}")
    return e.function(name, params, ot)
