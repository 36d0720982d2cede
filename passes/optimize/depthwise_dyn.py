"""The row kernel of depthwise convs with dynamic H/W (the plan's ``depthwise_dyn``,
matched in :mod:`.pool_dyn`): the static kernel's scheme (:mod:`.row_kernel`)
with run-time rows and widths.

    for c (blocks of an scf.forall when threaded), per image:
      plane = zero-padded x[c]        (per task: a scratch [Hp, Wsc] zeroed once,
                                       each input row copied just before the first
                                       output rows that read it)
      wv_kh_kw = broadcast(w[c, kh, kw])
      n = 1 if OW <= V else WIDE      (vectors of a chunk)
      for oh0 in groups of R[n] rows (the last group moved back to end at OH-1):
        for ow0 in chunks of n vectors:
          acc = bias[c] / fill; for kh, kw: acc = fma(plane row read, wv_kh_kw, acc)
          out[c, oh, ow ...] = epilogue(acc)      (masked to the columns before OW)

The Conv's zero ``tensor.pad`` (static pads) is fused: the input is copied
into the interior of the scratch, whose border the copies never write (the
plane is zeroed once per task). The scratch is wide enough for whole chunks
and high enough for a whole group, so every tap is one unmasked read; each
store is masked to the columns before OW, and to none for a row past OH (a
map of fewer rows than a group). A group moved back computes some rows
again (the same values). Stride 2 (dilation 1): the copy splits each row
into its even and odd padded columns (:func:`.row_plan.split`'s layout),
each tap one contiguous read of a half. The rows per group are
:func:`tile`'s, from the Target's vector registers and FMA pipes x latency;
two chunk widths (1 and WIDE vectors) keep the kernel's text small: with
chunks of 1, 2 and 4 vectors, each with its own row remainders, EfficientNet-B0's
16 kernels took the compile from 38 to 165 s.

Before, each chunk was one accumulator of K*K dependent FMAs, a stride-2 tap
a read of 2V-1 columns (an odd length: split into 16+8+4+2+1-lane loads and
inserts) and a shuffle, and the pad a separate memset + copy of the tensor
(EfficientNet-B0 with dynamic N/H/W at 1x3x224x224, Emerald Rapids, 1 thread,
the sum of the per-node minima over 40-60 runs: its 16 depthwise convs with
their SiLU and pads 6.6 -> 3.4 ms, the static build's convs and SiLUs 2.9;
2 threads 5.2 -> 2.3, static 1.5).
"""
from __future__ import annotations

from onnx_mlir_py.passes.optimize.kernel_emit import F32, Emitter, Value, tensor, vector
from onnx_mlir_py.passes.optimize.row_kernel import MAX_SHARED_ROWS, REG_RESERVE
from onnx_mlir_py.passes.optimize.row_plan import Conv, channel_blocks
from onnx_mlir_py.passes.optimize.row_plane import rows_needed
from onnx_mlir_py.target import Target


def takes(s, d) -> bool:
    """Strides / dilations this kernel computes (others: :mod:`.pool_dyn`'s
    strided-read kernel): column stride 1, or 2 with dilation 1 (the split plane)."""
    return s[1] == 1 or (s[1] == 2 and d[1] == 1)


# vectors per row of a chunk of a map wider than one vector
WIDE = 2


def tile(kh: int, kw: int, s, target: Target) -> dict[int, int]:
    """Output rows computed together by vectors per row: ``{1: rows}`` for
    maps of one vector's width, ``{WIDE: rows}`` for wider ones (in chunks
    of WIDE vectors). Enough accumulators to keep the FMA pipes busy
    (pipes x latency: one row of one vector was a chain of K*K dependent
    FMAs); at stride 1 a wide map's group is at least as many rows as the
    registers hold beside the K*K weights and REG_RESERVE reads (up to
    MAX_SHARED_ROWS: each input row read once for the group,
    :func:`.row_kernel.shared_rows`)."""
    accs = target.fma_pipes * target.fma_latency
    free = target.num_registers - kh * kw - REG_RESERVE
    shared = max(1, min(MAX_SHARED_ROWS, free // WIDE)) if s[0] == 1 else 1
    return {1: accs, WIDE: max(shared, -(-accs // WIDE))}


def plan(op, target: Target):
    """The kernel plan's ``(tile, threaded, reason)`` of a depthwise conv
    this kernel takes (:func:`.pool_dyn.depthwise_signature`, :func:`takes`); else None."""
    from onnx_mlir_py.passes.optimize.pool_dyn import depthwise_signature
    sig = depthwise_signature(op)
    if sig is None or not takes(sig[3], sig[4]):
        return None
    xs, ws, _os, s, _d = sig
    g = tile(ws[1], ws[2], s, target)
    return (f"{g[1]}x1 / {g[WIDE]}x{WIDE} rows x vec", xs[1] > 1,
            "depthwise f32 with dynamic H/W: the pad a scratch plane, row groups, channels split")


class _Kernel:
    """The emitter of one kernel: its parameters, sizes and per-channel values."""

    def __init__(self, e: Emitter, xs, os_, kh: int, kw: int, s, d, pad, lanes: int,
                 bias: bool):
        self.e, self.kh, self.kw, self.s, self.d, self.pad, self.V = e, kh, kw, s, d, pad, lanes
        self.split = s[1] == 2
        c = xs[1]
        self.x = e.param("x", tensor([1] + list(xs[1:])))
        self.w = e.param("win", tensor([c, kh, kw]))
        self.dst = e.param("dst", tensor([1] + list(os_[1:])))
        self.init = e.param("init", tensor([c]) if bias else F32)
        self.h, self.wd = e.dim(self.x, 2), e.dim(self.x, 3)
        self.oh, self.ow = e.dim(self.dst, 2), e.dim(self.dst, 3)
        self.zero = e.const("0.0", F32)
        pt, pl, pb, pr = pad
        self.hp = e.add(self.h, pt + pb)
        self.half, self.wsc = self._width(e.add(self.wd, pl + pr))
        # rows_needed's view of the conv: its run-time H
        self.cv = Conv((1, c, self.h, None), pad, kh, kw, (1, c, None, None), s, d, "bias")

    def vecs(self, n: Value) -> Value:
        """``n`` rounded up to whole vectors."""
        return self.e.mul(self.e.cdiv(n, self.V), self.V)

    def chunks(self, n: Value) -> Value:
        """``n`` rounded up to whole chunks of WIDE vectors."""
        step = WIDE * self.V
        return self.e.mul(self.e.cdiv(n, step), step)

    def _width(self, wp: Value) -> tuple[Value | None, Value]:
        """(half width of a split row, scratch width): room for the padded
        row, the copies' whole vectors and the last output vector's taps."""
        e, V, pl = self.e, self.V, self.pad[1]
        if self.split:
            copies = e.add(e.mul(e.cdiv(self.wd, 2 * V), V), (pl + 1) // 2)
            taps = e.add(self.chunks(self.ow), (self.kw - 1) // 2)
            half = e.iop("maxui", e.iop("maxui", e.cdiv(wp, 2), copies), taps)
            return half, self.vecs(e.mul(half, 2))
        copies = e.add(self.vecs(self.wd), pl)
        taps = e.add(self.chunks(self.ow), (self.kw - 1) * self.d[1])
        return None, self.vecs(e.iop("maxui", e.iop("maxui", wp, copies), taps))

    def zeroed_plane(self, group: int) -> Value:
        """The scratch plane, every element 0 (the border the copies never
        write), with the rows a ``group`` of output rows from row 0 reads
        (more than the padded image's when OH is smaller than the group)."""
        e, V = self.e, self.V
        zv = e.broadcast(self.zero, vector(V), base="zv")
        hp = e.iop("maxui", self.hp, (group - 1) * self.s[0] + (self.kh - 1) * self.d[0] + 1)
        r, (p,), (res,) = e.loop(e.index(0), hp, e.index(1), [e.empty([hp, self.wsc])])
        q, (p2,), (row,) = e.loop(e.index(0), self.wsc, e.index(V), [p])
        e.end([e.write(zv, p2, [r, q], base="zf")])
        e.end([row])
        return res

    def copy_rows(self, ch: Value, plane: Value, lo: Value, hi: Value) -> Value:
        """``plane`` with input rows [lo, hi) of channel ``ch`` in its interior
        (whole vectors: a row's last read is masked, its zeros land on the border)."""
        e, V = self.e, self.V
        pt, pl = self.pad[:2]
        step = 2 * V if self.split else V
        r, (p,), (res,) = e.loop(lo, hi, e.index(1), [plane])
        rr = e.add(r, pt)
        col, (p2,), (row,) = e.loop(e.index(0), self.wd, e.index(step), [p])
        a = self._read_x(ch, r, col)
        if not self.split:
            p2 = e.write(a, p2, [rr, e.add(col, pl)], base="sc")
        else:       # padded column pl + col + q + 2k -> half (pl + q) % 2, index k + ...
            b = self._read_x(ch, r, e.add(col, V))
            c2 = e.div(col, 2)
            for q in (0, 1):
                v = e.shuffle(a, b, [q + 2 * k for k in range(V)])
                at = e.add(c2, (pl + q) // 2)
                if (pl + q) % 2:
                    at = e.add(at, self.half)
                p2 = e.write(v, p2, [rr, at], base="sc")
        e.end([p2])
        e.end([row])
        return res

    def _read_x(self, ch: Value, r: Value, col: Value) -> Value:
        return self.e.read(self.x, [0, ch, r, col], self.zero, vector(self.V), in_bounds=None,
                           base="cp")

    def weights(self, ch: Value) -> None:
        e, vt = self.e, vector(self.V)
        self.wv = [[e.broadcast(e.extract(self.w, [ch, i, j]), vt, base="wv")
                    for j in range(self.kw)] for i in range(self.kh)]

    def chunk(self, tile: Value, cc: Value, oh0: Value, rows: int, ow0: Value,
              count: int, post) -> Value:
        """``count`` vectors of output columns from ``ow0`` in output rows
        ``oh0 ..+ rows`` of channel ``cc`` of ``tile``, each store masked to
        the columns before OW, none for a row past OH (its index clamped)."""
        e, V, plane = self.e, self.V, self.plane
        ohs = e.mul(oh0, self.s[0])
        prow = {}
        cols = [e.add(ow0, u * V) for u in range(count)]
        slots = [(g, u) for g in range(rows) for u in range(count)]
        accs = {k: self.initv for k in slots}
        reads = {}      # rows shared by the group's output rows are read once
        for i in range(self.kh):
            for j in range(self.kw):
                for g, u in slots:
                    off = g * self.s[0] + i * self.d[0]
                    if off not in prow:
                        prow[off] = e.add(ohs, off)
                    if (off, u, j) not in reads:
                        reads[off, u, j] = e.read(plane, [prow[off], self._col(cols[u], j)],
                                                  self.zero, vector(V))
                    accs[g, u] = e.fma(reads[off, u, j], self.wv[i][j], accs[g, u])
        out = tile
        left = [e.sub(self.ow, col) for col in cols]
        for g in range(rows):
            row, lanes = e.add(oh0, g), left
            if g:       # a group moved back never passes OH; one from row 0 may
                inside = e.cmpi("ult", row, self.oh)
                row = e.iop("minui", row, e.sub(self.oh, 1))
                lanes = [e.select(inside, n, e.index(0)) for n in left]
            for u in range(count):     # a vector past the row's end: no lane
                out = e.write(post(accs[g, u]), out, [0, cc, row, cols[u]],
                              e.create_mask(lanes[u], V), in_bounds=None)
        return out

    def _col(self, col: Value, j: int) -> Value:
        """The scratch column tap ``j`` of the output vector at ``col`` reads."""
        e = self.e
        if not self.split:
            return e.add(col, j * self.d[1])
        at = e.add(col, j // 2)
        return e.add(at, self.half) if j % 2 else at


def _cases(e: Emitter, cases, test, state: list[Value], body, other) -> list[Value]:
    """``body(n, state)`` (values of ``state``'s types) for the first ``n`` in
    ``cases`` whose ``test(n)`` (an i1) holds, else ``other(state)``: a chain
    of ``scf.if``s."""
    if not cases:
        return other(state)
    head, res = e._results("if", [v.type for v in state])
    e(f"{head} = scf.if {test(cases[0])} -> ({', '.join(str(v.type) for v in state)}) {{")
    e.ind += 1
    e.yield_(body(cases[0], state))
    e.ind -= 1
    e("} else {")
    e.ind += 1
    e.yield_(_cases(e, cases[1:], test, state, body, other))
    e.ind -= 1
    e("}")
    return res


def depthwise_function(name: str, xs, os_, kh: int, kw: int, s, d, pad, target: Target,
                       threads: bool, bias: bool, post_ops=None, n_cap: int = 0) -> str:
    """``func.func private @name(x [1, C, H, W], w [C, KH, KW], out [1, C, OH,
    OW], init, captured...) -> out``: one image; ``x`` is the unpadded input
    of the fused ``pad`` (top, left, bottom, right); ``init`` the bias [C]
    (``bias``) or the fill scalar; ``post_ops(e, acc, caps)``: the fused
    epilogue on an accumulator vector (None: none)."""
    e = Emitter()
    V = target.vector_width
    k = _Kernel(e, xs, os_, kh, kw, s, d, pad, V, bias)
    c = xs[1]
    caps = [e.param("ecap", F32) for _ in range(n_cap)]
    groups = tile(kh, kw, s, target)
    blocks = channel_blocks(c, threads)
    cb = c // blocks
    if blocks > 1:
        blk, oo, res = e.forall(blocks, k.dst)
        cbase = e.mul(blk, cb)
        tile_ = e.extract_slice(oo, [0, cbase, 0, 0], [1, cb, k.oh, k.ow], base="tile")
    else:
        cbase, tile_ = e.index(0), k.dst
    cc, (t, plane), (tres, _pres) = e.loop(e.index(0), e.index(cb), e.index(1),
                                           [tile_, k.zeroed_plane(max(groups.values()))])
    ch = e.add(cbase, cc)
    k.weights(ch)
    iv = e.extract(k.init, [ch]) if bias else k.init
    k.initv = e.broadcast(iv, vector(V), base="initv")
    post = (lambda a: post_ops(e, a, caps)) if post_ops else (lambda a: a)

    def nest(n: int, st: list[Value]) -> list[Value]:
        """Every output row of a map of ``n`` vectors' width (WIDE: any
        wider, in chunks of WIDE vectors) in groups of ``groups[n]``, the
        last group moved back to end at the last row (its rows before are
        computed again: the same values), a group from row 0 when OH is
        smaller; each group's input rows copied first."""
        g = groups[n]
        oh, (out, pl_, hi), res_ = e.loop(e.index(0), k.oh, e.index(g), st + [e.index(0)])
        oh0 = e.iop("minui", oh, e.sub(k.oh, g))        # OH < g: wraps, oh (0)
        hi2 = e.iop("maxui", hi, rows_needed(e, k.cv, oh0, g))
        k.plane = k.copy_rows(ch, pl_, hi, hi2)
        q, (u,), (cols,) = e.loop(e.index(0), k.ow, e.index(n * V), [out])
        e.end([k.chunk(u, cc, oh0, g, q, n, post)])
        e.end([cols, k.plane, hi2])
        return res_[:2]

    t2, plane2 = _cases(e, [1], lambda n: e.cmpi("ule", k.ow, V), [t, plane], nest,
                        lambda st: nest(WIDE, st))
    e.end([t2, plane2])
    if blocks > 1:
        e.end_forall(tres, oo, [0, cbase, 0, 0], [1, cb, k.oh, k.ow])
        out = res
    else:
        out = tres
    e(f"return {out} : {k.dst.type}")
    return e.function(name, [k.x, k.w, k.dst, k.init] + caps, k.dst.type)
