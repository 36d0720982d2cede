"""Recurrent layers: RNN, GRU, LSTM.

X is [seq, batch, input] (layout 0) or [batch, seq, input] (layout 1,
v14+); D = 2 for direction 'bidirectional', else 1.
Y is [seq, D, batch, hidden] (layout 0) or [batch, seq, D, hidden];
Y_h (and LSTM's Y_c) is [D, batch, hidden] or [batch, D, hidden].
W is [D, gates * hidden, input] (gates: RNN 1, GRU 3, LSTM 4).
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from ..opview import OnnxOp, tensor
from .common import fmt
from .conv import opt_attr
from .normalization import result_slots

RNN = (7, 14, 22)
GRU = (7, 14, 22)
LSTM = (7, 14, 22)
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
DIRECTIONS = ("forward", "reverse", "bidirectional")


def _recurrent(op: OnnxOp):
    x, w, r = (op.shape(op.input(i)) for i in range(3))
    direction = op.attrs.direction
    if direction not in DIRECTIONS:
        op.fail(f"attribute 'direction' = '{direction}': expected one of "
                f"{', '.join(DIRECTIONS)}")
    d = 2 if direction == "bidirectional" else 1
    layout = opt_attr(op, "layout", 0)
    for name, s in (("X", x), ("W", w), ("R", r)):
        if s is not None and len(s) != 3:
            op.fail(f"input '{name}' has shape {fmt(s)}: expected rank 3")
    hidden = op.attrs.hidden_size
    g = GATES[op.op_type]
    if hidden is None and w is not None and w[1] is not None:
        hidden = w[1] // g
    if hidden is not None and w is not None and w[1] is not None and w[1] != g * hidden:
        op.fail(f"W has shape {fmt(w)}: expected dim 1 = {g} * hidden_size = {g * hidden}")
    if w is not None and w[0] is not None and w[0] != d:
        op.fail(f"W has shape {fmt(w)}: expected dim 0 = {d} (num_directions)")
    if x is None:
        seq = batch = None
    else:
        seq, batch = (x[1], x[0]) if layout else (x[0], x[1])
    if layout:
        y, yh = (batch, seq, d, hidden), (batch, d, hidden)
    else:
        y, yh = (seq, d, batch, hidden), (d, batch, hidden)
    return [y, yh, yh]


@verifier("RNN", *RNN)
@verifier("GRU", *GRU)
@verifier("LSTM", *LSTM)
def _recurrent_verify(op: OnnxOp):
    _recurrent(op)


@shape_rule("RNN", *RNN)
@shape_rule("GRU", *GRU)
@shape_rule("LSTM", *LSTM)
def _recurrent_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    shapes = _recurrent(op)
    return [tensor(shapes[k], et) if et is not None else None for k in result_slots(op)]
