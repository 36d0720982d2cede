"""int8 convolutions on AVX-512 VNNI: the kernel plan's ``int8_im2col`` kernel.

What it rewrites: a ``linalg.conv_2d_nchw_fchw`` of i32 operands (into
zeros) whose input is an 8-bit tensor widened minus a per-tensor zero point
(padded with zeros after the shift) and whose filter is a constant signed
8-bit tensor widened (no zero point, or a constant zero): what QLinearConv
and ConvInteger lower to (integer_ops.py). Static shapes, output channels a
multiple of 16.

It becomes the int8 matmul of :mod:`.matmul_q8` on an im2col matrix::

    xt = transpose(x) to NHWC, padded with zx
    col[n*OH*OW + oh*OW + ow, (kh*KW + kw)*C + c] = xt[n, oh*s + kh*d, ow*s + kw*d, c]
    acc[p, f] = sum_k (col[p, k] - zx) * Wt[k, f]          (Wt: the filter as [K, F])
    out[n, f, oh, ow] = acc[n*OH*OW + oh*OW + ow, f]      (a linalg.transpose)

where the input is padded with its zero point ``zx`` in the 8-bit domain (the
same as padding the shifted values with 0), ``col`` is 8-bit (a quarter of
an f32 im2col) and copies runs of C contiguous bytes, the filter is
reordered at compile time, and the requantization after the transpose back
to NCHW stays an identity-map elementwise op. The matmul is then rewritten by
:func:`.matmul_q8.int8_matmuls` (it runs next): pixels are the rows A of the
VNNI kernel (broadcast 4 bytes at a time), filters its packed B columns.

Where the time goes (Zen 4, 1 thread, QLinearConv 64->64 3x3 at 56x56,
1.36 ms; onnxruntime 0.59): the kernel ~35%, the 8-bit transposes and
im2col copies ~45% (scalar byte moves: the elementwise vectorizer takes no
transposes of bytes). The next step is a direct kernel on a channel-blocked
input (NCHW4c: 16 pixels x 4 channels per 64-byte vector, the filters
broadcast), which needs neither the im2col nor the transposes.
"""
from __future__ import annotations

from dataclasses import dataclass

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.dialects.onnx.opview import owner_op
from onnx_mlir_py.passes.optimize.matmul_q8 import LANES, _widened, _zero_constant, _zero_fill
from onnx_mlir_py.target import Target


@dataclass
class Q8Conv:
    x: ir.Value             # the 8-bit input [N, C, H, W]
    signed: bool
    zx: ir.Value | None     # its per-tensor zero point (one element)
    zx_signed: bool
    w: ir.Value             # the constant s8 filter [F, C, KH, KW]
    pads: tuple             # (top, left, bottom, right)
    xs: tuple
    ws: tuple
    os: tuple
    strides: tuple
    dilations: tuple


def _ints(op: ir.Operation, name: str) -> tuple:
    if name not in op.attributes:
        return (1, 1)
    return tuple(int(v) for v in ir.DenseIntElementsAttr(op.attributes[name]))


def _static(t: ir.Type) -> tuple | None:
    return tuple(t.shape) if isinstance(t, ir.RankedTensorType) and t.has_static_shape else None


def match(op: ir.Operation) -> Q8Conv | None:
    if op.name != "linalg.conv_2d_nchw_fchw" or len(op.operands) != 3:
        return None
    rt = op.results[0].type
    if not (isinstance(rt.element_type, ir.IntegerType) and rt.element_type.width == 32):
        return None
    if not _zero_fill(op.operands[2]):
        return None
    xin, pads = op.operands[0], (0, 0, 0, 0)
    p = owner_op(xin)
    if p is not None and p.name == "tensor.pad":
        body = list(p.regions[0].blocks[0].operations)
        yv = owner_op(body[-1].operands[0]) if body else None
        lo = [int(v) for v in ir.DenseI64ArrayAttr(p.attributes["static_low"])]
        hi = [int(v) for v in ir.DenseI64ArrayAttr(p.attributes["static_high"])]
        if yv is None or yv.name != "arith.constant" or \
                ir.IntegerAttr(yv.attributes["value"]).value != 0 or len(p.operands) != 1 or \
                lo[:2] != [0, 0] or hi[:2] != [0, 0] or min(lo + hi) < 0:
            return None
        pads, xin = (lo[2], lo[3], hi[2], hi[3]), p.operands[0]
    wx, ww = _widened(xin), _widened(op.operands[1], per_tensor=False)
    if wx is None or ww is None:
        return None
    w, w_signed, zw, _ = ww
    cw = owner_op(w)
    if not w_signed or (zw is not None and not _zero_constant(zw)) or cw is None or \
            cw.name != "arith.constant":
        return None
    xs, ws, os_ = _static(wx[0].type), _static(w.type), _static(rt)
    if xs is None or ws is None or os_ is None or os_[1] % LANES != 0:
        return None
    return Q8Conv(wx[0], wx[1], wx[2], wx[3], w, pads, xs, ws, os_,
                  _ints(op, "strides"), _ints(op, "dilations"))


def plan(op: ir.Operation, target: Target):
    """The kernel plan's rule: (tile, threaded, reason) or None."""
    if not target.vnni or target.vector_width != LANES:
        return None
    q = match(op)
    if q is None:
        return None
    from onnx_mlir_py.passes.optimize.kernel_plan import _macs_str, threaded_kernel
    macs = int(np.prod(q.os)) * int(np.prod(q.ws[1:]))
    return ("8x32, k 4", threaded_kernel(macs, None),
            f"int8 conv: 8-bit im2col + VNNI matmul ({'s8' if q.signed else 'u8'} x s8); "
            f"{_macs_str(macs)}")


def _function(name: str, q: Q8Conv) -> str:
    """``@name(x: i8 [N, C, H, W], zx: i8, wt: i8 [K, F]) -> i32 [N, F, OH, OW]``
    with K ordered (kh, kw, c): the input is transposed to NHWC and padded
    with its zero point, so each im2col row is KH x KW runs of C contiguous
    bytes (the copy vectorizes along C); the result [N*OH*OW, F] is
    transposed back to NCHW by a ``linalg.transpose``, which vectorizes too,
    and the requantization after it stays an identity-map elementwise op."""
    n, c, h, w = q.xs
    f, _, kh, kw = q.ws
    _, _, oh, ow = q.os
    (pt, pl, pb, pr), (s0, s1), (d0, d1) = q.pads, q.strides, q.dilations
    hp, wp = h + pt + pb, w + pl + pr
    p, k = n * oh * ow, c * kh * kw
    ext = "arith.extsi" if q.signed else "arith.extui"
    zext = "arith.extsi" if q.zx_signed else "arith.extui"
    t = lambda shape, e: f"tensor<{'x'.join(map(str, shape))}x{e}>"  # noqa: E731
    nhwc = t((n, h, w, c), "i8")
    lines = [f"func.func private @{name}(%x: {t(q.xs, 'i8')}, %zx: i8, %wt: {t((k, f), 'i8')}) "
             f"-> {t(q.os, 'i32')} {{",
             f"  %et = tensor.empty() : {nhwc}",
             f"  %xt = linalg.transpose ins(%x : {t(q.xs, 'i8')}) outs(%et : {nhwc}) "
             "permutation = [0, 2, 3, 1]"]
    src = "%xt"
    if (pt, pl, pb, pr) != (0, 0, 0, 0):
        lines += [f"  %xp = tensor.pad %xt low[0, {pt}, {pl}, 0] high[0, {pb}, {pr}, 0] {{",
                  "  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):",
                  "    tensor.yield %zx : i8",
                  f"  }} : {nhwc} to {t((n, hp, wp, c), 'i8')}"]
        src = "%xp"
    xt = t((n, hp, wp, c), "i8")
    col6 = t((n, oh, ow, kh, kw, c), "i8")
    par6 = ", ".join(['"parallel"'] * 6)
    if (kh, kw, s0, s1) == (1, 1, 1, 1):
        lines.append(f"  %col = tensor.collapse_shape {src} [[0, 1, 2], [3]] : {xt} into "
                     f"{t((p, k), 'i8')}")
    else:
        lines += [
            f"  %e6 = tensor.empty() : {col6}",
            "  %col6 = linalg.generic {indexing_maps = ["
            f"affine_map<(n, oh, ow, kh, kw, c) -> (n, oh * {s0} + kh * {d0}, ow * {s1} + kw * {d1}, c)>, "
            "affine_map<(n, oh, ow, kh, kw, c) -> (n, oh, ow, kh, kw, c)>], "
            f"iterator_types = [{par6}]}} ins({src} : {xt}) outs(%e6 : {col6}) {{",
            "  ^bb0(%v: i8, %o: i8):",
            "    linalg.yield %v : i8",
            f"  }} -> {col6}",
            f"  %col = tensor.collapse_shape %col6 [[0, 1, 2], [3, 4, 5]] : {col6} into "
            f"{t((p, k), 'i8')}"]
    lines += [
        "  %zxt = tensor.from_elements %zx : tensor<i8>",
        f"  %ea = tensor.empty() : {t((p, k), 'i32')}",
        "  %a32 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, "
        "affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], "
        "iterator_types = [\"parallel\", \"parallel\"]} "
        f"ins(%col, %zxt : {t((p, k), 'i8')}, tensor<i8>) outs(%ea : {t((p, k), 'i32')}) {{",
        "  ^bb0(%v: i8, %z: i8, %o: i32):",
        f"    %v32 = {ext} %v : i8 to i32",
        f"    %z32 = {zext} %z : i8 to i32",
        "    %d = arith.subi %v32, %z32 : i32",
        "    linalg.yield %d : i32",
        f"  }} -> {t((p, k), 'i32')}",
        f"  %eb = tensor.empty() : {t((k, f), 'i32')}",
        "  %b32 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, "
        "affine_map<(d0, d1) -> (d0, d1)>], iterator_types = [\"parallel\", \"parallel\"]} "
        f"ins(%wt : {t((k, f), 'i8')}) outs(%eb : {t((k, f), 'i32')}) {{",
        "  ^bb0(%v: i8, %o: i32):",
        "    %v32 = arith.extsi %v : i8 to i32",
        "    linalg.yield %v32 : i32",
        f"  }} -> {t((k, f), 'i32')}",
        "  %c0 = arith.constant 0 : i32",
        f"  %ec = tensor.empty() : {t((p, f), 'i32')}",
        f"  %fill = linalg.fill ins(%c0 : i32) outs(%ec : {t((p, f), 'i32')}) -> {t((p, f), 'i32')}",
        f"  %mm = linalg.matmul ins(%a32, %b32 : {t((p, k), 'i32')}, {t((k, f), 'i32')}) "
        f"outs(%fill : {t((p, f), 'i32')}) -> {t((p, f), 'i32')}",
        f"  %mm4 = tensor.expand_shape %mm [[0, 1, 2], [3]] output_shape [{n}, {oh}, {ow}, {f}] "
        f": {t((p, f), 'i32')} into {t((n, oh, ow, f), 'i32')}",
        f"  %eo = tensor.empty() : {t(q.os, 'i32')}",
        f"  %out = linalg.transpose ins(%mm4 : {t((n, oh, ow, f), 'i32')}) outs(%eo : {t(q.os, 'i32')}) "
        "permutation = [0, 3, 1, 2]",
        f"  return %out : {t(q.os, 'i32')}",
        "}"]
    return "\n".join(lines)


def int8_convs(module: ir.Module, target: Target, threads: bool, plan_=None) -> int:
    """Rewrite the convs the plan gave ``int8_im2col`` (every matching one
    without a plan tag, for the named pass) into im2col + an int8 matmul
    (inlined; :func:`.matmul_q8.int8_matmuls` then builds its kernel)."""
    from mlir.dialects import arith, func, tensor as tensor_d
    from mlir.passmanager import PassManager
    from onnx_mlir_py.passes.optimize.kernel_plan import KERNEL_ATTR, assigned
    from onnx_mlir_py.passes.optimize.packs import _const_value
    if not target.vnni or target.vector_width != LANES:
        return 0
    blobs: dict = {}
    count = 0
    i8 = ir.IntegerType.get_signless(8)
    for op in walk_ops(module.operation, "linalg.conv_2d_nchw_fchw"):
        if KERNEL_ATTR in op.attributes and not assigned(op, "int8_im2col"):
            continue
        q = match(op)
        if q is None:
            continue
        wv = _const_value(owner_op(q.w), blobs)
        if wv is None:
            continue
        f = q.ws[0]
        # [F, C, KH, KW] -> [K, F] with K ordered (kh, kw, c), the im2col's order
        wt = np.ascontiguousarray(wv.astype(np.int8, copy=False).transpose(2, 3, 1, 0)
                                  .reshape(-1, f))
        name = f"__om_q8_conv_{count}"
        sub = ir.Module.parse("module {\n" + _function(name, q) + "\n}", module.context)
        sub.body.operations[0].operation.clone(ir.InsertionPoint(module.body))
        with ir.InsertionPoint(op), op.location:
            t = ir.RankedTensorType.get(list(wt.shape), i8)
            wc = arith.ConstantOp(t, ir.DenseElementsAttr.get(wt, type=t)).result
            if q.zx is None:
                zx = arith.ConstantOp(i8, 0).result
            else:
                idx = [arith.ConstantOp(ir.IndexType.get(), 0).result] * q.zx.type.rank
                zx = tensor_d.ExtractOp(q.zx, idx).result
            call = func.CallOp([op.results[0].type], ir.FlatSymbolRefAttr.get(name),
                               [q.x, zx, wc])
        op.results[0].replace_all_uses_with(call.results[0])
        op.erase()
        count += 1
    if count:
        PassManager.parse("builtin.module(inline, symbol-dce, canonicalize, cse)",
                          module.context).run(module.operation)
    return count
