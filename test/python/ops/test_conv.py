"""Conv and ConvTranspose: our shape inference against onnx's, and
verifier errors."""
import pytest
from onnx import TensorProto as TP, helper

from helpers import infer_and_compare, make_model
from onnx_mlir_py.errors import VerificationError

pytestmark = pytest.mark.quick   # the quick tier (README, Tests)


F = TP.FLOAT


def conv(op, x, w, opset, bias=None, **attrs):
    ins = [("x", F, x), ("w", F, w)] + ([("b", F, bias)] if bias else [])
    node = helper.make_node(op, [n for n, _, _ in ins], ["y"], name="c", **attrs)
    return make_model([node], ins, ["y"], opset)


CONV_CASES = [
    ([1, 3, 8, 8], [4, 3, 3, 3], {}, [1, 4, 6, 6]),
    ([2, 3, 9, 9], [4, 3, 3, 3], dict(strides=[2, 2], pads=[1, 1, 1, 1]), [2, 4, 5, 5]),
    ([1, 4, 10, 10], [8, 2, 3, 3], dict(group=2, dilations=[2, 2]), [1, 8, 6, 6]),
    (["N", 3, 7, 7], [4, 3, 3, 3], dict(strides=[2, 2], auto_pad="SAME_UPPER"), [None, 4, 4, 4]),
    ([1, 3, 7, 8], [4, 3, 2, 3], dict(strides=[2, 3], auto_pad="SAME_LOWER"), [1, 4, 4, 3]),
    ([1, 3, 7, 7], [4, 3, 3, 3], dict(strides=[2, 2], auto_pad="VALID"), [1, 4, 3, 3]),
    ([1, 3, 16], [5, 3, 4], dict(kernel_shape=[4], strides=[3], pads=[2, 1]), [1, 5, 6]),
    ([1, 2, 5, 6, 7], [2, 2, 3, 3, 3], dict(pads=[1, 0, 1, 1, 0, 1]), [1, 2, 5, 4, 7]),
    ([1, 3, "H", 8], [4, 3, 3, 3], {}, [1, 4, None, 6]),
    ([1, 6, 8, 8], [6, 1, 3, 3], dict(group=6, pads=[1, 1, 1, 1]), [1, 6, 8, 8]),
]


@pytest.mark.parametrize("opset", [7, 11, 22, 25])
@pytest.mark.parametrize("x,w,attrs,want", CONV_CASES)
def test_conv(opset, x, w, attrs, want):
    got = infer_and_compare(conv("Conv", x, w, opset, bias=[w[0]], **attrs))
    assert got[0][1] == want


CONVT_CASES = [
    ([1, 3, 4, 4], [3, 2, 3, 3], {}, [1, 2, 6, 6]),
    ([1, 4, 4, 4], [4, 2, 3, 3], dict(group=2, strides=[2, 2]), [1, 4, 9, 9]),
    ([1, 3, 4, 4], [3, 2, 3, 3], dict(strides=[2, 2], pads=[1, 1, 1, 1],
                                      output_padding=[1, 1]), [1, 2, 8, 8]),
    (["N", 3, 5, 5], [3, 2, 3, 3], dict(strides=[2, 2], auto_pad="SAME_UPPER"), [None, 2, 10, 10]),
    ([1, 3, 5, 5], [3, 2, 3, 3], dict(strides=[2, 2], auto_pad="SAME_LOWER"), [1, 2, 10, 10]),
    ([1, 3, 5, 5], [3, 2, 3, 3], dict(strides=[2, 2], output_shape=[11, 11]), [1, 2, 11, 11]),
    ([1, 3, 5], [3, 2, 3], dict(dilations=[2]), [1, 2, 9]),
    ([1, 3, 5, "W"], [3, 2, 3, 3], {}, [1, 2, 7, None]),
]


@pytest.mark.parametrize("opset", [7, 11, 22])
@pytest.mark.parametrize("x,w,attrs,want", CONVT_CASES)
def test_conv_transpose(opset, x, w, attrs, want):
    got = infer_and_compare(conv("ConvTranspose", x, w, opset, **attrs))
    assert got[0][1] == want


@pytest.mark.parametrize("op,x,w,attrs,msg", [
    ("Conv", [1, 3, 8, 8], [4, 3, 3, 3], dict(kernel_shape=[3]),
     "attribute 'kernel_shape' has 1 values, expected 2"),
    ("Conv", [1, 3, 8, 8], [4, 3, 3, 3], dict(pads=[1, 1]),
     "attribute 'pads' has 2 values, expected 4"),
    ("Conv", [1, 4, 8, 8], [4, 2, 3, 3], dict(group=3),
     "input channels C = 4 is not divisible by group 3"),
    ("Conv", [1, 4, 8, 8], [4, 3, 3, 3], {},
     "expected dim 1 = C/group = 4/1 = 4, got 3"),
    ("Conv", [1, 3, 2, 2], [4, 3, 3, 3], {},
     "padded input size 2 is smaller than the effective kernel size 3"),
    ("Conv", [1, 3, 8, 8], [4, 3, 3, 3], dict(auto_pad="SAME", ),
     "attribute 'auto_pad' = 'SAME'"),
    ("ConvTranspose", [1, 4, 8, 8], [3, 2, 3, 3], {},
     "expected dim 0 = input channels 4, got 3"),
    ("ConvTranspose", [1, 3, 8, 8], [3, 2, 3, 3], dict(output_padding=[1]),
     "attribute 'output_padding' has 1 values, expected 2"),
])
def test_conv_invalid(op, x, w, attrs, msg):
    # onnx's own checker/inference may reject these too; ours must name the node.
    m = conv(op, x, w, 13, **attrs)
    with pytest.raises(VerificationError, match="node 'c' .*" + msg.replace("(", r"\(")
                       .replace(")", r"\)").replace("[", r"\[").replace("]", r"\]")):
        from helpers import our_output_types
        our_output_types(m)
