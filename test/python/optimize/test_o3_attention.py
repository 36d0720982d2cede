"""Fused attention (optimize_onnx/attention.py -> onnx_to_linalg/attention.py ->
optimize/attention.py) against onnxruntime: torch-exported decoder (causal
mask made by Where/Trilu) and encoder (padding mask [B, 1, 1, S]) with
dynamic batch and sequence (exported once by
test/python/models/data/export_torch_models.py: the committed
attention_{gpt,bert}.onnx), run at two lengths; an opset-23 Attention node;
the forms the fusion must leave alone."""
from __future__ import annotations

import os
import sys
import tempfile

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from onnx_mlir_py.testing.check import assert_match, reference

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "models",
                                "data"))
from export_torch_models import ATTENTION_VOCAB, path as export_path  # noqa: E402

RTOL, ATOL = 1e-4, 1e-4


def _session(model, opt_level=3, march=None, threads=1):
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    d = tempfile.mkdtemp()
    so = onnx_mlir_py.compile(model, output=os.path.join(d, "m.so"), opt_level=opt_level,
                              march=march)
    return ExecutionSession(so, num_threads=threads), so


@pytest.fixture(scope="module")
def gpt():
    return onnx.load(export_path("attention_gpt"))


@pytest.fixture(scope="module")
def bert():
    return onnx.load(export_path("attention_bert"))


@pytest.mark.parametrize("opt_level,threads", [(3, 1), (3, 2), (0, 1)])
def test_causal_decoder_two_lengths(gpt, opt_level, threads):
    sess, _ = _session(gpt, opt_level, threads=threads)
    rng = np.random.default_rng(0)
    for b, s in ((1, 7), (2, 70)):          # 70: row blocks + a column tail
        ids = rng.integers(0, ATTENTION_VOCAB, (b, s)).astype(np.int64)
        got = sess.run([ids])
        assert_match(got, reference(gpt, {"input_ids": ids}, "onnxruntime"), RTOL, ATOL)


def test_padding_mask_encoder_two_lengths(bert):
    sess, _ = _session(bert)
    rng = np.random.default_rng(1)
    for b, s in ((2, 5), (3, 33)):
        ids = rng.integers(0, ATTENTION_VOCAB, (b, s)).astype(np.int64)
        mask = np.ones_like(ids)
        mask[0, s - 2:] = 0
        mask[-1, s // 2:] = 0
        feeds = {"input_ids": ids, "attention_mask": mask}
        got = sess.run([ids, mask])
        assert_match(got, reference(bert, feeds, "onnxruntime"), RTOL, ATOL)


def test_fusion_fires(gpt):
    from onnx_mlir_py.compiler import compile as _compile
    d = tempfile.mkdtemp()
    out = _compile(gpt, os.path.join(d, "m"), opt_level=3, emit="EmitMLIR")
    text = open(out).read()
    assert text.count("om.attention") == 2          # one call per layer
    assert "linalg.softmax" not in text


def _attention23(q, k, v, mask_shape, nan_case=False):
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
              for n, s in (("Q", q), ("K", k), ("V", v))]
    names = ["Q", "K", "V"]
    if mask_shape is not None:
        inputs.append(helper.make_tensor_value_info("M", TensorProto.FLOAT, mask_shape))
        names.append("M")
    node = helper.make_node("Attention", names, ["Y"], scale=0.3)
    g = helper.make_graph([node], "att", inputs,
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 23)], ir_version=10)


@pytest.mark.parametrize("opt_level,march,dv", [(3, None, 32), (3, "x86-64-v3", 32),
                                                (3, None, 20), (0, None, 32)])
def test_attention_op_gqa_dynamic(opt_level, march, dv):
    """Attention-23, 4 query heads on 2 kv heads, mask [Sq, Skv] with -inf,
    dynamic batch and lengths (cross attention: Sq != Skv); the AVX2 kernel
    (4 x 2 tiles of 8 lanes); Dv 20 (not whole vectors: the reference body
    at -O3)."""
    model = _attention23(["B", 4, "Sq", 12], ["B", 2, "Skv", 12], ["B", 2, "Skv", dv],
                         ["Sq", "Skv"])
    sess, _ = _session(model, opt_level, march)
    rng = np.random.default_rng(2)
    for b, sq, skv in ((1, 3, 5), (2, 13, 40)):
        f = {"Q": rng.standard_normal((b, 4, sq, 12)).astype(np.float32),
             "K": rng.standard_normal((b, 2, skv, 12)).astype(np.float32),
             "V": rng.standard_normal((b, 2, skv, dv)).astype(np.float32),
             "M": np.where(rng.random((sq, skv)) < 0.3, -np.inf, 0).astype(np.float32)}
        f["M"][:, 0] = 0                                   # no row masked everywhere
        got = sess.run([f["Q"], f["K"], f["V"], f["M"]])
        assert_match(got, reference(model, f, "onnxruntime"), RTOL, ATOL)


def test_attention_mask_shape_checked_at_run_time():
    from onnx_mlir_py.runtime.errors import RuntimeInputError
    model = _attention23([1, 2, "S", 16], [1, 2, "S", 16], [1, 2, "S", 16], ["A", "C"])
    sess, _ = _session(model)
    z = np.zeros((1, 2, 4, 16), np.float32)
    with pytest.raises(RuntimeInputError, match="attn_mask"):
        sess.run([z, z, z, np.zeros((3, 4), np.float32)])


def test_causal_attention_op_goes_through_its_function_body():
    """is_causal is a form the lowering does not take: expand-functions
    replaces the node by its ONNX function body, which compiles and matches."""
    q = helper.make_tensor_value_info("Q", TensorProto.FLOAT, [1, 2, 6, 8])
    node = helper.make_node("Attention", ["Q", "Q", "Q"], ["Y"], is_causal=1)
    g = helper.make_graph([node], "att", [q],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 23)], ir_version=10)
    sess, _ = _session(model)
    x = np.random.default_rng(3).standard_normal((1, 2, 6, 8)).astype(np.float32)
    assert_match(sess.run([x]), reference(model, {"Q": x}, "onnxruntime"), RTOL, ATOL)


def _where_sdpa(fill: float) -> onnx.ModelProto:
    """Transformers' GPT-2 form: Where(causal, S / sqrt(d), fill) + padding
    mask, then Softmax and P @ V (Q, K, V as inputs, dynamic B and S)."""
    f, b = TensorProto.FLOAT, TensorProto.BOOL
    ins = [helper.make_tensor_value_info("Q", f, ["B", 2, "S", 16]),
           helper.make_tensor_value_info("K", f, ["B", 2, "S", 16]),
           helper.make_tensor_value_info("V", f, ["B", 2, "S", 16]),
           helper.make_tensor_value_info("allow", b, [1, 1, "S", "S"]),
           helper.make_tensor_value_info("pad", f, ["B", 1, 1, "S"])]
    consts = [helper.make_tensor("c", f, [], [4.0]), helper.make_tensor("fill", f, [], [fill])]
    nodes = [helper.make_node("Transpose", ["K"], ["KT"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["Q", "KT"], ["S0"]),
             helper.make_node("Div", ["S0", "c"], ["S1"]),
             helper.make_node("Where", ["allow", "S1", "fill"], ["S2"]),
             helper.make_node("Add", ["S2", "pad"], ["S3"]),
             helper.make_node("Softmax", ["S3"], ["P"], axis=-1),
             helper.make_node("MatMul", ["P", "V"], ["Y"])]
    g = helper.make_graph(nodes, "sdpa", ins,
                          [helper.make_tensor_value_info("Y", f, ["B", 2, "S", 16])],
                          initializer=consts)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize("fill", [float(np.finfo(np.float32).min), float("-inf")])
def test_where_causal_mask_fused(fill):
    model = _where_sdpa(fill)
    from onnx_mlir_py.compiler import compile as _compile
    d = tempfile.mkdtemp()
    text = open(_compile(model, os.path.join(d, "m"), opt_level=3, emit="EmitMLIR")).read()
    assert text.count("om.attention") == 1
    sess, _ = _session(model)
    rng = np.random.default_rng(4)
    for b, s in ((1, 6), (2, 21)):
        allow = np.tril(np.ones((s, s), bool))[None, None]
        pad = np.zeros((b, 1, 1, s), np.float32)
        pad[-1, ..., s - 3:] = -10000.0
        feeds = {"Q": rng.standard_normal((b, 2, s, 16)).astype(np.float32),
                 "K": rng.standard_normal((b, 2, s, 16)).astype(np.float32),
                 "V": rng.standard_normal((b, 2, s, 16)).astype(np.float32),
                 "allow": allow, "pad": pad}
        got = sess.run([feeds[k] for k in ("Q", "K", "V", "allow", "pad")])
        assert_match(got, reference(model, feeds, "onnxruntime"), RTOL, ATOL)


def test_where_with_a_moderate_fill_is_not_fused():
    """Where(c, S, -100) is not S + (c ? 0 : -100): left unfused."""
    from onnx_mlir_py.compiler import compile as _compile
    d = tempfile.mkdtemp()
    text = open(_compile(_where_sdpa(-100.0), os.path.join(d, "m"), opt_level=3,
                         emit="EmitMLIR")).read()
    assert "om.attention" not in text
