"""matmul / batch_matmul -> packed layout + a register-tiled kernel.

1. ``pack_matmuls``: a static f32 ``linalg.matmul`` / ``linalg.batch_matmul``
   becomes the packed kernel of :mod:`.matmul_text` (B relaid out to
   ``[N/nb, K/kb, kb, nb]``, A and C only viewed in blocks, zero padding for
   sizes that are not multiples of the blocks); one with dynamic dims (a
   batch, a sequence length) becomes the kernel of :mod:`.matmul_dyn_text`
   (the same blocks, whole row blocks in place, the remainder rows padded,
   B packed only when constant). Other element types go through upstream
   ``linalg-block-pack-matmul``. Packs of constants (weights) are then folded
   at compile time (:mod:`.packs`).
2. ``kernel_schedule``: the packed contraction is tiled to one (mb x nb)
   block and one k block, unit dims are folded, the (mb, kb) x (kb, nb)
   block contraction is vectorized into ``vector.contract``; then, once per
   function for all kernels (``KERNEL_CLEANUP``), its accumulator is hoisted
   out of the k loop (it lives in registers) and the contraction is lowered
   to kb outer products (broadcast A x row of B, FMAs).
"""
from __future__ import annotations

import math

import mlir.ir as ir

from onnx_mlir_py.dialects.onnx.opview import owner_op
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.optimize.batch_loop import add_functions
from onnx_mlir_py.passes.optimize.kernel_inline import inline_kernels
from onnx_mlir_py.passes.optimize.schedule import (apply_to_funcs, apply_to_ops, loop_sizes,
                                                   static_loop_sizes)
from onnx_mlir_py.target import Target

from onnx_mlir_py.passes.optimize.kernel_fusion import fill_scalar, single_user, static_f32
from onnx_mlir_py.passes.optimize.epilogue import EPILOGUE_ATTR, body_ops, identity_parallel
from onnx_mlir_py.passes.optimize.kernel_plan import (STREAMED_B_BYTES, forall_takes_both,
                                                      threaded_kernel)
from onnx_mlir_py.passes.optimize.matmul_attrs import PACKED_ATTR
from onnx_mlir_py.passes.optimize.matmul_text import _cdiv, kernel_function
from onnx_mlir_py.passes.optimize.matmul_dyn_text import kernel_function_dynamic

_DEFAULT_MAPS = {
    "linalg.matmul": "[affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, "
                     "affine_map<(d0, d1, d2) -> (d0, d1)>]",
    "linalg.batch_matmul": "[affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, "
                           "affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, "
                           "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]",
}


# linalg.matmul reading A transposed: A given as [K, M] (a conv's im2col
# matrix with its pixels as the rows of A, see .conv_pixel_rows)
_A_COLS_MAPS = ("[affine_map<(d0, d1, d2) -> (d2, d0)>, affine_map<(d0, d1, d2) -> (d2, d1)>, "
                "affine_map<(d0, d1, d2) -> (d0, d1)>]")


def _a_cols_matmul(op: ir.Operation) -> bool:
    return op.name == "linalg.matmul" and len(op.operands) == 3 and len(op.results) == 1 \
        and "indexing_maps" in op.attributes \
        and str(op.attributes["indexing_maps"]) == _A_COLS_MAPS


def row_tile(m: int, mb: int) -> int:
    """Rows of the register tile for M rows of a transposed A (pixels): of
    mb - 2 .. mb, the one that pads M least (the larger on a tie). 49
    pixels (a 7x7 map) take 7 rows instead of 56 padded rows of 8."""
    return min(range(max(1, mb - 2), mb + 1), key=lambda r: (_cdiv(m, r) * r, -r))


def _is_packed_contraction(op: ir.Operation) -> bool:
    """The contraction ``linalg-block-pack-matmul`` produced (both inputs packed)."""
    if op.name != "linalg.generic" or len(op.operands) != 3:
        return False
    srcs = [owner_op(v) for v in list(op.operands)[:2]]
    return all(s is not None and s.name == "linalg.pack" for s in srcs)


def _default_matmul(op: ir.Operation) -> bool:
    """A matmul / batch_matmul (3 operands, 1 result) with the default indexing maps."""
    if op.name not in _DEFAULT_MAPS or len(op.operands) != 3 or len(op.results) != 1:
        return False
    return "indexing_maps" not in op.attributes or \
        str(op.attributes["indexing_maps"]) == _DEFAULT_MAPS[op.name]


def _kernel_shape(op: ir.Operation):
    """(batch|None, M, K, N) of a static f32 matmul/batch_matmul with default
    maps, or of a matmul with A transposed (:func:`_a_cols_matmul`)."""
    a_cols = _a_cols_matmul(op)
    if not (_default_matmul(op) or a_cols):
        return None
    shapes = [static_f32(v) for v in op.operands]
    if any(s is None for s in shapes) or 0 in sum(shapes, []):
        return None
    a, b, c = shapes
    if a_cols:
        return None, a[1], a[0], b[1]
    if op.name == "linalg.matmul":
        return None, a[0], a[1], b[1]
    if a[0] != b[0]:
        return None
    return a[0], a[1], a[2], b[2]


def _dynamic_kernel_shape(op: ir.Operation):
    """(batch, M, K, N) of an f32 matmul/batch_matmul with default maps and
    some dynamic dims (None); batch is False for a matmul. Else None."""
    if not _default_matmul(op):
        return None
    dyn = ir.ShapedType.get_dynamic_size()
    shapes = []
    for v in op.operands:
        t = v.type
        if not isinstance(t, ir.RankedTensorType) or not isinstance(t.element_type, ir.F32Type):
            return None
        shapes.append([None if d == dyn else d for d in t.shape])
    if all(None not in s for s in shapes) or 0 in sum(shapes, []):
        return None
    a, b, c = shapes

    def known(*ds):       # a dim one operand leaves dynamic may be static in another
        return next((d for d in ds if d is not None), None)
    if op.name == "linalg.matmul":
        return False, known(a[0], c[0]), known(a[1], b[0]), known(b[1], c[1])
    return (known(a[0], b[0], c[0]), known(a[1], c[1]), known(a[2], b[1]),
            known(b[2], c[2]))


def _cast_to_params(fop: ir.Operation, operands) -> list[ir.Value]:
    """``operands`` cast to the kernel's parameter types (a dim the kernel
    takes as static may still be dynamic in one operand's type)."""
    from mlir.dialects import tensor
    params = ir.FunctionType(ir.TypeAttr(fop.attributes["function_type"]).value).inputs
    return [v if v.type == t else tensor.CastOp(t, v).result for v, t in zip(operands, params)]


_RELAYOUTS = ("tensor.collapse_shape", "tensor.expand_shape", "linalg.broadcast",
              "linalg.transpose", "tensor.pad", "tensor.extract_slice")


def _constant_derived(v: ir.Value) -> bool:
    """``v`` is a constant, possibly reshaped/broadcast/transposed/padded/sliced
    (:func:`.packs.fold_constant_relayouts` folds all of these)."""
    for _ in range(8):
        op = owner_op(v)
        if op is None:
            return False
        if op.name == "arith.constant":
            return True
        if op.name not in _RELAYOUTS or (op.name == "tensor.extract_slice"
                                         and len(op.operands) != 1):   # a dynamic slice
            return False
        v = op.operands[0]
    return False


def _pack_b(op: ir.Operation) -> bool:
    """Relay B out (see :mod:`.matmul_text`) unless A is constant and B is
    computed: a convolution's weights times its im2col matrix, where the
    kernel reads B in place, one column panel at a time. An im2col already
    written in the packed layout (an unpack of it) is "packed" again, which
    the canonicalizer folds to the packed matrix itself."""
    a, b = list(op.operands)[:2]
    src = owner_op(b)
    if src is not None and src.name == "linalg.unpack":
        return True       # packed already (.im2col_packed): pack(unpack) folds away
    return not (_constant_derived(a) and not _constant_derived(b))


# A operand size that stays in a core's L2 (half of 1 MiB) while B streams
A_IN_L2_BYTES = 512 * 1024


def _n_outer(m: int, k: int) -> bool:
    """Column blocks outermost when A stays in L2: each packed column panel
    of B is then read once, instead of once per row block."""
    return 4 * m * k <= A_IN_L2_BYTES


# Size assumed for a dynamic M or K when choosing the loop order (a
# sequence length; the order only changes which operand is reused from cache)
DYNAMIC_DIM_GUESS = 128


def _n_outer_dynamic(m: int | None, k: int | None) -> bool:
    """Column blocks outermost when A likely stays in L2 (see
    :func:`_n_outer`); measured on a [?, 768] x [768, 3072] linear layer at
    128 rows: 1.05x of the static kernel this way, 1.08x rows outermost."""
    return _n_outer(m or DYNAMIC_DIM_GUESS, k or DYNAMIC_DIM_GUESS)


# A small-M tile reads at most this many floats of B per k step (but 4
# vectors): its B panel is a stream from memory (a classifier's weights run
# once per call), and narrower panels stream faster. Measured on Zen 4,
# 1 x 1024 x 1000 (4 MB of weights), ours / onnxruntime, 1 thread: 256
# columns 1.48 with the caches flushed, 1.11 warm; 128 columns 0.77-0.87 and
# 1.01; 2 x 1024 x 1000 cold: 128 columns 1.07, 64 columns 0.84.
SMALL_M_ROW_FLOATS = 128


def small_m_tile(m: int, n: int, mb: int, nb: int, width: int) -> tuple[int, int]:
    """Register tile (rows, columns) for a static M below the row block mb
    (a recurrent step's H·Rᵀ at batch 2, a classifier at batch 1): M rows
    and as many more columns as keep the accumulator count (mb x nb / width
    vectors), instead of padding M to mb (4x the multiply-adds at M = 2),
    at most SMALL_M_ROW_FLOATS / M columns (at least 4 vectors), capped at N
    rounded up to whole vectors. Else (mb, nb)."""
    if m >= mb:
        return mb, nb
    cols = min(nb * (mb // m), max(SMALL_M_ROW_FLOATS // m, 4 * width), -(-n // width) * width)
    return m, max(cols, width)


def matmul_plan(op: ir.Operation, target: Target):
    """(kernel, tile, multiply-adds, operand bytes, reason) that
    :func:`pack_matmuls` gives a matmul / batch_matmul (the kernel plan's
    rule), or None for another op."""
    mb, nb, kb = target.matmul_tile
    shape, a_cols = _kernel_shape(op), _a_cols_matmul(op)
    if shape is not None:
        bt, m, k, n = shape
        macs = (bt or 1) * m * k * n
        if a_cols:
            tile, why = f"{row_tile(m, mb)}x{nb}, k {kb}", "A read transposed (pixel rows)"
        elif _pack_b(op):
            tm, tn = small_m_tile(m, n, mb, nb, target.vector_width)
            tile = f"{tm}x{tn}, k {kb}"
            why = "static f32, B packed" + (" (small M: wider tile)" if tm < mb else "")
        else:
            tile, why = f"{mb}x{nb}, k {kb}", "static f32, B read in place"
        return "packed_matmul", tile, macs, operand_bytes(op), why
    if _dynamic_kernel_shape(op) is not None:
        return ("packed_matmul_dyn", f"{mb}x{nb}, k {kb}", None, None,
                "dynamic dims: whole row blocks in place, B packed when constant")
    if _default_matmul(op):
        return ("block_pack_matmul", f"{mb}x{nb}, k {kb}", None, None,
                "not f32 / other maps: upstream linalg-block-pack-matmul")
    return None


def _drop_empty_contractions(ops: list[ir.Operation]) -> list[ir.Operation]:
    """A matmul/batch_matmul with a static 0 dim is its init: over a K of 0,
    C + nothing; with an M, N or batch of 0, C is empty. Packing it (ours or
    upstream's block-pack) makes 0-size slices the verifiers reject. Erases
    those of ``ops`` (the module's matmuls); returns the others."""
    kept = []
    for op in ops:
        if len(op.operands) == 3 and len(op.results) == 1 and (
                "indexing_maps" not in op.attributes or
                str(op.attributes["indexing_maps"]) == _DEFAULT_MAPS[op.name]):
            if any(isinstance(v.type, ir.RankedTensorType) and 0 in list(v.type.shape)
                   for v in op.operands):
                op.results[0].replace_all_uses_with(op.operands[2])
                op.erase()
                continue
        kept.append(op)
    return kept


def matmul_epilogue(op: ir.Operation, m: int, n: int, mb: int, nb: int):
    """``(generic, (ops, result, n tensors, n captured), tensors, captured)``
    when the single user of static matmul ``op`` is an epilogue generic
    (:mod:`.epilogue`) the kernel can take: its tensors only when M and N
    are whole (mb, nb) blocks. Else None."""
    r = op.results[0]
    user = single_user(r)
    if user is None or EPILOGUE_ATTR not in user.attributes or user.operands[0] != r \
            or not identity_parallel(user, r.type) or r in list(user.operands)[1:]:
        return None
    tensors = list(user.operands)[1:-1]
    if tensors and (m % mb or n % nb):
        return None
    captured: list[ir.Value] = []
    names = {0: "%e_in"} | {i + 1: f"%e_t{i}" for i in range(len(tensors))}
    found = body_ops(user, names, "epb0", captured)
    if found is None:
        return None
    return user, (tuple(found[0]), found[1], len(tensors), len(captured)), tensors, captured


def _non_unit(shape) -> list[int]:
    return [d for d in shape if d != 1]


def _broadcast_map(g: ir.Operation) -> ir.AffineMap | None:
    """The input map when ``g`` is an all-parallel ``linalg.generic`` that
    only copies its one input into its identity-mapped output (a broadcast
    when the map leaves dims out), else None."""
    if g.name != "linalg.generic" or len(g.operands) != 2 or len(g.results) != 1:
        return None
    if any("parallel" not in str(a) for a in g.attributes["iterator_types"]):
        return None
    m_in, m_out = (ir.AffineMapAttr(a).value for a in g.attributes["indexing_maps"])
    if m_out != ir.AffineMap.get_identity(m_out.n_dims):
        return None
    body = list(g.regions[0].blocks[0].operations)
    args = g.regions[0].blocks[0].arguments
    if len(body) != 1 or body[0].name != "linalg.yield" or body[0].operands[0] != args[0]:
        return None
    return m_in


def _broadcast_source(g: ir.Operation) -> tuple[int, ir.Value] | None:
    """(dim, vector) when ``g`` (:func:`_broadcast_map`) broadcasts a static
    f32 vector along every dim of its output but ``dim``."""
    m_in = _broadcast_map(g)
    if m_in is None or len(m_in.results) != 1:
        return None
    v, dim = g.operands[0], str(m_in.results[0])
    if static_f32(v) is None or len(v.type.shape) != 1 or not dim.startswith("d"):
        return None
    d = int(dim[1:])
    return (d, v) if v.type.shape[0] == g.results[0].type.shape[d] else None


def matmul_init(op: ir.Operation, m: int, n: int, cols: bool = False):
    """``(kind, value)`` when C, the init of static matmul ``op`` ([M, N],
    M and N above 1), is (reshaped without moving data: unit dims only)
    a ``linalg.fill`` of an f32 (``"fill"``, the scalar) or an [M] vector
    broadcast along the columns (``"rows"``: a conv's bias along its
    pixels, see :mod:`.conv`). ``cols``: an [N] vector broadcast along
    the rows (``"cols"``: the bias of a conv in pixel-row form, see
    :mod:`.conv_pixel_rows`) instead. The kernel then builds C in registers
    (:func:`.matmul_text.kernel_function`'s ``init``). Else None."""
    v = op.operands[2]
    if m <= 1 or n <= 1 or static_f32(v) is None:
        return None
    for _ in range(4):
        src = owner_op(v)
        if src is None or src.name not in ("tensor.collapse_shape", "tensor.expand_shape"):
            break
        if _non_unit(src.operands[0].type.shape) != _non_unit(src.results[0].type.shape):
            return None
        v = src.operands[0]
    src = owner_op(v)
    if src is None:
        return None
    if src.name == "linalg.fill":
        found = fill_scalar(v)
        return None if found is None else ("fill", found[0])
    found = _broadcast_source(src)
    shape = list(v.type.shape)
    if found is None or _non_unit(shape) != [m, n]:
        return None
    dim, vec = found
    big = [i for i, d in enumerate(shape) if d != 1]
    if cols:
        return ("cols", vec) if big.index(dim) == 1 else None
    return ("rows", vec) if big.index(dim) == 0 else None


def _epilogue_scheduled(m: int, k: int, n: int, mb: int, nb: int, kb: int, n_outer: bool) -> bool:
    """Whether :func:`kernel_schedule` fuses the contraction of this static
    matmul into an epilogue's register tile (it does unless K is cut into
    slabs, see :func:`cache_blocks`)."""
    mo, ko, no = _cdiv(m, mb), _cdiv(k, kb), _cdiv(n, nb)
    sizes = [no, mo] if n_outer else [mo, no]
    blocks = cache_blocks(sizes + [ko, mb, nb, kb], not n_outer)
    return not blocks or blocks[2] >= ko


def pack_matmuls(module: ir.Module, target: Target) -> int:
    """Static f32 matmul/batch_matmul -> packed kernels (inlined private
    functions from :mod:`.matmul_text`); dynamic ones -> upstream
    ``linalg-block-pack-matmul``. Packed contractions are tagged. Returns
    how many ops were rewritten."""
    from mlir.dialects import func
    from mlir.passmanager import PassManager
    mb, nb, kb = target.matmul_tile
    funcs: dict[tuple, str] = {}
    # only matmuls: the walk must not reach an epilogue erased with its matmul
    matmuls = walk_ops(module.operation, set(_DEFAULT_MAPS))
    kept = _drop_empty_contractions(matmuls)
    count = len(matmuls) - len(kept)
    for op in kept:
        shape, dynamic, a_cols = _kernel_shape(op), False, _a_cols_matmul(op)
        if shape is None and not a_cols:
            shape, dynamic = _dynamic_kernel_shape(op), True
        if shape is None:
            continue
        # dynamic: only constant B (weights, packed at compile time) is relaid out
        pack_b = _constant_derived(op.operands[1]) if dynamic else _pack_b(op)
        bt, m, k, n = shape
        tm, tn = small_m_tile(m, n, mb, nb, target.vector_width) if pack_b and not dynamic \
            else (mb, nb)
        epi = None if dynamic or a_cols or bt is not None else matmul_epilogue(op, m, n, tm, tn)
        n_out = (_n_outer(m, k) if pack_b else True) if not dynamic else None
        # C built in the register tile: with an epilogue (a fill only then);
        # without one, the bias added by the kernel's own epilogue where the
        # schedule fuses one
        # (a_cols: the bias of a conv in pixel-row form, along the columns)
        if a_cols:
            tm, tn, n_out = row_tile(m, mb), nb, _n_outer(m, k)
        init = None if dynamic or bt is not None else matmul_init(op, m, n, cols=a_cols)
        if init is not None and epi is None:
            if init[0] in ("rows", "cols") and _epilogue_scheduled(m, k, n, tm, tn, kb, n_out):
                init = (init[0] + "_after", init[1])
            else:
                init = None
        key = shape + (pack_b, a_cols, epi[1] if epi is not None else None,
                       init[0] if init is not None else None)
        if key not in funcs:
            name = f"__om_matmul_{len(funcs)}"
            if dynamic:
                text = kernel_function_dynamic(name, bt, m, k, n, mb, nb, kb,
                                               n_outer=_n_outer_dynamic(m, k), pack_b=pack_b)
            elif a_cols:
                text = kernel_function(name, None, m, k, n, tm, nb, kb, pack_b,
                                       n_outer=n_out, a_cols=True,
                                       init=init[0] if init is not None else None)
            else:
                text = kernel_function(name, bt, m, k, n, tm, tn, kb, pack_b, n_outer=n_out,
                                       epilogue=epi[1] if epi is not None else None,
                                       init=init[0] if init is not None else None)
            # the text's first function is the one called (a dynamic kernel's
            # may call a second: matmul_dyn_text.shared_kernel)
            funcs[key] = (name, add_functions(module, text)[0])
        name, fop = funcs[key]
        # with an epilogue the call replaces it too (its tensors and
        # scalars may be defined between the two)
        last = epi[0] if epi is not None else op
        extra = epi[2] + epi[3] if epi is not None else []
        operands = list(op.operands)
        if init is not None:
            operands[2] = init[1]
        with ir.InsertionPoint(last), op.location:
            rtype = ir.FunctionType(ir.TypeAttr(fop.attributes["function_type"]).value).results[0]
            call = func.CallOp([rtype], ir.FlatSymbolRefAttr.get(name),
                               _cast_to_params(fop, operands + extra))
            res = call.results[0]
            if rtype != last.results[0].type:
                from mlir.dialects import tensor
                res = tensor.CastOp(last.results[0].type, res).result
        last.results[0].replace_all_uses_with(res)
        if last is not op:
            epi[0].erase()
        op.erase()
        count += 1
    pipeline = ["func.func(linalg-block-pack-matmul{"
                f"block-factors={mb},{nb},{kb} lhs-transpose-inner-blocks=false "
                "rhs-transpose-inner-blocks=false})"]
    if funcs:
        # no canonicalize of the whole module per inlining (#29): -O3's own follows
        inline_kernels(module, then=tuple(pipeline))
    else:
        PassManager.parse(f"builtin.module({', '.join(pipeline)})", module.context).run(module.operation)
    for op in walk_ops(module.operation, "linalg.generic"):
        if _is_packed_contraction(op) and PACKED_ATTR not in op.attributes:
            op.attributes[PACKED_ATTR] = ir.UnitAttr.get()
            count += 1
    return count


def packed_contractions(module: ir.Module) -> list[ir.Operation]:
    return [op for op in walk_ops(module.operation, "linalg.generic") if PACKED_ATTR in op.attributes]


def _outer_is_rows(op: ir.Operation) -> bool:
    """The outer block loop (d0) of a packed contraction walks A's row
    blocks (B streamed for each), not B's column blocks (``n_outer``): C's
    row-block dim is d0."""
    m2 = ir.AffineMapAttr(op.attributes["indexing_maps"][2]).value
    return str(list(m2.results)[-4]) == "d0"


# Cache blocking of the packed contraction (loops P, Q, KO over blocks: P the
# outer block loop, Q the other, see matmul_text.contraction).
# (K is cut into slabs above kernel_plan.STREAMED_B_BYTES of packed B)
SLAB_K = 256            # a slab's B column panel (SLAB_K x nb floats) stays in L1
GROUP_BLOCKS = 8        # outer blocks that share each panel (read once per group)
# Column-block groups (columns outermost): their B panels, all of K, in L2
GROUP_PANEL_BYTES = 512 * 1024
# Rows outermost with fewer row blocks than this: the groups are column
# blocks, about COLUMN_GROUPS of them (the threads' share of the work)
SMALL_M_BLOCKS = 32
COLUMN_GROUPS = 8
#
# Measured and not kept (#27, YOLO's few-channel 1x1 convs at 160x160 in the
# in-place form, 8x32 tile, k 8; Zen 4, 1 thread, thread CPU, one process
# alternating builds, loaded shared machine, outputs bit-identical): the k loop
# keeps its 16 zmm accumulators in registers across all k blocks (K = 32: four
# blocks of 8, no stores or reloads between them; the SiLU epilogue after it
# spills a few). No column-block groups when all of A fits 16 KB: 32->32
# 1.04-1.06x slower, YOLO's first C3 block 1.01-1.06x; groups of 1, 2, 4, 16,
# 32 blocks for A that small: within the noise. A 16x16 register tile (all
# 16 filters of a 32->16 conv at once, B read once): 0.99-1.0x, 16->16 1.09x
# slower. Packing the input (packed_im2col) for 1x1 convs of few filters:
# 32->16 alone 0.93x, YOLO as a whole 1.00-1.01x. Rows 100 KB apart (a 4 KB
# multiple, all in the same L1 sets) against 105 KB: the same time per MAC.
# The "2-3x slower than onnxruntime" of these convs compared our Conv node
# (its SiLU fused in) with onnxruntime's Conv alone: its SiLU is a separate
# QuickGelu node (0.12-0.17 ms each at 16x160x160). With it, per-node minima
# in the model: 32->16 0.45-0.52 vs 0.36-0.41 ms (0.42-0.46 alone), 32->32
# 0.82-0.98 vs 0.72-0.74; a conv whose SiLU is not fused (its result goes to
# a Concat) pays a separate pass: 32->16 0.35 + 0.18 vs 0.25 + 0.12.
# What is left is memory: with the input evicted (32 MB written before each
# run) the kernel reads its 32-64 input rows 100 KB apart at ~+0.21 ms per
# MB of input (K = 8, 16, 32), onnxruntime (NCHWc) at ~+0.05 ms per MB.


def cache_blocks(sizes, outer_is_rows: bool) -> tuple[int, int, int] | None:
    """(par, tile, kcb) for a non-batched packed contraction with static K
    blocks (loop sizes ``sizes`` = P, Q, KO, mb, nb, kb; None where
    dynamic), or None for the plain schedule. The schedule is then

        for g in (P or Q: ``par`` 0 or 1) step tile   (the scf.forall with threads)
          for k0 in KO step kcb                        (when kcb < KO)
            for q in Q (those of group g when par = 1)
              for p in P (those of group g when par = 0)
                for ko in [k0, k0 + kcb)     the register-tiled block

    so a B panel (kcb x kb x nb) is read once per group and reused by the
    group's blocks from L1.
    - Rows outermost (``outer_is_rows``), packed B larger than
      STREAMED_B_BYTES: K in slabs of about SLAB_K. With many row blocks,
      groups of up to GROUP_BLOCKS row blocks (B read once per group; A, an
      mb x kcb block, stays in L1 across the panels). With fewer than
      SMALL_M_BLOCKS (a linear layer on 64 tokens), the threads split the
      column blocks instead and every row block is under each panel: B read
      once in all, each slab of A (M x kcb) re-read from L2 per panel.
    - Columns outermost: groups of column blocks whose B panels (all of K)
      fit GROUP_PANEL_BYTES, K not cut; each A row block is then read once
      per group instead of once per column block."""
    if sizes is None or len(sizes) != 6 or sizes[2] is None or sizes[2] <= 1 \
            or sizes[4] is None or sizes[5] is None:
        return None
    p, q, ko, nb, kb = sizes[0], sizes[1], sizes[2], sizes[4], sizes[5]
    cap = GROUP_BLOCKS if p is None else min(GROUP_BLOCKS, p // 4)   # >= 4 groups
    if outer_is_rows:
        if q is None or 4 * ko * kb * q * nb <= STREAMED_B_BYTES:
            return None
        kcb = _cdiv(ko, max(1, round(ko * kb / SLAB_K)))
        if p is not None and p < SMALL_M_BLOCKS:
            return 1, max(1, q // COLUMN_GROUPS), kcb
        return (0, cap, kcb) if cap >= 2 else None
    pt = min(cap, GROUP_PANEL_BYTES // (4 * ko * kb * nb))
    return (0, pt, ko) if pt >= 2 else None


def _grouped_tiling(n: int, par: int, tile: int, kcb: int, ko: int, threads: bool,
                    both: bool = False) -> str:
    """Transform text of the loops of :func:`cache_blocks`, ending in ``%t``
    (the tile of one block pair and all its k blocks). ``both`` (threads, K
    not cut): the forall also takes the other block loop in (one block each),
    see :func:`~.kernel_plan.forall_takes_both`."""
    def sizes(d: int, v: int) -> list[int]:
        return [v if i == d else 0 for i in range(n)]
    one = "      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n"
    if both:
        text = (f"    %tg, %lg = transform.structured.tile_using_forall %op tile_sizes "
                f"{_both_grid(n, par, tile)}\n" + one)
        return text + f"    %t, %lpi = transform.structured.tile_using_for %tg tile_sizes {sizes(par, 1)}\n" + one
    how = "tile_using_forall" if threads else "tile_using_for"
    text = f"    %tg, %lg = transform.structured.{how} %op tile_sizes {sizes(par, tile)}\n" + one
    src = "%tg"
    if kcb < ko:
        text += f"    %ts, %ls = transform.structured.tile_using_for %tg tile_sizes {sizes(2, kcb)}\n" + one
        src = "%ts"
    text += f"    %tq, %lq = transform.structured.tile_using_for {src} tile_sizes {sizes(1, 1)}\n" + one
    return text + f"    %t, %lpi = transform.structured.tile_using_for %tq tile_sizes {sizes(0, 1)}\n" + one


def kernel_schedule(op: ir.Operation, threads: bool = False) -> str | None:
    """Transform body for one packed contraction: outer loops (batch..., M/mb,
    N/nb, K/kb in some order, exactly one of them a reduction) first, then the
    three block loops (mb, nb, kb). ``threads``: the outer parallel loops
    become one ``scf.forall`` (see the package docstring for its status)."""
    iters = [str(a) for a in op.attributes["iterator_types"]]
    n = len(iters)
    outer = n - 3
    # the last outer reduction dim is the k-block loop
    red = [i for i in range(outer) if "reduction" in iters[i]]
    inner_red = [i for i in range(outer, n) if "reduction" in iters[i]]
    if len(red) != 1 or len(inner_red) != 1:
        return None
    k = red[0]
    par = [1 if (i < outer and i != k) else 0 for i in range(n)]
    kt = [1 if i == k else 0 for i in range(n)]
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    sizes = loop_sizes(op, maps)
    blocks = cache_blocks(sizes, _outer_is_rows(op)) if outer == 3 and k == 2 else None
    epi = outer == 3 and k == 2 and _epilogue_consumer(op) and (not blocks or blocks[2] >= sizes[2])
    both = threads and outer == 3 and k == 2 and _forall_both(sizes, blocks)
    if epi:
        first = _epilogue_tiling(blocks, threads, both, _tile_init(op))
    elif blocks:
        first = _grouped_tiling(n, *blocks, sizes[k], threads, both)
    elif threads:
        # the first outer parallel loop is distributed, the others stay loops
        # (both block loops when the first alone splits unevenly)
        p0 = par.index(1)
        fpar = [1 if i == p0 or (both and i == 1) else 0 for i in range(n)]
        rest = [1 if (par[i] and not fpar[i]) else 0 for i in range(n)]
        first = (f"    %{'tf' if any(rest) else 't'}, %lp = transform.structured.tile_using_forall %op"
                 f" tile_sizes {fpar}\n"
                 "      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n")
        if any(rest):
            loops = ", ".join(["!transform.any_op"] * sum(rest))
            first += (f"    %t, %lq:{sum(rest)} = transform.structured.tile_using_for %tf tile_sizes {rest}\n"
                      f"      : (!transform.any_op) -> (!transform.any_op, {loops})\n")
    else:
        loops = ", ".join(["!transform.any_op"] * sum(par))
        first = (f"    %t, %lp:{sum(par)} = transform.structured.tile_using_for %op tile_sizes {par}\n"
                 f"      : (!transform.any_op) -> (!transform.any_op, {loops})\n")
    if sizes is not None and sizes[k] == 1:
        # K in one k block: no k loop to tile and no accumulator to hoist
        # out of it; the patterns are scoped to the loop around the tile
        tile_k = ("    %lk = transform.get_parent_op %t : (!transform.any_op) -> !transform.any_op\n")
        mark = ""
    else:
        tile_k = (f"    %t2, %lk = transform.structured.tile_using_for %t tile_sizes {kt}\n"
                  "      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n")
        mark = f'    transform.annotate %lk "{K_LOOP_ATTR}" : !transform.any_op\n'
    # the epilogue's register tile is in the loop around the k loop
    scope = "%lin" if epi else "%lk"
    return first + tile_k + f"""    transform.apply_patterns to {scope} {{
      transform.apply_patterns.linalg.fold_unit_extent_dims_via_slices
    }} : !transform.any_op
    %t3 = transform.structured.match ops{{["linalg.generic"]}} in {scope}
      : (!transform.any_op) -> !transform.any_op
    transform.structured.vectorize %t3 : !transform.any_op
    transform.apply_patterns to {scope} {{
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.reduction_to_contract
    }} : !transform.any_op
{mark}"""


def _epilogue_consumer(op: ir.Operation) -> bool:
    """The packed contraction's result is read only by an epilogue generic
    (:mod:`.epilogue`) over its parallel block loops."""
    user = single_user(op.results[0])
    return user is not None and EPILOGUE_ATTR in user.attributes and user.operands[0] == op.results[0] \
        and len(list(user.attributes["iterator_types"])) == 4


def _tile_init(op: ir.Operation) -> bool:
    """The packed contraction's init is built by an op of its own that the
    epilogue schedule fuses into the register tile: a broadcast generic
    (``matmul_text._init_blocks``) whose only user it is (see
    :func:`_own_inits`). Its accumulators then start from registers
    instead of from an init tensor the size of the output, written and
    read back."""
    src = owner_op(op.operands[2])
    if src is None or single_user(op.operands[2]) is None:
        return False
    return _broadcast_map(src) is not None


def _own_inits(ops: list[ir.Operation]) -> None:
    """Give each packed contraction whose init is a broadcast generic with
    other users a copy of its own: CSE merges the equal inits of kernels of
    one shape (the zero of ``rows_after``, equal biases), and a producer
    with other users is not fused into an scf.for (upstream's fusion through
    a loop's block argument handles scf.forall only)."""
    for op in ops:
        v = op.operands[2]
        src = owner_op(v)
        if src is not None and single_user(v) is None and _broadcast_map(src) is not None:
            op.operands[2] = src.clone(ir.InsertionPoint(op)).results[0]


def _kernel_group(op: ir.Operation) -> list[ir.Operation]:
    """The ops :func:`kernel_schedule` may rewrite for the contraction
    ``op``: its own init producer (:func:`_tile_init`), itself, and its
    epilogue (:func:`_epilogue_consumer`)."""
    group = [owner_op(op.operands[2])] if _tile_init(op) else []
    group.append(op)
    if _epilogue_consumer(op):
        group.append(single_user(op.results[0]))
    return [g.operation for g in group]


def _both_grid(n: int, par: int, tile: int) -> list[int]:
    """The forall tile sizes of a schedule that takes both outer block loops
    in (:func:`_forall_both`): ``tile`` blocks of the grouped loop ``par``,
    one block of the other, the rest untiled (``n`` loops)."""
    return [tile if i == par else 1 if i == 1 - par else 0 for i in range(n)]


def _forall_both(sizes, blocks) -> bool:
    """Whether the threaded schedule's forall takes both outer block loops
    (P, Q) in instead of P (or P's groups) alone: when that alone would split
    unevenly (:func:`~.kernel_plan.forall_takes_both`), P is the grouped loop
    and K is not cut into slabs (the slab loop sits between the group and Q
    loops): the linearized forall then runs the serial schedule's order."""
    if sizes is None or any(v is None for v in sizes[:3]):
        return False
    if blocks is None:
        return forall_takes_both(sizes[0], sizes[1])
    par, tile, kcb = blocks
    return par == 0 and kcb >= sizes[2] and forall_takes_both(_cdiv(sizes[0], tile), sizes[1])


def _epilogue_tiling(blocks, threads: bool, both: bool = False, init: bool = False) -> str:
    """Transform text tiling the epilogue (the contraction's one user:
    loops P, Q, mi, ni) like :func:`kernel_schedule` tiles a contraction
    alone (``blocks``: the groups of :func:`cache_blocks`, K not cut) and
    fusing the contraction into the innermost loop: ``%t`` (the fused
    contraction, all its k blocks) in ``%lin`` (the loop of one register
    tile, with the epilogue's tile after the contraction's). ``init``
    (:func:`_tile_init`): the contraction's init is fused after it, through
    the same loops."""
    one = "      : (!transform.any_op) -> (!transform.any_op, !transform.any_op)\n"
    text = ("    %epi = transform.get_consumers_of_result %op[0]"
            " : (!transform.any_op) -> !transform.any_op\n")
    if init:
        text += ("    %init = transform.get_producer_of_operand %op[2]"
                 " : (!transform.any_op) -> !transform.any_op\n")
    if blocks and both:
        par, tile = blocks[0], blocks[1]
        text += (f"    %eg, %lg = transform.structured.tile_using_forall %epi tile_sizes "
                 f"{_both_grid(4, par, tile)}\n" + one)
        text += f"    %ep, %l0 = transform.structured.tile_using_for %eg tile_sizes {[1 - par, par, 0, 0]}\n" + one
    elif blocks:
        par, tile = blocks[0], blocks[1]
        how = "tile_using_forall" if threads else "tile_using_for"
        sizes = [tile if i == par else 0 for i in range(4)]
        text += f"    %eg, %lg = transform.structured.{how} %epi tile_sizes {sizes}\n" + one
        text += "    %eq, %lq = transform.structured.tile_using_for %eg tile_sizes [0, 1, 0, 0]\n" + one
        text += "    %ep, %l0 = transform.structured.tile_using_for %eq tile_sizes [1, 0, 0, 0]\n" + one
    elif both:
        text += "    %ef, %lf = transform.structured.tile_using_forall %epi tile_sizes [1, 1, 0, 0]\n" + one
    elif threads:
        text += "    %ef, %lf = transform.structured.tile_using_forall %epi tile_sizes [1, 0, 0, 0]\n" + one
        text += "    %ep, %l0 = transform.structured.tile_using_for %ef tile_sizes [0, 1, 0, 0]\n" + one
    else:
        text += ("    %ep, %lp, %l0 = transform.structured.tile_using_for %epi tile_sizes [1, 1, 0, 0]\n"
                 "      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)\n")
    # into each loop in turn, outermost first: an inner loop's tile reads a
    # slice of the outer loop's slice
    loops = (["%lg", "%l0"] if both else ["%lg", "%lq", "%l0"]) if blocks else \
        (["%lf"] if both else ["%lf", "%l0"]) if threads else ["%l0"]
    fuse = ("    {0}, {1} = transform.structured.fuse_into_containing_op {2} into {3}\n"
            "      : (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)\n")
    src, fused = "%op", []
    for i, loop in enumerate(loops):
        res = ("%t", "%lin") if i == len(loops) - 1 else (f"%tf{i}", f"%lf{i}")
        text += fuse.format(*res, src, loop)
        src = res[0]
        fused.append(res[1])
    if init:
        src = "%init"
        for i, loop in enumerate(fused):
            text += fuse.format(f"%ti{i}", f"%li{i}", src, loop)
            src = f"%ti{i}"
    return text


# The k loops of the kernels tiled by kernel_schedule, whose accumulator
# KERNEL_CLEANUP hoists into registers
K_LOOP_ATTR = "om.k_loop"

# Run once per function after every packed contraction is tiled and
# vectorized (kernel_schedule): the canonicalization and CSE that make the
# accumulator's read and write in each k loop match (so they are hoisted
# out of it: the accumulator lives in registers), then the contractions as
# outer products (broadcast A x row of B, FMAs). Run per kernel on the whole
# function instead, they cost ~70 ms per kernel on ResNet-50 (3.8 s for its
# 54, growing with the function: O(kernels x function size)); scoped to
# each kernel's own loop nest they left some accumulators in memory
# (ResNet-18 1.09x, bert_layer 1.11x slower, Zen 4).
KERNEL_CLEANUP = f"""    transform.apply_patterns to %func {{
      transform.apply_patterns.canonicalization
    }} : !transform.any_op
    transform.apply_cse to %func : !transform.any_op
    %ks = transform.structured.match attributes{{{K_LOOP_ATTR}}} in %func
      : (!transform.any_op) -> !transform.any_op
    transform.loop.hoist_loop_invariant_subsets %ks : !transform.any_op
    transform.apply_patterns to %func {{
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.lower_outerproduct
    }} : !transform.any_op
"""


def operand_bytes(op: ir.Operation) -> int | None:
    """Bytes of a static op's tensor operands, else None."""
    total = 0
    for v in op.operands:
        t = v.type
        if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape:
            return None
        total += math.prod(t.shape) * max(1, getattr(t.element_type, "width", 32) // 8)
    return total


def contraction_macs(op: ir.Operation) -> int | None:
    """Iterations (multiply-adds) of a static linalg.generic, else None."""
    maps = [ir.AffineMapAttr(a).value for a in op.attributes["indexing_maps"]]
    sizes = static_loop_sizes(op, maps)
    return None if sizes is None else math.prod(sizes)


def tile_packed_contractions(module: ir.Module, threads: bool = False) -> int:
    """Tile and vectorize every packed contraction (:func:`kernel_schedule`),
    then clean up, hoist and lower them all at once per function
    (:data:`KERNEL_CLEANUP`). Returns how many were tiled."""
    def body(op):
        big = threaded_kernel(contraction_macs(op), operand_bytes(op))
        return kernel_schedule(op, threads and big)
    ops = packed_contractions(module)
    _own_inits(ops)
    n = apply_to_ops(module, ops, body, group_for=_kernel_group)
    if n:
        apply_to_funcs(module, KERNEL_CLEANUP)
        for op in walk_ops(module.operation, "scf.for"):
            if K_LOOP_ATTR in op.attributes:
                del op.attributes[K_LOOP_ATTR]
    return n
