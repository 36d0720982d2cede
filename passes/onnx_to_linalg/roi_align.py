"""RoiAlign -> one linalg.generic over [num_rois, C, out_h, out_w].

Per result element the body computes its roi's box (rois[n] * spatial_scale,
minus 0.5 with 'half_pixel'; 'output_half_pixel', v10's behaviour, forces a
malformed roi to at least 1 x 1), the bin size and the sampling grid
(sampling_ratio, or ceil(roi size / output size) when it is 0: a run-time
count), then loops (scf.for) over the grid's samples. Each sample is the
bilinear interpolation of X[batch_indices[n], c] with onnx.reference's edge
rules: a sample below -1 or past H (W) gives 0, one in [-1, 0) is clamped to
0, one at or past H-1 (W-1) reads row H-1 (column W-1) only. 'avg' sums the
samples and divides by max(grid_h * grid_w, 1); 'max' takes the largest of
the four weighted taps of each sample (w1*v1, .., w4*v4) and the largest
over the samples (onnx.reference and onnxruntime), 0 without samples.
Arithmetic in X's type (f32 for f16 / bf16), as onnx.reference.

batch_indices are checked in [0, N) before the kernel (a run-time error
naming the node; constant ones at compile time), rois against [num_rois, 4]
and batch_indices against [num_rois], so no read is out of bounds.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, math, tensor

from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.roi_align import coordinate_mode
from onnx_mlir_py.passes.onnx_to_linalg.builder import (LoweringContext, affine_map,
                                                        convert_scalar, is_float)
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, index_of
from onnx_mlir_py.passes.onnx_to_linalg.index_bounds import require_indices
from onnx_mlir_py.passes.onnx_to_linalg.loops import for_nest, if_then_else
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import loop_index
from onnx_mlir_py.registry import lowering

F = arith.CmpFPredicate
I = arith.CmpIPredicate


@lowering("RoiAlign", 10, 16, 22)
def lower_roi_align(op: OnnxOp, b: LoweringContext):
    x, rois, bi = op.input(0), op.input(1), op.input(2)
    for v, r, what in ((x, 4, "X"), (rois, 2, "rois"), (bi, 1, "batch_indices")):
        if b.ranked(op, v, what).rank != r:
            op.fail(f"input '{what}' must have rank {r}")
    et = x.type.element_type
    if not is_float(et) or rois.type.element_type != et:
        op.fail(f"X and rois must have the same float type (got {et}, "
                f"{rois.type.element_type})")
    ct = ir.F32Type.get() if et.width < 32 else et
    half_pixel = coordinate_mode(op) == "half_pixel"
    is_max = op.attrs.mode == "max"
    oh, ow = op.attrs.output_height, op.attrs.output_width
    sr, scale = op.attrs.sampling_ratio, op.attrs.spatial_scale

    chk = checks(op, b)
    n_rois, four, n_bi = b.ixdim(rois, 0), b.ixdim(rois, 1), b.ixdim(bi, 0)
    chk.require(D.eq(four, 4), "rois has {0} columns: expected 4", four)
    chk.require(D.eq(n_rois, n_bi), "rois has {0} rois but batch_indices has {1} entries",
                n_rois, n_bi)
    require_indices(op, b, bi, b.dim(x, 0), "X axis 0 (batch)", what="batch index",
                    negative=False)

    out_dims = [index_of(n_rois), b.dim(x, 1), oh, ow]
    H, W = b.as_index(b.dim(x, 2)), b.as_index(b.dim(x, 3))
    i64, idx = ir.IntegerType.get_signless(64), ir.IndexType.get()

    def c(v: float) -> ir.Value:
        return b.const(float(v), ct)

    def of_index(i: ir.Value) -> ir.Value:
        return arith.sitofp(ct, arith.index_cast(i64, i))

    def to_index(f: ir.Value) -> ir.Value:
        return arith.index_cast(idx, arith.fptosi(i64, f))

    def body(_o):
        n, ch, ph, pw = (loop_index(k) for k in range(4))
        bidx = tensor.extract(bi, [n])
        bidx = arith.index_cast(idx, bidx)
        off = c(0.5 if half_pixel else 0.0)

        def corner(k):
            r = convert_scalar(tensor.extract(rois, [n, b.index(k)]), False, ct)
            return arith.subf(arith.mulf(r, c(scale)), off)
        sw, sh, ew, eh = (corner(k) for k in range(4))
        rw, rh = arith.subf(ew, sw), arith.subf(eh, sh)
        if not half_pixel:   # malformed rois are forced to 1 x 1
            rw, rh = arith.maximumf(rw, c(1)), arith.maximumf(rh, c(1))
        bh, bw = arith.divf(rh, c(oh)), arith.divf(rw, c(ow))
        if sr > 0:
            gh = gw = b.index(sr)
        else:
            gh = to_index(math.ceil(arith.divf(rh, c(oh))))
            gw = to_index(math.ceil(arith.divf(rw, c(ow))))
        ghf, gwf = of_index(gh), of_index(gw)
        Hf, Wf = of_index(H), of_index(W)
        y0 = arith.addf(sh, arith.mulf(of_index(ph), bh))
        x0 = arith.addf(sw, arith.mulf(of_index(pw), bw))
        nonempty = arith.andi(arith.cmpi(I.sgt, H, b.index(0)),
                              arith.cmpi(I.sgt, W, b.index(0)))

        def axis(p0, size, grid, i, L, Lf):
            """Sample coordinate i along one axis -> (low, high, l, h), and
            whether it is inside [-1, L]."""
            p = arith.addf(p0, arith.divf(arith.mulf(arith.addf(of_index(i), c(0.5)), size),
                                          grid))
            inside = arith.andi(arith.cmpf(F.OGE, p, c(-1)), arith.cmpf(F.OLE, p, Lf))
            p = arith.maximumf(p, c(0))
            low = to_index(p)
            last = arith.subi(L, b.index(1))
            at_end = arith.cmpi(I.sge, low, last)
            low = arith.select(at_end, last, low)
            high = arith.select(at_end, last, arith.addi(low, b.index(1)))
            p = arith.select(at_end, of_index(last), p)
            lw = arith.subf(p, of_index(low))
            return low, high, lw, arith.subf(c(1), lw), inside

        def sample(ivs, carried):
            (iy, ix), (acc,) = ivs, carried
            yl, yh, ly, hy, in_y = axis(y0, bh, ghf, iy, H, Hf)
            xl, xh, lx, hx, in_x = axis(x0, bw, gwf, ix, W, Wf)
            ok = arith.andi(arith.andi(in_y, in_x), nonempty)

            def taps():
                def tap(r, col, w):
                    v = convert_scalar(tensor.extract(x, [bidx, ch, r, col]), False, ct)
                    return arith.mulf(w, v)
                t = [tap(yl, xl, arith.mulf(hy, hx)), tap(yl, xh, arith.mulf(hy, lx)),
                     tap(yh, xl, arith.mulf(ly, hx)), tap(yh, xh, arith.mulf(ly, lx))]
                if is_max:
                    return [arith.maximumf(arith.maximumf(t[0], t[1]),
                                           arith.maximumf(t[2], t[3]))]
                return [arith.addf(arith.addf(arith.addf(t[0], t[1]), t[2]), t[3])]
            v, = if_then_else(ok, [ct], taps, lambda: [c(0)])
            return [arith.maximumf(acc, v) if is_max else arith.addf(acc, v)]

        init = c(float("-inf")) if is_max else c(0)
        acc, = for_nest(b, [gh, gw], [init], sample)
        if is_max:   # no sample (an empty grid) gives 0
            any_ = arith.andi(arith.cmpi(I.sgt, gh, b.index(0)),
                              arith.cmpi(I.sgt, gw, b.index(0)))
            res = arith.select(any_, acc, c(0))
        else:
            count = arith.maxsi(arith.muli(gh, gw), b.index(1))
            res = arith.divf(acc, of_index(count))
        return convert_scalar(res, False, et)

    init = b.empty(out_dims, et)
    y = b.generic([], [init], [affine_map(4, [0, 1, 2, 3])], ["parallel"] * 4, body)[0]
    return [b.cast_to(y, b.result_type(op))]
