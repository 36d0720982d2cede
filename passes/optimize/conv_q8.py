"""int8 convolutions on AVX-512 VNNI: the kernel plan's ``int8_im2col`` kernel.

What it rewrites: a ``linalg.conv_2d_nchw_fchw`` of i32 operands (into
zeros) whose input is an 8-bit tensor widened minus a per-tensor zero point
(padded with zeros after the shift) and whose filter is a constant signed
8-bit tensor widened (no zero point, or a constant zero): what QLinearConv
and ConvInteger lower to (integer_ops.py). Static shapes, output channels a
multiple of 16.

It becomes the int8 matmul of :mod:`.matmul_q8` on an im2col matrix::

    xt = transpose(x) to NHWC, padded with zx     (C % 64 == 0: as 4-channel words, WORD_NHWC)
    col[n*OH*OW + oh*OW + ow, (kh*KW + kw)*C + c] = xt[n, oh*s + kh*d, ow*s + kw*d, c]
    acc[p, f] = sum_k (col[p, k] - zx) * Wt[k, f]          (Wt: the filter as [K, F])
    out[n, f, oh, ow] = acc[n*OH*OW + oh*OW + ow, f]      (16x16 register blocks)

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

from onnx_mlir_py.dialects.onnx.opview import owner_op
from onnx_mlir_py.passes.optimize.epilogue_q8 import (Q8Epilogue, acc_offset, emit as emit_epilogue,
                                                      epilogue_chain, external_type, flat_externals,
                                                      pixel_free, uniform)
from onnx_mlir_py.passes.optimize.matmul_q8 import (LANES, _widened, _zero_constant, add_functions,
                                                    i32_into_zeros, planned, zero_point_byte)
from onnx_mlir_py.target import Target
from onnx_mlir_py.passes.optimize.kernel_budget import building


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
    if not i32_into_zeros(op, "linalg.conv_2d_nchw_fchw"):
        return None
    rt = op.results[0].type
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
    strides = _ints(op, "strides")
    if xs is None or ws is None or os_ is None or not supported(os_[1], strides):
        return None
    return Q8Conv(wx[0], wx[1], wx[2], wx[3], w, pads, xs, ws, os_, strides,
                  _ints(op, "dilations"))


def supported(filters: int, strides) -> bool:
    """Whether an int8 kernel takes a conv of ``filters`` output channels and
    ``strides``: the direct kernel (filters a multiple of FB) or the im2col
    one (filters a multiple of 16, so also of FB). optimize_onnx's QDQ
    rewrite asks the same."""
    return filters % FB == 0


def plan(op: ir.Operation, target: Target):
    """The kernel plan's rule: (tile, threaded, reason) or None."""
    if not target.vnni or target.vector_width != LANES:
        return None
    q = match(op)
    if q is None:
        return None
    from onnx_mlir_py.passes.optimize.kernel_plan import _macs_str, threaded_kernel
    macs = int(np.prod(q.os)) * int(np.prod(q.ws[1:]))
    sign = "s8" if q.signed else "u8"
    if direct(q) and not amx_im2col(q, target):
        nv = NV_FLAT if _flat(q) or padded_rows(q) else NV
        rows = ", rows over the padded width" if padded_rows(q) else ""
        return (f"{FB} filters x {nv * 16} pixels", threaded_kernel(macs, None),
                f"int8 conv, direct on 4-channel blocks{rows} ({sign} x s8, vpdpbusd); "
                f"{_macs_str(macs)}")
    from onnx_mlir_py.passes.optimize.matmul_q8_amx import MIN_ROWS, available
    if available(target) and int(np.prod(q.os[2:])) * q.os[0] >= MIN_ROWS:
        return ("32x32 (2x2 tiles), k 64", threaded_kernel(macs, None),
                f"int8 conv: 8-bit im2col + AMX matmul ({sign} x s8); {_macs_str(macs)}")
    return ("8x32, k 4", threaded_kernel(macs, None),
            f"int8 conv: 8-bit im2col + VNNI matmul ({sign} x s8); {_macs_str(macs)}")


def _function(name: str, q: Q8Conv) -> str:
    """``@name(x: i8 [N, C, H, W], zx: i8, wt: i8 [K, F]) -> i32 [N, F, OH, OW]``
    with K ordered (kh, kw, c): the input is transposed to NHWC and padded
    with its zero point, so each im2col row is KH x KW runs of C contiguous
    bytes (the copy vectorizes along C); the result [N*OH*OW, F] is
    transposed back to NCHW in 16x16 register blocks (:func:`_block_transpose`;
    a ``linalg.transpose`` for a batch above 1), and the requantization after
    it stays an identity-map elementwise op."""
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
             f"-> {t(q.os, 'i32')} {{"]
    helpers = []
    if word_nhwc(q.xs):
        lines.append(f"  %xt = func.call @{name}_nhwc(%x) : ({t(q.xs, 'i8')}) -> {nhwc}")
        helpers.append(_nhwc_function(f"{name}_nhwc", q.xs))
    else:
        lines += [f"  %et = tensor.empty() : {nhwc}",
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
    if (kh, kw, s0, s1) == (1, 1, 1, 1):
        lines.append(f"  %col = tensor.collapse_shape {src} [[0, 1, 2], [3]] : {xt} into "
                     f"{t((p, k), 'i8')}")
    else:
        lines += [
            f"  %e6 = tensor.empty() : {col6}",
            "  %col6 = linalg.generic {indexing_maps = ["
            f"affine_map<(n, oh, ow, kh, kw, c) -> (n, oh * {s0} + kh * {d0}, ow * {s1} + kw * {d1}, c)>, "
            "affine_map<(n, oh, ow, kh, kw, c) -> (n, oh, ow, kh, kw, c)>], "
            f"iterator_types = [{PAR6}]}} ins({src} : {xt}) outs(%e6 : {col6}) {{",
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
    ]
    if n == 1 and BLOCK_TRANSPOSE:
        # [P, F] -> [F, P] in 16x16 blocks of registers, then [1, F, OH, OW]
        pf, fp = t((p, f), "i32"), t((f, p), "i32")
        lines += [
            f"  %ti = func.call @{name}_t(%mm) : ({pf}) -> {fp}",
            f"  %out = tensor.expand_shape %ti [[0, 1], [2, 3]] output_shape [1, {f}, {oh}, {ow}] "
            f": {t((f, p), 'i32')} into {t(q.os, 'i32')}",
            f"  return %out : {t(q.os, 'i32')}", "}", _block_transpose(f"{name}_t", p, f)]
        return "\n".join(lines + helpers)
    lines += [
        f"  %mm4 = tensor.expand_shape %mm [[0, 1, 2], [3]] output_shape [{n}, {oh}, {ow}, {f}] "
        f": {t((p, f), 'i32')} into {t((n, oh, ow, f), 'i32')}",
        f"  %eo = tensor.empty() : {t(q.os, 'i32')}",
        f"  %out = linalg.transpose ins(%mm4 : {t((n, oh, ow, f), 'i32')}) outs(%eo : {t(q.os, 'i32')}) "
        "permutation = [0, 3, 1, 2]",
        f"  return %out : {t(q.os, 'i32')}",
        "}"]
    return "\n".join(lines + helpers)


# False: the im2col form's result goes back to NCHW through a linalg.transpose
# (a scalar loop: the elementwise vectorizer takes no transpose whose input
# is strided along the output's rows). A/B, Zen 4, 1 thread, thread CPU time,
# blocks / linalg.transpose: 256->256 3x3 at 14x14 0.923, 512->512 3x3 at 7x7
# 0.970; ResNet-50 QDQ 0.990.
BLOCK_TRANSPOSE = True


# False: the im2col kernel's input goes to NHWC through a linalg.transpose of
# bytes (a scalar loop, or byte gathers: the elementwise vectorizer takes no
# transpose of bytes); see _nhwc_function
WORD_NHWC = True


def word_nhwc(xs: tuple) -> bool:
    """Whether :func:`_nhwc_function` takes an im2col conv's input ``xs``:
    one image, channels a multiple of 64 (16-word blocks of 4 channels)."""
    return WORD_NHWC and xs[0] == 1 and xs[1] % 64 == 0


def _nhwc_function(name: str, xs: tuple) -> str:
    """``@name(x: i8 [1, C, H, W]) -> i8 [1, H, W, C]``, vectorized: each
    pixel's 4 channels packed into an i32 word (:func:`_channel_words`, reads
    along W), the [C/4, H*W] words transposed in 16x16 register blocks
    (``vector.transpose``, lowered with shuffles as the i32 result's
    :func:`_block_transpose`) and each transposed row of 16 words written as
    the 64 bytes of one pixel's 64 channels (``vector.bitcast``: little
    endian, channel 4j + r is byte r of word j); the last H*W % 16 pixels as
    one static block. A byte-for-byte copy: the same tensor as
    ``linalg.transpose`` [0, 2, 3, 1]."""
    from onnx_mlir_py.passes.optimize.kernel_emit import Elem, Emitter, tensor, vector
    _, c, h, w = xs
    c4, p = c // 4, h * w
    e = Emitter()
    x = e.param("x", tensor(xs, Elem.I8))
    words = _channel_words(e, x, (1, c4, h, w))
    wt = tensor([c4, p], Elem.I32)
    flat = e.op("wf", f"tensor.collapse_shape {words} [[0, 1], [2, 3]] : {words.type} into {wt}",
                wt)
    zero = e.const("0", wt.scalar)
    q, (acc,), (res,) = e.loop(0, c4, 16, [e.empty([p, c], elem=Elem.I8)], base="nw")
    cur = acc

    def block(cur, p0, rows):
        v = e.read(flat, [q, p0], zero, vector([16, rows], Elem.I32), base="nw_v")
        tt = vector([rows, 16], Elem.I32)
        tv = e.op("nw_t", f"vector.transpose {v}, [1, 0] : {v.type} to {tt}", tt)
        return e.write(e.cast("vector.bitcast", tv, vector([rows, 64], Elem.I8)), cur,
                       [p0, e.mul(q, 4)], base="nw_x")
    whole, tail = p // 16, p % 16
    if whole:
        p0, (blocks,), (done,) = e.loop(0, whole * 16, 16, [cur], base="nwb")
        e.end([block(blocks, p0, 16)])
        cur = done
    if tail:
        cur = block(cur, whole * 16, tail)
    e.end([cur])
    ot = tensor([1, h, w, c], Elem.I8)
    out = e.op("nw_o", f"tensor.expand_shape {res} [[0, 1, 2], [3]] output_shape "
                       f"[1, {h}, {w}, {c}] : {res.type} into {ot}", ot)
    e(f"return {out} : {ot}")
    return e.function(name, [x], ot)


def _block_transpose(name: str, p: int, f: int) -> str:
    """``@name(src: i32 [P, F]) -> i32 [F, P]`` (F a multiple of 16, as on
    the im2col path) in 16x16 register blocks: conv_pixel_rows'
    :func:`~.conv_pixel_rows.transpose_blocks` (a 2-D read of 16 rows, a
    ``vector.transpose`` that VECTOR_CLEANUP lowers with ``shuffle_16x16``,
    a 2-D write; the last rows' block static), on i32."""
    from onnx_mlir_py.passes.optimize.conv_pixel_rows import transpose_blocks
    from onnx_mlir_py.passes.optimize.kernel_emit import Elem, Emitter, tensor
    e = Emitter()
    src = e.param("src", tensor([p, f], Elem.I32))
    res = transpose_blocks(e, src, e.empty([f, p], elem=Elem.I32), p, 16)
    e(f"return {res} : {res.type}")
    return e.function(name, [src], res.type)


# the kernel functions' name while their text is built (a conv's text names
# no conv, so equal texts are one function)
KERNEL = "__om_q8_conv_kernel"


def int8_convs(module: ir.Module, target: Target, threads: bool, plan_=None) -> int:
    """Rewrite the convs the plan gave ``int8_im2col`` (every matching one
    without a plan tag, for the named pass) into im2col + an int8 matmul
    (inlined; :func:`.matmul_q8.int8_matmuls` then builds its kernel)."""
    from mlir.dialects import arith, func
    from mlir.passmanager import PassManager
    if not target.vnni or target.vector_width != LANES:
        return 0
    count, any_direct = 0, False
    kernels: dict[str, str] = {}    # kernel text (named KERNEL) -> its function's name
    calls: list = []
    i8 = ir.IntegerType.get_signless(8)
    # from the last conv to the first: a conv's epilogue may take a residual
    # branch's dequantization, whose 8-bit input an earlier conv then writes
    for op, q, wv in reversed(list(planned(module, "linalg.conv_2d_nchw_fchw", "int8_im2col",
                                           match, lambda q: q.w))):
        with building(op):
            f = q.ws[0]
            epi = None
            if direct(q) and not amx_im2col(q, target):
                any_direct = True
                from onnx_mlir_py.passes.optimize.kernel_plan import threaded_kernel
                macs = int(np.prod(q.os)) * int(np.prod(q.ws[1:]))
                epi = epilogue_chain(op) if EPILOGUES else None
                if epi is not None and _flat(q) and not flat_externals(epi, q.os[2:]):
                    epi = None
                if epi is not None and padded_rows(q) and not pixel_free(epi):
                    epi = None
                text = _direct_function(KERNEL, q, threads and threaded_kernel(macs, None), epi)
                c4 = -(-q.ws[1] // 4)
                wpad = np.zeros((f, c4 * 4) + tuple(q.ws[2:]), np.int8)
                wpad[:, :q.ws[1]] = wv
                # [F, C4*4, KH, KW] -> [F, C4, KH, KW, 4]: the 4 channels of a tap side by side
                w4 = np.ascontiguousarray(wpad.reshape(f, c4, 4, q.ws[2], q.ws[3])
                                          .transpose(0, 1, 3, 4, 2).reshape(f, -1))
                if FILTER_BLOCKS:   # [F/FB, C4*KH*KW, FB, 4]: a tile's 8 filters side by side
                    w4 = np.ascontiguousarray(w4.reshape(f // FB, FB, -1, 4).transpose(0, 2, 1, 3)
                                              .reshape(f // FB, -1))
                rowsum = wv.astype(np.int64).reshape(f, -1).sum(axis=1).astype(np.int32)
                base = (-128 * rowsum if q.signed else np.zeros_like(rowsum)).astype(np.int32)
                consts = [w4, base, rowsum]
            else:
                # [F, C, KH, KW] -> [K, F] with K ordered (kh, kw, c), the im2col's order
                text = _function(KERNEL, q)
                consts = [np.ascontiguousarray(wv.transpose(2, 3, 1, 0).reshape(-1, f))]
            # convs of the same kernel text (same shapes and epilogue; the
            # weights, scales and zero points are operands) call one function
            name = kernels.setdefault(text, f"__om_q8_conv_{len(kernels)}")
            with ir.InsertionPoint(op), op.location:
                cvals = []
                for arr in consts:
                    t = ir.RankedTensorType.get(list(arr.shape), i8 if arr.dtype == np.int8
                                                else ir.IntegerType.get_signless(32))
                    cvals.append(arith.ConstantOp(t, ir.DenseElementsAttr.get(arr, type=t)).result)
                zx = zero_point_byte(q.zx)
                replaced = epi.result if epi is not None else op.results[0]
                call = func.CallOp([replaced.type], ir.FlatSymbolRefAttr.get(name),
                                   [q.x, zx] + cvals + (list(epi.externals) if epi else []))
            replaced.replace_all_uses_with(call.results[0])
            calls.append(call.operation)
            for g in reversed(epi.generics if epi is not None else []):
                g.erase()
            op.erase()
            count += 1
    if count:
        # every function parsed at once (with the VNNI step's placeholder,
        # the direct kernels' callee) and inlined by moving their bodies
        # (_inline), then one canonicalize and cse of the module
        from onnx_mlir_py.passes.optimize.matmul_q8 import DPBUSD_TEXT
        text = "\n".join(t.replace(f"@{KERNEL}", f"@{n}") for t, n in kernels.items())
        sub = ir.Module.parse("module {\n" + text + ("\n" + DPBUSD_TEXT if any_direct else "")
                              + "\n}", module.context)
        _inline(sub, calls)
        add_functions(module, sub)      # the VNNI placeholder
        PassManager.parse("builtin.module(canonicalize, cse)", module.context).run(module.operation)
    if any_direct:
        from onnx_mlir_py.passes.optimize.matmul_q8 import mark_vnni
        mark_vnni(module)
    return count


def _inline(sub: ir.Module, calls: list, call_sites: bool = False) -> None:
    """Inline ``calls`` of the functions of ``sub`` (and the calls of
    ``sub``'s functions in them but the VNNI placeholder's): each
    function's body moves to its last call, a copy of it to each other one,
    and the function is erased (the placeholder stays). What the inliner
    did, without its call graph of the whole model, the copy of every
    function into the model and a symbol-dce of the model. ``call_sites``:
    each inlined op's location becomes ``callsite(its own at the call's)``,
    as the inliner makes them (the allocation sites name the call's node)."""
    from collections import Counter
    from onnx_mlir_py.passes.optimize.matmul_q8 import DPBUSD
    fns = {ir.StringAttr(o.operation.attributes["sym_name"]).value: o.operation
           for o in sub.body.operations}
    callee = lambda c: ir.FlatSymbolRefAttr(c.attributes["callee"]).value  # noqa: E731
    inner = lambda o: o.name == "func.call" and callee(o) in fns and callee(o) != DPBUSD  # noqa: E731
    work = list(calls)
    left = Counter(callee(c) for c in work)     # the calls each function will have
    for name, fn in fns.items():                # (a helper follows its caller's text)
        for o in fn.regions[0].blocks[0].operations:
            if inner(o):
                left[callee(o)] += left[name]
    while work:
        call = work.pop()
        name = callee(call)
        fn = fns[name]
        left[name] -= 1
        if left[name]:
            fn = fn.clone(ir.InsertionPoint(sub.body))
        block = fn.regions[0].blocks[0]
        ops = list(block.operations)
        if call_sites:
            _call_site_locations(ops[:-1], call.location)
        for o in ops[:-1]:
            o.move_before(call)
            if inner(o):
                work.append(o)
        for arg, v in zip(block.arguments, call.operands):
            arg.replace_all_uses_with(v)
        for r, v in zip(call.results, ops[-1].operands):
            r.replace_all_uses_with(v)
        call.erase()
        fn.erase()


def _call_site_locations(ops: list, caller: ir.Location) -> None:
    """Every op of ``ops`` and in their regions at ``callsite(loc at
    caller)`` (one location made per distinct one, as the inliner's
    remapping does)."""
    from onnx_mlir_py.ir_util import walk_ops
    made: dict = {}
    for top in ops:
        for o in walk_ops(top, include_root=True):
            loc = o.location
            key = str(loc)
            new = made.get(key)
            if new is None:
                new = made[key] = ir.Location.callsite(loc, [caller], loc.context)
            o.location = new


# -- the direct form: no im2col ---------------------------------------------------------
PAR4 = ", ".join(['"parallel"'] * 4)
PAR6 = ", ".join(['"parallel"'] * 6)
PAR7 = ", ".join(['"parallel"'] * 7)
FB = 8          # filters per register tile (broadcast, the s8 operand)
NV = 2          # pixel vectors per register tile (16 pixels x 4 channels each, u8)


# The direct kernel computes whole 32-pixel row blocks: it is chosen when they
# are at least this full (56 and 28 pixels: 7/8; 14 and 7 pixels use 7/16 and
# 7/32 of the lanes: the im2col kernel, whose rows are all pixels, is faster).
# Zen 4, 1 thread, direct / im2col: 64->64 3x3 @56 0.74 / 1.36 ms, 128->128 @28
# 0.75 / 0.89, 256->64 1x1 @56 0.56 / 0.81, 512->512 @7 1.41 / 0.59.
DIRECT_MIN_FILL = 0.75

# False: strided convs take the im2col kernel (A/B measurements)
STRIDED = True

# False: the direct kernel stores its i32 accumulators and the requantization
# stays a separate elementwise pass (A/B measurements; epilogue_q8.py)
EPILOGUES = True


def _flat(q: Q8Conv) -> bool:
    """A 1x1 conv without padding: its image (subsampled by the strides) is
    one row of OH*OW pixels."""
    return tuple(q.ws[2:]) == (1, 1) and not any(q.pads)


def direct(q: Q8Conv) -> bool:
    """Whether the direct kernel takes the conv: filters a multiple of FB,
    output rows (a 1x1 conv's whole image) filling DIRECT_MIN_FILL of their
    blocks (or no other kernel takes the conv)."""
    if q.ws[0] % FB != 0 or (not STRIDED and tuple(q.strides) != (1, 1)):
        return False
    ow = q.os[2] * q.os[3] if _flat(q) else q.os[3]
    # the fill of whole NV-vector blocks: rows of at most 16 pixels computed
    # as one-vector blocks are slower than the im2col kernel (Zen 4, 1 thread,
    # thread CPU time, direct / im2col: 256->256 3x3 at 14x14 1.005, 256->256
    # 3x3/2 at 28x28 1.053)
    fill = ow / (-(-ow // (16 * NV)) * 16 * NV)
    if padded_rows(q):
        fill = q.os[2] * ow / _row_lanes(q.os[2] * _padded_width(q), NV_FLAT)
    return fill >= DIRECT_MIN_FILL or q.ws[0] % LANES != 0


# On an AMX-INT8 target, a conv the direct VNNI kernel would take goes the
# im2col way (its matmul on AMX tiles, matmul_q8_amx.py) when its K = C*KH*KW
# is at least this (None: never). A/B, single QLinearConvs, 1 thread, thread
# CPU time, im2col + AMX / direct (Emerald Rapids, load ~15): K 1152 (128 3x3
# at 28x28) 0.82, 1024 (1x1 1024->256 at 14x14) 0.80, 2304 (256 3x3/2 at 28)
# 0.98, 512 (1x1 ->2048 at 7x7) 0.93, 512 (1x1 ->128 at 28x28) 0.99; but 576
# (64 3x3 at 56x56) 1.90, 256 (1x1 ->64 at 56) 1.42, 128 (1x1 ->512 at 28)
# 2.18, 64 (1x1 ->256 at 56) 2.81: the transposes and im2col of a big image
# cost more than the faster products save
AMX_IM2COL_MIN_K = 1024


def amx_im2col(q: Q8Conv, target: Target) -> bool:
    """Whether the conv takes the im2col form for the AMX matmul although
    the direct kernel would take it (see AMX_IM2COL_MIN_K)."""
    from onnx_mlir_py.passes.optimize.matmul_q8_amx import MIN_ROWS, available
    if AMX_IM2COL_MIN_K is None or not available(target) or q.ws[0] % LANES or \
            int(np.prod(q.ws[1:])) < AMX_IM2COL_MIN_K:
        return False
    return int(np.prod(q.os[2:])) * q.os[0] >= MIN_ROWS


# pixel vectors per register tile of a 1x1 conv computed as one row of its
# image: 8 x 3 accumulators, 11 loads per 24 vpdpbusd (Zen 4, 1 thread,
# thread CPU time, NV_FLAT 3 / 2: 1024->256 at 14x14 0.970, 512->128 at
# 28x28 0.977, 64->256 + residual at 56x56 1.007; ResNet-50 QDQ 0.996)
NV_FLAT = 3

# False: convs with padding or a kernel wider than 1 compute each output row
# in whole blocks of NV vectors (56- and 28-pixel rows fill 7/8 of them)
PADDED_ROWS = True


def padded_rows(q: Q8Conv) -> bool:
    """Whether the direct kernel computes the conv as one row of OH x Wq
    positions over its padded (phase) planes, Wq = :func:`_padded_width`:
    output (oh, ow) is position oh*Wq + ow, tap (a, b) reads the plane
    (a*d0//s0)*Wq + b*d1//s1 words further on, and the Wq - OW positions
    after each row are computed and not stored. Taken when that uses more of
    the pixel vectors' lanes than row blocks do (56-pixel rows: 3136 of 3248
    lanes instead of 3584), for C a multiple of 4 (the word relayout) and
    rows of at least 16 pixels (a vector then spans at most two rows)."""
    if not PADDED_ROWS or not PACKED_WORDS or _flat(q) or q.xs[1] % 4 or q.os[3] < 16:
        return False
    oh, ow = q.os[2:]
    return oh * ow / _row_lanes(oh * _padded_width(q), NV_FLAT) > ow / _row_lanes(ow, NV)


# False: a stride-1 padded-rows plane row holds its own left and right pad
# columns (W + left + right words) instead of sharing them with the next row
SHARED_PAD_COLUMNS = True


def _padded_width(q: Q8Conv) -> int:
    """The words of a padded-rows plane's row: an output row and the taps'
    reach past it, at least the padded input's columns (per stride phase).
    At stride 1 (SHARED_PAD_COLUMNS) a row's right pad is the next row's
    left pad: W + max(left, right) words (a read past column W - 1 + j lands
    in the row's last columns or, past them, in the next row's first
    min(left, right) columns, all pad), at least OW: 57 for 56-pixel 3x3
    rows instead of 58, 29 for 28 instead of 30."""
    (_, pl, _, pr), d1, s1 = q.pads, q.dilations[1], q.strides[1]
    if SHARED_PAD_COLUMNS and tuple(q.strides) == (1, 1):
        return max(q.xs[3] + max(pl, pr), q.os[3])
    return max(q.os[3] + (q.ws[3] - 1) * d1 // s1, -(-(q.xs[3] + pl) // s1))


def _padded_stores(e, p0, ow: int, wq: int) -> list:
    """Where the 16 positions from ``p0`` of a padded-rows conv go in its
    output row of OH*OW pixels: [(index, mask)] of two masked stores, the
    lanes in row r = p0 div Wq with columns below OW, and the lanes past the
    row (the next row's first columns; masked out of bounds after the last
    row). ``OW >= 16`` keeps the second index >= 0 whenever it has lanes."""
    from onnx_mlir_py.passes.optimize.kernel_emit import mask
    r = e.div(p0, wq)
    c0 = e.sub(p0, e.mul(r, wq))
    at = e.add(e.mul(r, ow), c0)
    here = e.create_mask(e.sub(ow, c0), 16)
    before_next = e.create_mask(e.sub(wq, c0), 16)
    nxt = e.binary("arith.xori", before_next, e.splat_const("true", mask(16)), base="m")
    return [(at, here), (e.iop("maxsi", e.add(at, ow - wq), 0), nxt)]


# False: the filters are [F, C4*KH*KW*4] (each filter's bytes in a row; a
# tile's 8 broadcasts then read 8 rows, C*KH*KW bytes apart). A/B (Zen 4, 1
# thread, thread CPU time): ResNet-50 QDQ 0.974-0.977 (on/off), 1.041-1.049
# (off/on); single convs with their weights warm in cache 0.99-1.01: it is
# the cold weights' stream from memory that runs faster
FILTER_BLOCKS = True


# False: a row's last block has NV vectors however few pixels it has left
# (A/B: ResNet-50 QDQ, 1 thread, thread CPU time, with / without 0.988)
ROW_TAIL = True


def _row_blocks(ow: int, nv: int = NV) -> tuple:
    """(pixels in whole blocks of ``nv`` vectors, vectors of the last block):
    the rest of the row after its whole blocks takes as few vectors as hold
    it (one for ResNet's 196- and 784-pixel 1x1 images)."""
    full = ow // (16 * nv) * 16 * nv
    rest = ow - full
    if not rest:
        return full, 0
    return full, (-(-rest // 16) if ROW_TAIL else nv)


def _row_lanes(ow: int, nv: int = NV) -> int:
    """The pixels a row of ``ow`` is computed as (its blocks' lanes)."""
    full, tail = _row_blocks(ow, nv)
    return full + 16 * tail


def _direct_function(name: str, q: Q8Conv, threaded: bool, epi: Q8Epilogue | None = None) -> str:
    """``@name(x: i8 [N, C, H, W], zx: i8, w4: i8 [F/FB, C4*KH*KW*FB*4] (each
    4-channel tap's bytes of a tile's FB filters side by side: the tile reads
    its filters as one sequential stream; [F, C4*KH*KW*4] without
    FILTER_BLOCKS), base: i32 [F],
    rowsum: i32 [F], epilogue externals...) -> [N, F, OH, OW]`` (i32, or the
    epilogue's result type): the input padded with its zero point, split into
    stride phases and channel-blocked (``[N, C4, S0*S1, Hq, Wq]`` of i32 words
    holding a pixel's 4 channels, :func:`_packed_words`; ``[N, C4, S0*S1, Hq,
    Wq*4]`` bytes when C is no multiple of 4: either way each 64-byte vector
    is 16 pixels x 4 channels), then per FB filters x 32
    pixels of an output row (48 of a 1x1 conv's one-row image; the row's
    rest in as few 16-pixel vectors as hold it) a register tile of FB x NV
    (NV_FLAT) accumulators; per 4 channels and filter tap, the
    filter's 4 bytes are broadcast (s8) and multiplied into the pixel vectors
    (u8). acc starts at base[f] - zx * rowsum[f] (the zero point; base = -128
    rowsum for an s8 input, read as u8 by flipping its sign bit)."""
    from dataclasses import replace
    from onnx_mlir_py.passes.optimize.kernel_emit import Elem, Emitter, Value, tensor, vector
    from onnx_mlir_py.passes.optimize.matmul_q8 import DPBUSD, Type_I32, Type_I8
    flat, prows = _flat(q), padded_rows(q)
    x_shape, o_shape, sub = q.xs, q.os, tuple(q.strides)
    if flat:        # computed as one row of OH*OW pixels (collapsed in, expanded out)
        q = replace(q, xs=(q.xs[0], q.xs[1], 1, q.os[2] * q.os[3]),
                    os=(q.os[0], q.os[1], 1, q.os[2] * q.os[3]), strides=(1, 1))
    n, c, h, w = q.xs
    f, _, kh, kw = q.ws
    _, _, oh, ow = q.os
    (pt, pl, pb, pr), (d0, d1), (s0, s1) = q.pads, q.dilations, q.strides
    c4 = -(-c // 4)
    nv = NV_FLAT if flat or prows else NV
    # stride s: the padded input split into s0 x s1 phases (rows i*s0 + p,
    # columns j*s1 + r): tap (a, b) reads phase (a*d0 % s0, b*d1 % s1) at
    # offset (a*d0 // s0, b*d1 // s1), with unit stride (stride 1: one phase)
    if prows:       # one row of OH x Wq positions over the padded phase planes
        wq = _padded_width(q)
        span = oh * wq
        last = _row_lanes(span, nv) - 1 + (kh - 1) * d0 // s0 * wq + (kw - 1) * d1 // s1
        hp = max(-(-(last + 1) // wq), -(-(h + pt) // s0))
        row_ow = ow
        q = replace(q, os=(n, f, 1, oh * ow))
        oh, ow = 1, oh * ow
    else:
        span = ow
        hp = max(oh + (kh - 1) * d0 // s0, -(-(h + pt) // s0))
        wq = max(_row_lanes(ow, nv) + (kw - 1) * d1 // s1, -(-(w + pl) // s1))
    phases = s0 * s1
    taps = kh * kw
    e = Emitter()
    v16, v64, v4 = vector(16, Elem.I32), vector(64, Elem.I8), vector(4, Elem.I8)
    x = x_in = e.param("x", tensor(x_shape, Elem.I8))
    zx = e.param("zx", Type_I8)
    w4 = e.param("w4", tensor([f // FB, c4 * taps * FB * 4] if FILTER_BLOCKS
                              else [f, c4 * taps * 4], Elem.I8))
    base = e.param("base", tensor([f], Elem.I32))
    rowsum = e.param("rowsum", tensor([f], Elem.I32))
    out_el = epi.elem if epi is not None else Elem.I32
    out_t = tensor(q.os, out_el)
    ext_in = [e.param(f"ep{k}", external_type(x)) for k, x in enumerate(epi.externals)] \
        if epi is not None else []
    ext = list(ext_in)
    padded = f"tensor<{n}x{c4 * 4}x{hp * s0}x{wq * s1}xi8>"
    x3t = tensor([n, c4, phases, hp, wq * 4], Elem.I8)
    ind = "  " * e.ind
    if flat:
        x3d = tensor([n, c, w], Elem.I8)
        if sub[1] == 2 and SPLIT_SHUFFLES:
            x_in_rows = _subsampled(e, x_in, sub[0], o_shape[2:])
        elif sub != (1, 1):       # the pixels a strided 1x1 conv reads
            xs_t = tensor([n, c, o_shape[2], o_shape[3]], Elem.I8)
            es, xsub = e.fresh("es"), e.fresh("xsub")
            e(f"{es} = tensor.empty() : {xs_t}")
            e(f"{xsub} = linalg.generic {{indexing_maps = [affine_map<(n, c, h, w) -> "
              f"(n, c, h * {sub[0]}, w * {sub[1]})>, affine_map<(n, c, h, w) -> (n, c, h, w)>], "
              f"iterator_types = [{PAR4}]}} ins({x_in} : {x_in.type}) "
              f"outs({es} : {xs_t}) {{")
            e.lines.append(f"{ind}^bb0(%sv: i8, %so: i8):\n{ind}  linalg.yield %sv : i8\n"
                           f"{ind}}} -> {xs_t}")
            x_in_rows = Value(xsub, xs_t)
        else:
            x_in_rows = x_in
        xc = e.op("xc", f"tensor.collapse_shape {x_in_rows} [[0], [1], [2, 3]] : "
                        f"{x_in_rows.type} into {x3d}", x3d)
        x = e.op("xf", f"tensor.expand_shape {xc} [[0], [1], [2, 3]] output_shape "
                       f"[{n}, {c}, 1, {w}] : {x3d} into {tensor(q.xs, Elem.I8)}",
                 tensor(q.xs, Elem.I8))
        ext = [_one_row(e, t) if len(t.type.shape) >= 2 and
               list(t.type.shape[-2:]) == list(o_shape[2:]) else t for t in ext]
    packed = PACKED_WORDS and c % 4 == 0
    if packed:
        x3 = _packed_words(e, x, zx, (n, c4, h, w), (pt, pl), (hp, wq, s0, s1))
        if prows:      # the planes as rows of hp * wq words
            rt = tensor([n, c4, phases, hp * wq], Elem.I32)
            r1 = tensor([n, c4, phases, 1, hp * wq], Elem.I32)
            xr = e.op("xr", f"tensor.collapse_shape {x3} [[0], [1], [2], [3, 4]] : {x3.type} "
                            f"into {rt}", rt)
            x3 = e.op("xr", f"tensor.expand_shape {xr} [[0], [1], [2], [3, 4]] output_shape "
                            f"[{n}, {c4}, {phases}, 1, {hp * wq}] : {rt} into {r1}", r1)
    else:
        xp = e.fresh("xp")
        e(f"{xp} = tensor.pad {x} low[0, 0, {pt}, {pl}] high[0, {c4 * 4 - c}, "
          f"{hp * s0 - h - pt}, {wq * s1 - w - pl}] {{")
        e.lines.append(f"{ind}^bb0(%pi0: index, %pi1: index, %pi2: index, %pi3: index):\n"
                       f"{ind}  tensor.yield {zx} : i8\n{ind}}} : {x.type} to {padded}")
        eb, x4 = e.fresh("eb"), e.fresh("x4")
        # stride 1 is the one-phase case of the same copy
        blocked = f"tensor<{n}x{c4}x{s0}x{s1}x{hp}x{wq}x4xi8>"
        e(f"{eb} = tensor.empty() : {blocked}")
        e(f"{x4} = linalg.generic {{indexing_maps = [affine_map<(n, c, p, q, h, w, r) -> "
          f"(n, c * 4 + r, h * {s0} + p, w * {s1} + q)>, "
          f"affine_map<(n, c, p, q, h, w, r) -> (n, c, p, q, h, w, r)>], "
          f"iterator_types = [{PAR7}]}} ins({xp} : {padded}) "
          f"outs({eb} : {blocked}) {{")
        e.lines.append(f"{ind}^bb0(%bv: i8, %bo: i8):\n{ind}  linalg.yield %bv : i8\n"
                       f"{ind}}} -> {blocked}")
        x3 = e.op("x3", f"tensor.collapse_shape {x4} [[0], [1], [2, 3], [4], [5, 6]] : "
                        f"{blocked} into {x3t}", x3t)
    zx32 = e.op("zx32", f"{'arith.extsi' if q.signed else 'arith.extui'} {zx} : i8 to i32",
                Type_I32)
    flip = e.splat_const("-128", v64)
    zero8 = e.const("0", Type_I8)
    zero32 = e.const("0", Type_I32)
    out = e.empty(list(q.os), elem=out_el)
    nfb = f // FB
    if threaded:
        fb, tile_src, res = e.forall(nfb, out)
    else:
        fb, (tile_src,), (res,) = e.loop(0, nfb, 1, [out])
    f0 = e.mul(fb, FB)
    tile = e.extract_slice(tile_src, [0, f0, 0, 0], [n, FB, oh, ow])
    corr = []
    for i in range(FB):
        fi = e.add(f0, i)
        b_ = e.extract(base, [fi])
        rs = e.extract(rowsum, [fi])
        ci = e.binary("arith.subi", b_, e.binary("arith.muli", zx32, rs))
        corr.append(e.broadcast(ci, v16))
    wrow = [e.add(f0, i) for i in range(FB)]
    pre = [uniform(e, epi, ext, wrow[i], 16) for i in range(FB)] if epi is not None else []
    for i, p_ in enumerate(pre):        # the bias in the accumulators' start
        off = acc_offset(epi, p_)
        if off is not None:
            corr[i] = e.binary("arith.addi", corr[i], off)
    ni, (t1,), (r1,) = e.loop(0, n, 1, [tile], base="img")
    hi, (t2,), (r2,) = e.loop(0, oh, 1, [t1], base="row")

    def block(t3, w0, nv: int, in_bounds: bool):
        """FB filters x nv pixel vectors of the row from column w0 into t3."""
        cc, accs, racc = e.loop(0, c4, 1, [corr[i] for i in range(FB) for _ in range(nv)],
                                base="ch")
        accs = list(accs)

        def tap_row(accs, row_off, prow: int, tap0):
            """The kw taps of one filter row: ``row_off`` rows of the phase
            plane below the output row (in phase row ``prow``), taps from
            ``tap0`` (ints, or index values in a rolled loop)."""
            # padded rows: tap row a is a*d0//s0 rows of wq words further on
            hrow = hi if prows else e.add(hi, row_off)
            for b in range(kw):
                tap = e.add(tap0, b)
                phase = prow * s1 + b * d1 % s1
                coff = b * d1 // s1 + (row_off * wq if prows else 0)
                bx = []
                for j in range(nv):
                    if packed:      # 16 pixels' 4 channels as i32 lanes
                        v = e.cast("vector.bitcast", e.read(
                            x3, [ni, cc, phase, hrow, e.add(w0, j * 16 + coff)],
                            zero32, v16), v64)
                    else:
                        col = e.mul(e.add(w0, j * 16 + b * d1 // s1), 4)
                        v = e.read(x3, [ni, cc, phase, hrow, col], zero8, v64)
                    if q.signed:
                        v = e.binary("arith.xori", v, flip)
                    bx.append(v)
                kof = e.mul(e.add(e.mul(cc, taps), tap), 4)
                for i in range(FB):
                    wv = e.read(w4, [fb, e.add(e.mul(kof, FB), i * 4)] if FILTER_BLOCKS
                                else [wrow[i], kof], zero8, v4)
                    w1 = e.cast("vector.bitcast", wv, vector(1, Elem.I32))
                    s = e.op("ws", f"vector.extract {w1}[0] : i32 from {w1.type}", Type_I32)
                    wb = e.cast("vector.bitcast", e.broadcast(s, v16), v64)
                    for j in range(nv):
                        k = i * nv + j
                        accs[k] = e.op("acc", f"func.call @{DPBUSD}({accs[k]}, {bx[j]}, {wb}) "
                                              f"{{no_inline}} : ({v16}, {v64}, {v64}) -> {v16}",
                                       v16)
            return accs

        rolled = kh // s0 if taps >= ROLL_TAPS and not prows else 0
        if rolled:
            # filter rows a = u*s0 + p, p unrolled: row offset u*d0 + p*d0//s0,
            # phase row p*d0 % s0 (the same for every u)
            u, its, rres = e.loop(0, rolled, 1, accs, base="kr")
            its = list(its)
            for p_ in range(s0):
                its = tap_row(its, e.add(e.mul(u, d0), p_ * d0 // s0), p_ * d0 % s0,
                              e.mul(e.add(e.mul(u, s0), p_), kw))
            e.end(its)
            accs = list(rres)
        for a in range(rolled * s0, kh):
            accs = tap_row(accs, a * d0 // s0, a * d0 % s0, a * kw)
        e.end(accs)
        stores = [_padded_stores(e, e.add(w0, j * 16), row_ow, wq) for j in range(nv)] \
            if prows else []
        for i in range(FB):
            for j in range(nv):
                val = racc[i * nv + j]
                if epi is not None:
                    # whole: stored by one unmasked vector store (MAGIC_ROUND)
                    val = emit_epilogue(e, epi, val, ext, [ni, wrow[i], hi, e.add(w0, j * 16)],
                                        16, in_bounds, pre[i], whole=in_bounds and not prows)
                if prows:
                    for at, m in stores[j]:
                        t3 = e.write(val, t3, [ni, i, 0, at], m, in_bounds=False)
                else:
                    t3 = e.write(val, t3, [ni, i, hi, e.add(w0, j * 16)],
                                 in_bounds=True if in_bounds else False)
        return t3

    def pair_block(t3, w0, npix: int):
        """The row's last ``npix`` (<= TAIL_PAIR_PIXELS) pixels from column
        w0, filters in lanes: per 4 channels one vpdpbusd per pixel pair,
        lanes 0-7 the FB filters of pixel 2p, lanes 8-15 those of 2p + 1
        (the pair's two words broadcast to 8 lanes each, the tile's 32
        filter bytes to both halves); ``unroll`` accumulators per pair
        summed after the channel loop, then each filter's pixels gathered
        into lanes 0..npix-1 of one vector (its start ``corr`` added: the
        same i32 sums), the epilogue and a masked store as a tail block."""
        pairs = -(-npix // 2)
        unroll = next(u for u in (4, 2, 1) if c4 % u == 0)
        zero16 = e.splat_const("0", v16)
        cc, accs, racc = e.loop(0, c4, unroll, [zero16] * (pairs * unroll), base="chp")
        accs = list(accs)
        for u in range(unroll):
            cu = e.add(cc, u)
            wv = e.read(w4, [fb, e.mul(cu, 4 * FB)], zero8, vector(4 * FB, Elem.I8))
            wb = e.shuffle(wv, wv, list(range(4 * FB)) * 2)
            for p in range(pairs):
                pv = e.read(x3, [ni, cu, 0, hi, e.add(w0, 2 * p)], zero32, vector(2, Elem.I32))
                pb = e.cast("vector.bitcast", e.shuffle(pv, pv, [0] * FB + [1] * FB), v64)
                if q.signed:
                    pb = e.binary("arith.xori", pb, flip)
                k = p * unroll + u
                accs[k] = e.op("acc", f"func.call @{DPBUSD}({accs[k]}, {pb}, {wb}) "
                                      f"{{no_inline}} : ({v16}, {v64}, {v64}) -> {v16}", v16)
        e.end(accs)
        sums = []
        for p in range(pairs):
            a = racc[p * unroll]
            for u in range(1, unroll):
                a = e.binary("arith.addi", a, racc[p * unroll + u])
            sums.append(a)
        hi_pair = sums[1] if pairs > 1 else sums[0]
        for i in range(FB):
            lanes = [(j // 2) * 16 + (j % 2) * FB + i if j < npix else i for j in range(16)]
            val = e.binary("arith.addi", e.shuffle(sums[0], hi_pair, lanes), corr[i])
            if epi is not None:
                val = emit_epilogue(e, epi, val, ext, [ni, wrow[i], hi, w0], 16, False, pre[i])
            t3 = e.write(val, t3, [ni, i, hi, w0], in_bounds=False)
        return t3

    # whole blocks of NV vectors, then the row's rest in one block of
    # ``tail`` vectors (one when at most 16 pixels are left), or, for a
    # flat conv's last 1-4 pixels, filters in lanes (pair_block)
    full, tail = _row_blocks(span, nv)
    t = t2
    if full:
        w0, (t3,), (r3,) = e.loop(0, full, 16 * nv, [t], base="col")
        e.end([block(t3, w0, nv, True)])
        t = r3
    if tail and flat and packed and FILTER_BLOCKS and span - full <= TAIL_PAIR_PIXELS:
        t = pair_block(t, full, span - full)
    elif tail:
        t = block(t, full, tail, span - full == 16 * tail)
    e.end([t])
    e.end([r2])
    if threaded:
        e.end_forall(r1, tile_src, [0, f0, 0, 0], [n, FB, oh, ow])
    else:
        e.end([e.insert_slice(r1, tile_src, [0, f0, 0, 0], [n, FB, oh, ow])])
    if flat or prows:
        o3d = tensor([n, f, ow], out_el)
        rc = e.op("rc", f"tensor.collapse_shape {res} [[0], [1], [2, 3]] : {out_t} into {o3d}", o3d)
        full = tensor(o_shape, out_el)
        res = e.op("rf", f"tensor.expand_shape {rc} [[0], [1], [2, 3]] output_shape "
                         f"[{', '.join(map(str, o_shape))}] : {o3d} into {full}", full)
        out_t = full
    e(f"return {res} : {out_t}")
    return e.function(name, [x_in, zx, w4, base, rowsum] + ext_in, out_t)


# A flat (1x1) conv whose row ends in at most this many pixels past its
# whole blocks computes them with the filters in lanes (pair_block: ResNet's
# 7x7 maps, 49 = 48 + 1 pixels, and 14x14, 196 = 192 + 4) instead of one
# more 16-pixel vector per filter; 0: never
TAIL_PAIR_PIXELS = 4


# Filters of at least this many taps (the 7x7 stem) loop over their rows
# (s0 rows per iteration, each row's taps unrolled) instead of unrolling all
# taps: the stem's kernel was a quarter of ResNet-50 QDQ's kernel code.
ROLL_TAPS = 25


# False: the padded, phase-split, channel-blocked input is built by byte
# copies (A/B measurements: Zen 4, 1 thread, thread CPU time, words / bytes:
# 64->64 3x3 at 56x56 0.927, 128->128 3x3/2 at 56x56 0.931, 512->128 1x1 at
# 28x28 1.000; ResNet-50 QDQ 0.993 in both orders)
PACKED_WORDS = True


def _packed_words(e, x, zx, xdims: tuple, pads: tuple, dims: tuple):
    """The input ``x`` [N, C, H, W] (i8, C = 4*C4) padded with its zero point
    ``zx`` and split into stride phases, as i32 words holding each pixel's 4
    channels (little endian, so a 16-lane i32 vector bitcasts to the
    kernel's 64-byte vector of 16 pixels x 4 channels): ``[N, C4, S0*S1,
    Hq, Wq]``. The packing reads 4 channel rows with contiguous maps
    (vectorized) into the interior of a word tensor filled with zx's word;
    the stride-s gather that follows moves 4-byte words (a column stride of
    2: vector reads split by shuffles, :func:`_column_phases`). (The byte form
    pads with a scalar byte copy and gathers bytes one at a time.)"""
    from onnx_mlir_py.passes.optimize.kernel_emit import Elem, tensor
    from onnx_mlir_py.passes.optimize.matmul_q8 import Type_I32
    n, c4, h, w = xdims
    pt, pl = pads
    hq, wq, s0, s1 = dims
    ind = "  " * e.ind
    zw = e.op("zw", f"arith.muli {e.op('zxu', f'arith.extui {zx} : i8 to i32', Type_I32)}, "
                    f"{e.const('16843009', Type_I32)} : i32", Type_I32)   # 0x01010101
    filled = e.fill(zw, e.empty([n, c4, hq * s0, wq * s1], elem=Elem.I32))
    inner = _channel_words(e, x, xdims)
    padded = e.insert_slice(inner, filled, [0, 0, pt, pl], [n, c4, h, w])
    x3t = tensor([n, c4, s0 * s1, hq, wq], Elem.I32)
    if (s0, s1) == (1, 1):
        return e.op("x3", f"tensor.expand_shape {padded} [[0], [1, 2], [3], [4]] output_shape "
                          f"[{n}, {c4}, 1, {hq}, {wq}] : {padded.type} into {x3t}", x3t)
    if s1 == 2 and SPLIT_SHUFFLES:
        return _column_phases(e, padded, n * c4, hq * s0, s0, wq, x3t)
    pt_ = f"tensor<{n}x{c4}x{s0}x{s1}x{hq}x{wq}xi32>"
    ep, ph = e.fresh("ep"), e.fresh("ph")
    e(f"{ep} = tensor.empty() : {pt_}")
    e(f"{ph} = linalg.generic {{indexing_maps = [affine_map<(n, c, p, q, h, w) -> "
      f"(n, c, h * {s0} + p, w * {s1} + q)>, affine_map<(n, c, p, q, h, w) -> "
      f"(n, c, p, q, h, w)>], iterator_types = [{PAR6}]}} "
      f"ins({padded} : {padded.type}) outs({ep} : {pt_}) {{")
    e.lines.append(f"{ind}^bb0(%pv: i32, %po: i32):\n{ind}  linalg.yield %pv : i32\n"
                   f"{ind}}} -> {pt_}")
    return e.op("x3", f"tensor.collapse_shape {ph} [[0], [1], [2, 3], [4], [5]] : {pt_} "
                      f"into {x3t}", x3t)


# False: a stride-2 direct conv's phase split (and a strided 1x1 conv's
# subsampling) is a linalg.generic whose strided input map lowers to scalar
# gathers; True: vector reads of a row split into even / odd columns with
# vector.shuffle (vpermt2d / vpermt2b)
SPLIT_SHUFFLES = True


def _even_odd(e, src, idx, w0, lanes: int, pad, in_bounds: bool):
    """The ``lanes`` even and odd elements of ``src``'s row ``idx`` from
    column 2*w0: one vector read of 2*lanes elements (padded with ``pad``
    past the row when not ``in_bounds``) split with two vector.shuffles."""
    from onnx_mlir_py.passes.optimize.kernel_emit import vector
    v = e.read(src, idx + [e.mul(w0, 2)], pad, vector(2 * lanes, src.type.elem),
               in_bounds=True if in_bounds else False, base="eo")
    return [e.shuffle(v, v, list(range(r, 2 * lanes, 2)), base="eo_s") for r in (0, 1)]


def _subsampled(e, x, s0: int, out_hw):
    """The pixels a 1x1 conv of strides (``s0``, 2) reads from ``x`` [N, C,
    H, W] (i8): [N, C, OH, OW], each output row the even columns of input
    row oh*s0, 32 bytes at a time (:func:`_even_odd`)."""
    from onnx_mlir_py.passes.optimize.kernel_emit import Elem, tensor
    from onnx_mlir_py.passes.optimize.matmul_q8 import Type_I8
    n, c, h, w = x.type.shape
    oh, ow = out_hw
    src_t, out_t = tensor([n * c, h, w], Elem.I8), tensor([n * c, oh, ow], Elem.I8)
    src = e.op("ss", f"tensor.collapse_shape {x} [[0, 1], [2], [3]] : {x.type} into {src_t}",
               src_t)
    zero = e.const("0", Type_I8)
    mi, (o1,), (r1,) = e.loop(0, n * c, 1, [e.empty([n * c, oh, ow], elem=Elem.I8)], base="ssm")
    hi, (o2,), (r2,) = e.loop(0, oh, 1, [o1], base="ssh")
    cur = o2
    whole = w // 2 // 32 * 32     # blocks whose 64 bytes lie in the row
    if whole:
        w0, (o3,), (r3,) = e.loop(0, whole, 32, [cur], base="ssw")
        v, _ = _even_odd(e, src, [mi, e.mul(hi, s0)], w0, 32, zero, True)
        e.end([e.write(v, o3, [mi, hi, w0])])
        cur = r3
    if ow > whole:
        v, _ = _even_odd(e, src, [mi, e.mul(hi, s0)], whole, 32, zero, False)
        cur = e.write(v, cur, [mi, hi, whole], in_bounds=False)
    e.end([cur])
    e.end([r2])
    xs_t = tensor([n, c, oh, ow], Elem.I8)
    return e.op("ss", f"tensor.expand_shape {r1} [[0, 1], [2], [3]] output_shape "
                      f"[{n}, {c}, {oh}, {ow}] : {out_t} into {xs_t}", xs_t)


def _column_phases(e, padded, m: int, rows: int, s0: int, wq: int, x3t):
    """The stride phases of ``padded`` [N, C4, Hq*S0, Wq*2] (i32 words) as
    ``x3t`` [N, C4, S0*2, Hq, Wq]: each padded row (row h*S0 + p) read 16
    words at a time as 32, split into its even and odd columns (phases 2p
    and 2p + 1 of plane row h). The same words as the strided generic."""
    from onnx_mlir_py.passes.optimize.kernel_emit import Elem, tensor
    from onnx_mlir_py.passes.optimize.matmul_q8 import Type_I32
    hq = rows // s0
    src_t = tensor([m, hq, s0, wq * 2], Elem.I32)
    sc = e.op("ps", f"tensor.collapse_shape {padded} [[0, 1], [2], [3]] : {padded.type} into "
                    f"{tensor([m, rows, wq * 2], Elem.I32)}", tensor([m, rows, wq * 2], Elem.I32))
    src = e.op("ps", f"tensor.expand_shape {sc} [[0], [1, 2], [3]] output_shape "
                     f"[{m}, {hq}, {s0}, {wq * 2}] : {sc.type} into {src_t}", src_t)
    zero = e.const("0", Type_I32)
    out = e.empty([m, s0 * 2, hq, wq], elem=Elem.I32)
    mi, (o1,), (r1,) = e.loop(0, m, 1, [out], base="phm")
    hi, (o2,), (r2,) = e.loop(0, hq, 1, [o1], base="phh")
    cur = [o2]

    def body(w0, in_bounds):
        for p in range(s0):
            for r, v in enumerate(_even_odd(e, src, [mi, hi, p], w0, 16, zero, in_bounds)):
                cur[0] = e.write(v, cur[0], [mi, 2 * p + r, hi, w0],
                                 in_bounds=True if in_bounds else False)
    whole = wq // 16 * 16
    if whole:
        w0, (o3,), (r3,) = e.loop(0, whole, 16, [cur[0]], base="phw")
        cur[0] = o3
        body(w0, True)
        e.end([cur[0]])
        cur[0] = r3
    if wq % 16:
        body(whole, False)
    e.end([cur[0]])
    e.end([r2])
    flat = tensor([m, s0 * 2, hq, wq], Elem.I32)
    return e.op("x3", f"tensor.expand_shape {r1} [[0, 1], [2], [3], [4]] output_shape "
                      f"[{', '.join(map(str, x3t.shape))}] : {flat} into {x3t}", x3t)


def _channel_words(e, x, xdims: tuple):
    """``x`` [N, C, H, W] (i8, C = 4*C4) as i32 words [N, C4, H, W] holding
    each pixel's 4 channels (channel 4j + r in byte r, little endian): a
    generic reading 4 channel rows with contiguous maps (vectorized)."""
    from onnx_mlir_py.passes.optimize.kernel_emit import Elem, Value
    n, c4, h, w = xdims
    ind = "  " * e.ind
    x5t = f"tensor<{n}x{c4}x4x{h}x{w}xi8>"
    x5 = e.fresh("x5")
    e(f"{x5} = tensor.expand_shape {x} [[0], [1, 2], [3], [4]] output_shape "
      f"[{n}, {c4}, 4, {h}, {w}] : {x.type} into {x5t}")
    inner = e.empty([n, c4, h, w], elem=Elem.I32)
    words = e.fresh("words")
    ins = ", ".join([x5] * 4)
    maps = ", ".join(f"affine_map<(n, c, y, x) -> (n, c, {r}, y, x)>" for r in range(4))
    e(f"{words} = linalg.generic {{indexing_maps = [{maps}, affine_map<(n, c, y, x) -> "
      f"(n, c, y, x)>], iterator_types = [{PAR4}]}} ins({ins} : {', '.join([x5t] * 4)}) "
      f"outs({inner} : {inner.type}) {{")
    body = [f"{ind}^bb0(%pb0: i8, %pb1: i8, %pb2: i8, %pb3: i8, %pbo: i32):"]
    for r in range(4):
        body.append(f"{ind}  %pz{r} = arith.extui %pb{r} : i8 to i32")
    for r in range(1, 4):
        body.append(f"{ind}  %pc{r} = arith.constant {8 * r} : i32")
        body.append(f"{ind}  %ps{r} = arith.shli %pz{r}, %pc{r} : i32")
    body += [f"{ind}  %pw1 = arith.ori %pz0, %ps1 : i32",
             f"{ind}  %pw2 = arith.ori %pw1, %ps2 : i32",
             f"{ind}  %pw3 = arith.ori %pw2, %ps3 : i32", f"{ind}  linalg.yield %pw3 : i32",
             f"{ind}}} -> {inner.type}"]
    e.lines.append("\n".join(body))
    return Value(words, inner.type)


def _one_row(e, t):
    """A tensor [..., H, W] as [..., 1, H*W] (a flat conv's externals)."""
    from onnx_mlir_py.passes.optimize.kernel_emit import tensor
    sh = list(t.type.shape)
    r = len(sh)
    mid = tensor(sh[:-2] + [sh[-2] * sh[-1]], t.type.elem)
    row = tensor(sh[:-2] + [1, sh[-2] * sh[-1]], t.type.elem)
    keep = "".join(f"[{i}], " for i in range(r - 2))
    c = e.op("erc", f"tensor.collapse_shape {t} [{keep}[{r - 2}, {r - 1}]] : {t.type} into {mid}", mid)
    return e.op("ere", f"tensor.expand_shape {c} [{keep}[{r - 2}, {r - 1}]] output_shape "
                       f"[{', '.join(map(str, sh[:-2] + [1, sh[-2] * sh[-1]]))}] : {mid} into {row}", row)
