"""Convs over few input channels (a network's stem: 3 channels, 3x3 to 7x7,
stride 1 or 2) -> a direct, register-tiled kernel.

The im2col form (:mod:`.conv`) spends most of a stem conv on the im2col
copy (a strided gather of 27 to 147 short rows) and on padding K = C*KH*KW
to whole blocks, for a matmul of only 16 to 64 rows: MobileNetV3's
3 -> 16 3x3/2 stem ran at 34 GFLOPS against onnxruntime's 62. Here the
input vectors are read straight from the (zero-padded) image:

    for each output row oh (an scf.forall over the rows when threaded):
      for each block of FB filters fo:
        for each group of U vectors of V output columns:
          acc[f][u] = bias[fo*FB + f] (or the fill scalar)
          for c:                                  (scf.for, accumulators carried)
            for kh, kw:                           (unrolled)
              x_u = x[c, oh*s + kh*d, (ow_u + q)*s + kw*d  for q < V]
                    (one contiguous read of s*V values per column phase,
                     every s-th lane kept by a vector.shuffle)
              acc[f][u] += x_u * broadcast(w[fo, c, kh, kw, f])
          out[fo*FB + f, oh, ow_u ...] = epilogue(acc[f][u])

The weights are repacked at compile time to [F/FB, C, KH, KW, FB] (one
contiguous run of FB scalars per tap). The register tile is FB x U
accumulators: 8 x 3 with 32 vector registers (AVX-512), 4 x 2 with 16.
Groups of U vectors whose reads all lie in the row run in a loop; the rest
of the row is static code, the last vector storing only the lanes of the
row (its reads shortened to the row's end). The conv's zero pad stays a
separate op (the kernel reads the padded image). A per-channel bias add
after the conv is the accumulators' start and an elementwise op after that
(ReLU, HardSwish, Clip, ...) their epilogue, as in the depthwise kernel.
"""
from __future__ import annotations

from dataclasses import dataclass

import mlir.ir as ir

from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.optimize.batch_loop import (BATCHED, SHARED, add_functions,
                                                     batch_loop_function)
from onnx_mlir_py.passes.optimize.kernel_fusion import batch_shape, fill_scalar, static_f32
from onnx_mlir_py.passes.optimize.row_emit import Emit, emit_ops, ttype, vtype
from onnx_mlir_py.passes.optimize.target import Target

MAX_CHANNELS = 4          # input channels of a stem conv
MAX_TAPS = 160            # C*KH*KW (7x7x3 = 147): the unrolled taps of one channel step
THREAD_MIN_MACS = 1 << 20  # the row loop is an scf.forall from this many multiply-adds


@dataclass(frozen=True)
class Direct:
    """What the kernel text depends on (the key of its function)."""
    xs: tuple            # the (padded) input [N, C, Hp, Wp]
    ws: tuple            # weights [F, C, KH, KW]
    os: tuple            # output [N, F, OH, OW]
    s: tuple
    d: tuple
    init: str            # "bias" | "scalar"
    epilogue: tuple = ()
    epi_result: str = ""
    n_cap: int = 0


TILE_512 = (8, 3)


def tile(target: Target) -> tuple[int, int]:
    """(FB filters, U vectors) of the register tile."""
    return TILE_512 if target.num_registers >= 32 else (4, 2)


def _ints(op, name) -> list[int]:
    if name not in op.attributes:
        return [1, 1]
    return [int(x) for x in ir.DenseIntElementsAttr(op.attributes[name])]


def _match(op: ir.Operation, target: Target):
    """``(Direct, operands, ops to erase, op whose result is replaced)`` or None."""
    from onnx_mlir_py.passes.optimize.depthwise import kernel_operands
    from onnx_mlir_py.passes.optimize.kernel_fusion import bias_add_user, zero_fill
    if op.name != "linalg.conv_2d_nchw_fchw" or len(op.operands) != 3 or len(op.results) != 1:
        return None
    xs, ws, os_ = batch_shape(op.operands[0]), static_f32(op.operands[1]), \
        batch_shape(op.operands[2])
    if xs is None or ws is None or os_ is None or 0 in ws + xs[1:] + os_[1:]:
        return None
    if len(xs) != 4 or len(ws) != 4 or (xs[0] is None) != (os_[0] is None):
        return None
    f, c, kh, kw = ws
    s, d = _ints(op, "strides"), _ints(op, "dilations")
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
    bias = bias_add_user(op.results[0]) if zero_fill(op.operands[2]) else None
    init, operands, erase, last, kw_ = kernel_operands(op, op.operands[0], fill, bias)
    dv = Direct(tuple(xs), tuple(ws), tuple(os_), tuple(s), tuple(d), init, **kw_)
    return dv, operands, erase, last


class _Row:
    """The emitter of one output row's groups of vectors."""

    def __init__(self, e: Emit, dv: Direct, vw: int, fb: int, xt: str, rt: str, wpt: str):
        self.e, self.dv, self.vw, self.fb = e, dv, vw, fb
        self.xt, self.rt, self.wpt = xt, rt, wpt

    def group(self, ow0: str, count: int, tin: str, static_ow0: int | None,
              keep: int | None) -> str:
        """``count`` vectors of output columns from ``ow0`` for the filter
        block ``%fo`` (the last vector stores ``keep`` lanes when given);
        returns the updated row tensor."""
        e, dv, vw, fb = self.e, self.dv, self.vw, self.fb
        _f, c, kh, kw = dv.ws
        s, d1 = dv.s[1], dv.d[1]
        wp = dv.xs[3]
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
        for i in range(kh):
            for j in range(kw):
                off = j * d1
                base, phase = off - off % s, off % s
                xs_ = []
                for u in range(count):
                    # read per tap (not kept across taps: fewer live registers)
                    length = vw if s == 1 else s * vw
                    if static_ow0 is not None:
                        length = min(length, wp - ((static_ow0 + u * vw) * s + base))
                    xcol = e.add(xcols[u], base)
                    r = e.val("x", f"vector.transfer_read %x[%n, %c, %row{i}, {xcol}], %zero "
                                   f"{{in_bounds = [true]}} : {self.xt}, {vtype(length)}")
                    if s == 1 and length == vw:
                        xs_.append(r)
                        continue
                    idx = [min(phase + s * q, length - 1) for q in range(vw)]
                    xs_.append(e.val("sh", f"vector.shuffle {r}, {r} [{', '.join(map(str, idx))}] "
                                           f": {vtype(length)}, {vtype(length)}"))
                for f in range(fb):
                    w = e.val("ws", f"tensor.extract %wp[%fo, %c, {e.idx(i)}, {e.idx(j)}, "
                                   f"{e.idx(f)}] : {self.wpt}")
                    wv = e.val("wb", f"vector.broadcast {w} : f32 to {vt}")
                    for u in range(count):
                        k = f * count + u
                        accs[k] = e.val("fma", f"vector.fma {xs_[u]}, {wv}, {accs[k]} : {vt}")
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


def row_groups(dv: Direct, vw: int, u: int) -> tuple[int, list[tuple[int, int, int | None]]]:
    """(groups of ``u`` whole vectors run in the loop, then the static groups
    (first vector, count, lanes kept by the last one or None))."""
    ow, wp, s = dv.os[3], dv.xs[3], dv.s[1]
    kw, d1 = dv.ws[3], dv.d[1]
    top = (kw - 1) * d1
    base_max = top - top % s
    length = vw if s == 1 else s * vw
    nv = -(-ow // vw)

    def safe(j: int) -> bool:     # whole vector, every read in the row
        return (j + 1) * vw <= ow and j * vw * s + base_max + length <= wp
    main = 0
    while (main + 1) * u <= nv and all(safe(j) for j in range(main * u, main * u + u)):
        main += 1
    rest, j = [], main * u
    while j < nv:
        cnt = min(u, nv - j)
        last = ow - (j + cnt - 1) * vw
        rest.append((j, cnt, last if last < vw else None))
        j += cnt
    return main, rest


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
    main, rest = row_groups(dv, vw, u)
    cur = "%rt0"
    if main:
        step = u * vw
        e(f"%gres = scf.for %owb = {e.idx(0)} to {e.idx(main * step)} step {e.idx(step)} "
          f"iter_args(%rt1 = %rt0) -> ({rt}) {{")
        e.ind += 1
        r = row.group("%owb", u, "%rt1", None, None)
        e(f"scf.yield {r} : {rt}")
        e.ind -= 1
        e("}")
        cur = "%gres"
    for j, cnt, keep in rest:
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

    from mlir.dialects import func

    from onnx_mlir_py.passes.optimize.window_rewrite import inline_kernels
    funcs: dict[tuple, str] = {}
    count = 0
    found_all = [m for op in walk_ops(module.operation, "linalg.conv_2d_nchw_fchw")
                 if (m := _match(op, target)) is not None]
    for dv, operands, erase, last in found_all:
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
        with ir.InsertionPoint(last), ir.Location.fused([o.location for o in erase]):
            call = func.CallOp([last.results[0].type], ir.FlatSymbolRefAttr.get(funcs[key]),
                               operands)
        last.results[0].replace_all_uses_with(call.results[0])
        for o in reversed(erase):
            o.erase()
        count += 1
    inline_kernels(module, funcs)
    return count
