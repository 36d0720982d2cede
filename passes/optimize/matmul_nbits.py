"""Weight-only 4/8-bit matmuls at decode shapes: the kernel plan's ``nbits_decode``.

What it rewrites: the f32 ``linalg.matmul`` (accumulating into zeros) that
MatMulNBits lowers to (``onnx_to_linalg/ms_quant_matmul.py``), whose B is the
lowering's dequantizing generic (tagged ``om.nbits`` = [bits, block_size, K,
N, zero-point form]) of constant quantized weights, scales and zero points
(none, packed uint8 or float), with bits 2, 4 or 8 and an A of a static
M <= MAX_M rows (a decode step; A's leading dims collapsed into M). A
dynamic M (a decode export's [batch, sequence, K]) is dispatched at run
time: the kernel for M = 1 when M is 1, else the dequantize-then-matmul
path (an ``scf.if``); a static M > MAX_M keeps that path (the packed f32
kernels; the plan's reason says why).

The algebra: per block b of ``bs`` k's and column n,

    Y[m, n] = sum_b  s[b, n] * sum_{k in b} A[m, k] q[k, n]  -  z[b, n] s[b, n] * asum[m, b]

with ``asum[m, b] = sum_{k in b} A[m, k]`` computed once per call (A padded
with zeros to whole blocks when K is not a multiple of the block). In f32
throughout: the same sums as (q - z) * s then A @ W, in another order
(within f32 rounding of onnxruntime's accuracy_level 0).

The weights stay at their bit width: the compile-time layout is
``[T, K'/per, nb]`` bytes (T tiles of ``nb`` columns, per = 8 / bits fields
per byte, K' = whole blocks): for each tile and byte row, the ``nb``
columns' bytes side by side, i.e. MatMulNBits' own bytes [N, K'/per]
transposed per tile (one byte of a column holds k = per * r + f in field f,
low bits first). Scales (and integer zero points as bytes, float ones as
f32) are ``[T, kb, nb]``. N is padded with zero columns (scale 0) to whole
tiles; the result is sliced back.

The kernel (per tile, an ``scf.forall`` with threads; 1..8 rows of A): per
block, per byte row, each ``lanes``-byte group is zero-extended to i32
lanes (``vpmovzxbd``), its fields shifted / masked out and converted to
f32, and multiplied into the rows' accumulators by a broadcast A[m, k]
(fma); at the block's end ``y += s * acc`` and ``y -= (z * s) * asum``.
Nothing of size [K, N] in f32 is ever written. Few rows (M <= 2) keep two
partial sums per accumulator (k even / odd) against the fma latency.
"""
from __future__ import annotations

from dataclasses import dataclass

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.dialects.onnx.opview import owner_op
from onnx_mlir_py.passes.onnx_to_linalg.ms_quant_matmul import NBITS_ATTR
from onnx_mlir_py.passes.optimize.kernel_emit import Elem, Emitter, Value, tensor, vector
from onnx_mlir_py.passes.optimize.kernel_fusion import zero_fill
from onnx_mlir_py.target import Target
from onnx_mlir_py.passes.optimize.kernel_budget import building

ENABLED = True              # False: every MatMulNBits keeps the dequantize-then-matmul path
MAX_M = 8                   # rows of A the decode kernel takes
ZP_NONE, ZP_PACKED, ZP_FLOAT = 0, 1, 2


@dataclass
class NBitsMatmul:
    """A matched MatMulNBits matmul: Y[M, N] = A[M, K] @ dequant(B)."""
    a: ir.Value                  # A, f32 [M, K] (the matmul's operand)
    m: int | None
    bits: int
    bs: int
    k: int
    n: int
    zform: int
    b: ir.Value                  # the quantized bytes (constant) [N, kb, blob]
    scales: ir.Value
    zp: ir.Value | None

    @property
    def kb(self) -> int:
        return -(-self.k // self.bs)

    @property
    def decode(self) -> bool:
        """Whether the kernel takes it: a static M <= MAX_M, or a dynamic M
        (then the M = 1 kernel, dispatched at run time)."""
        return self.m is None or 1 <= self.m <= MAX_M

    @property
    def rows(self) -> int:
        """The kernel's rows: M, or 1 for a dynamic M."""
        return 1 if self.m is None else self.m


def _constant(v: ir.Value) -> bool:
    c = owner_op(v)
    return c is not None and c.name == "arith.constant"


def match(op: ir.Operation) -> NBitsMatmul | None:
    """The MatMulNBits matmul ``op`` computes (any M; see ``decode``), or None."""
    if op.name != "linalg.matmul" or len(op.operands) != 3 or \
            op.results[0].type.element_type != ir.F32Type.get() or not zero_fill(op.operands[2]):
        return None
    g = owner_op(op.operands[1])
    if g is None or g.name != "linalg.generic" or NBITS_ATTR not in g.attributes:
        return None
    bits, bs, k, n, zform = list(ir.DenseI64ArrayAttr(g.attributes[NBITS_ATTR]))
    ins = list(g.operands)[:-1]
    if len(ins) != (2 if zform == ZP_NONE else 3) or not all(_constant(v) for v in ins):
        return None
    at = op.operands[0].type
    if at.is_dynamic_dim(1) or at.shape[1] != k or bits not in (2, 4, 8):
        return None
    m = None if at.is_dynamic_dim(0) else at.shape[0]
    return NBitsMatmul(op.operands[0], m, bits, bs, k, n, zform, ins[0], ins[1],
                       ins[2] if zform != ZP_NONE else None)


def _lanes(target: Target) -> int | None:
    return target.vector_width if target.vector_width in (8, 16) else None


def tiling(m: int) -> tuple[int, int]:
    """(vectors per tile, partial sums per accumulator) for ``m`` rows."""
    nv = 4 if m == 1 else 2 if m <= 4 else 1
    return nv, 2 if m <= 2 else 1


def _work(q: NBitsMatmul) -> tuple[int, int]:
    """(multiply-adds, bytes read and written) of one call."""
    wbytes = q.kb * q.bs * q.bits // 8 * q.n + 4 * q.kb * q.n
    return q.rows * q.k * q.n, wbytes + 4 * q.rows * (q.k + q.n)


def plan(op: ir.Operation, target: Target):
    """The kernel plan's rule: (tile, threaded, reason) or None."""
    if not ENABLED or _lanes(target) is None:
        return None
    q = match(op)
    if q is None or not q.decode:
        return None
    from onnx_mlir_py.passes.optimize.kernel_plan import _macs_str, threaded_kernel
    macs, nbytes = _work(q)
    nv, _ = tiling(q.rows)
    dyn = "" if q.m is not None else \
        " (M dynamic: this kernel when M = 1 at run time, else dequantize + matmul)"
    return (f"{q.rows}x{nv * _lanes(target)}, block {q.bs}", threaded_kernel(macs, nbytes),
            f"MatMulNBits {q.bits}-bit weights unpacked in registers, per-block sums{dyn}; "
            f"{_macs_str(macs)}")


def fallback_note(op: ir.Operation) -> str:
    """For another kernel's reason: why a MatMulNBits matmul is not ``nbits_decode``."""
    q = match(op)
    if q is None:
        return ""
    if not ENABLED:
        why = "disabled"
    elif q.decode:
        why = "not an x86 vector width"
    else:
        why = f"M = {q.m}, it takes M <= {MAX_M} (or a dynamic M, dispatched at run time)"
    return f"; MatMulNBits weights dequantized to f32 at run time (nbits_decode: {why})"


# -- compile-time layout ---------------------------------------------------------
def relayout(q: NBitsMatmul, b: np.ndarray, scales: np.ndarray, zp: np.ndarray | None,
             nb: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(bytes [T, K'/per, nb] i8, scales [T, kb, nb] f32, zero points
    [T, kb, nb] i8 / f32 or None) from MatMulNBits' B, scales, zero points."""
    n, kb, bits = q.n, q.kb, q.bits
    t = -(-n // nb)
    npad = t * nb - n

    def tiles(x: np.ndarray) -> np.ndarray:          # [N, c] -> [T, c, nb]
        x = np.concatenate([x, np.zeros((npad, x.shape[1]), x.dtype)]) if npad else x
        return np.ascontiguousarray(x.reshape(t, nb, x.shape[1]).transpose(0, 2, 1))
    w = tiles(b.view(np.uint8).reshape(n, -1))
    s = tiles(scales.astype(np.float32).reshape(n, kb))
    z = None
    if q.zform == ZP_PACKED:
        per = 8 // bits
        zb = zp.view(np.uint8).reshape(n, -1)
        blk = np.arange(kb)
        z = tiles(((zb[:, blk // per] >> ((blk % per) * bits)) & ((1 << bits) - 1))
                  .astype(np.uint8)).view(np.int8)
    elif q.zform == ZP_FLOAT:
        z = tiles(zp.astype(np.float32).reshape(n, kb))
    return w.view(np.int8), s, z


# -- the kernel function -----------------------------------------------------------
def kernel_text(name: str, q: NBitsMatmul, lanes: int, threaded: bool) -> str:
    """``func.func private @name(a: [M, K] f32, w, s[, z]) -> [M, T * nb] f32``
    (see the module docstring)."""
    m_rows, bits, bs, kb, k = q.rows, q.bits, q.bs, q.kb, q.k
    per, mask = 8 // bits, (1 << bits) - 1
    nv, chains = tiling(m_rows)
    nb = nv * lanes
    t_n = -(-q.n // nb)
    kp, rows = kb * bs, kb * bs // per
    rb = bs // per                                  # byte rows per block
    u = 2 if per == 1 else 1                        # byte rows per step
    vf, vi, vb = vector(lanes), vector(lanes, Elem.I32), vector(lanes, Elem.I8)
    e = Emitter()
    a = e.param("a", tensor([m_rows, k]))
    w = e.param("w", tensor([t_n, rows, nb], Elem.I8))
    s = e.param("s", tensor([t_n, kb, nb]))
    params = [a, w, s]
    z = None
    if q.zform != ZP_NONE:
        z = e.param("z", tensor([t_n, kb, nb], Elem.I8 if q.zform == ZP_PACKED else Elem.F32))
        params.append(z)
    out_t = tensor([m_rows, t_n * nb])
    zf = e.f32(0.0)
    zero8 = e.const("0", vb.scalar)
    zero = e.splat_const("0.0", vf)
    if kp != k:
        a = e.pad(a, [0, kp - k], [m_rows, kp], zf)
    # asum[m, b]: the sums of A over each block
    asum = e.empty([m_rows, kb])
    mi, (at,), (ar,) = e.loop(0, m_rows, 1, [asum], base="asum")
    bi, (bt,), (br,) = e.loop(0, kb, 1, [at], base="asumb")
    k0 = e.mul(bi, bs)
    parts = [e.read(a, [mi, e.add(k0, j * lanes)], zf, vf) for j in range(bs // lanes)]
    while len(parts) > 1:
        parts = [e.binary("arith.addf", parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)] \
            + ([parts[-1]] if len(parts) % 2 else [])
    red = e.reduction("add", parts[0])
    e.end([e.op("ins", f"tensor.insert {red} into {bt}[{mi}, {bi}] : {bt.type}", bt.type)])
    e.end([br])
    asum = ar
    tile_i, tile, res, close = column_tiles(e, e.empty([m_rows, t_n * nb]), t_n, nb, threaded)
    n_acc = m_rows * nv
    blk, ys, yr = e.loop(0, kb, 1, [zero] * n_acc, base="blk")
    r0 = e.mul(blk, rb)
    r, accs, accr = e.loop(r0, e.add(r0, rb), u, [zero] * (n_acc * chains), base="row")
    new = list(accs)
    for du in range(u):
        ru = e.add(r, du)
        kr = e.mul(ru, per)
        fields = []                                  # per j: the `per` f32 vectors
        for j in range(nv):
            v = e.cast("arith.extui", e.read(w, [tile_i, ru, j * lanes], zero8, vb), vi)
            fs = []
            for f in range(per):
                x = v if f == 0 else e.binary("arith.shrui", v,
                                              e.splat_const(str(f * bits), vi))
                if f < per - 1:
                    x = e.binary("arith.andi", x, e.splat_const(str(mask), vi))
                fs.append(e.cast("arith.sitofp", x, vf))
            fields.append(fs)
        for m in range(m_rows):
            for f in range(per):
                ab = e.broadcast(e.extract(a, [m, e.add(kr, f)]), vf)
                c = (du * per + f) % chains
                for j in range(nv):
                    i = c * n_acc + m * nv + j
                    new[i] = e.fma(ab, fields[j][f], new[i])
    e.end(new)
    sv = [e.read(s, [tile_i, blk, j * lanes], zf, vf) for j in range(nv)]
    if q.zform == ZP_NONE:
        zv = [e.splat_const(f"{float(1 << (bits - 1))}", vf)] * nv
    elif q.zform == ZP_PACKED:
        zv = [e.cast("arith.sitofp", e.cast("arith.extui", e.read(z, [tile_i, blk, j * lanes],
                                                                  zero8, vb), vi), vf)
              for j in range(nv)]
    else:
        zv = [e.read(z, [tile_i, blk, j * lanes], zf, vf) for j in range(nv)]
    zs = [e.binary("arith.mulf", zv[j], sv[j]) for j in range(nv)]
    new_y = []
    for m in range(m_rows):
        nsum = e.broadcast(e.op("neg", f"arith.negf {e.extract(asum, [m, blk])} : f32",
                                vf.scalar), vf)
        for j in range(nv):
            i = m * nv + j
            acc = accr[i]
            for c in range(1, chains):
                acc = e.binary("arith.addf", acc, accr[c * n_acc + i])
            new_y.append(e.fma(zs[j], nsum, e.fma(sv[j], acc, ys[i])))
    e.end(new_y)
    for m in range(m_rows):
        for j in range(nv):
            tile = e.write(yr[m * nv + j], tile, [m, j * lanes])
    close(tile)
    e(f"return {res} : {out_t}")
    return e.function(name, params, out_t)


def column_tiles(e: Emitter, out: Value, count: int, width: int, threaded: bool):
    """Open a loop over ``count`` tiles of ``width`` columns of the 2-D
    ``out`` (an ``scf.forall`` when ``threaded``); returns (tile index, the
    tile's slice, the loop's result, ``close(tile)``, which writes the
    finished tile back and ends the loop). (matmul_q8's kernel has the same
    loop: a candidate for kernel_emit.)"""
    rows = out.type.shape[0]
    if threaded:
        i, src, res = e.forall(count, out)
    else:
        i, (src,), (res,) = e.loop(0, count, 1, [out])
    col = e.mul(i, width)

    def close(tile: Value) -> None:
        if threaded:
            e.end_forall(tile, src, [0, col], [rows, width])
        else:
            e.end([e.insert_slice(tile, src, [0, col], [rows, width])])
    return i, e.extract_slice(src, [0, col], [rows, width]), res, close


def _dispatch(op: ir.Operation, q: NBitsMatmul, kernel_call) -> ir.Value:
    """For a dynamic M, at the current insertion point: ``scf.if M == 1``
    the kernel (A cast to [1, K]), else a copy of the dequantizing generic
    and of ``op`` (tagged for no kernel: the packed kernels take it)."""
    from mlir.dialects import arith, scf, tensor as tensor_d
    from onnx_mlir_py.passes.optimize.kernel_plan import KERNEL_ATTR
    idx = ir.IndexType.get()
    m = tensor_d.DimOp(q.a, arith.ConstantOp(idx, 0).result).result
    one = arith.CmpIOp(arith.CmpIPredicate.eq, m, arith.ConstantOp(idx, 1).result).result
    rt = op.results[0].type
    branch = scf.IfOp(one, [rt], has_else=True)
    with ir.InsertionPoint(branch.then_block):
        a1 = tensor_d.CastOp(ir.RankedTensorType.get([1, q.k], ir.F32Type.get()), q.a).result
        scf.YieldOp([tensor_d.CastOp(rt, kernel_call(a1)).result])
    with ir.InsertionPoint(branch.else_block):
        w = owner_op(op.operands[1]).clone(ir.InsertionPoint.current)
        mm = op.clone(ir.InsertionPoint.current)
        mm.operands[1] = w.results[0]
        mm.attributes[KERNEL_ATTR] = ir.StringAttr.get("linalg")
        scf.YieldOp([mm.results[0]])
    return branch.results[0]


# -- the rewrite step ----------------------------------------------------------------
def nbits_decodes(module: ir.Module, target: Target, threads: bool, plan_=None) -> int:
    """Rewrite the matmuls the plan gave ``nbits_decode`` (all matching
    decode ones without a plan tag, for the named pass). Returns the count."""
    from mlir.dialects import arith, func, tensor as tensor_d
    from mlir.passmanager import PassManager
    from onnx_mlir_py.passes.optimize.kernel_plan import threaded_kernel
    from onnx_mlir_py.passes.optimize.matmul_q8 import add_functions, planned
    from onnx_mlir_py.passes.optimize.packs import _const_value
    lanes = _lanes(target)
    if not ENABLED or lanes is None:
        return 0

    def decode(op):
        q = match(op)
        return q if q is not None and q.decode else None
    funcs: dict[tuple, str] = {}
    count, blobs = 0, {}
    f32 = ir.F32Type.get()
    for op, q, b in planned(module, "linalg.matmul", "nbits_decode", decode, lambda q: q.b):
        with building(op):
            sc = _const_value(owner_op(q.scales), blobs)
            zp = None if q.zp is None else _const_value(owner_op(q.zp), blobs)
            if sc is None or (q.zp is not None and zp is None):
                continue
            nv, _ = tiling(q.rows)
            nb = nv * lanes
            par = threads and threaded_kernel(*_work(q))
            key = (q.rows, q.k, q.n, q.bits, q.bs, q.zform, par)
            if key not in funcs:
                funcs[key] = f"__om_nbits_decode_{len(funcs)}"
                sub = ir.Module.parse("module {\n" + kernel_text(funcs[key], q, lanes, par) + "\n}",
                                      module.context)
                add_functions(module, sub)
            w, s, z = relayout(q, b, sc, zp, nb)
            with ir.InsertionPoint(op), op.location:
                def const(arr):
                    et = f32 if arr.dtype == np.float32 else ir.IntegerType.get_signless(8)
                    t = ir.RankedTensorType.get(list(arr.shape), et)
                    return arith.ConstantOp(t, ir.DenseElementsAttr.get(arr, type=t)).result
                consts = [const(w), const(s)] + ([const(z)] if z is not None else [])

                def kernel_call(a):
                    ncols = w.shape[0] * nb
                    res = func.CallOp([ir.RankedTensorType.get([q.rows, ncols], f32)],
                                      ir.FlatSymbolRefAttr.get(funcs[key]), [a] + consts).results[0]
                    if ncols != q.n:
                        res = tensor_d.ExtractSliceOp(
                            ir.RankedTensorType.get([q.rows, q.n], f32), res, [], [], [],
                            ir.DenseI64ArrayAttr.get([0, 0]), ir.DenseI64ArrayAttr.get([q.rows, q.n]),
                            ir.DenseI64ArrayAttr.get([1, 1])).result
                    return res
                res = kernel_call(q.a) if q.m is not None else _dispatch(op, q, kernel_call)
            op.results[0].replace_all_uses_with(res)
            op.erase()
            count += 1
    if funcs:
        PassManager.parse("builtin.module(inline, symbol-dce, canonicalize, cse)",
                          module.context).run(module.operation)
    return count
