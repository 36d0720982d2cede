"""QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearMatMul,
QLinearConv, ConvInteger: our shape inference against onnx's."""
import numpy as np
import pytest
from onnx import TensorProto as TP, helper, numpy_helper

from helpers import infer_and_compare, our_output_types, make_model
from onnx_mlir_py.errors import VerificationError
from _common import f32, one


def _init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


@pytest.mark.parametrize("opset", [10, 13, 19, 21, 25])
@pytest.mark.parametrize("zp", [None, np.int8(0), np.uint8(3)])
def test_quantize_linear(opset, zp):
    inits = [f32("s", 0.5)] + ([_init("z", zp)] if zp is not None else [])
    infer_and_compare(one("QuantizeLinear", ["N", 3, 4], opset, inits))


@pytest.mark.parametrize("opset", [21, 25])
def test_quantize_linear_output_dtype(opset):
    infer_and_compare(one("QuantizeLinear", [2, 3], opset, [f32("s", 0.5)],
                          output_dtype=TP.INT8))


@pytest.mark.parametrize("opset", [10, 13, 19, 21, 25])
@pytest.mark.parametrize("scale", [np.float32(0.5), np.float16(0.5)])
def test_dequantize_linear(opset, scale):
    if opset < 19 and scale.dtype == np.float16:
        scale = np.float32(scale)  # float16 scales exist since v19
    infer_and_compare(one("DequantizeLinear", ["N", 4], opset,
                          [_init("s", scale), _init("z", np.uint8(1))], elem=TP.UINT8))


def test_dequantize_per_axis_mismatch_is_rejected():
    m = one("DequantizeLinear", [2, 3], 13, [_init("s", np.ones(4, np.float32)),
                                             _init("z", np.zeros(4, np.uint8))],
            elem=TP.UINT8, axis=1)
    with pytest.raises(VerificationError, match="scale has 4 elements but input dim 1"):
        our_output_types(m)


def test_dynamic_quantize_linear():
    infer_and_compare(one("DynamicQuantizeLinear", [3, "N"], 11, outputs=("y", "s", "z")))


def test_qlinear_matmul():
    a, b = [("a", TP.UINT8, [2, 3, 4]), ("b", TP.UINT8, [4, 5])]
    inits = [f32("as", 0.1), _init("az", np.uint8(0)), f32("bs", 0.1),
             _init("bz", np.uint8(0)), f32("ys", 0.1), _init("yz", np.int8(0))]
    node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"],
                            ["y"], name="n")
    infer_and_compare(make_model([node], [a, b], ["y"], 21, inits))


def test_qlinear_conv_and_conv_integer():
    x, w = ("x", TP.UINT8, [1, 2, 7, 7]), ("w", TP.UINT8, [4, 2, 3, 3])
    inits = [f32("xs", 0.1), _init("xz", np.uint8(0)), f32("ws", 0.1),
             _init("wz", np.uint8(0)), f32("ys", 0.1), _init("yz", np.uint8(0))]
    q = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["q"],
                         name="q", pads=[1, 1, 1, 1], strides=[2, 2])
    c = helper.make_node("ConvInteger", ["x", "w"], ["c"], name="c")
    infer_and_compare(make_model([q, c], [x, w], ["q", "c"], 10, inits))
