"""Max / sum pools with dynamic spatial dims -> a vector row kernel.

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
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.optimize.batch_loop import (BATCHED, SHARED, add_functions,
                                                     batch_loop_function)
from onnx_mlir_py.passes.optimize.conv_dyn import _dyn_shape
from onnx_mlir_py.passes.optimize.kernel_emit import F32, Emitter, Value, tensor, vector
from onnx_mlir_py.passes.optimize.kernel_fusion import (epilogue_user, fill_scalar,
                                                        replace_with_call, static_f32,
                                                        window_ints)
from onnx_mlir_py.passes.optimize.row_emit import emit_ops
from onnx_mlir_py.target import Target
from onnx_mlir_py.passes.optimize.kernel_plan import assigned

KINDS = {"linalg.pooling_nchw_max": "arith.maximumf", "linalg.pooling_nchw_sum": "arith.addf"}


def signature(op: ir.Operation):
    """(x shape, window, out shape, strides, dilations) of a pool whose H/W
    are (partly) dynamic, channels static, output starting from a fill;
    else None."""
    if op.name not in KINDS or len(op.operands) != 3 or len(op.results) != 1:
        return None
    xs, ws, os_ = _dyn_shape(op.operands[0]), static_f32(op.operands[1]), \
        _dyn_shape(op.operands[2])
    if xs is None or ws is None or os_ is None or len(ws) != 2 or 0 in ws:
        return None
    if None in (xs[1], os_[1]) or xs[1] != os_[1] or None not in xs[2:] + os_[2:]:
        return None           # dynamic channels: not handled; static H/W: pool.py
    if (xs[0] is None) != (os_[0] is None) or (xs[0] is not None and xs[0] != 1):
        return None
    s, d = window_ints(op, "strides"), window_ints(op, "dilations")
    if len(s) != 2 or len(d) != 2 or min(s + d) < 1 or fill_scalar(op.operands[2]) is None:
        return None
    return tuple(xs), tuple(ws), tuple(os_), tuple(s), tuple(d)


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
            acc = e.binary(combine, acc, x)
    return acc


def image_function(name: str, kind: str, xs, ws, os_, s, d, lanes: int, threads: bool,
                   epilogue: tuple = (), epi_result: str = "", n_cap: int = 0) -> str:
    """``func.func private @name(x [1, C, H, W], window, out [1, C, OH, OW],
    init, captured...) -> out``: one image, written into ``out``."""
    c = xs[1]
    kh, kw = ws
    vt = vector(lanes)
    combine = KINDS[kind]
    e = Emitter()
    xin = e.param("x", tensor([1] + list(xs[1:])))
    params = [xin, e.param("win", tensor(ws)), e.param("dst", tensor([1] + list(os_[1:]))),
              e.param("init", F32)]
    dst, ot = params[2], params[2].type
    ecaps = [e.param("ecap", F32) for _ in range(n_cap)]
    v = {"x": xin, "padv": e.const("0.0", F32), "initv": e.broadcast(params[3], vt, base="initv")}
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
    pl = e.extract_slice(o, [0, ch, 0, 0], [1, 1, oh, ow])
    r, (t,), (rows,) = e.loop(e.index(0), oh, e.index(1), [pl])
    rbase = e.iop("muli", r, e.index(s[0]))
    v["hrow"] = [e.iop("addi", rbase, e.index(i * d[0])) for i in range(kh)]
    post = (lambda a: emit_ops(e, epilogue, epi_result, a, ecv)) if epilogue else (lambda a: a)
    q, (u,), (done,) = e.loop(e.index(0), full, e.index(lanes), [t])
    acc = post(_chunk(e, combine, v, kh, kw, s, d, q, None, lanes))
    e.end([e.write(acc, u, [0, 0, r, q])])
    acc = post(_chunk(e, combine, v, kh, kw, s, d, full, smask, lanes))
    e.end([e.write(acc, done, [0, 0, r, full], m)])
    if threads:
        e.end_forall(rows, o, [0, ch, 0, 0], [1, 1, oh, ow])
    else:
        e.end([e.insert_slice(rows, o, [0, ch, 0, 0], [1, 1, oh, ow])])
    e(f"return {res} : {ot}")
    return e.function(name, params + ecaps, ot)


def dynamic_pools(module: ir.Module, target: Target, threads: bool = False, plan=None) -> int:
    """Rewrite every f32 NCHW max / sum pool with dynamic spatial dims (see
    :func:`signature`; with a kernel ``plan``: those it gave to ``pool_dyn``)
    as the per-image vector kernel, its fill and unary elementwise user
    fused. Returns how many were rewritten."""
    from mlir.passmanager import PassManager
    funcs: dict[tuple, str] = {}
    pools = [(op, sig) for op in walk_ops(module.operation, set(KINDS))
             if (plan is None or assigned(op, "pool_dyn")) and (sig := signature(op)) is not None]
    for op, sig in pools:
        xs, ws, os_, s, d = sig
        epi = epilogue_user(op.results[0])
        key = (op.name,) + sig + ((epi[1], epi[2], len(epi[3])) if epi else ())
        if key not in funcs:
            name = f"__om_dpool_{len(funcs)}"
            kw = dict(epilogue=epi[1], epi_result=epi[2], n_cap=len(epi[3])) if epi else {}
            image = image_function(name + "_image", op.name, xs, ws, os_, s, d,
                                   target.vector_width, threads and xs[1] > 1, **kw)
            args = [(list(xs), BATCHED), (list(ws), SHARED), (list(os_), BATCHED), ([], SHARED)]
            args += [([], SHARED)] * kw.get("n_cap", 0)
            add_functions(module, image, batch_loop_function(name, name + "_image", args,
                                                             dest=2))
            funcs[key] = name
        value, dest = fill_scalar(op.operands[2])
        args = [op.operands[0], op.operands[1], dest, value] + (list(epi[3]) if epi else [])
        replace_with_call(funcs[key], args, [op] + ([epi[0]] if epi else []),
                          epi[0] if epi else op)
    if funcs:
        PassManager.parse("builtin.module(inline, symbol-dce)", module.context).run(module.operation)
    return len(pools)
