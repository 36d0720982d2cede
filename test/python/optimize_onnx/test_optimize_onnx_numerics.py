"""The -O2/-O3 ONNX graph rewrites (passes/optimize_onnx) fire on the
patterns they target and the compiled model still agrees with onnx.reference
/ onnxruntime. Compiled at -O2: the rewrites run there without the -O3
kernel schedules (passes/optimize), so a failure here is the rewrites'."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from onnx_mlir_py.importer import import_model
from onnx_mlir_py.passes.optimize_onnx import optimize_onnx
from onnx_mlir_py.passes.pipeline import to_onnx_ir

RNG = np.random.default_rng(0)
OPT = 2


def _f32(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, shape).astype(np.float32)


def _model(nodes, inputs, inits, name):
    g = h.make_graph(nodes, name, [h.make_tensor_value_info(n, T.FLOAT, s) for n, s in inputs],
                     [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [nh.from_array(v, k) for k, v in inits.items()])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def conv_bn():
    # 16x8x3x3 weights: more than 1024 elements, so a dense_resource constant
    c, m = 8, 16
    nodes = [h.make_node("Conv", ["x", "W"], ["c"], pads=[1, 1, 1, 1], name="conv"),
             h.make_node("BatchNormalization", ["c", "s", "b", "mu", "var"], ["bn"],
                         epsilon=1e-3, name="bn"),
             h.make_node("Relu", ["bn"], ["y"])]
    inits = {"W": _f32(m, c, 3, 3), "s": _f32(m), "b": _f32(m), "mu": _f32(m),
             "var": _f32(m, lo=0.5, hi=2.0)}
    return _model(nodes, [("x", [1, c, 10, 10])], inits, "conv_bn"), {"fold-bn-into-conv": 1}


def depthwise_bn():
    c = 6
    nodes = [h.make_node("Conv", ["x", "W", "cb"], ["c"], group=c, pads=[1, 1, 1, 1],
                         strides=[2, 2]),
             h.make_node("BatchNormalization", ["c", "s", "b", "mu", "var"], ["y"])]
    inits = {"W": _f32(c, 1, 3, 3), "cb": _f32(c), "s": _f32(c), "b": _f32(c), "mu": _f32(c),
             "var": _f32(c, lo=0.5, hi=2.0)}
    return _model(nodes, [("x", [2, c, 9, 9])], inits, "dw_bn"), {"fold-bn-into-conv": 1}


def conv_scale_shift():
    m = 4
    nodes = [h.make_node("Conv", ["x", "W", "cb"], ["c"], strides=[2, 2]),
             h.make_node("Mul", ["k", "c"], ["c1"]),
             h.make_node("Add", ["c1", "a"], ["c2"]),
             h.make_node("Div", ["c2", "d"], ["c3"]),
             h.make_node("Sub", ["c3", "sb"], ["y"])]
    inits = {"W": _f32(m, 3, 3, 3), "cb": _f32(m), "k": _f32(m, 1, 1),
             "a": _f32(1, m, 1, 1), "d": _f32(m, 1, 1, lo=0.5, hi=2.0), "sb": _f32(m, 1, 1)}
    return _model(nodes, [("x", [1, 3, 9, 9])], inits, "scale_shift"), \
        {"fold-affine-into-conv": 4}


def matmul_bias():
    nodes = [h.make_node("MatMul", ["x", "W1"], ["m1"]),
             h.make_node("Add", ["m1", "b1"], ["a1"]),
             h.make_node("Relu", ["a1"], ["r"]),
             h.make_node("MatMul", ["r", "W2"], ["m2"]),
             h.make_node("Add", ["b2", "m2"], ["y"])]
    inits = {"W1": _f32(16, 32), "b1": _f32(32), "W2": _f32(32, 8), "b2": _f32(1, 1, 8)}
    return _model(nodes, [("x", [2, 5, 16])], inits, "mm_bias"), {"fuse-matmul-bias": 2}


def matmul_bias_2d():
    nodes = [h.make_node("MatMul", ["x", "W"], ["m"]), h.make_node("Add", ["m", "b"], ["y"])]
    return _model(nodes, [("x", [3, 40])], {"W": _f32(40, 30), "b": _f32(3, 30)}, "mm2d"), \
        {"fuse-matmul-bias": 1}


def data_movement():
    nodes = [h.make_node("Transpose", ["x"], ["t1"], perm=[1, 2, 0]),
             h.make_node("Transpose", ["t1"], ["t2"], perm=[2, 0, 1]),      # identity pair
             h.make_node("Transpose", ["t2"], ["t3"], perm=[0, 2, 1]),
             h.make_node("Transpose", ["t3"], ["t4"], perm=[1, 0, 2]),      # -> [2, 0, 1]
             h.make_node("Reshape", ["t4", "s1"], ["r1"]),
             h.make_node("Reshape", ["r1", "s2"], ["r2"]),
             h.make_node("Cast", ["r2"], ["c"], to=T.FLOAT),
             h.make_node("Expand", ["c", "s2"], ["e"]),
             h.make_node("Add", ["e", "one"], ["y"])]
    inits = {"s1": np.array([4, 6], np.int64), "s2": np.array([3, 8], np.int64),
             "one": np.ones((1,), np.float32)}
    g = h.make_graph(nodes, "moves", [h.make_tensor_value_info("x", T.FLOAT, [2, 3, 4])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [nh.from_array(v, k) for k, v in inits.items()])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m, {"merge-transposes": 2, "merge-reshapes": 1, "remove-identity-like": 2}


def gemm_weights():
    # 48x40 weights (a dense_resource): transB on the constant, and a constant
    # Transpose feeding a MatMul
    nodes = [h.make_node("Gemm", ["x", "W", "b"], ["g"], transB=1, alpha=0.5, beta=2.0),
             h.make_node("Transpose", ["V"], ["vt"], perm=[1, 0]),
             h.make_node("MatMul", ["g", "vt"], ["y"])]
    inits = {"W": _f32(48, 40), "b": _f32(48), "V": _f32(24, 48)}
    return _model(nodes, [("x", [3, 40])], inits, "gemm_w"), \
        {"pretranspose-gemm-weights": 1, "fold-constant-transposes": 1}


CASES = [conv_bn, depthwise_bn, conv_scale_shift, matmul_bias, matmul_bias_2d, data_movement,
         gemm_weights]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_rewrite_fires_and_matches_reference(case, tmp_path):
    model, expected = case()
    module = import_model(model)
    to_onnx_ir(module)
    counts = optimize_onnx(module)
    for name, n in expected.items():
        assert counts[name] >= n, (name, counts)
    feeds = {i.name: _f32(*[d.dim_value for d in i.type.tensor_type.shape.dim])
             for i in model.graph.input}
    want = ReferenceEvaluator(model).run(None, feeds)[0]
    so = onnx_mlir_py.compile(model, output=tmp_path / "m.so", opt_level=OPT)
    got = onnx_mlir_py.ExecutionSession(so).run(list(feeds.values()))[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.quick
def test_bn_fold_removes_the_batchnorm_from_the_lowered_ir(tmp_path):
    model, _ = conv_bn()
    out = onnx_mlir_py.compile(model, output=tmp_path / "m.mlir", emit="EmitMLIR", opt_level=2)
    text = open(out).read()
    assert "math.rsqrt" not in text          # the BN formula is gone at -O2/-O3 ...
    out0 = onnx_mlir_py.compile(model, output=tmp_path / "m0.mlir", emit="EmitMLIR", opt_level=0)
    assert "math.rsqrt" in open(out0).read()  # ... and kept at -O0

