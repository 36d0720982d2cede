"""bf16 convs on AVX512-BF16: the kernel plan's ``conv_bf16`` kernel.

What it rewrites: the conv of the bf16 precision mode: a
``linalg.conv_2d_nchw_fchw`` of a bf16 input (the ``arith.truncf`` of the f32
activations, padded) and constant bf16 filters into an f32 zero fill, all
shapes static. It becomes the bf16 matmul kernel of :mod:`.matmul_bf16` in
its gather form (an implicit im2col: nothing is copied per tap):

    out[pixel, f] = sum over (kh, kw, c) of x[n, oh*s + kh*d, ow*s + kw*d, c] * w[f, c, kh, kw]

with pixels as the kernel's rows (M = N * OH * OW) and filters as its
columns (B = the filters as [KH * KW * C, F], packed at compile time). The
input is transposed once to channels-last ``[N, H, W, C]`` (C padded to even
with a zero channel), so each k pair is two adjacent channels: row m's pair
kk is at ``rows[m] + koffs[kk]`` of the flat input (two compile-time
tables). The [pixels, F] result is transposed back to NCHW in 16x16
register blocks (:func:`.conv_pixel_rows.transpose_blocks`).

:func:`match` also takes the channels-last ``linalg.conv_2d_nhwc_fhwc``
(NhwcConv under ``--precision bf16``: filters [F, KH, KW, C]), which only the
AMX kernel takes (:func:`_nhwc_conv`: no transpose on either side, the
conv's epilogue, :func:`nhwc_epilogue`, computed on its tiles).
"""
from __future__ import annotations

from dataclasses import dataclass

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.dialects.onnx.opview import owner_op
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.optimize.matmul_bf16 import (LANES, ROW_TILE, _is_bf16, _zero_fill_f32,
                                                      constant_bits)
from onnx_mlir_py.target import Target
from onnx_mlir_py.passes.optimize.kernel_budget import building

KERNEL = "conv_bf16"


@dataclass
class Bf16Conv:
    x: ir.Value                 # bf16 [N, C, H, W] (padded already; NHWC: [N, H, W, C])
    w: ir.Value                 # the constant bf16 [F, C, KH, KW] (NHWC: [F, KH, KW, C])
    xs: tuple                   # the shapes in NCHW order whatever the layout:
    ws: tuple                   # (N, C, H, W), (F, C, KH, KW),
    os: tuple                   # (N, F, OH, OW)
    s: tuple
    d: tuple
    nhwc: bool = False          # a linalg.conv_2d_nhwc_fhwc (channels-last x and result)

    @property
    def macs(self) -> int:
        return int(np.prod(self.os)) * int(np.prod(self.ws[1:]))


def _ints(op: ir.Operation, name: str) -> tuple:
    if name not in op.attributes:
        return (1, 1)
    return tuple(int(v) for v in np.array(ir.DenseIntElementsAttr(op.attributes[name])))


NCHW_OP, NHWC_OP = "linalg.conv_2d_nchw_fchw", "linalg.conv_2d_nhwc_fhwc"


def match(op: ir.Operation) -> Bf16Conv | None:
    """The bf16 conv ``op`` computes (see the module docstring), or None.
    Also the channels-last form (``linalg.conv_2d_nhwc_fhwc``, ``nhwc``:
    only the AMX kernel takes it)."""
    if op.name not in (NCHW_OP, NHWC_OP) or len(op.operands) != 3 or len(op.results) != 1:
        return None
    x, w, c = op.operands
    rt = op.results[0].type
    if not (_is_bf16(x.type) and _is_bf16(w.type) and isinstance(rt.element_type, ir.F32Type)):
        return None
    if not (x.type.has_static_shape and w.type.has_static_shape and rt.has_static_shape):
        return None
    cw = owner_op(w)
    if cw is None or cw.name != "arith.constant" or not _zero_fill_f32(c):
        return None
    xs, ws, os_ = tuple(x.type.shape), tuple(w.type.shape), tuple(rt.shape)
    if op.name == NHWC_OP:
        return Bf16Conv(x, w, _nchw(xs), _nchw(ws), _nchw(os_), _ints(op, "strides"),
                        _ints(op, "dilations"), nhwc=True)
    return Bf16Conv(x, w, xs, ws, os_, _ints(op, "strides"), _ints(op, "dilations"))


def _nchw(shape: tuple) -> tuple:
    """A channels-last shape (N, H, W, C) in NCHW order."""
    return (shape[0], shape[3], shape[1], shape[2])


def plan(op: ir.Operation, target: Target):
    """The kernel plan's rule: (tile, threaded, reason) or None."""
    if not target.avx512_bf16 or target.vector_width != LANES:
        return None
    cv = match(op)
    if cv is None or cv.nhwc:
        return None
    from onnx_mlir_py.passes.optimize.kernel_plan import THREAD_MIN_MACS, _macs_str
    npad = -(-cv.ws[0] // LANES) * LANES
    nb = 32 if npad % 32 == 0 else 16
    return (f"{ROW_TILE[nb]} pixels x {nb} filters, k 2", cv.macs >= THREAD_MIN_MACS,
            f"bf16 conv: channels-last implicit im2col, vdpbf16ps; {_macs_str(cv.macs)}")


def tables(cv: Bf16Conv, c2: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows, koffs): each output pixel's first element in the flat
    channels-last input of ``c2`` channels, and each k pair's offset from
    it (k ordered (kh, kw, c), as :func:`filters_matrix`)."""
    n, _c, h, w = cv.xs
    _f, _c, kh, kw = cv.ws
    oh, ow = cv.os[2:]
    ni, ohi, owi = np.meshgrid(np.arange(n), np.arange(oh), np.arange(ow), indexing="ij")
    rows = ((ni * h + ohi * cv.s[0]) * w + owi * cv.s[1]) * c2
    khi, kwi, cc = np.meshgrid(np.arange(kh), np.arange(kw), np.arange(c2 // 2), indexing="ij")
    koffs = (khi * cv.d[0] * w + kwi * cv.d[1]) * c2 + 2 * cc
    if rows.max() + (koffs.max() if koffs.size else 0) + 2 > np.iinfo(np.int32).max:
        return None
    return rows.reshape(-1).astype(np.int32), koffs.reshape(-1).astype(np.int32)


def filters_matrix(bits: np.ndarray, c2: int) -> np.ndarray:
    """W's bits [F, C, KH, KW] -> B [KH * KW * c2, F] (zero rows for the
    padding channel)."""
    f, c, kh, kw = bits.shape
    wp = np.zeros((f, c2, kh, kw), np.uint16)
    wp[:, :c] = bits
    return np.ascontiguousarray(wp.transpose(2, 3, 1, 0).reshape(kh * kw * c2, f))


def transpose_text(name: str, m: int, f: int, threaded: bool) -> str:
    """``func.func private @name(x: [m', f] f32) -> [f, m] f32`` (m' >= m
    rows, f a multiple of 16): conv_pixel_rows.transpose_blocks' 16x16
    register blocks (shuffles)."""
    from onnx_mlir_py.passes.optimize.conv_pixel_rows import transpose_blocks
    from onnx_mlir_py.passes.optimize.kernel_emit import Emitter, tensor
    e = Emitter()
    x = e.param("x", tensor([None, f]))
    res = transpose_blocks(e, x, e.empty([f, m]), m, LANES, par=threaded)
    e(f"return {res} : {tensor([f, m])}")
    return e.function(name, [x], tensor([f, m]))


def _value(x) -> ir.Value:
    """The result of a linalg builder (a Value, or the op of one result)."""
    if isinstance(x, ir.Value):
        return x
    if isinstance(x, ir.OpResultList):
        return x[0]
    return x.results[0]


def bf16_convs(module: ir.Module, target: Target, threads: bool, plan_=None) -> int:
    """Rewrite the convs the plan gave ``conv_bf16``. Returns the count."""
    from mlir.dialects import arith, func, tensor as tensor_d
    from onnx_mlir_py import ir_linalg as linalg
    from onnx_mlir_py.passes.optimize.kernel_plan import KERNEL_ATTR, THREAD_MIN_MACS, assigned
    from onnx_mlir_py.passes.optimize.matmul_q8 import add_functions
    from onnx_mlir_py.passes.optimize import matmul_bf16_amx as amx
    from onnx_mlir_py.passes.optimize.matmul_bf16 import finish, kernel_call, pad_columns
    if not target.avx512_bf16 or target.vector_width != LANES:
        return 0
    funcs: dict = {}
    count = 0
    bf16, f32, i32 = ir.BF16Type.get(), ir.F32Type.get(), ir.IntegerType.get_signless(32)
    for op in list(walk_ops(module.operation, {NCHW_OP, NHWC_OP})):
        with building(op):
            if KERNEL_ATTR in op.attributes and not assigned(op, KERNEL) and \
                    not assigned(op, amx.CONV_KERNEL):
                continue
            on_amx = assigned(op, amx.CONV_KERNEL) or \
                (KERNEL_ATTR not in op.attributes and amx.available(target))
            cv = match(op)
            if cv is None or (cv.nhwc and not on_amx):
                continue
            if cv.nhwc:
                count += _nhwc_conv(module, funcs, op, cv, threads and cv.macs >= THREAD_MIN_MACS)
                continue
            bits = constant_bits(owner_op(cv.w))
            n, c, h, w = cv.xs
            c2 = c + c % 2
            tabs = tables(cv, c2)
            if bits is None or tabs is None:
                continue
            f = cv.ws[0]
            m = n * cv.os[2] * cv.os[3]
            b = pad_columns(filters_matrix(bits, c2))
            with ir.InsertionPoint(op), op.location:
                def const(arr, et):
                    t = ir.RankedTensorType.get(list(arr.shape), et)
                    return arith.ConstantOp(t, ir.DenseElementsAttr.get(arr, type=t)).result

                xt = _value(linalg.transpose(cv.x, outs=[tensor_d.EmptyOp([n, h, w, c], bf16).result],
                                             permutation=[0, 2, 3, 1]))
                if c2 != c:             # a zero channel: k pairs of whole channels
                    z = _value(linalg.fill(arith.ConstantOp(bf16, 0.0).result,
                                           outs=[tensor_d.EmptyOp([n, h, w, c2], bf16).result]))
                    xt = tensor_d.InsertSliceOp(xt, z, [], [], [], [0] * 4, [n, h, w, c],
                                                [1] * 4).result
                flat = tensor_d.CollapseShapeOp(
                    ir.RankedTensorType.get([n * h * w * c2], bf16), xt,
                    ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(
                        ir.IntegerType.get_signless(64), i) for i in range(4)])])).result
                rows, koffs = tabs
                rows_t = tensor_d.CastOp(ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size()], i32),
                                         const(rows, i32)).result
                par = threads and cv.macs >= THREAD_MIN_MACS
                if on_amx and amx.pointwise(cv, c2):    # the channels-last pixels are A
                    a2 = tensor_d.CastOp(ir.RankedTensorType.get(
                        [ir.ShapedType.get_dynamic_size(), c2], bf16), tensor_d.CollapseShapeOp(
                        ir.RankedTensorType.get([n * h * w, c2], bf16), xt,
                        ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(
                            ir.IntegerType.get_signless(64), i) for i in g]) for g in ([0, 1, 2], [3])]
                        )).result).result
                    res = amx.kernel_call(module, funcs, c2, b, par, [a2], out_m=m if amx.TRANSPOSED_OUT else None)
                elif on_amx:    # AMX: an im2col of each block of 32 pixels (matmul_bf16_amx.py)
                    res = amx.kernel_call(module, funcs, len(koffs) * 2, b, par, [flat, rows_t],
                                          gather=(n * h * w * c2, amx.segments(cv, c2)),
                                          out_m=m if amx.TRANSPOSED_OUT else None)
                else:
                    res = kernel_call(module, funcs, len(koffs) * 2, b, par,
                                      [flat, rows_t, const(koffs, i32)], gather=n * h * w * c2)
                fp = b.shape[1]
                key = ("transpose", m, fp, par)
                t_out = on_amx and amx.TRANSPOSED_OUT
                if t_out:       # [F', M] already (the kernel's transposed stores)
                    pass
                elif key not in funcs:
                    funcs[key] = f"__om_bf16_transpose_{m}x{fp}" + ("_par" if par else "")
                    add_functions(module, ir.Module.parse(
                        "module {\n" + transpose_text(funcs[key], m, fp, par) + "\n}", module.context))
                if not t_out:
                    res = func.CallOp([ir.RankedTensorType.get([fp, m], f32)],
                                      ir.FlatSymbolRefAttr.get(funcs[key]), [res]).results[0]
                if fp != f:
                    res = tensor_d.ExtractSliceOp(ir.RankedTensorType.get([f, m], f32), res, [], [], [],
                                                  [0, 0], [f, m], [1, 1]).result
                # [F, N * OH * OW] -> NCHW: a reshape for one image, else via [F, N, OH, OW]
                shape = list(cv.os) if n == 1 else [f, n, cv.os[2], cv.os[3]]
                groups = ([0, 1], [2, 3]) if n == 1 else ([0], [1, 2, 3])
                res = tensor_d.ExpandShapeOp(
                    ir.RankedTensorType.get(shape, f32), res,
                    ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(
                        ir.IntegerType.get_signless(64), i) for i in g]) for g in groups]),
                    [], shape).result
                if n != 1:
                    res = _value(linalg.transpose(res, outs=[tensor_d.EmptyOp(list(cv.os), f32).result],
                                                  permutation=[1, 0, 2, 3]))
            op.results[0].replace_all_uses_with(res)
            op.erase()
            count += 1
    finish(module, funcs)
    return count


# -- channels-last convs (linalg.conv_2d_nhwc_fhwc) on AMX ---------------------------
NHWC_EPILOGUES = True   # False: the elementwise ops after the conv stay generics (A/B)


def _nhwc_parallel(g: ir.Operation, t: ir.Type, bias_t: ir.Type) -> bool:
    """An all-parallel generic with one result of type ``t`` (the conv's
    [N, OH, OW, F] f32) whose operands have type ``t`` and identity maps, or
    type ``bias_t`` ([F]) and the map (d0, d1, d2, d3) -> (d3)."""
    if g.name != "linalg.generic" or len(g.results) != 1 or g.results[0].type != t \
            or len(g.regions) != 1 or len(g.regions[0].blocks) != 1:
        return False
    if any("parallel" not in str(a) for a in g.attributes["iterator_types"]):
        return False
    ident = ir.AffineMap.get_identity(4)
    last = ir.AffineMap.get(4, 0, [ir.AffineDimExpr.get(3)])
    maps = [ir.AffineMapAttr(a).value for a in g.attributes["indexing_maps"]]
    return all((v.type == t and m == ident) or (v.type == bias_t and m == last)
               for v, m in zip(g.operands, maps)) and g.operands[len(g.operands) - 1].type == t


def _constant(x: ir.Value) -> bool:
    return not isinstance(x.owner, ir.Block) and x.owner.name == "arith.constant"


def nhwc_epilogue(op: ir.Operation):
    """``(Epilogue, kinds)``: the elementwise generics after a channels-last
    conv ``op`` that its kernel computes on its C tiles' rows (as
    :func:`.epilogue.epilogue_chain`: grown one ready user at a time, cut to
    the longest prefix whose only escaping value is its last result), also
    taking a bias ([F], broadcast along the last dim; ``kinds[k]`` "bias")
    and only tensors defined before ``op`` (``"full"``: a residual), so that
    the call replaces the conv in its place. None when there is none."""
    from onnx_mlir_py.passes.optimize.epilogue import (MAX_TENSORS, _op, _translate,
                                                       closed_prefixes, dominates, grow_chain,
                                                       hoist_to)
    v = op.results[0]
    t = v.type
    bias_t = ir.RankedTensorType.get([t.shape[3]], t.element_type)
    ext_all: list = []

    def ready(g, ext) -> bool:
        new = [x for x in dict.fromkeys(ext) if x not in ext_all]
        if len(ext_all) + len(new) > MAX_TENSORS \
                or not all(dominates(x, op) or _constant(x) for x in ext):
            return False
        ext_all.extend(new)
        return True

    region = grow_chain(v, op.block, lambda g: _nhwc_parallel(g, t, bias_t), ready)
    for chain in closed_prefixes(v, region):
        epi = _translate(v, chain)
        if epi is None:
            continue
        for x in epi.tensors:       # a constant (a bias) defined after the conv
            if not dominates(x, op):
                _op(x.owner).move_before(op)
        if hoist_to(epi, op):
            return epi, tuple("bias" if x.type == bias_t else "full" for x in epi.tensors)
    return None


def _nhwc_conv(module: ir.Module, funcs: dict, op: ir.Operation, cv: Bf16Conv, par: bool) -> int:
    """A channels-last conv (and its epilogue) -> the AMX kernel's call:
    the NHWC input read in place (the direct 1x1 form, else the im2col of
    each block; C need not be even: a k pair may span two channels or
    taps), the result [N * OH * OW, F] the NHWC output itself."""
    from mlir.dialects import arith, tensor as tensor_d
    from onnx_mlir_py.passes.optimize import matmul_bf16_amx as amx
    from onnx_mlir_py.passes.optimize.matmul_bf16 import pad_columns
    bits = constant_bits(owner_op(cv.w))
    n, c, h, w = cv.xs
    tabs = tables(cv, c)
    if bits is None or tabs is None:
        return 0
    b = pad_columns(filters_matrix(np.ascontiguousarray(bits.transpose(0, 3, 1, 2)), c))
    found = nhwc_epilogue(op) if NHWC_EPILOGUES else None
    chain = [op] + (list(found[0].generics) if found else [])
    rows_out = (n, cv.os[2], cv.os[3], cv.ws[0])
    bf16, i32 = ir.BF16Type.get(), ir.IntegerType.get_signless(32)
    dyn = ir.ShapedType.get_dynamic_size()

    def collapse(x, shape, groups):
        return tensor_d.CollapseShapeOp(ir.RankedTensorType.get(shape, bf16), x, ir.ArrayAttr.get(
            [ir.ArrayAttr.get([ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i) for i in g])
             for g in groups])).result

    with ir.InsertionPoint(op), ir.Location.fused([o.location for o in chain]):
        extra = (list(found[0].tensors) + list(found[0].captured)) if found else []
        epi = (found[0].ops, found[0].result, found[1], len(found[0].captured)) if found else None
        if amx.pointwise(cv, c):        # the pixels [N * H * W, C] are A
            a2 = tensor_d.CastOp(ir.RankedTensorType.get([dyn, c], bf16),
                                 collapse(cv.x, [n * h * w, c], ([0, 1, 2], [3]))).result
            res = amx.kernel_call(module, funcs, c, b, par, [a2] + extra, rows_out=rows_out, epi=epi)
        else:
            flat = collapse(cv.x, [n * h * w * c], ([0, 1, 2, 3],))
            rows = tabs[0]
            rt = ir.RankedTensorType.get(list(rows.shape), i32)
            rows_t = tensor_d.CastOp(ir.RankedTensorType.get([dyn], i32), arith.ConstantOp(
                rt, ir.DenseElementsAttr.get(rows, type=rt)).result).result
            res = amx.kernel_call(module, funcs, cv.ws[1] * cv.ws[2] * cv.ws[3], b, par, [flat, rows_t] + extra,
                                  gather=(n * h * w * c, amx.segments(cv, c)),
                                  rows_out=rows_out, epi=epi)
    chain[-1].results[0].replace_all_uses_with(res)
    for o in reversed(chain):
        o.erase()
    return 1
