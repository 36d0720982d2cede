"""String tensors (char* elements, docs/design.md "Strings"): ops that move
elements, compiled once with dynamic dims and compared with onnx.reference at
several run-time shapes; unicode, empty strings, empty tensors; ops that
would compute on the pointers are refused naming the node."""
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from onnx_mlir_py.errors import OnnxMlirError
from dynamic_util import check_shapes, model

S = T.STRING
WORDS = ["a", "héllo", "", "日本語", "x" * 300, "zz", "a", "🙂", " sp ace "]


def strs(rng, shape):
    return np.array(rng.choice(np.array(WORDS, dtype=object), size=shape), dtype=object)


def test_string_movement_ops(tmp_path):
    nodes = [h.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
             h.make_node("Reshape", ["t", "shp"], ["r"]),
             h.make_node("Gather", ["x", "idx"], ["g"], axis=1),
             h.make_node("Concat", ["x", "x"], ["c"], axis=0),
             h.make_node("Slice", ["x", "st", "en"], ["s"]),
             h.make_node("Unsqueeze", ["x", "ax"], ["u"]),
             h.make_node("Squeeze", ["u", "ax"], ["q"]),
             h.make_node("Identity", ["x"], ["i"]),
             h.make_node("Where", ["cond", "x", "x2"], ["w"]),
             h.make_node("Expand", ["x", "eshp"], ["e"])]
    m = model(nodes, [("x", S, ["a", "b"]), ("x2", S, ["a", "b"]), ("cond", T.BOOL, ["a", "b"]),
                      ("shp", T.INT64, [1]), ("idx", T.INT64, [2]), ("st", T.INT64, [1]),
                      ("en", T.INT64, [1]), ("ax", T.INT64, [1]), ("eshp", T.INT64, [3])],
              ["r", "g", "c", "s", "u", "q", "i", "w", "e"], opset=20)
    rng = np.random.default_rng(0)
    feeds = []
    for a, b in ((2, 3), (4, 5), (0, 3)):
        feeds.append({"x": strs(rng, (a, b)), "x2": strs(rng, (a, b)),
                      "cond": rng.integers(0, 2, (a, b)).astype(bool),
                      "shp": np.array([-1], np.int64), "idx": np.array([2, 0], np.int64),
                      "st": np.array([1], np.int64), "en": np.array([3], np.int64),
                      "ax": np.array([0], np.int64), "eshp": np.array([2, 1, 1], np.int64)})
    check_shapes(tmp_path, m, feeds)


def test_string_input_kinds(tmp_path):
    """numpy str ('<U') and bytes arrays are taken too; outputs are str objects."""
    m = model([h.make_node("Identity", ["x"], ["y"])], [("x", S, ["n"])], opset=20)
    from onnx_mlir_py.runtime import ExecutionSession
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so"))
    for x in (np.array(["ab", "ü", ""]), np.array([b"ab", b"c"]), np.array([], dtype=object)):
        y = sess.run([x])[0]
        assert y.dtype == object and y.shape == x.shape
        assert [s if isinstance(s, str) else s.decode() for s in x.tolist()] == y.tolist()


def test_string_refused_naming_node(tmp_path):
    m = model([h.make_node("Tile", ["x", "r"], ["y"], name="tile_node")],
              [("x", S, [2]), ("r", T.INT64, [1])], opset=13)
    with pytest.raises(OnnxMlirError, match="tile_node.*string tensors are not supported by Tile"):
        onnx_mlir_py.compile(m, tmp_path / "m.so")


def test_string_concat_equal_dynamic(tmp_path):
    """StringConcat / Equal with broadcasting, at 3 run-time shapes (one empty):
    the concatenations are made in the run arena and copied out."""
    m = model([h.make_node("StringConcat", ["x", "y"], ["c"]),
               h.make_node("Equal", ["x", "y"], ["e"]),
               h.make_node("StringConcat", ["c", "c"], ["cc"])],
              [("x", S, ["a", "b"]), ("y", S, ["b"])], ["c", "e", "cc"], opset=20)
    rng = np.random.default_rng(1)
    check_shapes(tmp_path, m, [{"x": strs(rng, (a, b)), "y": strs(rng, (b,))}
                               for a, b in ((3, 4), (1, 9), (0, 2))])


def test_string_scalar_and_many_calls(tmp_path):
    """0-d string tensors; 200 calls (arena strings freed at each call's end,
    outputs owned by the caller)."""
    m = model([h.make_node("StringConcat", ["x", "y"], ["c"])],
              [("x", S, []), ("y", S, [])], ["c"], opset=20)
    from onnx_mlir_py.runtime import ExecutionSession
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so"))
    outs = [sess.run([np.array(f"ä{i}", object), np.array("x" * i, object)])[0]
            for i in range(200)]
    assert [o.item() for o in outs] == [f"ä{i}" + "x" * i for i in range(200)]
    assert all(o.shape == () and o.dtype == object for o in outs)


REGEX_CASES = [
    (r"www\.[\w.-]+\.\bcom\b", ["www.google.com", "www.facebook.com", "www.bbc.co.uk", ""]),
    (r"(\W|^)[\w.\-]{0,25}@(yahoo|gmail)\.com(\W|$)",
     ["account@gmail.com", "account@hotmail.com", "a.b@yahoo.com", " x@gmail.com!"]),
    (r"a|b+\d*", ["a", "bbb12", "ab", "", "b"]),
    (r"[^\s]+\s?[]x-]", ["ab ]", "ab x", "ab -", "a\tb", "ab"]),
    (r"\S*\.txt", ["notes.txt", "a b.txt", ".txt", "x.txt\n"]),
    (r"", ["", "a"]),
]


@pytest.mark.parametrize("pattern,words", REGEX_CASES)
def test_regex_full_match(tmp_path, pattern, words):
    m = model([h.make_node("RegexFullMatch", ["x"], ["y"], pattern=pattern)],
              [("x", S, ["n"])], [("y", T.BOOL, None)], opset=20)
    x = np.array(words, object)
    check_shapes(tmp_path, m, [{"x": x}, {"x": x[:1]}, {"x": np.array([], object)}],
                 engine="onnxruntime")


@pytest.mark.parametrize("pattern", [r"(?i)abc", r"a+?", r"\p{L}", r"\Aab", "é+"])
def test_regex_refuses_re2_only_syntax(tmp_path, pattern):
    m = model([h.make_node("RegexFullMatch", ["x"], ["y"], name="rx", pattern=pattern)],
              [("x", S, [2])], opset=20)
    with pytest.raises(OnnxMlirError, match="rx.*regex pattern"):
        onnx_mlir_py.compile(m, tmp_path / "m.so")


def test_regex_dot_on_non_ascii_fails_the_call(tmp_path):
    """'.' is one byte in POSIX, one code point in RE2: a non-ASCII input
    fails naming the node (never a silently different answer); ASCII works."""
    from onnx_mlir_py.runtime import ExecutionSession, RuntimeInputError
    m = model([h.make_node("RegexFullMatch", ["x"], ["y"], name="rx", pattern="a.c")],
              [("x", S, [2])], opset=20)
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so"))
    assert sess.run([np.array(["abc", "a\nc"], object)])[0].tolist() == [True, False]
    with pytest.raises(RuntimeInputError, match="rx.*not ASCII"):
        sess.run([np.array(["abc", "aéc"], object)])


SPLIT_WORDS = [" a  b\tc ", "", "x\u3000y\u00a0z", "日本 語", "   ", "a,,b", ",x,", "abab",
               "xabyabz", "k"]


@pytest.mark.parametrize("attrs", [{}, {"delimiter": ","}, {"delimiter": "ab", "maxsplit": 1},
                                   {"maxsplit": 1}, {"delimiter": " ", "maxsplit": 0}])
def test_string_split(tmp_path, attrs):
    """Y padded with "" to the widest split, Z the counts: Python's str.split
    (unicode whitespace, consecutive delimiters, maxsplit) as onnx.reference,
    at 3 run-time shapes (one empty)."""
    m = model([h.make_node("StringSplit", ["x"], ["y", "z"], **attrs)],
              [("x", S, ["a", "b"])], [("y", S, None), ("z", T.INT64, None)], opset=20)
    rng = np.random.default_rng(2)
    pick = lambda shape: np.array(rng.choice(np.array(SPLIT_WORDS, object), size=shape), object)
    check_shapes(tmp_path, m, [{"x": pick((2, 5))}, {"x": pick((4, 1))}, {"x": pick((0, 3))}])


NORM_CASES = [
    ({"case_change_action": "UPPER", "is_case_sensitive": 0, "stopwords": ["monday"]}, ["a", "b"]),
    ({"case_change_action": "LOWER", "is_case_sensitive": 1, "stopwords": ["monday", "X"]}, ["c"]),
    ({"case_change_action": "NONE", "is_case_sensitive": 0, "stopwords": ["MONDAY"]}, ["c"]),
    ({"case_change_action": "NONE"}, [1, "c"]),
]
NORM_WORDS = ["monday", "Monday", "tuesday", "X", "x", "Wednesday", "a b"]


def _normalize_oracle(x, attrs):
    """onnxruntime's semantics: whole-element stopwords (compared lower-cased
    when not case-sensitive), then the case change; [""] when none is left."""
    sens = attrs.get("is_case_sensitive", 0)
    stops = {w if sens else w.lower() for w in attrs.get("stopwords", [])}
    act = attrs.get("case_change_action", "NONE")
    out = [{"LOWER": w.lower(), "UPPER": w.upper()}.get(act, w) for w in x.reshape(-1)
           if (w if sens else w.lower()) not in stops] or [""]
    return np.array(out, object).reshape((1, -1) if x.ndim == 2 else (-1,))


@pytest.mark.parametrize("attrs,dims", NORM_CASES)
def test_string_normalizer(tmp_path, attrs, dims):
    """Stopwords dropped, case changed, [""] when nothing is left, at 3
    run-time lengths; ASCII words. Checked against onnxruntime's semantics
    and, where it agrees (not NONE with case-insensitive stopwords, which it
    compares case-sensitively), onnx.reference."""
    from onnx_mlir_py.runtime import ExecutionSession
    from onnx_mlir_py.testing.check import reference
    m = model([h.make_node("StringNormalizer", ["x"], ["y"], **attrs)], [("x", S, dims)],
              [("y", S, None)], opset=10)
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so"))
    rng = np.random.default_rng(3)
    shape = (lambda c: (1, c)) if len(dims) == 2 else (lambda c: (c,))
    xs = [np.array(rng.choice(np.array(NORM_WORDS, object), size=shape(c)), object)
          for c in (5, 9)] + [np.array(["monday", "Monday"], object).reshape(shape(2))]
    for x in xs:
        y = sess.run([x])[0]
        want = _normalize_oracle(x, attrs)
        assert y.dtype == object and y.shape == want.shape and y.tolist() == want.tolist(), x
        if attrs.get("case_change_action") != "NONE" or attrs.get("is_case_sensitive", 1):
            assert y.tolist() == reference(m, {"x": x})[0].tolist(), x


def test_string_normalizer_unicode_case(tmp_path):
    """Non-ASCII case change code point by code point (towlower/towupper of
    glibc's C.UTF-8, as onnxruntime's en_US locale; no accent stripping)."""
    from onnx_mlir_py.runtime import ExecutionSession
    m = model([h.make_node("StringNormalizer", ["x"], ["y"], case_change_action="LOWER",
                           is_case_sensitive=0, stopwords=["ecole"])],
              [("x", S, ["c"])], [("y", S, None)], opset=10)
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so"))
    y = sess.run([np.array(["ÉCOLE", "Straße", "ΣΊΣΥΦΟΣ", "ECOLE", ""], object)])[0]
    assert y.tolist() == ["école", "straße", "σίσυφοσ", ""]


@pytest.mark.parametrize("attrs,match", [({"locale": "fr_FR"}, "locale 'fr_FR'"),
                                         ({"case_change_action": "TITLE"}, "case_change_action")])
def test_string_normalizer_refusals(tmp_path, attrs, match):
    m = model([h.make_node("StringNormalizer", ["x"], ["y"], name="sn", **attrs)],
              [("x", S, [3])], [("y", S, None)], opset=10)
    with pytest.raises(OnnxMlirError, match=f"sn.*{match}"):
        onnx_mlir_py.compile(m, tmp_path / "m.so")


def test_string_constants(tmp_path):
    """String initializers (any rank; quotes, backslashes, unicode, empty) and
    Constant value_string / value_strings, at 2 run-time shapes, vs onnxruntime."""
    from onnx import helper as hh
    init = hh.make_tensor("k", S, [2, 2], [b"a\"\\q", "日本".encode(), b"", b"x\n"])
    m = model([h.make_node("StringConcat", ["x", "k"], ["y"]),
               h.make_node("Constant", [], ["c"], value_strings=["p", "q"]),
               h.make_node("StringConcat", ["x", "c"], ["z"]),
               h.make_node("Constant", [], ["d"], value_string="só"),
               h.make_node("Equal", ["x", "d"], ["e"])],
              [("x", S, ["a", 2])], [("y", S, None), ("z", S, None), ("e", T.BOOL, None)],
              opset=20, inits=[init])
    check_shapes(tmp_path, m, [{"x": np.array([["só", "b"], ["c", ""]], object)},
                               {"x": np.array([["só", "é"]], object)}], engine="onnxruntime")


@pytest.mark.parametrize("attrs,in_t,out_t,vals", [
    ({"keys_strings": ["b", "a", "日本", ""], "values_int64s": [1, 2, 3, 4],
      "default_int64": -7}, S, T.INT64, ["a", "b", "c", "日本", "", "aa"]),
    ({"keys_int64s": [5, 1, 3], "values_strings": ["five", "one", "трі"],
      "default_string": "?"}, T.INT64, S, [1, 2, 3, 5, -1, 0]),
    ({"keys_strings": ["x", "y"], "values_strings": ["X", ""]}, S, S, ["x", "y", "z", ""]),
])
def test_label_encoder_strings(tmp_path, attrs, in_t, out_t, vals):
    """ai.onnx.ml LabelEncoder with string keys and/or values (binary search
    with strcmp), vs onnxruntime at 2 run-time lengths."""
    m = model([h.make_node("LabelEncoder", ["x"], ["y"], domain="ai.onnx.ml", **attrs)],
              [("x", in_t, ["n"])], [("y", out_t, None)], opset=17)
    m.opset_import.append(h.make_opsetid("ai.onnx.ml", 2))
    dt = object if in_t == S else np.int64
    check_shapes(tmp_path, m, [{"x": np.array(vals, dt)}, {"x": np.array(vals[:2], dt)}],
                 engine="onnxruntime")


def test_inference_session_strings():
    """InferenceSession (onnxruntime's API) takes object, str and list inputs
    for a tensor(string) input and returns object arrays of str."""
    from onnx_mlir_py import InferenceSession, InvalidArgument
    m = model([h.make_node("StringConcat", ["x", "x"], ["y"])], [("x", S, ["n"])],
              [("y", S, ["n"])], opset=20)
    s = InferenceSession(m.SerializeToString())
    assert s.get_inputs()[0].type == "tensor(string)"
    for x in (np.array(["a", "é"], object), np.array(["a", "é"]), ["a", "é"]):
        y = s.run(None, {"x": x})[0]
        assert y.dtype == object and y.tolist() == ["aa", "éé"]
    with pytest.raises(InvalidArgument, match="data type"):
        s.run(None, {"x": np.array([1, 2], np.int64)})
