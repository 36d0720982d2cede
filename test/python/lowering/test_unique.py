"""Unique: compiled once with dynamic input dims, compared exactly with
onnxruntime (onnx.reference for the types onnxruntime's Unique lacks:
int32, uint8, bool) at several run-time shapes (U, the number of distinct
entries, is computed by the compiled code): all four outputs, sorted 0
and 1, flattened and along an axis, empty inputs, all duplicates."""
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from dynamic_util import check_shapes, model

OUTS = ("y", "indices", "inverse", "counts")


def unique_model(et, dims, outs=OUTS, **attrs):
    names = list(outs)
    return model([h.make_node("Unique", ["x"], names, **attrs)], [("x", et, dims)],
                 [(o, et if o == "y" else T.INT64, None) for o in names if o], opset=11)


def _vals(rng, shape, dtype, hi):
    return rng.integers(0, hi, shape).astype(dtype)


@pytest.mark.parametrize("sorted_", [0, 1])
@pytest.mark.parametrize("dtype,et,engine", [
    (np.float32, T.FLOAT, "onnxruntime"), (np.int64, T.INT64, "onnxruntime"),
    (np.float64, T.DOUBLE, "onnxruntime"), (np.int8, T.INT8, "onnxruntime"),
    (np.float16, T.FLOAT16, "onnxruntime"),
    (np.int32, T.INT32, "reference"), (np.uint8, T.UINT8, "reference")])
def test_unique_flattened(tmp_path, sorted_, dtype, et, engine):
    rng = np.random.default_rng(1)
    feeds = [{"x": _vals(rng, (3, 4), dtype, 6)},
             {"x": _vals(rng, (0, 5), dtype, 6)},          # empty
             {"x": np.full((4, 4), 3, dtype)},             # all duplicates
             {"x": _vals(rng, (1, 1), dtype, 6)},
             {"x": _vals(rng, (9, 7), dtype, 120)}]
    if dtype == np.float32:
        feeds.append({"x": rng.standard_normal((5, 6)).astype(dtype)})  # all distinct
    if dtype == np.uint8:  # above the signed range: compared unsigned
        feeds.append({"x": np.array([[200, 3, 255, 3, 128, 200]], dtype)})
    dims = ["a", "b"]
    if engine == "reference":  # its sorted=0 mishandles a 2-D X: flatten it here
        feeds, dims = [{"x": f["x"].reshape(-1)} for f in feeds], ["n"]
    check_shapes(tmp_path, unique_model(et, dims, sorted=sorted_), feeds,
                 rtol=0, atol=0, engine=engine)


@pytest.mark.parametrize("sorted_", [0, 1])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_unique_along_axis(tmp_path, sorted_, axis):
    rng = np.random.default_rng(2)
    feeds = [{"x": _vals(rng, s, np.float32, 2)}
             for s in ((2, 3, 2), (3, 4, 1), (4, 6, 2), (1, 1, 1))]
    feeds += [{"x": np.zeros((2, 5, 3), np.float32)},     # all slices equal
              {"x": np.zeros((0, 2, 3), np.float32)}]     # empty (U = 0 or 1)
    check_shapes(tmp_path, unique_model(T.FLOAT, ["a", "b", "c"], sorted=sorted_, axis=axis),
                 feeds, rtol=0, atol=0, engine="onnxruntime")


def test_unique_int64_axis_many_slices(tmp_path):
    """Enough slices for several merge rounds, static trailing dim."""
    rng = np.random.default_rng(3)
    feeds = [{"x": _vals(rng, (n, 2), np.int64, 4)} for n in (1, 37, 300)]
    for s in (0, 1):
        check_shapes(tmp_path, unique_model(T.INT64, ["n", 2], sorted=s, axis=0), feeds,
                     engine="onnxruntime")


def test_unique_long_input(tmp_path):
    rng = np.random.default_rng(4)
    feeds = [{"x": _vals(rng, (n,), np.int64, 50)} for n in (2000, 1, 777)]
    check_shapes(tmp_path, unique_model(T.INT64, ["n"], sorted=0), feeds,
                 engine="onnxruntime", opt_level=3)


def test_unique_some_outputs(tmp_path):
    """Optional outputs left out (an empty name in the middle)."""
    rng = np.random.default_rng(5)
    feeds = [{"x": _vals(rng, (n,), np.float32, 5)} for n in (6, 0, 13)]
    m = unique_model(T.FLOAT, ["n"], outs=("y", "", "inverse"), sorted=0)
    check_shapes(tmp_path, m, feeds, rtol=0, atol=0, engine="onnxruntime")
    m = unique_model(T.FLOAT, ["n"], outs=("y",))
    check_shapes(tmp_path, m, feeds, rtol=0, atol=0, engine="onnxruntime")


def test_unique_signed_zero_keeps_first_occurrence(tmp_path):
    """-0.0 == 0.0; Y holds the first one seen, as onnxruntime's std::map."""
    import onnx_mlir_py
    import onnxruntime as ort
    from onnx_mlir_py.runtime import ExecutionSession
    m = unique_model(T.FLOAT, ["n"], sorted=1)
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=0))
    ref = ort.InferenceSession(m.SerializeToString())
    for x in ([-0.0, 1.0, 0.0, -1.0], [0.0, -0.0, 2.0]):
        x = np.array(x, np.float32)
        got, want = sess.run([x]), ref.run(None, {"x": x})
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(np.signbit(got[0]), np.signbit(want[0]))


def test_unique_bool(tmp_path):
    feeds = [{"x": np.array(v, bool)} for v in ([True, False, True], [], [False] * 4)]
    for s in (0, 1):
        check_shapes(tmp_path, unique_model(T.BOOL, ["n"], sorted=s), feeds)


def test_unique_empty_slices(tmp_path):
    """Slices of no elements are all equal: one group (onnxruntime aborts
    on this input, so the expected values are written out)."""
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    m = unique_model(T.FLOAT, ["a", "b", "c"], sorted=0, axis=0)
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=0))
    y, idx, inv, cnt = sess.run([np.zeros((3, 0, 2), np.float32)])
    assert y.shape == (1, 0, 2)
    assert idx.tolist() == [0] and inv.tolist() == [0, 0, 0] and cnt.tolist() == [3]
