"""Inlining the kernels' private functions (the kernel steps add one
private function per distinct kernel and call it where each op was).

Upstream's inliner erases the private functions it left without a use, so
``symbol-dce`` after it has nothing to do unless some other private symbol
is left (a declaration, a function the inliner kept): it runs only then.
Each ``symbol-dce`` walked every op's attributes for symbol uses and
verified the module again (#29: ~15 ms a kernel step on ResNet-50).
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.passmanager import PassManager


def private_symbols(module: ir.Module) -> bool:
    """Whether ``module`` may hold a symbol ``symbol-dce`` could erase: a
    private top-level symbol, or a top-level op other than a function (a
    nested symbol table)."""
    for op in module.body.operations:
        op = op.operation
        if op.name != "func.func":
            return True
        attrs = op.attributes
        if "sym_visibility" in attrs and ir.StringAttr(attrs["sym_visibility"]).value == "private":
            return True
    return False


# the inliner with its canonicalize (see inline_kernels)
INLINE_CANONICALIZE = "inline{default-pipeline=canonicalize{region-simplify=disabled}}"


def inline_kernels(module: ir.Module, *, canonicalize: bool = False, then: tuple = ()) -> None:
    """Inline every call of a private function (with ``canonicalize``:
    the inliner's canonicalize of each function before and after it
    inlined into it, without region simplification as in
    ``optimize/__init__.py``'s CANONICALIZE),
    run the passes ``then`` (pass pipeline texts), and ``symbol-dce`` when
    :func:`private_symbols` (the same IR as ``inline, symbol-dce, then...``:
    the passes ``then`` run inside functions and add no symbols)."""
    pipeline = [INLINE_CANONICALIZE if canonicalize else "inline{default-pipeline=}"] + list(then)
    PassManager.parse(f"builtin.module({', '.join(pipeline)})", module.context).run(module.operation)
    if private_symbols(module):
        PassManager.parse("builtin.module(symbol-dce)", module.context).run(module.operation)
