"""Max / sum pools and depthwise convs with dynamic spatial dims -> a vector row kernel.

``linalg.pooling_nchw_max`` / ``_sum`` (f32, static channels and window)
whose H/W (and maybe batch) are known only at run time; the static ones are
:mod:`.pool`'s. Per image (the batch loop of :mod:`.batch_loop`):

    for c (an scf.forall over the channels when threaded), for oh:
      for ow in whole chunks of V lanes, then one masked chunk:
        acc = init                        (the output's fill: -inf / 0)
        for kh, kw:  acc = max/add(acc, x[c, oh*s + kh*d, (ow + q)*s + kw*d  for q < V])
        out[c, oh, ow ...] = epilogue(acc)

A stride s > 1 reads (V-1)*s+1 contiguous values and keeps every s-th lane
(``vector.shuffle``); the last chunk's reads and write are masked (a mask of
0 lanes does nothing). The input's padding stays a ``tensor.pad`` (the
kernel reads the padded image); the output's fill is the accumulators'
start and a unary elementwise user (AveragePool's division, a ReLU) is
applied before the store.

Without it the pool ran as linalg's scalar loop nest: MaxPool 3x3/2 of
ResNet-18 with dynamic H/W took 1.1 ms at 224x224 (the static kernel 0.16).

Depthwise convs (``linalg.depthwise_conv_2d_nchw_chw``, f32, static
channels and weights [C, KH, KW], at most :data:`MAX_TAPS` taps; the plan's
``depthwise_dyn``) of column stride 1, or 2 with dilation 1, run
:mod:`.depthwise_dyn`'s row kernel (the Conv's zero ``tensor.pad`` fused as
its scratch plane, several rows and vectors of accumulators); other strides
this kernel with ``acc = fma(x, w[c, kh, kw], acc)`` per tap, the weights
broadcast once per channel, the Conv's pad a separate copy. Both start the
accumulators from the fused bias add's ``b[c]`` (when the output's fill is
0) or the fill, and apply an elementwise user or a SiLU chain before the
store. Before, such a conv (EfficientNet / MobileNet with dynamic H/W) was
linalg's generic loop nest.

Large windows (more than :data:`MAX_TAPS` taps: transformers' EfficientNet
pooler is an AveragePool of 1280 x 1280 with ceil_mode, whose dynamic
lowering pads the map to the whole window) are not unrolled: the kernel of
:func:`window_function` computes one output at a time, its window clipped
at run time to the rows and columns inside the input, the columns in
vector chunks (a masked last one) reduced at the end. When the input is a
``tensor.pad`` with the combine's identity (0 for a sum, -inf for a max;
static low pads) it reads the pad's source, so the padding is neither
materialised nor summed. Unrolling the 1280 x 1280 window never finished
compiling (minutes in the emitter alone).
"""
from __future__ import annotations

import math

import mlir.ir as ir

from onnx_mlir_py.dialects.onnx.opview import owner_op
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.optimize.batch_loop import (BATCHED, SHARED, add_functions,
                                                     batch_loop_function)
from onnx_mlir_py.passes.optimize import depthwise_dyn
from onnx_mlir_py.passes.optimize.conv_dyn import _dyn_shape
from onnx_mlir_py.passes.optimize.kernel_emit import F32, Emitter, Value, tensor, vector
from onnx_mlir_py.passes.optimize.epilogue import call_site, dynamic_chain, vector_lines
from onnx_mlir_py.passes.optimize.kernel_fusion import (bias_add_user, epilogue_user,
                                                        fill_scalar, replace_with_call,
                                                        single_user, static_f32, window_ints,
                                                        zero_fill, zero_pad)
from onnx_mlir_py.passes.optimize.row_emit import emit_ops
from onnx_mlir_py.target import Target
from onnx_mlir_py.passes.optimize.kernel_plan import assigned
from onnx_mlir_py.passes.optimize.kernel_budget import building

KINDS = {"linalg.pooling_nchw_max": "arith.maximumf", "linalg.pooling_nchw_sum": "arith.addf"}
DEPTHWISE = "linalg.depthwise_conv_2d_nchw_chw"
FMA = "vector.fma"
KINDS_DW = {**KINDS, DEPTHWISE: FMA}
# vector.reduction kind and identity (f32 bits) of each combine
REDUCE = {"arith.maximumf": ("maximumf", "0xFF800000"), "arith.addf": ("add", "0.0")}
# windows of more taps than this get the clipped-loop kernel (window_function)
MAX_TAPS = 64


def _window_signature(op: ir.Operation, names, wrank: int):
    """(x shape, window / weights shape, out shape, strides, dilations) of an
    f32 NCHW op of ``names`` whose H/W are (partly) dynamic, channels and
    window (rank ``wrank``) static, output starting from a fill; else None."""
    if op.name not in names or len(op.operands) != 3 or len(op.results) != 1:
        return None
    xs, ws, os_ = _dyn_shape(op.operands[0]), static_f32(op.operands[1]), \
        _dyn_shape(op.operands[2])
    if xs is None or ws is None or os_ is None or len(ws) != wrank or 0 in ws:
        return None
    if None in (xs[1], os_[1]) or xs[1] != os_[1] or None not in xs[2:] + os_[2:]:
        return None           # dynamic channels: not handled; static H/W: pool.py, depthwise.py
    if xs[1] == 0:
        return None           # no channels: the kernel's [1, 0, 1, W] slices do not verify
    if (xs[0] is None) != (os_[0] is None) or (xs[0] is not None and xs[0] != 1):
        return None
    s, d = window_ints(op, "strides"), window_ints(op, "dilations")
    if len(s) != 2 or len(d) != 2 or min(s + d) < 1 or fill_scalar(op.operands[2]) is None:
        return None
    return tuple(xs), tuple(ws), tuple(os_), tuple(s), tuple(d)


def signature(op: ir.Operation):
    """(x shape, window, out shape, strides, dilations) of a pool whose H/W
    are (partly) dynamic, channels static, output starting from a fill;
    else None."""
    return _window_signature(op, KINDS, 2)


def _chunk(e: Emitter, combine: str, v: dict, kh: int, kw: int, s, d, col: Value,
           smask: Value | None, lanes: int) -> Value:
    """The accumulator of one chunk of output columns from ``col``."""
    span = (lanes - 1) * s[1] + 1
    xc = e.iop("muli", col, e.index(s[1]))
    acc = v["initv"]
    for i in range(kh):
        for j in range(kw):
            xa = e.iop("addi", xc, e.index(j * d[1]))
            x = e.read(v["x"], [e.index(0), v["ch"], v["hrow"][i], xa], v["padv"],
                       vector(span if s[1] != 1 else lanes), smask)
            if s[1] != 1:
                x = e.shuffle(x, x, [q * s[1] for q in range(lanes)])
            acc = e.fma(x, v["w"][i][j], acc) if combine == FMA else e.binary(combine, acc, x)
    return acc


def image_function(name: str, kind: str, xs, ws, os_, s, d, lanes: int, threads: bool,
                   epilogue: tuple = (), epi_result: str = "", n_cap: int = 0,
                   bias: bool = False, chain: bool = False) -> str:
    """``func.func private @name(x [1, C, H, W], window, out [1, C, OH, OW],
    init, captured...) -> out``: one image, written into ``out``. A depthwise
    conv (``kind`` DEPTHWISE): ``window`` is the weights [C, KH, KW] and, with
    ``bias``, ``init`` the bias [C] instead of a scalar. ``chain``: the
    ``epilogue`` is a :func:`.epilogue.dynamic_chain`'s ops (a SiLU), written by
    :func:`.epilogue.vector_lines` (exp as math_approx's)."""
    c = xs[1]
    kh, kw = ws[-2:]
    vt = vector(lanes)
    combine = KINDS_DW[kind]
    e = Emitter()
    xin = e.param("x", tensor([1] + list(xs[1:])))
    params = [xin, e.param("win", tensor(ws)), e.param("dst", tensor([1] + list(os_[1:]))),
              e.param("init", tensor([c]) if bias else F32)]
    dst = params[2]
    ecaps = [e.param("ecap", F32) for _ in range(n_cap)]
    v = {"x": xin, "padv": e.const("0.0", F32)}
    if not bias:
        v["initv"] = e.broadcast(params[3], vt, base="initv")
    ecv = [e.broadcast(p, vt, base="ecv") for p in ecaps]
    oh, ow = e.dim(dst, 2), e.dim(dst, 3)
    rem = e.rem(ow, lanes)
    full = e.iop("subi", ow, rem)
    m = e.create_mask(rem, lanes)
    smask = m
    if s[1] != 1:
        span = (lanes - 1) * s[1] + 1
        rs = e.iop("muli", rem, e.index(s[1]))
        rs1 = e.iop("subi", rs, e.index(s[1] - 1))
        smask = e.create_mask(e.iop("maxsi", rs1, e.index(0)), span)
    if threads:
        ch, o, res = e.forall(c, dst)
    else:
        ch, (o,), (res,) = e.loop(e.index(0), e.index(c), e.index(1), [dst])
    v["ch"] = ch
    if bias:
        v["initv"] = e.broadcast(e.extract(params[3], [ch]), vt, base="initv")
    if combine == FMA:      # the channel's weights, broadcast once
        v["w"] = [[e.broadcast(e.extract(params[1], [ch, i, j]), vt, base="wv")
                   for j in range(kw)] for i in range(kh)]
    pl = e.extract_slice(o, [0, ch, 0, 0], [1, 1, oh, ow])
    r, (t,), (rows,) = e.loop(e.index(0), oh, e.index(1), [pl])
    rbase = e.iop("muli", r, e.index(s[0]))
    v["hrow"] = [e.iop("addi", rbase, e.index(i * d[0])) for i in range(kh)]
    post = (lambda a: a)
    if epilogue:
        post = (lambda a: vector_lines(e, epilogue, epi_result, a, [], ecaps)) if chain \
            else (lambda a: emit_ops(e, epilogue, epi_result, a, ecv))
    q, (u,), (done,) = e.loop(e.index(0), full, e.index(lanes), [t])
    acc = post(_chunk(e, combine, v, kh, kw, s, d, q, None, lanes))
    e.end([e.write(acc, u, [0, 0, r, q])])
    acc = post(_chunk(e, combine, v, kh, kw, s, d, full, smask, lanes))
    e.end([e.write(acc, done, [0, 0, r, full], m)])
    return _close(e, name, params + ecaps, threads, (rows, o, ch, oh, ow), res)


def _close(e: Emitter, name: str, params: list, threads: bool, plane, res: Value) -> str:
    """Close the channel loop (``plane``: the channel's result rows, the
    loop's output, the channel, OH, OW) and return the kernel function."""
    rows, o, ch, oh, ow = plane
    if threads:
        e.end_forall(rows, o, [0, ch, 0, 0], [1, 1, oh, ow])
    else:
        e.end([e.insert_slice(rows, o, [0, ch, 0, 0], [1, 1, oh, ow])])
    e(f"return {res} : {params[2].type}")
    return e.function(name, params, params[2].type)


def identity_pad(v: ir.Value, combine: str):
    """(source, (top, left)) when ``v`` is a ``tensor.pad`` (used once) of the
    two spatial dims of a 4-D f32 tensor by static low pads (any high pads)
    with the constant identity of ``combine`` (+0.0 for a sum, -inf for a
    max): reading the source and skipping the padding gives the same pool."""
    o = owner_op(v)
    if o is None or o.name != "tensor.pad" or len(o.operands) < 1 or single_user(v) is None:
        return None
    dyn = ir.ShapedType.get_dynamic_size()
    lo = list(ir.DenseI64ArrayAttr(o.attributes["static_low"]))
    hi = list(ir.DenseI64ArrayAttr(o.attributes["static_high"]))
    if len(lo) != 4 or lo[:2] != [0, 0] or hi[:2] != [0, 0] or dyn in lo or min(lo) < 0:
        return None
    if _dyn_shape(o.operands[0]) is None:
        return None
    ops = [x.operation for x in o.regions[0].blocks[0].operations]
    if len(ops) not in (1, 2) or ops[-1].name != "tensor.yield":
        return None
    cst = owner_op(ops[-1].operands[0])
    if cst is None or cst.name != "arith.constant" or (len(ops) == 2 and ops[0] != cst) \
            or not isinstance(cst.attributes["value"], ir.FloatAttr):
        return None
    value = ir.FloatAttr(cst.attributes["value"]).value
    ok = (value == 0.0 and math.copysign(1.0, value) > 0) if combine == "arith.addf" \
        else value == -math.inf
    return (o.operands[0], (lo[2], lo[3])) if ok else None


def _clip(e: Emitter, start: Value, size: Value, taps: int, dil: int) -> tuple[Value, Value]:
    """[lo, hi): the taps t < ``taps`` whose position start + t*dil is in [0, size)
    (hi <= lo when none)."""
    lo = e.iop("maxsi", e.iop("ceildivsi", e.iop("subi", e.index(0), start), e.index(dil)),
               e.index(0))
    hi = e.iop("minsi", e.iop("ceildivsi", e.iop("subi", size, start), e.index(dil)),
               e.index(taps))
    return lo, hi


def window_function(name: str, kind: str, xs, ws, os_, s, d, lanes: int, threads: bool,
                    lows=(0, 0), epilogue: tuple = (), epi_result: str = "",
                    n_cap: int = 0) -> str:
    """The large-window kernel: ``func.func private @name(x [1, C, H, W], window,
    out [1, C, OH, OW], init, captured...) -> out``, ``x`` the unpadded input
    when ``lows`` (its top / left pads) are given. Per output, its window's rows
    and columns inside x (clipped at run time), the columns in chunks of
    ``lanes`` (dilation > 1: read (lanes-1)*d+1 and keep every d-th)."""
    c = xs[1]
    kh, kw = ws
    combine = KINDS[kind]
    red, ident = REDUCE[combine]
    e = Emitter()
    xin = e.param("x", tensor([1] + list(xs[1:])))
    params = [xin, e.param("win", tensor(ws)), e.param("dst", tensor([1] + list(os_[1:]))),
              e.param("init", F32)]
    dst = params[2]
    ecaps = [e.param("ecap", F32) for _ in range(n_cap)]
    vt, one = vector(lanes), vector(1)
    span = (lanes - 1) * d[1] + 1
    padv = e.const(ident, F32)
    idv = e.const(f"dense<{ident}>", vt)
    ecv = [e.broadcast(p, one, base="ecv") for p in ecaps]
    hx, wx = e.dim(xin, 2), e.dim(xin, 3)
    oh, ow = e.dim(dst, 2), e.dim(dst, 3)
    if threads:
        ch, o, res = e.forall(c, dst)
    else:
        ch, (o,), (res,) = e.loop(e.index(0), e.index(c), e.index(1), [dst])
    pl = e.extract_slice(o, [0, ch, 0, 0], [1, 1, oh, ow])
    r, (t,), (rows,) = e.loop(e.index(0), oh, e.index(1), [pl])
    top = e.iop("subi", e.iop("muli", r, e.index(s[0])), e.index(lows[0]))
    ilo, ihi = _clip(e, top, hx, kh, d[0])
    q, (u,), (cols,) = e.loop(e.index(0), ow, e.index(1), [t])
    left = e.iop("subi", e.iop("muli", q, e.index(s[1])), e.index(lows[1]))
    jlo, jhi = _clip(e, left, wx, kw, d[1])
    n = e.iop("maxsi", e.iop("subi", jhi, jlo), e.index(0))
    col0 = e.iop("addi", left, e.iop("muli", jlo, e.index(d[1])))
    rem = e.rem(n, lanes)
    full = e.iop("subi", n, rem)
    m = e.create_mask(rem, lanes)
    smask = m if d[1] == 1 else e.create_mask(
        e.iop("maxsi", e.iop("subi", e.iop("muli", rem, e.index(d[1])), e.index(d[1] - 1)),
              e.index(0)), span)

    def chunk(acc: Value, row: Value, j: Value, mask_: Value | None) -> Value:
        at = e.iop("addi", col0, e.iop("muli", j, e.index(d[1])))
        x = e.read(xin, [e.index(0), ch, row, at], padv, vector(span), mask_,
                   in_bounds=None if mask_ is not None else True)
        if d[1] != 1:
            x = e.shuffle(x, x, [k * d[1] for k in range(lanes)])
        return e.binary(combine, acc, x)

    i, (a,), (acc,) = e.loop(ilo, e.iop("maxsi", ihi, ilo), e.index(1), [idv])
    row = e.iop("addi", top, e.iop("muli", i, e.index(d[0])))
    j, (aj,), (accj,) = e.loop(e.index(0), full, e.index(lanes), [a])
    e.end([chunk(aj, row, j, None)])
    e.end([chunk(accj, row, full, smask)])
    total = e.binary(combine, params[3], e.reduction(red, acc), base="tot")
    out = e.broadcast(total, one, base="o")
    if epilogue:
        out = emit_ops(e, epilogue, epi_result, out, ecv)
    e.end([e.write(out, u, [0, 0, r, q])])
    e.end([cols])
    return _close(e, name, params + ecaps, threads, (rows, o, ch, oh, ow), res)


def depthwise_signature(op: ir.Operation):
    """(x shape, w shape, out shape, strides, dilations) of an f32 depthwise
    conv with (partly) dynamic H/W, static channels and weights (at most
    MAX_TAPS taps), output starting from a fill; else None."""
    sig = _window_signature(op, (DEPTHWISE,), 3)
    if sig is None or sig[1][0] != sig[0][1] or sig[1][1] * sig[1][2] > MAX_TAPS:
        return None
    return sig


def _depthwise(module: ir.Module, target: Target, threads: bool, plan, funcs: dict) -> int:
    """Rewrite the depthwise convs of :func:`depthwise_signature` (with a plan:
    those it gave to ``depthwise_dyn``), their bias add and elementwise user
    fused, or a chain of elementwise ops reading the result twice (SiLU:
    :func:`.epilogue.dynamic_chain`)."""
    convs = [(op, sig) for op in walk_ops(module.operation, {DEPTHWISE})
             if (plan is None or assigned(op, "depthwise_dyn"))
             and (sig := depthwise_signature(op)) is not None]
    for op, sig in convs:
        with building(op):
            xs, ws, os_, s, d = sig
            value, dest = fill_scalar(op.operands[2])
            fused = bias_add_user(op.results[0]) if zero_fill(op.operands[2]) else None
            last = fused[0] if fused is not None else op
            # a single elementwise user, or a chain of them (SiLU: its Sigmoid and Mul
            # both read the conv): epi[0] the generic, or a tuple of the chain's
            epi = epilogue_user(last.results[0]) or dynamic_chain(last.results[0])
            multi = epi is not None and isinstance(epi[0], tuple)
            x, dead, pad = op.operands[0], [], (0, 0, 0, 0)
            padded = zero_pad(x, _dyn_shape) if depthwise_dyn.takes(s, d) else None
            if padded is not None:     # the row kernel's scratch plane is the pad
                dead, (x, pad) = [owner_op(x)], padded
                xs = tuple(_dyn_shape(x))
            key = (op.name, xs, pad) + sig[1:] + (fused is not None,) \
                + ((epi[1], epi[2], len(epi[3]), multi) if epi else ())
            if key not in funcs:
                name = f"__om_dpool_{len(funcs)}"
                kw = dict(epilogue=epi[1], epi_result=epi[2], n_cap=len(epi[3]),
                          chain=multi) if epi else {}
                if depthwise_dyn.takes(s, d):
                    image = depthwise_dyn.depthwise_function(
                        name + "_image", xs, os_, ws[1], ws[2], s, d, pad, target,
                        threads and xs[1] > 1, fused is not None, _post(kw), len(epi[3]) if epi else 0)
                else:
                    image = image_function(name + "_image", op.name, xs, ws, os_, s, d,
                                           target.vector_width, threads and xs[1] > 1,
                                           bias=fused is not None, **kw)
                args = [(list(xs), BATCHED), (list(ws), SHARED), (list(os_), BATCHED),
                        ([xs[1]] if fused is not None else [], SHARED)]
                args += [([], SHARED)] * kw.get("n_cap", 0)
                add_functions(module, image, batch_loop_function(name, name + "_image", args,
                                                                 dest=2))
                funcs[key] = name
            args = [x, op.operands[1], dest, fused[1] if fused is not None else value]
            chain = [op] + ([fused[0]] if fused is not None else []) \
                + (list(epi[0]) if multi else [epi[0]] if epi else [])
            operands = args + (list(epi[3]) if epi else [])
            replace_with_call(funcs[key], operands, chain, chain[-1], dead, call_site(op, operands))
    return len(convs)


def _post(kw: dict):
    """The fused epilogue of :func:`.depthwise_dyn.depthwise_function`
    (``kw``: :func:`image_function`'s keywords): ``(e, acc, captured) -> acc``."""
    if not kw:
        return None
    ops, res = kw["epilogue"], kw["epi_result"]
    if kw["chain"]:
        return lambda e, a, caps: vector_lines(e, ops, res, a, [], caps)
    return lambda e, a, caps: emit_ops(e, ops, res, a, [e.broadcast(c, a.type, base="ecv")
                                                        for c in caps])


def dynamic_pools(module: ir.Module, target: Target, threads: bool = False, plan=None) -> int:
    """Rewrite every f32 NCHW max / sum pool with dynamic spatial dims (see
    :func:`signature`; with a kernel ``plan``: those it gave to ``pool_dyn``)
    as the per-image vector kernel, its fill and unary elementwise user
    fused, and the depthwise convs of :func:`depthwise_signature` (the plan's
    ``depthwise_dyn``). Returns how many were rewritten."""
    from mlir.passmanager import PassManager
    funcs: dict[tuple, str] = {}
    pools = [(op, sig) for op in walk_ops(module.operation, set(KINDS))
             if (plan is None or assigned(op, "pool_dyn")) and (sig := signature(op)) is not None]
    for op, sig in pools:
        with building(op):
            xs, ws, os_, s, d = sig
            epi = epilogue_user(op.results[0])
            big = ws[0] * ws[1] > MAX_TAPS
            x, dead, lows = op.operands[0], [], ()
            src = identity_pad(x, KINDS[op.name]) if big else None
            if src is not None:
                dead, (x, lows) = [owner_op(x)], src
                xs = _dyn_shape(x)
            key = (op.name, tuple(xs)) + sig[1:] + (lows,) \
                + ((epi[1], epi[2], len(epi[3])) if epi else ())
            if key not in funcs:
                name = f"__om_dpool_{len(funcs)}"
                kw = dict(epilogue=epi[1], epi_result=epi[2], n_cap=len(epi[3])) if epi else {}
                if big:
                    image = window_function(name + "_image", op.name, xs, ws, os_, s, d,
                                            target.vector_width, threads and xs[1] > 1,
                                            lows or (0, 0), **kw)
                else:
                    image = image_function(name + "_image", op.name, xs, ws, os_, s, d,
                                           target.vector_width, threads and xs[1] > 1, **kw)
                args = [(list(xs), BATCHED), (list(ws), SHARED), (list(os_), BATCHED), ([], SHARED)]
                args += [([], SHARED)] * kw.get("n_cap", 0)
                add_functions(module, image, batch_loop_function(name, name + "_image", args,
                                                                 dest=2))
                funcs[key] = name
            value, dest = fill_scalar(op.operands[2])
            args = [x, op.operands[1], dest, value] + (list(epi[3]) if epi else [])
            replace_with_call(funcs[key], args, [op] + ([epi[0]] if epi else []),
                              epi[0] if epi else op, dead)
    n = len(pools) + _depthwise(module, target, threads, plan, funcs)
    if funcs:
        PassManager.parse("builtin.module(inline, symbol-dce)", module.context).run(module.operation)
    return n
