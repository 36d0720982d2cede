"""com.microsoft FusedMatMul and FusedConv against onnxruntime, at -O0 and
-O3, each model compiled once and run at two sizes of a dynamic batch dim.

FusedMatMul: the 16 combinations of transA / transB / transBatchA /
transBatchB (alpha 1 and not), numpy batch broadcasting (ranks 4 x 3,
batch dims of 1), 1-D operands (their trans flags ignored, as onnxruntime
does), 2-D weights read transposed, f16 and f64. FusedConv: every
activation onnxruntime's CPU kernel has (none, Relu, Tanh, Sigmoid,
LeakyRelu, Clip, HardSigmoid), with and without B and Z, 1-D / 2-D / 3-D,
groups, strides, pads, f16. Refusals: unknown activation, wrong
activation_params, bad bias / Z shapes (compile time and run time),
transBatch with unequal ranks, element types onnxruntime cannot run."""
import itertools

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from dynamic_util import check_rejects, check_shapes, model

R = np.random.default_rng(11)
NP = {T.FLOAT: np.float32, T.FLOAT16: np.float16, T.DOUBLE: np.float64}


def _ms(op, ins, out, **attrs):
    return h.make_node(op, ins, [out], domain="com.microsoft", name=f"{op}_{out}", **attrs)


def _stored(logical, trans, trans_batch):
    """The stored shape of an operand whose matmul view is ``logical``
    (``[batch.., rows, cols]``) under trans / transBatch."""
    r = len(logical)
    if trans_batch:
        perm = list(range(1, r - 1)) + ([r - 1, 0] if trans else [0, r - 1])
    elif trans:
        perm = list(range(r - 2)) + [r - 1, r - 2]
    else:
        return list(logical)
    stored = [None] * r
    for view_axis, stored_axis in enumerate(perm):
        stored[stored_axis] = logical[view_axis]
    return stored


def _feeds(m, dims_of, batches=(2, 3), dt=T.FLOAT):
    """Random inputs for ``m`` with its symbolic dims set by ``dims_of(b)``."""
    out = []
    for bsz in batches:
        sym = dims_of(bsz)
        f = {}
        for i in m.graph.input:
            shape = [d.dim_value if d.HasField("dim_value") else sym[d.dim_param]
                     for d in i.type.tensor_type.shape.dim]
            f[i.name] = R.standard_normal(shape).astype(NP[dt])
        out.append(f)
    return out


# -- FusedMatMul ---------------------------------------------------------------------

@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("tba,tbb", list(itertools.product([0, 1], repeat=2)))
def test_fused_matmul_transposes(tmp_path, opt_level, tba, tbb):
    """Views A [n, 4, 5], B [n, 5, 6] (n dynamic) stored as each flag pair
    reads them; four nodes (transA x transB), alpha 1 and 0.5 / -2."""
    nodes, inputs = [], []
    for k, (ta, tb) in enumerate(itertools.product([0, 1], repeat=2)):
        a, b = f"a{k}", f"b{k}"
        inputs += [(a, T.FLOAT, _stored(["n", 4, 5], ta, tba)),
                   (b, T.FLOAT, _stored(["n", 5, 6], tb, tbb))]
        nodes.append(_ms("FusedMatMul", [a, b], f"y{k}", alpha=[1.0, 0.5, -2.0, 1.0][k],
                         transA=ta, transB=tb, transBatchA=tba, transBatchB=tbb))
    m = model(nodes, inputs, [(f"y{k}", T.FLOAT, None) for k in range(4)], ms_opset=1)
    check_shapes(tmp_path, m, _feeds(m, lambda n: {"n": n}), opt_level=opt_level,
                 rtol=1e-5, atol=1e-5, engine="onnxruntime")


@pytest.mark.parametrize("opt_level", [0, 3])
def test_fused_matmul_broadcast_and_vectors(tmp_path, opt_level):
    nodes = [
        # A [n, 1, 4, 5] (transA: stored [n, 1, 5, 4]) x B [3, 5, 6] -> [n, 3, 4, 6]
        _ms("FusedMatMul", ["a4", "b3"], "y0", transA=1, alpha=0.25),
        # transBatch with batch dims of 1 on either side: A view [2, 1, 4, 5], B view [1, n, 5, 6]
        _ms("FusedMatMul", ["atb", "btb"], "y1", transBatchA=1, transBatchB=1, transB=1),
        # 1-D A (transA ignored) x B [n, 5, 6] -> [n, 6]
        _ms("FusedMatMul", ["v5", "b3n"], "y2", transA=1),
        # A [n, 3, 5] x 1-D B (transB ignored) -> [n, 3]
        _ms("FusedMatMul", ["a3n", "v5"], "y3", transB=1, alpha=3.0),
        # activations [n, 7, 5] x weights stored [6, 5] (transB): the MatMul of a Linear
        _ms("FusedMatMul", ["x", "w"], "y4", transB=1, alpha=0.5),
    ]
    inputs = [("a4", T.FLOAT, ["n", 1, 5, 4]), ("b3", T.FLOAT, [3, 5, 6]),
              ("atb", T.FLOAT, [4, 2, 1, 5]), ("btb", T.FLOAT, [6, 1, "n", 5]),
              ("v5", T.FLOAT, [5]), ("b3n", T.FLOAT, ["n", 5, 6]), ("a3n", T.FLOAT, ["n", 3, 5]),
              ("x", T.FLOAT, ["n", 7, 5])]
    w = h.make_tensor("w", T.FLOAT, [6, 5], R.standard_normal(30).astype(np.float32).tolist())
    m = model(nodes, inputs, [(f"y{k}", T.FLOAT, None) for k in range(5)], inits=[w],
              ms_opset=1)
    m.graph.input.append(h.make_tensor_value_info("w", T.FLOAT, [6, 5]))
    feeds = _feeds(m, lambda n: {"n": n}, batches=(1, 3))
    for f in feeds:
        f.pop("w")
    check_shapes(tmp_path, m, feeds, opt_level=opt_level, rtol=1e-5, atol=1e-5,
                 engine="onnxruntime")


@pytest.mark.parametrize("dt,rtol,atol", [(T.FLOAT16, 2e-3, 2e-3), (T.DOUBLE, 1e-12, 1e-12)])
def test_fused_matmul_types(tmp_path, dt, rtol, atol):
    nodes = [_ms("FusedMatMul", ["a", "b"], "y", transA=1, transBatchB=1, alpha=0.5)]
    m = model(nodes, [("a", dt, ["n", 5, 4]), ("b", dt, [5, "n", 6])], [("y", dt, None)],
              ms_opset=1)
    check_shapes(tmp_path, m, _feeds(m, lambda n: {"n": n}, dt=dt), opt_level=3, rtol=rtol,
                 atol=atol, engine="onnxruntime")


@pytest.mark.parametrize("a,b,attrs,dt,match", [
    ([4, 5], [5, 6], dict(transBatchA=1), T.FLOAT,
     r"FusedMatMul.*transBatchA=1 / transBatchB=0 need inputs of one rank >= 3"),
    ([2, 4, 5], [5, 6], dict(transBatchB=1), T.FLOAT,
     r"FusedMatMul.*transBatchA=0 / transBatchB=1 need inputs of one rank >= 3"),
    ([2, 4, 5], [2, 4, 6], dict(transA=0), T.FLOAT,
     r"FusedMatMul.*inner dimensions differ: A \[2x4x5\] \(transA=0, transBatchA=0\) has K = 5"),
    ([4, 5], [4, 6], dict(transA=1, alpha=2.0), T.BFLOAT16,
     r"FusedMatMul.*element type bfloat16 is not supported"),
])
def test_fused_matmul_refusals(tmp_path, a, b, attrs, dt, match):
    m = model([_ms("FusedMatMul", ["a", "b"], "y", **attrs)], [("a", dt, a), ("b", dt, b)],
              [("y", dt, None)], ms_opset=1)
    with pytest.raises(Exception, match=match):
        onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=0)


def test_fused_matmul_k_checked_at_run_time(tmp_path):
    m = model([_ms("FusedMatMul", ["a", "b"], "y", transB=1)],
              [("a", T.FLOAT, ["n", "k"]), ("b", T.FLOAT, [6, 5])], [("y", T.FLOAT, None)],
              ms_opset=1)
    check_rejects(tmp_path, m, [{"a": np.ones((2, 4), np.float32), "b": np.ones((6, 5), np.float32)}],
                  "FusedMatMul.*inner dimensions differ: A has K = 4, B has K = 5")


# -- FusedConv ---------------------------------------------------------------------

ACTS = [(None, None), ("Relu", None), ("Tanh", None), ("Sigmoid", None),
        ("LeakyRelu", [0.1]), ("Clip", [-0.5, 0.7]), ("HardSigmoid", [0.3, 0.4])]


def _act_attrs(act, params):
    a = {}
    if act is not None:
        a["activation"] = act
    if params is not None:
        a["activation_params"] = params
    return a


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("act,params", ACTS, ids=[str(a) for a, _ in ACTS])
def test_fused_conv(tmp_path, opt_level, act, params):
    """2-D 3x3 pad 1 with B and Z (the Conv + Add + activation of a residual
    block); 2-D stride 2, group 2, no B, no Z; 2-D with B, no Z; 1-D and 3-D
    with B and Z. Batch n dynamic."""
    aa = _act_attrs(act, params)
    nodes = [
        _ms("FusedConv", ["x", "w", "b", "z"], "y0", pads=[1, 1, 1, 1], **aa),
        _ms("FusedConv", ["x", "wg"], "y1", strides=[2, 2], group=2, **aa),
        _ms("FusedConv", ["x", "w", "b"], "y2", kernel_shape=[3, 3], dilations=[2, 1], **aa),
        _ms("FusedConv", ["x1", "w1", "b", "z1"], "y3", pads=[2, 0], **aa),
        _ms("FusedConv", ["x3", "w3", "b", "z3"], "y4", auto_pad="SAME_UPPER", **aa),
    ]
    inputs = [("x", T.FLOAT, ["n", 4, 9, 8]), ("w", T.FLOAT, [8, 4, 3, 3]), ("b", T.FLOAT, [8]),
              ("z", T.FLOAT, ["n", 8, 9, 8]), ("wg", T.FLOAT, [8, 2, 3, 3]),
              ("x1", T.FLOAT, ["n", 4, 10]), ("w1", T.FLOAT, [8, 4, 3]),
              ("z1", T.FLOAT, ["n", 8, 10]),
              ("x3", T.FLOAT, ["n", 4, 4, 5, 3]), ("w3", T.FLOAT, [8, 4, 3, 2, 2]),
              ("z3", T.FLOAT, ["n", 8, 4, 5, 3])]
    m = model(nodes, inputs, [(f"y{k}", T.FLOAT, None) for k in range(5)], ms_opset=1)
    check_shapes(tmp_path, m, _feeds(m, lambda n: {"n": n}, batches=(1, 2)),
                 opt_level=opt_level, rtol=1e-4, atol=1e-5, engine="onnxruntime")


def test_fused_conv_f16(tmp_path):
    nodes = [_ms("FusedConv", ["x", "w", "b", "z"], "y", pads=[1, 1, 1, 1], activation="Relu")]
    dt = T.FLOAT16
    m = model(nodes, [("x", dt, ["n", 4, 6, 6]), ("w", dt, [8, 4, 3, 3]), ("b", dt, [8]),
                      ("z", dt, ["n", 8, 6, 6])], [("y", dt, None)], ms_opset=1)
    check_shapes(tmp_path, m, _feeds(m, lambda n: {"n": n}, dt=dt), opt_level=3, rtol=5e-3,
                 atol=5e-3, engine="onnxruntime")


def _conv_model(attrs, z_shape=(1, 8, 4, 4), b_shape=(8,), dt=T.FLOAT):
    return model([_ms("FusedConv", ["x", "w", "b", "z"], "y", **attrs)],
                 [("x", dt, [1, 4, 6, 6]), ("w", dt, [8, 4, 3, 3]), ("b", dt, list(b_shape)),
                  ("z", dt, list(z_shape))], [("y", dt, None)], ms_opset=1)


@pytest.mark.parametrize("m,match", [
    (_conv_model(dict(activation="Gelu")),
     r"FusedConv.*activation 'Gelu' is not supported \(expected one of Relu, Tanh"),
    (_conv_model(dict(activation="LeakyRelu")),
     r"FusedConv.*activation 'LeakyRelu' takes 1 activation_params, got 0"),
    (_conv_model(dict(activation="Clip", activation_params=[0.0])),
     r"FusedConv.*activation 'Clip' takes 2 activation_params, got 1"),
    (_conv_model(dict(activation="Relu"), b_shape=(7,)),
     r"FusedConv.*bias 'B' has shape \[7\]: expected 8 elements"),
    (_conv_model(dict(activation="Relu"), z_shape=(1, 8, 6, 6)),
     r"FusedConv.*input 'Z' has shape \[1x8x6x6\]: expected the convolution's output "
     r"shape \[1x8x4x4\]"),
    (_conv_model(dict(activation="Relu"), dt=T.DOUBLE),
     r"FusedConv.*element type double is not supported"),
], ids=["activation", "leaky-params", "clip-params", "bias", "z", "double"])
def test_fused_conv_refusals(tmp_path, m, match):
    with pytest.raises(Exception, match=match):
        onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=0)


def test_fused_conv_z_checked_at_run_time(tmp_path):
    m = _conv_model(dict(activation="Tanh"), z_shape=("n", 8, "h", 4))
    feeds = [{"x": np.ones((1, 4, 6, 6), np.float32), "w": np.ones((8, 4, 3, 3), np.float32),
              "b": np.ones(8, np.float32), "z": np.ones((1, 8, 3, 4), np.float32)}]
    check_rejects(tmp_path, m, feeds, r"FusedConv.*Z dim 2 is 3 but Y dim 2 is 4")
