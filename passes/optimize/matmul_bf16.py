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
from onnx_mlir_py.passes.optimize.kernel_budget import building

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
def kernel_text(name: str, k: int, n: int, nb: int, threaded: bool, gather: int | None = None) -> str:
    """``func.func private @name(a: [?, K] bf16, bp: [N/nb, ceil(K/2), 2 nb] bf16)
    -> [?, N] f32`` (see the module docstring).

    ``gather`` (the convs' implicit im2col, conv_bf16.py): A is a flat bf16
    tensor of that many elements and the kernel takes two more parameters,
    ``rows: [M] i32`` and ``koffs: [K/2] i32`` (K even): row m's k pair kk
    is the two elements at ``rows[m] + koffs[kk]``."""
    from onnx_mlir_py.passes.optimize.matmul_q8 import end_column_block
    mb, nv, kp, no = ROW_TILE[nb], nb // LANES, -(-k // 2), n // nb
    e = Emitter()
    i32 = Type(Kind.SCALAR, Elem.I32)
    v16, v32b, v16i = vector(LANES), vector(2 * LANES, Elem.BF16), vector(LANES, Elem.I32)
    v2b = vector(2, Elem.BF16)
    a = e.param("a", tensor([None, k] if gather is None else [gather], Elem.BF16))
    bp = e.param("bp", tensor([no, kp, nb * 2], Elem.BF16))
    params = [a, bp]
    if gather is not None:
        rows_t, koffs = e.param("rows", tensor([None], Elem.I32)), e.param("koffs", tensor([kp], Elem.I32))
        params += [rows_t, koffs]
    out_t = tensor([None, n])
    zero = e.const("0.0", BF16)
    m = e.dim(a if gather is None else rows_t, 0)
    mfull = e.mul(e.div(m, mb), mb)
    out = e.empty([m, n])
    if threaded:
        blk, tile_src, res = e.forall(no, out)
    else:
        blk, (tile_src,), (res,) = e.loop(0, no, 1, [out])
    col = e.mul(blk, nb)
    tile = e.extract_slice(tile_src, [0, col], [m, nb])
    zero32 = e.splat_const("0.0", v16)

    def index(v):
        return e.op("ix", f"arith.index_cast {v} : i32 to index", Type(Kind.SCALAR, Elem.INDEX))

    def pair(kk, row0: list, accs: list, in_bounds: bool) -> list:
        """One k pair of the tile whose rows start at ``row0``: r * nv vdpbf16ps."""
        new = list(accs)
        bvs = [e.read(bp, [blk, kk, j * 2 * LANES], zero, v32b) for j in range(nv)]
        if gather is None:
            k2 = e.mul(kk, 2)
        else:
            ko = index(e.extract(koffs, [kk]))
        for i, r0 in enumerate(row0):
            if gather is None:
                av = e.read(a, [r0, k2], zero, v2b, in_bounds=in_bounds)
            else:
                av = e.read(a, [e.add(r0, ko)], zero, v2b)
            a1 = e.cast("vector.bitcast", av, vector(1, Elem.I32))
            s = e.op("as", f"vector.extract {a1}[0] : i32 from {a1.type}", i32)
            ab = e.cast("vector.bitcast", e.broadcast(s, v16i), v32b)
            for j in range(nv):
                x = i * nv + j
                new[x] = e.op("acc", f"x86vector.avx512.dot {new[x]}, {ab}, {bvs[j]} : "
                                     f"{v32b} -> {v16}", v16)
        return new

    def rows(lo, hi, r: int, t):
        """Rows lo..hi of the tile in steps of ``r``: the r x nb register tile."""
        m0, (tt,), (rt,) = e.loop(lo, hi, r, [t], base="rows")
        row0 = [e.add(m0, i) for i in range(r)]
        if gather is not None:      # each row's first element in A
            row0 = [index(e.extract(rows_t, [x])) for x in row0]
        kk, accs, racc = e.loop(0, k // 2, 1, [zero32] * (r * nv), base="kp")
        e.end(pair(kk, row0, accs, True))
        racc = list(racc)
        if k % 2:                   # the last k and a zero past K
            racc = pair(k // 2, row0, racc, False)
        for i in range(r):
            for j in range(nv):
                tt = e.write(racc[i * nv + j], tt, [e.add(m0, i), j * LANES])
        e.end([tt])
        return rt

    end_column_block(e, rows, tile, tile_src, m, mfull, mb, col, nb, threaded)
    e(f"return {res} : {out_t}")
    return e.function(name, params, out_t)


# -- the rewrite step ----------------------------------------------------------------
def planned(module: ir.Module, kernels: tuple = (KERNEL,)):
    """(op, match, B's uint16 bits [K, N]) for each matmul the plan gave
    one of ``kernels`` (every matching one without a plan tag, for the named pass)."""
    from onnx_mlir_py.passes.optimize.kernel_plan import KERNEL_ATTR, assigned
    for op in walk_ops(module.operation, "linalg.matmul"):
        if KERNEL_ATTR in op.attributes and not any(assigned(op, k) for k in kernels):
            continue
        q = match(op)
        if q is None:
            continue
        bits = constant_bits(owner_op(q.b))
        if bits is not None:
            yield op, q, np.ascontiguousarray(bits.T) if q.b_transposed else bits


def kernel_call(module: ir.Module, funcs: dict, k: int, b: np.ndarray, threaded: bool,
                args: list, gather: int | None = None) -> ir.Value:
    """At the insertion point: the call of the kernel (added to ``module``
    once per shape, named in ``funcs``) of A (``args[0]``, and the gather
    tables after it) times ``b`` (B's uint16 bits [K, N'], N' a multiple of
    16; packed here): its [?, N'] f32 result."""
    from mlir.dialects import arith, func
    from onnx_mlir_py.passes.optimize.matmul_q8 import add_functions, pack_b
    npad = b.shape[1]
    nb = 32 if npad % 32 == 0 else 16
    key = (k, npad, nb, threaded, gather)
    if key not in funcs:
        # named by shape: the matmul and conv steps share the module's names
        funcs[key] = f"__om_bf16_matmul_{k}x{npad}_{nb}" + ("_par" if threaded else "") + \
            ("" if gather is None else f"_gather{gather}")
        text = kernel_text(funcs[key], k, npad, nb, threaded, gather)
        add_functions(module, ir.Module.parse("module {\n" + text + "\n}", module.context))
    from onnx_mlir_py.ir_resources import resource_attr
    packed = pack_b(b, nb, 2)
    pt = ir.RankedTensorType.get(list(packed.shape), ir.BF16Type.get())
    # a dense_resource, as the lowering's weights: codegen externalizes it
    # (a dense bf16 attribute stayed inline in the LLVM IR: ResNet-50's
    # translate + split + llc took 3x as long)
    bp = arith.ConstantOp(pt, resource_attr(packed, "bf16_packed", pt)).result
    dyn = ir.ShapedType.get_dynamic_size()
    return func.CallOp([ir.RankedTensorType.get([dyn, npad], ir.F32Type.get())],
                       ir.FlatSymbolRefAttr.get(funcs[key]), [args[0], bp] + list(args[1:])).results[0]


def pad_columns(b: np.ndarray) -> np.ndarray:
    """B's bits with zero columns up to whole 16-lane vectors."""
    n = b.shape[1]
    npad = -(-n // LANES) * LANES
    return b if npad == n else np.concatenate([b, np.zeros((b.shape[0], npad - n), np.uint16)], axis=1)


def finish(module: ir.Module, funcs: dict) -> None:
    """After the rewrites: inline the kernels' calls, record the feature."""
    from mlir.passmanager import PassManager
    if funcs:
        PassManager.parse('builtin.module(inline{default-pipeline=""}, symbol-dce, canonicalize, cse)',
                          module.context).run(module.operation)
        mark_bf16(module)
        if any(isinstance(k, tuple) and k[0] == "amx" for k in funcs):
            from onnx_mlir_py.passes.optimize.amx_tiles import FEATURES_BF16, mark_features
            mark_features(module, FEATURES_BF16)


def bf16_matmuls(module: ir.Module, target: Target, threads: bool, plan_=None) -> int:
    """Rewrite the matmuls the plan gave ``packed_matmul_bf16`` (or
    ``amx_matmul_bf16``: matmul_bf16_amx.py). Returns the count."""
    from mlir.dialects import arith, tensor as tensor_d
    from onnx_mlir_py.passes.optimize import matmul_bf16_amx as amx
    from onnx_mlir_py.passes.optimize.kernel_plan import KERNEL_ATTR, assigned, threaded_kernel
    if not target.avx512_bf16 or target.vector_width != LANES:
        return 0
    funcs: dict[tuple, str] = {}
    count = 0
    f32 = ir.F32Type.get()
    dyn = ir.ShapedType.get_dynamic_size()
    for op, q, b in list(planned(module, (KERNEL, amx.KERNEL))):
        with building(op):
            macs = None if q.m is None else q.m * q.k * q.n
            on_amx = assigned(op, amx.KERNEL) or \
                (KERNEL_ATTR not in op.attributes and amx.available(target))
            with ir.InsertionPoint(op), op.location:
                a = q.a
                at = ir.RankedTensorType.get([dyn, q.k], ir.BF16Type.get())
                if a.type != at:
                    a = tensor_d.CastOp(at, a).result
                call = amx.kernel_call if on_amx else kernel_call
                res = call(module, funcs, q.k, pad_columns(b),
                           threads and threaded_kernel(macs, _bytes(q)), [a])
                if on_amx:      # M' >= M rows
                    rows = tensor_d.DimOp(a, arith.ConstantOp(ir.IndexType.get(), 0).result).result
                    res = tensor_d.ExtractSliceOp(
                        ir.RankedTensorType.get([dyn, q.n], f32), res, [], [rows], [],
                        [0, 0], [dyn, q.n], [1, 1]).result
                elif q.n_padded != q.n:
                    rows = tensor_d.DimOp(res, arith.ConstantOp(ir.IndexType.get(), 0).result).result
                    res = tensor_d.ExtractSliceOp(
                        ir.RankedTensorType.get([dyn, q.n], f32), res, [], [rows], [],
                        [0, 0], [dyn, q.n], [1, 1]).result
                if res.type != op.results[0].type:
                    res = tensor_d.CastOp(op.results[0].type, res).result
            op.results[0].replace_all_uses_with(res)
            op.erase()
            count += 1
    finish(module, funcs)
    return count


def mark_bf16(module: ir.Module) -> None:
    """Record that the module's kernels use AVX512-BF16 (matmul_q8.FEATURES_ATTR)."""
    from onnx_mlir_py.passes.optimize.matmul_q8 import FEATURES_ATTR
    attrs = module.operation.attributes
    have = [ir.StringAttr(x).value for x in ir.ArrayAttr(attrs[FEATURES_ATTR])] \
        if FEATURES_ATTR in attrs else []
    if FEATURE not in have:
        attrs[FEATURES_ATTR] = ir.ArrayAttr.get([ir.StringAttr.get(f) for f in have + [FEATURE]])
