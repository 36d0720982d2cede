"""Pad lowering vs onnx.reference (modes, versions, dtypes, negative pads)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper
from onnx import helper as h

import dynamic_util as dyn
from bool_check import check, random_array
from lowering_util import make_model
from onnx_mlir_py.testing.check import check_compiled

R = np.random.default_rng(6)
N = helper.make_node


def arr(shape, dt):
    return random_array(R, shape, dt)


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32, np.int64])
def test_pad_modes(mode, dt):
    x = arr((3, 4, 5), dt)
    pads = np.array([0, 2, 1, 1, 0, 3], np.int64)
    inits = [("p", pads)]
    ins = ["x", "p"]
    if mode == "constant":
        inits.append(("v", np.array(7, dt)))
        ins.append("v")
    check([N("Pad", ins, ["y"], mode=mode)], {"x": x}, ["y"], inits=inits)


def test_pad_bool_constant():
    x = arr((3, 4), np.bool_)
    check([N("Pad", ["x", "p"], ["y"])], {"x": x}, ["y"],
          inits=[("p", np.array([1, 0, 0, 2], np.int64))])


def test_pad_wrap_opset19():
    x = arr((3, 4), np.float32)
    check([N("Pad", ["x", "p"], ["y"], mode="wrap")], {"x": x}, ["y"], opset=19,
          inits=[("p", np.array([2, 1, 1, 3], np.int64))])


def test_pad_axes_opset18():
    x = arr((2, 3, 4), np.float32)
    check([N("Pad", ["x", "p", "", "a"], ["y"], mode="reflect")], {"x": x}, ["y"], opset=18,
          inits=[("p", np.array([1, 2, 2, 1], np.int64)), ("a", np.array([-1, 1], np.int64))])


def test_pad_negative_crops():
    # onnx.reference (np.pad) rejects negative pads: compare with onnxruntime
    x = arr((5, 6), np.float32)
    m = make_model([N("Pad", ["x", "p"], ["y"], mode="constant")], {"x": x}, ["y"],
                   inits=[("p", np.array([-1, 2, 1, -2], np.int64))])
    got = check_compiled(m, {"x": x}, engine="onnxruntime")
    assert got[0].shape == (5, 6)


def test_pad_opset2_attribute():
    x = arr((3, 4), np.float32)
    check([N("Pad", ["x"], ["y"], mode="constant", pads=[1, 0, 0, 2], value=1.5)], {"x": x},
          ["y"], opset=2)


@pytest.mark.parametrize("opset", [11, 13, 21])
def test_pad_versions_runtime_value(opset):
    x = arr((3, 4), np.float32)
    check([N("Pad", ["x", "p", "v"], ["y"])], {"x": x, "v": np.array(-2.0, np.float32)},
          ["y"], opset=opset, inits=[("p", np.array([1, 1, 2, 0], np.int64))])


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect"])
def test_pad_dynamic_batch(mode):
    x = arr((4, 5, 6), np.float32)
    check([N("Pad", ["x", "p"], ["y"], mode=mode)], {"x": x}, ["y"], dyn_inputs=("x",),
          inits=[("p", np.array([0, 0, 2, 0, 0, 3], np.int64))])


# -- pads known only at run time: compiled once, compared with onnxruntime ------
MODES = ["constant", "edge", "reflect", "wrap"]
Y = [("y", T.FLOAT, None)]
ORT = "onnxruntime"


def i64(*v):
    return np.array(v, np.int64)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("mode", MODES)
def test_pad_to_multiple_of_4_from_shape(tmp_path, mode, opt_level):
    """pads = [0, 0, 0, (4 - m % 4) % 4] computed from Shape(x) (real exports)."""
    nodes = [N("Shape", ["x"], ["s"]), N("Gather", ["s", "one"], ["m"]),
             N("Mod", ["m", "four"], ["r"]), N("Sub", ["four", "r"], ["t"]),
             N("Mod", ["t", "four"], ["e"]), N("Concat", ["zeros", "e"], ["p"], axis=0),
             N("Pad", ["x", "p"], ["y"], mode=mode, name="pad")]
    m = dyn.model(nodes, [("x", T.FLOAT, ["n", "m"])], Y, opset=19,
                  inits=[h.make_tensor("one", T.INT64, [1], [1]),
                         h.make_tensor("four", T.INT64, [1], [4]),
                         h.make_tensor("zeros", T.INT64, [3], [0, 0, 0])])
    dyn.check_shapes(tmp_path, m, [{"x": arr(s, np.float32)}
                                   for s in [(2, 5), (3, 8), (1, 3), (2, 6)]],
                     opt_level, engine=ORT)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("mode", MODES)
def test_pad_pads_input(tmp_path, mode, opt_level):
    """pads a graph input (negative ones crop), x of dynamic shape."""
    m = dyn.model([N("Pad", ["x", "p", "v"], ["y"], mode=mode, name="pad")],
                  [("x", T.FLOAT, ["n", "m"]), ("p", T.INT64, [4]), ("v", T.FLOAT, [])],
                  Y, opset=19)
    v = np.array(2.5, np.float32)
    feeds = [{"x": arr(s, np.float32), "p": i64(*p), "v": v}
             for s, p in [((3, 5), [1, 2, 0, 3]), ((4, 4), [-1, 0, 2, -2]),
                          ((2, 6), [0, 0, 0, 0]), ((5, 3), [0, -1, 1, 1])]]
    dyn.check_shapes(tmp_path, m, feeds, opt_level, engine=ORT)


def test_pad_axes_at_run_time(tmp_path):
    """opset 18 axes input of run-time length (an scf.for picks each dim's pads)."""
    m = dyn.model([N("Pad", ["x", "p", "", "a"], ["y"], mode="edge", name="pad")],
                  [("x", T.FLOAT, ["n", "m", 2]), ("p", T.INT64, ["k2"]),
                   ("a", T.INT64, ["k"])], Y, opset=18)
    x = arr((3, 4, 2), np.float32)
    dyn.check_shapes(tmp_path, m, [{"x": x, "p": i64(1, 2), "a": i64(-1)},
                                   {"x": x, "p": i64(0, 1, 2, 0), "a": i64(1, 0)},
                                   {"x": arr((2, 1, 2), np.float32), "p": i64(), "a": i64()}],
                     engine=ORT)
    dyn.check_rejects(tmp_path, m, [{"x": x, "p": i64(0, 1, 2, 0), "a": i64(1)}],
                      r"node 'pad' \(Pad\).*4 entries for 1 axes")
    dyn.check_rejects(tmp_path, m, [{"x": x, "p": i64(0, 1, 2, 0), "a": i64(2, -1)}],
                      r"node 'pad' \(Pad\).*dim 2 2 times")


def test_pad_run_time_errors(tmp_path):
    m = dyn.model([N("Pad", ["x", "p"], ["y"], mode="reflect", name="pad")],
                  [("x", T.FLOAT, ["n"]), ("p", T.INT64, [2])], Y, opset=19)
    x = arr((5,), np.float32)
    dyn.check_shapes(tmp_path, m, [{"x": x, "p": i64(4, 2)}], engine=ORT)
    dyn.check_rejects(tmp_path, m, [{"x": x, "p": i64(5, 0)}],
                      r"node 'pad' \(Pad\).*smaller than dim 0")
    dyn.check_rejects(tmp_path, m, [{"x": x, "p": i64(-4, -2)}],
                      r"node 'pad' \(Pad\).*negative size")


@pytest.mark.parametrize("shape,pads", [
    ((3, 5, 4, 0), [0, 1, 0, 0, 2, 0, 1, 3]),     # an empty source: all padding
    ((3, 5, 4, 0), [0, 1, 0, 0, 2, 0, 1, 0]),
    ((2, 6), [-2, 1, 0, 1]),                     # crop an axis to nothing, pad another
])
def test_pad_to_or_from_empty(shape, pads):
    """Found by the fuzzer: Pad of an empty tensor, and a crop to 0 rows,
    failed to compile (a 0-size subview at an offset past the end)."""
    x = arr(shape, np.float32)
    m = make_model([N("Pad", ["x", "p", "v"], ["y"])], {"x": x}, ["y"],
                   inits=[("p", np.array(pads, np.int64)), ("v", np.array(1.5, np.float32))])
    check_compiled(m, {"x": x}, engine="onnxruntime")


@pytest.mark.parametrize("dt,et", [(np.float16, T.FLOAT16), (np.float32, T.FLOAT)])
def test_pad_negative_end_only_dynamic(tmp_path, dt, et):
    """Found by the fuzzer (s1-72): a crop by a negative *end* pad with no
    negative begin pad was skipped (shape (4,6,3) for (3,6,2)); silently wrong
    when the dims are dynamic."""
    pads = np.array([1, 1, 2, -1, 2, -1], np.int64)
    m = dyn.model([N("Pad", ["x", "p"], ["y"])], [("x", et, ["n", "n", "s"])],
                  [("y", et, None)], opset=18, inits=[h.make_tensor("p", T.INT64, [6], pads)])
    dyn.check_shapes(tmp_path, m, [{"x": arr((n, n, s), dt)} for n, s in [(3, 1), (4, 3)]],
                     engine=ORT)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_constant_pad_crop_removes_padding(opt_level):
    """Constant Pad pads first, then crops (onnxruntime): a negative pad may
    remove padding, not only input (fuzzer case s2000-164: size 0 with pads
    1, -1 was refused as 'a negative size'). Run-time pads, dims 0..5."""
    import onnx
    from onnx import TensorProto as TP, helper as hp, numpy_helper
    from onnx_mlir_py.testing.check import assert_match, reference, run_compiled
    g = hp.make_graph([hp.make_node("Pad", ["a", "p", "c"], ["y"])], "g",
                      [hp.make_tensor_value_info("a", TP.FLOAT, ["n"]),
                       hp.make_tensor_value_info("p", TP.INT64, [2])],
                      [hp.make_tensor_value_info("y", TP.FLOAT, None)],
                      [numpy_helper.from_array(np.array(9, np.float32), "c")])
    m = hp.make_model(g, opset_imports=[hp.make_opsetid("", 18)])
    for size, pads in [(0, [1, -1]), (1, [3, -2]), (2, [-3, 2]), (5, [-1, 2]), (3, [2, -5])]:
        feeds = {"a": np.arange(1, size + 1, dtype=np.float32),
                 "p": np.array(pads, np.int64)}
        assert_match(run_compiled(m, feeds, opt_level), reference(m, feeds, "onnxruntime"))
