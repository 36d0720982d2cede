"""A dynamic batch around a static per-image kernel.

A kernel whose operands are static except for a leading (batch) dim that is
dynamic -- a conv of ``tensor<?x64x56x56xf32>`` -- runs as

    for n in [0, N):
      out[n] = kernel(x[n : n+1], w, out[n : n+1], ...)     (static shapes)

where ``kernel`` is the batch-1 static kernel (im2col + packed matmul,
depthwise row kernel) exactly as the static model gets it: a dynamic batch
costs one loop trip per image, not a slower kernel. With threads the loop
is an ``scf.forall``: the images split across threads. The per-image output is
an ``extract_slice`` of the loop-carried destination and is written back with
``insert_slice``; the kernel writes into the slice it receives (destination
passing), so bufferization keeps everything in place.
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.passes.optimize.kernel_emit import F32, Emitter, tensor


BATCHED, SHARED = "batched", "shared"


def add_functions(module: ir.Module, *texts: str) -> list[ir.Operation]:
    """Parse function texts (together: they may call each other) into
    ``module``, at its end; returns the functions. They are moved out of
    the parsed module, not cloned (a row kernel's thousands of ops, #29)."""
    sub = ir.Module.parse("module {\n" + "\n".join(texts) + "\n}", module.context)
    end = ir.InsertionPoint(module.body)
    out = []
    for op in list(sub.body.operations):
        op = op.operation
        op.detach_from_parent()
        end.insert(op)
        out.append(op)
    return out


def batch_loop_function(name: str, inner: str, args: list[tuple[list, str]],
                        dest: int, parallel: bool = False) -> str:
    """``func.func private @name(args...) -> args[dest]`` calling ``@inner``
    once per image. ``args``: (shape, kind) per argument, shapes with
    ``None`` for the dynamic batch and other dynamic dims (``[]``: an f32
    scalar). Kinds: BATCHED
    (passed as its static ``[n : n+1]`` slice) and SHARED (passed as is).
    ``args[dest]`` (batched) is the destination: the loop carries it, and
    each call gets its slice and returns the slice's new value, which is
    inserted back (in place after bufferization). ``parallel``: the loop is
    an ``scf.forall`` (the images split across threads; the kernel's own
    parallel loops then run inline in each image's chunk, or split when
    there is a single image, see runtime/c/om_parallel.c)."""
    if args[dest][1] != BATCHED:
        raise ValueError("the destination must be batched")
    e = Emitter()
    params = [e.param("a", tensor(shape) if shape else F32) for shape, _kind in args]
    dshape = args[dest][0]
    dst = params[dest]
    dt1 = tensor([1] + list(dshape[1:]))
    # dim k of a batched argument: static, or read before the loop (the last first)
    dyn = [(i, k) for i, (shape, kind) in enumerate(args) if kind == BATCHED
           for k, sz in enumerate(shape) if k and sz is None]
    dims = {(i, k): e.dim(params[i], k) for i, k in reversed(dyn)}
    n = e.dim(dst, 0)
    sizes_of = [[sz if sz is not None else dims[(i, k)] for k, sz in enumerate(shape) if k]
                if kind == BATCHED else [] for i, (shape, kind) in enumerate(args)]
    if parallel:
        i_, acc, res = e.forall(n, dst)
    else:
        i_, (acc,), (res,) = e.loop(e.index(0), n, e.index(1), [dst])
    operands = []
    for i, (shape, kind) in enumerate(args):
        if kind == SHARED:
            operands.append(params[i])
            continue
        src = acc if i == dest else params[i]
        operands.append(e.extract_slice(src, [i_] + [0] * (len(shape) - 1), [1] + sizes_of[i]))
    y = e.call(inner, operands, dt1)
    at, sizes = [i_] + [0] * (len(dshape) - 1), [1] + sizes_of[dest]
    if parallel:
        e.end_forall(y, acc, at, sizes)
    else:
        e.end([e.insert_slice(y, acc, at, sizes)])
    e(f"return {res} : {dst.type}")
    return e.function(name, params, dst.type)
