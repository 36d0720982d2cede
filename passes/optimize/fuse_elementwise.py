"""Elementwise producer/consumer fusion: chains of elementwise
``linalg.generic`` ops (a bias add then a ReLU, the ops of a GELU, a
LayerNorm's scale and shift) become one generic, so the vectorize step emits
one loop that reads and writes memory once instead of one loop per op.

This is MLIR's own ``linalg-fuse-elementwise-ops``: a producer is fused into
its consumer when the producer has a single use (a value used twice is
computed once, not recomputed). It runs after the conv/matmul rewrites (their
matchers look for a separate bias add after the kernel, see ``conv.py`` and
``depthwise.py``) and after the kernels are tiled, so it only meets the
elementwise code around them.

Measured (1 thread, CPU time against onnxruntime): MobileNetV2 1.73x ->
1.53x, the BERT-base layer 1.14x -> 1.09x, the encoder layer 1.15x -> 1.10x.

**Bounded groups.** Unbounded, a chain of N elementwise ops became one
loop whose body has all N ops (and, after ``math_approx``, ~20 instructions
per tanh / exp / erf): ``llc`` then spends super-linear time on that one
basic block (a 400-op Add/Mul/Tanh/Sigmoid chain over [64, 256]: 37 of its
46 s compile in llc, issue #29). So a group is cut before it weighs more
than ``MAX_GROUP_WEIGHT`` (body ops, transcendental ones counted
``MATH_WEIGHT``): the producers whose fusion would pass the bound get a
*barrier*, a call of an empty external function on their result (a second
use, which the upstream pass does not fuse across), erased after the pass.
The weights are summed in program order over the trees the pass fuses
(single-use all-parallel generic producers), so the cut is linear in the
module. No benchmark model comes near the bound (their generated code is
unchanged); it only cuts the long chains of generated or unrolled graphs.

**Huge functions.** In a function of more than ``MIN_OPS`` top-level ops
(a 50,000-node chain) the fused groups are then outlined, one function per
distinct group (``codegen/elementwise_functions.py``), here while their
bodies are small (before ``math_approx`` inlines its polynomials), so the
approximation and the vectorization run once per distinct group.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.passmanager import PassManager

from onnx_mlir_py.codegen.elementwise_functions import is_huge, outline_elementwise
from onnx_mlir_py.ir_util import walk_ops

PIPELINE = "builtin.module(func.func(linalg-fuse-elementwise-ops, {canonicalize}, cse))"

# Largest fused body, in weighted ops (see the module docstring). A GELU is
# ~25, a LayerNorm's elementwise tail ~10, HardSwish ~6.
MAX_GROUP_WEIGHT = 128
# Weight of one transcendental op (math_approx turns each into ~15-25
# instructions after this pass)
MATH_WEIGHT = 16
_BARRIER = "__om_fusion_barrier"


def _all_parallel(op: ir.Operation) -> bool:
    if op.name != "linalg.generic":
        return False
    its = op.attributes["iterator_types"]       # printed once, not per dim (#29)
    return str(its).count("parallel") == len(its)


def _body_weight(op: ir.Operation) -> int:
    w = 0
    for o in op.regions[0].blocks[0].operations:
        name = o.operation.name
        if name == "linalg.yield":
            continue
        w += MATH_WEIGHT if name.startswith("math.") else 1
    return w


def _fusable_producers(op: ir.Operation) -> list[ir.Operation]:
    """The producers the upstream pass may fuse into ``op``: all-parallel
    generics with one result, used once (by ``op``)."""
    n_in = len(op.operands) - len(op.results)
    out = []
    for v in list(op.operands)[:n_in]:
        p = v.owner
        if not isinstance(p, ir.OpView):
            continue
        p = p.operation
        if _all_parallel(p) and len(p.results) == 1 and \
                sum(1 for _ in p.results[0].uses) == 1 and p not in out:
            out.append(p)
    return out


def _cut_groups(module: ir.Module) -> int:
    """Barrier calls on the producers where a fused group would pass
    MAX_GROUP_WEIGHT; returns how many."""
    from mlir.dialects import func
    weight: dict = {}
    cut: list[ir.Value] = []
    # (a name walk: a name test per op, generic bodies included, costs less
    # than the pruned walk's Python matchers per op; no generic nests one)
    for op in walk_ops(module.operation, "linalg.generic"):
        if not _all_parallel(op):
            continue
        own = _body_weight(op)
        prods = [p for p in _fusable_producers(op) if p in weight]
        total = own + sum(weight[p] for p in prods)
        if total > MAX_GROUP_WEIGHT:
            # keep the lightest producers' groups, cut the heaviest first
            for p in sorted(prods, key=lambda q: -weight[q]):
                if total <= MAX_GROUP_WEIGHT:
                    break
                cut.append(p.results[0])
                total -= weight[p]
        weight[op] = total
    decls: dict[str, str] = {}
    with module.context, ir.Location.unknown():
        for v in cut:
            t = str(v.type)
            if t not in decls:
                name = f"{_BARRIER}_{len(decls)}"
                decls[t] = name
                with ir.InsertionPoint(module.body):     # a declaration: no body
                    func.FuncOp(name, ir.FunctionType.get([v.type], []), visibility="private")
            with ir.InsertionPoint(next(iter(v.uses)).owner):
                func.CallOp([], ir.FlatSymbolRefAttr.get(decls[t]), [v])
    return len(cut)


def _drop_barriers(module: ir.Module) -> None:
    # a barrier stands before its generic, never in a generic's body
    for c in walk_ops(module.operation, "func.call", prune="linalg.generic"):
        if ir.FlatSymbolRefAttr(c.attributes["callee"]).value.startswith(_BARRIER):
            c.erase()
    for op in list(module.body.operations):
        op = op.operation
        if op.name == "func.func" and \
                ir.StringAttr(op.attributes["sym_name"]).value.startswith(_BARRIER):
            op.erase()


def fuse_elementwise(module: ir.Module, canonicalize: str = "canonicalize") -> None:
    """Fuse elementwise linalg producers into their consumers, in place, in
    groups of at most MAX_GROUP_WEIGHT; then ``canonicalize`` (the pass with
    its options: -O3 passes one round without region simplification, see
    ``optimize/__init__.py``'s CANONICALIZE_ONCE) and CSE."""
    cut = _cut_groups(module)
    try:
        PassManager.parse(PIPELINE.format(canonicalize=canonicalize),
                          module.context).run(module.operation)
    finally:
        if cut:
            _drop_barriers(module)
    # a huge function (a 50,000-node chain): each distinct fused group a
    # function of its own (codegen/elementwise_functions.py), so that
    # approximate_math, vectorize_elementwise and the codegen work on it once
    with module.context, ir.Location.unknown():
        for f in list(module.body.operations):
            if f.operation.name == "func.func":
                outline_elementwise(f.operation)


def _huge(module: ir.Module) -> bool:
    """Whether a function of ``module`` has more than MIN_OPS top-level ops."""
    return any(f.operation.name == "func.func" and is_huge(f.operation)
               for f in module.body.operations)


def fuse_huge_functions(module: ir.Module) -> bool:
    """-O2 (which has none of the -O3 tensor pipeline): the bounded fusion
    and the outlining of :func:`fuse_elementwise`, only in a module with a
    function of more than MIN_OPS top-level ops (a 50,000-node elementwise
    chain); returns whether it ran. Every later stage then works on the
    ~12x fewer fused groups, each distinct one compiled once, instead of
    one allocation, loop nest, call and free per node. A normal model's
    functions are smaller: its code is unchanged."""
    if not _huge(module):
        return False
    fuse_elementwise(module)
    return True
