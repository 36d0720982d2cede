"""Tile + vectorize the data-movement and elementwise ops around the kernels.

Candidates: ``linalg.generic`` with only parallel loops (or one trailing
reduction loop: row reductions such as softmax sums), ``linalg.transpose``
and ``linalg.copy`` (what the pack/unpack lowering produces), where every
operand is *contiguous in the innermost loop* (its map's last result is the
last loop dim) or does not depend on it (broadcast).
Trailing run-time dims that every operand reads as one contiguous row (H and
W of an NCHW op) are merged into one loop first (:mod:`.collapse_rows`).
Everything but the innermost dim is tiled by 1 (dynamic outer dims too) and
the innermost dim is vectorized: whole when it is small, else in chunks of 4
vectors (or 3 or 2 when that divides the row and 4 does not, see
:func:`row_chunk`) with a masked tail (``vectorize`` with explicit
``vector_sizes``). A dynamic innermost dim (a sequence length) goes in
chunks of 4 vectors with the last iteration peeled off
(``transform.loop.peel``): the main loop's chunks are whole (their masks
fold away), the remainder is masked. Row reductions over a dynamic length,
or a static one longer than WHOLE_ROW_MAX (a GlobalAveragePool over 28x28)
that is no whole number of chunks, are tiled the same way (the accumulator
is carried through the chunks), but their remainder stays a scalar loop: no
padding lane can reach the result. (Static long rows were left scalar: a
GlobalAveragePool over 96x28x28 took 70 us, 14 us vectorized.)

Threads (``threads=True``, on at -O3): an op with at least
:data:`THREAD_MIN_WORK` units of estimated work (loop iterations weighted by
the size of its body, see :func:`work`) gets its outermost non-unit loop as
an ``scf.forall`` (``tile_using_forall``; codegen runs it on the library's
thread pool, see the package docstring); an op with dynamic outer dims is
decided at run time instead (:mod:`.dynamic_threads`: one ``scf.forall``
over its outer loops whose tile sizes are 1 or the whole extent, chosen on
its run-time work, so the op is emitted once); when that loop has fewer than
:data:`MIN_FORALL_TRIPS` iterations the next loops join it (a 2-D/3-D
forall, which codegen linearizes into one range of iterations),
the innermost dim in chunks of the vectorized width if it comes to that.
The remaining outer loops stay ``tile_using_for`` by 1 inside the forall
and the row is vectorized as above. The work estimate counts a dynamic loop
as one iteration (the work of one unit of it). A trailing reduction loop is never
distributed (only the parallel loops around it are).
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.passes.optimize.collapse_rows import collapse_row
from onnx_mlir_py.passes.optimize.dynamic_threads import (DYN_THREADS, FORALL_TILE, forall_loops,
                                                       tile_on_work)
from onnx_mlir_py.passes.optimize.matmul import PACKED_ATTR
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.optimize.schedule import apply_to_ops, loop_sizes
from onnx_mlir_py.target import Target

WHOLE_ROW_MAX = 256   # innermost extent vectorized at once (parallel or reduction)

# Threads: an op is distributed when its estimated work (:func:`work`) is at
# least THREAD_MIN_WORK units, one unit ~ one element of a vectorized add
# (memory-bound, ~0.15-0.4 ns on the 2-core test machine). Math functions
# are polynomials by now (exp: 37 arith ops, erf: 48), ~3 body ops per unit.
# The threshold was 2^22 while a parallel loop woke sleeping workers (~30-50
# us per loop). Since the pool's workers spin between the loops of a run
# (om_parallel_for ~0.16 us at 2 threads), the serial passes between the
# kernels (bias inits, ReLU/Clip, residual adds) were what kept 2 threads
# from paying: at 2^16 (with window ops from 2^17 MACs, window_rewrite),
# measured A/B at 2 threads (new / old, same process, alternating blocks):
# MobileNetV2 0.91, YOLO 0.92, text CNN 0.955, ResNet-18 0.98, BERT layer
# 0.98, ViT-tiny and MobileNetV3 1.00; 1 thread unchanged (0.99-1.00).
# 2^14 (with window ops from 2^15) measured no better than 2^16.
THREAD_MIN_WORK = 1 << 16
# body ops worth more than one: divisions, roots, and math functions not
# expanded into polynomials (weighted like their expansion)
_SLOW_OPS = {"arith.divf": 4, "math.sqrt": 4, "math.rsqrt": 4, "math.powf": 80,
             **{f"math.{f}": 40 for f in ("exp", "exp2", "expm1", "log", "log1p", "log2",
                                          "log10", "erf", "erfc", "tanh", "sin", "cos",
                                          "tan", "atan", "atan2", "sinh", "cosh", "cbrt")}}
_INT_DIV = {f"arith.{k}" for k in ("divsi", "divui", "remsi", "remui", "floordivsi",
                                    "ceildivsi", "ceildivui")}
# A forall with fewer iterations than this takes the next loop in as well.
MIN_FORALL_TRIPS = 8


def _maps(op: ir.Operation) -> list[ir.AffineMap] | None:
    if op.name == "linalg.generic":
        return [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    if op.name == "linalg.copy":
        r = op.results[0].type.rank
        ident = ir.AffineMap.get_identity(r)
        return [ident, ident]
    if op.name == "linalg.transpose":
        perm = [int(x) for x in ir.DenseI64ArrayAttr(op.attributes["permutation"])]
        r = len(perm)
        # loops = output dims; input dim i is indexed by loop perm^-1 ... output[j] = in[perm[j]]
        inv = [0] * r
        for j, p in enumerate(perm):
            inv[p] = j
        src = ir.AffineMap.get(r, 0, [ir.AffineDimExpr.get(inv[i]) for i in range(r)])
        return [src, ir.AffineMap.get_identity(r)]
    return None


def _innermost_ok(maps: list[ir.AffineMap], n: int) -> bool:
    last = n - 1
    for m in maps:
        res = list(m.results)
        dims_used = [i for i in range(n) if any(str(e) == f"d{i}" for e in res)]
        if last in dims_used and (not res or str(res[-1]) != f"d{last}"):
            return False
        for e in res:
            if not isinstance(e, (ir.AffineDimExpr, ir.AffineConstantExpr)):
                return False
    return True


def _loop_sizes(op: ir.Operation) -> list[int | None] | None:
    """Loop extents, read from the operand shapes and maps (None: dynamic)."""
    return loop_sizes(op, _maps(op))


def _one_output_map(op: ir.Operation) -> bool:
    """One result, or a generic whose results all share one indexing map
    (a recurrent op's gate generic yields H, C and Y_t)."""
    n = len(op.results)
    if n == 1:
        return True
    if op.name != "linalg.generic" or n == 0:
        return False
    maps = [str(a) for a in op.attributes["indexing_maps"]][-n:]
    return all(m == maps[0] for m in maps) and \
        all(r.type == op.results[0].type for r in op.results)


_CANDIDATE_NAMES = ("linalg.generic", "linalg.transpose", "linalg.copy")


def _body(op: ir.Operation) -> list[str] | None:
    """The names of the ops nested in a ``linalg.generic`` (None for other ops)."""
    return [o.name for o in walk_ops(op)] if op.name == "linalg.generic" else None


def candidate(op: ir.Operation, body: list[str] | None = None) -> bool:
    """``body``: :func:`_body` of ``op`` if the caller has it."""
    if op.name not in _CANDIDATE_NAMES:
        return False
    if PACKED_ATTR in op.attributes or not _one_output_map(op):
        return False
    # i1 buffers get a byte-wise access workaround after bufferization
    # (codegen/bool_memory.py) that vector accesses would bypass
    for v in list(op.operands) + list(op.results):
        et = v.type.element_type if isinstance(v.type, ir.ShapedType) else None
        if isinstance(et, ir.IntegerType) and et.width == 1 and et.is_signless:
            return False
    if op.name == "linalg.generic":
        body = _body(op) if body is None else body
        # gathers (tensor.extract) and nested loops do not vectorize this way
        if any(n != "linalg.yield" and not n.startswith(("arith.", "math.")) for n in body):
            return False
        # integer division: x86 has no vector form (LLVM scalarizes it), and
        # the masked-off lanes of a masked tail divide by their padding 0: a
        # SIGFPE (Mod over a dynamic row, test_mod_broadcast [dynamic] -O3)
        if any(n in _INT_DIV for n in body):
            return False
        iters = [str(a) for a in op.attributes["iterator_types"]]
        if any("reduction" in it for it in iters[:-1]):
            return False
    maps = _maps(op)
    if maps is None or not maps or maps[0].n_dims == 0:
        return False
    sizes = _loop_sizes(op)
    if sizes is None or 0 in sizes:
        return False
    # a row reduction longer than WHOLE_ROW_MAX (dynamic, or a static
    # GlobalAveragePool over 28x28): whole chunks vectorized, the remainder
    # a scalar loop (see schedule: a masked tail combined its padding lanes
    # into the result, ReduceMax of a row of -inf gave -1e-45)
    return _innermost_ok(maps, len(sizes))


def work(op: ir.Operation, body: list[str] | None = None) -> int:
    """Estimated cost of ``op`` in THREAD_MIN_WORK units: loop iterations
    times (1 + its body's ops / 3, weighted by :data:`_SLOW_OPS`). Dynamic
    loops count as one iteration (a dynamic batch: the work per image).
    ``body``: :func:`_body` of ``op`` if the caller has it."""
    total = 1
    for n in _loop_sizes(op):
        total *= n or 1
    body = _body(op) if body is None else body
    weight = sum(_SLOW_OPS.get(n, 1) for n in body if n != "linalg.yield") if body else 0
    return total * (3 + weight) // 3


def _forall_dims(sizes: list[int], chunk: int, reduction: bool) -> list[int]:
    """Loops of the ``scf.forall`` (outermost first): the outer non-unit
    loops, then the innermost one in chunks (only if parallel), taken until
    the forall has MIN_FORALL_TRIPS iterations or the loops run out.
    Dynamic loops stay sequential (inside the forall); an op with dynamic
    outer dims and too little work for a forall of its static ones has one
    over its dynamic ones instead (:mod:`.dynamic_threads`)."""
    n = len(sizes)
    dims = []
    cands = [(i, sizes[i]) for i in range(n - 1) if sizes[i] is not None and sizes[i] > 1]
    if not reduction and sizes[-1] is not None and chunk < sizes[-1]:
        cands.append((n - 1, -(-sizes[-1] // chunk)))
    trips = 1
    for i, t in cands:
        if trips >= MIN_FORALL_TRIPS:
            break
        dims.append(i)
        trips *= t
    return sorted(dims) if trips > 1 else []


def _run_time_forall(dims: list[int], n: int) -> str:
    """Schedule text: ``%op`` (in its ``scf.execute_region``, see
    :mod:`.dynamic_threads`) tiled into ``%tf`` by an ``scf.forall`` over the
    loops ``dims``, with the FORALL_TILE selects in front of it (in loop
    order) as tile sizes."""
    k = len(dims)
    any_ops = lambda j: ", ".join(["!transform.any_op"] * j)   # noqa: E731
    text = ('    %region = transform.get_parent_op %op {op_name = "scf.execute_region"}\n'
            "      : (!transform.any_op) -> !transform.any_op\n"
            f'    %ts = transform.structured.match ops{{["arith.select"]}} '
            f"attributes{{{FORALL_TILE}}} in %region\n"
            "      : (!transform.any_op) -> !transform.any_op\n")
    names = ["%ts"]
    if k > 1:
        names = [f"%ts{j}" for j in range(k)]
        text += f"    {', '.join(names)} = transform.split_handle %ts : (!transform.any_op) -> ({any_ops(k)})\n"
    sizes = ", ".join(names[dims.index(i)] if i in dims else "0" for i in range(n))
    return text + (f"    %tf, %lf = transform.structured.tile_using_forall %op tile_sizes [{sizes}]\n"
                   f"      : ({any_ops(k + 1)}) -> (!transform.any_op, !transform.any_op)\n")


def row_chunk(inner: int, width: int) -> int:
    """Elements per step along a long row: 4 vectors, or fewer when that
    divides the row and 4 do not. A row that is no multiple of the step gets
    a masked step, and masked vectorization masks *every* step of the loop
    (AVX2's vmaskmovps, microcoded on AMD): 784 = 28x28 runs in steps of 2
    vectors instead."""
    for k in (4, 3, 2):
        if inner % (k * width) == 0:
            return k * width
    return 4 * width


def schedule(op: ir.Operation, target: Target, threads: bool = False,
             units: int | None = None) -> str | None:
    """``units``: :func:`work` of ``op`` if the caller has it."""
    sizes = _loop_sizes(op)
    n = len(sizes)
    inner = sizes[-1]
    if inner is None:
        # a dynamic row: steps of 4 vectors, the last iteration peeled
        # off (the main loop's steps are whole vectors, unmasked once
        # canonicalized) and vectorized with a mask; for a row reduction
        # the remainder stays a scalar loop (the masked vector reduction
        # combined its padding lanes into the result: ReduceMax of a row of
        # -inf gave -1e-45, fully-masked attention rows came out NaN)
        chunk = 4 * target.vector_width
    else:
        chunk = inner if inner <= WHOLE_ROW_MAX else row_chunk(inner, target.vector_width)
    tiles = [1] * (n - 1) + [chunk if inner is None or chunk < inner else 0]
    vec = [1] * (n - 1) + [chunk]
    # masked vectorization with vector sizes smaller than the tile computes
    # garbage without an error: every tile must fit its vector size
    assert all((t or s) is not None and (t or s) <= v for t, s, v in zip(tiles, sizes, vec)), \
        (tiles, sizes, vec)
    reduction = op.name == "linalg.generic" and \
        "reduction" in str(op.attributes["iterator_types"][n - 1])
    src, pre, fdims = "%op", "", []
    if DYN_THREADS in op.attributes:
        # a forall over the dynamic outer loops with run-time tile sizes, then tiled as below
        src, pre = "%tf", _run_time_forall(forall_loops(sizes), n)
    elif threads and (work(op) if units is None else units) >= THREAD_MIN_WORK:
        fdims = _forall_dims(sizes, chunk, reduction)
    if fdims:
        ftiles = [tiles[i] if i in fdims else 0 for i in range(n)]
        rest = [0 if i in fdims else tiles[i] for i in range(n)]
        tiled = (f"    %tf, %lf = transform.structured.tile_using_forall %op tile_sizes {ftiles}\n"
                 "      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n")
        k = sum(1 for t in rest if t)
        if k:
            loops = ", ".join(["!transform.any_op"] * k)
            tiled += (f"    %t, %l:{k} = transform.structured.tile_using_for %tf tile_sizes {rest}\n"
                      f"      : (!transform.any_op) -> (!transform.any_op, {loops})\n")
        else:
            tiled += "    %t = transform.cast %tf : !transform.any_op to !transform.any_op\n"
    elif all(t == 0 or t == s for t, s in zip(tiles, sizes)) and n == 1 and not pre:
        tiled = "    %t = transform.cast %op : !transform.any_op to !transform.any_op\n"
    else:
        k = sum(1 for t in tiles if t)
        loops = ", ".join(["!transform.any_op"] * k)
        tiled = pre + (f"    %t, %l:{k} = transform.structured.tile_using_for {src} tile_sizes {tiles}\n"
                       f"      : (!transform.any_op) -> (!transform.any_op, {loops})\n")
    # peeled: a dynamic row, or a long static row reduction that is no
    # whole number of chunks (its remainder stays scalar, as above)
    if inner is None or (reduction and inner > chunk and inner % chunk):
        # the innermost tile loop is the last of the loops tiled by tile_using_for
        k = sum(1 for t in (rest if fdims else tiles) if t)
        loop = f"%l#{k - 1}"
        return tiled + f"""    %lc = transform.cast {loop} : !transform.any_op to !transform.op<"scf.for">
    %main, %rest = transform.loop.peel %lc
      : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
    %vm = transform.structured.match ops{{["{op.name}"]}} in %main
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %vm vector_sizes {vec} : !transform.any_op
""" + ("" if reduction else f"""    %vr = transform.structured.match ops{{["{op.name}"]}} in %rest
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %vr vector_sizes {vec} : !transform.any_op
""")
    masked = inner % chunk != 0
    vsizes = f" vector_sizes {vec}" if masked else ""
    return tiled + f"""    transform.structured.vectorize %t{vsizes} : !transform.any_op
"""


def vectorize_elementwise(module: ir.Module, target: Target, threads: bool = False) -> int:
    """Tile + vectorize every candidate op; ``threads``: big ones get an
    ``scf.forall`` (see the module docstring). Returns how many applied."""
    # each generic's body is walked once (candidate and work)
    # not into linalg bodies (no linalg op is nested in one): a fused
    # generic's body is hundreds of ops once math_approx inlined its polynomials
    found = [(op, body) for op in walk_ops(module.operation, _CANDIDATE_NAMES,
                                           prune=_CANDIDATE_NAMES)
             for body in [_body(op)] if candidate(op, body)]
    ops, units = [], []
    for op, body in found:
        # trailing run-time dims read as one contiguous row: one loop (collapse_rows)
        new = collapse_row(op, _maps(op), _loop_sizes(op))
        ops.append(new or op)
        units.append(work(new) if new else work(op, body))
    # dynamic outer dims: threads decided at run time on the work (the forall's tile sizes)
    tiled = [op for op, u in zip(ops, units) if threads and u < THREAD_MIN_WORK and
             tile_on_work(op, _maps(op), _loop_sizes(op), u, THREAD_MIN_WORK)]
    units_of = dict(zip(map(id, ops), units))
    # each schedule tiles and vectorizes its own op only (rooted at the op,
    # linear in the module; ops of equal schedules in one run, see apply_to_ops)
    # a schedule vectorizes its op's tiled copies (they are gone), except a
    # peeled reduction's scalar remainder
    done = apply_to_ops(module, ops, lambda op: schedule(op, target, threads, units_of[id(op)]),
                        own_op_only=True, consumes=lambda body: "loop.peel" not in body)
    for op in walk_ops(module.operation) if tiled else ():
        if FORALL_TILE in op.attributes:
            del op.attributes[FORALL_TILE]
    return done
