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
