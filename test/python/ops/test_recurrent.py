"""RNN, GRU, LSTM (layouts, directions, skipped optional outputs) against onnx."""
import pytest
from onnx import TensorProto as TP, helper

from helpers import infer_and_compare, make_model, our_output_types
from onnx_mlir_py.errors import VerificationError

F = TP.FLOAT
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def _model(op, opset, direction, layout, outputs, hidden=5):
    d = 2 if direction == "bidirectional" else 1
    g = GATES[op]
    x = [4, 3, 6] if layout == 0 else [3, 4, 6]
    ins = [("x", F, x), ("w", F, [d, g * hidden, 6]), ("r", F, [d, g * hidden, hidden])]
    kw = {"hidden_size": hidden, "direction": direction}
    if opset >= 14:
        kw["layout"] = layout
    node = helper.make_node(op, ["x", "w", "r"], list(outputs), name="n", **kw)
    return make_model([node], ins, [o for o in outputs if o], opset)


@pytest.mark.parametrize("op", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("opset,layout", [(7, 0), (14, 0), (14, 1), (22, 1)])
@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_recurrent(op, opset, layout, direction):
    outs = ("y", "y_h", "y_c") if op == "LSTM" else ("y", "y_h")
    infer_and_compare(_model(op, opset, direction, layout, outs))


def test_lstm_only_y_h():
    infer_and_compare(_model("LSTM", 22, "reverse", 0, ("", "y_h")))


def test_wrong_gate_count_is_rejected():
    m = _model("GRU", 22, "forward", 0, ("y",))
    m.graph.input[1].type.tensor_type.shape.dim[1].dim_value = 10
    with pytest.raises(VerificationError, match="dim 1 = 10: expected 3 \\* hidden_size = 15"):
        our_output_types(m)
