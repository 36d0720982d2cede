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

from onnx_mlir_py.passes.optimize.kernel_emit import tensor_type


BATCHED, SHARED = "batched", "shared"


def add_functions(module: ir.Module, *texts: str) -> None:
    """Parse function texts (together: they may call each other) into ``module``."""
    sub = ir.Module.parse("module {\n" + "\n".join(texts) + "\n}", module.context)
    for op in sub.body.operations:
        op.operation.clone(ir.InsertionPoint(module.body))


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
    sig, inner_types = [], []
    for i, (shape, kind) in enumerate(args):
        ty = "f32" if not shape else tensor_type(shape)
        sig.append(f"%a{i}: {ty}")
        inner_types.append(ty if kind == SHARED else tensor_type([1] + list(shape[1:])))
    dshape = args[dest][0]
    dt, dt1 = tensor_type(dshape), tensor_type([1] + list(dshape[1:]))
    rank = len(dshape)
    lines = [f"  func.func private @{name}({', '.join(sig)}) -> {dt} {{",
             "    %c0 = arith.constant 0 : index", "    %c1 = arith.constant 1 : index",
             f"    %n = tensor.dim %a{dest}, %c0 : {dt}"]

    def size(i: int, k: int, s) -> str:
        """Dim k of argument i: static, or read before the loop."""
        if s is not None:
            return str(s)
        lines.insert(3, f"    %a{i}_d{k} = tensor.dim %a{i}, %c{i}_{k} : {tensor_type(args[i][0])}")
        lines.insert(3, f"    %c{i}_{k} = arith.constant {k} : index")
        return f"%a{i}_d{k}"
    sizes_of = [[size(i, k, s) for k, s in enumerate(shape) if k] if kind == BATCHED else []
                for i, (shape, kind) in enumerate(args)]
    if parallel:
        lines.append(f"    %r = scf.forall (%i) in (%n) shared_outs(%acc = %a{dest}) -> ({dt}) {{")
    else:
        lines.append(f"    %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %a{dest}) -> ({dt}) {{")
    operands = []
    for i, (shape, kind) in enumerate(args):
        if kind == SHARED:
            operands.append(f"%a{i}")
            continue
        src, ty = ("%acc", dt) if i == dest else (f"%a{i}", tensor_type(shape))
        z = ", ".join(["%i"] + ["0"] * (len(shape) - 1))
        sizes = ", ".join(["1"] + sizes_of[i])
        ones = ", ".join(["1"] * len(shape))
        lines.append(f"      %s{i} = tensor.extract_slice {src}[{z}] [{sizes}] [{ones}] "
                     f": {ty} to {inner_types[i]}")
        operands.append(f"%s{i}")
    lines.append(f"      %y = func.call @{inner}({', '.join(operands)}) "
                 f": ({', '.join(inner_types)}) -> {dt1}")
    zeros = ", ".join(["%i"] + ["0"] * (rank - 1))
    sizes = ", ".join(["1"] + sizes_of[dest])
    ones = ", ".join(["1"] * rank)
    ins = f"%y into %acc[{zeros}] [{sizes}] [{ones}] : {dt1} into {dt}"
    if parallel:
        lines += ["      scf.forall.in_parallel {", f"        tensor.parallel_insert_slice {ins}",
                  "      }", "    }"]
    else:
        lines.append(f"      %u = tensor.insert_slice {ins}")
        lines.append(f"      scf.yield %u : {dt}\n    }}")
    lines.append(f"    return %r : {dt}\n  }}")
    return "\n".join(lines)
