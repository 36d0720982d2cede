"""Tree ensembles (TreeEnsembleClassifier/Regressor v1/3/5, TreeEnsemble v5)
compiled to traversal loops over constant node arrays, not an interpreter.

The ensemble (``dialects/onnx/ops/ml_tree.py::forest``) becomes constant
arrays indexed by global node number: feature, threshold, true child, false
child (a leaf is its own child), and, only when the model needs them, the
comparison mode and the missing-value flag. Rows are taken in blocks of
``BLOCK``; for each tree, every row of the block starts at the root and
takes ``depth(tree)`` steps

    idx[r] = cond(x[r, feature[idx[r]]], threshold[idx[r]]) ? true[idx[r]] : false[idx[r]]

one ``linalg.generic`` over the block's rows per step: no branch, and the
rows' chains are independent (the CPU overlaps their loads; LLVM may use
gathers). Then each row adds (or min/maxes) its leaf's weights row
``W[leaf_row[idx[r]], :]`` into the block's [rows, K] accumulator.
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
from mlir.dialects import arith, math as mmath, scf, tensor

from onnx_mlir_py import ir_linalg as linalg
from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.ml_tree import CLASSIFIER, ML, REGRESSOR, Forest, forest
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map
from onnx_mlir_py.passes.onnx_to_linalg.ml_post import (argmax_labels, col0_map, dense_const,
                                                        post_transform, rowwise, to_float)
from onnx_mlir_py.passes.onnx_to_linalg.ml_outputs import label_table
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import (extract_slice, imin, insert_slice,
                                                            isub, loop_index)

F = arith.CmpFPredicate
BLOCK = 128
# mode -> ordered predicate; NEQ is unordered (NaN != t is true), as in C
_PRED = {0: F.OLE, 1: F.OLT, 2: F.OGE, 3: F.OGT, 4: F.OEQ, 5: F.UNE}


def _cond(b: LoweringContext, f: Forest, v, t, mode, mt):
    """The branch condition at one node (v: the feature value, t: threshold)."""
    modes = sorted(set(f.mode[f.mode >= 0].tolist())) or [0]
    if len(modes) == 1:
        c = arith.cmpf(_PRED[modes[0]], v, t)
    else:
        c = arith.cmpf(_PRED[modes[-1]], v, t)
        i8 = ir.IntegerType.get_signless(8)
        for m in modes[:-1]:
            c = arith.select(arith.cmpi(arith.CmpIPredicate.eq, mode, b.const(m, i8)),
                             arith.cmpf(_PRED[m], v, t), c)
    if mt is not None:
        nan = arith.cmpf(F.UNO, v, v)
        c = arith.ori(c, arith.andi(nan, arith.trunci(ir.IntegerType.get_signless(1), mt)))
    return c


def _accumulate(f: Forest):
    """(init, combine) of the aggregate; absent weights are the init value."""
    if f.aggregate == "MIN":
        return np.inf, arith.minimumf
    if f.aggregate == "MAX":
        return -np.inf, arith.maximumf
    return 0.0, arith.addf


def traverse(b: LoweringContext, op: OnnxOp, x: ir.Value, f: Forest, ct: ir.Type) -> ir.Value:
    """[N, F] -> [N, K] aggregated leaf weights (MIN/MAX: +-inf where no leaf
    contributed), in the compute type ``ct``."""
    i32, i8, ix = ir.IntegerType.get_signless(32), ir.IntegerType.get_signless(8), \
        ir.IndexType.get()
    n, nf = b.dim(x, 0), b.dim(x, 1)
    k = f.n_targets
    max_feat = int(f.feature.max()) if len(f.feature) else 0
    if isinstance(nf, int):
        if nf <= max_feat:
            op.fail(f"the trees read feature {max_feat} but X has {nf} features")
    else:
        b.require(arith.cmpi(arith.CmpIPredicate.sgt, nf, b.index(max_feat)),
                  f"node '{op.name}' ({op.op_type}): the trees read feature {max_feat} "
                  f"but X has {{0}} features", nf)
    init, combine = _accumulate(f)
    leaves = np.nonzero(f.mode < 0)[0]
    leaf_row = np.zeros(len(f.mode), np.int64)
    leaf_row[leaves] = np.arange(len(leaves))
    w = np.where(f.hit, f.weights, init)[leaves]
    feat, thr = dense_const(f.feature, i32), dense_const(f.thr, ct)
    left, right = dense_const(f.true, i32), dense_const(f.false, i32)
    mixed = len(set(f.mode[f.mode >= 0].tolist())) > 1
    mode = dense_const(f.mode, i8) if mixed else None
    mt = dense_const(f.missing_true, i8) if f.missing_true.any() else None
    rows_c, w_c = dense_const(leaf_row, i32), dense_const(w, ct)
    roots, depth = dense_const(f.roots, i32), dense_const(f.depth, i32)

    def at(t, i):
        return tensor.extract(t, [i])

    out = b.empty([n, k], ct)
    blocks = scf.ForOp(b.index(0), b.as_index(n), b.index(BLOCK), [out])
    with ir.InsertionPoint(blocks.body):
        s = blocks.induction_variable
        nb = imin(b, b.index(BLOCK), isub(b, n, s))
        xs = extract_slice(b, x, [s, 0], [nb, nf])
        acc0 = linalg.fill(b.const(init, ct), outs=[tensor.empty([nb, k], ct)])
        idx_buf = tensor.empty([nb], i32)
        trees = scf.ForOp(b.index(0), b.index(f.n_trees), b.index(1), [acc0, idx_buf])
        with ir.InsertionPoint(trees.body):
            t = trees.induction_variable
            acc, idx = trees.inner_iter_args
            idx = linalg.fill(at(roots, t), outs=[idx])
            steps = scf.ForOp(b.index(0), arith.index_cast(ix, at(depth, t)), b.index(1), [idx])
            with ir.InsertionPoint(steps.body):
                def step(cur):
                    i = arith.index_cast(ix, cur)
                    v = tensor.extract(xs, [loop_index(0), arith.index_cast(ix, at(feat, i))])
                    c = _cond(b, f, v, at(thr, i), None if mode is None else at(mode, i),
                              None if mt is None else at(mt, i))
                    return arith.select(c, at(left, i), at(right, i))
                nxt = b.generic([], [steps.inner_iter_args[0]], [affine_map(1, [0])],
                                ["parallel"], step)
                scf.YieldOp(nxt)

            def add(cur, a):
                r = arith.index_cast(ix, at(rows_c, arith.index_cast(ix, cur)))
                return combine(a, tensor.extract(w_c, [r, loop_index(1)]))
            acc = b.generic([steps.results[0]], [acc], [affine_map(2, [0]), affine_map(2, [0, 1])],
                            ["parallel", "parallel"], add)[0]
            scf.YieldOp([acc, steps.results[0]])
        scf.YieldOp([insert_slice(trees.results[0], blocks.inner_iter_args[0], [s, 0], [nb, k])])
    return blocks.results[0]


def finish_sum(b: LoweringContext, f: Forest, acc: ir.Value, dims) -> ir.Value:
    """Aggregate -> raw scores: AVERAGE divides by the tree count, MIN/MAX
    targets no leaf reached are 0 (onnxruntime's has_score), then base_values."""
    et = acc.type.element_type
    base = f.base if f.base is not None and len(f.base) else None
    if base is not None and len(base) == 1:
        base = np.repeat(base, f.n_targets)
    bc = dense_const(base, et) if base is not None else None
    inf = b.const(np.inf, et)

    def body(v):
        if f.aggregate == "AVERAGE":
            v = arith.divf(v, b.const(float(f.n_trees), et))
        elif f.aggregate in ("MIN", "MAX"):
            v = arith.select(arith.cmpf(F.OEQ, mmath.absf(v), inf), b.const(0.0, et), v)
        if bc is not None:
            v = arith.addf(v, tensor.extract(bc, [loop_index(1)]))
        return v
    return rowwise(b, acc, dims, body)


def compute_type(f: Forest, x: ir.Value) -> ir.Type:
    """f64 when the thresholds are doubles or X is (a double compared with a
    float threshold in f64, as C++ promotes it: rounding X to f32 first could
    move it onto the threshold), else f32."""
    if f.double or str(x.type.element_type) == "f64":
        return ir.F64Type.get()
    return ir.F32Type.get()


def _input(b: LoweringContext, op: OnnxOp) -> ir.Value:
    x = op.input(0)
    if b.ranked(op, x, "X").rank != 2:
        op.fail("X must be 2-D [N, features]")
    return x


def _regress(b: LoweringContext, op: OnnxOp, f, x: ir.Value, ct: ir.Type) -> ir.Value:
    """The forest's summed targets for the rows of ``x``, computed in ``ct``,
    with the post transform (PROBIT, or any one over several targets)."""
    acc = traverse(b, op, to_float(b, x, ct), f, ct)
    dims = [b.dim(x, 0), f.n_targets]
    y = finish_sum(b, f, acc, dims)
    if f.n_targets > 1 or f.post == "PROBIT":
        y = post_transform(b, y, dims, f.post)
    return y


@lowering("TreeEnsembleRegressor", *REGRESSOR, domain=ML)
def lower_tree_regressor(op: OnnxOp, b: LoweringContext):
    f = forest(op)
    x = _input(b, op)
    y = _regress(b, op, f, x, compute_type(f, x))
    return [to_float(b, y, ir.F32Type.get())]


@lowering("TreeEnsemble", 5, domain=ML)
def lower_tree_ensemble(op: OnnxOp, b: LoweringContext):
    f = forest(op)
    x = _input(b, op)
    et = x.type.element_type
    ct = ir.F64Type.get() if str(et) == "f64" else ir.F32Type.get()
    return [to_float(b, _regress(b, op, f, x, ct), et)]


@lowering("TreeEnsembleClassifier", *CLASSIFIER, domain=ML)
def lower_tree_classifier(op: OnnxOp, b: LoweringContext):
    """Scores as onnx.reference: base_values (1 or one per class) plus the
    leaves' class weights; with weights for one class only and two labels
    (binary), column 1 is that score and column 0 its complement (1 - s for
    NONE/PROBIT, -s otherwise); then post_transform; the label is the class
    of the first largest final score."""
    f = forest(op)
    labels = label_table(op)        # string labels: their indices (ml_outputs.py)
    x = _input(b, op)
    k = f.n_targets
    binary = len(f.class_ids) == 1
    if k < 2:
        op.fail("a classifier with a single class label is not supported")
    if binary and k != 2:
        op.fail(f"weights for one class only, but {k} class labels")
    ct = compute_type(f, x)
    acc = traverse(b, op, to_float(b, x, ct), f, ct)
    dims = [b.dim(x, 0), k]
    s = finish_sum(b, f, acc, dims)
    if binary:
        one_minus = f.post in ("NONE", "PROBIT")

        def bin_body(v0, v):
            first = arith.cmpi(arith.CmpIPredicate.eq, loop_index(1), b.index(0))
            other = arith.subf(b.const(1.0, ct), v0) if one_minus else arith.negf(v0)
            return arith.select(first, other, v0)
        s = b.generic([s, s], [b.empty(dims, ct)],
                      [col0_map(), affine_map(2, [0, 1]),
                       affine_map(2, [0, 1])], ["parallel", "parallel"],
                      lambda v0, _v, _o: bin_body(v0, _v))[0]
    s = post_transform(b, s, dims, f.post)
    s = to_float(b, s, ir.F32Type.get())
    return [argmax_labels(b, s, dims, labels), s]

