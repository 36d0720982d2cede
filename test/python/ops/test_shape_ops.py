import numpy as np
import pytest
from onnx import TensorProto as TP, helper, numpy_helper

from helpers import infer_and_compare, make_model, our_output_types
from onnx_mlir_py.errors import ImportError_
from _common import F, f32, i64, one


@pytest.mark.parametrize("opset,kw", [(7, {}), (13, {}), (15, {"start": 1}),
                                      (19, {"start": -2, "end": -1}), (25, {"end": 10})])
def test_shape(opset, kw):
    infer_and_compare(one("Shape", ["N", 3, 4], opset, **kw))


@pytest.mark.parametrize("opset", [7, 13, 19, 25])
def test_size(opset):
    infer_and_compare(one("Size", ["N", 3], opset))


@pytest.mark.parametrize("opset", [9, 20, 25])
def test_constant_of_shape(opset):
    v = numpy_helper.from_array(np.array([1], np.int32), "value")
    infer_and_compare(one("ConstantOfShape", None, opset, [i64("s", [2, 5])],
                          inputs=["s"], value=v))
    infer_and_compare(one("ConstantOfShape", None, opset, [i64("s", [3])], inputs=["s"]))


@pytest.mark.parametrize("opset", [9, 13, 25])
@pytest.mark.parametrize("attr,val", [
    ("value", numpy_helper.from_array(np.zeros((2, 3), np.float16))),
    ("value_int", 4), ("value_ints", [1, 2, 3]), ("value_float", 1.5),
    ("value_floats", [1.0, 2.0]),
])
def test_constant(opset, attr, val):
    node = helper.make_node("Constant", [], ["y"], name="c", **{attr: val})
    if opset < 12 and attr != "value":  # value_* attributes exist since v12
        with pytest.raises(ImportError_, match=f"unknown attribute '{attr}'"):
            our_output_types(make_model([node], [], ["y"], opset))
        return
    infer_and_compare(make_model([node], [], ["y"], opset))


@pytest.mark.parametrize("opset", [11, 25])
@pytest.mark.parametrize("vals,np_t", [((0, 10, 3), np.int64), ((1.0, 2.0, 0.25), np.float32),
                                       ((10, 0, -3), np.int32), ((5, 1, 1), np.int64)])
def test_range(opset, vals, np_t):
    inits = [numpy_helper.from_array(np.array(v, np_t), n) for v, n in zip(vals, "sld")]
    infer_and_compare(one("Range", None, opset, inits, inputs=["s", "l", "d"]))


@pytest.mark.parametrize("opset", [7, 9, 13, 19, 21, 25])
def test_cast(opset):
    infer_and_compare(one("Cast", ["N", 2], opset, to=TP.INT32))


@pytest.mark.parametrize("opset", [15, 19, 25])
def test_cast_like(opset):
    infer_and_compare(one("CastLike", [4, "N"], opset, [i64("t", [1])]))


@pytest.mark.parametrize("opset", [9, 13])
def test_nonzero(opset):
    # onnx leaves the count dim unknown: rank-2, [rank, ?]
    infer_and_compare(one("NonZero", [3, 4, 5], opset))


@pytest.mark.parametrize("opset", [9, 11])
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot(opset, axis):
    inits = [numpy_helper.from_array(np.array(7, np.int64), "d"), f32("v", [0, 1])]
    m = one("OneHot", [2, 3], opset, inits, inputs=["x", "d", "v"], elem=TP.INT64, axis=axis)
    infer_and_compare(m)
