"""SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss against onnx."""
import pytest
from onnx import TensorProto as TP, helper

from helpers import infer_and_compare, make_model, our_output_types
from onnx_mlir_py.errors import VerificationError

F = TP.FLOAT


def _model(op, opset, x, t, reduction, weight=False, outputs=("loss",)):
    ins = [("x", F, x), ("t", TP.INT64, t)] + ([("w", F, [x[1]])] if weight else [])
    node = helper.make_node(op, [n for n, _, _ in ins], list(outputs), name="n",
                            reduction=reduction)
    return make_model([node], ins, list(outputs), opset)


@pytest.mark.parametrize("op,opset", [("SoftmaxCrossEntropyLoss", 12),
                                      ("SoftmaxCrossEntropyLoss", 13),
                                      ("NegativeLogLikelihoodLoss", 13),
                                      ("NegativeLogLikelihoodLoss", 22)])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("x,t", [([3, 5], [3]), ([3, 5, 2, 4], [3, 2, 4])])
def test_losses(op, opset, reduction, x, t):
    infer_and_compare(_model(op, opset, x, t, reduction, weight=True))


def test_sce_log_prob():
    infer_and_compare(_model("SoftmaxCrossEntropyLoss", 13, [2, 4, 3], [2, 3], "mean",
                             outputs=("loss", "log_prob")))


def test_target_shape_mismatch_is_rejected():
    with pytest.raises(VerificationError, match="dim 1 differs"):
        our_output_types(_model("NegativeLogLikelihoodLoss", 13, [3, 5, 2], [3, 4], "none"))
