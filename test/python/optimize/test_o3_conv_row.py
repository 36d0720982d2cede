"""-O3 1x1 convs of a 1x1 image (``passes/optimize/conv_row.py``): the
squeeze-excite block of MobileNetV3 (GlobalAveragePool -> 1x1 conv -> ReLU
-> 1x1 conv -> HardSigmoid -> Mul), with and without a bias, compared with
onnxruntime: static batch 1 and 2 (the batch-2 conv keeps the im2col
kernel) and a dynamic batch at two sizes, at 1 and 2 threads."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession

R = np.random.default_rng(7)
N = h.make_node


def _model(batch, c=40, sq=16, hw=7):
    w = {"w1": (sq, c, 1, 1), "b1": (sq,), "w2": (c, sq, 1, 1), "b2": (c,),
         "w3": (24, c, 1, 1)}
    inits = [nh.from_array(R.standard_normal(s).astype(np.float32) * 0.4, k) for k, s in w.items()]
    nodes = [N("GlobalAveragePool", ["x"], ["g"]),
             N("Conv", ["g", "w1", "b1"], ["f1"], kernel_shape=[1, 1]),
             N("Relu", ["f1"], ["r1"]),
             N("Conv", ["r1", "w2", "b2"], ["f2"], kernel_shape=[1, 1]),
             N("HardSigmoid", ["f2"], ["s"], alpha=1 / 6, beta=0.5),
             N("Mul", ["x", "s"], ["m"]),
             N("Conv", ["m", "w3"], ["y"], kernel_shape=[1, 1]),
             N("Conv", ["g", "w1"], ["z"], kernel_shape=[1, 1])]      # no bias, 1x1 image
    g = h.make_graph(nodes, "se", [h.make_tensor_value_info("x", T.FLOAT, [batch, c, hw, hw])],
                     [h.make_tensor_value_info(o, T.FLOAT, None) for o in ("y", "z", "s")], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


@pytest.mark.parametrize("batch,runs", [(1, [1]), (2, [2]), ("N", [1, 3])])
def test_squeeze_excite(tmp_path, batch, runs):
    model = _model(batch)
    so = onnx_mlir_py.compile(model, output=tmp_path / "m.so", opt_level=3)
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for b in runs:
        x = R.standard_normal((b, 40, 7, 7)).astype(np.float32)
        want = ref.run(None, {"x": x})
        for n in (1, 2):
            got = ExecutionSession(so, num_threads=n).run([x])
            for name, g_, w_ in zip("yzs", got, want):
                assert g_.shape == w_.shape, name
                np.testing.assert_allclose(g_, w_, rtol=1e-4, atol=1e-4,
                                           err_msg=f"{name} batch={b} threads={n}")
