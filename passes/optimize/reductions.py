"""Float sums and products of vectorized row reductions may be reassociated.

The vectorizer turns a row reduction (softmax and LayerNorm sums, ReduceSum /
ReduceMean, GlobalAveragePool) into ``vector.reduction <add>`` of a whole row
or of a chunk carried through the row. Without ``fastmath<reassoc>`` LLVM
lowers it in order, one scalar add after the other: a 196-lane row is a
chain of 196 dependent adds (~4 cycles each), the cost of scalar code. With
it LLVM adds the row's vectors lane-wise and then the lanes as a tree, as
onnxruntime's vectorized reductions do (the float sum changes in its last
bits, as any vectorized sum does; no lane outside the row is read: masked
and padded rows are handled before this point).
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.ir_util import walk_ops

_KINDS = ("add", "mul")


def reassociate_reductions(module: ir.Module) -> int:
    """Mark float add/mul ``vector.reduction`` ops ``fastmath<reassoc>``;
    returns how many were marked."""
    n = 0
    for op in walk_ops(module.operation, "vector.reduction"):
        kind = str(op.attributes["kind"])
        if not any(f"<{k}>" in kind for k in _KINDS):
            continue
        if not isinstance(op.results[0].type, ir.FloatType):
            continue
        flags = _flags(op)
        if "reassoc" in flags or "fast" in flags:
            continue
        op.attributes["fastmath"] = ir.Attribute.parse(
            f"#arith.fastmath<{','.join(flags + ['reassoc'])}>")
        n += 1
    return n


def _flags(op) -> list[str]:
    """The op's fastmath flags (kept when ``reassoc`` is added)."""
    if "fastmath" not in op.attributes:
        return []
    text = str(op.attributes["fastmath"])             # #arith.fastmath<nnan,ninf>
    inner = text[text.index("<") + 1:text.rindex(">")]
    return [f.strip() for f in inner.split(",") if f.strip() not in ("", "none")]
