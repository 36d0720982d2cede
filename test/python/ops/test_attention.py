"""Attention (3-D and 4-D, past key/value, qk output), RotaryEmbedding,
RMSNormalization, SwiGLU against onnx."""
import pytest
from onnx import TensorProto as TP, helper

from helpers import infer_and_compare, make_model, our_output_types
from onnx_mlir_py.errors import VerificationError

F = TP.FLOAT


@pytest.mark.parametrize("opset", [23, 24])
@pytest.mark.parametrize("rank", [3, 4])
def test_attention(opset, rank):
    if rank == 4:
        q, k, v = [2, 4, 6, 8], [2, 2, 5, 8], [2, 2, 5, 10]
        kw = {}
    else:
        q, k, v = [2, 6, 32], [2, 5, 16], [2, 5, 20]
        kw = {"q_num_heads": 4, "kv_num_heads": 2}
    ins = [("q", F, q), ("k", F, k), ("v", F, v), ("pk", F, [2, 2, 3, 8]),
           ("pv", F, [2, 2, 3, 10])]
    node = helper.make_node("Attention", ["q", "k", "v", "", "pk", "pv"],
                            ["y", "present_k", "present_v", "qk"], name="n", **kw)
    infer_and_compare(make_model([node], ins, ["y", "present_k", "present_v", "qk"], opset))


def test_attention_optional_outputs_skipped():
    # only Y and qk_matmul_output: results map to their ONNX output slots
    ins = [("q", F, [1, 2, 4, 8]), ("k", F, [1, 2, 6, 8]), ("v", F, [1, 2, 6, 8])]
    node = helper.make_node("Attention", ["q", "k", "v"], ["y", "", "", "qk"], name="n")
    infer_and_compare(make_model([node], ins, ["y", "qk"], 23))


def test_attention_head_size_mismatch_is_rejected():
    ins = [("q", F, [1, 2, 4, 8]), ("k", F, [1, 2, 6, 4]), ("v", F, [1, 2, 6, 8])]
    node = helper.make_node("Attention", ["q", "k", "v"], ["y"], name="n")
    with pytest.raises(VerificationError, match="head size 8 differs"):
        our_output_types(make_model([node], ins, ["y"], 23))


def test_rotary_rms_swiglu():
    ins = [("x", F, [2, 3, 4, 8]), ("cos", F, [2, 3, 4]), ("sin", F, [2, 3, 4]),
           ("pos", TP.INT64, [2, 3]), ("s", F, [8])]
    nodes = [helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["r"], name="r"),
             helper.make_node("RMSNormalization", ["x", "s"], ["n"], name="n", axis=-1),
             helper.make_node("SwiGLU", ["x", "x"], ["g"], name="g")]
    infer_and_compare(make_model(nodes[:2], ins, ["r", "n"], 23))
    infer_and_compare(make_model(nodes[2:], ins[:1], ["g"], 28))
