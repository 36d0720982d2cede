"""com.microsoft DynamicQuantizeLSTM -> the LSTM lowering (recurrent.py's
``lstm``: time loop, gates, sequence_lens, directions, outputs) with the two
products computed as onnxruntime's CPU kernel computes them (its
uni_directional_lstm with 8-bit weights and rnn_helpers' quantized
ComputeGemm):

* the input projection, once per direction before the loop: X (the first
  max(sequence_lens) steps of it, all of X without sequence_lens) quantized
  to uint8 with its own dynamic scale and zero point (onnxruntime's
  GetQuantizationParameter: the range widened to include 0, scale =
  (max - min) / 255 (1 if max == min), zp = roundeven(clamp(-min / scale,
  0, 255)), q = clamp(roundeven(x / scale) + zp, 0, 255)), then
  acc = (q - zp) @ (W[d] - W_zero_point) in i32 and
  f32(acc) * (scale * W_scale[d, n]) (the reverse direction reads X
  reversed within each row's length: the same values, so the same scale);
* per time step, H_{t-1} [batch, hidden] quantized the same way (its own
  scale and zero point at each step), acc = (q - zp) @ (R[d] - R_zero_point)
  and proj_t + f32(acc) * (scale * R_scale[d, n]); the bias (Wb + Rb) is
  added to that sum in the gates, as onnxruntime does.

The range of H_{t-1} is the one onnxruntime reads: when Y is an output, its
step t-1 (rows past their sequence length hold 0 there), else the carried
final state (those rows keep their last H).

Zero points are applied as given (per direction, or per column); onnxruntime
accepts per-column ones only when they are all one value (uint8) or 0
(int8), and then subtracts that value: the same. Constant int8 weights
with zero points 0 (quantize_dynamic's) give each direction's W[d] / R[d]
as a constant, which the -O3 int8 (VNNI) matmul kernels take.

Equal to onnxruntime up to float rounding (~1e-7; its sigmoid / tanh and
summation order differ, so an H element within rounding of a quantization
tie may round to the other step) where onnxruntime quantizes the whole
batch at once: batch 1, or any batch when its session has one intra-op
thread. With more threads and batch > 4 (or >= 2 with hidden <= 256)
onnxruntime splits the batch into one slice per thread and quantizes each
slice with its own scale, so its own result depends on the thread count
(differences of the order of the quantization step). (An LSTM in f32 on the
dequantized weights differs from onnxruntime by 3e-3 to 7e-2 on random
data of these sizes: not what this lowering does.) onnxruntime's uint8 x
int8 kernel on AVX2 without VNNI may saturate 16-bit pair sums (its
documentation's reduce_range advice); the i32 products here do not.
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
from mlir.dialects import arith, math, tensor

from onnx_mlir_py import ir_linalg as linalg
from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.ms_recurrent import MS, QPARAMS, dq_lstm_dims, num_directions
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map
from onnx_mlir_py.passes.onnx_to_linalg.constant import is_dense_resource
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks
from onnx_mlir_py.passes.onnx_to_linalg.integer_ops import ext_i32, i32, shifted
from onnx_mlir_py.passes.onnx_to_linalg.recurrent import LSTM_ACTIVATIONS, lstm
from onnx_mlir_py.passes.onnx_to_linalg.recurrent_cells import (amap, parse, reverse_time,
                                                                step_slice, vec)
from onnx_mlir_py.passes.onnx_to_linalg.reshape import collapse
from onnx_mlir_py.passes.onnx_to_linalg.storage_consts import resource_bytes
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import const_np, loop_index, owner_op, to_index


def _f32():
    return ir.F32Type.get()


def _u8():
    return ir.IntegerType.get_signless(8)


def _range(b: LoweringContext, v: ir.Value, keep=None):
    """(max(0, max v), min(0, min v)) as f32 scalars over the elements
    where keep(indices, extra scalars) holds (all without ``keep``);
    ``keep = (fn, extra inputs, their maps)``."""
    n = v.type.rank
    ident = affine_map(n, list(range(n)))
    to0 = ir.AffineMap.get(n, 0, [])
    extra, emaps = ([], []) if keep is None else (keep[1], keep[2])
    f32 = _f32()

    def body(x, *a):
        mx, mn = a[-2], a[-1]
        if keep is not None:
            x = arith.select(keep[0]([loop_index(k) for k in range(n)], *a[:-2]), x,
                             arith.constant(f32, 0.0))
        return [arith.maximumf(mx, x), arith.minimumf(mn, x)]
    mx, mn = b.generic([v] + extra, [b.full([], f32, 0.0), b.full([], f32, 0.0)],
                       [ident] + emaps + [to0, to0], ["reduction"] * n, body)
    return tensor.extract(mx, []), tensor.extract(mn, [])


def _quantize(b: LoweringContext, v: ir.Value, mx: ir.Value, mn: ir.Value):
    """(q: u8 tensor of v's shape, scale: f32, zero point: u8 0-D tensor),
    as onnxruntime's GetQuantizationParameter + MlasQuantizeLinear (uint8)."""
    f32 = _f32()
    c = lambda x: arith.constant(f32, x)  # noqa: E731
    same = arith.cmpf(arith.CmpFPredicate.OEQ, mx, mn)
    scale = arith.select(same, c(1.0), arith.divf(arith.subf(mx, mn), c(255.0)))

    def clamp255(x):
        return arith.minimumf(arith.maximumf(x, c(0.0)), c(255.0))
    zp = math.roundeven(clamp255(arith.subf(c(0.0), arith.divf(mn, scale))))
    q = b.map_elementwise([v], b.dims(v), _u8(), lambda x: arith.fptoui(
        _u8(), clamp255(arith.addf(math.roundeven(arith.divf(x, scale)), zp))))
    _unsigned(b, q)
    z = tensor.from_elements(ir.RankedTensorType.get([], _u8()), [arith.fptoui(_u8(), zp)])
    _unsigned(b, z)
    return q, scale, z


def _unsigned(b: LoweringContext, v: ir.Value) -> None:
    b.record(v, ir.IntegerType.get_unsigned(8))


def _param_map(p: ir.Value, d: int) -> ir.AffineMap:
    """(row, n) -> p[d] ([D], per direction) or p[d, n] ([D, 4H], per column)."""
    return amap(2, [("c", d)] if p.type.rank == 1 else [("c", d), 1])


def _const_array(v: ir.Value) -> np.ndarray | None:
    """The elements of a constant (dense or dense_resource) signless tensor."""
    o = owner_op(v)
    if o is None or o.name != "arith.constant" or not v.type.has_static_shape:
        return None
    a = o.attributes["value"]
    if isinstance(a, ir.DenseElementsAttr):
        return const_np(v)
    if not is_dense_resource(a) or v.type.element_type.width != 8:
        return None
    return np.frombuffer(resource_bytes(a, v.type), np.int8).reshape(list(v.type.shape))


def _weights(op: OnnxOp, b: LoweringContext, w: ir.Value, zp: ir.Value, d: int) -> ir.Value:
    """i32 [K, 4H]: ext(w[d, k, n]) - ext(zp[d] or zp[d, n]). Constant int8
    weights with zero points 0 (what quantize_dynamic writes): ext(w[d]) of
    a constant w[d] (the -O3 int8 matmul kernels take such a B)."""
    K, N = b.dim(w, 1), b.dim(w, 2)
    z = const_np(zp)
    if not b.unsigned(w) and z is not None and not z.any():
        arr = _const_array(w)
        if arr is not None:
            t = ir.RankedTensorType.get([K, N], w.type.element_type)
            c = arith.constant(t, ir.DenseElementsAttr.get(
                np.ascontiguousarray(arr[d].astype(np.int8)), type=t))
            return shifted(op, b, c, None, 1)
    uw, uz = b.unsigned(w), b.unsigned(zp)
    return b.generic([w, zp], [b.empty([K, N], i32())],
                     [amap(2, [("c", d), 0, 1]), _param_map(zp, d), amap(2, [0, 1])],
                     ["parallel"] * 2,
                     lambda x, z, _o: arith.subi(ext_i32(b, x, uw), ext_i32(b, z, uz)))[0]


def _qmatmul(op: OnnxOp, b: LoweringContext, q: ir.Value, z: ir.Value, w32: ir.Value,
             rows, k) -> ir.Value:
    """i32 [rows, 4H] = (q - z) @ w32; q u8 [rows, K] (or [S, B, K], collapsed
    after the shift)."""
    a = shifted(op, b, q, z, q.type.rank - 1)
    if a.type.rank == 3:
        a = collapse(a, [[0, 1], [2]], b.type_of([rows, b.dim(a, 2)], i32()))
    a = b.cast_to(a, b.type_of([rows, k], i32()))
    n = b.dim(w32, 1)
    return linalg.matmul(a, w32, outs=[b.full([rows, n], i32(), 0)])


def _scaled(b: LoweringContext, acc: ir.Value, scale: ir.Value, ps: ir.Value, d: int,
            add: ir.Value | None = None) -> ir.Value:
    """f32 [rows, 4H]: f32(acc) * (scale * ps[d(, n)]) (+ add)."""
    ins = [acc, ps] + ([add] if add is not None else [])
    maps = [amap(2, [0, 1]), _param_map(ps, d)] + ([amap(2, [0, 1])] if add is not None else [])

    def body(a, s, *rest):
        y = arith.mulf(arith.sitofp(_f32(), a), arith.mulf(scale, s))
        return arith.addf(y, rest[0]) if add is not None else y
    return b.generic(ins, [b.empty(b.dims(acc), _f32())], maps + [amap(2, [0, 1])],
                     ["parallel"] * 2, body)[0]


@lowering("DynamicQuantizeLSTM", 1, domain=MS)
def lower_dynamic_quantize_lstm(op: OnnxOp, b: LoweringContext):
    d = num_directions(op)
    for i, name in ((0, "X"), (1, "W"), (2, "R")):
        if b.ranked(op, op.input(i), name).rank != 3:
            op.fail(f"{name} must be 3-D")
    for i, name in QPARAMS:
        if b.ranked(op, op.input(i), name).rank not in (1, 2):
            op.fail(f"{name} must be 1-D (per direction) or 2-D (per column)")
    if op.attrs.hidden_size is None and op.input(1).type.is_dynamic_dim(2) and \
            op.input(2).type.is_dynamic_dim(1):
        op.fail("hidden_size is not given and W and R have dynamic dims")
    shapes = [None if op.input(i) is None else b.ixdims(op.input(i)) for i in range(12)]
    dq_lstm_dims(checks(op, b), d, op.attrs.hidden_size, shapes, lstm_inputs=False)
    rec = parse(op, b, 4, LSTM_ACTIVATIONS, wr_transposed=True)
    H, gh = rec.hidden, 4 * rec.hidden
    x, w, r = rec.x, op.input(1), op.input(2)
    ws, wz, rs, rz = (op.input(i) for i, _ in QPARAMS)
    S, B = b.dim(x, 0), b.dim(x, 1)
    rows = S * B if isinstance(S, int) and isinstance(B, int) else \
        arith.muli(b.as_index(S), b.as_index(B))
    sl = rec.seq_lens
    with_y = bool(op.result_groups()[0])

    # X quantized once: the range of its first max(sequence_lens) steps
    keep = None
    if sl is not None:
        mx = b.generic([sl], [b.full([], i32(), 0)], [amap(1, [0]), ir.AffineMap.get(1, 0, [])],
                       ["reduction"], lambda v, a: arith.maxsi(a, v))[0]
        maxlen = to_index(tensor.extract(mx, []))
        keep = (lambda ix: arith.cmpi(arith.CmpIPredicate.ult, ix[0], maxlen), [], [])
    xq, xs, xz = _quantize(b, x, *_range(b, x, keep))

    if sl is not None and with_y:
        # rows whose step t-1 was past their length hold 0 in Y (t <= len)
        def h_keep(t):
            return (lambda ix, n: arith.cmpi(arith.CmpIPredicate.ule, t, to_index(n)),
                    [sl], [amap(2, [0])])
    else:
        def h_keep(t):
            return None

    if rec.bias is not None:
        def bias_row(dd):
            return b.generic([vec(b, rec.bias, dd, 0, gh), vec(b, rec.bias, dd, gh, gh)],
                             [b.empty([gh], rec.et)], [amap(1, [0])] * 3, ["parallel"],
                             lambda wb, rb, _o: arith.addf(wb, rb))[0]
    else:
        def bias_row(dd):
            return b.full([gh], rec.et, 0.0)

    def steps(dd):
        xd = xq
        if rec.reverse[dd]:
            xd = reverse_time(b, rec, xq)
            _unsigned(b, xd)
        acc = _qmatmul(op, b, xd, xz, _weights(op, b, w, wz, dd), rows, rec.inp)
        proj = _scaled(b, acc, xs, ws, dd)
        r32 = _weights(op, b, r, rz, dd)
        xw = bias_row(dd)

        def step(t, states):
            h = states[0]
            hq, hs, hz = _quantize(b, h, *_range(b, h, h_keep(t)))
            hacc = _qmatmul(op, b, hq, hz, r32, B, H)
            return xw, _scaled(b, hacc, hs, rs, dd, step_slice(b, proj, t, B))
        return step
    return lstm(op, b, rec, steps)

