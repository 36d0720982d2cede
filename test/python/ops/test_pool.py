"""MaxPool (with Indices), AveragePool, LpPool, GlobalAveragePool,
GlobalMaxPool: our shape inference against onnx's, and verifier errors."""
import pytest
from onnx import TensorProto as TP, helper

from helpers import infer_and_compare, make_model, our_output_types
from onnx_mlir_py.errors import VerificationError

F = TP.FLOAT


def pool(op, x, opset, outputs=("y",), **attrs):
    node = helper.make_node(op, ["x"], list(outputs), name="p", **attrs)
    return make_model([node], [("x", F, x)], list(outputs), opset)


BASIC = [
    ([1, 3, 8, 8], dict(kernel_shape=[2, 2], strides=[2, 2]), [1, 3, 4, 4]),
    (["N", 3, 9, 9], dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), [None, 3, 5, 5]),
    ([1, 3, 7, 7], dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="SAME_UPPER"), [1, 3, 4, 4]),
    ([1, 3, 8, 7], dict(kernel_shape=[2, 3], strides=[3, 2], auto_pad="SAME_LOWER"), [1, 3, 3, 4]),
    ([1, 3, 7, 7], dict(kernel_shape=[3, 3], strides=[2, 2], auto_pad="VALID"), [1, 3, 3, 3]),
    ([2, 4, 10], dict(kernel_shape=[3]), [2, 4, 8]),
    ([1, 2, 6, "W", 6], dict(kernel_shape=[2, 2, 2], strides=[2, 2, 2]), [1, 2, 3, None, 3]),
]
CEIL = [
    ([1, 3, 8, 8], dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1), [1, 3, 4, 4]),
    ([1, 3, 7, 7], dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1), [1, 3, 4, 4]),
    ([1, 3, 6, 6], dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
     [1, 3, 4, 4]),
]


@pytest.mark.parametrize("opset", [7, 8, 10, 11, 12, 19, 22, 25])
@pytest.mark.parametrize("op", ["MaxPool", "AveragePool", "LpPool"])
@pytest.mark.parametrize("x,attrs,want", BASIC)
def test_pool(op, opset, x, attrs, want):
    got = infer_and_compare(pool(op, x, opset, **attrs))
    assert got[0][1] == want


@pytest.mark.parametrize("opset", [10, 11, 12, 19, 22, 25])
@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("x,attrs,want", CEIL)
def test_pool_ceil_mode(op, opset, x, attrs, want):
    got = infer_and_compare(pool(op, x, opset, **attrs))
    assert got[0][1] == want


@pytest.mark.parametrize("op", ["MaxPool", "AveragePool"])
@pytest.mark.parametrize("opset", [11, 19, 22])
def test_pool_ceil_mode_window_in_right_padding(op, opset):
    # a last window that would start in the right padding is dropped (in 5 +
    # pads 1+1, kernel 2, stride 3: ceil gives 3 windows, the third starts at
    # 6 >= 5 + 1). The v22 spec says so; before v22 onnx.shape_inference says
    # 3, but onnx's reference evaluator and onnxruntime compute 2 windows.
    import numpy as np
    from onnx.reference import ReferenceEvaluator
    m = pool(op, [1, 1, 5], opset, kernel_shape=[2], strides=[3], pads=[1, 1], ceil_mode=1)
    assert our_output_types(m)[0][1] == [1, 1, 2]
    ref = ReferenceEvaluator(m).run(None, {"x": np.ones((1, 1, 5), np.float32)})[0]
    assert ref.shape == (1, 1, 2)


@pytest.mark.parametrize("opset", [10, 12, 22])
def test_maxpool_dilations_and_indices(opset):
    m = pool("MaxPool", ["N", 3, 10, 10], opset, outputs=("y", "i"), kernel_shape=[3, 3],
             dilations=[2, 2], strides=[1, 2])
    got = infer_and_compare(m)
    assert got == [("f32", [None, 3, 6, 3]), ("i64", [None, 3, 6, 3])]


@pytest.mark.parametrize("opset", [8, 11])
def test_maxpool_indices(opset):
    m = pool("MaxPool", [2, 3, 8, 8], opset, outputs=("y", "i"), kernel_shape=[2, 2],
             strides=[2, 2], storage_order=1)
    assert infer_and_compare(m) == [("f32", [2, 3, 4, 4]), ("i64", [2, 3, 4, 4])]


@pytest.mark.parametrize("opset", [7, 11, 19, 22])
def test_averagepool_count_include_pad(opset):
    m = pool("AveragePool", [1, 3, 5, 5], opset, kernel_shape=[3, 3], pads=[1, 1, 1, 1],
             count_include_pad=1)
    assert infer_and_compare(m)[0][1] == [1, 3, 5, 5]


@pytest.mark.parametrize("opset", [7, 22, 25])
@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
@pytest.mark.parametrize("x,want", [([1, 3, 8, 8], [1, 3, 1, 1]), (["N", 5, 7], [None, 5, 1]),
                                    ([2, 3, 4, 5, 6], [2, 3, 1, 1, 1])])
def test_global_pool(op, opset, x, want):
    assert infer_and_compare(pool(op, x, opset))[0][1] == want


@pytest.mark.parametrize("op,x,attrs,msg", [
    ("MaxPool", [1, 3, 8, 8], dict(kernel_shape=[2, 2, 2]),
     r"attribute 'kernel_shape' has 3 values, expected 2"),
    ("MaxPool", [1, 3, 8, 8], dict(kernel_shape=[2, 2], strides=[0, 1]),
     r"attribute 'strides' = \[0, 1\]: expected values >= 1, got 0"),
    ("AveragePool", [1, 3, 8, 8], dict(kernel_shape=[2, 2], pads=[1, 1, 1]),
     r"attribute 'pads' has 3 values, expected 4"),
    ("AveragePool", [1, 3, 8, 8], dict(kernel_shape=[2, 2], pads=[1, 1, 1, 1],
                                       auto_pad="SAME_UPPER"),
     r"cannot be used with auto_pad = 'SAME_UPPER'"),
    ("MaxPool", [3, 8], dict(kernel_shape=[2]), r"expected rank >= 3"),
    ("LpPool", [1, 3, 2, 2], dict(kernel_shape=[3, 3]),
     r"padded input size 2 is smaller than the effective kernel size 3"),
])
def test_pool_invalid(op, x, attrs, msg):
    with pytest.raises(VerificationError, match=r"node 'p' \(" + op + r"\): .*" + msg):
        our_output_types(pool(op, x, 18, **attrs))
