"""SkipLayerNormalization, SkipSimplifiedLayerNormalization (com.microsoft) and
SimplifiedLayerNormalization (onnxruntime's, default domain) against
onnxruntime, compiled once per model at -O0 and -O3 and run at two or three
shapes of their dynamic dims: skip of input's shape, [S, H], [1, S, H] or a
dynamic batch that is 1 or the input's at run time; 2-D input; beta and bias
present and absent; every optional output (mean is zeros for the simplified
op, as onnxruntime writes it); f16 (statistics in f32, as onnxruntime) and
bf16 (onnxruntime's numpy API has no bf16: compared with its f32 run on the
same values); a scale broadcast over dims outside the normalized ones; f64.
Refusals at compile time and at run time. A BERT-sized SkipLayerNormalization
compiles at -O3 in seconds."""
from __future__ import annotations

import time

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from dynamic_util import check_rejects, check_shapes, model
from onnx_mlir_py.errors import OnnxMlirError
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.testing.check import reference

R = np.random.default_rng(7)
H = 16
MS = "com.microsoft"
NP = {T.FLOAT: np.float32, T.FLOAT16: np.float16, T.DOUBLE: np.float64,
      T.BFLOAT16: ml_dtypes.bfloat16}
TOL = {T.FLOAT: (1e-5, 1e-5), T.FLOAT16: (2e-3, 2e-3), T.DOUBLE: (1e-12, 1e-12)}
OUTS = ("y", "mean", "inv", "sum")


def _skip_model(op, et, x_dims, skip_dims, beta, bias, outs):
    """``outs``: which of output, mean, inv_std_var, input_skip_bias_sum."""
    names = ["x", "sk", "g"] + (["be"] if op == "SkipLayerNormalization" else [])
    names += ["bi"]
    use = {"be": beta, "bi": bias}
    ins = [n if use.get(n, True) else "" for n in names]
    while ins[-1] == "":
        ins.pop()
    dims = {"x": x_dims, "sk": skip_dims, "g": [H], "be": [H], "bi": [H]}
    inputs = [(n, et, dims[n]) for n in ins if n]
    res = [o if o in outs else "" for o in OUTS]
    while res[-1] == "":
        res.pop()
    node = h.make_node(op, ins, res, domain=MS, epsilon=1e-5, name="sln")
    types = {"y": et, "mean": T.FLOAT, "inv": T.FLOAT, "sum": et}
    return model([node], inputs, [(o, types[o], None) for o in res if o], ms_opset=1)


def _feeds(m, sizes, dtype):
    """Random feeds for ``m``'s inputs, dim names resolved by ``sizes``."""
    out = {}
    for i in m.graph.input:
        shape = [d.dim_value if d.HasField("dim_value") else sizes[d.dim_param]
                 for d in i.type.tensor_type.shape.dim]
        out[i.name] = R.standard_normal(shape).astype(np.float32).astype(dtype)
    return out


# (op, element type, x dims, skip dims, beta, bias, outputs, run-time sizes)
SKIP_CASES = {
    "ln_all_outputs": ("SkipLayerNormalization", T.FLOAT, ["b", "s", H], ["s", H], True, True,
                       OUTS, [dict(b=2, s=3), dict(b=1, s=5)]),
    "ln_plain": ("SkipLayerNormalization", T.FLOAT, ["b", "s", H], ["b", "s", H], False, False,
                 ("y",), [dict(b=2, s=3), dict(b=3, s=1)]),
    "ln_skip_batch_1_or_b": ("SkipLayerNormalization", T.FLOAT, ["b", "s", H], ["k", "s", H],
                             True, False, ("y", "inv"),
                             [dict(b=2, s=3, k=1), dict(b=3, s=2, k=3), dict(b=1, s=4, k=1)]),
    "ln_2d": ("SkipLayerNormalization", T.FLOAT, ["t", H], ["t", H], True, False,
              ("y", "mean"), [dict(t=3), dict(t=7)]),
    "simplified_all_outputs": ("SkipSimplifiedLayerNormalization", T.FLOAT, ["b", "s", H],
                               [1, "s", H], False, True, OUTS,
                               [dict(b=2, s=3), dict(b=4, s=2)]),
    "simplified_plain": ("SkipSimplifiedLayerNormalization", T.FLOAT, ["b", "s", H],
                         ["b", "s", H], False, False, ("y", "sum"),
                         [dict(b=2, s=3), dict(b=1, s=6)]),
    "ln_f16": ("SkipLayerNormalization", T.FLOAT16, ["b", "s", H], ["b", "s", H], True, True,
               OUTS, [dict(b=2, s=3), dict(b=1, s=5)]),
    "simplified_f16": ("SkipSimplifiedLayerNormalization", T.FLOAT16, ["b", "s", H], ["s", H],
                       False, True, ("y", "inv", "sum"), [dict(b=2, s=3), dict(b=3, s=4)]),
}


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("case", list(SKIP_CASES))
def test_skip_layer_norm(tmp_path, case, opt_level):
    op, et, xd, sd, beta, bias, outs, sizes = SKIP_CASES[case]
    m = _skip_model(op, et, xd, sd, beta, bias, outs)
    rtol, atol = TOL[et]
    check_shapes(tmp_path, m, [_feeds(m, s, NP[et]) for s in sizes], opt_level=opt_level,
                 rtol=rtol, atol=atol, engine="onnxruntime")


def _as_f32(m: onnx.ModelProto) -> onnx.ModelProto:
    """``m`` with its bf16 inputs and outputs declared f32 (the oracle's model)."""
    m = onnx.ModelProto.FromString(m.SerializeToString())
    for v in list(m.graph.input) + list(m.graph.output):
        if v.type.tensor_type.elem_type == T.BFLOAT16:
            v.type.tensor_type.elem_type = T.FLOAT
    return m


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("op", ["SkipLayerNormalization", "SkipSimplifiedLayerNormalization"])
def test_skip_layer_norm_bf16(tmp_path, op, opt_level):
    """bf16 is computed in f32 and rounded once, as onnxruntime's kernel:
    compared with onnxruntime's f32 run on the same (bf16) values, within a
    bf16 rounding; input_skip_bias_sum exactly."""
    m = _skip_model(op, T.BFLOAT16, ["b", "s", H], ["s", H], True, True, OUTS)
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=opt_level))
    for sizes in (dict(b=2, s=3), dict(b=1, s=5)):
        feeds = _feeds(m, sizes, ml_dtypes.bfloat16)
        names = [i.name for i in m.graph.input]
        got = sess.run([feeds[n] for n in names])
        want = reference(_as_f32(m), {k: v.astype(np.float32) for k, v in feeds.items()},
                         "onnxruntime")
        for name, g, w in zip([o.name for o in m.graph.output], got, want):
            if name in ("y", "sum"):
                assert g.dtype == ml_dtypes.bfloat16, (name, g.dtype)
                wb = w.astype(ml_dtypes.bfloat16).astype(np.float32)
                if name == "sum":
                    np.testing.assert_array_equal(g.astype(np.float32), wb, err_msg=name)
                else:
                    np.testing.assert_allclose(g.astype(np.float32), wb, rtol=1e-2, atol=1e-2,
                                               err_msg=name)
            else:
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=name)


def _simplified_model(et, x_dims, s_dims, axis, inv: bool):
    node = h.make_node("SimplifiedLayerNormalization", ["x", "s"], ["y", "inv"] if inv else ["y"],
                       axis=axis, epsilon=1e-5, name="sln")
    outs = [("y", et, None)] + ([("inv", T.FLOAT, None)] if inv else [])
    return model([node], [("x", et, x_dims), ("s", et, s_dims)], outs, opset=17)


# (element type, x dims, scale dims, axis, inv_std_var, run-time sizes)
SIMPLIFIED_CASES = {
    "last_axis_scale_1_or_s": (T.FLOAT, ["b", "s", H], ["k", H], -1, True,
                               [dict(b=2, s=3, k=1), dict(b=1, s=4, k=4)]),
    "two_axes_broadcast_scale": (T.FLOAT, ["b", 3, H], [1, H], 1, True,
                                 [dict(b=2), dict(b=5)]),
    "scale_outside_normalized_dims": (T.FLOAT, ["b", 3, H], [3, 1], -1, False,
                                      [dict(b=2), dict(b=1)]),
    "f16": (T.FLOAT16, ["b", "s", H], [H], -1, True, [dict(b=2, s=3), dict(b=1, s=2)]),
    "f64": (T.DOUBLE, ["b", H], [H], 0, True, [dict(b=2), dict(b=3)]),
}


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("case", list(SIMPLIFIED_CASES))
def test_simplified_layer_norm(tmp_path, case, opt_level):
    et, xd, sd, axis, inv, sizes = SIMPLIFIED_CASES[case]
    m = _simplified_model(et, xd, sd, axis, inv)
    rtol, atol = TOL[et]
    check_shapes(tmp_path, m, [_feeds(m, s, NP[et]) for s in sizes], opt_level=opt_level,
                 rtol=rtol, atol=atol, engine="onnxruntime")


def test_refusals(tmp_path):
    m = _simplified_model(T.FLOAT, ["b", H], [H], -1, False)
    m.graph.node[0].attribute.append(h.make_attribute("stash_type", 10))
    with pytest.raises(OnnxMlirError, match=r"node 'sln' \(SimplifiedLayerNormalization\): "
                       r"attribute 'stash_type' = 10: only 1"):
        onnx_mlir_py.compile(m, tmp_path / "a.so")
    m = _skip_model("SkipLayerNormalization", T.FLOAT, [2, 4, H], [3, 4, H], False, False, OUTS)
    with pytest.raises(OnnxMlirError, match=r"node 'sln' \(SkipLayerNormalization\): skip dim 0 "
                       r"is 3: expected 1 or input's batch size 2"):
        onnx_mlir_py.compile(m, tmp_path / "b.so")
    m = _skip_model("SkipSimplifiedLayerNormalization", T.FLOAT, [1, 2, 4, H], [1, 2, 4, H],
                    False, False, ("y",))
    with pytest.raises(OnnxMlirError, match=r"input 'input' has shape \[1x2x4x16\]: expected "
                       r"rank 2 or 3"):
        onnx_mlir_py.compile(m, tmp_path / "c.so")


def test_runtime_refusals(tmp_path):
    """A dynamic skip batch that is neither 1 nor the input's (onnxruntime
    would read the skip cyclically), and a dynamic scale dim that is neither 1
    nor X's: the compiled call fails naming the node."""
    m = _skip_model("SkipLayerNormalization", T.FLOAT, ["b", "s", H], ["k", "s", H], False,
                    False, ("y",))
    check_rejects(tmp_path, m, [_feeds(m, dict(b=2, s=3, k=3), np.float32)],
                  r"node 'sln' \(SkipLayerNormalization\): skip dim 0 is 3: expected 1 or "
                  r"input's batch size 2")
    m = _simplified_model(T.FLOAT, ["b", "s", H], ["k", H], -1, False)
    (tmp_path / "2").mkdir()
    check_rejects(tmp_path / "2", m, [_feeds(m, dict(b=2, s=3, k=2), np.float32)],
                  r"node 'sln' \(SimplifiedLayerNormalization\): scale dim 0 is 2: expected 1 "
                  r"or X's dim 1 \(3\)")


def test_bert_sized_o3_compiles_in_seconds(tmp_path):
    """SkipLayerNormalization at hidden 768 with dynamic batch and sequence:
    the -O3 pipeline finishes in seconds (no pathological IR) and matches."""
    hidden = 768
    node = h.make_node("SkipLayerNormalization", ["x", "sk", "g", "be", "bi"],
                       ["y", "", "", "s"], domain=MS, epsilon=1e-12)
    dims = {"x": ["b", "s", hidden], "sk": ["b", "s", hidden], "g": [hidden], "be": [hidden],
            "bi": [hidden]}
    m = model([node], [(n, T.FLOAT, d) for n, d in dims.items()],
              [("y", T.FLOAT, None), ("s", T.FLOAT, None)], ms_opset=1)
    t0 = time.monotonic()
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=3))
    took = time.monotonic() - t0
    assert took < 30, f"-O3 compile took {took:.1f} s"
    feeds = _feeds(m, dict(b=2, s=64), np.float32)
    got = sess.run([feeds[n] for n in dims])
    for g, w in zip(got, reference(m, feeds, "onnxruntime")):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)
