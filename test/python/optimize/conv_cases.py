"""Models of independent Conv cases (each its own input, optional bias and
activation) and their check against onnxruntime, shared by the direct conv
tests (test_o3_conv_direct.py, test_o3_conv_direct_pixels.py).

A case is ``(tag, (C, H, W), filters, kernel, conv attributes, bias,
activation)`` with activation None, "relu", "hardswish" or "clip" (0..6)."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession

ACTIVATIONS = {"relu": "Relu", "hardswish": "HardSwish", "clip": "Clip"}


def conv_model(cases, batch, rng, w_scale: float):
    """(model, output names): one Conv (+ activation) per case, weights
    ``w_scale`` x standard normal, batch ``batch`` (an int or a dim name)."""
    nodes, inits, inputs, outputs = [], [], [], []
    inits += [nh.from_array(np.array(0.0, np.float32), "lo"),
              nh.from_array(np.array(6.0, np.float32), "hi")]
    for tag, (c, hh, ww), f, k, attrs, bias, act in cases:
        inputs.append(h.make_tensor_value_info(f"x_{tag}", T.FLOAT, [batch, c, hh, ww]))
        inits.append(nh.from_array((rng.standard_normal((f, c, k, k)) * w_scale)
                                   .astype(np.float32), f"w_{tag}"))
        ins = [f"x_{tag}", f"w_{tag}"]
        if bias:
            inits.append(nh.from_array(rng.standard_normal(f).astype(np.float32), f"b_{tag}"))
            ins.append(f"b_{tag}")
        y = f"y_{tag}"
        nodes.append(h.make_node("Conv", ins, [f"c_{tag}" if act else y], kernel_shape=[k, k],
                                 **attrs))
        if act:
            nodes.append(h.make_node(ACTIVATIONS[act], [f"c_{tag}"] +
                                     (["lo", "hi"] if act == "clip" else []), [y]))
        outputs.append(y)
    g = h.make_graph(nodes, "g", inputs, [h.make_tensor_value_info(o, T.FLOAT, None)
                                          for o in outputs], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), outputs


def check_cases(tmp_path, cases, batch, sizes, rng, w_scale: float, x_scale: float = 1.0,
                threads=(1, 2), march=None):
    """Compile :func:`conv_model` at -O3 (``march``) and compare every output
    with onnxruntime's at each batch size of ``sizes`` and thread count."""
    model, outputs = conv_model(cases, batch, rng, w_scale)
    compare_with_ort(tmp_path, model, outputs, sizes, threads, march=march,
                     feeds=lambda b: {f"x_{tag}": (rng.standard_normal((b, *shape)) * x_scale)
                                      .astype(np.float32) for tag, shape, *_ in cases})


def compare_with_ort(tmp_path, model, outputs, sizes, threads, feeds, march=None):
    """Compile ``model`` at -O3 (``march``) and compare ``outputs`` with
    onnxruntime's for ``feeds(b)`` at each batch size ``b`` of ``sizes`` and
    each thread count of ``threads``."""
    so = onnx_mlir_py.compile(model, output=tmp_path / "m.so", opt_level=3, march=march)
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for b in sizes:
        fd = feeds(b)
        want = ref.run(outputs, fd)
        for n in threads:
            sess = ExecutionSession(so, num_threads=n)
            got = sess.run([fd[s.name] for s in sess.input_specs])
            for name, g, w in zip(outputs, got, want):
                assert g.shape == w.shape, name
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4,
                                           err_msg=f"{name} batch={b} threads={n}")
