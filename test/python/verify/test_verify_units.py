"""verify's pieces: the comparison and the run-time input shapes."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from onnx_mlir_py.verify.compare import compare
from onnx_mlir_py.verify.inputs import VerifyInputError, input_shapes, parse_shapes
from onnx_mlir_py.verify.values import expose_values

pytestmark = pytest.mark.quick   # the quick tier (README, Tests)


def test_compare_floats_nan_inf_and_relative_error():
    ref = np.array([1.0, 0.0, np.nan, np.inf, -2.0], np.float32)
    d = compare(ref.copy(), ref, 1e-3, 1e-4)
    assert d.ok and d.max_abs == 0 and d.max_rel == 0
    ours = np.array([1.01, 0.5, np.nan, np.inf, -2.0], np.float32)
    d = compare(ours, ref, 1e-3, 1e-4)
    assert not d.ok and d.bad == 2 and d.size == 5
    assert d.max_abs == pytest.approx(0.5) and d.max_rel == np.inf   # 0.5 against 0
    d = compare(np.array([np.nan], np.float32), np.array([1.0], np.float32), 1e-3, 1e-4)
    assert not d.ok and d.max_abs == np.inf
    d = compare(np.array([1.0005], np.float32), np.array([1.0], np.float32), 1e-3, 1e-4)
    assert d.ok and d.max_rel == pytest.approx(5e-4, rel=1e-2)


def test_compare_exact_for_integers_and_shape_type_differences():
    assert compare(np.array([3, 4]), np.array([3, 4]), 1, 1).ok
    d = compare(np.array([3, 5]), np.array([3, 4]), 1, 1)       # no tolerance for ints
    assert not d.ok and d.bad == 1 and d.max_abs == 1
    d = compare(np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32), 1e-3, 1e-4)
    assert not d.ok and "shape float32[2, 3], the reference has float32[3, 2]" in d.describe()
    d = compare(np.zeros(2, np.int32), np.zeros(2, np.int64), 1e-3, 1e-4)
    assert not d.ok and "type int32[2]" in d.describe()


def _model(inputs):
    g = h.make_graph([h.make_node("Identity", [inputs[0][0]], ["y"])], "g",
                     [h.make_tensor_value_info(n, T.FLOAT, s) for n, s in inputs],
                     [h.make_tensor_value_info("y", T.FLOAT, None)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def test_compare_zipmap_outputs():
    """A ZipMap output (list of {label: score}) compares its labels exactly and
    its scores with the tolerance (it crashed: a list has no dtype)."""
    ref = [{0: 0.25, 1: 0.75}, {0: 1.0, 1: 0.0}]
    assert compare([{0: 0.2500001, 1: 0.75}, {0: 1.0, 1: 0.0}], ref, 1e-3, 1e-4).ok
    bad = compare([{0: 0.5, 1: 0.75}, {0: 1.0, 1: 0.0}], ref, 1e-3, 1e-4)
    assert not bad.ok and bad.bad == 1
    assert "other labels" in compare([{1: 0.25, 0: 0.75}, {0: 1.0, 1: 0.0}], ref, 1e-3,
                                     1e-4).why


def test_input_shapes_dim_params_follow_shape_option():
    m = _model([("a", ["n", 3]), ("b", ["n", None]), ("c", [2])])
    assert input_shapes(m, parse_shapes("a:5x3"), 1) == {"a": [5, 3], "b": [5, 1], "c": [2]}
    assert input_shapes(m, {}, 4) == {"a": [4, 3], "b": [4, 4], "c": [2]}
    assert input_shapes(m, parse_shapes("1:7x2"), 1)["a"] == [7, 3]
    with pytest.raises(VerifyInputError, match="input 'a' has rank 2, got 1 dims"):
        input_shapes(m, parse_shapes("a:5"), 1)
    with pytest.raises(VerifyInputError, match="expected NAME:D0xD1"):
        parse_shapes("5x3")


def test_expose_values_keeps_outputs_first_and_skips_sequences():
    nodes = [h.make_node("Relu", ["x"], ["r"]), h.make_node("Neg", ["r"], ["y"]),
             h.make_node("SequenceConstruct", ["r", "y"], ["s"]),
             h.make_node("SequenceAt", ["s", "i"], ["t"])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [2])],
                     [h.make_tensor_value_info("t", T.FLOAT, [2])],
                     [onnx.numpy_helper.from_array(np.array(0, np.int64), "i")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    exposed, names = expose_values(m)
    assert names == ["t", "r", "y"]                 # not the sequence 's'
    assert [o.name for o in exposed.graph.output] == names
    assert [o.name for o in m.graph.output] == ["t"]   # the model itself is unchanged
