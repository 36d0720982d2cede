"""int8 matmuls on AMX-INT8: the kernel plan's ``int8_amx`` kernel (a target
with ``amx_int8``; elsewhere the VNNI kernel of matmul_q8.py).

The same contractions as that kernel (8-bit A minus a per-tensor zero point
times a constant s8 B, i32 result from a zero fill; :func:`.matmul_q8.match`),
and so also the im2col convs' matmuls (conv_q8.py's ``int8_im2col`` form
leaves an untagged matmul, which this step takes before the VNNI one),
computed with ``tdpbusd`` (u8 A, ``zext``) or ``tdpbssd`` (s8 A: no
``xor 0x80`` shift as on VNNI, so no ``base`` term) through
:mod:`.amx_tiles`: per block of 32 rows, 2 A tiles (16 rows x 64 bytes) x 2
B tiles (16 k quads x 16 columns) into 2 x 2 i32 C tiles of 16 x 16, K
stepped by 64 (8 tile registers). The zero point::

    sum_k (a - za) * b = sum_k a * b - za * colsum[n]

``-za * colsum`` is written into 16 rows once per call and the C tiles start
from it (``micro_kernel``'s ``c_init``), so the result needs no pass of its
own; requantization stays the elementwise ops after it, as for VNNI.
Exact in i32: the same result as the VNNI kernel, bit for bit.

B is packed at compile time with :func:`.matmul_q8.pack_b` (``nb`` 16,
``group`` 4: one 64-byte row per k quad and 16 columns, AMX's B layout), K
padded with zero rows to ``Kp``, a multiple of 64, the column blocks
stacked: ``[N'/16 * Kp/4, 64]`` (N' = N padded to 16).

A tiles are read from A itself (K a multiple of 64, whole blocks of 32
rows), else from a ``[32, Kp]`` buffer per block filled from A's rows
(zeros past K, which multiply B's zero rows; zero rows past M). The result
is ``[M', N']`` with M' = M padded to 32 (the caller slices). Blocks of 32
rows run in an ``scf.forall`` when threaded.
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.passes.optimize import amx_tiles as amx
from onnx_mlir_py.passes.optimize.kernel_emit import INDEX, Elem, Emitter, tensor, vector
from onnx_mlir_py.passes.optimize.matmul_q8 import LANES, Type_I8, Type_I32, match
from onnx_mlir_py.target import Target
from onnx_mlir_py.passes.optimize.kernel_budget import building

KERNEL = "int8_amx"
MB = 32                 # rows of a block: 2 A tiles
KSTEP = 64              # bytes of an A tile row
NT = 16                 # columns of a C tile
# True: per block, K in chunks of CHUNK steps outermost, the column pairs
# inside (the block's A chunk, 32 x 64*CHUNK bytes, stays in L1 across the
# columns; C is stored / reloaded per chunk); False: per column pair all of K
# (amx_tiles.micro_kernel: A's whole rows re-read from L2 for every pair)
CHUNK_OUTER = True
CHUNK = 8
# Fewer rows than this (a static M) stay on the VNNI kernel: a block pads M to 32
# (not measured: a guess from the tiles' 16 rows)
MIN_ROWS = 16


def available(target: Target) -> bool:
    return target.amx_int8 and target.vector_width == LANES


def kp(k: int) -> int:
    return -(-k // KSTEP) * KSTEP


def plan(op: ir.Operation, target: Target):
    """The kernel plan's rule: (tile, threaded, reason) or None."""
    if not available(target):
        return None
    q = match(op)
    if q is None or (q.m is not None and q.m < MIN_ROWS):
        return None
    from onnx_mlir_py.passes.optimize.kernel_plan import _macs_str, threaded_kernel
    macs = None if q.m is None else q.m * q.k * q.n
    nbytes = None if q.m is None else q.m * q.k + q.k * q.n + 4 * q.m * q.n
    sign = "s8" if q.a_signed else "u8"
    ins = "tdpbssd" if q.a_signed else "tdpbusd"
    return ("32x32 (2x2 tiles), k 64", threaded_kernel(macs, nbytes),
            f"int8 matmul: {sign} x s8 -> i32, AMX {ins}; {_macs_str(macs)}")


def pack_b(b: np.ndarray) -> np.ndarray:
    """B [K, N'] int8 (N' a multiple of 16) -> ``[N'/16 * Kp/4, 64]``."""
    from onnx_mlir_py.passes.optimize.matmul_q8 import pack_b as pack
    k, n = b.shape
    bk = np.zeros((kp(k), n), np.int8)
    bk[:k] = b
    return np.ascontiguousarray(pack(bk, NT, 4).reshape(-1, 4 * NT))


# -- the kernel function -----------------------------------------------------------
def kernel_text(name: str, k: int, n: int, a_signed: bool, threaded: bool) -> str:
    """``func.func private @name(a: [?, K] i8, bp: [N/16 * Kp/4, 64] i8,
    colsum: [N] i32, za: i32) -> [M', N] i32`` (``n`` a multiple of 16;
    M' = M padded to 32; see the module docstring)."""
    e = Emitter()
    kpad, nt = kp(k), n // NT
    direct = k % KSTEP == 0
    a = e.param("a", tensor([None, k], Elem.I8))
    bp = e.param("bp", tensor([nt * kpad // 4, 4 * NT], Elem.I8))
    colsum = e.param("colsum", tensor([n], Elem.I32))
    za = e.param("za", Type_I32)
    am, bm, cm = amx.to_buffer(e, a), amx.to_buffer(e, bp), amx.to_buffer(e, colsum)
    m = e.op("m", f"memref.dim {am}, {e.index(0)} : {am.type}", INDEX)
    nblk = e.div(e.add(m, MB - 1), MB)
    out = amx.alloc(e, [e.mul(nblk, MB), n], Elem.I32, "out")
    v16, v64 = vector(LANES, Elem.I32), vector(KSTEP, Elem.I8)
    # the C tiles' start: -za * colsum[n], in 16 rows
    corr = amx.alloc(e, [amx.ROWS, n], Elem.I32, "corr")
    nza = e.broadcast(e.binary("arith.subi", e.const("0", Type_I32), za), v16)
    j = amx.open_for(e, 0, nt)
    col = e.mul(j, NT)
    cv = e.binary("arith.muli", e.read(cm, [col], e.const("0", Type_I32), v16), nza)
    for r in range(amx.ROWS):
        e(f"vector.transfer_write {cv}, {corr}[{e.index(r)}, {e.ix(col)}] {{in_bounds = [true]}} "
          f": {v16}, {corr.type}")
    amx.close(e)
    zero8 = e.const("0", Type_I8)
    zvec = e.splat_const("0", v64)

    def mul(e_, at, bt, ct):
        return amx.muli(e_, at, bt, ct, a_unsigned=not a_signed)

    bstep = kpad // 4           # B rows of one 16-column block
    tiles = dict(a_tile=amx.A_I8, b_tile=amx.B_I8, c_tile=amx.C_I32, mul=mul)

    # threaded, A in place: each row block's columns in groups, one forall
    # iteration each (a copied block would be copied once per group)
    groups = amx.groups_for(nt, threaded and direct)

    def compute(a_mem, a_row0, row0, g=None) -> None:
        """Rows row0.. (A's from a_row0 of a_mem) x column group g's columns
        (None: all)."""
        a_rows = [a_row0, e.add(a_row0, 16)]

        def column_pairs(block) -> None:
            amx.column_pairs(e, nt, block, g, groups)
        if not CHUNK_OUTER:
            column_pairs(lambda cols: amx.micro_kernel(
                e, a_mem, a_rows, bm, [e.mul(c, bstep) for c in cols], kpad, out, row0,
                e.mul(cols[0], NT), c_init=corr, **tiles))
            return
        steps = kpad // KSTEP
        u = min(steps, CHUNK)
        full = steps // u

        def chunk(k0, n: int, first: bool) -> None:
            column_pairs(lambda cols: amx.accumulate(
                e, a_mem, a_rows, bm, [e.mul(c, bstep) for c in cols], k0, n, out, row0,
                e.mul(cols[0], NT), first=first, c_init=corr if first else None, **tiles))
        chunk(0, u, True)
        if full > 1:
            c = amx.open_for(e, 1, full)
            chunk(e.mul(c, u), u, False)
            amx.close(e)
        if steps % u:
            chunk(full * u, steps % u, False)

    def pack(buf, rb) -> None:
        """buf [32, Kp] <- the block's A rows (zeros past K, zero rows past M)."""
        r = amx.open_for(e, 0, MB)
        row = e.add(e.mul(rb, MB), r)
        ok = e.cmpi("ult", row, m)
        e(f"scf.if {ok} {{")
        e.ind += 1
        if kpad != k:
            e(f"vector.transfer_write {zvec}, {buf}[{r}, {e.index(kpad - KSTEP)}] "
              f"{{in_bounds = [true]}} : {v64}, {buf.type}")
        full, tail = divmod(k, KSTEP)
        if full:
            c = amx.open_for(e, 0, full) if full > 1 else 0
            off = e.mul(c, KSTEP)
            v = e.read(am, [row, off], zero8, v64)
            e(f"vector.transfer_write {v}, {buf}[{r}, {e.ix(off)}] {{in_bounds = [true]}} "
              f": {v64}, {buf.type}")
            if full > 1:
                amx.close(e)
        if tail:
            mk = e.op("mk", f"vector.constant_mask [{tail}] : {vector(KSTEP, Elem.I1)}",
                      vector(KSTEP, Elem.I1))
            v = e.read(am, [row, e.index(full * KSTEP)], zero8, v64, mk)
            e(f"vector.transfer_write {v}, {buf}[{r}, {e.index(full * KSTEP)}], {mk} "
              f"{{in_bounds = [true]}} : {v64}, {buf.type}")
        e.ind -= 1
        e("} else {")
        e.ind += 1
        for c in range(kpad // KSTEP):
            e(f"vector.transfer_write {zvec}, {buf}[{r}, {e.index(c * KSTEP)}] {{in_bounds = [true]}} "
              f": {v64}, {buf.type}")
        e.ind -= 1
        e("}")
        amx.close(e)

    def packed_block(rb, g=None) -> None:
        buf = amx.alloc(e, [MB, kpad], Elem.I8, "abuf")
        pack(buf, rb)
        compute(buf, 0, e.mul(rb, MB), g)

    if direct:      # whole blocks straight from A, the last part block packed
        nfull = e.div(m, MB)
        rb, g = amx.block_forall(e, nfull, threaded, groups)
        row0 = e.mul(rb, MB)
        compute(am, row0, row0, g)
        amx.close(e)
        part = e.cmpi("ult", e.mul(nfull, MB), m)
        e(f"scf.if {part} {{")
        e.ind += 1
        packed_block(nfull)
        e.ind -= 1
        e("}")
    else:
        rb, g = amx.block_forall(e, nblk, threaded, groups)
        packed_block(rb, g)
        amx.close(e)
    res = amx.to_tensor(e, out)
    e(f"return {res} : {res.type}")
    return e.function(name, [a, bp, colsum, za], res.type)



# -- the rewrite step ----------------------------------------------------------------
def int8_amx_matmuls(module: ir.Module, target: Target, threads: bool, plan_=None) -> int:
    """Rewrite the matmuls the plan gave ``int8_amx`` (and the untagged ones:
    the im2col convs' matmuls, and every matching one for the named pass).
    Returns the count."""
    from mlir.dialects import arith, func, tensor as tensor_d
    from onnx_mlir_py.passes.optimize.kernel_plan import threaded_kernel
    from onnx_mlir_py.passes.optimize.matmul_q8 import (a_rows, add_functions, const,
                                                        planned, sizes, weights_kn, zero_point_i32)
    if not available(target):
        return 0
    funcs: dict[tuple, str] = {}
    count = 0
    i32, i8 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(8)
    for op, q, b in planned(module, "linalg.matmul", KERNEL, match, lambda q: q.b):
        with building(op):
            if q.m is not None and q.m < MIN_ROWS:
                continue            # (an untagged one) the VNNI step's
            b = weights_kn(q, b)
            npad = q.n_padded
            par = threads and threaded_kernel(*sizes(q))
            key = (q.k, npad, q.a_signed, par)
            if key not in funcs:
                funcs[key] = f"__om_q8_amx_matmul_{len(funcs)}"
                text = kernel_text(funcs[key], q.k, npad, q.a_signed, par)
                add_functions(module, ir.Module.parse("module {\n" + text + "\n}", module.context))
            colsum = b.astype(np.int32).sum(axis=0, dtype=np.int64).astype(np.int32)
            with ir.InsertionPoint(op), op.location:
                a = a_rows(q, op)
                dyn_m = ir.ShapedType.get_dynamic_size()
                call = func.CallOp([ir.RankedTensorType.get([dyn_m, npad], i32)],
                                   ir.FlatSymbolRefAttr.get(funcs[key]),
                                   [a, const(pack_b(b), i8), const(colsum, i32), zero_point_i32(q)])
                # the result has M padded to whole blocks: the first M rows, N columns
                rows = tensor_d.DimOp(a, arith.ConstantOp(ir.IndexType.get(), 0).result).result
                res = tensor_d.ExtractSliceOp(
                    ir.RankedTensorType.get([dyn_m, q.n], i32), call.results[0], [], [rows], [],
                    [0, 0], [dyn_m, q.n], [1, 1]).result
                if res.type != op.results[0].type:
                    res = tensor_d.CastOp(op.results[0].type, res).result
            op.results[0].replace_all_uses_with(res)
            op.erase()
            count += 1
    if funcs:
        # the kernels stay functions (MLIR's inliner, run here until #29,
        # left every call to them, after building the whole model's call
        # graph, and its symbol-dce found nothing); their text and the
        # calls' operands are canonicalized by -O3's canonicalize step, with
        # the module (a canonicalize and cse of the module here too: the
        # same library, #29)
        amx.mark_features(module, amx.FEATURES_INT8)
    return count
