"""com.microsoft DynamicQuantizeLSTM.

onnxruntime's contrib op (docs/ContribOperators.md; CPU kernel
contrib_ops/cpu/quantization/dynamic_quantize_lstm.cc on the shared
providers/cpu/rnn/lstm_base + uni_directional_lstm code), written by
onnxruntime.quantization.quantize_dynamic for an LSTM: an ONNX LSTM (no
``layout``: X is [seq, batch, input]) whose W and R are 8-bit and stored
TRANSPOSED: W [D, input, 4 * hidden], R [D, hidden, 4 * hidden] (D = 2 for
``direction`` bidirectional, else 1); then W_scale, W_zero_point, R_scale,
R_zero_point (inputs 8..11), each [D] (per direction) or [D, 4 * hidden]
(per column); the zero points have their weights' type. B, sequence_lens,
initial_h, initial_c, P and the outputs are LSTM's (recurrent.py).
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import fmt
from onnx_mlir_py.dialects.onnx.ops.normalization import result_slots
from onnx_mlir_py.dialects.onnx.ops.recurrent import DIRECTIONS, recurrent_dims

MS = "com.microsoft"
# (input index, name) of the quantization parameters
QPARAMS = ((8, "W_scale"), (9, "W_zero_point"), (10, "R_scale"), (11, "R_zero_point"))


def num_directions(op: OnnxOp) -> int:
    direction = op.attrs.direction
    direction = direction.decode() if isinstance(direction, bytes) else direction
    if direction not in DIRECTIONS:
        op.fail(f"attribute 'direction' = '{direction}': expected one of "
                f"{', '.join(DIRECTIONS)}")
    return 2 if direction == "bidirectional" else 1


def dq_lstm_dims(ctx: D.ShapeChecks, d: int, hidden, shapes: list, lstm_inputs: bool = True
                 ) -> tuple | None:
    """(seq, batch, input, hidden) from the dims of the 12 inputs ``shapes``
    (None if absent or unranked; ranks checked by the caller: X, W, R 3,
    the quantization parameters 1 or 2); hidden from the attribute, else
    from W's or R's dims. W, R and the quantization parameters are checked
    in their own layout first, then (``lstm_inputs``) the LSTM inputs by
    LSTM's helper (recurrent_dims, on W and R seen as [D, 4H, I] and
    [D, 4H, H]; the lowering has recurrent_cells.parse do that). Shared by
    the verifier and the lowering (run-time checks for dynamic dims)."""
    x, w, r = shapes[:3]
    if hidden is None:
        if w is not None and D.is_static(w[2]):
            hidden = w[2] // 4
        elif r is not None and D.is_static(r[1]):
            hidden = r[1]
        else:
            hidden = D.UNKNOWN
    inp = x[2] if x is not None else D.UNKNOWN
    nd, gh = ("num_directions", d), ("4 * hidden_size", 4 * hidden)
    want = {"W": [nd, ("input size (X dim 2)", inp), gh], "R": [nd, ("hidden_size", hidden), gh]}
    for name, s in (("W", w), ("R", r)):
        if s is None:
            continue
        for k, (got, (what, e)) in enumerate(zip(s, want[name])):
            ctx.require(D.eq(got, e), f"input '{name}' has dim {k} = {{0}}: expected {what} = "
                        f"{{1}} (W is [num_directions, input_size, 4 * hidden_size], R "
                        f"[num_directions, hidden_size, 4 * hidden_size])", got, e)
    for (i, name), s in zip(QPARAMS, shapes[8:12]):
        if s is None:
            continue
        for k, (got, (what, e)) in enumerate(zip(s, [nd, gh])):
            ctx.require(D.eq(got, e), f"input '{name}' has dim {k} = {{0}}: expected {what} = "
                        f"{{1}} ([num_directions] per direction or [num_directions, "
                        f"4 * hidden_size] per column)", got, e)
    if not lstm_inputs:
        return None
    t = [None if s is None else [s[0], s[2], s[1]] for s in (w, r)]
    return recurrent_dims(ctx, "LSTM", d, hidden, 0, [x] + t + list(shapes[3:8]))


@verifier("DynamicQuantizeLSTM", 1, domain=MS)
def _dq_lstm(op: OnnxOp):
    d = num_directions(op)
    hs = op.attrs.hidden_size
    if hs is not None and hs < 1:
        op.fail(f"attribute 'hidden_size' = {hs}: expected >= 1")
    shapes = [op.shape(op.input(i)) for i in range(12)]
    for i, name in ((0, "X"), (1, "W"), (2, "R")):
        if shapes[i] is not None and len(shapes[i]) != 3:
            op.fail(f"input '{name}' has shape {fmt(shapes[i])}: expected rank 3")
    for i, name in QPARAMS:
        if shapes[i] is not None and len(shapes[i]) not in (1, 2):
            op.fail(f"input '{name}' has shape {fmt(shapes[i])}: expected [num_directions] "
                    f"(per direction) or [num_directions, 4 * hidden_size] (per column)")
    seq, batch, _, hidden = D.to_static(dq_lstm_dims(
        D.inference_checks(op), d, hs, [D.from_static(s) for s in shapes]))
    return [(seq, d, batch, hidden), (d, batch, hidden), (d, batch, hidden)]


@shape_rule("DynamicQuantizeLSTM", 1, domain=MS)
def _dq_lstm_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    shapes = _dq_lstm(op)
    return [tensor(shapes[k], et) if et is not None else None for k in result_slots(op)]
