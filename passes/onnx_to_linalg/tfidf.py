"""TfIdfVectorizer -> n-gram counting loops over a compile-time trie
(``dialects/onnx/ops/tfidf.py::ngram_table``), onnx.reference's semantics:

1. every element of X becomes its index in the sorted pool vocabulary (-1:
   in no n-gram), by the branch-free binary search of LabelEncoder
   (strings compared with om_str_cmp, once per element), or for integer
   pools of a narrow range one load from a table over [min, max];
2. for each row, skip distance d in 1..max_skip_count+1 and start s, the
   n-gram X[s], X[s+d], ... walks the trie, n = 1..max_gram_length
   unrolled: a child is a dense lookup from the root, then a binary search
   of the parent's children (a run of the edges sorted by parent, token;
   as many steps as the widest fan-out needs); an n-gram of size >=
   min_gram_length that is in the pool counts in its column (unigrams only
   at d = 1, as the reference counts them once);
3. the counts (i32: rows longer than 2**31 / (skips * max_gram) items are
   refused) become Y: TF the count, IDF (count > 0) * weight (or 1),
   TFIDF count * weight (or the count).

[N, C] with N = 0 fails the call naming the node (as both runtimes do).
"""
from __future__ import annotations

import math

import mlir.ir as ir
import numpy as np
from mlir.dialects import arith, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.tfidf import ngram_table
from onnx_mlir_py.passes.onnx_to_linalg.builder import (DYN, LoweringContext, affine_map,
                                                        is_string_type)
from onnx_mlir_py.passes.onnx_to_linalg.loops import for_nest
from onnx_mlir_py.passes.onnx_to_linalg.ml_encoding import _search as lower_bound
from onnx_mlir_py.passes.onnx_to_linalg.ml_post import dense_const
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import loop_index

I = arith.CmpIPredicate
# integer pools spanning at most this many values (or 4 per item) use a table
DENSE_TOKENS = 1 << 16


def _i64() -> ir.Type:
    return ir.IntegerType.get_signless(64)


def _i32() -> ir.Type:
    return ir.IntegerType.get_signless(32)


def _c(v: int) -> ir.Value:
    return arith.constant(_i64(), int(v))


def _idx(v: ir.Value) -> ir.Value:
    return arith.index_cast(ir.IndexType.get(), v)


def _tokens(op: OnnxOp, b: LoweringContext, x: ir.Value, t, strings: bool) -> ir.Value:
    """X (as [N, C]) -> i64 vocabulary indices, -1 where not in the vocabulary."""
    from onnx_mlir_py.passes.onnx_to_linalg.strings_ml import call_i64, string_tensor
    n = len(t.vocab)
    if strings:
        keys = string_tensor(b, t.vocab)
        def cmp(pred):
            return lambda k, v: arith.cmpi(pred, call_i64(b, "om_str_cmp", [k, v]), _c(0))

        less, eq = cmp(I.slt), cmp(I.eq)
    else:
        keys = dense_const(np.asarray(t.vocab, np.int64), _i64())
        less = lambda k, v: arith.cmpi(I.slt, k, v)  # noqa: E731
        eq = lambda k, v: arith.cmpi(I.eq, k, v)  # noqa: E731

    span = t.vocab[-1] - t.vocab[0] + 1 if not strings else 0
    if not strings and span <= max(4 * n, DENSE_TOKENS):
        return _dense_tokens(b, x, t.vocab, span)

    def body(v):
        if v.type != _i64():
            v = arith.extsi(_i64(), v)
        pos = lower_bound(b, keys, n, v, less)
        inside = arith.cmpi(I.ult, pos, b.index(n))
        at = arith.select(inside, pos, b.index(0))
        hit = arith.andi(inside, eq(tensor.extract(keys, [at]), v))
        return arith.select(hit, arith.index_cast(_i64(), at), _c(-1))
    return b.map_elementwise([x], b.dims(x), _i64(), body)


def _dense_tokens(b: LoweringContext, x: ir.Value, vocab: list, span: int) -> ir.Value:
    """Integer pool items in a narrow range: one load from a table over
    [min, max] (-1 for a value that is no pool item) instead of the search."""
    table = np.full(span, -1, np.int64)
    table[np.asarray(vocab, np.int64) - vocab[0]] = np.arange(len(vocab))
    table_c = dense_const(table, _i64())

    def body(v):
        if v.type != _i64():
            v = arith.extsi(_i64(), v)
        inside = arith.andi(arith.cmpi(I.sge, v, _c(vocab[0])), arith.cmpi(I.sle, v, _c(vocab[-1])))
        off = arith.subi(v, _c(vocab[0]))          # no wrap: compared first
        got = tensor.extract(table_c, [_idx(arith.select(inside, off, _c(0)))])
        return arith.select(inside, got, _c(-1))
    return b.map_elementwise([x], b.dims(x), _i64(), body)


def _child_search(b: LoweringContext, toks_c, lo, hi, tk, fan: int):
    """lower_bound of token ``tk`` in the sorted ``toks_c[lo:hi]`` (i64
    bounds; a parent's children): a fixed number of branch-free steps,
    ceil(log2(fan + 1)) for the widest fan-out ``fan``."""
    pos = lo
    step = 1 << max(0, math.ceil(math.log2(fan + 1)) - 1)
    while step:
        probe = arith.addi(pos, _c(step))
        inside = arith.cmpi(I.sle, probe, hi)
        at = arith.select(inside, arith.subi(probe, _c(1)), _c(0))
        go = arith.andi(inside, arith.cmpi(I.slt, tensor.extract(toks_c, [_idx(at)]), tk))
        pos = arith.select(go, probe, pos)
        step //= 2
    return pos


def _count(b: LoweringContext, tok: ir.Value, t, n_rows, c_len) -> ir.Value:
    """[N, K] i32 n-gram counts (step 2 of the module docstring). Below the
    root, a node's children are a contiguous run of the edges sorted by
    (parent, token): first[node] .. first[node + 1] (CSR)."""
    v, nodes = len(t.vocab), len(t.column)
    root = np.full(v, -1, np.int64)
    deep = sorted((p, k, c) for (p, k), c in t.edges.items() if p != 0)
    for (p, k), c in t.edges.items():
        if p == 0:
            root[k] = c
    first = np.searchsorted(np.asarray([p for p, _, _ in deep], np.int64),
                            np.arange(nodes + 1), side="left").astype(np.int64)
    fan = int(np.max(np.diff(first))) if nodes else 0
    root_c = dense_const(root, _i64())
    first_c = dense_const(first, _i64())
    toks_c = dense_const(np.asarray([k for _, k, _ in deep] or [-1], np.int64), _i64())
    kids_c = dense_const(np.asarray([c for _, _, c in deep] or [-1], np.int64), _i64())
    col_c = dense_const(np.asarray(t.column, np.int64), _i64())
    c_i64 = arith.index_cast(_i64(), b.as_index(c_len))
    freq = b.full([n_rows, t.k], _i32(), 0)
    # d > 1 only counts n-grams of size >= 2
    distances = t.max_skip + 1 if t.max_gram > 1 else 1

    def add(f, r, node, when):
        col = tensor.extract(col_c, [_idx(arith.maxsi(node, _c(0)))])
        ok = arith.andi(when, arith.andi(arith.cmpi(I.sge, node, _c(0)),
                                         arith.cmpi(I.sge, col, _c(0))))
        at = [r, _idx(arith.maxsi(col, _c(0)))]
        old = tensor.extract(f, at)
        return tensor.insert(arith.addi(old, arith.extui(_i32(), ok)), f, at)

    def body(ivs, carried):
        r, d, s = ivs
        (f,) = carried
        d64, s64 = arith.index_cast(_i64(), d), arith.index_cast(_i64(), s)
        first_tok = tensor.extract(tok, [r, s])
        node = arith.select(arith.cmpi(I.sge, first_tok, _c(0)), tensor.extract(
            root_c, [_idx(arith.maxsi(first_tok, _c(0)))]), _c(-1))
        if t.min_gram == 1:
            f = add(f, r, node, arith.cmpi(I.eq, d64, _c(1)))
        for n in range(2, t.max_gram + 1):
            pos = arith.addi(s64, arith.muli(d64, _c(n - 1)))
            inside = arith.cmpi(I.slt, pos, c_i64)
            tk = tensor.extract(tok, [r, _idx(arith.select(inside, pos, _c(0)))])
            live = arith.andi(inside, arith.andi(arith.cmpi(I.sge, node, _c(0)),
                                                 arith.cmpi(I.sge, tk, _c(0))))
            parent = _idx(arith.maxsi(node, _c(0)))
            lo = tensor.extract(first_c, [parent])
            hi = arith.select(live, tensor.extract(
                first_c, [arith.addi(parent, b.index(1))]), lo)
            at = _child_search(b, toks_c, lo, hi, tk, fan)
            in_run = arith.cmpi(I.slt, at, hi)
            at = _idx(arith.select(in_run, at, _c(0)))
            hit = arith.andi(in_run, arith.cmpi(I.eq, tensor.extract(toks_c, [at]), tk))
            node = arith.select(hit, tensor.extract(kids_c, [at]), _c(-1))
            if n >= t.min_gram:
                f = add(f, r, node, hit)
        return [f]
    # a distance d >= C fits no n-gram of size >= 2: d in [1, max(1, min(D, C - 1))]
    c_idx = b.as_index(c_len)
    d_end = arith.addi(arith.maxsi(b.index(1), arith.minsi(
        b.index(distances), arith.subi(c_idx, b.index(1)))), b.index(1))
    return for_nest(b, [n_rows, d_end, c_len], [freq], body, lower=[0, 1, 0])[0]


def _weigh(b: LoweringContext, freq: ir.Value, t, n_rows) -> ir.Value:
    """Step 3: [N, K] counts -> f32."""
    f32 = ir.F32Type.get()
    w = dense_const(np.asarray(t.weights or [1.0] * t.k, np.float32), f32)
    zero = arith.constant(f32, 0.0)

    def body(cnt, _o):
        fc = arith.sitofp(f32, cnt)
        if t.mode == "TF" or (t.mode == "TFIDF" and t.weights is None):
            return fc
        wc = tensor.extract(w, [loop_index(1)])
        if t.mode == "TFIDF":
            return arith.mulf(wc, fc)
        return arith.select(arith.cmpi(I.sgt, cnt, arith.constant(_i32(), 0)), wc, zero)
    ident = affine_map(2, [0, 1])
    return b.generic([freq], [b.empty([n_rows, t.k], f32)], [ident, ident],
                     ["parallel", "parallel"], body)[0]


@lowering("TfIdfVectorizer", 9)
def lower_tfidf(op: OnnxOp, b: LoweringContext) -> list[ir.Value]:
    x = op.input(0)
    xt = b.ranked(op, x)
    if xt.rank not in (1, 2):
        op.fail(f"input must be [C] or [N, C], got rank {xt.rank}")
    t = ngram_table(op)
    strings = is_string_type(b.onnx_elem(x))
    if strings != t.strings:
        op.fail(f"input of type {b.onnx_elem(x)} with pool_"
                f"{'strings' if t.strings else 'int64s'}")
    if xt.rank == 1:
        c = b.dim(x, 0)
        x = tensor.expand_shape(ir.RankedTensorType.get([1, xt.shape[0]], xt.element_type), x,
                                [[0, 1]], output_shape=[] if isinstance(c, int) else [c],
                                static_output_shape=[1, c if isinstance(c, int) else DYN])
    n_rows, c_len = b.dim(x, 0), b.dim(x, 1)
    if n_rows == 0:
        op.fail("input must be [C] or [N, C] with N > 0, got N = 0")
    if not isinstance(n_rows, int):
        b.require(arith.cmpi(I.sgt, n_rows, b.index(0)),
                  f"node '{op.name}' (TfIdfVectorizer): input must be [C] or [N, C] with "
                  "N > 0, got N = {0}", n_rows)
    # a row counts at most C * distances * max_gram n-grams: i32 counts
    most = (2 ** 31 - 1) // ((t.max_skip + 1) * t.max_gram)
    if isinstance(c_len, int) and c_len > most:
        op.fail(f"rows of {c_len} items could count 2**31 n-grams or more")
    if not isinstance(c_len, int):
        b.require(arith.cmpi(I.sle, c_len, b.index(most)),
                  f"node '{op.name}' (TfIdfVectorizer): rows of {{0}} items could count "
                  "2**31 n-grams or more", c_len)
    if t.vocab:
        freq = _count(b, _tokens(op, b, x, t, strings), t, n_rows, c_len)
    else:                       # no n-gram of a counted size: all zeros
        freq = b.full([n_rows, t.k], _i32(), 0)
    y = _weigh(b, freq, t, n_rows)
    if xt.rank == 1:
        y = tensor.collapse_shape(ir.RankedTensorType.get([t.k], y.type.element_type), y,
                                  [[0, 1]])
    return [y]
