"""int8 matmuls on AVX-512 VNNI: the kernel plan's ``int8_vnni`` kernel.

What it rewrites: a ``linalg.matmul`` (i32, accumulating into zeros) whose
A is an 8-bit tensor widened to i32, minus a per-tensor zero point, and
whose B is a constant signed 8-bit matrix widened to i32 (no zero point, or
a constant zero):
what ``integer_ops`` lowers MatMulInteger and QLinearMatMul to (an N-D A
times a 2-D B has its leading dims collapsed into M), and DynamicQuantize-
MatMul / MatMulIntegerToFloat, which build on them. K and N static, N a
multiple of 16; M may be dynamic. The contraction becomes a call of a
kernel function whose inner step is ``vpdpbusd`` (unsigned bytes times
signed bytes, four products summed into each i32 lane).

The algebra (exact in i32, as the generic lowering is)::

    sum_k (a - za) * b = sum_k a' * b  +  base[n] - za * colsum[n]

with ``a' = a`` for unsigned A and ``a' = a xor 0x80 = a + 128`` for signed A
(so ``vpdpbusd`` can read it as unsigned; then ``base = -128 * colsum``, else
0). ``colsum`` and ``base`` are computed at compile time from B, which is
packed once, at compile time too, as ``[N/nb, ceil(K/4), nb * 4]``: for each
block of ``nb`` columns and each group of 4 k, the 4 bytes of each column
side by side, i.e. one ``vector<64xi8>`` per 16 columns. K is padded with
zero rows (A is read past K as zeros, which then multiply zeros).

The kernel: per column block (an ``scf.forall`` with threads), rows in
register tiles of ``mb`` rows x ``nb`` columns (``mb * nb / 16``
accumulators), then single rows; per k group, 4 bytes of each row are
broadcast to all lanes and multiplied into the block's B vectors. The
result is the i32 matrix the matmul produced; requantization, scales and
bias stay the elementwise ops after it (fused and vectorized as usual).

Measured on an AMD Zen 4 (1 thread; 256 x 1024 x 256 u8 x s8): 400-425 GOPS
with 8 x 32 (onnxruntime's MatMulInteger 384-410 GOPS); the f32 peak is 118
GFLOPS.
"""
from __future__ import annotations

from dataclasses import dataclass

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.dialects.onnx.opview import owner_op
from onnx_mlir_py.passes.optimize.kernel_emit import Elem, Emitter, Kind, Type, Value, tensor, vector
from onnx_mlir_py.target import Target
from onnx_mlir_py.passes.optimize.kernel_budget import building

VNNI = "llvm.x86.avx512.vpdpbusd.512"
# Until bufferization the kernels call this function instead of the
# intrinsic (buffer deallocation refuses ops of unknown memory effects, as
# llvm.call_intrinsic is); its body is the instruction's meaning in pure
# vector ops, and lower_dpbusd_calls swaps each call for the intrinsic.
DPBUSD = "__om_vnni_dpbusd"
DPBUSD_TEXT = f"""  func.func private @{DPBUSD}(%acc: vector<16xi32>, %a: vector<64xi8>, %b: vector<64xi8>)
      -> vector<16xi32> {{
    %a32 = arith.extui %a : vector<64xi8> to vector<64xi32>
    %b32 = arith.extsi %b : vector<64xi8> to vector<64xi32>
    %p = arith.muli %a32, %b32 : vector<64xi32>
    %p4 = vector.shape_cast %p : vector<64xi32> to vector<16x4xi32>
    %r = vector.multi_reduction <add>, %p4, %acc [1] : vector<16x4xi32> to vector<16xi32>
    return %r : vector<16xi32>
  }}"""
# module attribute: the CPU features (llc names) the kernels used (compiler.used_features)
FEATURES_ATTR = "om.cpu_features"
LANES = 16                    # i32 lanes of a zmm register
ROW_TILE = {32: 8, 16: 12}    # nb -> mb: 16 / 12 accumulators (Zen 4: 8x32 400+ GOPS)
Type_I32 = Type(Kind.SCALAR, Elem.I32)
Type_I8 = Type(Kind.SCALAR, Elem.I8)


@dataclass
class Q8Matmul:
    """A matched int8 matmul: C[M, N] = (A - za) @ B."""
    a: ir.Value                 # the i8 tensor A is widened from
    reassoc: list | None        # collapse of A's leading dims into M, or None
    a_signed: bool
    za: ir.Value | None         # A's per-tensor zero point (an i8 tensor of one element)
    za_signed: bool
    b: ir.Value                 # the constant i8 [K, N] ([N, K] when b_transposed)
    m: int | None
    k: int
    n: int
    b_transposed: bool = False  # B is linalg.transpose of the widened constant (QGemm transB=1)

    @property
    def n_padded(self) -> int:
        """N rounded up to whole 16-column vectors (the kernel's columns;
        the extra ones are zero columns of B, sliced off the result)."""
        return -(-self.n // LANES) * LANES

    @property
    def nb(self) -> int:
        return 32 if self.n_padded % 32 == 0 else 16


def _body_ops(generic: ir.Operation) -> list[ir.Operation]:
    return list(generic.regions[0].blocks[0].operations)


def _is_identity(m: ir.AffineMap) -> bool:
    return m == ir.AffineMap.get_identity(m.n_dims)


def _one_element(t: ir.Type) -> bool:
    return isinstance(t, ir.RankedTensorType) and t.has_static_shape and \
        int(np.prod(t.shape)) == 1


def _widened(v: ir.Value, per_tensor: bool = True):
    """(i8 source, signed, zero point or None, zero point signed) when ``v``
    is an all-parallel generic computing ``ext(x)`` or ``ext(x) - ext(z)``
    (z one element, read at a constant index; any z with ``per_tensor``
    False, for a caller that requires it to be a constant zero), else None."""
    g = owner_op(v)
    if g is None or g.name != "linalg.generic" or len(g.results) != 1 or len(g.operands) not in (2, 3):
        return None
    ins = list(g.operands)[:-1]
    src = ins[0]
    st = src.type
    if not (isinstance(st, ir.RankedTensorType) and isinstance(st.element_type, ir.IntegerType)
            and st.element_type.width == 8):
        return None
    if any(str(x) != "#linalg.iterator_type<parallel>"
           for x in ir.ArrayAttr(g.attributes["iterator_types"])):
        return None
    maps = [ir.AffineMapAttr(x).value for x in ir.ArrayAttr(g.attributes["indexing_maps"])]
    if not (_is_identity(maps[0]) and _is_identity(maps[-1])):
        return None
    ops = _body_ops(g)
    args = list(g.regions[0].blocks[0].arguments)
    exts = {}
    for o in ops[:-1]:
        if o.name in ("arith.extui", "arith.extsi"):
            exts[o.operands[0]] = o
    if len(ins) == 1:
        if len(ops) != 2 or ops[0].name not in ("arith.extui", "arith.extsi") or \
                ops[0].operands[0] != args[0] or ops[1].operands[0] != ops[0].results[0]:
            return None
        return src, ops[0].name == "arith.extsi", None, False
    z = ins[1]
    if per_tensor and (not _one_element(z.type) or not all(isinstance(r, ir.AffineConstantExpr)
                                                           for r in maps[1].results)):
        return None
    if len(ops) != 4 or args[0] not in exts or args[1] not in exts:
        return None
    sub = ops[2]
    ea, ez = exts[args[0]], exts[args[1]]
    if sub.name != "arith.subi" or sub.operands[0] != ea.results[0] or \
            sub.operands[1] != ez.results[0] or ops[3].operands[0] != sub.results[0]:
        return None
    return src, ea.name == "arith.extsi", z, ez.name == "arith.extsi"


def _zero_constant(v: ir.Value) -> bool:
    """``v`` is a constant whose elements are all 0 (a zero point of 0; a
    per-channel one of more than 1024 values is a dense_resource)."""
    from onnx_mlir_py.passes.optimize.value_reads import test
    c = owner_op(v)
    if c is None or c.name != "arith.constant":
        return False
    return test(c, "zero")


def _zero_fill(v: ir.Value) -> bool:
    f = owner_op(v)
    if f is None or f.name != "linalg.fill":
        return False
    c = owner_op(f.operands[0])
    return c is not None and c.name == "arith.constant" and \
        ir.IntegerAttr(c.attributes["value"]).value == 0


def i32_into_zeros(op: ir.Operation, name: str) -> bool:
    """``op`` is a ``name`` op (ins, out) with an i32 result accumulating into
    a zero fill: the contraction the int8 kernels replace."""
    if op.name != name or len(op.operands) != 3:
        return False
    et = op.results[0].type.element_type
    return isinstance(et, ir.IntegerType) and et.width == 32 and _zero_fill(op.operands[2])


def match(op: ir.Operation) -> Q8Matmul | None:
    """The int8 matmul ``op`` computes (see the module docstring), or None."""
    if not i32_into_zeros(op, "linalg.matmul"):
        return None
    a32, reassoc = op.operands[0], None
    c = owner_op(a32)
    if c is not None and c.name == "tensor.collapse_shape":
        reassoc = [[ir.IntegerAttr(i).value for i in ir.ArrayAttr(g)]
                   for g in ir.ArrayAttr(c.attributes["reassociation"])]
        a32 = c.operands[0]
    b32, b_t = op.operands[1], False
    t = owner_op(b32)
    if t is not None and t.name == "linalg.transpose" and \
            list(ir.DenseI64ArrayAttr(t.attributes["permutation"])) == [1, 0]:
        b32, b_t = t.operands[0], True          # B = W^T (QGemm / Gemm transB): packed from W
    wa, wb = _widened(a32), _widened(b32, per_tensor=False)
    if wa is None or wb is None:
        return None
    b, b_signed, zb, _ = wb
    cb = owner_op(b)
    if not b_signed or (zb is not None and not _zero_constant(zb)) or cb is None or \
            cb.name != "arith.constant":
        return None
    bt, at = b.type, op.operands[0].type
    if not bt.has_static_shape:
        return None
    k, n = bt.shape[::-1] if b_t else bt.shape
    if at.is_dynamic_dim(1) or at.shape[1] != k:
        return None
    if k == 0 or n == 0:
        return None
    m = None if at.is_dynamic_dim(0) else at.shape[0]
    return Q8Matmul(wa[0], reassoc, wa[1], wa[2], wa[3], b, m, k, n, b_t)


def plan(op: ir.Operation, target: Target):
    """The kernel plan's rule: (tile, threaded, reason) or None."""
    if not target.vnni or target.vector_width != LANES:
        return None
    q = match(op)
    if q is None:
        return None
    from onnx_mlir_py.passes.optimize.kernel_plan import _macs_str, threaded_kernel
    macs = None if q.m is None else q.m * q.k * q.n
    nbytes = None if q.m is None else q.m * q.k + q.k * q.n + 4 * q.m * q.n
    sign = "s8" if q.a_signed else "u8"
    return (f"{ROW_TILE[q.nb]}x{q.nb}, k 4", threaded_kernel(macs, nbytes),
            f"int8 matmul: {sign} x s8 -> i32, vpdpbusd; {_macs_str(macs)}")


# -- compile-time weights -------------------------------------------------------
def pack_b(b: np.ndarray, nb: int, group: int = 4) -> np.ndarray:
    """B [K, N] int8 -> [N/nb, ceil(K/4), nb*4]: per column block and k group
    of 4, each column's 4 bytes side by side (K padded with zeros). Also the
    bf16 kernels' pairs (matmul_bf16.py: ``group`` 2, B's uint16 bits)."""
    k, n = b.shape
    kq = -(-k // group)
    bp = np.zeros((kq * group, n), b.dtype)
    bp[:k] = b
    return np.ascontiguousarray(
        bp.reshape(kq, group, n // nb, nb).transpose(2, 0, 3, 1).reshape(n // nb, kq, nb * group))


# -- the kernel function -----------------------------------------------------------
def kernel_text(name: str, k: int, n: int, nb: int, a_signed: bool, threaded: bool) -> str:
    """``func.func private @name(a: [?, K] i8, bp, base: [N] i32, colsum: [N] i32,
    za: i32) -> [?, N] i32`` (see the module docstring)."""
    mb, nv, kq, no = ROW_TILE[nb], nb // LANES, -(-k // 4), n // nb
    e = Emitter()
    v16, v64, v4 = vector(LANES, Elem.I32), vector(4 * LANES, Elem.I8), vector(4, Elem.I8)
    a = e.param("a", tensor([None, k], Elem.I8))
    bp = e.param("bp", tensor([no, kq, nb * 4], Elem.I8))
    base = e.param("base", tensor([n], Elem.I32))
    colsum = e.param("colsum", tensor([n], Elem.I32))
    za = e.param("za", Type_I32)
    out_t = tensor([None, n], Elem.I32)
    zero8 = e.const("0", Type_I8)
    flip = e.splat_const(str(-0x7f7f7f80), v16)          # 0x80808080: s8 -> u8 + 128
    m = e.dim(a, 0)
    mfull = e.mul(e.div(m, mb), mb)
    out = e.empty([m, n], elem=Elem.I32)
    if threaded:
        blk, tile_src, res = e.forall(no, out)
    else:
        blk, (tile_src,), (res,) = e.loop(0, no, 1, [out])
    col = e.mul(blk, nb)
    tile = e.extract_slice(tile_src, [0, col], [m, nb])
    zav = e.broadcast(za, v16)
    init = []
    for j in range(nv):
        c = e.add(col, j * LANES)
        bv = e.read(base, [c], e.const("0", Type_I32), v16)
        cs = e.read(colsum, [c], e.const("0", Type_I32), v16)
        init.append(e.binary("arith.subi", bv, e.binary("arith.muli", zav, cs)))
    in_bounds = k % 4 == 0

    zero32 = e.splat_const("0", v16)

    def rows(lo, hi, r: int, t: Value) -> Value:
        """Rows lo..hi of the tile in steps of ``r``: the r x nb register
        tile. Fewer than mb rows (the tails: 4-row tiles, then single rows;
        all of a decode step's M = 1..8) have too few accumulators to hide
        vpdpbusd's latency: their k loop runs ``ku`` k-groups per step into
        ``ku`` partial sums, added at the end."""
        want = 1 if r >= 8 else 2 if r >= 4 else 4
        ku = next(u for u in (4, 2, 1) if u <= want and kq % u == 0)
        m0, (tt,), (rt,) = e.loop(lo, hi, r, [t], base="rows")
        sets = init * r + [zero32] * (r * nv * (ku - 1))
        kk, accs, racc = e.loop(0, kq, ku, sets, base="kq")
        new = list(accs)
        for u in range(ku):
            ku_k = e.add(kk, u)
            bvs = [e.read(bp, [blk, ku_k, j * 4 * LANES], zero8, v64) for j in range(nv)]
            k4 = e.mul(ku_k, 4)
            for i in range(r):
                av = e.read(a, [e.add(m0, i), k4], zero8, v4,
                            in_bounds=True if in_bounds else False)
                a1 = e.cast("vector.bitcast", av, vector(1, Elem.I32))
                s = e.op("as", f"vector.extract {a1}[0] : i32 from {a1.type}", Type_I32)
                ab = e.broadcast(s, v16)
                if a_signed:
                    ab = e.binary("arith.xori", ab, flip)
                ab8 = e.cast("vector.bitcast", ab, v64)
                for j in range(nv):
                    k = u * r * nv + i * nv + j
                    new[k] = e.op("acc", f"func.call @{DPBUSD}({new[k]}, {ab8}, {bvs[j]}) "
                                         f"{{no_inline}} : ({v16}, {v64}, {v64}) -> {v16}", v16)
        e.end(new)
        for i in range(r):
            for j in range(nv):
                v = racc[i * nv + j]
                for u in range(1, ku):
                    v = e.binary("arith.addi", v, racc[u * r * nv + i * nv + j])
                tt = e.write(v, tt, [e.add(m0, i), j * LANES])
        e.end([tt])
        return rt

    end_column_block(e, rows, tile, tile_src, m, mfull, mb, col, nb, threaded)
    e(f"return {res} : {out_t}")
    return e.function(name, [a, bp, base, colsum, za], out_t)


def end_column_block(e: Emitter, rows, tile: Value, tile_src: Value, m, mfull, mb: int, col,
                     nb: int, threaded: bool) -> None:
    """A column block's rows (``rows(lo, hi, r, tile) -> tile``): ``mb``-row
    register tiles up to ``mfull``, 4-row tiles, single rows; then the block
    written into the result (the forall's parallel insert, or the loop's
    yield). Also the bf16 kernels' (matmul_bf16.py)."""
    tile = rows(0, mfull, mb, tile)
    m4 = e.add(mfull, e.mul(e.div(e.sub(m, mfull), 4), 4))     # then 4-row tiles
    tile = rows(mfull, m4, 4, tile)
    tile = rows(m4, m, 1, tile)
    if threaded:
        e.end_forall(tile, tile_src, [0, col], [m, nb])
    else:
        e.end([e.insert_slice(tile, tile_src, [0, col], [m, nb])])


# -- the rewrite step ----------------------------------------------------------------
def int8_matmuls(module: ir.Module, target: Target, threads: bool, plan_=None) -> int:
    """Rewrite the matmuls the plan gave ``int8_vnni`` (all matching ones
    without a plan tag, for the named pass). Returns the count."""
    from mlir.dialects import arith, func, tensor as tensor_d
    from onnx_mlir_py.passes.optimize.kernel_plan import threaded_kernel
    if not target.vnni or target.vector_width != LANES:
        return 0
    funcs: dict[tuple, str] = {}
    texts: list[str] = []
    calls: list = []
    count = 0
    i32, i8 = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(8)
    for op, q, b in planned(module, "linalg.matmul", "int8_vnni", match, lambda q: q.b):
        with building(op):
            b = weights_kn(q, b)
            npad = q.n_padded
            nb = q.nb
            par = threads and threaded_kernel(*sizes(q))
            key = (q.k, npad, nb, q.a_signed, par)
            if key not in funcs:
                funcs[key] = f"__om_q8_matmul_{len(funcs)}"
                texts.append(kernel_text(funcs[key], q.k, npad, nb, q.a_signed, par))
            colsum = b.astype(np.int32).sum(axis=0, dtype=np.int64).astype(np.int32)
            base = (-128 * colsum if q.a_signed else np.zeros_like(colsum)).astype(np.int32)
            with ir.InsertionPoint(op), op.location:
                a = a_rows(q, op)
                bp = const(pack_b(b, nb), i8)
                dyn_m = ir.ShapedType.get_dynamic_size()
                call = func.CallOp([ir.RankedTensorType.get([dyn_m, npad], i32)],
                                   ir.FlatSymbolRefAttr.get(funcs[key]),
                                   [a, bp, const(base, i32), const(colsum, i32), zero_point_i32(q)])
                calls.append(call.operation)
                res = call.results[0]
                if npad != q.n:
                    rows = tensor_d.DimOp(res, arith.ConstantOp(ir.IndexType.get(), 0).result).result
                    res = tensor_d.ExtractSliceOp(
                        ir.RankedTensorType.get([dyn_m, q.n], i32), res, [], [rows], [],
                        [0, 0], [dyn_m, q.n], [1, 1]).result
                if res.type != op.results[0].type:
                    res = tensor_d.CastOp(op.results[0].type, res).result
            op.results[0].replace_all_uses_with(res)
            op.erase()
            count += 1
    if funcs:
        # every kernel parsed at once (with the VNNI placeholder, which
        # stays a function until lower_dpbusd_calls), its calls inlined by
        # moving its body (conv_q8._inline: not the inliner's call graph of
        # the whole model and a symbol-dce of it, #29). Not canonicalized
        # here: -O3's canonicalize step does it with the whole module (a
        # canonicalize and cse of the module here too was 0.3 s of QDQ
        # ResNet-50's compile, its library the same without it, #29)
        from onnx_mlir_py.passes.optimize.conv_q8 import _inline
        sub = ir.Module.parse("module {\n" + "\n".join(texts) + "\n" + DPBUSD_TEXT + "\n}",
                              module.context)
        _inline(sub, calls, call_sites=True)
        add_functions(module, sub)      # the VNNI placeholder
        mark_vnni(module)
    return count


# -- what the int8 matmul rewrites (VNNI here, AMX in matmul_q8_amx) share -----
def weights_kn(q, b: np.ndarray) -> np.ndarray:
    """The constant weights as [K, N'] (transposed if the matmul reads B^T),
    with zero columns up to ``q.n_padded`` (a 1000-class head)."""
    if q.b_transposed:
        b = np.ascontiguousarray(b.T)
    if q.n_padded != q.n:
        b = np.concatenate([b, np.zeros((q.k, q.n_padded - q.n), np.int8)], axis=1)
    return b


def sizes(q) -> tuple:
    """(MACs, bytes touched) of the matmul, None when M is dynamic (threaded_kernel's)."""
    if q.m is None:
        return None, None
    return q.m * q.k * q.n, q.m * q.k + q.k * q.n + 4 * q.m * q.n


def a_rows(q, op: ir.Operation) -> ir.Value:
    """The 8-bit A operand as the kernels' ``[?, K]`` (collapsed from the
    matmul's view when ``q.reassoc``), built before ``op``."""
    from mlir.dialects import tensor as tensor_d
    i8 = ir.IntegerType.get_signless(8)
    a = q.a
    if q.reassoc is not None:
        at = op.operands[0].type
        a = tensor_d.CollapseShapeOp(ir.RankedTensorType.get(list(at.shape), i8), a,
                                     ir.ArrayAttr.get([ir.ArrayAttr.get(
                                         [ir.IntegerAttr.get(ir.IntegerType.get_signless(64), i)
                                          for i in g]) for g in q.reassoc])).result
    dyn = ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size(), q.k], i8)
    if a.type != dyn:
        a = tensor_d.CastOp(dyn, a).result
    return a


def const(arr: np.ndarray, et: ir.Type) -> ir.Value:
    """An ``arith.constant`` of ``arr`` with element type ``et``."""
    from mlir.dialects import arith
    t = ir.RankedTensorType.get(list(arr.shape), et)
    return arith.ConstantOp(t, ir.DenseElementsAttr.get(arr, type=t)).result


def zero_point_i32(q) -> ir.Value:
    """A's zero point widened to i32 (sign- or zero-extended as its type)."""
    from mlir.dialects import arith
    i32 = ir.IntegerType.get_signless(32)
    z8 = zero_point_byte(q.za)
    return arith.ExtSIOp(i32, z8).result if q.za_signed else arith.ExtUIOp(i32, z8).result


def planned(module: ir.Module, op_name: str, kernel: str, match_, weights):
    """(op, match, int8 numpy weights) for each ``op_name`` the plan gave
    ``kernel`` (every untagged one, for the named pass) that ``match_``
    takes and whose constant ``weights(match)`` can be read."""
    from onnx_mlir_py.passes.optimize.kernel_plan import KERNEL_ATTR, assigned
    from onnx_mlir_py.passes.optimize.packs import _const_value
    blobs: dict = {}
    for op in walk_ops(module.operation, op_name):
        if KERNEL_ATTR in op.attributes and not assigned(op, kernel):
            continue
        q = match_(op)
        if q is None:
            continue
        w = _const_value(owner_op(weights(q)), blobs)
        if w is not None:
            yield op, q, w.astype(np.int8, copy=False)


def zero_point_byte(zp: ir.Value | None) -> ir.Value:
    """The i8 scalar of a one-element zero-point tensor (0 when absent), at
    the current insertion point."""
    from mlir.dialects import arith, tensor as tensor_d
    i8 = ir.IntegerType.get_signless(8)
    if zp is None:
        return arith.ConstantOp(i8, 0).result
    idx = [arith.ConstantOp(ir.IndexType.get(), 0).result] * zp.type.rank
    return tensor_d.ExtractOp(zp, idx).result


def add_functions(module: ir.Module, sub: ir.Module) -> None:
    """Clone the functions of ``sub`` into ``module``, except those whose
    name it has (the VNNI placeholder, declared with every kernel's text)."""
    have = {ir.StringAttr(o.operation.attributes["sym_name"]).value
            for o in module.body.operations if o.operation.name == "func.func"}
    for o in sub.body.operations:
        if ir.StringAttr(o.operation.attributes["sym_name"]).value not in have:
            o.operation.clone(ir.InsertionPoint(module.body))


def mark_vnni(module: ir.Module) -> None:
    """Record that the module's kernels use VNNI (see FEATURES_ATTR; added
    to what is there, e.g. the AMX-INT8 kernels' features)."""
    from onnx_mlir_py.passes.optimize.amx_tiles import mark_features
    mark_features(module, ("avx512vnni",))


def lower_dpbusd_calls(module: ir.Module) -> int:
    """After bufferization: each call of the DPBUSD placeholder -> the VNNI
    intrinsic (``vpdpbusd``), and the placeholder function is dropped."""
    calls = [op for op in walk_ops(module.operation, "func.call")
             if ir.FlatSymbolRefAttr(op.attributes["callee"]).value == DPBUSD]
    with module.context:
        for op in calls:
            with ir.InsertionPoint(op), op.location:
                new = ir.Operation.create(
                    "llvm.call_intrinsic", results=[op.results[0].type], operands=list(op.operands),
                    attributes={"intrin": ir.StringAttr.get(VNNI),
                                "op_bundle_sizes": ir.DenseI32ArrayAttr.get([]),
                                "operandSegmentSizes": ir.DenseI32ArrayAttr.get([3, 0])})
            op.results[0].replace_all_uses_with(new.results[0])
            op.erase()
        for f in list(module.body.operations):
            f = f.operation
            if f.name == "func.func" and ir.StringAttr(f.attributes["sym_name"]).value == DPBUSD:
                f.erase()
    return len(calls)
