"""CSE in linear time over a function's many sibling loops (issue #29).

MLIR's CSE hashes an op by its name, attributes, operands and result types,
not by its regions, and compares the ops of one hash region by region. A
tensor-level loop of the -O3 schedules (``scf.forall`` / ``scf.for``, an
``scf.if`` of a run-time thread check) reads the tensors it computes on from
above, not through operands: its operands are its bounds and its init
(``shared_outs`` / ``iter_args``), and CSE has merged those inits (identical
``tensor.empty`` ops) into one value. So the loops of a function all hash
alike and each one is compared with every loop before it: a 10,000-node
elementwise chain (834 loops) spent 3.1 s in one CSE, 0.15 s with the keys,
and the cost grew with the square of the loops.

Inside :func:`distinct_loops` every such loop directly in a function body
carries a key attribute of its own, so equal hashes mean the same loop and
no two loops are compared. Two identical loops are no longer merged there:
the tensor-level CSE before the tiling has merged the ops they come from.
The keys are removed when the block ends.
"""
from __future__ import annotations

from contextlib import contextmanager

import mlir.ir as ir

KEY = "onnx_mlir_py.cse_key"
LOOPS = ("scf.forall", "scf.for", "scf.if")


def _top_loops(module: ir.Module):
    for fn in module.body.operations:
        fn = fn.operation
        if fn.name != "func.func" or not len(fn.regions[0].blocks):
            continue
        for op in fn.regions[0].blocks[0].operations:
            if op.operation.name in LOOPS:
                yield op.operation


@contextmanager
def distinct_loops(module: ir.Module):
    """Key every loop directly in a function body of ``module`` for the
    ``with`` block (see the module docstring)."""
    with module.context:
        i64 = ir.IntegerType.get_signless(64)
        for i, op in enumerate(_top_loops(module)):
            op.attributes[KEY] = ir.IntegerAttr.get(i64, i)
    try:
        yield
    finally:
        with module.context:
            # read again: the pipeline may have replaced or erased loops
            for op in _top_loops(module):
                if KEY in op.attributes:
                    del op.attributes[KEY]
