"""NonMaxSuppression (10, 11), computed at run time in scf loops, in
onnxruntime's order and arithmetic.

For every batch b and class c (in that order):

1. the candidates are the boxes whose score is > score_threshold (all
   boxes when that input is absent), in box order;
2. a stable merge sort (``merge_sort.py``) orders them by descending
   score (equal scores: lower box index first, as onnxruntime);
3. greedily, a candidate is selected unless its IoU with a box already
   selected for (b, c) is > iou_threshold, until
   max_output_boxes_per_class boxes are selected (absent: 0, so nothing
   is selected; negative counts as 0).

The selected (b, c, box) rows are written to a scratch buffer of
B * C * min(N, max_output_boxes_per_class) rows (the most that can be
selected) and copied into the [num_selected, 3] result. Boxes are
[y1, x1, y2, x2] corners in any order (center_point_box=0) or
[x_center, y_center, width, height] (center_point_box=1); the IoU is
computed as onnxruntime does (its comparisons, float32 operation order).
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, tensor

from onnx_mlir_py import ir_linalg as linalg
from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.nms import nms_dims
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, index_t
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, index_of
from onnx_mlir_py.passes.onnx_to_linalg.loops import for_nest, if_then_else
from onnx_mlir_py.passes.onnx_to_linalg.merge_sort import sort_indices
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import extract_slice, to_index

F = arith.CmpFPredicate
I64 = lambda: ir.IntegerType.get_signless(64)  # noqa: E731


def _scalar_input(op: OnnxOp, b: LoweringContext, k: int, what: str) -> ir.Value | None:
    """The first element of optional input k (None when absent)."""
    v = op.input(k)
    if v is None:
        return None
    t = b.ranked(op, v, what)
    numel = D.product(b.ixdims(v))
    checks(op, b).require(D.ge(numel, 1), f"{what} must have one element, got {{0}}", numel)
    return tensor.extract(v, [b.index(0)] * t.rank)


def _box(boxes: ir.Value, bi: ir.Value, idx: ir.Value, b: LoweringContext, center: bool):
    """(ymin, xmin, ymax, xmax, area) of box idx of batch bi, as onnxruntime."""
    v = [tensor.extract(boxes, [bi, idx, b.index(j)]) for j in range(4)]
    if center:
        two = arith.constant(v[0].type, 2.0)
        hw, hh = arith.divf(v[2], two), arith.divf(v[3], two)
        return (arith.subf(v[1], hh), arith.subf(v[0], hw),
                arith.addf(v[1], hh), arith.addf(v[0], hw), arith.mulf(v[2], v[3]))

    def max_min(lhs, rhs):  # (min, max): lhs >= rhs ? (rhs, lhs) : (lhs, rhs)
        ge = arith.cmpf(F.OGE, lhs, rhs)
        return arith.select(ge, rhs, lhs), arith.select(ge, lhs, rhs)
    xmin, xmax = max_min(v[1], v[3])
    ymin, ymax = max_min(v[0], v[2])
    return ymin, xmin, ymax, xmax, arith.mulf(arith.subf(ymax, ymin), arith.subf(xmax, xmin))


def _suppresses(c, s, thr: ir.Value) -> ir.Value:
    """IoU(candidate c, selected s) > thr (i1), onnxruntime's SuppressByIOU."""
    def std_max(a, x):
        return arith.select(arith.cmpf(F.OLT, a, x), x, a)

    def std_min(a, x):
        return arith.select(arith.cmpf(F.OLT, x, a), x, a)
    ix0, ix1 = std_max(c[1], s[1]), std_min(c[3], s[3])
    iy0, iy1 = std_max(c[0], s[0]), std_min(c[2], s[2])
    inter = arith.mulf(arith.subf(ix1, ix0), arith.subf(iy1, iy0))
    union = arith.subf(arith.addf(c[4], s[4]), inter)
    iou = arith.divf(inter, union)
    zero = arith.constant(inter.type, 0.0)
    ok = arith.andi(arith.cmpf(F.UGT, ix1, ix0), arith.cmpf(F.UGT, iy1, iy0))
    ok = arith.andi(ok, arith.cmpf(F.UGT, inter, zero))
    return arith.andi(ok, arith.cmpf(F.OGT, iou, thr))


@lowering("NonMaxSuppression", 10, 11)
def lower_nms(op: OnnxOp, b: LoweringContext):
    boxes, scores = op.input(0), op.input(1)
    for v, what in ((boxes, "boxes"), (scores, "scores")):
        t = b.ranked(op, v, what)
        if t.rank != 3 or not isinstance(t.element_type, ir.F32Type):
            op.fail(f"{what} must be a 3-D float tensor, got {t}")
    center = int(op.attrs.center_point_box)
    if center not in (0, 1):
        op.fail(f"center_point_box must be 0 or 1, got {center}")
    B, C, N = (index_of(d) for d in nms_dims(checks(op, b), b.ixdims(boxes), b.ixdims(scores)))
    B, C, N = (b.as_index(d) for d in (B, C, N))
    f32, i64, idx = ir.F32Type.get(), I64(), index_t()
    mx = _scalar_input(op, b, 2, "max_output_boxes_per_class")
    mx = b.index(0) if mx is None else arith.maxsi(to_index(mx), b.index(0))
    iou = _scalar_input(op, b, 3, "iou_threshold")
    if iou is None:
        iou = arith.constant(f32, 0.0)
    ok = arith.andi(arith.cmpf(F.OGE, iou, arith.constant(f32, 0.0)),
                    arith.cmpf(F.OLE, iou, arith.constant(f32, 1.0)))
    b.require(ok, f"node '{op.name}' ({op.op_type}): iou_threshold must be in [0, 1]")
    score_thr = _scalar_input(op, b, 4, "score_threshold")
    cap = arith.muli(arith.muli(B, C), arith.minsi(N, mx))
    sel0 = b.empty([cap, 3], i64)
    buf0 = b.empty([arith.muli(N, b.index(2))], i64)

    def per_class(ivs, carried):
        bi, ci = ivs
        sel, total, buf = carried

        def score(k):
            return tensor.extract(scores, [bi, ci, k])

        def add_candidate(kv, cc):
            (k,) = kv
            cbuf, nc = cc
            cbuf = tensor.insert(arith.index_cast(i64, k), cbuf, [nc])
            if score_thr is None:
                return [cbuf, arith.addi(nc, b.index(1))]
            keep = arith.cmpf(F.OGT, score(k), score_thr)
            return [cbuf, arith.addi(nc, arith.index_cast(idx, arith.extui(i64, keep)))]
        buf, nc = for_nest(b, [N], [buf, b.index(0)], add_candidate)
        buf, off = sort_indices(b, buf, N, nc,
                                lambda p, q: arith.cmpf(F.OGT, score(p), score(q)))

        def greedy(kv, cc):
            (k,) = kv
            s_acc, tot, nsel = cc
            p = to_index(tensor.extract(buf, [arith.addi(off, k)]))
            active = arith.cmpi(arith.CmpIPredicate.slt, nsel, mx)
            cand = _box(boxes, bi, p, b, center == 1)
            start = arith.subi(tot, nsel)

            def against(sv, sc):
                (j,) = sv
                q = to_index(tensor.extract(s_acc, [arith.addi(start, j), b.index(2)]))
                return [arith.ori(sc[0], _suppresses(cand, _box(boxes, bi, q, b, center == 1),
                                                     iou))]
            n_check = arith.select(active, nsel, b.index(0))
            sup = for_nest(b, [n_check], [arith.constant(ir.IntegerType.get_signless(1), 0)],
                           against)[0]
            take = arith.andi(active, arith.xori(sup, arith.constant(sup.type, 1)))

            def write():
                row = s_acc
                for j, v in enumerate((bi, ci, p)):
                    row = tensor.insert(arith.index_cast(i64, v), row, [tot, b.index(j)])
                return [row, arith.addi(tot, b.index(1)), arith.addi(nsel, b.index(1))]
            return if_then_else(take, [s_acc.type, idx, idx], write, lambda: [s_acc, tot, nsel])
        sel, total, _ = for_nest(b, [nc], [sel, total, b.index(0)], greedy)
        return [sel, total, buf]
    sel, total, _ = for_nest(b, [B, C], [sel0, b.index(0), buf0], per_class)
    piece = extract_slice(b, sel, [0, 0], [total, 3])
    return [linalg.copy(piece, outs=[b.empty([total, 3], i64)])]
