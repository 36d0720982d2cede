"""Recurrent layers: RNN, GRU, LSTM.

X is [seq, batch, input] (layout 0) or [batch, seq, input] (layout 1,
v14+); D = 2 for direction 'bidirectional', else 1.
Y is [seq, D, batch, hidden] (layout 0) or [batch, seq, D, hidden];
Y_h (and LSTM's Y_c) is [D, batch, hidden] or [batch, D, hidden].
W is [D, gates * hidden, input] (gates: RNN 1, GRU 3, LSTM 4).
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import fmt
from onnx_mlir_py.dialects.onnx.ops.conv import opt_attr
from onnx_mlir_py.dialects.onnx.ops.normalization import result_slots

RNN = (7, 14, 22)
GRU = (7, 14, 22)
LSTM = (7, 14, 22)
GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
DIRECTIONS = ("forward", "reverse", "bidirectional")


def hidden_size(op_type: str, attr, w, r):
    """hidden_size: the attribute, else from W's or R's static dims, else UNKNOWN."""
    if attr is not None:
        return attr
    if w is not None and D.is_static(w[1]):
        return w[1] // GATES[op_type]
    if r is not None and D.is_static(r[2]):
        return r[2]
    return D.UNKNOWN


def recurrent_dims(ctx: D.ShapeChecks, op_type: str, d: int, hidden, layout: int,
                   shapes: list) -> tuple:
    """(seq, batch, input, hidden) of a layer from the dims of its inputs
    ``shapes`` = [X, W, R, B, sequence_lens, initial_h, initial_c, P] (None if
    absent or of unknown rank); hidden from the attribute, else from W or R.
    Requires W = [D, G*H, I], R = [D, G*H, H], B = [D, 2*G*H],
    sequence_lens = [batch], initial_h/c = [D, batch, H] ([batch, D, H] in
    layout 1) and P = [D, 3*H]. Shared by the shape rule and the lowering."""
    g = GATES[op_type]
    x, w, r = shapes[:3]
    hidden = hidden_size(op_type, hidden, w, r)
    seq, batch, inp = D.UNKNOWN, D.UNKNOWN, D.UNKNOWN
    if x is not None:
        seq, batch, inp = (x[1], x[0], x[2]) if layout else (x[0], x[1], x[2])
    nd, gh, hs = ("num_directions", d), (f"{g} * hidden_size", g * hidden), \
        ("hidden_size", hidden)
    bt = ("batch", batch)
    state = [bt, nd, hs] if layout else [nd, bt, hs]
    want = {"W": [nd, gh, ("input size", inp)], "R": [nd, gh, hs],
            "B": [nd, (f"{2 * g} * hidden_size", 2 * g * hidden)], "sequence_lens": [bt],
            "initial_h": state, "initial_c": state, "P": [nd, ("3 * hidden_size", 3 * hidden)]}
    for name, s in zip(["W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"],
                       shapes[1:]):
        if s is None:
            continue
        exp = want[name]
        if len(s) != len(exp):
            ctx.require(False, f"input '{name}' has rank {len(s)}: expected {len(exp)}")
        for k, (got, (what, e)) in enumerate(zip(s, exp)):
            shown = f" = {e}" if D.is_static(e) else ""
            ctx.require(D.eq(got, e), f"input '{name}' has dim {k} = {{0}}: expected "
                        f"{what}{shown}", got)
    return seq, batch, inp, hidden


@verifier("RNN", *RNN)
@verifier("GRU", *GRU)
@verifier("LSTM", *LSTM)
def _recurrent(op: OnnxOp):
    direction = op.attrs.direction
    if direction not in DIRECTIONS:
        op.fail(f"attribute 'direction' = '{direction}': expected one of "
                f"{', '.join(DIRECTIONS)}")
    d = 2 if direction == "bidirectional" else 1
    layout = opt_attr(op, "layout", 0)
    shapes = [op.shape(op.input(i)) for i in range(len(op.spec.inputs))]
    for name, s in (("X", shapes[0]), ("W", shapes[1]), ("R", shapes[2])):
        if s is not None and len(s) != 3:
            op.fail(f"input '{name}' has shape {fmt(s)}: expected rank 3")
    shapes = (shapes + [None] * 8)[:8]
    seq, batch, _, hidden = D.to_static(recurrent_dims(
        D.inference_checks(op), op.op_type, d, op.attrs.hidden_size, layout,
        [D.from_static(s) for s in shapes]))
    if layout:
        y, yh = (batch, seq, d, hidden), (batch, d, hidden)
    else:
        y, yh = (seq, d, batch, hidden), (d, batch, hidden)
    return [y, yh, yh]


@shape_rule("RNN", *RNN)
@shape_rule("GRU", *GRU)
@shape_rule("LSTM", *LSTM)
def _recurrent_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    shapes = _recurrent(op)
    return [tensor(shapes[k], et) if et is not None else None for k in result_slots(op)]
