"""Concat / Split lowering vs onnx.reference."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper

import dynamic_util as dyn
from bool_check import DTYPES, check, random_array

R = np.random.default_rng(1)
N = helper.make_node


def arr(shape, dt):
    return random_array(R, shape, dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(dt, axis):
    shapes = {0: [(2, 3, 4), (1, 3, 4), (3, 3, 4)], 1: [(2, 1, 4), (2, 3, 4), (2, 2, 4)],
              -1: [(2, 3, 4), (2, 3, 1), (2, 3, 2)]}[axis]
    feeds = {f"x{i}": arr(s, dt) for i, s in enumerate(shapes)}
    check([N("Concat", list(feeds), ["y"], axis=axis)], feeds, ["y"])


@pytest.mark.parametrize("opset", [4, 11])
def test_concat_old(opset):
    feeds = {"a": arr((2, 3), np.float32), "b": arr((2, 2), np.float32)}
    check([N("Concat", ["a", "b"], ["y"], axis=1)], feeds, ["y"], opset=opset)


def test_concat_dynamic_batch():
    feeds = {"a": arr((3, 2), np.float32), "b": arr((3, 5), np.float32)}
    check([N("Concat", ["a", "b"], ["y"], axis=1)], feeds, ["y"], dyn_inputs=("a", "b"))


def test_concat_along_dynamic_axis():
    feeds = {"a": arr((3, 2), np.int64), "b": arr((4, 2), np.int64)}
    check([N("Concat", ["a", "b"], ["y"], axis=0)], feeds, ["y"], dyn_inputs=("a", "b"))


@pytest.mark.parametrize("dt", DTYPES)
def test_split_equal(dt):
    x = arr((6, 4), dt)
    check([N("Split", ["x"], ["a", "b", "c"], axis=0)], {"x": x}, ["a", "b", "c"])


@pytest.mark.parametrize("opset", [2, 11])
def test_split_attr(opset):
    x = arr((2, 7), np.float32)
    check([N("Split", ["x"], ["a", "b"], axis=-1, split=[3, 4])], {"x": x}, ["a", "b"],
          opset=opset)


@pytest.mark.parametrize("opset", [13, 18])
def test_split_input(opset):
    x = arr((2, 9, 3), np.float32)
    inits = [("s", np.array([2, 0, 7], np.int64))]
    check([N("Split", ["x", "s"], ["a", "b", "c"], axis=1)], {"x": x}, ["a", "b", "c"],
          inits=inits, opset=opset)


@pytest.mark.parametrize("dim", [7, 8])
def test_split_num_outputs(dim):
    x = arr((dim, 3), np.int32)
    check([N("Split", ["x"], ["a", "b", "c"], axis=0, num_outputs=3)], {"x": x},
          ["a", "b", "c"], opset=18)


def test_split_dynamic_batch():
    x = arr((5, 6), np.float32)
    check([N("Split", ["x"], ["a", "b"], axis=1)], {"x": x}, ["a", "b"], dyn_inputs=("x",))


# -- split sizes / split dims known only at run time (compiled once) ------------
def _split_model(n_out, nodes_before=(), split_input="sp", opset=18, **attrs):
    ins = ["x", split_input] if split_input else ["x"]
    outs = [f"y{i}" for i in range(n_out)]
    return dyn.model(list(nodes_before) + [N("Split", ins, outs, name="split", **attrs)],
                     [("x", T.FLOAT, ["n", "m"])] +
                     ([("sp", T.INT64, ["k"])] if split_input == "sp" else []),
                     [(o, T.FLOAT, None) for o in outs], opset=opset)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_split_sizes_at_run_time(tmp_path, opt_level):
    m = _split_model(3, axis=1)
    feeds = [{"x": arr(s, np.float32), "sp": np.array(p, np.int64)}
             for s, p in [((2, 6), [1, 2, 3]), ((3, 4), [0, 4, 0]), ((1, 5), [2, 2, 1])]]
    dyn.check_shapes(tmp_path, m, feeds, opt_level, engine="onnxruntime")


def test_split_sizes_that_do_not_fit_are_an_error(tmp_path):
    m = _split_model(3, axis=1)
    x = arr((2, 6), np.float32)
    dyn.check_rejects(tmp_path, m, [{"x": x, "sp": np.array(p, np.int64)}
                                    for p in [[1, 2, 4], [4, 4, -2], [3, 3, 1]]],
                      r"node 'split' \(Split\).*(sum to|negative size)")
    dyn.check_rejects(tmp_path, m, [{"x": x, "sp": np.array([3, 3], np.int64)}],
                      r"node 'split' \(Split\): split has 2 entries for 3 outputs")


def test_split_from_shape(tmp_path):
    """split = [m - 2, 2] from Shape(x) (real exports)."""
    before = [N("Shape", ["x"], ["s"]), N("Gather", ["s", "one"], ["m"]),
              N("Sub", ["m", "two"], ["a"]), N("Concat", ["a", "two"], ["sp"], axis=0)]
    m = _split_model(2, before, split_input=None, axis=1)
    m.graph.node[-1].input.append("sp")
    m.graph.initializer.extend([helper.make_tensor("one", T.INT64, [1], [1]),
                                helper.make_tensor("two", T.INT64, [1], [2])])
    dyn.check_shapes(tmp_path, m, [{"x": arr(s, np.float32)} for s in [(2, 5), (3, 2), (1, 9)]],
                     engine="onnxruntime")


@pytest.mark.parametrize("num_outputs", [None, 4])
def test_split_equal_parts_of_a_run_time_dim(tmp_path, num_outputs):
    attrs = {"axis": 0} if num_outputs is None else {"axis": 0, "num_outputs": num_outputs}
    m = _split_model(4, split_input=None, opset=13 if num_outputs is None else 18, **attrs)
    shapes = [(8, 3), (4, 2)] + ([(5, 3), (7, 1), (1, 2)] if num_outputs else [])
    dyn.check_shapes(tmp_path, m, [{"x": arr(s, np.float32)} for s in shapes])
    if num_outputs is None:
        dyn.check_rejects(tmp_path, m, [{"x": arr((6, 3), np.float32)}],
                          r"node 'split' \(Split\): dim 0 \(6\) is not divisible by the 4")


@pytest.mark.parametrize("dims,axis,shapes", [
    ([[0, 2, 1, 3], [0, 2, 1, 3], [0, 2, 1, 1]], -1, [[(0, 2, 1, 3), (0, 2, 1, 3), (0, 2, 1, 1)]]),
    ([[0, 4, 0], ["n", 1, "m"], [0, 1, 0]], -2, [[(0, 4, 0), (0, 1, 0), (0, 1, 0)]]),
])
def test_concat_of_empty_tensors(tmp_path, dims, axis, shapes):
    """Found by the fuzzer: a Concat whose result has a static 0 dim failed to
    compile ('offset 0 is out-of-bounds: 0 >= 0' from tensor.insert_slice)."""
    names = [f"x{i}" for i in range(len(dims))]
    m = dyn.model([helper.make_node("Concat", names, ["y"], axis=axis)],
                  [(n, T.FLOAT, d) for n, d in zip(names, dims)])
    dyn.check_shapes(tmp_path, m, [{n: np.zeros(s, np.float32) for n, s in zip(names, ss)}
                                   for ss in shapes])


@pytest.mark.parametrize("opt_level", [0, 3])
def test_concat_of_inputs_all_empty_along_the_axis(opt_level):
    """Fuzz case s3113-35: every input empty along the axis and a dynamic
    other dim; the empty result was built without that dim's size
    ('tensor.empty' op incorrect number of dynamic sizes)."""
    from onnx import TensorProto as T
    from onnx import numpy_helper as nh

    from onnx_mlir_py.testing.check import assert_match, reference, run_compiled
    g = helper.make_graph(
        [N("Clip", ["x", "lo", "hi"], ["c"]), N("Concat", ["x", "c"], ["y"], axis=1)], "g",
        [helper.make_tensor_value_info("x", T.INT8, [1, 0, "n", 1])],
        [helper.make_tensor_value_info("y", T.INT8, None)],
        [nh.from_array(np.array(-2, np.int8), "lo"), nh.from_array(np.array(4, np.int8), "hi")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    for n in (3, 0):
        feeds = {"x": np.zeros((1, 0, n, 1), np.int8)}
        got = run_compiled(m, feeds, opt_level)
        assert got[0].shape == (1, 0, n, 1)
        assert_match(got, reference(m, feeds, "onnxruntime"))


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("opset", [13, 18])
def test_split_of_an_empty_tensor_by_a_split_input(opt_level, opset):
    """The node tests test_split_zero_size_splits_opset13/18: a [0] (and a
    [2, 0]) tensor split by a run-time split input into empty pieces: the
    pieces' sizes are dynamic, and their slices at offset 0 of the static
    0 dim failed MLIR's verifier ('offset 0 is out-of-bounds: 0 >= 0')."""
    from onnx_mlir_py.testing.check import assert_match, reference, run_compiled
    for shape, axis, split in (([0], 0, [0, 0, 0]), ([2, 0], 1, [0, 0])):
        g = helper.make_graph(
            [N("Split", ["x", "s"], [f"y{i}" for i in range(len(split))], axis=axis)], "g",
            [helper.make_tensor_value_info("x", T.FLOAT, shape),
             helper.make_tensor_value_info("s", T.INT64, [len(split)])],
            [helper.make_tensor_value_info(f"y{i}", T.FLOAT, None) for i in range(len(split))])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        feeds = {"x": np.zeros(shape, np.float32), "s": np.array(split, np.int64)}
        got = run_compiled(m, feeds, opt_level)
        assert [y.shape for y in got] == [tuple(shape[:axis]) + (0,) + tuple(shape[axis + 1:])] \
            * len(split)
        assert_match(got, reference(m, feeds, "onnx.reference"))
