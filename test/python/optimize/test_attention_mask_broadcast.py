"""#31 class 3: a fused attention's mask broadcasts at run time. A
transformer shipped in a PyPI wheel failed with "attn_mask dim 2 must be 1
or the score dim: 1 != 17": its six nodes (Transpose, MatMul, Mul, Add mask,
Softmax, MatMul) have q/k/v [B, 2, S, 8] and a mask [B, 1, M, S] (or
[B, H, M, S]) whose M is dynamic and 1 at run time. Any mask dim that is 1
at run time broadcasts like an elementwise operand's; a real mismatch is a
RuntimeInputError naming the node."""
from __future__ import annotations

import os

import numpy as np
import pytest
from onnx import TensorProto, helper

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.runtime.errors import RuntimeInputError
from onnx_mlir_py.testing.check import assert_match, reference


def _six_nodes(mask_heads) -> "onnx.ModelProto":
    f = TensorProto.FLOAT
    ins = [helper.make_tensor_value_info(n, f, ["B", 2, "S", 8]) for n in ("q", "k", "v")]
    ins.append(helper.make_tensor_value_info("mask", f, ["B", mask_heads, "M", "S"]))
    scale = helper.make_tensor("scale", f, [], [8 ** -0.5])
    nodes = [helper.make_node("Transpose", ["k"], ["kt"], name="kt", perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["q", "kt"], ["s"], name="qk"),
             helper.make_node("Mul", ["s", "scale"], ["ss"], name="scale_mul"),
             helper.make_node("Add", ["ss", "mask"], ["sm"], name="mask_add"),
             helper.make_node("Softmax", ["sm"], ["p"], name="softmax", axis=-1),
             helper.make_node("MatMul", ["p", "v"], ["y"], name="pv")]
    g = helper.make_graph(nodes, "six", ins, [helper.make_tensor_value_info("y", f, None)],
                          [scale])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _feeds(rng, b, s, m, mask_heads):
    f = {n: rng.standard_normal((b, 2, s, 8)).astype(np.float32) for n in ("q", "k", "v")}
    mask = np.where(rng.random((b, mask_heads, m, s)) < 0.3, -1e4, 0).astype(np.float32)
    mask[..., 0] = 0
    f["mask"] = mask
    return f


@pytest.mark.parametrize("mask_heads", [1, 2])
@pytest.mark.parametrize("opt_level", [3, 0])
def test_mask_dim_one_at_run_time_broadcasts(tmp_path, mask_heads, opt_level):
    model = _six_nodes(mask_heads)
    so = onnx_mlir_py.compile(model, output=os.path.join(tmp_path, "m.so"),
                              opt_level=opt_level)
    if opt_level == 3:      # the six nodes are one fused attention call
        text = open(onnx_mlir_py.compile(model, output=os.path.join(tmp_path, "m.mlir"),
                                         emit="EmitMLIR", opt_level=3)).read()
        assert "om.attention" in text and "linalg.softmax" not in text
    sess = ExecutionSession(so)
    rng = np.random.default_rng(3)
    # M = 1 at three shapes (the real model's case), then M = S (no broadcast)
    for b, s, m in ((1, 17, 1), (2, 5, 1), (3, 40, 1), (2, 9, 9)):
        f = _feeds(rng, b, s, m, mask_heads)
        got = sess.run([f["q"], f["k"], f["v"], f["mask"]])
        assert_match(got, reference(model, f, "onnxruntime"), 1e-4, 1e-4)


def test_mask_dim_that_is_neither_one_nor_the_score_dim_fails():
    import tempfile
    model = _six_nodes(1)
    sess = ExecutionSession(onnx_mlir_py.compile(
        model, output=os.path.join(tempfile.mkdtemp(), "m.so"), opt_level=3))
    f = _feeds(np.random.default_rng(4), 2, 6, 3, 1)      # M = 3: neither 1 nor S = 6
    with pytest.raises(RuntimeInputError) as ei:
        sess.run([f["q"], f["k"], f["v"], f["mask"]])
    msg = str(ei.value)
    assert "\n" not in msg and "node '" in msg and "attn_mask dim 2" in msg, msg
    assert "3 != 6" in msg, msg
