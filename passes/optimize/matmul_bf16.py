"""bf16 matmuls on AVX512-BF16: the kernel plan's ``packed_matmul_bf16`` kernel.

What it rewrites: the contraction of the bf16 precision mode (``--precision
bf16``): a ``linalg.matmul`` whose inputs are bf16 (A: any bf16 tensor, the
``arith.truncf`` of the f32 activations; B: a constant, or the
``linalg.transpose`` of one) and whose output is f32, accumulating into a
zero fill. K and N static; M may be dynamic. It becomes a call of a kernel
function whose inner step is ``vdpbf16ps`` (``x86vector.avx512.dot``,
lowered by ``convert-vector-to-llvm{enable-x86vector}``): 32 bf16 products,
the two of each k pair summed into each of 16 f32 lanes, so twice the
multiply-adds of an f32 FMA per instruction.

B is packed at compile time as ``[N/nb, ceil(K/2), nb * 2]`` bf16 (the k pairs
of each column side by side: one ``vector<32xbf16>`` per 16 columns and k
pair; :func:`.matmul_q8.pack_b` with groups of 2); N is padded with zero
columns to whole vectors (sliced off the result), an odd K with a zero row
(A's last pair is then read with a zero past K). The kernel: per column block
(an ``scf.forall`` with threads), rows in register tiles of ``mb`` rows x
``nb`` columns, then 4-row tiles and single rows; per k pair, the two bf16 of
each row are broadcast to all lanes as one 32-bit value.

Numerics: the products of bf16 values are exact in f32; vdpbf16ps adds them
into the accumulator with round to nearest even, treating denormal inputs
and outputs as zero (Intel SDM, VDPBF16PS: DAZ/FTZ regardless of MXCSR). So
results match an f32 accumulation of the bf16-rounded inputs to f32
rounding error (not bit-exactly: the order of the additions differs).
"""
from __future__ import annotations

from dataclasses import dataclass

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.dialects.onnx.opview import owner_op
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.optimize.kernel_emit import Elem, Emitter, Kind, Type, tensor, vector
from onnx_mlir_py.target import Target

LANES = 16                    # f32 lanes of a zmm register
ROW_TILE = {32: 8, 16: 12}    # nb -> mb: 16 / 12 accumulators (vdpbf16ps: ~6 cycles latency)
FEATURE = "avx512bf16"        # the llc feature the kernels use (compiler.used_features)
KERNEL = "packed_matmul_bf16"
BF16 = Type(Kind.SCALAR, Elem.BF16)


@dataclass
class Bf16Matmul:
    """A matched bf16 matmul: C[M, N] (f32) = A[M, K] (bf16) @ B[K, N] (bf16 constant)."""
    a: ir.Value
    b: ir.Value                 # the constant bf16 [K, N] ([N, K] when b_transposed)
    m: int | None
    k: int
    n: int
    b_transposed: bool = False

    @property
    def n_padded(self) -> int:
        return -(-self.n // LANES) * LANES

    @property
    def nb(self) -> int:
        return 32 if self.n_padded % 32 == 0 else 16


def _is_bf16(t: ir.Type) -> bool:
    return isinstance(t, ir.RankedTensorType) and isinstance(t.element_type, ir.BF16Type)


def _zero_fill_f32(v: ir.Value) -> bool:
    f = owner_op(v)
    if f is None or f.name != "linalg.fill":
        return False
    c = owner_op(f.operands[0])
    return c is not None and c.name == "arith.constant" and \
        isinstance(c.attributes["value"], ir.FloatAttr) and \
        ir.FloatAttr(c.attributes["value"]).value == 0.0


def _default_maps(op: ir.Operation) -> bool:
    """A linalg.matmul without transposed / broadcast operand maps."""
    if "indexing_maps" not in op.attributes:
        return True
    maps = [ir.AffineMapAttr(x).value for x in ir.ArrayAttr(op.attributes["indexing_maps"])]
    want = ["(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d2, d1)", "(d0, d1, d2) -> (d0, d1)"]
    return [str(m) for m in maps] == want


def match(op: ir.Operation) -> Bf16Matmul | None:
    """The bf16 matmul ``op`` computes (see the module docstring), or None."""
    if op.name != "linalg.matmul" or len(op.operands) != 3 or len(op.results) != 1:
        return None
    a, b, c = op.operands
    rt = op.results[0].type
    if not (_is_bf16(a.type) and _is_bf16(b.type) and isinstance(rt, ir.RankedTensorType)
            and isinstance(rt.element_type, ir.F32Type)):
        return None
    if not _default_maps(op) or not _zero_fill_f32(c):
        return None
    b_t = False
    t = owner_op(b)
    if t is not None and t.name == "linalg.transpose" and \
            list(ir.DenseI64ArrayAttr(t.attributes["permutation"])) == [1, 0]:
        b, b_t = t.operands[0], True        # B = W^T (Gemm transB): packed from W
    cb = owner_op(b)
    if cb is None or cb.name != "arith.constant" or not b.type.has_static_shape:
        return None
    k, n = b.type.shape[::-1] if b_t else b.type.shape
    at = a.type
    if at.rank != 2 or at.is_dynamic_dim(1) or at.shape[1] != k or k == 0 or n == 0:
        return None
    m = None if at.is_dynamic_dim(0) else at.shape[0]
    return Bf16Matmul(a, b, m, k, n, b_t)


def plan(op: ir.Operation, target: Target):
    """The kernel plan's rule: (tile, threaded, reason) or None."""
    if not target.avx512_bf16 or target.vector_width != LANES:
        return None
    q = match(op)
    if q is None:
        return None
    from onnx_mlir_py.passes.optimize.kernel_plan import _macs_str, threaded_kernel
    macs = None if q.m is None else q.m * q.k * q.n
    return (f"{ROW_TILE[q.nb]}x{q.nb}, k 2", threaded_kernel(macs, _bytes(q)),
            f"bf16 x bf16 -> f32 matmul, vdpbf16ps; {_macs_str(macs)}")


def _bytes(q: Bf16Matmul) -> int | None:
    return None if q.m is None else 2 * q.m * q.k + 2 * q.k * q.n + 4 * q.m * q.n


# -- compile-time weights -------------------------------------------------------
def constant_bits(op: ir.Operation) -> np.ndarray | None:
    """The uint16 bits of a bf16 ``arith.constant`` tensor (dense, splat or
    dense_resource), or None when they cannot be read."""
    from onnx_mlir_py.ir_resources import resource_blobs, resource_name
    t = op.results[0].type
    shape, attr = list(t.shape), op.attributes["value"]
    size = int(np.prod(shape))
    if isinstance(attr, ir.DenseElementsAttr):
        if attr.is_splat:
            v = np.float32(ir.FloatAttr(attr.get_splat_value()).value)
            return np.full(shape, _round_bf16(np.array([v]))[0], np.uint16)
        return _dense_bits(str(attr), shape)
    name = resource_name(attr)
    if name is None:
        return None
    data = resource_blobs([op], views=True).get(name)
    if data is None or len(data) != 2 * size:
        return None
    return np.frombuffer(data, np.uint16).reshape(shape)


def _dense_bits(text: str, shape: list) -> np.ndarray | None:
    """The uint16 bits of a printed non-splat bf16 ``dense<...>`` attribute
    (the bindings cannot read bf16 through the buffer protocol): its hex
    form (larger attributes, little endian), else its decimal values (printed
    with enough digits to round back to the same bf16)."""
    body = text[text.index("<") + 1:text.rindex(">", 0, text.rindex(":"))]
    size = int(np.prod(shape))
    if body.startswith('"0x'):
        bits = np.frombuffer(bytes.fromhex(body[3:-1]), "<u2")
        return bits.reshape(shape).astype(np.uint16) if bits.size == size else None
    try:
        vals = np.array([float(x) for x in body.replace("[", " ").replace("]", " ").split(",")],
                        np.float32)
    except ValueError:
        return None
    return _round_bf16(vals).reshape(shape) if vals.size == size else None


def _round_bf16(x: np.ndarray) -> np.ndarray:
    """f32 -> the bits of bf16, round to nearest even (exact for values
    that are bf16 already)."""
    import ml_dtypes
    return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16).view(np.uint16)


# -- the kernel function -----------------------------------------------------------
def kernel_text(name: str, k: int, n: int, nb: int, threaded: bool) -> str:
    """``func.func private @name(a: [?, K] bf16, bp: [N/nb, ceil(K/2), 2 nb] bf16)
    -> [?, N] f32`` (see the module docstring)."""
    mb, nv, kp, no = ROW_TILE[nb], nb // LANES, -(-k // 2), n // nb
    e = Emitter()
    v16, v32b, v16i = vector(LANES), vector(2 * LANES, Elem.BF16), vector(LANES, Elem.I32)
    a = e.param("a", tensor([None, k], Elem.BF16))
    bp = e.param("bp", tensor([no, kp, nb * 2], Elem.BF16))
    out_t = tensor([None, n])
    zero = e.const("0.0", BF16)
    m = e.dim(a, 0)
    mfull = e.mul(e.div(m, mb), mb)
    out = e.empty([m, n])
    if threaded:
        blk, tile_src, res = e.forall(no, out)
    else:
        blk, (tile_src,), (res,) = e.loop(0, no, 1, [out])
    col = e.mul(blk, nb)
    tile = e.extract_slice(tile_src, [0, col], [m, nb])
    zero32 = e.splat_const("0.0", v16)

    def pair(kk, m0, r: int, accs: list, in_bounds: bool) -> list:
        """One k pair of the r x nb tile at row ``m0``: r * nv vdpbf16ps."""
        new = list(accs)
        bvs = [e.read(bp, [blk, kk, j * 2 * LANES], zero, v32b) for j in range(nv)]
        k2 = e.mul(kk, 2)
        for i in range(r):
            av = e.read(a, [e.add(m0, i), k2], zero, vector(2, Elem.BF16), in_bounds=in_bounds)
            a1 = e.cast("vector.bitcast", av, vector(1, Elem.I32))
            s = e.op("as", f"vector.extract {a1}[0] : i32 from {a1.type}", Type(Kind.SCALAR, Elem.I32))
            ab = e.cast("vector.bitcast", e.broadcast(s, v16i), v32b)
            for j in range(nv):
                x = i * nv + j
                new[x] = e.op("acc", f"x86vector.avx512.dot {new[x]}, {ab}, {bvs[j]} : "
                                     f"{v32b} -> {v16}", v16)
        return new

    def rows(lo, hi, r: int, t):
        """Rows lo..hi of the tile in steps of ``r``: the r x nb register tile."""
        m0, (tt,), (rt,) = e.loop(lo, hi, r, [t], base="rows")
        kk, accs, racc = e.loop(0, k // 2, 1, [zero32] * (r * nv), base="kp")
        e.end(pair(kk, m0, r, accs, True))
        racc = list(racc)
        if k % 2:                   # the last k and a zero past K
            racc = pair(k // 2, m0, r, racc, False)
        for i in range(r):
            for j in range(nv):
                tt = e.write(racc[i * nv + j], tt, [e.add(m0, i), j * LANES])
        e.end([tt])
        return rt

    tile = rows(0, mfull, mb, tile)
    m4 = e.add(mfull, e.mul(e.div(e.sub(m, mfull), 4), 4))     # then 4-row tiles
    tile = rows(mfull, m4, 4, tile)
    tile = rows(m4, m, 1, tile)
    if threaded:
        e.end_forall(tile, tile_src, [0, col], [m, nb])
    else:
        e.end([e.insert_slice(tile, tile_src, [0, col], [m, nb])])
    e(f"return {res} : {out_t}")
    return e.function(name, [a, bp], out_t)


# -- the rewrite step ----------------------------------------------------------------
def planned(module: ir.Module):
    """(op, match, B's uint16 bits [K, N]) for each matmul the plan gave
    this kernel (every matching one without a plan tag, for the named pass)."""
    from onnx_mlir_py.passes.optimize.kernel_plan import KERNEL_ATTR, assigned
    for op in walk_ops(module.operation, "linalg.matmul"):
        if KERNEL_ATTR in op.attributes and not assigned(op, KERNEL):
            continue
        q = match(op)
        if q is None:
            continue
        bits = constant_bits(owner_op(q.b))
        if bits is not None:
            yield op, q, np.ascontiguousarray(bits.T) if q.b_transposed else bits


def bf16_matmuls(module: ir.Module, target: Target, threads: bool, plan_=None) -> int:
    """Rewrite the matmuls the plan gave ``packed_matmul_bf16``. Returns the count."""
    from mlir.dialects import arith, func, tensor as tensor_d
    from mlir.passmanager import PassManager
    from onnx_mlir_py.passes.optimize.kernel_plan import threaded_kernel
    from onnx_mlir_py.passes.optimize.matmul_q8 import add_functions, pack_b
    if not target.avx512_bf16 or target.vector_width != LANES:
        return 0
    funcs: dict[tuple, str] = {}
    count = 0
    bf16, f32 = ir.BF16Type.get(), ir.F32Type.get()
    dyn = ir.ShapedType.get_dynamic_size()
    for op, q, b in list(planned(module)):
        npad, nb = q.n_padded, q.nb
        if npad != q.n:
            b = np.concatenate([b, np.zeros((q.k, npad - q.n), np.uint16)], axis=1)
        macs = None if q.m is None else q.m * q.k * q.n
        par = threads and threaded_kernel(macs, _bytes(q))
        key = (q.k, npad, nb, par)
        if key not in funcs:
            funcs[key] = f"__om_bf16_matmul_{len(funcs)}"
            text = kernel_text(funcs[key], q.k, npad, nb, par)
            add_functions(module, ir.Module.parse("module {\n" + text + "\n}", module.context))
        with ir.InsertionPoint(op), op.location:
            a = q.a
            at = ir.RankedTensorType.get([dyn, q.k], bf16)
            if a.type != at:
                a = tensor_d.CastOp(at, a).result
            packed = pack_b(b, nb, 2)
            pt = ir.RankedTensorType.get(list(packed.shape), bf16)
            bp = arith.ConstantOp(pt, ir.DenseElementsAttr.get(packed, type=pt)).result
            call = func.CallOp([ir.RankedTensorType.get([dyn, npad], f32)],
                               ir.FlatSymbolRefAttr.get(funcs[key]), [a, bp])
            res = call.results[0]
            if npad != q.n:
                rows = tensor_d.DimOp(res, arith.ConstantOp(ir.IndexType.get(), 0).result).result
                res = tensor_d.ExtractSliceOp(
                    ir.RankedTensorType.get([dyn, q.n], f32), res, [], [rows], [],
                    [0, 0], [dyn, q.n], [1, 1]).result
            if res.type != op.results[0].type:
                res = tensor_d.CastOp(op.results[0].type, res).result
        op.results[0].replace_all_uses_with(res)
        op.erase()
        count += 1
    if funcs:
        PassManager.parse('builtin.module(inline{default-pipeline=""}, symbol-dce, canonicalize, cse)',
                          module.context).run(module.operation)
        mark_bf16(module)
    return count


def mark_bf16(module: ir.Module) -> None:
    """Record that the module's kernels use AVX512-BF16 (matmul_q8.FEATURES_ATTR)."""
    from onnx_mlir_py.passes.optimize.matmul_q8 import FEATURES_ATTR
    attrs = module.operation.attributes
    have = [ir.StringAttr(x).value for x in ir.ArrayAttr(attrs[FEATURES_ATTR])] \
        if FEATURES_ATTR in attrs else []
    if FEATURE not in have:
        attrs[FEATURES_ATTR] = ir.ArrayAttr.get([ir.StringAttr.get(f) for f in have + [FEATURE]])
