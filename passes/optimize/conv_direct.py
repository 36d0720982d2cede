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
from onnx_mlir_py.passes.optimize.row_emit import Emit, emit_ops, ttype, vtype
from onnx_mlir_py.target import Target

MAX_CHANNELS = 4          # input channels of a stem conv
MAX_TAPS = 160            # C*KH*KW (7x7x3 = 147): the unrolled taps of one channel step
THREAD_MIN_MACS = 1 << 20  # the row loop is an scf.forall from this many multiply-adds


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

    def __init__(self, e: Emit, dv: Direct, vw: int, fb: int, xt: str, rt: str, wpt: str):
        self.e, self.dv, self.vw, self.fb = e, dv, vw, fb
        self.xt, self.rt, self.wpt = xt, rt, wpt

    def read(self, row: str, j: int, xcol: str, u: int, static_ow0: int | None,
             keep: int | None) -> str | None:
        """Input vector of tap column ``j`` for the output vector ``u``: lane q
        is x[row, (ow_u + q)*s + j*d - left]; lanes in the pad (or past the
        output row, the last vector's ``keep``) are 0 (None: all of them)."""
        e, dv, vw = self.e, self.dv, self.vw
        s, w = dv.s[1], dv.xs[3]
        off = j * dv.d[1] - dv.pad[1]
        span = (vw - 1) * s + 1
        if static_ow0 is None:             # a loop group: every read lies in the row
            start = xcol if off == 0 else e.val(
                "ix", f"arith.{'addi' if off > 0 else 'subi'} {xcol}, {e.idx(abs(off))} : index")
            r = e.val("x", f"vector.transfer_read %x[%n, %c, {row}, {start}], %zero "
                           f"{{in_bounds = [true]}} : {self.xt}, {vtype(span)}")
            if s == 1:
                return r
            keep_idx = ", ".join(str(s * q) for q in range(vw))
            return e.val("sh", f"vector.shuffle {r}, {r} [{keep_idx}] : {vtype(span)}, "
                               f"{vtype(span)}")
        cols = [(static_ow0 + u * vw + q) * s + off for q in range(vw)]
        lanes = vw if keep is None else keep
        valid = [q for q in range(lanes) if 0 <= cols[q] < w]
        if not valid:
            return None
        lo, hi = cols[valid[0]], cols[valid[-1]]
        length = hi - lo + 1
        r = e.val("x", f"vector.transfer_read %x[%n, %c, {row}, {e.idx(lo)}], %zero "
                       f"{{in_bounds = [true]}} : {self.xt}, {vtype(length)}")
        idx = [cols[q] - lo if q in valid else length for q in range(vw)]
        if length == vw and idx == list(range(vw)):
            return r
        z = e.val("zv", f"arith.constant dense<0.0> : {vtype(length)}")
        return e.val("sh", f"vector.shuffle {r}, {z} [{', '.join(map(str, idx))}] "
                           f": {vtype(length)}, {vtype(length)}")

    def tap(self, row: str, i: str, j: int, xcols: list, count: int,
            static_ow0: int | None, keep: int | None, accs: list) -> None:
        """accs[f * count + u] += x_u * w[f, c, i, j] for the tap (in place)."""
        e, fb, vt = self.e, self.fb, vtype(self.vw)
        xs_ = [self.read(row, j, xcols[u], u, static_ow0,
                         keep if u == count - 1 else None) for u in range(count)]
        if all(v is None for v in xs_):
            return
        for f in range(fb):
            w = e.val("ws", f"tensor.extract %wp[%fo, %c, {i}, {e.idx(j)}, {e.idx(f)}] "
                            f": {self.wpt}")
            wv = e.val("wb", f"vector.broadcast {w} : f32 to {vt}")
            for u in range(count):
                if xs_[u] is not None:
                    k = f * count + u
                    accs[k] = e.val("fma", f"vector.fma {xs_[u]}, {wv}, {accs[k]} : {vt}")

    def group(self, ow0: str, count: int, tin: str, static_ow0: int | None,
              keep: int | None) -> str:
        """``count`` vectors of output columns from ``ow0`` for the filter
        block ``%fo`` (the last vector stores ``keep`` lanes when given);
        returns the updated row tensor."""
        e, dv, vw, fb = self.e, self.dv, self.vw, self.fb
        _f, c, kh, kw = dv.ws
        s = dv.s[1]
        cols = [e.add(ow0, u * vw) for u in range(count)]
        xcols = [e.mul(col, s) for col in cols]
        inits = [f"%iv{f}" for f in range(fb)]
        n_acc = fb * count
        vt = vtype(vw)
        carried = ", ".join(f"%a{k} = {inits[k // count]}" for k in range(n_acc))
        e.k += 1
        res = f"%cr{e.k}"
        e(f"{res}:{n_acc} = scf.for %c = {e.idx(0)} to {e.idx(c)} step {e.idx(1)} "
          f"iter_args({carried}) -> ({', '.join([vt] * n_acc)}) {{")
        e.ind += 1
        accs = [f"%a{k}" for k in range(n_acc)]
        if dv.pad[0] or dv.pad[2]:
            # rows of the pad: the row's valid kernel rows [%khlo, %khhi) (run time)
            e.k += 1
            g = e.k
            kres = f"%kr{g}"
            ty = ", ".join([vt] * n_acc)
            e(f"{kres}:{n_acc} = scf.for %kh{g} = %khlo to %khhi step {e.idx(1)} "
              f"iter_args({', '.join(f'%ka{g}_{k} = {a}' for k, a in enumerate(accs))}) "
              f"-> ({ty}) {{")
            e.ind += 1
            e(f"%khd{g} = arith.muli %kh{g}, {e.idx(dv.d[0])} : index")
            e(f"%xrow{g} = arith.addi %ohs_p, %khd{g} : index")
            accs = [f"%ka{g}_{k}" for k in range(n_acc)]
            for j in range(kw):
                self.tap(f"%xrow{g}", f"%kh{g}", j, xcols, count, static_ow0, keep, accs)
            e(f"scf.yield {', '.join(accs)} : {ty}")
            e.ind -= 1
            e("}")
            accs = [f"{kres}#{k}" for k in range(n_acc)]
        else:
            for i in range(kh):
                for j in range(kw):
                    self.tap(f"%row{i}", e.idx(i), j, xcols, count, static_ow0, keep, accs)
        e(f"scf.yield {', '.join(accs)} : {', '.join([vt] * n_acc)}")
        e.ind -= 1
        e("}")
        cur = tin
        for f in range(fb):
            frow = e.add("%f0", f)
            for u in range(count):
                val = f"{res}#{f * count + u}"
                if dv.epilogue:
                    val = emit_ops(e, dv.epilogue, dv.epi_result, val, "%ecv{}", vw)
                lanes = vw
                if u == count - 1 and keep is not None and keep < vw:
                    lanes = keep
                    val = e.val("part", f"vector.extract_strided_slice {val} {{offsets = [0], "
                                        f"sizes = [{keep}], strides = [1]}} : {vt} to "
                                        f"{vtype(keep)}")
                cur = e.val("t", f"vector.transfer_write {val}, {cur}[{e.idx(0)}, {frow}, "
                                 f"{e.idx(0)}, {cols[u]}] {{in_bounds = [true]}} "
                                 f": {vtype(lanes)}, {self.rt}")
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
    xt, ot, wt = ttype(dv.xs), ttype(dv.os), ttype(dv.ws)
    rt = ttype([1, f, 1, ow])
    wpt = ttype([f // fb, c, kh, kw, fb])
    e = Emit()
    args = [f"%x: {xt}", f"%w: {wt}", f"%o: {ot}"]
    args.append("%init: f32" if dv.init == "scalar" else f"%bias: {ttype([f])}")
    args += [f"%e_cap{k}: f32" for k in range(dv.n_cap)]
    # weights [F/FB, FB, C, KH, KW] -> [F/FB, C, KH, KW, FB] (a constant: folded)
    e(f"%wexp = tensor.expand_shape %w [[0, 1], [2], [3], [4]] output_shape "
      f"[{f // fb}, {fb}, {c}, {kh}, {kw}] : {wt} into {ttype([f // fb, fb, c, kh, kw])}")
    e(f"%wpe = tensor.empty() : {wpt}")
    e(f"%wp = linalg.transpose ins(%wexp : {ttype([f // fb, fb, c, kh, kw])}) outs(%wpe : {wpt}) "
      "permutation = [0, 2, 3, 4, 1]")
    for k in range(dv.n_cap):
        e(f"%ecv{k} = vector.broadcast %e_cap{k} : f32 to {vtype(vw)}")
    rows = n * oh
    macs = rows * ow * f * c * kh * kw
    par = threads and macs >= THREAD_MIN_MACS and rows > 1
    if par:
        e(f"%res = scf.forall (%i) in ({rows}) shared_outs(%oo = %o) -> ({ot}) {{")
    else:
        e(f"%res = scf.for %i = {e.idx(0)} to {e.idx(rows)} step {e.idx(1)} "
          f"iter_args(%oo = %o) -> ({ot}) {{")
    e.ind += 1
    e(f"%n = arith.divui %i, {e.idx(oh)} : index")
    e(f"%oh = arith.remui %i, {e.idx(oh)} : index")
    e(f"%orow = tensor.extract_slice %oo[%n, 0, %oh, 0] [1, {f}, 1, {ow}] [1, 1, 1, 1] "
      f": {ot} to {rt}")
    ohs = e.mul("%oh", dv.s[0])
    top, bottom = dv.pad[0], dv.pad[2]
    if top or bottom:
        # kernel rows in the image: kh*d in [top - oh*s, H - 1 + top - oh*s]
        hgt, d0 = dv.xs[2], dv.d[0]
        e(f"%ohs_p = arith.subi {ohs}, {e.idx(top)} : index")
        e(f"%lo_t = arith.subi {e.idx(top)}, {ohs} : index")
        e(f"%lo_d = arith.ceildivsi %lo_t, {e.idx(d0)} : index")
        e(f"%khlo = arith.maxsi %lo_d, {e.idx(0)} : index")
        e(f"%hi_t = arith.subi {e.idx(hgt - 1 + top)}, {ohs} : index")
        e(f"%hi_d = arith.floordivsi %hi_t, {e.idx(d0)} : index")
        e(f"%hi_1 = arith.addi %hi_d, {e.idx(1)} : index")
        e(f"%khhi = arith.minsi %hi_1, {e.idx(kh)} : index")
    else:
        for i in range(kh):
            e(f"%row{i} = arith.addi {ohs}, {e.idx(i * dv.d[0])} : index")
    e(f"%rres = scf.for %fo = {e.idx(0)} to {e.idx(f // fb)} step {e.idx(1)} "
      f"iter_args(%rt0 = %orow) -> ({rt}) {{")
    e.ind += 1
    e(f"%f0 = arith.muli %fo, {e.idx(fb)} : index")
    for k in range(fb):
        if dv.init == "bias":
            fk = e.add("%f0", k)
            b = e.val("b", f"tensor.extract %bias[{fk}] : {ttype([f])}")
            e(f"%iv{k} = vector.broadcast {b} : f32 to {vtype(vw)}")
        else:
            e(f"%iv{k} = vector.broadcast %init : f32 to {vtype(vw)}")
    row = _Row(e, dv, vw, fb, xt, rt, wpt)
    head, first, loops, tail = row_groups(dv, vw, u)
    cur = "%rt0"
    for j, cnt, keep in head:
        cur = row.group(e.idx(j * vw), cnt, cur, j * vw, keep)
    if loops:
        step = u * vw
        e(f"%gres = scf.for %owb = {e.idx(first * vw)} to {e.idx((first + loops * u) * vw)} "
          f"step {e.idx(step)} iter_args(%rt1 = {cur}) -> ({rt}) {{")
        e.ind += 1
        r = row.group("%owb", u, "%rt1", None, None)
        e(f"scf.yield {r} : {rt}")
        e.ind -= 1
        e("}")
        cur = "%gres"
    for j, cnt, keep in tail:
        cur = row.group(e.idx(j * vw), cnt, cur, j * vw, keep)
    e(f"scf.yield {cur} : {rt}")
    e.ind -= 1
    e("}")
    if par:
        e("scf.forall.in_parallel {")
        e(f"  tensor.parallel_insert_slice %rres into %oo[%n, 0, %oh, 0] [1, {f}, 1, {ow}] "
          f"[1, 1, 1, 1] : {rt} into {ot}")
        e("}")
    else:
        e(f"%ins = tensor.insert_slice %rres into %oo[%n, 0, %oh, 0] [1, {f}, 1, {ow}] "
          f"[1, 1, 1, 1] : {rt} into {ot}")
        e(f"scf.yield %ins : {ot}")
    e.ind -= 1
    e("}")
    e(f"return %res : {ot}")
    consts = [f"    {nm} = arith.constant {v} : index" for v, nm in sorted(e.consts.items())]
    consts.append("    %zero = arith.constant 0.0 : f32")
    head = f"  func.func private @{name}({', '.join(args)}) -> {ot} {{"
    return "\n".join([head] + consts + e.lines + ["  }"])


def direct_convs(module: ir.Module, target: Target, threads: bool = False) -> int:
    """Replace every matched stem conv (with its bias add and elementwise
    epilogue when fusable) by a call of the direct kernel (inlined private
    functions). Returns how many were rewritten."""
    from dataclasses import replace

    from onnx_mlir_py.passes.optimize.window_rewrite import inline_kernels
    funcs: dict[tuple, str] = {}
    count = 0
    found_all = [m for op in walk_ops(module.operation, "linalg.conv_2d_nchw_fchw")
                 if (m := _match(op, target)) is not None]
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
                args += [([] if str(v.type) == "f32" else list(static_f32(v)), SHARED)
                         for v in operands[3:]]
                add_functions(module, kernel_function(name + "_image", image, target, threads),
                              batch_loop_function(name, name + "_image", args, dest=2))
            funcs[key] = name
        replace_with_call(funcs[key], operands, erase, last, dead)   # dead: the pad
        count += 1
    inline_kernels(module, funcs)
    return count
