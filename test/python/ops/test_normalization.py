"""BatchNormalization (inference and training outputs), InstanceNormalization,
LayerNormalization (3 outputs), GroupNormalization, LpNormalization, LRN."""
import pytest
from onnx import TensorProto as TP, helper

from helpers import infer_and_compare, make_model, our_output_types
from onnx_mlir_py.errors import VerificationError

F = TP.FLOAT


def model(op, ins, outs, opset, **attrs):
    node = helper.make_node(op, [n for n, _, _ in ins], list(outs), name="n", **attrs)
    return make_model([node], ins, list(outs), opset)


def bn_inputs(x, c):
    return [("x", F, x)] + [(n, F, [c]) for n in ("s", "b", "m", "v")]


@pytest.mark.parametrize("opset", [7, 9, 14, 15, 25])
@pytest.mark.parametrize("x", [[2, 3, 4, 4], ["N", 3, 5], [2, 3]])
def test_batchnorm_inference(opset, x):
    got = infer_and_compare(model("BatchNormalization", bn_inputs(x, 3), ["y"], opset))
    assert got == [("f32", [None if d == "N" else d for d in x])]


@pytest.mark.parametrize("opset", [14, 15])
def test_batchnorm_training(opset):
    m = model("BatchNormalization", bn_inputs(["N", 3, 4, 4], 3), ["y", "rm", "rv"], opset,
              training_mode=1)
    assert infer_and_compare(m) == [("f32", [None, 3, 4, 4]), ("f32", [3]), ("f32", [3])]


@pytest.mark.parametrize("opset", [7, 9])
def test_batchnorm_training_old(opset):
    m = model("BatchNormalization", bn_inputs([2, 3, 4, 4], 3),
              ["y", "mean", "var", "saved_mean", "saved_var"], opset)
    got = our_output_types(m)
    # onnx infers only Y for these versions, so check ours directly.
    assert got == [("f32", [2, 3, 4, 4])] + [("f32", [3])] * 4


@pytest.mark.parametrize("opset", [7, 22, 25])
@pytest.mark.parametrize("x", [[2, 3, 4, 4], ["N", 3, 5]])
def test_instancenorm(opset, x):
    ins = [("x", F, x), ("s", F, [3]), ("b", F, [3])]
    got = infer_and_compare(model("InstanceNormalization", ins, ["y"], opset))
    assert got == [("f32", [None if d == "N" else d for d in x])]


@pytest.mark.parametrize("axis,want_stat", [(-1, [None, 3, 1]), (1, [None, 1, 1]),
                                            (0, [1, 1, 1])])
def test_layernorm(axis, want_stat):
    x = ["N", 3, 4]
    norm = [3, 4][axis:] if axis >= 0 else [4]
    if axis == 0:
        norm = [1, 3, 4]
    ins = [("x", F, x), ("s", F, norm), ("b", F, norm)]
    m = model("LayerNormalization", ins, ["y", "mean", "isd"], 17, axis=axis)
    got = infer_and_compare(m)
    assert got == [("f32", [None, 3, 4]), ("f32", want_stat), ("f32", want_stat)]


def test_layernorm_stash_bf16_f16_input():
    ins = [("x", TP.FLOAT16, [2, 5]), ("s", TP.FLOAT16, [5])]
    m = model("LayerNormalization", ins, ["y", "mean"], 17, stash_type=16)
    assert infer_and_compare(m) == [("f16", [2, 5]), ("bf16", [2, 1])]


@pytest.mark.parametrize("opset,pshape", [(18, [2]), (21, [6]), (25, [6])])
def test_groupnorm(opset, pshape):
    ins = [("x", F, ["N", 6, 4, 4]), ("s", F, pshape), ("b", F, pshape)]
    got = our_output_types(model("GroupNormalization", ins, ["y"], opset, num_groups=2))
    # onnx infers GroupNormalization only through its function body (not
    # from infer_shapes on the node), so check ours directly.
    assert got == [("f32", [None, 6, 4, 4])]


@pytest.mark.parametrize("opset", [7, 13, 25])
@pytest.mark.parametrize("x", [[1, 8, 5, 5], ["N", 8, 5]])
def test_lrn(opset, x):
    got = infer_and_compare(model("LRN", [("x", F, x)], ["y"], opset, size=3))
    assert got == [("f32", [None if d == "N" else d for d in x])]


@pytest.mark.parametrize("op,ins,outs,opset,attrs,msg", [
    ("BatchNormalization", bn_inputs([2, 3, 4, 4], 4), ["y"], 15, {},
     r"input 'scale' has shape \[4\]: expected 3 elements \(C \(channels of X\)\), got 4"),
    ("BatchNormalization", bn_inputs([2, 3, 4, 4], 3), ["y"], 15, dict(training_mode=1),
     r"expected 3 output\(s\) with training_mode=1, got 1"),
    ("InstanceNormalization", [("x", F, [2, 3, 4]), ("s", F, [3, 1]), ("b", F, [3])], ["y"], 22,
     {}, r"input 'scale' has shape \[3x1\]: expected rank 1, got rank 2"),
    ("LayerNormalization", [("x", F, [2, 3, 4]), ("s", F, [4])], ["y"], 17, dict(axis=3),
     r"attribute 'axis' = 3: expected a value in \[-3, 2\]"),
    ("LayerNormalization", [("x", F, [2, 3, 4]), ("s", F, [3])], ["y"], 17, {},
     r"input 'Scale' has shape \[3\]: expected it to broadcast to X's normalized shape \[4\]"),
    ("GroupNormalization", [("x", F, [2, 6, 4]), ("s", F, [6]), ("b", F, [6])], ["y"], 21,
     dict(num_groups=4), r"channels C = 6 are not divisible by num_groups = 4"),
    ("GroupNormalization", [("x", F, [2, 6, 4]), ("s", F, [6]), ("b", F, [6])], ["y"], 18,
     dict(num_groups=3), r"input 'scale' has shape \[6\]: expected 3 elements \(num_groups\)"),
    ("LpNormalization", [("x", F, [2, 3])], ["y"], 22, dict(p=3), r"attribute 'p' = 3: expected 1 or 2"),
    ("LpNormalization", [("x", F, [2, 3])], ["y"], 1, dict(axis=2),
     r"attribute 'axis' = 2: expected a value in \[-2, 1\] for input 'input' of rank 2"),
    ("LRN", [("x", F, [1, 3, 4, 4])], ["y"], 13, dict(size=0),
     r"attribute 'size' = 0: expected >= 1"),
])
def test_invalid(op, ins, outs, opset, attrs, msg):
    with pytest.raises(VerificationError, match=r"node 'n' \(" + op + r"\): " + msg):
        our_output_types(model(op, ins, outs, opset, **attrs))
