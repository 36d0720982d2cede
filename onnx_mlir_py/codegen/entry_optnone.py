"""The model's entry function compiled without LLVM's optimisations when it
has no loop (#29).

After the -O3 kernels are functions of their own (codegen/kernel_functions.py)
the entry (``main_graph``) is a straight line of calls: the kernels' memref
descriptors built and passed, the buffers allocated and freed, the run-time
checks' branches to the error return. Each op of it runs once per inference,
so its code quality is worth nanoseconds, but LLVM's -O3 spent most of the
entry part's time on it: the whole entry is one huge basic block (of
descriptor values live across the calls), where instruction selection and
register allocation are at their slowest. ResNet-50's entry part: 0.17 s of
opt + llc, 0.08 s with the entry ``optnone``; a QDQ ResNet-50's 1.86 ->
0.99 s, GPT-2 decode 0.85 -> 0.43 s, MobileNetV3 0.45 -> 0.21 s. And the
entry part is compiled last, after the whole model is lowered, where no
other work overlaps it.

An entry with a loop (a dynamic shape's per-dimension loops, anything left
in it as a loop nest) keeps the optimisations: a loop runs its body many
times, and -O0 code there could cost. A function without a loop runs each
instruction at most once. ``optnone`` needs ``noinline`` (LLVM's verifier);
nothing is inlined into the entry either way (the kernels are in parts of
their own or in the kernel cache).
"""
from __future__ import annotations

import mlir.ir as ir


def has_loop(fn: ir.Operation) -> bool:
    """Whether the control flow of ``fn`` (an ``llvm.func``) has a cycle: in
    any order of the blocks, a cycle has an edge to a block at or before
    its source, so none means none."""
    blocks = list(fn.regions[0].blocks)
    index = {b: i for i, b in enumerate(blocks)}
    for i, b in enumerate(blocks):
        ops = b.operations
        if not len(ops):
            continue
        for s in ops[len(ops) - 1].operation.successors:
            if index.get(s, -1) <= i:
                return True
    return False


def entry_without_optimisations(module: ir.Module, entry: str) -> bool:
    """Mark the LLVM-dialect function ``entry`` of ``module`` ``optnone``
    (``no_inline`` + ``optimize_none``) when it has no loop; returns
    whether it did."""
    from onnx_mlir_py.codegen.signature import entry_or_none
    with module.context:
        op = entry_or_none(module, entry, "llvm.func")
        if op is None or not len(op.regions[0].blocks) or has_loop(op):
            return False
        op.attributes["no_inline"] = ir.UnitAttr.get()
        op.attributes["optimize_none"] = ir.UnitAttr.get()
        return True
