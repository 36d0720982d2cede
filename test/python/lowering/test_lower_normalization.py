"""InstanceNormalization, GroupNormalization, LRN, MeanVarianceNormalization,
RMSNormalization, LayerNormalization, LpNormalization: node tests, onnx.reference and
onnxruntime checks."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from lowering_util import check
from node_suite import run_case

N = helper.make_node
R = np.random.default_rng(2)

NODE_TESTS = ["test_instancenorm_epsilon", "test_group_normalization_example",
              "test_group_normalization_epsilon", "test_lrn", "test_lrn_default", "test_mvn",
              "test_rms_normalization_3d_axis1_epsilon", "test_rms_normalization_4d_axis2",
              "test_rms_normalization_default_axis"]


@pytest.mark.parametrize("name", NODE_TESTS)
def test_node(name):
    run_case(name)


def f32(*s):
    return R.standard_normal(s).astype(np.float32)


def test_instance_norm_3d_dynamic_batch():
    check([N("InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=1e-3)],
          {"x": f32(2, 3, 4, 2, 3)}, ["y"], inits=[("s", f32(3)), ("b", f32(3))],
          dyn_inputs=("x",), opset=6, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("opset", [18, 21])
def test_group_norm(opset):
    n_scale = 2 if opset == 18 else 6
    check([N("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2, epsilon=1e-4)],
          {"x": f32(2, 6, 5)}, ["y"], inits=[("s", f32(n_scale)), ("b", f32(n_scale))],
          opset=opset, rtol=1e-4, atol=1e-5)


def test_mvn_axes():
    check([N("MeanVarianceNormalization", ["x"], ["m"], axes=[1, 3])], {"x": f32(2, 5, 3, 3)},
          ["m"], opset=13, rtol=1e-4, atol=1e-5)


def test_lrn_even_size():
    # onnx.reference's LRN walks dim 0 instead of the channels: compare with
    # the spec formula directly
    from engine import run_model
    from lowering_util import make_model
    x = f32(2, 5, 3, 3)
    size, alpha, beta, bias = 4, 0.01, 0.6, 2.0
    sq = np.zeros_like(x)
    lo, hi = (size - 1) // 2, -(-(size - 1) // 2)
    for c in range(x.shape[1]):
        sq[:, c] = (x[:, max(0, c - lo):min(x.shape[1], c + hi + 1)] ** 2).sum(axis=1)
    expected = (x / (bias + alpha / size * sq) ** beta).astype(np.float32)
    m = make_model([N("LRN", ["x"], ["y"], size=size, alpha=alpha, beta=beta, bias=bias)],
                   {"x": x}, ["y"], opset=13)
    got = run_model(m, {"x": x}, [expected])[0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_rms_norm_broadcast_scale():
    check([N("RMSNormalization", ["x", "s"], ["y"], axis=-2, epsilon=1e-3)],
          {"x": f32(2, 3, 4)}, ["y"], inits=[("s", f32(1, 4))], opset=23, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("opset", [18, 21])
def test_group_norm_dynamic_channels(tmp_path, opset, opt_level):
    """x, scale and bias with every dim unknown (the node tests' dynamic mode):
    compiled once, 3 shapes vs onnxruntime; C not divisible by num_groups, or a
    scale of the wrong length, is an error from the compiled code."""
    from dynamic_util import check_rejects, check_shapes, model
    F = 1
    m = model([N("GroupNormalization", ["x", "s", "b"], ["y"], name="gn", num_groups=2,
                 epsilon=1e-3)],
              [("x", F, ["N", "C", "H", "W"]), ("s", F, ["S"]), ("b", F, ["S"])],
              [("y", F, None)], opset=opset)
    feeds = []
    for shape in [(1, 4, 3, 2), (2, 6, 1, 5), (3, 2, 4, 4)]:
        k = shape[1] if opset >= 21 else 2
        feeds.append({"x": f32(*shape), "s": f32(k), "b": f32(k)})
    check_shapes(tmp_path, m, feeds, opt_level, rtol=1e-4, atol=1e-4, engine="onnxruntime")
    k = 3 if opset >= 21 else 2
    check_rejects(tmp_path, m, [{"x": f32(1, 3, 2, 2), "s": f32(k), "b": f32(k)}],
                  r"node 'gn' \(GroupNormalization\): channels C = 3 are not divisible")
    k = 5 if opset >= 21 else 3
    check_rejects(tmp_path, m, [{"x": f32(1, 4, 2, 2), "s": f32(k), "b": f32(k)}],
                  r"node 'gn' \(GroupNormalization\): input 'scale' has shape \[" + str(k))


@pytest.mark.parametrize("p,axis,opset,dtype", [(2, -1, 22, np.float32), (1, 1, 22, np.float32),
                                                (2, 0, 1, np.float64), (1, -2, 1, np.float64)])
def test_lp_normalization_vs_onnxruntime(tmp_path, p, axis, opset, dtype):
    """Dynamic dims, two run-time shapes each; a zero vector gives 0 as in
    onnxruntime (onnx.reference divides by 0: NaN)."""
    from onnx import TensorProto as TP
    from dynamic_util import check_shapes, model
    et = TP.FLOAT if dtype == np.float32 else TP.DOUBLE
    dims = ["a", "b", 3]
    m = model([N("LpNormalization", ["x"], ["y"], p=p, axis=axis)], [("x", et, dims)],
              outputs=[("y", et, dims)],
              opset=opset)
    feeds = []
    for shape in [(2, 4, 3), (3, 1, 3)]:
        x = R.standard_normal(shape).astype(dtype)
        x[0] = 0.0
        x[..., 0] = 0.0
        feeds.append({"x": x})
    check_shapes(tmp_path, m, feeds, rtol=1e-5, atol=1e-6, engine="onnxruntime")


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("axis", [-1, 1, 0])
@pytest.mark.parametrize("with_bias", [True, False])
def test_layer_norm(dt, axis, with_bias):
    x = R.standard_normal((2, 3, 8)).astype(dt) * 3 + 1
    norm_shape = x.shape[axis if axis >= 0 else 3 + axis:]
    inits = [("s", R.standard_normal(norm_shape).astype(dt))]
    ins = ["x", "s"]
    if with_bias:
        inits.append(("b", R.standard_normal(norm_shape).astype(dt)))
        ins.append("b")
    check([N("LayerNormalization", ins, ["y"], axis=axis, epsilon=1e-3)], {"x": x}, ["y"],
          inits=inits, rtol=1e-4, atol=1e-5)


def test_layer_norm_mean_invstd_outputs():
    x = R.standard_normal((4, 5, 6)).astype(np.float32)
    inits = [("s", R.standard_normal((5, 6)).astype(np.float32)),
             ("b", R.standard_normal((6,)).astype(np.float32))]
    check([N("LayerNormalization", ["x", "s", "b"], ["y", "m", "i"], axis=1)], {"x": x},
          ["y", "m", "i"], inits=inits, rtol=1e-4, atol=1e-5)


def test_layer_norm_dynamic_batch():
    x = R.standard_normal((3, 7, 16)).astype(np.float32)
    inits = [("s", R.standard_normal((16,)).astype(np.float32)),
             ("b", R.standard_normal((16,)).astype(np.float32))]
    check([N("LayerNormalization", ["x", "s", "b"], ["y", "m"], axis=-1)], {"x": x},
          ["y", "m"], inits=inits, dyn_inputs=("x",), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("opset", [14, 15])
def test_batch_norm_training_mode(tmp_path, opset, opt_level):
    """training_mode=1: Y from the batch's mean / variance, running_mean and
    running_var = input * momentum + batch statistic * (1 - momentum); every
    dim but C dynamic, compiled once, run at 3 shapes vs onnx.reference."""
    from dynamic_util import check_shapes, model
    F = 1
    m = model([N("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"], name="bn",
                 training_mode=1, momentum=0.7, epsilon=1e-3)],
              [("x", F, ["N", 3, "H", "W"])] + [(k, F, [3]) for k in "sbmv"],
              [("y", F, None), ("rm", F, None), ("rv", F, None)], opset=opset)
    feeds = [{"x": f32(*shape) * 3 + 1, "s": f32(3), "b": f32(3), "m": f32(3),
              "v": np.abs(f32(3))} for shape in [(2, 3, 4, 5), (1, 3, 1, 7), (5, 3, 2, 2)]]
    check_shapes(tmp_path, m, feeds, opt_level, rtol=1e-4, atol=1e-5)


def test_batch_norm_training_differs_from_inference(tmp_path):
    """The same node with training_mode=0 normalizes by the input mean / var:
    the two results differ (the training path is not the inference one)."""
    from dynamic_util import model
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    F = 1
    outs = {}
    for tm, names in ((1, ["y", "rm", "rv"]), (0, ["y"])):
        m = model([N("BatchNormalization", ["x", "s", "b", "m", "v"], names, training_mode=tm)],
                  [("x", F, [4, 3, 5])] + [(k, F, [3]) for k in "sbmv"],
                  [(n, F, None) for n in names], opset=15)
        sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / f"m{tm}.so"))
        outs[tm] = sess.run([np.arange(60, dtype=np.float32).reshape(4, 3, 5),
                             np.ones(3, np.float32), np.zeros(3, np.float32),
                             np.zeros(3, np.float32), np.ones(3, np.float32)])
    y = outs[1][0]
    np.testing.assert_allclose(y.mean(axis=(0, 2)), 0, atol=1e-5)   # batch-normalized
    assert not np.allclose(outs[0][0], y)
