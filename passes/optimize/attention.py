"""-O3 attention kernel: the calls ``onnx_to_linalg/attention.py`` emits
(``om.attention``) get a tiled vector kernel instead of the reference body
(a private function per distinct shape, called, not inlined: the layers of
a model share one).

Per (batch, head) (an ``scf.forall`` when threaded), per block of R query
rows (the last block overlaps the one before it, so every block is whole;
fewer than R rows run one row at a time), with a scratch of R score rows
(R x Skv rounded up to a vector: a few KB, stays in L1):

    1. S[r, :] = (q_r . KT) * scale + mask_r     register tile R x NC vectors,
       and the running row max                   one Q broadcast + NC KT reads
                                                 per d; the Skv tail: masked
    2. S[r, :] = exp(S[r, :] - max_r), sum_r     (polynomial exp on vectors)
    3. Y[r, :] = (S[r, :] @ V) / sum_r           tile R x NC vectors of Dv

KT is K transposed ([B, Hkv, D, Skv], the lowering's, usually the same
single transpose as before the fusion): the scores come out as rows of
vectors. R x NC is 6 x 4 with 32 vector registers (AVX-512), 4 x 2 with 16.
Dv must be a multiple of the vector width (else the reference body stays).
Rounding differs from the unfused ops only in the order of the sums and in
dividing after P @ V instead of before.
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.optimize.math_approx import exp_values
from onnx_mlir_py.passes.optimize.kernel_emit import (F32, Emitter, Value, f32_hex, tensor,
                                                      vector)
from onnx_mlir_py.target import Target
from onnx_mlir_py.passes.optimize.kernel_plan import ATTENTION_THREAD_MIN_MACS, assigned
from onnx_mlir_py.passes.optimize.kernel_budget import building

CALL_ATTR = "om.attention"


def _shape(v) -> list:
    t = v.type
    return [None if t.is_dynamic_dim(i) else int(t.shape[i]) for i in range(t.rank)]


def kernel_text(name: str, qs, kts, vs, ms, ys, scale: float, group: int, nan_rows: bool,
                vw: int, rows: int, ncol: int, threads: bool) -> str:
    """The kernel function: the reference's arguments but the scores."""
    e = Emitter(ind=1)
    V = vector(vw)
    sq_s, dv, d = qs[2], vs[3], qs[3]
    q, kt, v = e.param("q", tensor(qs)), e.param("kt", tensor(kts)), e.param("v", tensor(vs))
    m = e.param("m", tensor(ms)) if ms is not None else None
    y = e.param("y", tensor(ys))
    c = dict(e=e, V=V, vw=vw, ncol=ncol, ms=ms, q=q, kt=kt, v=v, m=m, d=d, dv=dv,
             nan_rows=nan_rows, zero=e.const("0.0", F32), one=e.const("1.0", F32),
             ninf=e.const("0xFF800000", F32), zv=e.const("dense<0.0>", V),
             ninfv=e.const("dense<0xFF800000>", V), scv=e.const(f"dense<{f32_hex(scale)}>", V))
    B = e.dim(q, 0) if qs[0] is None else e.index(qs[0])
    Sq = e.dim(q, 2)
    Skv = e.dim(kt, 3)
    H = e.index(qs[1])
    BH = e.iop("muli", B, H)
    rem = e.iop("remui", Skv, e.index(ncol * vw))
    c["nfull"] = e.iop("subi", Skv, rem)
    skd = e.iop("divui", e.iop("addi", Skv, e.index(vw - 1)), e.index(vw))
    c["skvp"] = e.iop("muli", skd, e.index(vw))
    c["Skv"] = Skv
    if threads:
        bh, yo, res = e.forall(BH, y)
    else:
        bh, (yo,), (res,) = e.loop(e.index(0), BH, e.index(1), [y])
    b = c["b"] = e.iop("divui", bh, H)
    h = c["h"] = e.iop("remui", bh, H)
    c["hk"] = e.iop("divui", h, e.index(group)) if group > 1 else h
    c["mb"] = e.index(0) if ms is None or ms[0] == 1 else b
    c["mh"] = e.index(0) if ms is None or ms[1] == 1 else h
    sizes = [1, 1, Sq if sq_s is None else sq_s, dv]
    yt = e.extract_slice(yo, [b, h, 0, 0], sizes, base="yt")
    scr = e.empty([rows, c["skvp"]], base="scr")
    big = e.cmpi("uge", Sq, e.index(rows))
    last = e.iop("subi", Sq, e.index(rows))
    yt2 = Value(e.fresh("yt"), yt.type)
    e(f"{yt2} = scf.if {big} -> ({yt.type}) {{")
    e.ind += 1
    for nrows, step, clamp in ((rows, e.index(rows), True), (1, e.index(1), False)):
        i, (ya, sa), rl = e.loop(e.index(0), Sq, step, [yt, scr])
        i0 = e.iop("minui", i, last) if clamp else i
        e.end(list(_block(c, nrows, i0, ya, sa)))
        e.yield_([rl[0]])
        e.ind -= 1
        e("} else {" if clamp else "}")
        e.ind += clamp
    if threads:
        e.end_forall(yt2, yo, [b, h, 0, 0], sizes)
    else:
        e.end([e.insert_slice(yt2, yo, [b, h, 0, 0], sizes, base="yn")])
    e(f"return {res} : {y.type}")
    return e.function(name, [q, kt, v] + ([m] if m is not None else []) + [y], y.type)


def _block(c: dict, R: int, i0: Value, ya: Value, sa: Value) -> tuple[Value, Value]:
    """R query rows from row ``i0``: returns (new y tile, new scratch)."""
    e, V, vw, NC, ms = c["e"], c["V"], c["vw"], c["ncol"], c["ms"]
    zero, zv = c["zero"], c["zv"]
    b, h, hk = c["b"], c["h"], c["hk"]
    qi = [e.iop("addi", i0, e.index(r)) if r else i0 for r in range(R)]
    mi, mvec = [], []
    if ms is not None:
        for r in range(R):
            mi.append(e.index(0) if ms[2] == 1 else qi[r])
            if ms[3] == 1:
                s = e.extract(c["m"], [c["mb"], c["mh"], mi[r], 0])
                mvec.append(e.broadcast(s, V, base="mv"))

    def mask_add(x: Value, r: int, col: Value, lm: Value | None) -> Value:
        if ms is None:
            return x
        if ms[3] == 1:
            mk = mvec[r]
        else:
            mk = e.read(c["m"], [c["mb"], c["mh"], mi[r], col], zero, V, lm,
                        in_bounds=True if lm is None else None, base="mk")
        return e.binary("arith.addf", x, mk, base="xm")

    # -- 1. scores and row max: full NC-vector chunks, then single (masked) vectors
    mx = [c["ninfv"]] * R
    s = sa
    for full in (True, False):
        nv = NC if full else 1
        lo, hi, step = (e.index(0), c["nfull"], e.index(NC * vw)) if full else \
            (c["nfull"], c["Skv"], e.index(vw))
        j, carried, res = e.loop(lo, hi, step, [s] + mx)
        lm = None
        if not full:
            lm = e.create_mask(e.iop("subi", c["Skv"], j), vw, base="lm")
        cols = [j] + [e.iop("addi", j, e.index(k * vw)) for k in range(1, nv)]

        def kt_read(k, dd):
            return e.read(c["kt"], [b, hk, dd, cols[k]], zero, V, lm,
                          in_bounds=True if lm is None else None, base="kv")

        accs = _fma_loop(c, c["d"], R, nv, kt_read,
                         lambda r, dd: e.extract(c["q"], [b, h, qi[r], dd]))
        cur, newmx = carried[0], []
        for r in range(R):
            m = carried[1 + r]
            for k in range(nv):
                x = e.binary("arith.mulf", accs[r * nv + k], c["scv"], base="x")
                x = mask_add(x, r, cols[k], lm)
                if lm is not None:
                    x = e.select(lm, x, c["ninfv"], base="x")
                cur = e.write(x, cur, [r, cols[k]], base="s")
                m = e.binary("arith.maximumf", m, x, base="mx")
            newmx.append(m)
        e.end([cur] + newmx)
        s, mx = res[0], res[1:]

    # -- 2. exp(S - max) in place, row sums
    mxs = [e.reduction("maximumf", mx[r]) for r in range(R)]
    mxb = [e.broadcast(mxs[r], V, base="mxb") for r in range(R)]
    j, carried, res = e.loop(e.index(0), c["skvp"], e.index(vw), [s] + [zv] * R)
    cur, sums = carried[0], []
    for r in range(R):
        x = e.read(cur, [r, j], zero, V)
        dlt = e.binary("arith.subf", x, mxb[r], base="dl")
        ex = exp_values(e, dlt)
        cur = e.write(ex, cur, [r, j], base="s")
        sums.append(e.binary("arith.addf", carried[1 + r], ex, base="u"))
    e.end([cur] + sums)
    s = res[0]
    inv = []
    for r in range(R):
        tot = e.reduction("add", res[1 + r])
        inv.append(e.broadcast(e.binary("arith.divf", c["one"], tot), V, base="invb"))
    dead = [] if c["nan_rows"] else [e.cmpf("oeq", mxs[r], c["ninf"]) for r in range(R)]

    # -- 3. Y rows = (P @ V) / sum, column groups of NC vectors
    y = ya
    nvec = c["dv"] // vw
    for g0 in range(0, nvec, NC):
        nv = min(NC, nvec - g0)
        accs = _fma_loop(c, c["Skv"], R, nv,
                         lambda k, jj: e.read(c["v"], [b, hk, jj, (g0 + k) * vw], zero, V,
                                              base="vv"),
                         lambda r, jj: e.extract(s, [r, jj]))
        for r in range(R):
            for k in range(nv):
                o = e.binary("arith.mulf", accs[r * nv + k], inv[r], base="o")
                if dead:
                    o = e.select(dead[r], zv, o, base="o")
                y = e.write(o, y, [0, 0, qi[r], (g0 + k) * vw], base="y")
    return y, s


def _fma_loop(c: dict, hi, R: int, nv: int, read, scalar) -> list[Value]:
    """``scf.for iv = 0 to hi``: R x nv vector accumulators (from zero) +=
    broadcast(scalar r) * vector k, where ``read(k, iv)`` emits vector k and
    ``scalar(r, iv)`` scalar r; returns the accumulators."""
    e = c["e"]
    iv, accs, res = e.loop(e.index(0), hi, e.index(1), [c["zv"]] * (R * nv))
    vecs = [read(k, iv) for k in range(nv)]
    outs = []
    for r in range(R):
        bc = e.broadcast(scalar(r, iv), c["V"])
        for k in range(nv):
            outs.append(e.fma(bc, vecs[k], accs[r * nv + k], base="f"))
    e.end(outs)
    return res


def _params(call: ir.Operation) -> dict:
    d = call.attributes[CALL_ATTR]
    return {"scale": ir.FloatAttr(d["scale"]).value, "group": ir.IntegerAttr(d["group"]).value,
            "nan_rows": ir.BoolAttr(d["nan_rows"]).value, "mask": ir.BoolAttr(d["mask"]).value}


def plan_attention(call: ir.Operation, target: Target):
    """((rows, vectors) of the register tile, multiply-adds or None when
    dynamic) for an ``om.attention`` call the kernel handles (f32 lanes of at
    least 8, the value head dim in whole vectors), else None."""
    vw = target.vector_width
    if CALL_ATTR not in call.attributes or vw < 8:
        return None
    args = list(call.operands)
    qs, kts, vs = _shape(args[0]), _shape(args[1]), _shape(args[2])
    if vs[3] % vw:
        return None
    work = None if None in (qs[0], qs[2], kts[3]) else \
        qs[0] * qs[1] * qs[2] * kts[3] * (qs[3] + vs[3])
    return ((6, 4) if target.num_registers >= 32 else (4, 2)), work


def attention_kernels(module: ir.Module, target: Target, threads: bool = False,
                      plan=None) -> int:
    """Replace every ``om.attention`` call the kernel handles (with a kernel
    ``plan``: those it gave to ``attention``) by a call of a kernel function
    (one per distinct shape; not inlined: 12 layers share one) without the
    reference's scores argument; returns how many."""
    from mlir.dialects import func
    from mlir.passmanager import PassManager
    vw = target.vector_width
    funcs: dict[tuple, str] = {}
    texts = []
    count = 0
    for call in walk_ops(module.operation, "func.call"):
        with building(call):
            found = plan_attention(call, target)
            if found is None or (plan is not None and not assigned(call, "attention")):
                continue
            (rows, ncol), work = found
            p = _params(call)
            args = list(call.operands)
            q, kt, v = args[0], args[1], args[2]
            m = args[3] if p["mask"] else None
            y = args[-1]
            qs, kts, vs, ys = _shape(q), _shape(kt), _shape(v), _shape(y)
            ms = None if m is None else _shape(m)
            par = threads and (work is None or work >= ATTENTION_THREAD_MIN_MACS)
            key = (tuple(qs), tuple(kts), tuple(vs), None if ms is None else tuple(ms), tuple(ys),
                   p["scale"], p["group"], p["nan_rows"], par)
            if key not in funcs:
                funcs[key] = f"__om_attention_k{vw}_{len(funcs)}"
                texts.append(kernel_text(funcs[key], qs, kts, vs, ms, ys, p["scale"], p["group"],
                                         p["nan_rows"], vw, rows, ncol, par))
            with ir.InsertionPoint(call), call.location:
                new = func.CallOp([y.type], ir.FlatSymbolRefAttr.get(funcs[key]), args[:-2] + [y])
            call.results[0].replace_all_uses_with(new.results[0])
            call.erase()
            count += 1
    if texts:
        sub = ir.Module.parse("module {\n" + "\n".join(texts) + "\n}", module.context)
        for o in sub.body.operations:
            o.operation.clone(ir.InsertionPoint(module.body))
        PassManager.parse("builtin.module(symbol-dce)", module.context).run(module.operation)
    return count
