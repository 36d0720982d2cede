"""-O3 window kernels with dynamic H/W (passes/optimize/pool_dyn.py):

- pools whose window has more than MAX_TAPS taps (transformers' EfficientNet
  pooler: AveragePool 1280 x 1280 with ceil_mode over a 7x7 map) run the
  clipped-loop kernel, reading the pad's source: unrolling the window never
  finished compiling (#29);
- depthwise convs (``depthwise_dyn``: EfficientNet / MobileNet blocks with
  dynamic H/W) run the vector row kernel with their bias and activation
  fused, instead of linalg's generic loop nest.

Each model compiled once, run at several shapes at 1 and 2 threads against
onnxruntime."""
from __future__ import annotations

import time

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession


def _check(model, tmp_path, shapes, rtol=1e-5, atol=1e-5):
    so = onnx_mlir_py.compile(model, output=tmp_path / "m.so", opt_level=3)
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(3)
    for shape in shapes:
        x = rng.standard_normal(shape).astype(np.float32)
        want = ref.run(None, {"x": x})
        for t in (1, 2):
            got = ExecutionSession(so, num_threads=t).run([x])
            for g, w in zip(got, want):
                assert g.shape == w.shape, shape
                np.testing.assert_allclose(g, w, rtol=rtol, atol=atol,
                                           err_msg=f"at {shape}, {t} threads")


# -- large windows ---------------------------------------------------------------
BIG = [  # op, attributes (all with more than 64 taps)
    ("AveragePool", dict(kernel_shape=[1280, 1280], strides=[1280, 1280], ceil_mode=1,
                         count_include_pad=1)),                  # transformers' pooler
    ("AveragePool", dict(kernel_shape=[640, 640], strides=[640, 640], ceil_mode=1)),
    ("MaxPool", dict(kernel_shape=[640, 640], strides=[640, 640], ceil_mode=1)),
    ("AveragePool", dict(kernel_shape=[9, 9], strides=[2, 3], pads=[1, 2, 3, 4])),
    ("AveragePool", dict(kernel_shape=[9, 9], strides=[2, 3], pads=[1, 2, 3, 4],
                         count_include_pad=1)),
    ("MaxPool", dict(kernel_shape=[13, 5], strides=[2, 3], pads=[3, 2, 3, 4],
                     dilations=[1, 2], ceil_mode=1)),            # column dilation: shuffles
]


def _pool_model(op, attrs):
    nodes = [h.make_node(op, ["x"], ["p"], name="pool", **attrs),
             h.make_node("Relu", ["p"], ["y"])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["N", 5, "H", "W"])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 19)], ir_version=9)


@pytest.mark.parametrize("case", range(len(BIG)))
def test_large_dynamic_windows_against_onnxruntime(tmp_path, case):
    op, attrs = BIG[case]
    t0 = time.perf_counter()
    _check(_pool_model(op, attrs), tmp_path,
           [(1, 5, 7, 7), (2, 5, 19, 37), (1, 5, 17, 23)])
    # the unrolled 1280 x 1280 window never finished compiling
    assert time.perf_counter() - t0 < 120


def test_large_window_reads_the_pads_source(tmp_path):
    """The 1280 x 1280 window becomes the clipped-loop kernel on the unpadded
    input: no tensor.pad and no pooling op left, a vector reduction per output."""
    import mlir.ir as ir

    from onnx_mlir_py.context import make_context
    from onnx_mlir_py.passes.optimize import dynamic_pools, resolve_dims
    from onnx_mlir_py.target import target_for
    path = onnx_mlir_py.compile(_pool_model(*BIG[0]), output=tmp_path / "m.mlir",
                                emit="EmitMLIR")
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(open(path).read())
        resolve_dims(module)
        assert "tensor.pad" in str(module)
        assert dynamic_pools(module, target_for("x86-64-v4"), threads=True) == 1
        text = str(module)
    assert "linalg.pooling" not in text and "tensor.pad" not in text
    assert "vector.reduction <add>" in text


# -- depthwise convs -----------------------------------------------------------------
DEPTHWISE = [  # kernel, stride, dilation, pads, bias, activation
    (3, 1, 1, [1, 1, 1, 1], True, "silu"),
    (5, 2, 1, [2, 2, 2, 2], True, "relu"),
    (3, 2, 1, [0, 0, 1, 1], False, "none"),
    (3, 1, 2, [2, 2, 2, 2], True, "relu"),
]


def _depthwise_model(k, s, d, pads, bias, act, c=20, seed=0):
    rng = np.random.default_rng(seed)
    inits = [numpy_helper.from_array(rng.standard_normal((c, 1, k, k)).astype(np.float32), "w")]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(c).astype(np.float32), "b"))
    nodes = [h.make_node("Conv", ["x"] + [i.name for i in inits], ["c"], group=c,
                         kernel_shape=[k, k], strides=[s, s], dilations=[d, d], pads=pads)]
    if act == "relu":
        nodes.append(h.make_node("Relu", ["c"], ["y"]))
    elif act == "silu":
        nodes += [h.make_node("Sigmoid", ["c"], ["sg"]), h.make_node("Mul", ["c", "sg"], ["y"])]
    else:
        nodes.append(h.make_node("Identity", ["c"], ["y"]))
    g = h.make_graph(nodes, "dw", [h.make_tensor_value_info("x", T.FLOAT, ["N", c, "H", "W"])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("case", range(len(DEPTHWISE)))
def test_dynamic_depthwise_against_onnxruntime(tmp_path, case):
    _check(_depthwise_model(*DEPTHWISE[case]), tmp_path,
           [(1, 20, 17, 23), (2, 20, 8, 40), (1, 20, 5, 3)], rtol=1e-4, atol=1e-4)


def test_dynamic_depthwise_gets_the_row_kernel():
    """The plan gives a dynamic-H/W depthwise conv to depthwise_dyn (it was
    'linalg': no kernel accepted it), and its bias and ReLU are fused."""
    import mlir.ir as ir

    from onnx_mlir_py.context import make_context
    from onnx_mlir_py.passes.optimize import dynamic_pools, resolve_dims
    from onnx_mlir_py.passes.optimize.kernel_plan import plan_kernels
    from onnx_mlir_py.target import target_for
    import tempfile
    import os
    with tempfile.TemporaryDirectory() as d:
        path = onnx_mlir_py.compile(_depthwise_model(*DEPTHWISE[1]),
                                    output=os.path.join(d, "m.mlir"), emit="EmitMLIR")
        text = open(path).read()
    target = target_for("x86-64-v4")
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        resolve_dims(module)
        plan = plan_kernels(module, target, True)
        assert [e.kernel for e in plan.entries] == ["depthwise_dyn"]
        # rows x vectors of accumulators: the FMA pipes x latency (2 x 4 here, 1 x 4 on Zen 4)
        assert plan.entries[0].tile == "8x1 / 4x2 rows x vec"
        assert plan_kernels(module, target_for("znver4"), True).entries[0].tile \
            == "4x1 / 2x2 rows x vec"
        assert dynamic_pools(module, target, threads=True, plan=plan) == 1
        out = str(module)
    assert "linalg.depthwise_conv" not in out
    assert "vector.fma" in out and "arith.maximumf" in out     # the taps; the fused ReLU
    assert out.count("linalg.generic") == 0                     # bias add and ReLU fused
