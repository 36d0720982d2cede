"""Convolutions with dynamic spatial dims -> im2col + the packed kernel.

``linalg.conv_2d_nchw_fchw`` (f32, static weights and channel counts) whose
H/W (and maybe batch) are only known at run time runs, per image (the
batch loop of :mod:`.batch_loop`), as

    col[kp, mp]   = im2col(x)        rows c*KH*KW + kh*KW + kw (< kp = whole k blocks),
                                     columns oh*OW + ow (< mp = whole nb blocks, run time)
    acc[Fp, mp]   = bias[f] (or 0)   Fp = whole mb blocks
    acc           = packed contraction (W [MO, mb, KO, kb], col viewed [KO, kb, NO, nb])
    out[0, f, oh, :] = acc[f, oh*OW : oh*OW + OW]     (row copies)

The contraction is the static kernel's (:func:`.matmul_text.contraction`,
B viewed in place, column blocks outermost) with a run-time column block
count: its schedule tiles the block loops by 1, so every tile is static and
vectorizes as in the static kernel. Rows of a run-time length (im2col
reads, the copy out) are vector code: whole chunks of ``V`` lanes in a loop,
then one masked chunk for the remainder (a mask of 0 lanes does nothing).
A stride s > 1 reads (V-1)*s+1 contiguous values and keeps every s-th
(``vector.shuffle``). The result is copied out rather than viewed: an
``expand_shape`` of [F, OH*OW] into [1, F, OH, OW] has two run-time sizes in
one group, which ``expand-strided-metadata`` does not take, and the
columns are padded to whole blocks anyway (the copy is ~1/(2*C*KH*KW) of
the work).
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.optimize.batch_loop import (BATCHED, SHARED, add_functions,
                                                     batch_loop_function)
from onnx_mlir_py.passes.optimize.kernel_fusion import (bias_add_user, epilogue_user,
                                                        fill_scalar, replace_with_call,
                                                        static_f32, window_ints, zero_fill)
from onnx_mlir_py.passes.optimize.kernel_emit import tensor_type
from onnx_mlir_py.passes.optimize.matmul_text import contraction
from onnx_mlir_py.passes.optimize.row_emit import emit_ops
from onnx_mlir_py.target import Target


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _dyn_shape(v: ir.Value) -> list[int | None] | None:
    t = v.type
    if not isinstance(t, ir.RankedTensorType) or str(t.element_type) != "f32" or t.rank != 4:
        return None
    dyn = ir.ShapedType.get_dynamic_size()
    return [None if d == dyn else d for d in t.shape]


def signature(op: ir.Operation):
    """(x shape, w shape, out shape, strides, dilations) of a plain f32
    NCHW conv whose spatial dims are (partly) dynamic, channels and weights
    static, output starting from a fill of 0.0; else None."""
    if op.name != "linalg.conv_2d_nchw_fchw" or len(op.operands) != 3 or len(op.results) != 1:
        return None
    x, w, o = op.operands
    xs, ws, os_ = _dyn_shape(x), static_f32(w), _dyn_shape(o)
    if xs is None or ws is None or os_ is None or 0 in ws:
        return None
    if None in (xs[1], os_[1]) or None not in xs[2:] + os_[2:]:
        return None           # dynamic channels: not handled; static H/W: conv.py
    if not zero_fill(o):
        return None
    return (tuple(xs), tuple(ws), tuple(os_), tuple(window_ints(op, "strides")),
            tuple(window_ints(op, "dilations")))


class _Emit:
    """Lines of a function body; index constants are declared at its top
    (they dominate every use, inside loops or not)."""

    def __init__(self):
        self.lines: list[str] = []
        self.consts: dict[int, str] = {}
        self.k = 0

    def __call__(self, text: str) -> None:
        self.lines.append(text)

    def val(self, base: str, text: str) -> str:
        """``%v_<base><k> = text`` (fresh); for :func:`.row_emit.emit_ops`."""
        self.k += 1
        nm = f"%v_{base}{self.k}"
        self.lines.append(f"        {nm} = {text}")
        return nm

    def c(self, v: int) -> str:
        if v not in self.consts:
            self.consts[v] = f"%k{v}"
        return self.consts[v]

    def text(self) -> str:
        head = [f"    %k{v} = arith.constant {v} : index" for v in self.consts]
        return "\n".join(self.lines[:1] + head + self.lines[1:])


def _row_copy(e: _Emit, tag: str, dst: str, dst_t: str, dst_idx, src: str, src_t: str,
              src_idx, length: str, lanes: int, stride: int, ind: str, post=None) -> str:
    """Copy ``length`` (run-time) values ``src[..., s0 + q*stride]`` ->
    ``dst[..., d0 + q]``: ``src_idx``/``dst_idx`` are index lists whose last
    entry (s0, d0) is the row start. Whole chunks of ``lanes`` in a loop,
    then one masked chunk. Returns the new ``dst`` value."""
    span = (lanes - 1) * stride + 1
    vt, st = f"vector<{lanes}xf32>", f"vector<{span}xf32>"
    keep = ", ".join(str(q * stride) for q in range(lanes))
    *spre, s0 = src_idx
    *dpre, d0 = dst_idx
    p = f"%{tag}_"

    def read(col: str, mask: str | None, sfx: str, at: str) -> str:
        if stride != 1:
            e(f"{at}{p}sc{sfx} = arith.muli {col}, {e.c(stride)} : index")
            col = f"{p}sc{sfx}"
        e(f"{at}{p}sa{sfx} = arith.addi {col}, {s0} : index")
        idx = ", ".join(spre + [f"{p}sa{sfx}"])
        m = f", {mask}" if mask else ""
        e(f"{at}{p}s{sfx} = vector.transfer_read {src}[{idx}], %zero{m} {{in_bounds = [true]}} "
          f": {src_t}, {st if stride != 1 else vt}")
        if stride == 1:
            return f"{p}s{sfx}"
        e(f"{at}{p}v{sfx} = vector.shuffle {p}s{sfx}, {p}s{sfx} [{keep}] : {st}, {st}")
        return f"{p}v{sfx}"

    e(f"{ind}{p}r = arith.remui {length}, {e.c(lanes)} : index")
    e(f"{ind}{p}full = arith.subi {length}, {p}r : index")
    e(f"{ind}{p}l = scf.for {p}q = {e.c(0)} to {p}full step {e.c(lanes)} "
      f"iter_args({p}u = {dst}) -> ({dst_t}) {{")
    v = read(f"{p}q", None, "", ind + "  ")
    if post is not None:
        v = post(v)
    e(f"{ind}  {p}da = arith.addi {p}q, {d0} : index")
    e(f"{ind}  {p}w = vector.transfer_write {v}, {p}u[{', '.join(dpre + [f'{p}da'])}] "
      f"{{in_bounds = [true]}} : {vt}, {dst_t}")
    e(f"{ind}  scf.yield {p}w : {dst_t}\n{ind}}}")
    # the remainder: one masked chunk (no lanes when the length is whole chunks)
    e(f"{ind}{p}m = vector.create_mask {p}r : vector<{lanes}xi1>")
    smask = f"{p}m"
    if stride != 1:
        e(f"{ind}{p}rs = arith.muli {p}r, {e.c(stride)} : index")
        e(f"{ind}{p}rs1 = arith.subi {p}rs, {e.c(stride - 1)} : index")
        e(f"{ind}{p}rs2 = arith.maxsi {p}rs1, {e.c(0)} : index")
        e(f"{ind}{p}ms = vector.create_mask {p}rs2 : vector<{span}xi1>")
        smask = f"{p}ms"
    v = read(f"{p}full", smask, "t", ind)
    if post is not None:
        v = post(v)
    e(f"{ind}{p}dt = arith.addi {p}full, {d0} : index")
    e(f"{ind}{p}wt = vector.transfer_write {v}, {p}l[{', '.join(dpre + [f'{p}dt'])}], "
      f"{p}m {{in_bounds = [true]}} : {vt}, {dst_t}")
    return f"{p}wt"


def image_function(name: str, xs, ws, os_, s, d, tile: tuple[int, int, int],
                   bias: bool, threads: bool, epilogue: tuple = (), epi_result: str = "",
                   n_cap: int = 0) -> str:
    """``func.func private @name(x [1, C, H, W], w, out [1, F, OH, OW][, bias [F]],
    captured f32...) -> out``: one image (H, W, OH, OW may be dynamic), written
    into ``out``; ``epilogue`` (an elementwise op after the conv and its
    bias, on ``n_cap`` captured scalars) applied as the result is copied out."""
    mb, nb, kb = tile
    _, c, _, _ = xs
    f, _, kh_, kw_ = ws
    taps, k = kh_ * kw_, c * kh_ * kw_
    kp, fp = _cdiv(k, kb) * kb, _cdiv(f, mb) * mb
    x1, o1 = [1] + list(xs[1:]), [1] + list(os_[1:])
    xt, ot, wt = tensor_type(x1), tensor_type(o1), tensor_type(ws)
    ct, acct = tensor_type([kp, None]), tensor_type([fp, None])
    e = _Emit()
    caps = "".join(f", %e_cap{k}: f32" for k in range(n_cap))
    e(f"  func.func private @{name}(%xin: {xt}, %wgt: {wt}, %dst: {ot}"
      + (f", %b: {tensor_type([f])}" if bias else "") + f"{caps}) -> {ot} {{")
    e("    %zero = arith.constant 0.0 : f32")
    for i in range(n_cap):      # (not k: the im2col's K below)
        e(f"    %ecv{i} = vector.broadcast %e_cap{i} : f32 to vector<{nb}xf32>")
    e(f"    %oh = tensor.dim %dst, {e.c(2)} : {ot}")
    e(f"    %ow = tensor.dim %dst, {e.c(3)} : {ot}")
    e("    %m = arith.muli %oh, %ow : index")
    e(f"    %no = arith.ceildivui %m, {e.c(nb)} : index")
    e(f"    %mp = arith.muli %no, {e.c(nb)} : index")
    e("    %mpad = arith.subi %mp, %m : index")
    # im2col, zeros in the padding rows (k..kp) and columns (m..mp)
    e(f"    %ce = tensor.empty(%mp) : {ct}")
    init = "%ce"
    if kp != k:
        rt = tensor_type([kp - k, None])
        e(f"    %zr_s = tensor.extract_slice {init}[{k}, 0] [{kp - k}, %mp] [1, 1] : {ct} to {rt}")
        e(f"    %zr_f = linalg.fill ins(%zero : f32) outs(%zr_s : {rt}) -> {rt}")
        e(f"    %zr = tensor.insert_slice %zr_f into {init}[{k}, 0] [{kp - k}, %mp] [1, 1] "
          f": {rt} into {ct}")
        init = "%zr"
    zt = tensor_type([k, None])
    e(f"    %zc_s = tensor.extract_slice {init}[0, %m] [{k}, %mpad] [1, 1] : {ct} to {zt}")
    e(f"    %zc_f = linalg.fill ins(%zero : f32) outs(%zc_s : {zt}) -> {zt}")
    e(f"    %zc = tensor.insert_slice %zc_f into {init}[0, %m] [{k}, %mpad] [1, 1] "
      f": {zt} into {ct}")
    tt = tensor_type([taps, None])
    if threads:
        e(f"    %col = scf.forall (%ch) in ({c}) shared_outs(%co = %zc) -> ({ct}) {{")
    else:
        e(f"    %col = scf.for %ch = {e.c(0)} to {e.c(c)} step {e.c(1)} "
          f"iter_args(%co = %zc) -> ({ct}) {{")
    e(f"      %row0 = arith.muli %ch, {e.c(taps)} : index")
    e(f"      %cs = tensor.extract_slice %co[%row0, 0] [{taps}, %mp] [1, 1] : {ct} to {tt}")
    e(f"      %cr = scf.for %r = {e.c(0)} to %oh step {e.c(1)} iter_args(%ar = %cs) -> ({tt}) {{")
    e("        %dcol = arith.muli %r, %ow : index")
    e(f"        %rs = arith.muli %r, {e.c(s[0])} : index")
    # the taps are loops (unrolled, the slice chains made bufferization's
    # analysis run for minutes on a 7x7 kernel)
    e(f"        %ti = scf.for %kh = {e.c(0)} to {e.c(kh_)} step {e.c(1)} iter_args(%ah = %ar) "
      f"-> ({tt}) {{")
    e(f"          %hd = arith.muli %kh, {e.c(d[0])} : index")
    e("          %hrow = arith.addi %rs, %hd : index")
    e(f"          %t0 = arith.muli %kh, {e.c(kw_)} : index")
    e(f"          %tj = scf.for %kw = {e.c(0)} to {e.c(kw_)} step {e.c(1)} iter_args(%aw = %ah) "
      f"-> ({tt}) {{")
    e("            %tap = arith.addi %t0, %kw : index")
    e(f"            %wd = arith.muli %kw, {e.c(d[1])} : index")
    cur = _row_copy(e, "i", "%aw", tt, ["%tap", "%dcol"], "%xin", xt,
                    [e.c(0), "%ch", "%hrow", "%wd"], "%ow", nb, s[1], "            ")
    e(f"            scf.yield {cur} : {tt}\n          }}")
    e(f"          scf.yield %tj : {tt}\n        }}")
    e(f"        scf.yield %ti : {tt}\n      }}")
    if threads:
        e("      scf.forall.in_parallel {")
        e(f"        tensor.parallel_insert_slice %cr into %co[%row0, 0] [{taps}, %mp] [1, 1] "
          f": {tt} into {ct}\n      }}\n    }}")
    else:
        e(f"      %ci = tensor.insert_slice %cr into %co[%row0, 0] [{taps}, %mp] [1, 1] "
          f": {tt} into {ct}")
        e(f"      scf.yield %ci : {ct}\n    }}")
    # weights [Fp, kp] (a constant after inlining: folded at compile time)
    e(f"    %wk = tensor.collapse_shape %wgt [[0], [1, 2, 3]] : {wt} into {tensor_type([f, k])}")
    wv = "%wk"
    if (fp, kp) != (f, k):
        e(f"    %wp = tensor.pad %wk low[0, 0] high[{fp - f}, {kp - k}] {{\n"
          "    ^bb0(%p0: index, %p1: index):\n      tensor.yield %zero : f32\n"
          f"    }} : {tensor_type([f, k])} to {tensor_type([fp, kp])}")
        wv = "%wp"
    a4 = [fp // mb, mb, kp // kb, kb]
    e(f"    %a4 = tensor.expand_shape {wv} [[0, 1], [2, 3]] output_shape {a4} "
      f": {tensor_type([fp, kp])} into {tensor_type(a4)}")
    b4 = [kp // kb, kb, None, nb]
    e(f"    %b4 = tensor.expand_shape %col [[0, 1], [2, 3]] output_shape "
      f"[{kp // kb}, {kb}, %no, {nb}] : {ct} into {tensor_type(b4)}")
    # accumulators: the bias (zero-padded to Fp rows) broadcast along the columns, or 0
    e(f"    %acce = tensor.empty(%mp) : {acct}")
    if bias:
        bv = "%b"
        if fp != f:
            e(f"    %bp = tensor.pad %b low[0] high[{fp - f}] {{\n    ^bb0(%p2: index):\n"
              f"      tensor.yield %zero : f32\n    }} : {tensor_type([f])} to {tensor_type([fp])}")
            bv = "%bp"
        e("    %accum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, "
          "affine_map<(i, j) -> (i, j)>], iterator_types = [\"parallel\", \"parallel\"]} "
          f"ins({bv} : {tensor_type([fp])}) outs(%acce : {acct}) {{\n"
          f"    ^bb0(%bv: f32, %bo: f32):\n      linalg.yield %bv : f32\n    }} -> {acct}")
    else:
        e(f"    %accum = linalg.fill ins(%zero : f32) outs(%acce : {acct}) -> {acct}")
    c4 = [fp // mb, mb, None, nb]
    e(f"    %c4 = tensor.expand_shape %accum [[0, 1], [2, 3]] output_shape "
      f"[{fp // mb}, {mb}, %no, {nb}] : {acct} into {tensor_type(c4)}")
    e(contraction("%r4", "%a4", "%b4", "%c4", a4, b4, c4, False, False, True))
    e(f"    %res = tensor.collapse_shape %r4 [[0, 1], [2, 3]] : {tensor_type(c4)} into {acct}")
    # the copy out: row oh of channel f is res[f, oh*OW : oh*OW + OW]
    # (with threads the channels split across them: one plane each)
    post = (lambda v: emit_ops(e, epilogue, epi_result, v, "%ecv{}", nb)) if epilogue else None
    if threads:
        pt = tensor_type([1, 1, None, None])
        e(f"    %out = scf.forall (%f) in ({f}) shared_outs(%of = %dst) -> ({ot}) {{")
        e(f"      %opl = tensor.extract_slice %of[0, %f, 0, 0] [1, 1, %oh, %ow] [1, 1, 1, 1] "
          f": {ot} to {pt}")
        dst, dt, didx = "%opl", pt, [e.c(0), e.c(0), "%r", e.c(0)]
    else:
        e(f"    %out = scf.for %f = {e.c(0)} to {e.c(f)} step {e.c(1)} iter_args(%of = %dst) "
          f"-> ({ot}) {{")
        dst, dt, didx = "%of", ot, [e.c(0), "%f", "%r", e.c(0)]
    e(f"      %orow = scf.for %r = {e.c(0)} to %oh step {e.c(1)} iter_args(%or = {dst}) -> ({dt}) {{")
    e("        %o0 = arith.muli %r, %ow : index")
    cur = _row_copy(e, "o", "%or", dt, didx, "%res", acct,
                    ["%f", "%o0"], "%ow", nb, 1, "        ", post=post)
    e(f"        scf.yield {cur} : {dt}\n      }}")
    if threads:
        e("      scf.forall.in_parallel {")
        e(f"        tensor.parallel_insert_slice %orow into %of[0, %f, 0, 0] [1, 1, %oh, %ow] "
          f"[1, 1, 1, 1] : {pt} into {ot}\n      }}\n    }}")
    else:
        e(f"      scf.yield %orow : {ot}\n    }}")
    e(f"    return %out : {ot}\n  }}")
    return e.text()


def _functions(module: ir.Module, name: str, sig, tile, bias: bool, threads: bool,
               epi=None) -> str:
    xs, ws, os_, s, d = sig
    kw = dict(epilogue=epi[1], epi_result=epi[2], n_cap=len(epi[3])) if epi else {}
    image = image_function(name + "_image", xs, ws, os_, s, d, tile, bias, threads, **kw)
    args = [(list(xs), BATCHED), (list(ws), SHARED), (list(os_), BATCHED)]
    if bias:
        args.append(([os_[1]], SHARED))
    args += [([], SHARED)] * kw.get("n_cap", 0)
    add_functions(module, image, batch_loop_function(name, name + "_image", args, dest=2,
                                                            parallel=threads))
    return name


def dynamic_convs_to_matmul(module: ir.Module, target: Target, threads: bool = False) -> int:
    """Rewrite every plain f32 NCHW conv with dynamic spatial dims (see
    :func:`signature`) as im2col + the packed contraction, per image; its
    bias add and an elementwise op after it (ReLU, Clip, ...) are fused.
    Returns how many were rewritten."""
    from mlir.passmanager import PassManager
    funcs: dict[tuple, str] = {}
    convs = [(op, sig) for op in walk_ops(module.operation) if (sig := signature(op)) is not None]
    for op, sig in convs:
        fused = bias_add_user(op.results[0])
        last = fused[0] if fused is not None else op
        epi = epilogue_user(last.results[0])
        key = sig + (fused is not None, epi[1:3] if epi else None, len(epi[3]) if epi else 0)
        if key not in funcs:
            funcs[key] = _functions(module, f"__om_dconv_{len(funcs)}", sig, target.matmul_tile,
                                    fused is not None, threads, epi)
        # (x, w, out[, bias], captured...): the fill's destination; every element is written
        args = list(op.operands[:2]) + [fill_scalar(op.operands[2])[1]]
        if fused is not None:
            args.append(fused[1])
        # at the chain's last op: the epilogue's captured scalars may be defined after the conv
        chain = [op] + ([fused[0]] if fused is not None else []) + ([epi[0]] if epi else [])
        replace_with_call(funcs[key], args + (list(epi[3]) if epi else []), chain, chain[-1])
    if funcs:
        PassManager.parse("builtin.module(inline, symbol-dce)", module.context).run(module.operation)
    return len(convs)
