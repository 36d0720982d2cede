"""Transposes that move the innermost dim, in 16x16 register blocks.

:mod:`.elementwise` vectorizes an op along its innermost loop, which needs
every operand contiguous in it. A transpose that brings another dim
innermost (NHWC -> NCHW: ``[N, H, W, C] -> [N, C, H, W]``) is not: its
input is read with a stride along the output's rows, and LLVM's loop
vectorizer turned it into gathers (ResNet-50's stem MaxPool between
channels-last convs, ``--precision bf16``: 112x112x64 in 4-7 ms,
onnxruntime 1.1 ms).

Here such an op (``linalg.transpose``, or an all-parallel ``linalg.generic``
whose output map is the identity and whose inputs are permutations of the
loops, e.g. a ReLU fused into the transpose) is tiled 16 x 16 over two
loops, the output's innermost ``j`` and the loop ``i`` that is the innermost
dim of the transposed input (both multiples of 16), every other loop by 1,
and vectorized: each block is one 2-D read of 16
rows of the input, a ``vector.transpose`` (lowered with 16x16 shuffles, see
``VECTOR_CLEANUP``) and one 2-D write. 32-bit elements only (16 lanes of an
AVX-512 register); an op with work enough for threads gets its outermost
non-unit loop as an ``scf.forall``.
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.optimize.elementwise import (THREAD_MIN_WORK, _body, _loop_sizes, _maps,
                                                      _one_output_map, work)
from onnx_mlir_py.passes.optimize.schedule import apply_to_ops
from onnx_mlir_py.target import Target

BLOCK = 16
_NAMES = ("linalg.transpose", "linalg.generic")


def _dims(m: ir.AffineMap) -> list[int] | None:
    """The loop dims a map's results are, or None if one is not a plain dim."""
    out = []
    for e in m.results:
        if not isinstance(e, ir.AffineDimExpr):
            return None
        out.append(ir.AffineDimExpr(e).position)
    return out


def inner_loops(op: ir.Operation) -> tuple[int, int] | None:
    """(i, j) for a transpose this module takes: ``j`` the output's innermost
    loop, ``i`` the innermost loop of a transposed input; else None."""
    if op.name not in _NAMES or len(op.results) != 1 or not _one_output_map(op):
        return None
    rt = op.results[0].type
    if not isinstance(rt, ir.RankedTensorType) or not rt.has_static_shape or rt.rank < 2:
        return None
    et = rt.element_type
    if not (isinstance(et, ir.F32Type) or (isinstance(et, ir.IntegerType) and et.width == 32)):
        return None
    if op.name == "linalg.generic":
        if any("reduction" in str(a) for a in op.attributes["iterator_types"]):
            return None
        body = _body(op)
        if any(n != "linalg.yield" and not n.startswith(("arith.", "math.")) for n in body):
            return None
    maps = _maps(op)
    n = rt.rank
    if maps is None or _dims(maps[-1]) != list(range(n)):
        return None
    j, i = n - 1, None
    for m, v in zip(maps[:-1], op.operands):
        if not isinstance(v.type, ir.ShapedType):
            continue
        d = _dims(m)
        if d is None or not d:
            return None
        if d[-1] != j:
            if i is not None and d[-1] != i:
                return None     # two transposed inputs with other inner dims
            i = d[-1]
    if i is None:
        return None
    sizes = _loop_sizes(op)
    # whole blocks only: masked (a partial block) the vectorized transpose
    # came out wrong (NCHW -> NHWC of 1x32x1x24: the last 8 pixels' channels
    # 8-15 of each block of 16 zero), so those stay as they were
    if sizes is None or any(s is None or s % BLOCK for s in (sizes[i], sizes[j])):
        return None
    return i, j


def schedule(op: ir.Operation, loops: tuple[int, int], threads: bool) -> str:
    i, j = loops
    sizes = _loop_sizes(op)
    n = len(sizes)
    tiles = [BLOCK if d in (i, j) else 1 for d in range(n)]
    if threads and work(op) >= THREAD_MIN_WORK:
        # the forall: the outermost other loop with more than one trip, else i's blocks
        fd = next((d for d in range(n) if d not in (i, j) and sizes[d] > 1), i)
        ftiles = [tiles[d] if d == fd else 0 for d in range(n)]
        rest = [0 if d == fd else tiles[d] for d in range(n)]
        k = sum(1 for t in rest if t)
        text = (f"    %tf, %lf = transform.structured.tile_using_forall %op tile_sizes {ftiles}\n"
                "      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n"
                f"    %t, %l:{k} = transform.structured.tile_using_for %tf tile_sizes {rest}\n"
                f"      : (!transform.any_op) -> (!transform.any_op, "
                f"{', '.join(['!transform.any_op'] * k)})\n")
    else:
        k = n
        text = (f"    %t, %l:{k} = transform.structured.tile_using_for %op tile_sizes {tiles}\n"
                f"      : (!transform.any_op) -> (!transform.any_op, "
                f"{', '.join(['!transform.any_op'] * k)})\n")
    return text + "    transform.structured.vectorize %t : !transform.any_op\n"


def vectorize_transposes(module: ir.Module, target: Target, threads: bool = False) -> int:
    """Tile + vectorize every transpose this module takes (see the module
    docstring); runs after :func:`.elementwise.vectorize_elementwise`, which
    leaves them. Returns how many applied."""
    if target.vector_width != BLOCK:
        return 0
    found = {}
    for op in walk_ops(module.operation, _NAMES, prune=_NAMES):
        loops = inner_loops(op)
        if loops is not None:
            found[id(op)] = (op, loops)
    if not found:
        return 0
    return apply_to_ops(module, [op for op, _ in found.values()],
                        lambda op: schedule(op, found[id(op)][1], threads),
                        own_op_only=True, consumes=lambda body: True)
