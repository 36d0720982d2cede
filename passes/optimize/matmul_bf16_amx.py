"""bf16 matmuls and convs on AMX-BF16: the kernel plan's ``amx_matmul_bf16``
and ``amx_conv_bf16`` kernels (a target with ``amx_bf16``; elsewhere the
AVX512-BF16 kernels of matmul_bf16.py / conv_bf16.py).

The same contractions as those (bf16 A, constant bf16 B, f32 result from a
zero fill; matched by their ``match``), computed with ``tdpbf16ps``
(:mod:`.amx_tiles`): per block of 32 rows, 2 A tiles (16 rows x 32 bf16)
x 2 B tiles (16 k pairs x 16 columns) into 2 x 2 f32 C tiles of 16 x 16,
K stepped by 32 (8 tile registers), the C tiles stored into the result.

B is packed at compile time as for the AVX512-BF16 kernel with ``nb`` 16
(one 64-byte row per k pair and 16 columns: AMX's B layout), K padded
with zero rows to ``Kp``, a multiple of 32, the column blocks stacked:
``[N'/16 * Kp/2, 32]`` (N' = N padded to 16).

A: the kernel's A tiles are read from

- A itself (``direct``: a matmul with K a multiple of 32, whole blocks of
  32 rows);
- else a ``[32, Kp]`` bf16 buffer per row block, filled from A's rows (K
  not a multiple of 32: zeros past K; the last block's rows past M: zero
  rows), or for a conv by an im2col of the block's 32 output pixels:
  pixel ``p``'s row is the concatenation of ``segments`` of the
  channels-last input, each ``(src, dst, len)``: ``len`` elements from
  ``rows[p] + src`` to ``dst`` (with dilation 1 one segment per filter row:
  its ``KW * C`` elements are adjacent in the input). Copied in vectors of
  32 (the last of a segment masked).

The result has M padded to a multiple of 32 rows (``[M', N']``, the
caller slices; the conv's transpose reads the first M). Blocks of 32 rows
run in an ``scf.forall`` when threaded.

Numerics: as the AVX512-BF16 kernel (exact bf16 products, f32 sums in
another order; TDPBF16PS flushes denormal inputs and outputs, as
VDPBF16PS).
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.passes.optimize import amx_tiles as amx
from onnx_mlir_py.passes.optimize.kernel_emit import INDEX, Elem, Emitter, Kind, Type, tensor, vector
from onnx_mlir_py.target import Target

KERNEL = "amx_matmul_bf16"
CONV_KERNEL = "amx_conv_bf16"
MB = 32                 # rows of a block: 2 A tiles
KSTEP = 32              # bf16 per A tile row
NT = 16                 # columns of a C tile
KCHUNK = 8              # K steps per chunk: C stored / loaded between chunks
TRANSPOSED_OUT = True   # convs: the kernel writes [F, M] (no transpose pass after it)
I32 = Type(Kind.SCALAR, Elem.I32)
BF16 = Type(Kind.SCALAR, Elem.BF16)


def available(target: Target) -> bool:
    return target.amx_bf16 and target.avx512_bf16 and target.vector_width == 16


def kp(k: int) -> int:
    return -(-k // KSTEP) * KSTEP


def plan(op: ir.Operation, target: Target):
    """The kernel plan's matmul rule: (tile, threaded, reason) or None."""
    if not available(target):
        return None
    from onnx_mlir_py.passes.optimize.matmul_bf16 import _bytes, match
    q = match(op)
    if q is None:
        return None
    from onnx_mlir_py.passes.optimize.kernel_plan import _macs_str, threaded_kernel
    macs = None if q.m is None else q.m * q.k * q.n
    return ("32x32 (2x2 tiles), k 32", threaded_kernel(macs, _bytes(q)),
            f"bf16 x bf16 -> f32 matmul, AMX tdpbf16ps; {_macs_str(macs)}")


def conv_plan(op: ir.Operation, target: Target):
    """The kernel plan's conv rule: (tile, threaded, reason) or None."""
    if not available(target):
        return None
    from onnx_mlir_py.passes.optimize.conv_bf16 import match
    cv = match(op)
    if cv is None:
        return None
    from onnx_mlir_py.passes.optimize.kernel_plan import THREAD_MIN_MACS, _macs_str
    return ("32 pixels x 32 filters (2x2 tiles), k 32", cv.macs >= THREAD_MIN_MACS,
            f"bf16 conv: channels-last im2col per 32 pixels, AMX tdpbf16ps; {_macs_str(cv.macs)}")


def segments(cv, c2: int) -> list[tuple[int, int, int]]:
    """A conv's im2col row as (src, dst, len) pieces of the flat channels-last
    input (k ordered (kh, kw, c), as conv_bf16.filters_matrix)."""
    _n, _c, _h, w = cv.xs
    _f, _c, kh, kw = cv.ws
    if cv.d[1] == 1:
        return [(i * cv.d[0] * w * c2, i * kw * c2, kw * c2) for i in range(kh)]
    return [((i * cv.d[0] * w + j * cv.d[1]) * c2, (i * kw + j) * c2, c2)
            for i in range(kh) for j in range(kw)]


def pointwise(cv, c2: int) -> bool:
    """A 1x1 conv of stride 1 and whole K steps of channels: its channels-last
    input is A as it is (the matmul kernel's direct form, no im2col)."""
    return cv.ws[2:] == (1, 1) and cv.s == (1, 1) and c2 % KSTEP == 0


def pack_b(b: np.ndarray) -> np.ndarray:
    """B's bits [K, N'] (N' a multiple of 16) -> ``[N'/16 * Kp/2, 32]``."""
    from onnx_mlir_py.passes.optimize.matmul_q8 import pack_b as pack
    k, n = b.shape
    bk = np.zeros((kp(k), n), np.uint16)
    bk[:k] = b
    p = pack(bk, NT, 2)
    return np.ascontiguousarray(p.reshape(-1, 2 * NT))


# -- the kernel function -----------------------------------------------------------
def kernel_text(name: str, k: int, n: int, threaded: bool, gather=None,
                out_m: int | None = None) -> str:
    """``func.func private @name(a, bp: [N/16 * Kp/2, 32] bf16[, rows: [M] i32])
    -> [M', N] f32`` (``n`` a multiple of 16; M' = M padded to 32; see the
    module docstring). ``gather``: None (``a``: [?, K] bf16) or ``(size,
    segments)`` of a conv (``a``: the flat channels-last input of ``size``
    elements). ``out_m`` (a conv's M, static): the result is ``[N, M]``
    instead (a conv's NCHW image), each block's C tiles stored into a [32, N]
    buffer and written transposed in 16x16 blocks."""
    e = Emitter()
    kpad, nt = kp(k), n // NT
    direct = gather is None and k % KSTEP == 0
    a = e.param("a", tensor([None, k] if gather is None else [gather[0]], Elem.BF16))
    bp = e.param("bp", tensor([nt * kpad // 2, 2 * NT], Elem.BF16))
    params = [a, bp]
    if gather is not None:
        rows_t = e.param("rows", tensor([None], Elem.I32))
        params.append(rows_t)
    am, bm = amx.to_buffer(e, a), amx.to_buffer(e, bp)
    if gather is None:
        m = e.op("m", f"memref.dim {am}, {e.index(0)} : {am.type}", INDEX)
        flat = amx.collapse(e, am, "[[0, 1]]", [None])
        segs = [(0, 0, k)]
    else:
        rm = amx.to_buffer(e, rows_t)
        m = e.op("m", f"memref.dim {rm}, {e.index(0)} : {rm.type}", INDEX)
        flat, segs = am, gather[1]
    nblk = e.div(e.add(m, MB - 1), MB)
    out = amx.alloc(e, [e.mul(nblk, MB), n] if out_m is None else [n, out_m], Elem.F32, "out")
    v32 = vector(32, Elem.BF16)
    zero = e.const("0.0", BF16)
    zvec = e.splat_const("0.0", v32)

    def compute(a_mem, a_row0, c_mem, row0) -> None:
        """Rows row0.. (A's from a_row0 of a_mem) x all columns: per chunk
        of KCHUNK K steps (A's chunk stays in L1), every column block."""
        bstep = kpad // 2       # B rows of one 16-column block
        steps = kpad // KSTEP

        def columns(k0, n: int, first: bool) -> None:
            def block(cols: list) -> None:
                amx.accumulate(e, a_mem, [a_row0, e.add(a_row0, 16)], bm,
                               [e.mul(j, bstep) for j in cols], k0, n, c_mem, row0,
                               e.mul(cols[0], NT), first=first)
            amx.column_pairs(e, nt, block)

        u = min(steps, KCHUNK)
        columns(0, u, True)
        if steps // u > 1:
            kc = amx.open_for(e, 1, steps // u)
            columns(e.mul(kc, u), u, False)
            amx.close(e)
        if steps % u:
            columns((steps // u) * u, steps % u, False)

    def pack(buf, rb) -> None:
        """buf [32, Kp] <- the block's A rows (zero rows past M)."""
        r = amx.open_for(e, 0, MB)
        row = e.add(e.mul(rb, MB), r)
        ok = e.cmpi("ult", row, m)
        e(f"scf.if {ok} {{")
        e.ind += 1
        if gather is None:
            base = e.mul(row, k)
        else:
            base = e.op("ix", f"arith.index_cast {e.op('rw', f'memref.load {rm}[{row}] : {rm.type}', I32)} "
                              f": i32 to index", INDEX)
        if kpad != k:
            e(f"vector.transfer_write {zvec}, {buf}[{r}, {e.index(kpad - KSTEP)}] "
              f"{{in_bounds = [true]}} : {v32}, {buf.type}")
        for src, dst, ln in segs:
            full, tail = divmod(ln, KSTEP)
            s0 = e.add(base, src)
            if full:
                c = amx.open_for(e, 0, full) if full > 1 else 0
                off = e.mul(c, KSTEP)
                v = e.read(flat, [e.add(s0, off)], zero, v32)
                e(f"vector.transfer_write {v}, {buf}[{r}, {e.ix(e.add(off, dst))}] {{in_bounds = [true]}} "
                  f": {v32}, {buf.type}")
                if full > 1:
                    amx.close(e)
            if tail:
                mk = e.op("mk", f"vector.constant_mask [{tail}] : {vector(32, Elem.I1)}",
                          vector(32, Elem.I1))
                v = e.read(flat, [e.add(s0, full * KSTEP)], zero, v32, mk)
                e(f"vector.transfer_write {v}, {buf}[{r}, {e.index(dst + full * KSTEP)}], {mk} "
                  f"{{in_bounds = [true]}} : {v32}, {buf.type}")
        e.ind -= 1
        e("} else {")
        e.ind += 1
        for c in range(kpad // KSTEP):
            e(f"vector.transfer_write {zvec}, {buf}[{r}, {e.index(c * KSTEP)}] {{in_bounds = [true]}} "
              f": {v32}, {buf.type}")
        e.ind -= 1
        e("}")
        amx.close(e)

    def transposed(rb, cbuf) -> None:
        """The block's [32, N] C into out [N, M] at column rb * 32, 16x16 blocks."""
        vt = vector([NT, NT])
        fb = amx.open_for(e, 0, nt)
        f0 = e.mul(fb, NT)
        for pb in range(MB // NT):
            p = e.add(e.mul(rb, MB), pb * NT)
            v = e.read(cbuf, [pb * NT, f0], e.f32(0.0), vt)
            t = e.op("tr", f"vector.transpose {v}, [1, 0] : {vt} to {vt}", vt)
            whole = e.cmpi("ule", e.add(p, NT), out_m)
            e(f"scf.if {whole} {{")
            e(f"  vector.transfer_write {t}, {out}[{f0}, {p}] {{in_bounds = [true, true]}} "
              f": {vt}, {out.type}")
            e("} else {")     # the last pixels: masked
            e(f"  vector.transfer_write {t}, {out}[{f0}, {p}] {{in_bounds = [true, false]}} "
              f": {vt}, {out.type}")
            e("}")
        amx.close(e)

    def block(a_mem, a_row0, rb) -> None:
        if out_m is None:
            compute(a_mem, a_row0, out, e.mul(rb, MB))
        else:
            cbuf = amx.alloc(e, [MB, n], Elem.F32, "cbuf")
            compute(a_mem, a_row0, cbuf, 0)
            transposed(rb, cbuf)

    def packed_block(rb) -> None:
        buf = amx.alloc(e, [MB, kpad], Elem.BF16, "abuf")
        pack(buf, rb)
        block(buf, 0, rb)

    if direct:      # whole blocks straight from A, the last part block packed
        nfull = e.div(m, MB)
        rb = amx.open_forall(e, nfull, threaded)
        block(am, e.mul(rb, MB), rb)
        amx.close(e)
        part = e.cmpi("ult", e.mul(nfull, MB), m)
        e(f"scf.if {part} {{")
        e.ind += 1
        packed_block(nfull)
        e.ind -= 1
        e("}")
    else:
        rb = amx.open_forall(e, nblk, threaded)
        packed_block(rb)
        amx.close(e)
    res = amx.to_tensor(e, out)
    e(f"return {res} : {res.type}")
    return e.function(name, params, res.type)



# -- the calls -------------------------------------------------------------------
def kernel_call(module: ir.Module, funcs: dict, k: int, b: np.ndarray, threaded: bool,
                args: list, gather=None, out_m: int | None = None) -> ir.Value:
    """At the insertion point: the call of the AMX kernel (added to ``module``
    once per shape) of A (``args[0]``; a conv's rows table after it) times
    ``b`` (B's bits [K, N'], N' a multiple of 16): its [M', N'] f32 result
    (M' = M padded to 32 rows)."""
    from mlir.dialects import arith, func
    from onnx_mlir_py.ir_resources import resource_attr
    from onnx_mlir_py.passes.optimize.matmul_q8 import add_functions
    npad = b.shape[1]
    key = ("amx", k, npad, threaded, None if gather is None else (gather[0], tuple(gather[1])),
           out_m)
    if key not in funcs:
        funcs[key] = f"__om_amx_bf16_matmul_{k}x{npad}" + ("_par" if threaded else "") + \
            ("" if gather is None else f"_gather{len(funcs)}") + \
            ("" if out_m is None else f"_t{out_m}")
        text = kernel_text(funcs[key], k, npad, threaded, gather, out_m)
        add_functions(module, ir.Module.parse("module {\n" + text + "\n}", module.context))
    packed = pack_b(b)
    pt = ir.RankedTensorType.get(list(packed.shape), ir.BF16Type.get())
    bp = arith.ConstantOp(pt, resource_attr(packed, "bf16_packed", pt)).result
    dyn = ir.ShapedType.get_dynamic_size()
    shape = [dyn, npad] if out_m is None else [npad, out_m]
    return func.CallOp([ir.RankedTensorType.get(shape, ir.F32Type.get())],
                       ir.FlatSymbolRefAttr.get(funcs[key]), [args[0], bp] + list(args[1:])).results[0]
