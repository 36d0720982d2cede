"""Matched 2-D window ops (depthwise convs, :mod:`.depthwise`; pools,
:mod:`.pool`) -> calls of their row kernel (:mod:`.row_kernel`), one private
function per distinct kernel, inlined.

A dynamic batch runs the batch-1 kernel once per image (:mod:`.batch_loop`).
Threads: with ``threads`` and at least ``kernel_plan.WINDOW_THREAD_MIN_MACS`` multiply-adds the
channel loop is split into about ``THREAD_TASKS`` blocks of an
``scf.forall`` (tasks on the library's thread pool, see the package
docstring).
"""
from __future__ import annotations

from dataclasses import replace

import mlir.ir as ir

from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.optimize.kernel_inline import inline_kernels as inline
from onnx_mlir_py.passes.optimize.batch_loop import (BATCHED, SHARED, add_functions,
                                                     batch_loop_function)
from onnx_mlir_py.passes.optimize.kernel_fusion import replace_with_call, static_f32
from onnx_mlir_py.passes.optimize.row_kernel import kernel_function
from onnx_mlir_py.passes.optimize.row_plan import channel_blocks, macs
from onnx_mlir_py.target import Target
from onnx_mlir_py.passes.optimize.kernel_budget import building
from onnx_mlir_py.passes.optimize.kernel_plan import WINDOW_THREAD_MIN_MACS, assigned



def rewrite_all(module: ir.Module, select, match, prefix: str, target: Target,
                threads: bool, plan=None, kernel: str = "", replace=None) -> int:
    """Every op ``select`` names that ``match`` accepts (with a kernel
    ``plan``: that it gave to ``kernel``) -> a call of its row kernel (one
    private function per distinct kernel, ``prefix``), inlined; returns how
    many were rewritten. ``replace``: another kernel for some matches, with
    :func:`replace_with_kernel`'s parameters (its default)."""
    replace = replace or replace_with_kernel
    funcs: dict[tuple, str] = {}
    count = 0
    for op in walk_ops(module.operation, select):
        found = match(op) if plan is None or assigned(op, kernel) else None
        if found is not None:
            with building(op):
                replace(module, funcs, prefix, found, target, threads)
            count += 1
    inline_kernels(module, funcs)
    return count


def inline_kernels(module: ir.Module, funcs: dict) -> None:
    if funcs:   # with its canonicalize: without, YOLO's SiLU and MobileNetV3's constants change (3751c3c)
        inline(module, canonicalize=True)


def replace_with_kernel(module: ir.Module, funcs: dict, prefix: str, found, target: Target,
                        threads: bool) -> None:
    """Replace a matched window op (``found``: (Conv, operands (x, w, out,
    init..., captured...), ops to erase, op whose result is replaced)) by a
    call of its row kernel, added to ``module`` once per key in ``funcs``."""
    cv, operands, erase, last = found[:4]
    dead = found[4] if len(found) > 4 else []    # unused once the call replaces the op
    # a dynamic batch: the batch-1 kernel per image (an 8-bit kernel loops over the batch itself)
    dynamic = cv.xs[0] is None and cv.quant is None
    image = replace(cv, xs=(1,) + cv.xs[1:], os=(1,) + cv.os[1:]) if cv.xs[0] is None else cv
    blocks = channel_blocks(cv.os[1], threads and macs(image) >= WINDOW_THREAD_MIN_MACS)
    key = (cv, blocks, target.vector_width)
    if key not in funcs:
        name = f"{prefix}_{len(funcs)}"
        if not dynamic:
            add_functions(module, kernel_function(name, cv, target.vector_width, blocks))
        else:
            # the batch-1 kernel, once per image (its args: x, w, out, init..., captured...)
            args = [(list(cv.xs), BATCHED), (list(static_f32(operands[1])), SHARED),
                    (list(cv.os), BATCHED)]
            args += [([] if isinstance(v.type, ir.F32Type) else list(static_f32(v)), SHARED)
                     for v in operands[3:]]
            add_functions(module,
                          kernel_function(name + "_image", image, target.vector_width, blocks),
                          batch_loop_function(name, name + "_image", args, dest=2,
                                              parallel=blocks > 1))
        funcs[key] = name
    replace_with_call(funcs[key], operands, erase, last, dead)
