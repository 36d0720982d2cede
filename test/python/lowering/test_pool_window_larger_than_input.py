"""Pools with ceil_mode whose window is larger than the padded input (#29,
#31 class 4): transformers' EfficientNet pooler is ``AvgPool2d(hidden_dim,
ceil_mode=True)`` over a small map. ONNX's output size is
ceil((in + pads - ke) / s) + 1 = 1 and onnxruntime runs it; we refused it
("padded input size 4 is smaller than the effective kernel size 640").
Static axes cut the kernel to the padded input (no 640 x 640 pad per
channel); dilated or dynamic axes get the end padding. Compared with
onnxruntime at -O0 and -O3; a window that leaves no output is still refused
in one line."""
from __future__ import annotations

import os

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import onnx_mlir_py
from onnx_mlir_py.errors import OnnxMlirError
from onnx_mlir_py.runtime import ExecutionSession


def _pool(op, x_shape, **attrs):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph([helper.make_node(op, ["x"], ["y"], name="pool", **attrs)], "p",
                          [x], [y])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)


CASES = [
    # the EfficientNet pooler's form: kernel = stride = 640 over 4x4 (and 7x5)
    ("AveragePool", dict(kernel_shape=[640, 640], strides=[640, 640])),
    ("AveragePool", dict(kernel_shape=[9, 9], strides=[9, 9], count_include_pad=1,
                         pads=[1, 0, 1, 2])),
    ("AveragePool", dict(kernel_shape=[9, 3], strides=[9, 2], pads=[1, 1, 1, 1])),
    ("MaxPool", dict(kernel_shape=[640, 640], strides=[640, 640])),
    ("MaxPool", dict(kernel_shape=[6, 6], strides=[5, 5], pads=[1, 1, 0, 0])),
    # dilated: the end padding, not a cut kernel
    ("MaxPool", dict(kernel_shape=[4, 4], strides=[7, 7], dilations=[2, 2])),
]


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("dynamic", [False, True])
def test_window_larger_than_input(tmp_path, case, opt_level, dynamic):
    op, attrs = CASES[case]
    if dynamic and max(attrs["kernel_shape"]) > 64:
        pytest.skip("a dynamic axis pads to the whole window: 640 x 640 is the static form's")
    shapes = [(1, 8, 4, 4), (2, 3, 7, 5)]
    model = _pool(op, [None, None, "H", "W"] if dynamic else list(shapes[0]),
                  ceil_mode=1, **attrs)
    so = onnx_mlir_py.compile(model, output=os.path.join(tmp_path, "m.so"), opt_level=opt_level)
    sess = ExecutionSession(so)
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for shape in (shapes if dynamic else shapes[:1]):
        x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
        want = ref.run(None, {"x": x})[0]
        got = sess.run([x])[0]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_static_window_is_cut_not_padded(tmp_path):
    """The 640 x 640 window over 4x4 reads a 4x4 window of the input: no
    pad of 640 x 640 per channel in the lowered IR."""
    model = _pool("AveragePool", [1, 8, 4, 4], ceil_mode=1, kernel_shape=[640, 640],
                  strides=[640, 640])
    text = open(onnx_mlir_py.compile(model, output=os.path.join(tmp_path, "m.mlir"),
                                     emit="EmitMLIR", opt_level=0)).read()
    assert "tensor<4x4xf32>" in text                     # the window: the input's 4x4
    assert "640x" not in text and "x640" not in text, \
        [ln for ln in text.splitlines() if "640x" in ln or "x640" in ln][:3]


@pytest.mark.parametrize("ceil_mode,kernel,strides", [(1, 10, 3), (0, 5, 5)])
def test_window_with_no_output_is_refused(tmp_path, ceil_mode, kernel, strides):
    """4 + 3 <= 10 (ceil_mode) and 4 < 5 (floor) leave no output: refused in one line."""
    model = _pool("MaxPool", [1, 2, 4, 4], ceil_mode=ceil_mode, kernel_shape=[kernel, kernel],
                  strides=[strides, strides])
    with pytest.raises(OnnxMlirError) as ei:
        onnx_mlir_py.compile(model, output=os.path.join(tmp_path, "m.so"), opt_level=0)
    msg = str(ei.value)
    assert "\n" not in msg and "'pool'" in msg and "smaller than the effective kernel" in msg
