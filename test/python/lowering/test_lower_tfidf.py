"""TfIdfVectorizer (passes/onnx_to_linalg/tfidf.py): compiled once with
dynamic dims, compared with onnxruntime AND onnx.reference at several
run-time shapes (empty rows included); int64, int32 and unicode string
inputs; skips, min_gram_length > 1, skipped n-gram sizes, weights; the
configurations where the two runtimes disagree or fail are refused naming
the node."""
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from onnx_mlir_py.errors import OnnxMlirError
from onnx_mlir_py.runtime import ExecutionSession, RuntimeInputError
from onnx_mlir_py.testing.check import reference
from dynamic_util import model

WORDS = ["a", "héllo", "日本", "", "🙂", "b", "x y"]


def tfidf(x_type, dims, name="tf", **attrs):
    node = h.make_node("TfIdfVectorizer", ["x"], ["y"], name=name, **attrs)
    return model([node], [("x", x_type, dims)], [("y", T.FLOAT, None)], opset=9)


def check(tmp_path, m, xs, opt_level=0, engines=("onnxruntime", "reference")):
    """Compile once; every x must give what onnxruntime and onnx.reference give."""
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=opt_level))
    for x in xs:
        got = sess.run([x])[0]
        for engine in engines:
            want = np.asarray(reference(m, {"x": x}, engine)[0])
            assert got.shape == want.shape and got.dtype == want.dtype, (engine, x.shape)
            np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=f"{engine} {x.shape}")


def ints(rng, shape, vocab=5, dtype=np.int64):
    return rng.integers(0, vocab, shape).astype(dtype)


def test_uni_bi_trigrams_with_skips(tmp_path):
    m = tfidf(T.INT64, ["n", "c"], mode="TF", min_gram_length=1, max_gram_length=3,
              max_skip_count=2, ngram_counts=[0, 4, 10],
              ngram_indexes=list(range(10)), pool_int64s=[0, 1, 2, 3, 0, 1, 1, 2, 3, 3,
                                                         0, 1, 2, 1, 1, 1, 2, 0, 0])
    rng = np.random.default_rng(0)
    check(tmp_path, m, [ints(rng, (2, 9)), ints(rng, (3, 0)), ints(rng, (1, 14), 4)])


def test_strings_unicode_rank1(tmp_path):
    pool = ["a", "日本", "🙂", "", "héllo", "a", "x y", "🙂", "日本", "b"]
    m = tfidf(T.STRING, ["c"], mode="TF", min_gram_length=1, max_gram_length=2,
              max_skip_count=1, ngram_counts=[0, 4], ngram_indexes=[3, 2, 1, 0, 4, 5, 5],
              pool_strings=pool)
    rng = np.random.default_rng(1)
    xs = [np.array(rng.choice(np.array(WORDS, object), n), object) for n in (11, 0, 3)]
    check(tmp_path, m, xs)


def test_int32_only_bigrams_tfidf_weights(tmp_path):
    """min_gram_length 2: the unigram group is skipped but still numbers the
    ids; weights equal per output column (idx 3 and 1 share column 1)."""
    m = tfidf(T.INT32, ["n", "c"], mode="TFIDF", min_gram_length=2, max_gram_length=2,
              max_skip_count=3, ngram_counts=[0, 2], ngram_indexes=[0, 1, 2, 1],
              pool_int64s=[7, 8, 1, 2, 2, 1], weights=[0.5, 0.25, 4.0, 0.25])
    rng = np.random.default_rng(2)
    check(tmp_path, m, [ints(rng, (2, 10), 3, np.int32), ints(rng, (4, 3), 3, np.int32)])


@pytest.mark.parametrize("weights", [None, [0.5, 2.0, 0.125]])
def test_idf(tmp_path, weights):
    """Without weights onnx.reference fails (len(None)); onnxruntime's 0/1."""
    extra = {} if weights is None else {"weights": weights}
    m = tfidf(T.INT64, ["n", "c"], mode="IDF", min_gram_length=1, max_gram_length=2,
              max_skip_count=0, ngram_counts=[0, 2], ngram_indexes=[0, 1, 2],
              pool_int64s=[1, 2, 1, 1], **extra)
    rng = np.random.default_rng(3)
    check(tmp_path, m, [ints(rng, (3, 6), 3), ints(rng, (1, 2), 3)],
          engines=("onnxruntime",) if weights is None else ("onnxruntime", "reference"))


@pytest.mark.parametrize("x_type", [T.INT64, T.STRING])
def test_no_ngram_of_a_counted_size(tmp_path, x_type):
    """Only unigrams pooled, min_gram_length 2: nothing counts (zeros)."""
    pool = {"pool_strings": ["a", "b"]} if x_type == T.STRING else {"pool_int64s": [1, 2]}
    m = tfidf(x_type, ["c"], mode="TF", min_gram_length=2, max_gram_length=2,
              max_skip_count=0, ngram_counts=[0, 2], ngram_indexes=[0, 1], **pool)
    x = np.array(["a", "b", "a"], object) if x_type == T.STRING else np.array([1, 2, 1])
    check(tmp_path, m, [x, x[:0]])


@pytest.mark.parametrize("pool", [[2 ** 63 - 1, 2 ** 63 - 3, 7], [-2 ** 63, -2 ** 63 + 2],
                                  [5, 10 ** 9, -7]])
def test_extreme_pool_values(tmp_path, pool):
    """Table lookup (narrow range) and search (wide): inputs at the int64
    limits never wrap into a match."""
    m = tfidf(T.INT64, ["c"], mode="TF", min_gram_length=1, max_gram_length=1,
              max_skip_count=0, ngram_counts=[0], ngram_indexes=list(range(len(pool))),
              pool_int64s=pool)
    edge = [-2 ** 63, 2 ** 63 - 1, 2 ** 63 - 2, -2 ** 63 + 1, 0, 6, 7, 8]
    check(tmp_path, m, [np.array(pool + edge, np.int64), np.array(edge[:3], np.int64)])


def random_config(rng):
    ngroups = int(rng.integers(1, 4))
    hi = int(rng.integers(1, ngroups + 1))
    lo = int(rng.integers(1, hi + 1))
    counts, pool, seen = [], [], set()
    for size in range(1, ngroups + 1):
        counts.append(len(pool))
        for _ in range(int(rng.integers(0, 5))):
            g = tuple(int(v) for v in rng.integers(0, 4, size))
            if g not in seen:
                seen.add(g)
                pool += g
    idx = [int(v) for v in rng.integers(0, 6, max(len(seen), 1))]
    attrs = dict(mode=["TF", "IDF", "TFIDF"][int(rng.integers(0, 3))], min_gram_length=lo,
                 max_gram_length=hi, max_skip_count=int(rng.integers(0, 4)),
                 ngram_counts=counts, ngram_indexes=idx, pool_int64s=pool or [0])
    if not pool:
        attrs["ngram_counts"] = [0]
    return attrs


def test_random_configurations(tmp_path):
    """12 seeded random pools/attributes (the sizes, skips and modes that
    both runtimes accept), each at 2 run-time shapes (IDF/TFIDF without
    weights: onnxruntime only, onnx.reference fails on them)."""
    rng = np.random.default_rng(4)
    for i in range(12):
        attrs = random_config(rng)
        m = tfidf(T.INT64, ["n", "c"], **attrs)
        (tmp_path / str(i)).mkdir()
        engines = ("onnxruntime",) if attrs["mode"] != "TF" else ("onnxruntime", "reference")
        check(tmp_path / str(i), m, [ints(rng, (2, 8), 4), ints(rng, (3, 5), 4)], engines=engines)


def test_o3(tmp_path):
    m = tfidf(T.INT64, ["n", "c"], mode="TF", min_gram_length=1, max_gram_length=2,
              max_skip_count=1, ngram_counts=[0, 2], ngram_indexes=[0, 1, 2],
              pool_int64s=[1, 2, 1, 2])
    rng = np.random.default_rng(5)
    check(tmp_path, m, [ints(rng, (5, 7), 3), ints(rng, (1, 1), 3)], opt_level=3)


def test_zero_rows_fails_the_call(tmp_path):
    """[N, C] with N = 0 is an error in both runtimes: the call fails naming the node."""
    m = tfidf(T.INT64, ["n", "c"], name="vec", mode="TF", min_gram_length=1,
              max_gram_length=1, max_skip_count=0, ngram_counts=[0], ngram_indexes=[0],
              pool_int64s=[1])
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so"))
    assert sess.run([np.array([[1, 1, 2]], np.int64)])[0].tolist() == [[2.0]]
    with pytest.raises(RuntimeInputError, match="vec.*N > 0"):
        sess.run([np.zeros((0, 3), np.int64)])


BASE = dict(mode="TF", min_gram_length=1, max_gram_length=1, max_skip_count=0,
            ngram_counts=[0], ngram_indexes=[0, 1], pool_int64s=[1, 2])


@pytest.mark.parametrize("change,match", [
    ({"mode": "TFIDF", "ngram_indexes": [1, 0], "weights": [0.5, 2.0]}, "weights.*ambiguous"),
    ({"pool_int64s": [1, 1]}, "duplicate 1-gram"),
    ({"ngram_counts": [0, 1], "max_gram_length": 2, "pool_int64s": [1, 2, 3, 4]},
     "2-grams of the pool.*not whole"),
    ({"max_gram_length": 2}, "max_gram_length 2 exceeds"),
    ({"mode": "BM25"}, "mode must be"),
    ({"weights": [1.0]}, "1 weights for 2 ngram_indexes"),
    ({"ngram_indexes": [1, 0], "weights": [0.5, 2.0]}, None),   # TF: weights unused
    ({"pool_int64s": None, "pool_strings": ["a", "b"]}, "input of type i64 with pool_strings"),
])
def test_refused_naming_the_node(tmp_path, change, match):
    attrs = {**BASE, **change}
    attrs = {k: v for k, v in attrs.items() if v is not None}
    m = tfidf(T.INT64, [4], name="vec", **attrs)
    if match is None:
        onnx_mlir_py.compile(m, tmp_path / "m.so")
        return
    with pytest.raises(OnnxMlirError, match=f"vec.*{match}"):
        onnx_mlir_py.compile(m, tmp_path / "m.so")


def test_rows_that_could_overflow_the_counts(tmp_path):
    """Counts are i32: a row of C items counts at most C * (max_skip_count + 1)
    * max_gram_length n-grams; where that can reach 2**31 the node is refused
    (static C) or the call fails naming it (dynamic C)."""
    attrs = dict(mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=2 ** 28,
                 ngram_counts=[0, 1], ngram_indexes=[0, 1], pool_int64s=[1, 1, 1])
    with pytest.raises(OnnxMlirError, match="big.*rows of 8 items could count 2\\*\\*31"):
        onnx_mlir_py.compile(tfidf(T.INT64, [8], name="big", **attrs), tmp_path / "s.so")
    m = tfidf(T.INT64, ["c"], name="big", **attrs)
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "d.so"))
    assert sess.run([np.array([1, 1], np.int64)])[0].tolist() == [2.0, 1.0]
    with pytest.raises(RuntimeInputError, match="big.*rows of 8 items"):
        sess.run([np.ones(8, np.int64)])
