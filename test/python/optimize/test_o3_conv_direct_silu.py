"""-O3 direct convs (passes/optimize/conv_direct.py, the rows tile: stems and
the few-channel 3x3 convs of wide maps) followed by SiLU (Sigmoid + Mul, two
generics reading the conv) and a residual Add: the chain is the kernel's
epilogue (epilogue.epilogue_chain, exp as math_approx's polynomial), checked
against onnxruntime at 1 and 2 threads, rows that end in a partial vector
(the residual read masked), both Mul operand orders, a bias and none, a
static batch of 2; and the sigmoid's exp (math_approx.sigmoid_exp, the
one-scale variant) against float64 at the extremes."""
from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from onnx_mlir_py.testing.check import assert_match, reference
from test_o3_conv_epilogue import _lowered


def direct_silu_model(c, f, hw, k, stride=1, bias=True, order="x*s", residual=False, batch=1):
    """Conv (pads k//2) -> SiLU (-> + r, an input of the output's shape)."""
    rng = np.random.default_rng(c * 100 + f + k + stride)
    inits = [nh.from_array((rng.standard_normal((f, c, k, k)) / np.sqrt(c * k * k))
                           .astype(np.float32), "W")]
    ins = ["x", "W"]
    if bias:
        inits.append(nh.from_array(rng.standard_normal(f).astype(np.float32), "B"))
        ins.append("B")
    p = k // 2
    oh, ow = ((d + 2 * p - k) // stride + 1 for d in hw)
    nodes = [h.make_node("Conv", ins, ["c"], pads=[p] * 4, strides=[stride] * 2),
             h.make_node("Sigmoid", ["c"], ["s"]),
             h.make_node("Mul", ["c", "s"] if order == "x*s" else ["s", "c"],
                         ["y" if not residual else "m"])]
    inputs = [h.make_tensor_value_info("x", TP.FLOAT, [batch, c, *hw])]
    if residual:
        nodes.append(h.make_node("Add", ["m", "r"], ["y"]))
        inputs.append(h.make_tensor_value_info("r", TP.FLOAT, [batch, f, oh, ow]))
    graph = h.make_graph(nodes, "g", inputs, [h.make_tensor_value_info("y", TP.FLOAT, None)], inits)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def _feeds(m, seed=0):
    rng = np.random.default_rng(seed)
    return {i.name: (rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]) * 3)
            .astype(np.float32) for i in m.graph.input}


CASES = [
    # (c, f, (h, w), k, keywords)
    (3, 16, (24, 66), 6, dict(stride=2)),                       # YOLO's stem: 33 columns
    (3, 64, (20, 40), 7, dict(stride=2, order="s*x")),          # ResNet-like 7x7/2
    (3, 16, (18, 38), 3, dict(stride=2, bias=False)),
    (16, 16, (6, 85), 3, dict(residual=True)),                   # a C3 bottleneck's 3x3
    (16, 32, (8, 170), 3, dict(stride=2)),                       # 16 -> 32 3x3/2, 85 columns
    (32, 16, (5, 96), 3, dict(residual=True, order="s*x", bias=False)),
    (16, 16, (6, 85), 3, dict(residual=True, batch=2)),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}x{c[2][0]}x{c[2][1]}-{c[1]}-k{c[3]}-" +
                         "-".join(f"{k}={v}" for k, v in c[4].items()))
@pytest.mark.parametrize("threads", [1, 2])
def test_direct_conv_silu_matches_onnxruntime(case, threads):
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    c, f, hw, k, kw = case
    m = direct_silu_model(c, f, hw, k, **kw)
    feeds = _feeds(m)
    with tempfile.TemporaryDirectory() as d:
        so = onnx_mlir_py.compile(m, output=os.path.join(d, "m.so"), opt_level=3)
        sess = ExecutionSession(so, num_threads=threads)
        got = sess.run([feeds[s.name] for s in sess.input_specs])
    assert_match(got, reference(m, feeds, "onnxruntime"), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}-k{c[3]}-{len(c[4])}")
def test_direct_conv_takes_the_chain(case):
    """The direct kernel replaces the conv, its bias, the Sigmoid, the Mul
    and the residual Add: no generic is left."""
    from onnx_mlir_py.passes.optimize.conv_direct import direct_convs
    from onnx_mlir_py.target import target_for
    c, f, hw, k, kw = case
    module = _lowered(direct_silu_model(c, f, hw, k, **kw))
    with module.context:
        assert direct_convs(module, target_for("x86-64-v4")) == 1
        text = str(module)
    assert "linalg.conv_2d_nchw_fchw" not in text
    assert "linalg.generic" not in text
    assert "math.exp" not in text                   # the polynomial


def test_direct_conv_silu_into_concat_stays_separate():
    """A SiLU whose output a Concat reads stays a separate op (written into
    the concat's buffer: epilogue._into_concat); the conv is still direct."""
    from onnx_mlir_py.passes.optimize.conv_direct import direct_convs
    from onnx_mlir_py.target import target_for
    m = direct_silu_model(3, 16, (24, 66), 6, stride=2)
    g = m.graph
    g.node.append(h.make_node("Concat", ["y", "y"], ["cat"], axis=1))
    del g.output[:]
    g.output.append(h.make_tensor_value_info("cat", TP.FLOAT, None))
    module = _lowered(m)
    with module.context:
        assert direct_convs(module, target_for("x86-64-v4")) == 1
        assert "linalg.generic" in str(module)


def test_sigmoid_exp_extremes():
    """Sigmoid and SiLU at -O3 (the one-scale exp of a sigmoid: x clamped to
    [-87, 89]) against float64: within 2e-7 relative where the result is
    normal, within 1e-38 absolute where it is tiny; 0, 1, inf and NaN
    (SiLU(-inf) = -inf * 0) exact."""
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    x = np.concatenate([np.linspace(-120, 120, 4001), [-np.inf, np.inf, np.nan, 0.0, -0.0],
                        [-88.8, -88.5, -88.0, -87.4, -87.0, -86.9, 86.9, 87.0, 87.4, 88.0, 88.5]])
    x = np.concatenate([x, np.random.default_rng(3).standard_normal(4000) * 10]).astype(np.float32)
    xi = h.make_tensor_value_info("x", TP.FLOAT, [x.size])
    g = h.make_graph([h.make_node("Sigmoid", ["x"], ["s"]), h.make_node("Mul", ["x", "s"], ["y"])],
                     "g", [xi], [h.make_tensor_value_info("s", TP.FLOAT, None),
                                 h.make_tensor_value_info("y", TP.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    with tempfile.TemporaryDirectory() as d:
        so = onnx_mlir_py.compile(m, output=os.path.join(d, "m.so"), opt_level=3)
        s, y = ExecutionSession(so).run([x])
    x64 = x.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        ws = 1.0 / (1.0 + np.exp(-x64))
        wy = x64 * ws
    for got, want in ((s, ws), (y, wy)):
        nan = np.isnan(want)
        assert np.array_equal(np.isnan(got), nan)
        inf = np.isinf(want)
        assert np.array_equal(got[inf], want[inf])
        nan |= inf
        err = np.abs(got[~nan] - want[~nan])
        tol = np.maximum(2e-7 * np.abs(want[~nan]), 1e-38 * np.maximum(1.0, np.abs(x64[~nan])))
        assert (err <= tol).all(), (x[~nan][err > tol][:5], got[~nan][err > tol][:5])
    assert s[x == np.inf][0] == 1.0 and y[x == np.inf][0] == np.inf
    assert s[x == -np.inf][0] == 0.0 and np.isnan(y[x == -np.inf][0])
    assert (s[x <= -88.5] == 0.0).all()
    assert s[x == 0][0] == 0.5 and y[x == 0][0] == 0.0


def test_hoisted_one_is_a_constant_of_the_epilogue():
    """After canonicalize (a window kernel's inliner ran before the direct
    convs) the Sigmoid's 1.0 is defined outside its generic: body_ops writes
    it as a constant again (not a captured scalar), so the kernel's exp is
    the sigmoid's one-scale one (YOLO's SiLU convs missed it)."""
    from mlir.passmanager import PassManager
    from onnx_mlir_py.ir_util import walk_ops
    from onnx_mlir_py.passes.optimize.kernel_fusion import body_ops
    from onnx_mlir_py.passes.optimize.math_approx import sigmoid_exp_names
    module = _lowered(direct_silu_model(3, 16, (24, 66), 6, stride=2))
    with module.context:
        PassManager.parse("builtin.module(canonicalize)").run(module.operation)
        sig = [g for g in walk_ops(module.operation, "linalg.generic")
               if "math.exp" in str(g.regions[0].blocks[0])]
        assert len(sig) == 1
        assert "arith.constant" not in str(sig[0].regions[0].blocks[0])   # hoisted
        captured = []
        ops, _result = body_ops(sig[0], {0: "%e_in"}, "t", captured)
    assert captured == []
    assert len(sigmoid_exp_names(tuple(ops))) == 1


def test_pool_then_direct_conv_silu_matches_onnxruntime():
    """MaxPool (a window kernel, inlined with canonicalize) before a direct
    conv + SiLU: the one-scale exp in the conv's epilogue, inputs large
    enough to reach its clamp, against onnxruntime at 1 and 2 threads."""
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    m = direct_silu_model(16, 32, (8, 170), 3, stride=2)
    g = m.graph
    g.node.insert(0, h.make_node("MaxPool", ["x0"], ["x"], kernel_shape=[3, 3], pads=[1] * 4))
    g.input[0].name = "x0"
    feeds = {"x0": (_feeds(m)["x0"] * 30).astype(np.float32)}
    with tempfile.TemporaryDirectory() as d:
        so = onnx_mlir_py.compile(m, output=os.path.join(d, "m.so"), opt_level=3)
        want = reference(m, feeds, "onnxruntime")
        atol = 2e-6 * float(np.max(np.abs(want[0])))
        for threads in (1, 2):
            sess = ExecutionSession(so, num_threads=threads)
            assert_match(sess.run([feeds["x0"]]), want, rtol=1e-5, atol=atol)
