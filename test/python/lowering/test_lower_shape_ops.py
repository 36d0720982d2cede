"""Shape, Size, ConstantOfShape, Range, Expand, Tile vs onnx.reference.

Shape sub-graphs on static inputs fold at compile time, so the lowerings
are exercised with a dynamic batch dim or runtime inputs."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from bool_check import DTYPES, check, random_array

R = np.random.default_rng(3)
N = helper.make_node


def arr(shape, dt):
    return random_array(R, shape, dt)


@pytest.mark.parametrize("opset,attrs", [(13, {}), (15, {"start": 1}), (15, {"start": -2, "end": -1}),
                                         (19, {"end": 2}), (21, {})])
def test_shape_dynamic(opset, attrs):
    x = arr((3, 4, 5), np.float32)
    check([N("Shape", ["x"], ["y"], **attrs)], {"x": x}, ["y"], opset=opset, dyn_inputs=("x",))


def test_shape_size_dynamic_batch():
    x = arr((3, 4, 5), np.float32)
    check([N("Size", ["x"], ["n"]), N("Shape", ["x"], ["s"])], {"x": x}, ["n", "s"],
          dyn_inputs=("x",))


def test_exporter_shape_chain_dynamic():
    # Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as exporters write it
    x = arr((3, 4, 6), np.float32)
    inits = [("i0", np.array(0, np.int64)), ("ax", np.array([0], np.int64)),
             ("tail", np.array([2, 12], np.int64))]
    nodes = [N("Shape", ["x"], ["s"]), N("Gather", ["s", "i0"], ["b"], axis=0),
             N("Unsqueeze", ["b", "ax"], ["bu"]), N("Concat", ["bu", "tail"], ["shp"], axis=0),
             N("Reshape", ["x", "shp"], ["y"])]
    check(nodes, {"x": x}, ["y", "shp"], inits=inits, dyn_inputs=("x",))


@pytest.mark.parametrize("value", [None, np.array([2.5], np.float32), np.array([7], np.int64),
                                   np.array([3], np.int32), np.array([1.5], np.float64),
                                   np.array([True])])
def test_constant_of_shape_runtime_shape(value):
    shp = np.array([2, 3, 4], np.int64)
    attrs = {} if value is None else {"value": helper.make_tensor(
        "v", helper.np_dtype_to_tensor_dtype(value.dtype), [1], value.tolist())}
    # the shape is a graph input: the result dims are dynamic
    check([N("ConstantOfShape", ["s"], ["y"], **attrs)], {"s": shp}, ["y"],
          compiled=value is not None and value.dtype == np.bool_)


@pytest.mark.parametrize("dt,start,limit,delta", [
    (np.float32, 1.0, 7.5, 1.5), (np.float64, 5.0, -3.0, -2.5), (np.int32, 2, 11, 3),
    (np.int64, 10, 1, -4), (np.int64, 3, 3, 1)])
def test_range(dt, start, limit, delta):
    feeds = {"a": np.array(start, dt), "b": np.array(limit, dt), "c": np.array(delta, dt)}
    check([N("Range", ["a", "b", "c"], ["y"])], feeds, ["y"])


EXPANDS = [((3, 1), [2, 1, 4]), ((1, 4), [3, 1]), ((2, 3), [2, 3]), ((5,), [2, 1, 5])]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("k", range(len(EXPANDS)))
def test_expand(dt, k):
    shape, target = EXPANDS[k]
    x = arr(shape, dt)
    check([N("Expand", ["x", "s"], ["y"])], {"x": x}, ["y"],
          inits=[("s", np.array(target, np.int64))])


def test_expand_runtime_shape():
    x = arr((3, 1), np.float32)
    s = np.array([2, 3, 5], np.int64)
    check([N("Expand", ["x", "s"], ["y"])], {"x": x, "s": s}, ["y"])


def test_expand_opset8():
    check([N("Expand", ["x", "s"], ["y"])], {"x": arr((1, 3), np.float32)}, ["y"], opset=8,
          inits=[("s", np.array([4, 3], np.int64))])


@pytest.mark.parametrize("dt", DTYPES)
def test_tile(dt):
    x = arr((2, 3, 1), dt)
    check([N("Tile", ["x", "r"], ["y"])], {"x": x}, ["y"],
          inits=[("r", np.array([2, 1, 3], np.int64))])


def test_tile_runtime_repeats_and_opset6():
    x = arr((2, 3), np.float32)
    check([N("Tile", ["x", "r"], ["y"])], {"x": x, "r": np.array([3, 2], np.int64)}, ["y"])
    check([N("Tile", ["x", "r"], ["y"])], {"x": x}, ["y"], opset=6,
          inits=[("r", np.array([1, 2], np.int64))])


def test_tile_dynamic_batch():
    x = arr((4, 3), np.float32)
    check([N("Tile", ["x", "r"], ["y"])], {"x": x}, ["y"], dyn_inputs=("x",),
          inits=[("r", np.array([2, 2], np.int64))])


# -- run-time shapes / scalars (dynamic_util: compiled once, several values) ---------
def _cos_model():
    from dynamic_util import model
    return model([N("ConstantOfShape", ["s"], ["y"], name="cos",
                    value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.5]))],
                 [("s", TensorProto.INT64, ["n"])], [("y", TensorProto.FLOAT, ["a", "b"])])


def test_constant_of_shape_run_time_values(tmp_path):
    from dynamic_util import check_rejects, check_shapes
    m = _cos_model()
    check_shapes(tmp_path, m, [{"s": np.array(v, np.int64)} for v in ([2, 3], [4, 1], [0, 5])])
    check_rejects(tmp_path, m, [{"s": np.array([2, -3], np.int64)},
                                {"s": np.array([2, 3, 4], np.int64)}],
                  r"node 'cos' \(ConstantOfShape\).*(negative dim -3|has 3 elements)")


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("dt", [np.int64, np.int32, np.float32])
def test_range_run_time_scalars(tmp_path, dt, opt_level):
    from dynamic_util import check_rejects, check_shapes, model
    et = helper.np_dtype_to_tensor_dtype(np.dtype(dt))
    # limit of shape [?] (one element at run time), as exporters compute it
    m = model([N("Range", ["a", "b", "c"], ["y"], name="rg")],
              [("a", et, []), ("b", et, ["k"]), ("c", et, [])], [("y", et, ["n"])])
    sets = [(0, 5, 1), (10, 1, -3), (2, 2, 1), (1, 8, 2)]
    check_shapes(tmp_path, m, [{"a": np.array(a, dt), "b": np.array([b], dt),
                                "c": np.array(c, dt)} for a, b, c in sets], opt_level=opt_level)
    check_rejects(tmp_path, m, [{"a": np.array(0, dt), "b": np.array([5], dt),
                                 "c": np.array(0, dt)},
                                {"a": np.array(0, dt), "b": np.array([5, 6], dt),
                                 "c": np.array(1, dt)}],
                  r"node 'rg' \(Range\).*(delta must not be 0|limit must be a scalar)")
