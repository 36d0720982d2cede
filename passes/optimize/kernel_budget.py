"""Per-kernel budgets (issue #29: no compile that never ends).

A kernel the -O3 stage writes (:class:`.kernel_emit.Emitter`: the row
kernels, direct and dynamic convs, pools, attention, the int8 and bf16
kernels) is a function of its op's shapes and attributes: a window or an
unroll sized by the model, not by the kernel's author, can make it grow
without bound. Transformers' EfficientNet pooler (an AveragePool with a
1280 x 1280 window, unrolled) never finished generating; a first version of
the dynamic depthwise kernel made the model's -O3 IR six times larger and
its compile 150 s.

So each emitted kernel has a budget of SSA values (:data:`DEFAULT_VALUES`,
about ten times the largest kernel of the benchmark models: YOLO's stem
direct conv, 2,165; EfficientNet-B0's dynamic depthwise rows, 1,665):

- the emitter raises :class:`KernelTooLarge` once a kernel passes it (one
  integer compare per value: no cost to a kernel within it);
- each kernel step builds its op's kernel inside :func:`building` ``(op)``,
  so the exception names the op's node;
- :func:`~onnx_mlir_py.passes.optimize.optimize` then puts the module back
  as it was before the stage (a clone taken at its start, under a
  millisecond: the stage's input is the model's few thousand linalg ops),
  plans again with that node on the generic path (``linalg``, the reason in
  ``--print-kernel-plan``) and warns once, one line naming the node
  (:class:`~onnx_mlir_py.errors.KernelBudgetWarning`); the -O3 stage cache
  stores nothing for that compile (the weights' reads it recorded include
  the abandoned round's), so every compile of the model warns. The nodes
  the plan gave the same kernel, op and shapes go with it (they would
  build the same kernel). At most :data:`MAX_ROUNDS` rounds in one
  compile; past that, or for a node without a name, the compile stops with
  one line instead of running on.

``ONNX_MLIR_PY_KERNEL_BUDGET=<values>`` sets the budget (``0``: none).
What upstream's passes do after the kernel steps (vectorization, unrolling
of tiled contractions) is bounded by the plan's tiles, not by this budget.
"""
from __future__ import annotations

import os
import warnings
from contextlib import contextmanager

import mlir.ir as ir

from onnx_mlir_py.errors import CompileError, KernelBudgetWarning
from onnx_mlir_py.ir_util import loc_name

ENV = "ONNX_MLIR_PY_KERNEL_BUDGET"
DEFAULT_VALUES = 20000
MAX_ROUNDS = 8


class KernelTooLarge(Exception):
    """Raised by the emitter once a kernel reaches the budget; it names the
    op whose kernel is being built (:func:`building`; ``""``: none)."""

    def __init__(self, budget: int):
        super().__init__(f"more than {budget} values")
        self.budget = budget
        self.node, self.op = _building[-1] if _building else ("", "")


def budget() -> int:
    """The budget in SSA values per kernel (0: none)."""
    raw = os.environ.get(ENV, "")
    if not raw:
        return DEFAULT_VALUES
    try:
        return max(0, int(raw))
    except ValueError:
        raise CompileError(f"{ENV}={raw!r}: expected a number of values (0: no budget)") from None


_building: list[tuple[str, str]] = []   # (node, op name) of the kernels being built, innermost last


def current() -> str | None:
    """The node whose kernel is being built (:func:`building`), or None."""
    return _building[-1][0] if _building else None


@contextmanager
def building(op: ir.Operation):
    """The kernel of ``op`` is built inside: a :class:`KernelTooLarge` raised
    there names ``op``'s node (the innermost ``building``)."""
    _building.append((loc_name(op.location) or "", op.name))
    try:
        yield
    finally:
        _building.pop()


# the plan's reason for a node a budget left to the generic path
REASON = "over the kernel budget"


def fallback(e: KernelTooLarge, planned: dict, excluded: dict, rounds: int) -> None:
    """Record ``e``'s node for the generic path (``excluded``: node -> the
    reason the plan shows), with the nodes the plan gave the same kernel,
    op and shapes (they would build the same kernel: one more round each),
    and warn once per node, one line naming it; or raise a CompileError
    when it cannot fall back (no node, the same node again, ``rounds``
    already run reaching :data:`MAX_ROUNDS`). ``planned``: node -> its
    :class:`.kernel_plan.PlanEntry`."""
    entry = planned.get(e.node)
    what = f"its {entry.kernel if entry else '-O3'} kernel"
    if not e.node:
        raise CompileError(f"an -O3 kernel ({e.op or 'an unnamed op'}) grew past {e.budget} "
                           f"values, and its op has no node name to run on the generic path; "
                           f"set {ENV}=0 to build it anyway") from None
    if e.node in excluded or rounds >= MAX_ROUNDS:
        n = len(excluded)
        raise CompileError(f"node '{e.node}': {what} grew past {e.budget} values "
                           f"({n} node{'' if n == 1 else 's'} already on the generic path, "
                           f"{rounds} rounds of the -O3 stage); set {ENV}=0 to build it "
                           f"anyway") from None
    nodes = [e.node]
    if entry is not None:
        sig = (entry.op, entry.shape, entry.kernel, entry.tile)
        nodes += [n for n, p in planned.items() if n not in (e.node, "?")
                  and (p.op, p.shape, p.kernel, p.tile) == sig]
    reason = f"{REASON} ({what} grew past {e.budget} values)"
    for node in nodes:
        excluded[node] = reason
        warnings.warn(KernelBudgetWarning(
            f"node '{node}' ({e.op}): {reason}; compiled on the generic path ({ENV} sets "
            f"the budget)"), stacklevel=2)


def restore(module: ir.Module, saved: ir.Operation) -> None:
    """Put ``module`` back as ``saved`` (a clone of it): its attributes and
    its body (``saved`` is kept for another round)."""
    attrs, keep = module.operation.attributes, saved.attributes
    for name in list(attrs):
        del attrs[name]
    for i in range(len(keep)):
        attrs[keep[i].name] = keep[i].attr
    for op in list(module.body.operations):
        op.operation.erase()
    copy = saved.clone()
    for op in list(copy.regions[0].blocks[0].operations):
        op = op.operation
        op.detach_from_parent()
        module.body.append(op)
    copy.erase()
