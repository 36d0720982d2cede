"""TfIdfVectorizer (opset 9): shape rule and the compile-time n-gram table.

* Shape: [C] -> [K], [N, C] -> [N, K], K = max(ngram_indexes) + 1 (rank 1
  or 2 only, as onnxruntime; onnx.reference fails on other ranks too).
* ``ngram_table(op)``: the pool as a trie over a sorted vocabulary, built
  at compile time exactly as onnx.reference's ``populate_grams`` (n-gram
  ids count every pooled n-gram, 1-based; only sizes in
  [min_gram_length, max_gram_length] are inserted). The attributes
  onnxruntime rejects at session creation are refused naming the node
  (duplicate n-grams, ngram_counts not splitting the pool into whole
  n-grams, weights not one per ngram_indexes entry, ...). With weights, the
  two runtimes disagree on what a weight scales (onnx.reference: an output
  column, ``weights[col]``; onnxruntime 1.2x: an n-gram,
  ``weights[ngram id]``); they agree when every n-gram's weight equals its
  column's, and anything else is refused naming the node.
"""
from __future__ import annotations

from dataclasses import dataclass

import mlir.ir as ir

from onnx_mlir_py.registry import shape_rule
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor

MODES = ("TF", "IDF", "TFIDF")


def tfidf_dims(x_dims: tuple, k: int) -> tuple:
    """Output dims for input dims [C] or [N, C] (ints / None)."""
    return (k,) if len(x_dims) == 1 else (x_dims[0], k)


@shape_rule("TfIdfVectorizer", 9)
def _tfidf_shape(op: OnnxOp):
    s = op.shape(op.input(0))
    idx = op.attrs.ngram_indexes
    k = max(idx) + 1 if idx else None
    f32 = ir.F32Type.get()
    if s is None:
        return [tensor(None, f32)]
    if len(s) not in (1, 2):
        op.shape_fail(f"input must be [C] or [N, C], got rank {len(s)}")
    return [tensor(tfidf_dims(tuple(s), k), f32)]


@dataclass
class NgramTable:
    """The pool as a trie. Node 0 is the root; ``edges`` maps
    (parent node, vocabulary index) -> child node; ``column[node]`` is the
    output column the n-gram ending at ``node`` counts in (-1: a prefix only)."""
    vocab: list               # sorted distinct pool items (int, or str by UTF-8 bytes)
    edges: dict               # (parent, token) -> child
    column: list              # per node
    k: int                    # output columns
    weights: list | None      # per output column (None: no weights)
    mode: str
    min_gram: int
    max_gram: int
    max_skip: int
    strings: bool


def ngram_table(op: OnnxOp) -> NgramTable:
    a = op.attrs
    mode = a.mode
    if mode not in MODES:
        op.fail(f"mode must be TF, IDF or TFIDF, got {mode!r}")
    lo, hi, skip = int(a.min_gram_length), int(a.max_gram_length), int(a.max_skip_count)
    if lo < 1 or hi < lo:
        op.fail(f"need 1 <= min_gram_length <= max_gram_length, got {lo}, {hi}")
    if skip < 0:
        op.fail(f"max_skip_count must be >= 0, got {skip}")
    counts = [int(c) for c in (a.ngram_counts or [])]
    idx = [int(i) for i in (a.ngram_indexes or [])]
    if not counts or not idx:
        op.fail("ngram_counts and ngram_indexes must not be empty")
    if hi > len(counts):
        op.fail(f"max_gram_length {hi} exceeds the {len(counts)} n-gram sizes of ngram_counts")
    if min(idx) < 0:
        op.fail("ngram_indexes must be >= 0")
    strings = bool(a.pool_strings)
    pool = list(a.pool_strings) if strings else [int(v) for v in (a.pool_int64s or [])]
    if not pool:
        op.fail("pool_strings or pool_int64s must be given and not empty")
    k = max(idx) + 1
    grams = _pool_ngrams(op, pool, counts, lo, hi)
    if any(i > len(idx) for _, i in grams):
        op.fail(f"the pool has more n-grams than the {len(idx)} ngram_indexes")
    vocab = sorted({t for g, _ in grams for t in g},
                   key=(lambda s: s.encode("utf-8")) if strings else None)
    tok = {t: i for i, t in enumerate(vocab)}
    edges, column = {}, [-1]
    for g, ngram_id in grams:
        node = 0
        for t in g:
            key = (node, tok[t])
            if key not in edges:
                edges[key] = len(column)
                column.append(-1)
            node = edges[key]
        column[node] = idx[ngram_id - 1]
    return NgramTable(vocab, edges, column, k, _weights(op, mode, idx, k), mode, lo, hi, skip,
                      strings)


def _pool_ngrams(op: OnnxOp, pool: list, counts: list, lo: int, hi: int) -> list:
    """[(n-gram tuple, 1-based id)] of the sizes in [lo, hi]."""
    out, seen, ngram_id = [], set(), 1
    for i, start in enumerate(counts):
        size = i + 1
        end = counts[i + 1] if i + 1 < len(counts) else len(pool)
        if not 0 <= start <= end <= len(pool):
            op.fail(f"ngram_counts {counts} do not split the pool of {len(pool)} items")
        if (end - start) % size:
            op.fail(f"the {size}-grams of the pool ({end - start} items) are not whole")
        n = (end - start) // size
        if not lo <= size <= hi:
            ngram_id += n
            continue
        for j in range(n):
            g = tuple(pool[start + j * size:start + (j + 1) * size])
            if g in seen:
                op.fail(f"duplicate {size}-gram {list(g)} in the pool")
            seen.add(g)
            out.append((g, ngram_id))
            ngram_id += 1
    return out


def _weights(op: OnnxOp, mode: str, idx: list, k: int) -> list | None:
    w = op.attrs.weights
    if w and len(w) != len(idx):
        op.fail(f"{len(w)} weights for {len(idx)} ngram_indexes")
    if not w or mode == "TF":
        return None
    w = [float(v) for v in w]
    for j, col in enumerate(idx):
        if col >= len(w) or w[col] != w[j]:
            op.fail(f"weights[{j}] (n-gram {j}, column {col}) differs from weights[{col}]: "
                    "onnx.reference weighs output columns and onnxruntime n-grams, so the "
                    "result is ambiguous; only weights equal per column are supported")
    return [w[c] if c < len(w) else 0.0 for c in range(k)]
