"""Convs over few input channels (a network's stem: 3 channels, 3x3 to 7x7,
stride 1 or 2) -> a direct, register-tiled kernel.

The im2col form (:mod:`.conv`) spends most of a stem conv on the im2col
copy (a strided gather of 27 to 147 short rows) and on padding K = C*KH*KW
to whole blocks, for a matmul of only 16 to 64 rows: MobileNetV3's
3 -> 16 3x3/2 stem ran at 34 GFLOPS against onnxruntime's 62. Here the
input vectors are read straight from the image:

    for each output row oh (an scf.forall over the rows when threaded):
      for each block of FB filters fo:
        for each group of U vectors of V output columns:
          acc[f][u] = bias[fo*FB + f] (or the fill scalar)
          for c:                                  (scf.for, accumulators carried)
            for kh, kw:                           (unrolled; kh a loop over the
                                                   row's kernel rows in the image
                                                   when the pad has rows)
              x_u = x[c, oh*s + kh*d - top, (ow_u + q)*s + kw*d - left  for q < V]
                    (one contiguous read of (V-1)*s+1 values per tap,
                     every s-th lane kept by a vector.shuffle)
              acc[f][u] += x_u * broadcast(w[fo, c, kh, kw, f])
          out[fo*FB + f, oh, ow_u ...] = epilogue(acc[f][u])

The weights are repacked at compile time to [F/FB, C, KH, KW, FB] (one
contiguous run of FB scalars per tap). The register tile is FB x U
accumulators: 8 x 3 with 32 vector registers (AVX-512), 4 x 2 with 16.
The conv's zero pad is fused: the kernel reads the unpadded image. Groups of
U vectors whose reads all lie in the row run in a loop; the rest of the row
(the left pad's vectors, the right end) is static code whose reads cover
only the lanes in the image (the pad's lanes come from a zero vector in the
shuffle, the last vector stores only the row's lanes); the pad's rows are
left out of each output row's loop over kernel rows. A per-channel bias add
after the conv is the accumulators' start and an elementwise op after that
(ReLU, HardSwish, Clip, ...) their epilogue, as in the depthwise kernel.
"""
from __future__ import annotations

from dataclasses import dataclass

import mlir.ir as ir

from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.optimize.batch_loop import (BATCHED, SHARED, add_functions,
                                                     batch_loop_function)
from onnx_mlir_py.passes.optimize.kernel_fusion import (batch_shape, fill_scalar,
                                                        replace_with_call, static_f32,
                                                        window_ints)
from onnx_mlir_py.passes.optimize.kernel_emit import F32, Emitter, Value, tensor, vector
from onnx_mlir_py.passes.optimize.row_emit import emit_ops
from onnx_mlir_py.target import Target
from onnx_mlir_py.passes.optimize.kernel_plan import DIRECT_THREAD_MIN_MACS, assigned

MAX_CHANNELS = 4          # input channels of a stem conv
MAX_TAPS = 160            # C*KH*KW (7x7x3 = 147): the unrolled taps of one channel step


@dataclass(frozen=True)
class Direct:
    """What the kernel text depends on (the key of its function)."""
    xs: tuple            # the input the kernel reads [N, C, H, W] (unpadded when pad is fused)
    ws: tuple            # weights [F, C, KH, KW]
    os: tuple            # output [N, F, OH, OW]
    s: tuple
    d: tuple
    init: str            # "bias" | "scalar"
    pad: tuple = (0, 0, 0, 0)  # the fused zero pad (top, left, bottom, right); xs unpadded
    epilogue: tuple = ()
    epi_result: str = ""
    n_cap: int = 0


def tile(target: Target) -> tuple[int, int]:
    """(FB filters, U vectors) of the register tile."""
    return (8, 3) if target.num_registers >= 32 else (4, 2)


def _match(op: ir.Operation, target: Target):
    """``(Direct, operands, ops to erase, op whose result is replaced)`` or None."""
    from onnx_mlir_py.passes.optimize.depthwise import kernel_operands
    from onnx_mlir_py.dialects.onnx.opview import owner_op
    from onnx_mlir_py.passes.optimize.kernel_fusion import bias_add_user, zero_fill, zero_pad
    if op.name != "linalg.conv_2d_nchw_fchw" or len(op.operands) != 3 or len(op.results) != 1:
        return None
    xs, ws, os_ = batch_shape(op.operands[0]), static_f32(op.operands[1]), \
        batch_shape(op.operands[2])
    if xs is None or ws is None or os_ is None or 0 in ws + xs[1:] + os_[1:]:
        return None
    if len(xs) != 4 or len(ws) != 4 or (xs[0] is None) != (os_[0] is None):
        return None
    f, c, kh, kw = ws
    s, d = window_ints(op, "strides"), window_ints(op, "dilations")
    fb, _u = tile(target)
    if c > MAX_CHANNELS or c * kh * kw > MAX_TAPS or f % fb or os_[3] < target.vector_width \
            or s[0] != s[1] or s[0] not in (1, 2) or min(d) < 1:
        return None
    if (os_[2] - 1) * s[0] + (kh - 1) * d[0] + 1 > xs[2] \
            or (os_[3] - 1) * s[1] + (kw - 1) * d[1] + 1 > xs[3]:
        return None
    fill = fill_scalar(op.operands[2])
    if fill is None:
        return None
    x, pad = op.operands[0], (0, 0, 0, 0)
    padded = zero_pad(x)
    if padded is not None:                 # read the unpadded image, the border skipped
        x, pad = padded[0], tuple(padded[1])
        xs = batch_shape(x)
        if xs is None or 0 in xs[1:]:
            return None
    bias = bias_add_user(op.results[0]) if zero_fill(op.operands[2]) else None
    init, operands, erase, last, kw_ = kernel_operands(op, x, fill, bias)
    dv = Direct(tuple(xs), tuple(ws), tuple(os_), tuple(s), tuple(d), init, pad, **kw_)
    dead = [owner_op(op.operands[0])] if padded is not None else []
    return dv, operands, erase, last, dead


class _Row:
    """The emitter of one output row's groups of vectors."""

    def __init__(self, e: Emitter, dv: Direct, vw: int, fb: int, v: dict):
        """``v``: the values the groups read (x, wp, zero, n, fo, f0, iv,
        ecv, and rows or ohs_p / khlo / khhi)."""
        self.e, self.dv, self.vw, self.fb, self.v = e, dv, vw, fb, v

    def read(self, ch: Value, row: Value, j: int, xcol, u: int, static_ow0: int | None,
             keep: int | None) -> Value | None:
        """Input vector of tap column ``j`` for the output vector ``u``: lane q
        is x[row, (ow_u + q)*s + j*d - left]; lanes in the pad (or past the
        output row, the last vector's ``keep``) are 0 (None: all of them)."""
        e, dv, vw, v = self.e, self.dv, self.vw, self.v
        s, w = dv.s[1], dv.xs[3]
        off = j * dv.d[1] - dv.pad[1]
        span = (vw - 1) * s + 1
        if static_ow0 is None:             # a loop group: every read lies in the row
            start = xcol if off == 0 else \
                e.iop("addi" if off > 0 else "subi", xcol, e.index(abs(off)))
            r = e.read(v["x"], [v["n"], ch, row, start], v["zero"], vector(span))
            if s == 1:
                return r
            return e.shuffle(r, r, [s * q for q in range(vw)])
        cols = [(static_ow0 + u * vw + q) * s + off for q in range(vw)]
        lanes = vw if keep is None else keep
        valid = [q for q in range(lanes) if 0 <= cols[q] < w]
        if not valid:
            return None
        lo, hi = cols[valid[0]], cols[valid[-1]]
        length = hi - lo + 1
        r = e.read(v["x"], [v["n"], ch, row, lo], v["zero"], vector(length))
        idx = [cols[q] - lo if q in valid else length for q in range(vw)]
        if length == vw and idx == list(range(vw)):
            return r
        return e.shuffle(r, e.const("dense<0.0>", vector(length)), idx)

    def tap(self, ch: Value, row: Value, i, j: int, xcols: list, count: int,
            static_ow0: int | None, keep: int | None, accs: list) -> None:
        """accs[f * count + u] += x_u * w[f, c, i, j] for the tap (in place)."""
        e, fb = self.e, self.fb
        xs_ = [self.read(ch, row, j, xcols[u], u, static_ow0,
                         keep if u == count - 1 else None) for u in range(count)]
        if all(x is None for x in xs_):
            return
        for f in range(fb):
            w = e.extract(self.v["wp"], [self.v["fo"], ch, i, j, f])
            wv = e.broadcast(w, vector(self.vw))
            for u in range(count):
                if xs_[u] is not None:
                    k = f * count + u
                    accs[k] = e.fma(xs_[u], wv, accs[k])

    def group(self, ow0, count: int, tin: Value, static_ow0: int | None,
              keep: int | None) -> Value:
        """``count`` vectors of output columns from ``ow0`` for the filter
        block ``fo`` (the last vector stores ``keep`` lanes when given);
        returns the updated row tensor."""
        e, dv, vw, fb, v = self.e, self.dv, self.vw, self.fb, self.v
        _f, c, kh, kw = dv.ws
        s = dv.s[1]
        cols = [e.add(ow0, u * vw) for u in range(count)]
        xcols = [e.mul(col, s) for col in cols]
        n_acc = fb * count
        ch, accs, res = e.loop(e.index(0), e.index(c), e.index(1),
                               [v["iv"][k // count] for k in range(n_acc)])
        if dv.pad[0] or dv.pad[2]:
            # rows of the pad: the row's valid kernel rows [khlo, khhi) (run time)
            kh_, accs, kres = e.loop(v["khlo"], v["khhi"], e.index(1), accs)
            khd = e.mul(kh_, e.index(dv.d[0]))
            xrow = e.add(v["ohs_p"], khd)
            for j in range(kw):
                self.tap(ch, xrow, kh_, j, xcols, count, static_ow0, keep, accs)
            e.end(accs)
            accs = kres
        else:
            for i in range(kh):
                for j in range(kw):
                    self.tap(ch, v["rows"][i], e.index(i), j, xcols, count, static_ow0, keep,
                             accs)
        e.end(accs)
        cur = tin
        for f in range(fb):
            frow = e.add(v["f0"], f)
            for u in range(count):
                val = res[f * count + u]
                if dv.epilogue:
                    val = emit_ops(e, dv.epilogue, dv.epi_result, val, v["ecv"])
                if u == count - 1 and keep is not None and keep < vw:
                    val = e.prefix(val, keep)
                cur = e.write(val, cur, [0, frow, 0, cols[u]])
        return cur


def _static_groups(first: int, end: int, u: int, ow: int, vw: int) -> list:
    """Vectors [first, end) in static groups of at most ``u``: (first vector,
    count, lanes kept by the last one or None)."""
    out, j = [], first
    while j < end:
        cnt = min(u, end - j)
        last = ow - (j + cnt - 1) * vw
        out.append((j, cnt, last if last < vw else None))
        j += cnt
    return out


def row_groups(dv: Direct, vw: int, u: int) -> tuple[list, int, int, list]:
    """(static head groups, first vector of the loop, loop groups of ``u``
    vectors, static tail groups) of an output row. The loop takes whole
    vectors whose every read lies in the row (no left or right pad lane);
    the vectors before it (the left pad) and after it are static code."""
    ow, w, s = dv.os[3], dv.xs[3], dv.s[1]
    kw, d1, left = dv.ws[3], dv.d[1], dv.pad[1]
    span = (vw - 1) * s + 1
    nv = -(-ow // vw)

    def safe(j: int) -> bool:
        if (j + 1) * vw > ow:
            return False
        return all(0 <= j * vw * s + t * d1 - left and j * vw * s + t * d1 - left + span <= w
                   for t in range(kw))
    first = 0
    while first < nv and not safe(first):
        first += 1
    loops = 0
    while first + (loops + 1) * u <= nv and \
            all(safe(j) for j in range(first + loops * u, first + loops * u + u)):
        loops += 1
    if loops == 0:
        return _static_groups(0, nv, u, ow, vw), 0, 0, []
    return (_static_groups(0, first, u, ow, vw), first, loops,
            _static_groups(first + loops * u, nv, u, ow, vw))


def kernel_function(name: str, dv: Direct, target: Target, threads: bool) -> str:
    """``func.func private @name(x, w, out, init | bias, captured...) -> out``."""
    vw = target.vector_width
    fb, u = tile(target)
    n, c, _hp, _wp = dv.xs
    f, _c, kh, kw = dv.ws
    _, _, oh, ow = dv.os
    ot = tensor(dv.os)
    e = Emitter()
    v = {"zero": e.const("0.0", F32)}
    x, w, o = e.param("x", tensor(dv.xs)), e.param("w", tensor(dv.ws)), e.param("o", ot)
    v["x"] = x
    init = e.param("init", F32) if dv.init == "scalar" else e.param("bias", tensor([f]))
    ecaps = [e.param("ecap", F32) for _ in range(dv.n_cap)]
    # weights [F/FB, FB, C, KH, KW] -> [F/FB, C, KH, KW, FB] (a constant: folded)
    et = tensor([f // fb, fb, c, kh, kw])
    wexp = e.op("wexp", f"tensor.expand_shape {w} [[0, 1], [2], [3], [4]] output_shape "
                        f"[{f // fb}, {fb}, {c}, {kh}, {kw}] : {w.type} into {et}", et)
    wpt = tensor([f // fb, c, kh, kw, fb])
    wpe = e.empty(wpt.shape)
    v["wp"] = e.op("wp", f"linalg.transpose ins({wexp} : {et}) outs({wpe} : {wpt}) "
                         "permutation = [0, 2, 3, 4, 1]", wpt)
    v["ecv"] = [e.broadcast(p, vector(vw), base="ecv") for p in ecaps]
    rows = n * oh
    macs = rows * ow * f * c * kh * kw
    par = threads and macs >= DIRECT_THREAD_MIN_MACS and rows > 1
    if par:
        i, oo, res = e.forall(rows, o)
    else:
        i, (oo,), (res,) = e.loop(e.index(0), e.index(rows), e.index(1), [o])
    v["n"] = e.iop("divui", i, e.index(oh))
    ohv = e.rem(i, oh)
    orow = e.extract_slice(oo, [v["n"], 0, ohv, 0], [1, f, 1, ow], base="orow")
    ohs = e.mul(ohv, dv.s[0])
    top, bottom = dv.pad[0], dv.pad[2]
    if top or bottom:
        # kernel rows in the image: kh*d in [top - oh*s, H - 1 + top - oh*s]
        hgt, d0 = dv.xs[2], dv.d[0]
        v["ohs_p"] = e.iop("subi", ohs, e.index(top))
        lo_t = e.iop("subi", e.index(top), ohs)
        lo_d = e.iop("ceildivsi", lo_t, e.index(d0))
        v["khlo"] = e.iop("maxsi", lo_d, e.index(0))
        hi_t = e.iop("subi", e.index(hgt - 1 + top), ohs)
        hi_d = e.iop("floordivsi", hi_t, e.index(d0))
        hi_1 = e.iop("addi", hi_d, e.index(1))
        v["khhi"] = e.iop("minsi", hi_1, e.index(kh))
    else:
        v["rows"] = [e.iop("addi", ohs, e.index(i_ * dv.d[0])) for i_ in range(kh)]
    fo, (rt0,), (rres,) = e.loop(e.index(0), e.index(f // fb), e.index(1), [orow])
    v["fo"] = fo
    v["f0"] = e.iop("muli", fo, e.index(fb))
    v["iv"] = []
    for k in range(fb):
        b = e.extract(init, [e.add(v["f0"], k)]) if dv.init == "bias" else init
        v["iv"].append(e.broadcast(b, vector(vw), base="iv"))
    row = _Row(e, dv, vw, fb, v)
    head, first, loops, tail = row_groups(dv, vw, u)
    cur = rt0
    for j, cnt, keep in head:
        cur = row.group(e.index(j * vw), cnt, cur, j * vw, keep)
    if loops:
        owb, (rt1,), (gres,) = e.loop(e.index(first * vw), e.index((first + loops * u) * vw),
                                      e.index(u * vw), [cur])
        e.end([row.group(owb, u, rt1, None, None)])
        cur = gres
    for j, cnt, keep in tail:
        cur = row.group(e.index(j * vw), cnt, cur, j * vw, keep)
    e.end([cur])
    if par:
        e.end_forall(rres, oo, [v["n"], 0, ohv, 0], [1, f, 1, ow])
    else:
        e.end([e.insert_slice(rres, oo, [v["n"], 0, ohv, 0], [1, f, 1, ow])])
    e(f"return {res} : {ot}")
    return e.function(name, [x, w, o, init] + ecaps, ot)


def direct_convs(module: ir.Module, target: Target, threads: bool = False, plan=None) -> int:
    """Replace every matched stem conv (with a kernel ``plan``: those it
    gave to ``conv_direct``; with its bias add and elementwise epilogue when
    fusable) by a call of the direct kernel (inlined private functions).
    Returns how many were rewritten."""
    from dataclasses import replace

    from onnx_mlir_py.passes.optimize.window_rewrite import inline_kernels
    funcs: dict[tuple, str] = {}
    count = 0
    found_all = [m for op in walk_ops(module.operation, "linalg.conv_2d_nchw_fchw")
                 if (plan is None or assigned(op, "conv_direct"))
                 and (m := _match(op, target)) is not None]
    for dv, operands, erase, last, dead in found_all:
        dynamic = dv.xs[0] is None
        key = (dv, target, threads)
        if key not in funcs:
            name = f"__om_direct_conv_{len(funcs)}"
            if not dynamic:
                add_functions(module, kernel_function(name, dv, target, threads))
            else:
                image = replace(dv, xs=(1,) + dv.xs[1:], os=(1,) + dv.os[1:])
                args = [(list(dv.xs), BATCHED), (list(dv.ws), SHARED), (list(dv.os), BATCHED)]
                args += [([] if isinstance(v.type, ir.F32Type) else list(static_f32(v)), SHARED)
                         for v in operands[3:]]
                add_functions(module, kernel_function(name + "_image", image, target, threads),
                              batch_loop_function(name, name + "_image", args, dest=2))
            funcs[key] = name
        replace_with_call(funcs[key], operands, erase, last, dead)   # dead: the pad
        count += 1
    inline_kernels(module, funcs)
    return count
