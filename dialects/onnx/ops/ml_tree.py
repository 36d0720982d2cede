"""Tree ensembles of ai.onnx.ml: TreeEnsembleClassifier / TreeEnsembleRegressor
(v1, v3, v5) and TreeEnsemble (v5).

Every version's attributes are read once into one ``Forest`` (numpy arrays,
global node numbers): the verifier checks them (dangling children, cycles,
several roots, class or target ids out of range), the lowering
(``passes/onnx_to_linalg/ml_tree.py``) compiles it. A leaf is its own
child on both sides, so a fixed number of steps (the tree's depth) from the
root always ends on the leaf. BRANCH_MEMBER nodes (v5) become a chain of
BRANCH_EQ nodes, one per set member.

Results: classifier Y [N] (int64 labels) and Z [N, classes] f32; regressor
[N, n_targets] f32; TreeEnsemble [N, n_targets] of X's type.
"""
from __future__ import annotations

from dataclasses import dataclass

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import i64

ML = "ai.onnx.ml"
MODES = {"BRANCH_LEQ": 0, "BRANCH_LT": 1, "BRANCH_GTE": 2, "BRANCH_GT": 3,
         "BRANCH_EQ": 4, "BRANCH_NEQ": 5, "BRANCH_MEMBER": 6, "LEAF": -1}
POST = ("NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT")
AGGREGATE = ("AVERAGE", "SUM", "MIN", "MAX")
CLASSIFIER = (1, 3, 5)
REGRESSOR = (1, 3, 5)


@dataclass
class Forest:
    feature: np.ndarray        # int64 [n] (0 for leaves)
    thr: np.ndarray            # float64 [n]
    mode: np.ndarray           # int64 [n]: MODES value, -1 for leaves
    true: np.ndarray           # int64 [n] global child (a leaf: itself)
    false: np.ndarray          # int64 [n]
    missing_true: np.ndarray   # bool [n]
    roots: np.ndarray          # int64 [T]
    depth: np.ndarray          # int64 [T] steps from the root to the deepest leaf
    weights: np.ndarray        # float64 [n, K] summed contributions of each leaf
    hit: np.ndarray            # bool [n, K]: the leaf contributes to target k
    aggregate: str             # AVERAGE | SUM | MIN | MAX
    post: str                  # NONE | SOFTMAX | LOGISTIC | SOFTMAX_ZERO | PROBIT
    base: np.ndarray | None    # float64 base_values (None: not given)
    double: bool               # thresholds given as double tensors (v3 *_as_tensor, v5)
    labels: list | None = None  # classifier: class labels (ints or strings)
    class_ids: tuple = ()      # classifier: the distinct class ids of the weights

    @property
    def n_trees(self) -> int:
        return len(self.roots)

    @property
    def n_targets(self) -> int:
        return self.weights.shape[1]


def _attr(op: OnnxOp, name: str, dtype=None):
    """An attribute as a numpy array (None when absent); ``X_as_tensor``
    (v3+) wins over ``X``."""
    for n in (name + "_as_tensor", name):
        if n in op.spec.attributes and op.attrs.has(n):
            v = getattr(op.attrs, n)
            return np.asarray(v, dtype=dtype) if dtype is not None else np.asarray(v)
    return None


def _req(op: OnnxOp, name: str, dtype) -> np.ndarray:
    v = _attr(op, name, dtype)
    if v is None:
        op.fail(f"attribute {name} is required")
    return v.reshape(-1)


def _same_len(op: OnnxOp, arrays: dict) -> int:
    lens = {k: len(v) for k, v in arrays.items() if v is not None}
    if len(set(lens.values())) > 1:
        op.fail("attributes " + ", ".join(f"{k} ({n})" for k, n in lens.items()) +
                " must have the same length")
    return next(iter(lens.values()), 0)


def _finish(op: OnnxOp, feature, thr, mode, true, false, mt, roots, n_targets,
            contrib, agg, post, base, double) -> Forest:
    """Checks the node graph, computes depths; ``contrib``: (node, target, weight)."""
    n = len(feature)
    leaf = mode < 0
    true, false = true.copy(), false.copy()
    idx = np.arange(n)
    true[leaf], false[leaf] = idx[leaf], idx[leaf]
    bad = ~leaf & ((true < 0) | (true >= n) | (false < 0) | (false >= n))
    if bad.any():
        op.fail(f"node {int(np.argmax(bad))} has a child that is not a node of its tree")
    if (~leaf & (feature < 0)).any():
        op.fail("a negative feature id")
    feature = np.where(leaf, 0, feature)
    depth = []
    for r in roots:
        d, frontier = 0, {int(r)}
        while True:
            nxt = {int(c) for i in frontier if not leaf[i] for c in (true[i], false[i])}
            if not nxt:
                break
            d += 1
            if d > n:
                op.fail("the trees have a cycle")
            frontier = nxt
        depth.append(d)
    k = n_targets
    weights, hit = np.zeros((n, k)), np.zeros((n, k), bool)
    for node, t, w in contrib:
        if not 0 <= t < k:
            op.fail(f"target/class id {t} out of range [0, {k - 1}]")
        if not leaf[node]:
            op.fail(f"weights given for node {node}, which is not a leaf")
        weights[node, t] += w
        hit[node, t] = True
    if post not in POST:
        op.fail(f"post_transform {post!r} is not one of {', '.join(POST)}")
    if agg not in AGGREGATE:
        op.fail(f"aggregate_function {agg!r} is not one of {', '.join(AGGREGATE)}")
    return Forest(feature.astype(np.int64), thr.astype(np.float64), mode.astype(np.int64),
                  true.astype(np.int64), false.astype(np.int64), mt.astype(bool),
                  np.asarray(roots, np.int64), np.asarray(depth, np.int64), weights, hit,
                  agg, post, base, double)


def _forest_v1(op: OnnxOp, n_targets: int, prefix: str, agg: str) -> Forest:
    """v1/v3/v5 TreeEnsembleClassifier/Regressor: nodes named by (tree, node id)."""
    tids, nids = _req(op, "nodes_treeids", np.int64), _req(op, "nodes_nodeids", np.int64)
    feat = _req(op, "nodes_featureids", np.int64)
    modes = op.attrs.nodes_modes or []
    thr = _req(op, "nodes_values", np.float64)
    tn, fn = _req(op, "nodes_truenodeids", np.int64), _req(op, "nodes_falsenodeids", np.int64)
    mt = _attr(op, "nodes_missing_value_tracks_true", np.int64)
    n = _same_len(op, {"nodes_treeids": tids, "nodes_nodeids": nids, "nodes_featureids": feat,
                       "nodes_modes": modes, "nodes_values": thr, "nodes_truenodeids": tn,
                       "nodes_falsenodeids": fn,
                       "nodes_missing_value_tracks_true": None if mt is None or not len(mt)
                       else mt})
    if n == 0:
        op.fail("the ensemble has no nodes")
    unknown = sorted({m for m in modes if m not in MODES or m == "BRANCH_MEMBER"})
    if unknown:
        op.fail(f"unknown node mode(s) {unknown}")
    mode = np.array([MODES[m] for m in modes], np.int64)
    where = {}
    for i, key in enumerate(zip(tids.tolist(), nids.tolist())):
        if key in where:
            op.fail(f"node id {key[1]} appears twice in tree {key[0]}")
        where[key] = i
    t_glob = np.array([where.get((t, c), -1) for t, c in zip(tids.tolist(), tn.tolist())])
    f_glob = np.array([where.get((t, c), -1) for t, c in zip(tids.tolist(), fn.tolist())])
    dangling = (mode >= 0) & ((t_glob < 0) | (f_glob < 0))
    if dangling.any():
        i = int(np.argmax(dangling))
        op.fail(f"node {int(nids[i])} of tree {int(tids[i])} has a child that is not a node "
                f"of its tree")
    children = set(t_glob[mode >= 0].tolist()) | set(f_glob[mode >= 0].tolist())
    roots, trees = [], []
    for t in dict.fromkeys(tids.tolist()):
        rs = [i for i in np.nonzero(tids == t)[0].tolist() if i not in children]
        if len(rs) != 1:
            op.fail(f"tree {t} has {len(rs)} root nodes (nodes no other node points to), "
                    f"expected 1")
        roots.append(rs[0])
        trees.append(t)
    ct, cn = _req(op, prefix + "_treeids", np.int64), _req(op, prefix + "_nodeids", np.int64)
    cid, cw = _req(op, prefix + "_ids", np.int64), _req(op, prefix + "_weights", np.float64)
    _same_len(op, {prefix + "_treeids": ct, prefix + "_nodeids": cn, prefix + "_ids": cid,
                   prefix + "_weights": cw})
    contrib = []
    for t, nd, c, w in zip(ct.tolist(), cn.tolist(), cid.tolist(), cw.tolist()):
        if (t, nd) not in where:
            op.fail(f"weight for node {nd} of tree {t}, which does not exist")
        contrib.append((where[(t, nd)], c, w))
    mt = np.zeros(n, bool) if mt is None or not len(mt) else mt != 0
    base = _attr(op, "base_values", np.float64)
    double = any(op.attrs.has(a) for a in op.spec.attributes if a.endswith("_as_tensor"))
    f = _finish(op, feat, thr, mode, t_glob, f_glob, mt, roots, n_targets, contrib, agg,
                op.attrs.post_transform, None if base is None else base.reshape(-1), double)
    f.class_ids = tuple(sorted(set(cid.tolist())))
    return f


def _member_sets(op: OnnxOp, mode) -> dict:
    """{node: its membership set} for the BRANCH_MEMBER nodes, in node order."""
    members = [i for i in range(len(mode)) if mode[i] == MODES["BRANCH_MEMBER"]]
    if not members:
        return {}
    mv = _attr(op, "membership_values", np.float64)
    if mv is None:
        op.fail("BRANCH_MEMBER nodes need membership_values")
    sets, cur = [], []
    for v in mv.reshape(-1).tolist():
        if np.isnan(v):
            sets.append(cur)
            cur = []
        else:
            cur.append(v)
    if len(sets) != len(members) or cur:
        op.fail(f"membership_values has {len(sets)} NaN-terminated sets for "
                f"{len(members)} BRANCH_MEMBER nodes")
    return dict(zip(members, sets))


def _forest_v5(op: OnnxOp) -> Forest:
    """TreeEnsemble v5: interior nodes and leaves in separate arrays. A
    BRANCH_MEMBER node with set {a, b, ...} becomes BRANCH_EQ a (true: its
    true child, false: a new node BRANCH_EQ b, ...; the last one's false child
    is the node's), appended after the interior nodes."""
    feat = _req(op, "nodes_featureids", np.int64)
    thr = _req(op, "nodes_splits", np.float64)
    mode = _req(op, "nodes_modes", np.int64)
    tn, fn = _req(op, "nodes_truenodeids", np.int64), _req(op, "nodes_falsenodeids", np.int64)
    tl, fl = _req(op, "nodes_trueleafs", np.int64), _req(op, "nodes_falseleafs", np.int64)
    mt = _attr(op, "nodes_missing_value_tracks_true", np.int64)
    lt, lw = _req(op, "leaf_targetids", np.int64), _req(op, "leaf_weights", np.float64)
    m = _same_len(op, {"nodes_featureids": feat, "nodes_splits": thr, "nodes_modes": mode,
                       "nodes_truenodeids": tn, "nodes_falsenodeids": fn,
                       "nodes_trueleafs": tl, "nodes_falseleafs": fl,
                       "nodes_missing_value_tracks_true": mt})
    n_leaves = _same_len(op, {"leaf_targetids": lt, "leaf_weights": lw})
    if ((mode < 0) | (mode > 6)).any():
        op.fail(f"unknown node mode {int(mode[(mode < 0) | (mode > 6)][0])}")
    mt = np.zeros(m, bool) if mt is None else mt != 0
    sets = _member_sets(op, mode)
    extra = sum(max(len(s), 1) - 1 for s in sets.values())
    leaf0 = m + extra

    def glob(c, is_leaf):
        if is_leaf:
            return leaf0 + c if 0 <= c < n_leaves else -1
        return c if 0 <= c < m else -1
    feat, thr, mode, mt = feat.tolist(), thr.tolist(), mode.tolist(), mt.tolist()
    tg = [glob(c, t) for c, t in zip(tn.tolist(), tl.tolist())]
    fg = [glob(c, f) for c, f in zip(fn.tolist(), fl.tolist())]
    for i, s in sets.items():
        s = s or [float("nan")]          # an empty set: never equal
        mode[i], thr[i], last_false, prev = MODES["BRANCH_EQ"], s[0], fg[i], i
        for v in s[1:]:
            j = len(feat)
            feat.append(feat[i]); thr.append(v); mode.append(MODES["BRANCH_EQ"])  # noqa: E702
            tg.append(tg[i]); fg.append(last_false); mt.append(False)  # noqa: E702
            fg[prev] = j
            prev = j
    pad = lambda a, v: np.concatenate([np.asarray(a), np.full(n_leaves, v)])  # noqa: E731
    roots = []
    for r in _req(op, "tree_roots", np.int64).tolist():
        if not 0 <= r < m:
            op.fail(f"tree root {r} is not a node")
        # a tree that is one leaf: both branches the same leaf
        one_leaf = tl[r] and fl[r] and tn[r] == fn[r]
        roots.append(tg[r] if one_leaf else r)
    contrib = [(leaf0 + i, t, w) for i, (t, w) in enumerate(zip(lt.tolist(), lw.tolist()))]
    agg, post = op.attrs.aggregate_function, op.attrs.post_transform
    if not 0 <= agg < 4 or not 0 <= post < 5:
        op.fail(f"aggregate_function {agg} or post_transform {post} out of range")
    return _finish(op, pad(feat, 0), pad(thr, 0.0), pad(mode, -1), pad(tg, -1), pad(fg, -1),
                   pad(mt, False), roots, op.attrs.n_targets or 0, contrib,
                   AGGREGATE[agg], POST[post], None, True)


def classifier_labels(op: OnnxOp) -> list:
    ints, strs = op.attrs.classlabels_int64s, op.attrs.classlabels_strings
    if bool(ints) == bool(strs):
        op.fail("exactly one of classlabels_int64s and classlabels_strings must be given")
    return list(ints or strs)


def forest(op: OnnxOp) -> Forest:
    """The ensemble of a tree op (checked; ``op.fail`` on malformed attributes)."""
    if op.op_type == "TreeEnsemble":
        f = _forest_v5(op)
    elif op.op_type == "TreeEnsembleClassifier":
        labels = classifier_labels(op)
        f = _forest_v1(op, len(labels), "class", "SUM")
        f.labels = labels
        if f.base is not None and len(f.base) not in (1, len(labels)):
            op.fail(f"base_values has {len(f.base)} values for {len(labels)} classes")
    else:
        k = op.attrs.n_targets or 1
        f = _forest_v1(op, k, "target", op.attrs.aggregate_function)
        if f.base is not None and len(f.base) not in (0, k) and not (k == 1 and len(f.base) == 1):
            op.fail(f"base_values has {len(f.base)} values for {k} targets")
    if f.n_targets < 1:
        op.fail("n_targets must be at least 1")
    return f


def _rows(op: OnnxOp):
    x = op.shape(op.input(0))
    if x is not None and len(x) != 2:
        op.fail(f"X must be 2-D [N, features], got rank {len(x)}")
    return None if x is None else x[0]


@shape_rule("TreeEnsembleClassifier", *CLASSIFIER, domain=ML)
def _classifier_shape(op: OnnxOp):
    labels = classifier_labels(op)
    et = ir.Type.parse("!onnx.string") if op.attrs.classlabels_strings else i64()
    n = _rows(op)
    return [tensor((n,), et), tensor((n, len(labels)), ir.F32Type.get())]


@shape_rule("TreeEnsembleRegressor", *REGRESSOR, domain=ML)
def _regressor_shape(op: OnnxOp):
    return [tensor((_rows(op), op.attrs.n_targets or 1), ir.F32Type.get())]


@shape_rule("TreeEnsemble", 5, domain=ML)
def _tree_ensemble_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    return [None if et is None else tensor((_rows(op), op.attrs.n_targets), et)]


def _verify(op: OnnxOp):
    forest(op)


for _op, _vs in (("TreeEnsembleClassifier", CLASSIFIER), ("TreeEnsembleRegressor", REGRESSOR),
                 ("TreeEnsemble", (5,))):
    verifier(_op, *_vs, domain=ML)(_verify)
