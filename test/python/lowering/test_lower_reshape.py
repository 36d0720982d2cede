"""Reshape / Squeeze / Unsqueeze with dynamic dims and shapes (or axes)
known only at run time; each model compiled once, run at several shapes.

Squeeze / Unsqueeze with every input dim dynamic, constant or run-time
axes. The lowering used to map the result's dynamic dims onto the input's
dynamic dims in order, ignoring the axes: Squeeze(x[?,?,?,?], axes=[0])
returned x's first three dims (test_squeeze [dynamic], wrong shape)."""
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

from dynamic_util import check_rejects, check_shapes, model
import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession, RuntimeInputError

R = np.random.default_rng(0)
X4 = ("x", T.FLOAT, ["a", "b", "c", "d"])


def _f(*s):
    return R.standard_normal(s).astype(np.float32)


def _i(*v):
    return np.array(v, np.int64)


def _sq(op, x, out_rank, axes_input=True, inits=(), opset=13):
    ins = [x] + ([("axes", T.INT64, ["n"])] if axes_input else [])
    names = ["x"] + (["axes"] if axes_input or inits else [])
    return model([h.make_node(op, names, ["y"], name="sq")], ins,
                 [("y", T.FLOAT, [f"o{k}" for k in range(out_rank)])], opset=opset, inits=inits)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_squeeze_runtime_axes(tmp_path, opt_level):
    check_shapes(tmp_path, _sq("Squeeze", X4, 3), [
        {"x": _f(1, 3, 4, 5), "axes": _i(0)}, {"x": _f(3, 1, 4, 5), "axes": _i(-3)},
        {"x": _f(3, 4, 5, 1), "axes": _i(3)}, {"x": _f(2, 1, 1, 2), "axes": _i(2)}],
        opt_level=opt_level)


def test_squeeze_runtime_axes_two(tmp_path):
    check_shapes(tmp_path, _sq("Squeeze", X4, 2), [
        {"x": _f(1, 3, 1, 5), "axes": _i(0, 2)}, {"x": _f(3, 1, 4, 1), "axes": _i(-1, 1)}])


@pytest.mark.parametrize("opt_level", [0, 3])
def test_squeeze_constant_axes(tmp_path, opt_level):
    m = _sq("Squeeze", X4, 3, axes_input=False, inits=[numpy_helper.from_array(_i(1), "axes")])
    check_shapes(tmp_path, m, [{"x": _f(2, 1, 3, 4)}, {"x": _f(5, 1, 1, 2)}], opt_level)


def test_squeeze_no_axes(tmp_path):
    m = _sq("Squeeze", ("x", T.FLOAT, ["a", 1, "b"]), 2, axes_input=False)
    check_shapes(tmp_path, m, [{"x": _f(2, 1, 3)}, {"x": _f(4, 1, 5)}])
    # a dynamic dim that is 1 would be squeezed too: the result rank changes
    check_rejects(tmp_path, m, [{"x": _f(1, 1, 3)}], r"node 'sq' \(Squeeze\).*rank 2")


def test_squeeze_no_axes_rank_inferred(tmp_path):
    """Squeeze without axes of [a, 1, 3] (nothing declaring the result) had no
    rank, so a graph using it failed to compile (the AffineGrid function body:
    test_affine_grid_2d_expanded); a dynamic dim is taken as not 1, as the
    lowering checks at run time."""
    nodes = [h.make_node("Squeeze", ["x"], ["s"], name="sq"),
             h.make_node("Add", ["s", "b"], ["y"])]
    m = model(nodes, [("x", T.FLOAT, ["a", 1, 3]), ("b", T.FLOAT, [3])], ["y"])
    b = _f(3)
    check_shapes(tmp_path, m, [{"x": _f(2, 1, 3), "b": b}, {"x": _f(5, 1, 3), "b": b}])
    check_rejects(tmp_path, m, [{"x": _f(1, 1, 3), "b": b}], r"node 'sq' \(Squeeze\).*rank 2")


def test_squeeze_checks(tmp_path):
    check_rejects(tmp_path, _sq("Squeeze", X4, 3), [
        {"x": _f(2, 3, 4, 5), "axes": _i(0)},      # dim 0 is 2
        {"x": _f(1, 3, 4, 5), "axes": _i(4)},      # out of range
        {"x": _f(1, 1, 4, 5), "axes": _i(0, 1)}],  # rank 2, not 3
        r"node 'sq' \(Squeeze\).*(cannot squeeze axis 0|out of range|rank 3)")


@pytest.mark.parametrize("opt_level", [0, 3])
def test_unsqueeze_runtime_axes(tmp_path, opt_level):
    m = _sq("Unsqueeze", ("x", T.FLOAT, ["a", "b"]), 4)
    check_shapes(tmp_path, m, [
        {"x": _f(2, 3), "axes": _i(0, 3)}, {"x": _f(4, 5), "axes": _i(1, -1)},
        {"x": _f(2, 3), "axes": _i(-4, 2)}, {"x": _f(1, 6), "axes": _i(2, 1)}], opt_level)
    check_rejects(tmp_path, m, [{"x": _f(2, 3), "axes": _i(0, 4)},
                                {"x": _f(2, 3), "axes": _i(1, 1)}],
                  r"node 'sq' \(Unsqueeze\).*(out of range|axes leave)")


@pytest.mark.parametrize("opt_level", [0, 3])
def test_unsqueeze_constant_axes(tmp_path, opt_level):
    m = _sq("Unsqueeze", ("x", T.FLOAT, ["a", "b"]), 4, axes_input=False,
            inits=[numpy_helper.from_array(_i(0, -2), "axes")])
    check_shapes(tmp_path, m, [{"x": _f(2, 3)}, {"x": _f(1, 5)}], opt_level)


# -- Reshape ------------------------------------------------------------------------
# The target's elements go through reshape_dims (dialects/onnx/ops/reshape.py) at run
# time: 0 copies the input dim, -1 is inferred, the element count is checked.
def _rs(inputs, out_dims, inits=(), **attrs):
    return model([h.make_node("Reshape", ["x", "s"], ["y"], name="rs", **attrs)], inputs,
                 [("y", T.FLOAT, out_dims)], opset=21, inits=inits)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_reshape_exporter_chain_dynamic_batch(tmp_path, opt_level):
    # Shape -> Gather -> Unsqueeze -> Concat -> Reshape (dynamic batch), as
    # torch.onnx writes x.view(x.size(0), -1, 4), then a Reshape with 0s back
    inits = [numpy_helper.from_array(v, k) for k, v in
             [("i0", np.array(0, np.int64)), ("ax", _i(0)), ("tail", _i(-1, 4)),
              ("back", _i(0, 0, 2, 2))]]
    nodes = [h.make_node("Shape", ["x"], ["s"]), h.make_node("Gather", ["s", "i0"], ["b"]),
             h.make_node("Unsqueeze", ["b", "ax"], ["bu"]),
             h.make_node("Concat", ["bu", "tail"], ["shp"], axis=0),
             h.make_node("Reshape", ["x", "shp"], ["y"]), h.make_node("Reshape", ["y", "back"], ["z"])]
    m = model(nodes, [("x", T.FLOAT, ["n", 3, "w"])],
              [("y", T.FLOAT, ["n", None, 4]), ("z", T.FLOAT, ["n", None, 2, 2])], opset=21,
              inits=inits)
    check_shapes(tmp_path, m, [{"x": _f(2, 3, 4)}, {"x": _f(5, 3, 8)}, {"x": _f(1, 3, 12)}],
                 opt_level=opt_level)


def test_reshape_shape_is_a_graph_input(tmp_path):
    # the target's values (0 = copy, -1 = infer) are known only at run time
    m = _rs([("x", T.FLOAT, ["a", "b", "c"]), ("s", T.INT64, [3])], None)
    check_shapes(tmp_path, m, [{"x": _f(2, 3, 4), "s": _i(4, 3, 2)},
                               {"x": _f(2, 3, 4), "s": _i(0, -1, 2)},
                               {"x": _f(4, 3, 5), "s": _i(-1, 0, 1)},
                               {"x": _f(3, 2, 2), "s": _i(2, 0, 3)},
                               {"x": _f(3, 1, 4), "s": _i(1, 1, -1)}])


def test_reshape_same_rank_is_not_a_no_op(tmp_path):
    # [?, ?] -> [?, ?] with a run-time shape (length unknown too): not the identity
    m = _rs([("x", T.FLOAT, ["a", "b"]), ("s", T.INT64, ["k"])], ["p", "q"])
    check_shapes(tmp_path, m, [{"x": _f(6, 4), "s": _i(4, 6)}, {"x": _f(6, 4), "s": _i(6, 4)},
                               {"x": _f(2, 3), "s": _i(-1, 1)}])
    check_rejects(tmp_path, m, [{"x": _f(6, 1), "s": _i(1, 2, 3)}],
                  r"node 'rs' \(Reshape\).*'shape' has 3 elements, expected 2")


def test_reshape_allowzero(tmp_path):
    m = _rs([("x", T.FLOAT, ["a", 3]), ("s", T.INT64, [3])], None, allowzero=1)
    check_shapes(tmp_path, m, [{"x": _f(0, 3), "s": _i(3, 0, 4)},
                               {"x": _f(4, 3), "s": _i(2, 3, 2)},
                               {"x": _f(2, 3), "s": _i(1, -1, 2)}])


@pytest.mark.parametrize("opt_level", [0, 3])
def test_reshape_mismatch_is_a_run_time_error(tmp_path, opt_level):
    m = _rs([("x", T.FLOAT, ["a", 4]), ("s", T.INT64, [2])], None)
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=opt_level))
    for s, msg in [((5, 3), "12 elements.*15 elements"), ((5, -1), "not divisible by 5"),
                   ((-1, -1), "more than one -1"), ((-2, -6), "invalid dim -2")]:
        with pytest.raises(RuntimeInputError, match=r"node 'rs' \(Reshape\).*" + msg):
            sess.run([_f(3, 4), _i(*s)])
    # the session still works after failed calls
    x = _f(5, 4)
    np.testing.assert_array_equal(sess.run([x, _i(-1, 10)])[0], x.reshape(2, 10))


@pytest.mark.parametrize("axis", [0, 1, 2, -1, 3])
def test_flatten_dynamic_dims(tmp_path, axis):
    m = model([h.make_node("Flatten", ["x"], ["y"], axis=axis)],
              [("x", T.FLOAT, ["a", "b", "c"])], [("y", T.FLOAT, ["p", "q"])], opset=13)
    check_shapes(tmp_path, m, [{"x": _f(2, 3, 4)}, {"x": _f(5, 1, 2)}, {"x": _f(1, 4, 3)}])
