"""canonicalize-onnx: remove what inference made useless.

IRDL ops carry no traits, so MLIR's canonicalizer cannot see that ONNX ops
are free of side effects; this pass erases ONNX ops whose results are all
unused (walking backwards so whole dead chains go), and forwards
``Identity`` and inference-mode ``Dropout``.
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.dialects.onnx.opview import OnnxOp, is_onnx_op
from onnx_mlir_py.ir_util import walk_ops

# Ops whose removal would change behaviour even when unused: none in the
# ONNX dialect today (Random* are non-deterministic but have no effects).
_KEEP: set[str] = set()


def _forward_trivial(op: ir.Operation) -> bool:
    v = OnnxOp(op)
    if v.op_type == "Identity" and str(op.operands[0].type) == str(op.results[0].type):
        op.results[0].replace_all_uses_with(op.operands[0])
        return True
    if v.op_type == "Dropout" and len(op.results) >= 1:
        training = v.input(2) if v.version >= 12 else None
        t = OnnxOp.const(training) if training is not None else None
        if (training is None or (t is not None and not bool(t))) and \
                str(op.operands[0].type) == str(op.results[0].type) and \
                (len(op.results) == 1 or not list(op.results[1].uses)):
            op.results[0].replace_all_uses_with(op.operands[0])
            return True
    return False


def canonicalize_onnx(module: ir.Module) -> None:
    # Backwards (reversed pre-order: users before their producers, region
    # bodies before their op), so a whole dead chain goes in one sweep.
    for op in reversed(walk_ops(module, is_onnx_op)):
        if op.name in _KEEP:
            continue
        _forward_trivial(op)
        if all(not list(r.uses) for r in op.results):
            op.erase()
