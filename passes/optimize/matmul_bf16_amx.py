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

A channels-last conv (``linalg.conv_2d_nhwc_fhwc``, conv_bf16.py's
``_nhwc_conv``; ``rows_out``): the NHWC input is A in place (1x1 stride 1,
C a multiple of 32) or the im2col's source as it is (no transpose, no zero
channel: K = KH * KW * C, a k pair may span two channels), and the result
is the [N, OH, OW, F] tensor itself, its rows [M, F]: a whole block's C
tiles (F a multiple of 16) are tile-stored into it, the epilogue (the
elementwise generics after the conv: bias on F, ReLU / Clip / ..., a
residual) then applied in place to each column pair's 32 rows once its
last K chunk is stored (16-lane vectors along F, the tiles still in L1); a
part block or column tile goes through a [32, N'] buffer copied to its
rows, the epilogue on the way.

Numerics: as the AVX512-BF16 kernel (exact bf16 products, f32 sums in
another order; TDPBF16PS flushes denormal inputs and outputs, as
VDPBF16PS).
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.passes.optimize import amx_tiles as amx
from onnx_mlir_py.passes.optimize.kernel_emit import (F32, INDEX, Elem, Emitter, Kind, Type, tensor,
                                                      vector)
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
    if cv.nhwc:
        form = "1x1: the NHWC pixels as A" if pointwise(cv, cv.xs[1]) else \
            "NHWC input, im2col per 32 pixels"
        return ("32 pixels x 32 filters (2x2 tiles), k 32", cv.macs >= THREAD_MIN_MACS,
                f"bf16 conv: {form}, AMX tdpbf16ps, NHWC rows out; {_macs_str(cv.macs)}")
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
                out_m: int | None = None, rows_out: tuple | None = None,
                epi: tuple | None = None) -> str:
    """``func.func private @name(a, bp: [N/16 * Kp/2, 32] bf16[, rows: [M] i32])
    -> [M', N] f32`` (``n`` a multiple of 16; M' = M padded to 32; see the
    module docstring). ``gather``: None (``a``: [?, K] bf16) or ``(size,
    segments)`` of a conv (``a``: the flat channels-last input of ``size``
    elements). ``out_m`` (a conv's M, static): the result is ``[N, M]``
    instead (a conv's NCHW image), each block's C tiles stored into a [32, N]
    buffer and written transposed in 16x16 blocks. ``rows_out`` (a
    channels-last conv's output shape ``(N, OH, OW, F)``, F <= ``n``): the
    result is that tensor, its rows [M, F] written by :func:`_rows_out`;
    ``epi`` its epilogue ``(ops, result, kinds, ncaps)`` (extra parameters:
    a tensor per kind, ``"bias"`` [F] or ``"full"`` of the output's shape,
    then ``ncaps`` f32 scalars)."""
    e = Emitter()
    kpad, nt = kp(k), n // NT
    direct = gather is None and k % KSTEP == 0
    a = e.param("a", tensor([None, k] if gather is None else [gather[0]], Elem.BF16))
    bp = e.param("bp", tensor([nt * kpad // 2, 2 * NT], Elem.BF16))
    params = [a, bp]
    if gather is not None:
        rows_t = e.param("rows", tensor([None], Elem.I32))
        params.append(rows_t)
    if rows_out is not None:
        ep_t = [e.param("ept", tensor([rows_out[3]] if kind == "bias" else list(rows_out)))
                for kind in (epi[2] if epi else ())]
        ep_c = [e.param("epc", F32) for _ in range(epi[3] if epi else 0)]
        params += ep_t + ep_c
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
    if rows_out is not None:
        out4 = amx.alloc(e, list(rows_out), Elem.F32, "out")
        mo, fo = int(np.prod(rows_out[:3])), rows_out[3]
        out = amx.collapse(e, out4, "[[0, 1, 2], [3]]", [mo, fo])
        rows = _RowsOut(e, out, mo, fo, n, epi, [amx.to_buffer(e, t) for t in ep_t], ep_c)
    else:
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

    def compute_last(a_mem, a_row0, c_mem, row0, after) -> None:
        """compute's order, then ``after(cols)`` for each column pair once its
        last chunk is stored (its C tiles in L1)."""
        bstep = kpad // 2
        steps = kpad // KSTEP
        u = min(steps, KCHUNK)
        chunks = [(i * u, u) for i in range(steps // u)] + \
            ([((steps // u) * u, steps % u)] if steps % u else [])

        def columns(k0, n: int, first: bool, last: bool) -> None:
            def block(cols: list) -> None:
                amx.accumulate(e, a_mem, [a_row0, e.add(a_row0, 16)], bm,
                               [e.mul(j, bstep) for j in cols], k0, n, c_mem, row0,
                               e.mul(cols[0], NT), first=first)
                if last and after is not None:
                    after(cols)
            amx.column_pairs(e, nt, block)

        columns(0, u, True, len(chunks) == 1)
        mid = len(chunks) - 2         # whole chunks between the first and the last
        if mid > 1:
            kc = amx.open_for(e, 1, 1 + mid)
            columns(e.mul(kc, u), u, False, False)
            amx.close(e)
        elif mid == 1:
            columns(u, u, False, False)
        if len(chunks) > 1:
            columns(chunks[-1][0], chunks[-1][1], False, True)

    def rows_block(a_mem, a_row0, rb, whole) -> None:
        """A channels-last conv's block: its C tiles stored into out's rows
        (whole rows and columns; the epilogue then on each column pair's
        tiles in place), else into a [32, N] buffer copied to the block's
        rows (the epilogue on the way)."""
        r0 = e.mul(rb, MB)

        def buffered() -> None:
            cbuf = amx.alloc(e, [MB, n], Elem.F32, "cbuf")
            compute_last(a_mem, a_row0, cbuf, 0, None)
            rows.copy(cbuf, r0, e.iop("minui", e.index(MB), e.sub(mo, r0)))

        if fo % NT:
            buffered()
            return
        if whole is None and mo % MB == 0:
            whole = True
        if whole is not False:
            after = None if epi is None else (lambda cols: rows.in_place(r0, cols))
            if whole is None:
                e(f"scf.if {e.cmpi('ule', e.add(r0, MB), mo)} {{")
                e.ind += 1
            compute_last(a_mem, a_row0, out, r0, after)
            if whole is None:
                e.ind -= 1
                e("} else {")
                e.ind += 1
        if whole is not True:
            buffered()
        if whole is None:
            e.ind -= 1
            e("}")

    def block(a_mem, a_row0, rb, whole=None) -> None:
        if rows_out is not None:
            rows_block(a_mem, a_row0, rb, whole)
        elif out_m is None:
            compute(a_mem, a_row0, out, e.mul(rb, MB))
        else:
            cbuf = amx.alloc(e, [MB, n], Elem.F32, "cbuf")
            compute(a_mem, a_row0, cbuf, 0)
            transposed(rb, cbuf)

    def packed_block(rb, whole=None) -> None:
        buf = amx.alloc(e, [MB, kpad], Elem.BF16, "abuf")
        pack(buf, rb)
        if rows_out is not None:
            block(buf, 0, rb, whole)
        else:
            block(buf, 0, rb)

    if direct:      # whole blocks straight from A, the last part block packed
        nfull = e.div(m, MB)
        rb = amx.open_forall(e, nfull, threaded)
        if rows_out is not None:
            block(am, e.mul(rb, MB), rb, True)
        else:
            block(am, e.mul(rb, MB), rb)
        amx.close(e)
        part = e.cmpi("ult", e.mul(nfull, MB), m)
        e(f"scf.if {part} {{")
        e.ind += 1
        if rows_out is not None:
            packed_block(nfull, False)
        else:
            packed_block(nfull)
        e.ind -= 1
        e("}")
    else:
        rb = amx.open_forall(e, nblk, threaded)
        packed_block(rb)
        amx.close(e)
    res = amx.to_tensor(e, out if rows_out is None else out4)
    e(f"return {res} : {res.type}")
    return e.function(name, params, res.type)


class _RowsOut:
    """The rows of a channels-last conv's result ``out`` [M, F] (M = ``mo``,
    F = ``fo``; C tiles of ``n`` >= F columns), with the epilogue ``epi``
    (see kernel_text) on 16-lane vectors along F: ``tens`` its tensors'
    buffers, ``caps`` its scalars."""

    def __init__(self, e: Emitter, out, mo: int, fo: int, n: int, epi, tens: list, caps: list):
        self.e, self.out, self.mo, self.fo, self.n, self.epi, self.caps = e, out, mo, fo, n, epi, caps
        self.tens = [t if k == "bias" else amx.collapse(e, t, "[[0, 1, 2], [3]]", [mo, fo])
                     for t, k in zip(tens, epi[2] if epi else ())]

    def _line(self, src, src_row, row, col, ib: bool, bias: dict) -> None:
        """out[row, col:col+16] = the epilogue of src[src_row, col:col+16]."""
        e, v16, ibt = self.e, vector(NT), "true" if ib else "false"
        v = e.read(src, [src_row, col], e.f32(0.0), v16)
        if self.epi is not None:
            from onnx_mlir_py.passes.optimize.epilogue import vector_lines
            ts = [bias[i] if k == "bias" else
                  e.read(t, [row, col], e.f32(0.0), v16, in_bounds=ib or None)
                  for i, (t, k) in enumerate(zip(self.tens, self.epi[2]))]
            v = vector_lines(e, self.epi[0], self.epi[1], v, ts, self.caps)
        e(f"vector.transfer_write {v}, {self.out}[{e.ix(row)}, {e.ix(col)}] "
          f"{{in_bounds = [{ibt}]}} : {v16}, {self.out.type}")

    def _bias(self, col, ib: bool) -> dict:
        e = self.e
        return {i: e.read(t, [col], e.f32(0.0), vector(NT), in_bounds=ib or None)
                for i, (t, k) in enumerate(zip(self.tens, self.epi[2] if self.epi else ()))
                if k == "bias"}

    def in_place(self, r0, cols: list) -> None:
        """The epilogue on out's rows r0..r0+31, column tiles ``cols``."""
        e = self.e
        for j in cols:
            col = e.mul(j, NT)
            bias = self._bias(col, True)
            r = amx.open_for(e, 0, MB)
            row = e.add(r0, r)
            self._line(self.out, row, row, col, True, bias)
            amx.close(e)

    def copy(self, cbuf, r0, nrows) -> None:
        """out's rows r0..r0+nrows-1 <- cbuf's first rows (the epilogue on
        the way; the columns past F dropped)."""
        e = self.e
        ib = self.fo % NT == 0
        j = amx.open_for(e, 0, self.n // NT)
        col = e.mul(j, NT)
        bias = self._bias(col, ib)
        r = amx.open_for(e, 0, nrows)
        self._line(cbuf, r, e.add(r0, r), col, ib, bias)
        amx.close(e)
        amx.close(e)



# -- the calls -------------------------------------------------------------------
def kernel_call(module: ir.Module, funcs: dict, k: int, b: np.ndarray, threaded: bool,
                args: list, gather=None, out_m: int | None = None,
                rows_out: tuple | None = None, epi: tuple | None = None) -> ir.Value:
    """At the insertion point: the call of the AMX kernel (added to ``module``
    once per shape) of A (``args[0]``; a conv's rows table after it; then
    the epilogue's tensors and scalars) times ``b`` (B's bits [K, N'], N' a
    multiple of 16): its [M', N'] f32 result (M' = M padded to 32 rows;
    ``rows_out``: that shape, see kernel_text)."""
    from mlir.dialects import arith, func
    from onnx_mlir_py.ir_resources import resource_attr
    from onnx_mlir_py.passes.optimize.matmul_q8 import add_functions
    npad = b.shape[1]
    key = ("amx", k, npad, threaded, None if gather is None else (gather[0], tuple(gather[1])),
           out_m) + (() if rows_out is None else (rows_out, epi))
    if key not in funcs:
        funcs[key] = f"__om_amx_bf16_matmul_{k}x{npad}" + ("_par" if threaded else "") + \
            ("" if gather is None else f"_gather{len(funcs)}") + \
            ("" if out_m is None else f"_t{out_m}") + \
            ("" if rows_out is None else f"_nhwc{len(funcs)}")
        text = kernel_text(funcs[key], k, npad, threaded, gather, out_m, rows_out, epi)
        add_functions(module, ir.Module.parse("module {\n" + text + "\n}", module.context))
    packed = pack_b(b)
    pt = ir.RankedTensorType.get(list(packed.shape), ir.BF16Type.get())
    bp = arith.ConstantOp(pt, resource_attr(packed, "bf16_packed", pt)).result
    dyn = ir.ShapedType.get_dynamic_size()
    shape = list(rows_out) if rows_out is not None else \
        [dyn, npad] if out_m is None else [npad, out_m]
    return func.CallOp([ir.RankedTensorType.get(shape, ir.F32Type.get())],
                       ir.FlatSymbolRefAttr.get(funcs[key]), [args[0], bp] + list(args[1:])).results[0]
