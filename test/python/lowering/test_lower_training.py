"""Adagrad, Adam, Momentum (ai.onnx.preview.training v1) against
onnx.reference: one and two tensor groups, scalar and non-scalar X, T = 0
and T > 0, the attribute variants, f32 and f64 (and an f64 R with f32
tensors), a dynamic first dim run at two sizes (-O0 and -O3), and a run-time shape
mismatch of G failing with the node's name."""
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession

TR = "ai.onnx.preview.training"
ROLES = {"Adagrad": "XGH", "Momentum": "XGV", "Adam": "XGVH"}
ONNX = {np.float32: T.FLOAT, np.float64: T.DOUBLE}
MOM = dict(alpha=0.9, beta=0.1, mode="standard", norm_coefficient=0.0)


def _model(op, shapes, dtype, r_dtype=None, **attrs):
    """shapes: one shape (None dims dynamic) per optimized tensor."""
    roles = ROLES[op]
    n = len(shapes)
    et = ONNX[dtype]
    ins = [h.make_tensor_value_info("r", ONNX[r_dtype or dtype], []),
           h.make_tensor_value_info("t", T.INT64, [])]
    for c in roles:
        ins += [h.make_tensor_value_info(f"{c}{i}", et, s) for i, s in enumerate(shapes)]
    outs = [h.make_tensor_value_info(f"{c}{i}_new", et, s)
            for c in roles[:1] + roles[2:] for i, s in enumerate(shapes)]
    if op == "Momentum":
        attrs = {**MOM, **attrs}
    node = h.make_node(op, [v.name for v in ins], [v.name for v in outs], name="opt",
                       domain=TR, **attrs)
    m = h.make_model(h.make_graph([node], "g", ins, outs),
                     opset_imports=[h.make_opsetid("", 21), h.make_opsetid(TR, 1)])
    m.ir_version = 10
    return m


def _inputs(op, shapes, dtype, t, rng, r_dtype=None):
    feeds = [np.array(0.1, dtype=r_dtype or dtype), np.array(t, dtype=np.int64)]
    for c in ROLES[op]:
        for s in shapes:
            a = rng.standard_normal(s).astype(dtype)
            feeds.append(np.abs(a) if c == "H" else a)   # H: accumulated squares
    return feeds


def _check(got, want, dtype):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == dtype and g.shape == w.shape, (g.dtype, g.shape, w.shape)
        # onnx.reference's Adam casts the outputs of several groups to f32
        tol = 1e-12 if dtype == np.float64 and w.dtype == np.float64 else 2e-6
        np.testing.assert_allclose(g, w.astype(dtype), rtol=tol, atol=tol)


def _compare(tmp_path, op, shapes, dtype=np.float32, ts=(0, 3), run_shapes=None,
             r_dtype=None, opt_level=None, **attrs):
    m = _model(op, shapes, dtype, r_dtype, **attrs)
    kw = {} if opt_level is None else {"opt_level": opt_level}
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", **kw))
    ref = ReferenceEvaluator(m)
    rng = np.random.default_rng(0)
    for rs in run_shapes or [shapes]:
        for t in ts:
            feeds = _inputs(op, rs, dtype, t, rng, r_dtype)
            want = ref.run(None, {i.name: v for i, v in zip(m.graph.input, feeds)})
            _check(sess.run(feeds), want, dtype)


DTYPES = [np.float32, np.float64]
SHAPES = {"scalar": [[]], "2d": [[3, 4]], "two": [[3, 4], []]}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("attrs", [{}, dict(norm_coefficient=0.01, decay_factor=0.1,
                                            epsilon=1e-3)], ids=["default", "attrs"])
def test_adagrad(tmp_path, dtype, shapes, attrs):
    _compare(tmp_path, "Adagrad", shapes, dtype, **attrs)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("attrs", [{}, dict(norm_coefficient=0.001, norm_coefficient_post=0.02,
                                            alpha=0.95, beta=0.1, epsilon=1e-3)],
                         ids=["default", "attrs"])
def test_adam(tmp_path, dtype, shapes, attrs):
    _compare(tmp_path, "Adam", shapes, dtype, **attrs)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", SHAPES.values(), ids=SHAPES.keys())
@pytest.mark.parametrize("attrs", [dict(mode="standard"),
                                   dict(mode="nesterov"),
                                   dict(mode="nesterov", norm_coefficient=0.01, alpha=0.5,
                                        beta=0.7)], ids=["standard", "nesterov", "attrs"])
def test_momentum(tmp_path, dtype, shapes, attrs):
    _compare(tmp_path, "Momentum", shapes, dtype, **attrs)


@pytest.mark.parametrize("op", ["Adagrad", "Adam", "Momentum"])
def test_f64_r_with_f32_tensors(tmp_path, op):
    _compare(tmp_path, op, [[5]], np.float32, r_dtype=np.float64)


@pytest.mark.parametrize("op", ["Adagrad", "Adam", "Momentum"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("opt_level", [0, 3])
def test_dynamic_first_dim(tmp_path, op, dtype, opt_level):
    _compare(tmp_path, op, [[None, 3], [None]], dtype, opt_level=opt_level,
             run_shapes=[[[2, 3], [4]], [[5, 3], [1]]])


def test_dynamic_mismatch_fails_naming_the_node(tmp_path):
    m = _model("Adagrad", [[None, 3]], np.float32)
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so"))
    feeds = [np.array(0.1, np.float32), np.array(1, np.int64),
             np.ones((2, 3), np.float32), np.ones((4, 3), np.float32),
             np.ones((2, 3), np.float32)]
    with pytest.raises(Exception, match=r"node 'opt' \(Adagrad\): input 'G1' has 4 in dim 0, "
                       r"expected 2"):
        sess.run(feeds)
