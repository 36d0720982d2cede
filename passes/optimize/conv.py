"""Convolutions -> im2col + (batch_)matmul, so they run on the packed kernel.

``linalg.conv_2d_nchw_fchw`` (static f32) with input ``[N, C, H, W]``
(already zero-padded by the lowering), weights ``[F, C, KH, KW]``, strides s
and dilations d:

    col[n, c, kh, kw, oh, ow] = x[n, c, oh*s + kh*d, ow*s + kw*d]
        per (kh, kw): a linalg.copy of a strided tensor.extract_slice of x
        into the matching slice of col (in place after bufferization;
        vectorized by the elementwise step)
    out[n] = W2[F, C*KH*KW] @ col[n][C*KH*KW, OH*OW]     (NCHW output as is)

N = 1 becomes a ``linalg.matmul``, N > 1 a ``linalg.batch_matmul`` with the
(small) weight matrix broadcast over the batch. A 1x1 stride-1 conv needs no
im2col copy (col is a view of x). ``linalg.conv_2d_ngchw_gfchw`` (grouped)
is the same per group, batched over N*G. Weight reshapes/broadcasts of
constants are folded at compile time afterwards.
"""
from __future__ import annotations

import mlir.ir as ir

from .schedule import walk


def _t(shape) -> str:
    return "tensor<" + "x".join(str(s) for s in shape) + "xf32>"


def _ints(op, name) -> list[int]:
    if name not in op.attributes:
        return [1, 1]
    return [int(x) for x in ir.DenseIntElementsAttr(op.attributes[name])]


def _static(v) -> list[int] | None:
    t = v.type
    if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape \
            or str(t.element_type) != "f32":
        return None
    return list(t.shape)


# im2col copies of at least this many elements are split across threads
IM2COL_THREAD_MIN = 1 << 16


def _im2col(lines, x: str, xs, kh_, kw_, oh, ow, s, d, threads: bool = False) -> str:
    """Append the im2col of ``x`` ([B, C, H, W]); returns the col value name
    ([B, C*KH*KW, OH*OW]).

    Written as vector code: for each channel (an ``scf.forall`` when
    ``threads`` and the copy is large), image, tap (kh, kw) and output row,
    one ``vector.transfer_read`` of the input row and one
    ``vector.transfer_write`` into col. A stride-s row is read as
    (OW-1)*s+1 contiguous values and every s-th one is kept
    (``vector.shuffle``)."""
    b, c = xs[0], xs[1]
    if (kh_, kw_) == (1, 1) and s == [1, 1] and (xs[2], xs[3]) == (oh, ow):
        lines.append(f"    %col = tensor.collapse_shape {x} [[0], [1], [2, 3]] "
                     f": {_t(xs)} into {_t([b, c, oh * ow])}")
        return "%col"
    full = [b, c, kh_, kw_, oh, ow]
    one = [b, 1, kh_, kw_, oh, ow]
    span = (ow - 1) * s[1] + 1
    par = threads and b * c * kh_ * kw_ * oh * ow >= IM2COL_THREAD_MIN
    lines.append(f"    %ce = tensor.empty() : {_t(full)}")
    lines += ["    %i2c_0 = arith.constant 0 : index", "    %i2c_1 = arith.constant 1 : index",
              f"    %i2c_b = arith.constant {b} : index", f"    %i2c_oh = arith.constant {oh} : index",
              f"    %i2c_c = arith.constant {c} : index", "    %i2c_pad = arith.constant 0.0 : f32"]
    if par:
        lines.append(f"    %colt = scf.forall (%ch) in ({c}) shared_outs(%co = %ce) -> ({_t(full)}) {{")
    else:
        lines.append(f"    %colt = scf.for %ch = %i2c_0 to %i2c_c step %i2c_1 "
                     f"iter_args(%co = %ce) -> ({_t(full)}) {{")
    lines.append(f"      %cs = tensor.extract_slice %co[0, %ch, 0, 0, 0, 0] {one} "
                 f"[1, 1, 1, 1, 1, 1] : {_t(full)} to {_t(one)}")
    lines.append(f"      %cb = scf.for %ib = %i2c_0 to %i2c_b step %i2c_1 iter_args(%ab = %cs) -> ({_t(one)}) {{")
    lines.append(f"      %cr = scf.for %r = %i2c_0 to %i2c_oh step %i2c_1 iter_args(%ar = %ab) -> ({_t(one)}) {{")
    cur = "%ar"
    for i in range(kh_):
        lines.append(f"        %row{i} = affine.apply affine_map<(r) -> (r * {s[0]} + {i * d[0]})>(%r)")
        for j in range(kw_):
            v = f"%v{i}_{j}"
            if s[1] == 1:
                lines.append(f"        {v} = vector.transfer_read {x}[%ib, %ch, %row{i}, %i2c_w{j}], "
                             f"%i2c_pad {{in_bounds = [true]}} : {_t(xs)}, vector<{ow}xf32>")
            else:
                w = f"%w{i}_{j}"
                lines.append(f"        {w} = vector.transfer_read {x}[%ib, %ch, %row{i}, %i2c_w{j}], "
                             f"%i2c_pad {{in_bounds = [true]}} : {_t(xs)}, vector<{span}xf32>")
                mask = ", ".join(str(q * s[1]) for q in range(ow))
                lines.append(f"        {v} = vector.shuffle {w}, {w} [{mask}] "
                             f": vector<{span}xf32>, vector<{span}xf32>")
            nxt = f"%t{i}_{j}"
            lines.append(f"        {nxt} = vector.transfer_write {v}, {cur}[%ib, %i2c_0, "
                         f"%i2c_k{i}, %i2c_k{j}, %r, %i2c_0] {{in_bounds = [true]}} "
                         f": vector<{ow}xf32>, {_t(one)}")
            cur = nxt
    lines.append(f"        scf.yield {cur} : {_t(one)}\n      }}")
    lines.append(f"        scf.yield %cr : {_t(one)}\n      }}")
    if par:
        lines.append("      scf.forall.in_parallel {")
        lines.append(f"        tensor.parallel_insert_slice %cb into %co[0, %ch, 0, 0, 0, 0] {one} "
                     f"[1, 1, 1, 1, 1, 1] : {_t(one)} into {_t(full)}\n      }}\n    }}")
    else:
        lines.append(f"      %ci = tensor.insert_slice %cb into %co[0, %ch, 0, 0, 0, 0] {one} "
                     f"[1, 1, 1, 1, 1, 1] : {_t(one)} into {_t(full)}")
        lines.append(f"      scf.yield %ci : {_t(full)}\n    }}")
    # index constants used above: column offsets and tap indices
    decl = [f"    %i2c_w{j} = arith.constant {j * d[1]} : index" for j in range(kw_)]
    decl += [f"    %i2c_k{t} = arith.constant {t} : index" for t in range(max(kh_, kw_))]
    at = next(k for k, ln in enumerate(lines) if "%i2c_pad = arith.constant" in ln)
    lines[at + 1:at + 1] = decl
    lines.append(f"    %col = tensor.collapse_shape %colt [[0], [1, 2, 3], [4, 5]] "
                 f": {_t(full)} into {_t([b, c * kh_ * kw_, oh * ow])}")
    return "%col"


def conv_function(name: str, xs, ws, os_, s, d, groups: int, threads: bool = False) -> str:
    """``func.func private @name(x, w, init) -> out`` (NCHW / [G, F/G, C/G, KH, KW]
    for groups > 1) as im2col + (batch_)matmul."""
    lines = []
    if groups == 1:
        n, c, h, w = xs
        f, _, kh_, kw_ = ws
        oh, ow = os_[2], os_[3]
        xin, wsig, osig = xs, ws, os_
        x = "%x"
        bsz = n
        fg, k = f, c * kh_ * kw_
    else:
        n, g, cg, h, w = xs
        _, fg, _, kh_, kw_ = ws
        oh, ow = os_[3], os_[4]
        xin, wsig, osig = xs, ws, os_
        lines_pre = f"    %x4 = tensor.collapse_shape %x [[0, 1], [2], [3], [4]] : {_t(xs)} into {_t([n * g, cg, h, w])}"
        x = "%x4"
        bsz = n * g
        k = cg * kh_ * kw_
    lines.append(f"  func.func private @{name}(%x: {_t(xin)}, %w: {_t(wsig)}, %o: {_t(osig)}) "
                 f"-> {_t(osig)} {{")
    if groups != 1:
        lines.append(lines_pre)
        col = _im2col(lines, x, [n * g, cg, h, w], kh_, kw_, oh, ow, s, d, threads)
    else:
        col = _im2col(lines, x, xs, kh_, kw_, oh, ow, s, d, threads)
    m = oh * ow
    if groups == 1:
        lines.append(f"    %w2 = tensor.collapse_shape %w [[0], [1, 2, 3]] : {_t(ws)} into {_t([fg, k])}")
        lines.append(f"    %o3 = tensor.collapse_shape %o [[0], [1], [2, 3]] : {_t(os_)} into {_t([n, fg, m])}")
    else:
        lines.append(f"    %wg = tensor.collapse_shape %w [[0], [1], [2, 3, 4]] : {_t(ws)} into {_t([g, fg, k])}")
        lines.append(f"    %o3 = tensor.collapse_shape %o [[0, 1], [2], [3, 4]] : {_t(os_)} into {_t([n * g, fg, m])}")
    if bsz == 1:
        lines.append(f"    %col2 = tensor.collapse_shape {col} [[0, 1], [2]] : {_t([1, k, m])} into {_t([k, m])}")
        lines.append(f"    %o2 = tensor.collapse_shape %o3 [[0, 1], [2]] : {_t([1, fg, m])} into {_t([fg, m])}")
        wm = "%w2" if groups == 1 else "%wg2"
        if groups != 1:
            lines.append(f"    %wg2 = tensor.collapse_shape %wg [[0, 1], [2]] : {_t([1, fg, k])} into {_t([fg, k])}")
        lines.append(f"    %r2 = linalg.matmul ins({wm}, %col2 : {_t([fg, k])}, {_t([k, m])}) "
                     f"outs(%o2 : {_t([fg, m])}) -> {_t([fg, m])}")
        lines.append(f"    %r3 = tensor.expand_shape %r2 [[0, 1], [2]] output_shape [1, {fg}, {m}] "
                     f": {_t([fg, m])} into {_t([1, fg, m])}")
    else:
        if groups == 1:
            lines.append(f"    %wbe = tensor.empty() : {_t([n, fg, k])}")
            lines.append(f"    %wb = linalg.broadcast ins(%w2 : {_t([fg, k])}) outs(%wbe : {_t([n, fg, k])}) dimensions = [0]")
        else:
            lines.append(f"    %wbe = tensor.empty() : {_t([n, g, fg, k])}")
            lines.append(f"    %wb4 = linalg.broadcast ins(%wg : {_t([g, fg, k])}) outs(%wbe : {_t([n, g, fg, k])}) dimensions = [0]")
            lines.append(f"    %wb = tensor.collapse_shape %wb4 [[0, 1], [2], [3]] : {_t([n, g, fg, k])} into {_t([n * g, fg, k])}")
        lines.append(f"    %r3 = linalg.batch_matmul ins(%wb, {col} : {_t([bsz, fg, k])}, {_t([bsz, k, m])}) "
                     f"outs(%o3 : {_t([bsz, fg, m])}) -> {_t([bsz, fg, m])}")
    if groups == 1:
        lines.append(f"    %r = tensor.expand_shape %r3 [[0], [1], [2, 3]] output_shape {list(os_)} "
                     f": {_t([n, fg, m])} into {_t(os_)}")
    else:
        lines.append(f"    %r = tensor.expand_shape %r3 [[0, 1], [2], [3, 4]] output_shape {list(os_)} "
                     f": {_t([bsz, fg, m])} into {_t(os_)}")
    lines.append(f"    return %r : {_t(os_)}\n  }}")
    return "\n".join(lines)


def _conv_signature(op: ir.Operation):
    if op.name not in ("linalg.conv_2d_nchw_fchw", "linalg.conv_2d_ngchw_gfchw"):
        return None
    if len(op.operands) != 3 or len(op.results) != 1:
        return None
    shapes = [_static(v) for v in op.operands]
    if any(sh is None for sh in shapes) or 0 in sum(shapes, []):
        return None
    groups = 1 if op.name == "linalg.conv_2d_nchw_fchw" else shapes[0][1]
    return (tuple(shapes[0]), tuple(shapes[1]), tuple(shapes[2]),
            tuple(_ints(op, "strides")), tuple(_ints(op, "dilations")), groups)


def convs_to_matmul(module: ir.Module, threads: bool = False) -> int:
    """Rewrite every static f32 NCHW conv (plain or grouped) as im2col +
    matmul (inlined private functions). Returns how many were rewritten."""
    from mlir.dialects import func
    from mlir.passmanager import PassManager
    funcs: dict[tuple, str] = {}
    count = 0
    for op in walk(module.operation):
        sig = _conv_signature(op)
        if sig is None:
            continue
        if sig not in funcs:
            xs, ws, os_, s, d, g = sig
            name = f"__om_conv_{len(funcs)}"
            text = conv_function(name, list(xs), list(ws), list(os_), list(s), list(d), g, threads)
            sub = ir.Module.parse("module {\n" + text + "\n}", module.context)
            sub.body.operations[0].operation.clone(ir.InsertionPoint(module.body))
            funcs[sig] = name
        with ir.InsertionPoint(op), op.location:
            call = func.CallOp([op.results[0].type], ir.FlatSymbolRefAttr.get(funcs[sig]),
                               list(op.operands))
        op.results[0].replace_all_uses_with(call.results[0])
        op.erase()
        count += 1
    if funcs:
        PassManager.parse("builtin.module(inline, symbol-dce)", module.context).run(module.operation)
    return count
