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

import re

import mlir.ir as ir

from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.optimize.math_approx import _exp_body
from onnx_mlir_py.passes.optimize.kernel_emit import tensor_type
from onnx_mlir_py.target import Target

CALL_ATTR = "om.attention"
THREAD_MIN_MACS = 1 << 21


def _shape(v) -> list:
    t = v.type
    return [None if t.is_dynamic_dim(i) else int(t.shape[i]) for i in range(t.rank)]


def _bits(x: float) -> str:
    import struct
    return "0x%08X" % struct.unpack("<I", struct.pack("<f", x))[0]


def vector_exp(x: str, out: str, p: str, vw: int) -> list[str]:
    """math_approx's f32 exp polynomial on vector<vw x f32> values."""
    V, I, B = f"vector<{vw}xf32>", f"vector<{vw}xi32>", f"vector<{vw}xi1>"
    out_lines = []
    for ln in _exp_body(x, out, p):
        m = re.match(r"(\s*%\S+ = arith\.constant) (\S+) : (f32|i32)$", ln)
        if m:
            out_lines.append(f"{m.group(1)} dense<{m.group(2)}> : {V if m.group(3) == 'f32' else I}")
            continue
        if "arith.select" in ln:
            ln = ln.replace(" : f32", f" : {B}, {V}")
        ln = ln.replace(": f32 to i32", f": {V} to {I}").replace(": i32 to f32", f": {I} to {V}")
        ln = re.sub(r": f32$", f": {V}", ln)
        ln = re.sub(r": i32$", f": {I}", ln)
        out_lines.append(ln)
    return out_lines


class _E:
    def __init__(self):
        self.lines: list[str] = []
        self.k = 0

    def __call__(self, text: str):
        self.lines.append("  " + text)

    def v(self, base: str, text: str) -> str:
        self.k += 1
        nm = f"%{base}{self.k}"
        self(f"{nm} = {text}")
        return nm


def kernel_text(name: str, qs, kts, vs, ms, ys, scale: float, group: int, nan_rows: bool,
                vw: int, rows: int, ncol: int, threads: bool) -> str:
    """The kernel function: the reference's arguments but the scores."""
    e = _E()
    V = f"vector<{vw}xf32>"
    tq, tkt, tv, ty = tensor_type(qs), tensor_type(kts), tensor_type(vs), tensor_type(ys)
    sq_s, dv, d = qs[2], vs[3], qs[3]
    tys = tensor_type([1, 1, sq_s, dv])
    tsc = tensor_type([rows, None])
    m_arg = f", %m: {tensor_type(ms)}" if ms is not None else ""
    e.lines.append(f"func.func private @{name}(%q: {tq}, %kt: {tkt}, %v: {tv}{m_arg}, "
                   f"%y: {ty}) -> {ty} {{")
    e("%zero = arith.constant 0.0 : f32")
    e("%one = arith.constant 1.0 : f32")
    e("%ninf = arith.constant 0xFF800000 : f32")
    e(f"%zv = arith.constant dense<0.0> : {V}")
    e(f"%ninfv = arith.constant dense<0xFF800000> : {V}")
    e(f"%scv = arith.constant dense<{_bits(scale)}> : {V}")
    B = e.v("B", f"tensor.dim %q, %c0 : {tq}") if qs[0] is None else f"%c{qs[0]}"
    Sq = e.v("Sq", f"tensor.dim %q, %c2 : {tq}")
    Skv = e.v("Skv", f"tensor.dim %kt, %c3 : {tkt}")
    H = f"%c{qs[1]}"
    BH = e.v("BH", f"arith.muli {B}, {H} : index")
    rem = e.v("rem", f"arith.remui {Skv}, %c{ncol * vw} : index")
    nfull = e.v("nfull", f"arith.subi {Skv}, {rem} : index")
    sk1 = e.v("sk", f"arith.addi {Skv}, %c{vw - 1} : index")
    skd = e.v("sk", f"arith.divui {sk1}, %c{vw} : index")
    skvp = e.v("skvp", f"arith.muli {skd}, %c{vw} : index")
    if threads:
        e(f"%res = scf.forall (%bh) in ({BH}) shared_outs(%yo = %y) -> ({ty}) {{")
    else:
        e(f"%res = scf.for %bh = %c0 to {BH} step %c1 iter_args(%yo = %y) -> ({ty}) {{")
    b = e.v("b", f"arith.divui %bh, {H} : index")
    h = e.v("h", f"arith.remui %bh, {H} : index")
    hk = e.v("hk", f"arith.divui {h}, %c{group} : index") if group > 1 else h
    mb = "%c0" if ms is None or ms[0] == 1 else b
    mh = "%c0" if ms is None or ms[1] == 1 else h
    yt = e.v("yt", f"tensor.extract_slice %yo[{b}, {h}, 0, 0] [1, 1, {Sq if sq_s is None else sq_s}, "
                   f"{dv}] [1, 1, 1, 1] : {ty} to {tys}")
    scr = e.v("scr", f"tensor.empty({skvp}) : {tsc}")
    big = e.v("big", f"arith.cmpi uge, {Sq}, %c{rows} : index")
    last = e.v("last", f"arith.subi {Sq}, %c{rows} : index")
    e(f"%yt2 = scf.if {big} -> ({tys}) {{")
    ctx = dict(e=e, V=V, vw=vw, ncol=ncol, tq=tq, tkt=tkt, tv=tv, tys=tys, tsc=tsc, ms=ms,
               b=b, h=h, hk=hk, mb=mb, mh=mh, Skv=Skv, nfull=nfull, skvp=skvp, d=d, dv=dv,
               nan_rows=nan_rows)
    for nrows, step, clamp in ((rows, f"%c{rows}", True), (1, "%c1", False)):
        e(f"%rl{nrows}:2 = scf.for %i{nrows} = %c0 to {Sq} step {step} "
          f"iter_args(%ya{nrows} = {yt}, %sa{nrows} = {scr}) -> ({tys}, {tsc}) {{")
        i0 = e.v("i0", f"arith.minui %i{nrows}, {last} : index") if clamp else f"%i{nrows}"
        yb, sb = _block(ctx, nrows, i0, f"%ya{nrows}", f"%sa{nrows}")
        e(f"scf.yield {yb}, {sb} : {tys}, {tsc}")
        e("}")
        e(f"scf.yield %rl{nrows}#0 : {tys}")
        if clamp:
            e("} else {")
    e("}")
    sizes = f"[1, 1, {Sq if sq_s is None else sq_s}, {dv}] [1, 1, 1, 1]"
    if threads:
        e("scf.forall.in_parallel {")
        e(f"tensor.parallel_insert_slice %yt2 into %yo[{b}, {h}, 0, 0] {sizes} : {tys} into {ty}")
        e("}")
    else:
        yn = e.v("yn", f"tensor.insert_slice %yt2 into %yo[{b}, {h}, 0, 0] {sizes} : {tys} into {ty}")
        e(f"scf.yield {yn} : {ty}")
    e("}")
    e(f"return %res : {ty}")
    e.lines.append("}")
    used = sorted({int(x) for x in re.findall(r"%c(\d+)\b", "\n".join(e.lines))})
    e.lines[1:1] = [f"  %c{n} = arith.constant {n} : index" for n in used]
    return "\n".join(e.lines)


def _block(c: dict, R: int, i0: str, ya: str, sa: str) -> tuple[str, str]:
    """R query rows from row ``i0``: returns (new y tile, new scratch)."""
    e, V, vw, NC, ms = c["e"], c["V"], c["vw"], c["ncol"], c["ms"]
    tq, tkt, tv, tys, tsc = c["tq"], c["tkt"], c["tv"], c["tys"], c["tsc"]
    b, h, hk = c["b"], c["h"], c["hk"]
    B1 = f"vector<{vw}xi1>"
    qi = [e.v("qi", f"arith.addi {i0}, %c{r} : index") if r else i0 for r in range(R)]
    mi, mvec = [], []
    if ms is not None:
        tm = tensor_type(ms)
        for r in range(R):
            mi.append("%c0" if ms[2] == 1 else qi[r])
            if ms[3] == 1:
                s = e.v("ms", f"tensor.extract %m[{c['mb']}, {c['mh']}, {mi[r]}, %c0] : {tm}")
                mvec.append(e.v("mv", f"vector.broadcast {s} : f32 to {V}"))

    def mask_add(x: str, r: int, col: str, lm: str | None) -> str:
        if ms is None:
            return x
        if ms[3] == 1:
            mk = mvec[r]
        elif lm is None:
            mk = e.v("mk", f"vector.transfer_read %m[{c['mb']}, {c['mh']}, {mi[r]}, {col}], %zero "
                           f"{{in_bounds = [true]}} : {tm}, {V}")
        else:
            mk = e.v("mk", f"vector.transfer_read %m[{c['mb']}, {c['mh']}, {mi[r]}, {col}], %zero, "
                           f"{lm} : {tm}, {V}")
        return e.v("xm", f"arith.addf {x}, {mk} : {V}")

    # -- 1. scores and row max: full NC-vector chunks, then single (masked) vectors
    mx = ["%ninfv"] * R
    s = sa
    for full in (True, False):
        nv = NC if full else 1
        lo, hi, step = ("%c0", c["nfull"], f"%c{NC * vw}") if full else \
            (c["nfull"], c["Skv"], f"%c{vw}")
        tag = f"p{R}{'f' if full else 't'}{e.k}"
        carried = [f"%{tag}s = {s}"] + [f"%{tag}m{r} = {mx[r]}" for r in range(R)]
        e(f"%{tag}:{1 + R} = scf.for %{tag}j = {lo} to {hi} step {step} "
          f"iter_args({', '.join(carried)}) -> ({tsc}{(', ' + V) * R}) {{")
        j = f"%{tag}j"
        lm = None
        if not full:
            left = e.v("left", f"arith.subi {c['Skv']}, {j} : index")
            lm = e.v("lm", f"vector.create_mask {left} : {B1}")
        cols = [j] + [e.v("col", f"arith.addi {j}, %c{k * vw} : index") for k in range(1, nv)]
        dd = f"%{tag}d"
        tail = " {in_bounds = [true]}" if lm is None else f", {lm}"     # full / masked

        def kt_read(k):
            return e.v("kv", f"vector.transfer_read %kt[{b}, {hk}, {dd}, {cols[k]}], %zero{tail} "
                             f": {tkt}, {V}")

        _fma_loop(e, V, f"%{tag}acc", dd, f"%c{c['d']}", f"%{tag}a", R, nv, kt_read, "q",
                  lambda r: f"tensor.extract %q[{b}, {h}, {qi[r]}, {dd}] : {tq}")
        cur, newmx = f"%{tag}s", []
        for r in range(R):
            m = f"%{tag}m{r}"
            for k in range(nv):
                x = e.v("x", f"arith.mulf %{tag}acc#{r * nv + k}, %scv : {V}")
                x = mask_add(x, r, cols[k], lm)
                if lm is not None:
                    x = e.v("x", f"arith.select {lm}, {x}, %ninfv : {B1}, {V}")
                cur = e.v("s", f"vector.transfer_write {x}, {cur}[%c{r}, {cols[k]}] "
                               f"{{in_bounds = [true]}} : {V}, {tsc}")
                m = e.v("mx", f"arith.maximumf {m}, {x} : {V}")
            newmx.append(m)
        e(f"scf.yield {cur}, {', '.join(newmx)} : {tsc}{(', ' + V) * R}")
        e("}")
        s = f"%{tag}#0"
        mx = [f"%{tag}#{1 + r}" for r in range(R)]

    # -- 2. exp(S - max) in place, row sums
    mxs = [e.v("mxs", f"vector.reduction <maximumf>, {mx[r]} : {V} into f32") for r in range(R)]
    mxb = [e.v("mxb", f"vector.broadcast {mxs[r]} : f32 to {V}") for r in range(R)]
    tag = f"x{R}_{e.k}"
    carried = [f"%{tag}s = {s}"] + [f"%{tag}u{r} = %zv" for r in range(R)]
    e(f"%{tag}:{1 + R} = scf.for %{tag}j = %c0 to {c['skvp']} step %c{vw} "
      f"iter_args({', '.join(carried)}) -> ({tsc}{(', ' + V) * R}) {{")
    cur, sums = f"%{tag}s", []
    for r in range(R):
        x = e.v("x", f"vector.transfer_read {cur}[%c{r}, %{tag}j], %zero {{in_bounds = [true]}} "
                     f": {tsc}, {V}")
        dlt = e.v("dl", f"arith.subf {x}, {mxb[r]} : {V}")
        e.k += 1
        ex = f"%ex{e.k}"
        for ln in vector_exp(dlt, ex, f"ex{e.k}_", vw):
            e(ln.strip())
        cur = e.v("s", f"vector.transfer_write {ex}, {cur}[%c{r}, %{tag}j] {{in_bounds = [true]}} "
                       f": {V}, {tsc}")
        sums.append(e.v("u", f"arith.addf %{tag}u{r}, {ex} : {V}"))
    e(f"scf.yield {cur}, {', '.join(sums)} : {tsc}{(', ' + V) * R}")
    e("}")
    s = f"%{tag}#0"
    inv = []
    for r in range(R):
        tot = e.v("tot", f"vector.reduction <add>, %{tag}#{1 + r} : {V} into f32")
        iv = e.v("inv", f"arith.divf %one, {tot} : f32")
        inv.append(e.v("invb", f"vector.broadcast {iv} : f32 to {V}"))
    dead = [] if c["nan_rows"] else \
        [e.v("dead", f"arith.cmpf oeq, {mxs[r]}, %ninf : f32") for r in range(R)]

    # -- 3. Y rows = (P @ V) / sum, column groups of NC vectors
    y = ya
    nvec = c["dv"] // vw
    for g0 in range(0, nvec, NC):
        nv = min(NC, nvec - g0)
        tag = f"o{R}_{e.k}"
        j = f"%{tag}j"

        def v_read(k):
            ci = e.v("ci", f"arith.constant {(g0 + k) * vw} : index")
            return e.v("vv", f"vector.transfer_read %v[{b}, {hk}, {j}, {ci}], %zero "
                             f"{{in_bounds = [true]}} : {tv}, {V}")

        _fma_loop(e, V, f"%{tag}", j, c["Skv"], f"%{tag}a", R, nv, v_read, "p",
                  lambda r: f"tensor.extract {s}[%c{r}, {j}] : {tsc}")
        for r in range(R):
            for k in range(nv):
                o = e.v("o", f"arith.mulf %{tag}#{r * nv + k}, {inv[r]} : {V}")
                if dead:
                    o = e.v("o", f"arith.select {dead[r]}, %zv, {o} : {V}")
                ci = e.v("ci", f"arith.constant {(g0 + k) * vw} : index")
                y = e.v("y", f"vector.transfer_write {o}, {y}[%c0, %c0, {qi[r]}, {ci}] "
                             f"{{in_bounds = [true]}} : {V}, {tys}")
    return y, s


def _fma_loop(e: _E, V: str, res: str, iv: str, hi: str, acc: str, R: int, nv: int,
              read, name: str, scalar) -> None:
    """``res:R*nv = scf.for iv = 0 to hi``: R x nv vector accumulators
    (``acc<r>_<k>``, from zero) += broadcast(scalar r) * vector k, where
    ``read(k)`` emits vector k and ``scalar(r)`` is the text of scalar r
    (named ``name``), both at ``iv``."""
    accs = [[f"{acc}{r}_{k}" for k in range(nv)] for r in range(R)]
    init = ", ".join(f"{accs[r][k]} = %zv" for r in range(R) for k in range(nv))
    e(f"{res}:{R * nv} = scf.for {iv} = %c0 to {hi} step %c1 iter_args({init}) "
      f"-> ({', '.join([V] * (R * nv))}) {{")
    vecs = [read(k) for k in range(nv)]
    outs = []
    for r in range(R):
        sc = e.v(name, scalar(r))
        bc = e.v(name + "b", f"vector.broadcast {sc} : f32 to {V}")
        for k in range(nv):
            outs.append(e.v("f", f"vector.fma {bc}, {vecs[k]}, {accs[r][k]} : {V}"))
    e(f"scf.yield {', '.join(outs)} : {', '.join([V] * (R * nv))}")
    e("}")


def _params(call: ir.Operation) -> dict:
    d = call.attributes[CALL_ATTR]
    return {"scale": ir.FloatAttr(d["scale"]).value, "group": ir.IntegerAttr(d["group"]).value,
            "nan_rows": ir.BoolAttr(d["nan_rows"]).value, "mask": ir.BoolAttr(d["mask"]).value}


def attention_kernels(module: ir.Module, target: Target, threads: bool = False) -> int:
    """Replace every ``om.attention`` call the kernel handles by a call of a
    kernel function (one per distinct shape; not inlined: 12 layers share
    one) without the reference's scores argument; returns how many."""
    from mlir.dialects import func
    from mlir.passmanager import PassManager
    vw = target.vector_width
    rows, ncol = (6, 4) if target.num_registers >= 32 else (4, 2)
    funcs: dict[tuple, str] = {}
    texts = []
    count = 0
    for call in walk_ops(module.operation, "func.call"):
        if CALL_ATTR not in call.attributes or vw < 8:
            continue
        p = _params(call)
        args = list(call.operands)
        q, kt, v = args[0], args[1], args[2]
        m = args[3] if p["mask"] else None
        y = args[-1]
        qs, kts, vs, ys = _shape(q), _shape(kt), _shape(v), _shape(y)
        ms = None if m is None else _shape(m)
        if vs[3] % vw:
            continue
        work = None if None in (qs[0], qs[2], kts[3]) else \
            qs[0] * qs[1] * qs[2] * kts[3] * (qs[3] + vs[3])
        par = threads and (work is None or work >= THREAD_MIN_MACS)
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
