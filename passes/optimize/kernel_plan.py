"""The kernel plan: which -O3 kernel (and tile, and threads) each op gets.

:func:`plan_kernels` runs first in :func:`~onnx_mlir_py.passes.optimize.optimize`
(after ``resolve_dims``): it walks the module, classifies every conv,
depthwise conv, pool, matmul and attention call from its shapes and the
:class:`~onnx_mlir_py.target.Target`, and records a :class:`PlanEntry` per op
(node name, shape, kernel, tile, threaded, reason). The kernel is also
written on the op as the attribute ``om.kernel`` (IREE's ``lowering_config``
in spirit); each rewrite step (``depthwise_convs``, ``pools``,
``direct_convs``, ...) then rewrites only the ops whose ``om.kernel`` names
it, so the order of the steps is no longer the priority between them: the
ordered lists of :data:`KERNELS` are. :func:`clear` drops the attributes
once the steps ran. ``onnx-mlir-py model.onnx --print-kernel-plan`` (and
``-v``) prints the plan, one line per op.

Per op family, :data:`KERNELS` is an ordered list of implementations (as
oneDNN's per-primitive lists): the first whose rule accepts the op wins,
``linalg`` (the generic lowering's loops, vectorized where upstream can) is
the fallback. The rules are the kernels' own matchers (the fusions they
need are part of the match); the thresholds below are the numbers they
decide by, with what was measured.

Adding a kernel variant (as ``amx_matmul_bf16`` for ``target.amx_bf16``,
listed ahead of ``packed_matmul_bf16``):
write its rewrite step (a function ``(module, target, threads, plan)`` that
rewrites the ops :func:`assigned` to its name), add ``(name, rule)`` to the
family's list in :data:`KERNELS` before the kernels it should win over (the
rule returns ``(tile, threaded, reason)`` or None, reading the target's
facts, never ISA bits elsewhere), call the step in ``optimize()``, and give
it a lit test whose RUN line picks the target (``--o3-NAME=target=...``).
The int8 matmuls: ``int8_amx`` (``target.amx_int8``: AMX tiles,
matmul_q8_amx.py) before ``int8_vnni``; an ``int8_im2col`` conv's matmul
(untagged, made by the conv step) goes the same way.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import mlir.ir as ir

from onnx_mlir_py.ir_util import loc_name, walk_ops
from onnx_mlir_py.target import Target

KERNEL_ATTR = "om.kernel"

# ---- thresholds (what the rules decide by; measured on the machines named) ----
# Packed matmul kernels with at least this many multiply-adds are split across
# threads. It was 2^21 while waking pool workers cost tens of microseconds
# (MNIST's small convs ran 2.4x slower with 2 threads than with 1); workers
# now spin through a run and a parallel loop costs ~0.1 us (an empty loop at
# 2 threads, Zen 4), while a 1M-MAC kernel takes 20-40 us on one thread: at
# 2^21 eleven of MobileNetV3's 1x1 convs (1.1-1.9M MACs, ~0.33 ms of its
# ~2.2 at 1 thread) ran on one thread with 2; at 2^20 its 2-thread sum of
# per-node minima is 1.73 -> 1.59 ms, 1 thread unchanged (MNIST's 627K-MAC
# conv stays below) ...
THREAD_MIN_MACS = 1 << 20
# ... unless it has THREAD_MIN_MACS_MEMORY and its operands (A, B, C) take
# THREAD_MIN_BYTES: such a kernel is bound by memory more than by its
# multiply-adds (a recurrent step's H x R^T reads all of R, a 1x1 conv of
# few channels all of its image), and two cores' caches pay. Measured A/B at
# 2 threads (2^18 MACs with these bytes / 2^21 alone): MobileNetV3 0.90,
# MobileNetV2 0.85, YOLO 0.81, LSTM b2 t20 0.78; at 2^18 without the bytes
# MNIST's 627K-MAC conv (182 KB) ran 1.3x slower (32 -> 42 us a run).
THREAD_MIN_MACS_MEMORY = 1 << 18
THREAD_MIN_BYTES = 512 * 1024
# Attention kernels (per batch x head): the matmuls' threshold before it was
# lowered (not measured at 2^20).
ATTENTION_THREAD_MIN_MACS = 1 << 21
# The direct stem conv's row loop is an scf.forall from this many multiply-adds.
DIRECT_THREAD_MIN_MACS = 1 << 20
# Depthwise convs and pools from this many multiply-adds split their channels
# across threads: lower than the matmuls' 2^21, as a depthwise conv or pool
# takes ~5-10x longer per multiply-add than a matmul kernel; at 2^21 most of
# MobileNetV2's depthwise convs (e.g. 144 x 28 x 28 x 9 = 1.0M) ran on one
# thread (see elementwise.THREAD_MIN_WORK for the measurements).
WINDOW_THREAD_MIN_MACS = 1 << 17
# im2col copies of at least this many elements are split across threads.
IM2COL_THREAD_MIN = 1 << 16
# A threaded packed contraction's forall runs its outer block loop P (or P's
# cache groups) and the pool splits whole iterations, so P = 3 or 5
# (MobileNetV2's 7x7 and 14x14 convs: 3 or 5 groups of filter blocks, 2.6 of
# its 7.5 ms at 1 thread) left one of 2 threads 2/3 or 3/5 of the work.
# When P is below this and not a multiple of 4 (even for 2 and 4 threads),
# the forall takes the other block loop Q in as well: P x Q iterations,
# linearized in the serial loops' order. MobileNetV2, sum of per-node minima
# (--profile builds, alternating): 2 threads 4778 -> 4608 us, but 1 thread
# 7887 -> 7946 us (the convs changed +1.5-3.7% each: a forall iteration per
# register-tile row block instead of a loop over them).
BALANCED_SPLIT_ITERS = 16
# A 1x1 stride-1 conv's input is its im2col matrix as it is; it is packed
# (im2col_packed) when its pixels are not whole column blocks (the kernel
# would copy it into a padded matrix anyway) or when this many filters share
# each packed value. A/B, packed / in place, 1 thread: 128->512 at 28x28
# 0.84, 1024->256 at 14x14 0.92, 2048->512 at 7x7 0.91, 64->256 at 56x56
# 0.97, but 256->64 at 56x56 1.05 (the copy is not paid back by 64 filters);
# MobileNetV2 1.02 with every 1x1 conv packed, 0.92 with this rule.
PACK1_MIN_FILTERS = 128
# Fewer output channels than this get a narrower register tile
# (matmul.small_m_tile), whose packing would not fold away: no packed im2col.
PACKED_MIN_FILTERS = 8
# A conv whose whole im2col has more floats than STRIP_MIN runs in strips of
# output rows of about STRIP_COLS im2col floats (512 KB, cache-resident): the
# YOLO 6x6/2 stem on 640x640 had a 46 MB im2col (50 ms -> 7 ms).
STRIP_COLS = 1 << 17
STRIP_MIN = 1 << 20
# A dynamic-H/W 1x1 stride-1 conv (conv_dyn) runs per image as one parallel
# loop over strips of whole column blocks, each doing its copy-in (with the
# channel scale), contraction and copy-out (with the epilogue) while its
# im2col rows [K, S] and accumulators [F, S] stay in L2: at most
# DYN_STRIP_L2_SHARE of L2, at most DYN_STRIP_MAX_BLOCKS blocks (a 56x56 map
# is then 13 strips, balanced over 2 threads). Against the whole-image kernel
# (three parallel loops, the image's im2col and accumulators written and read
# back), Emerald Rapids: EfficientNet-B0 dynamic / static at 2 threads
# 1.39-1.54 -> 1.12-1.22, 1 thread 1.14-1.21 -> 1.14-1.17 (conv_dyn's
# docstring). The width follows the target's L2 (Zen 4's 1 MB: the same 8
# blocks for EfficientNet's expand / project convs, fewer for the widest).
DYN_STRIP_L2_SHARE = 4
DYN_STRIP_MAX_BLOCKS = 8
# ... and a map of fewer strips than this is cut into this many (or into
# its column blocks, if fewer): a 7x7 map, 2 blocks of 32, is 2 strips.
DYN_STRIP_TASKS = 4
# Packed B above this size is re-read from L3 for every row block when rows
# are outermost: matmul1024 (4 MiB of B) ran at 104 GFLOPS on a 2 MiB-L2
# Xeon, against 172 with a 1 MiB B; K is then cut into slabs (matmul.cache_blocks).
STREAMED_B_BYTES = 1 << 20


def threaded_kernel(macs: int | None, nbytes: int | None) -> bool:
    """Whether a packed contraction of ``macs`` multiply-adds over operands
    of ``nbytes`` (None: dynamic) is split across the pool."""
    if macs is None:
        return True
    return macs >= THREAD_MIN_MACS or (macs >= THREAD_MIN_MACS_MEMORY and nbytes is not None
                                       and nbytes >= THREAD_MIN_BYTES)


def forall_takes_both(p: int, q: int) -> bool:
    """Whether a threaded packed contraction's forall takes both outer block
    loops in: its ``p`` iterations alone are fewer than BALANCED_SPLIT_ITERS
    and no multiple of 4, and the other loop has ``q`` > 1 blocks."""
    return p < BALANCED_SPLIT_ITERS and p % 4 != 0 and q > 1


def pack_one_by_one(f: int, m: int, nb: int) -> bool:
    """Whether a 1x1 stride-1 conv of ``f`` filters over ``m`` pixels packs its input."""
    return m % nb != 0 or f >= PACK1_MIN_FILTERS


def packed_col(bsz: int, f: int, s, blocks: tuple[int, int]) -> bool:
    """Whether the im2col is written in the kernel's packed B layout
    (:mod:`.im2col_packed`): one image, stride 1, real kernel blocks, at
    least PACKED_MIN_FILTERS filters."""
    return bsz == 1 and f >= PACKED_MIN_FILTERS and list(s) == [1, 1] and min(blocks) > 1


def conv_form(xs, ws, s, groups: int, bsz: int, fg: int, hw, ohw, bias: bool,
              blocks: tuple[int, int], row_block: int) -> tuple[str, int]:
    """(form, pixel-row tile rows) of the im2col conv (``conv.conv_function``):
    ``row`` (1x1 conv of a 1x1 image: x [1, C] @ Wᵀ, conv_row.py),
    ``pixel_rows_in_place`` / ``pixel_rows`` (outᵀ = colᵀ @ Wᵀ when the
    pixels are not whole column panels, conv_pixel_rows.py; a 1x1 conv reads
    its input in place), ``in_place`` (a 1x1 stride-1 conv's input is its
    im2col matrix), ``packed_im2col`` (im2col_packed.py), ``im2col``."""
    from onnx_mlir_py.passes.optimize.conv_pixel_rows import pixel_rows
    kb, nb = blocks
    if groups == 1 and list(xs[:1] + xs[2:]) == [1, 1, 1] and tuple(ws[2:]) == (1, 1):
        return "row", 0
    kh, kw = ws[-2], ws[-1]
    m = ohw[0] * ohw[1]
    one_by_one = (kh, kw) == (1, 1) and s == [1, 1] and tuple(hw) == tuple(ohw)
    mr = pixel_rows(bsz, groups, bias, fg, m, nb, row_block) if min(blocks) > 1 else 0
    if mr and one_by_one:
        return "pixel_rows_in_place", mr
    if mr:
        return "pixel_rows", mr
    if one_by_one and not (packed_col(bsz, fg, s, blocks) and pack_one_by_one(fg, m, nb)):
        return "in_place", 0
    if packed_col(bsz, fg, s, blocks):
        return "packed_im2col", 0
    return "im2col", 0


def strip_rows(xs, ws, os_, s, kb: int) -> int | None:
    """Output rows per strip for a plain conv, or None (not cut: small, or
    a 1x1 stride-1 conv, which needs no im2col; conv_strips.py)."""
    c, (_f, _c, kh, kw), (oh, ow) = xs[1], ws, os_[2:]
    if (kh, kw) == (1, 1) and tuple(s) == (1, 1):
        return None
    kp = -(-(c * kh * kw) // kb) * kb
    if kp * oh * ow <= STRIP_MIN:
        return None
    r = max(1, STRIP_COLS // (kp * ow))
    return r if r < oh else None


# ---- the plan ----

@dataclass(frozen=True)
class PlanEntry:
    node: str           # the ONNX node (the op's location name)
    op: str             # the op (linalg.conv_2d_nchw_fchw, ...)
    shape: str          # its operand shapes
    kernel: str         # the KERNELS name that won, or "linalg"
    tile: str           # the tile parameters ("-" when none)
    threaded: bool      # whether its outer loop is an scf.forall (with threads on)
    reason: str         # why this kernel

    def line(self) -> str:
        return (f"{self.node:<28} {self.op.removeprefix('linalg.'):<26} {self.shape:<48} "
                f"{self.kernel:<22} {self.tile:<22} {'threads' if self.threaded else '1 thread':<9}"
                f" {self.reason}")


@dataclass
class KernelPlan:
    target: Target
    threads: bool
    entries: list

    def lines(self) -> list[str]:
        """The printed plan: a header (the target) and one line per op."""
        head = (f"{'node':<28} {'op':<26} {'shape':<48} {'kernel':<22} {'tile':<22} "
                f"{'threads':<9} reason")
        return [f"kernel plan for {self.target.level or 'generic'} "
                f"({self.target.cpu or 'default CPU'}), {len(self.entries)} ops", head] + \
            [e.line() for e in self.entries]


def _shape(v: ir.Value) -> str:
    t = v.type
    if not isinstance(t, ir.ShapedType) or not t.has_rank:
        return str(t)
    return "x".join("?" if t.is_dynamic_dim(i) else str(d) for i, d in enumerate(t.shape)) or "scalar"




def _macs_str(n: int | None) -> str:
    return "?" if n is None else f"{n / 1e6:.1f}M MACs" if n >= 100000 else f"{n} MACs"


# -- rules: op -> (tile, threaded, reason) or None (threaded before `threads`) --

def _attention(op, t: Target):
    from onnx_mlir_py.passes.optimize.attention import CALL_ATTR, plan_attention
    if op.name != "func.call" or CALL_ATTR not in op.attributes:
        return None
    found = plan_attention(op, t)
    if found is None:
        return None
    (rows, ncol), work = found
    return (f"{rows} rows x {ncol} vectors", work is None or work >= ATTENTION_THREAD_MIN_MACS,
            f"f32 attention, head dim in whole {t.vector_width}-lane vectors; {_macs_str(work)}")


def _window(match, what: str):
    def rule(op, t: Target):
        from onnx_mlir_py.passes.optimize.row_kernel import lane_width
        from onnx_mlir_py.passes.optimize.row_plan import macs
        found = match(op)
        if found is None:
            return None
        cv = found[0]
        if cv.xs[0] is None:         # a dynamic batch: the batch-1 kernel per image
            cv = replace(cv, xs=(1,) + cv.xs[1:], os=(1,) + cv.os[1:])
        n = macs(cv)
        return (f"rows of {lane_width(cv, t.vector_width)} lanes", n >= WINDOW_THREAD_MIN_MACS,
                f"{what}, {cv.kh}x{cv.kw} window inside the input; {_macs_str(n)} per image")
    return rule


def _depthwise(op, t):
    from onnx_mlir_py.passes.optimize.depthwise import _match
    return _window(_match, "depthwise f32")(op, t)


def _depthwise_q8(op, t):
    from onnx_mlir_py.passes.optimize.depthwise_q8 import _match
    return _window(_match, "depthwise int8: 8-bit in and out (dequantized in the plane copy, "
                           "requantized after f32 taps)")(op, t)


def _pool(op, t):
    from onnx_mlir_py.passes.optimize.pool import _match
    return _window(_match, "static f32 pool")(op, t)


def _pool_q8(op, t):
    from onnx_mlir_py.passes.optimize.pool_q8 import plan
    return plan(op, t)


def _dyn_rows(signature: str, what: str):
    """The rule of a pool_dyn.py kernel: ``signature`` its matcher's name there."""
    def rule(op, t: Target):
        from onnx_mlir_py.passes.optimize import pool_dyn
        sig = getattr(pool_dyn, signature)(op)
        if sig is None:
            return None
        return (f"rows of {t.vector_width} lanes", sig[0][1] > 1,
                f"{what} with dynamic H/W: per-image vector rows, channels split")
    return rule


_pool_dyn = _dyn_rows("signature", "pool")


def _depthwise_dyn(op, t: Target):
    from onnx_mlir_py.passes.optimize.depthwise_dyn import plan
    return plan(op, t) or _dyn_rows("depthwise_signature", "depthwise f32")(op, t)


def _conv_direct(op, t: Target):
    from onnx_mlir_py.passes.optimize.conv_direct import _match, tile, variant
    from onnx_mlir_py.passes.optimize.conv_direct_pixels import panels_outer, pixel_tile
    found = _match(op, t)
    if found is None:
        return None
    dv = found[0]
    fb, u = tile(t)
    rows = dv.os[0] * dv.os[2] if dv.os[0] is not None else dv.os[2]
    n = rows * dv.os[3] * math.prod(dv.ws)
    if variant(dv.ws[1], dv.ws[0], dv.ws[2], dv.ws[3], dv.os[3], t) == "pixels":
        tile_, how = (f"{pixel_tile(dv.os[3])} pixels x {2 * t.vector_width} filters",
                      "filters in the lanes" +
                      (", filter panels outside the rows (weights > L2 / 2, 2 FMA pipes)"
                       if panels_outer(dv, t) else ""))
    else:
        tile_, how = f"{fb} filters x {u} vectors", f"filters in blocks of {fb}"
    return (tile_, n >= DIRECT_THREAD_MIN_MACS and rows > 1,
            f"direct conv: {dv.ws[1]} input channels, {how}; {_macs_str(n)}")


def _conv_matmul(op, t: Target):
    from onnx_mlir_py.passes.optimize.conv import conv_signature_and_bias
    found = conv_signature_and_bias(op)
    if found is None:
        return None
    (xs, ws, os_, s, d, g), bias = found
    mb, nb, kb = t.matmul_tile
    if g == 1:
        fg, hw, ohw = ws[0], xs[2:], os_[2:]
        macs = math.prod(os_[1:]) * math.prod(ws[1:])
    else:
        fg, hw, ohw = ws[1], xs[3:], os_[3:]
        macs = math.prod(os_[1:]) * math.prod(ws[2:])
    strips = strip_rows(list(xs), list(ws), list(os_), list(s), kb) if g == 1 else None
    n1 = 1 if xs[0] is None else xs[0]          # a dynamic batch: the batch-1 kernel
    form, mr = conv_form([n1] + list(xs[1:]), list(ws), list(s), g, n1 * (g if g > 1 else 1),
                         fg, hw, ohw, bias, (kb, nb), mb)
    if strips is not None:
        form = f"strips of {strips} rows"
    if xs[0] is not None:
        macs *= xs[0]
    tile = f"{mr}x{nb} (pixel rows)" if mr else f"{mb}x{nb}, k {kb}"
    return (tile, macs >= THREAD_MIN_MACS, f"im2col + packed matmul: {form}; {_macs_str(macs)}")


def _conv_dyn(op, t: Target):
    from onnx_mlir_py.passes.optimize.conv_dyn import signature
    if signature(op) is None:
        return None
    mb, nb, kb = t.matmul_tile
    strip = dyn_strip_columns(op, t)
    how = f"strips of <= {strip} columns: copy-in, " if strip else "im2col + "
    return f"{mb}x{nb}, k {kb}", True, \
        f"conv with dynamic H/W: per image, {how}packed contraction"


def dyn_strip_columns(op, t: Target) -> int:
    """The strip width (columns, whole ``nb`` blocks) of a dynamic-H/W conv
    whose input is its im2col matrix (:func:`.conv_dyn.flat_input`), from
    the L2 size: its rows [Kp, S] and accumulators [Fp, S] in
    1 / DYN_STRIP_L2_SHARE of L2 (see DYN_STRIP_MAX_BLOCKS); 0 for any
    other conv (the whole-image kernel)."""
    from onnx_mlir_py.passes.optimize.conv_dyn import flat_input, signature
    sig = signature(op)
    if sig is None or not flat_input(sig[1], sig[3]):
        return 0
    mb, nb, kb = t.matmul_tile
    f, c = sig[1][0], sig[1][1]
    rows = -(-c // kb) * kb + -(-f // mb) * mb
    blocks = (t.l2 // DYN_STRIP_L2_SHARE) // (4 * nb * rows)
    return nb * max(1, min(DYN_STRIP_MAX_BLOCKS, blocks))


def _matmul(kernel: str):
    def rule(op, t: Target):
        from onnx_mlir_py.passes.optimize.matmul import matmul_plan
        found = matmul_plan(op, t)
        if found is None or found[0] != kernel:
            return None
        from onnx_mlir_py.passes.optimize.matmul_nbits import fallback_note
        _, tile, macs, nbytes, why = found
        return tile, threaded_kernel(macs, nbytes), f"{why}; {_macs_str(macs)}{fallback_note(op)}"
    return rule


def _int8_conv(op, t: Target):
    from onnx_mlir_py.passes.optimize.conv_q8 import plan
    return plan(op, t)


def _bf16_conv(op, t: Target):
    from onnx_mlir_py.passes.optimize.conv_bf16 import plan
    return plan(op, t)


def _int8_matmul(op, t: Target):
    from onnx_mlir_py.passes.optimize.matmul_q8 import plan
    return plan(op, t)


def _int8_amx_matmul(op, t: Target):
    from onnx_mlir_py.passes.optimize.matmul_q8_amx import plan
    return plan(op, t)


def _amx_bf16_conv(op, t: Target):
    from onnx_mlir_py.passes.optimize.matmul_bf16_amx import conv_plan
    return conv_plan(op, t)


def _amx_bf16_matmul(op, t: Target):
    from onnx_mlir_py.passes.optimize.matmul_bf16_amx import plan
    return plan(op, t)


def _bf16_matmul(op, t: Target):
    from onnx_mlir_py.passes.optimize.matmul_bf16 import plan
    return plan(op, t)


def _nbits_decode(op, t: Target):
    from onnx_mlir_py.passes.optimize.matmul_nbits import plan
    return plan(op, t)


FAMILIES = {
    "func.call": "attention",
    "linalg.depthwise_conv_2d_nchw_chw": "depthwise",
    "linalg.pooling_nchw_max": "pool", "linalg.pooling_nchw_sum": "pool",
    "linalg.generic": "pool",       # only the unsigned 8-bit max pools (pool_q8.is_pool)
    "linalg.conv_2d_nchw_fchw": "conv", "linalg.conv_2d_ngchw_gfchw": "conv",
    "linalg.conv_2d_nhwc_fhwc": "conv_nhwc",    # (NhwcConv, --precision bf16: AMX only)
    "linalg.matmul": "matmul", "linalg.batch_matmul": "matmul",
}
# family -> implementations, first accepting wins (else "linalg")
KERNELS = {
    "attention": [("attention", _attention)],
    "depthwise": [("depthwise_q8", _depthwise_q8), ("depthwise_rows", _depthwise),
                  ("depthwise_dyn", _depthwise_dyn)],
    "pool": [("pool_rows", _pool), ("pool_q8", _pool_q8), ("pool_dyn", _pool_dyn)],
    "conv": [("int8_im2col", _int8_conv), ("amx_conv_bf16", _amx_bf16_conv),
             ("conv_bf16", _bf16_conv), ("conv_direct", _conv_direct),
             ("conv_im2col", _conv_matmul),
             ("conv_dyn", _conv_dyn)],
    "conv_nhwc": [("amx_conv_bf16", _amx_bf16_conv)],
    "matmul": [("int8_amx", _int8_amx_matmul), ("int8_vnni", _int8_matmul),
               ("amx_matmul_bf16", _amx_bf16_matmul),
               ("packed_matmul_bf16", _bf16_matmul),
               ("nbits_decode", _nbits_decode)] +
              [(k, _matmul(k)) for k in ("packed_matmul", "packed_matmul_dyn",
                                         "block_pack_matmul")],
}


def bf16_inputs(op: ir.Operation) -> bool:
    """A contraction of ``--precision bf16`` (bf16 inputs, f32 result): only
    the kernels named ``*_bf16`` take it."""
    ins = [v.type for v in list(op.operands)[:2]]
    return any(isinstance(t, ir.ShapedType) and isinstance(t.element_type, ir.BF16Type)
               for t in ins) and len(op.results) == 1 and \
        isinstance(op.results[0].type, ir.ShapedType) and \
        isinstance(op.results[0].type.element_type, ir.F32Type)


def plan_kernels(module: ir.Module, target: Target, threads: bool,
                 excluded: dict[str, str] | None = None) -> KernelPlan:
    """Classify every planned op of ``module`` (see the module docstring),
    tag it with ``om.kernel`` and return the plan. ``excluded``: nodes left
    to the generic path, with why (a kernel over its budget:
    :mod:`.kernel_budget`)."""
    from onnx_mlir_py.passes.optimize.attention import CALL_ATTR
    from onnx_mlir_py.passes.optimize.pool_q8 import is_pool
    entries = []
    for op in walk_ops(module.operation, set(FAMILIES)):
        family = FAMILIES[op.name]
        if family == "attention" and CALL_ATTR not in op.attributes:
            continue
        if op.name == "linalg.generic" and not is_pool(op):
            continue
        kernel, tile, par, reason = "linalg", "-", False, \
            f"no kernel accepts it (tried {', '.join(k for k, _ in KERNELS[family])})"
        node = loc_name(op.location) or "?"
        mixed = bf16_inputs(op)
        if mixed:       # only a bf16 kernel may take it: the f32 ones would misread it
            reason = "bf16 inputs: generic path"
        if excluded and node in excluded:
            reason = excluded[node]
        else:
            for name, rule in KERNELS[family]:
                if mixed and not name.endswith("_bf16"):
                    continue
                found = rule(op, target)
                if found is not None:
                    kernel, (tile, par, reason) = name, found
                    break
        shape = " * ".join(_shape(v) for v in op.operands[:2]) + \
            (f" -> {_shape(op.results[0])}" if len(op.results) == 1 else "")
        entries.append(PlanEntry(node, op.name, shape, kernel, tile,
                                 threads and par, reason))
        op.attributes[KERNEL_ATTR] = ir.StringAttr.get(kernel)
    return KernelPlan(target, threads, entries)


def assigned(op: ir.Operation, kernel: str) -> bool:
    """Whether the plan gave ``op`` to ``kernel`` (untagged ops: not planned)."""
    return KERNEL_ATTR in op.attributes and \
        ir.StringAttr(op.attributes[KERNEL_ATTR]).value == kernel


def clear(module: ir.Module) -> None:
    """Drop the plan's ``om.kernel`` tags (after the kernel steps ran)."""
    for op in walk_ops(module.operation, set(FAMILIES)):
        if KERNEL_ATTR in op.attributes:
            del op.attributes[KERNEL_ATTR]
