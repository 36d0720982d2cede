"""Shared pieces of the RNN / GRU / LSTM lowerings (see recurrent.py).

Everything is computed in layout 0 (X [S, B, I], states [D, B, H]); layout 1
inputs are transposed on entry and outputs on exit. Per direction:

* ``project``: one ``linalg.matmul`` X·W[d]ᵀ + biases for all time steps,
  [S*B, G·H] (X collapsed to [S*B, I]; step t is rows [t*B, (t+1)*B));
* ``reverse_time``: row b of a [S, B, n] tensor reversed within its length
  (sequence_lens[b], or S): used on X before a reverse pass's projection and
  on its outputs after, so the time loop itself always runs forward;
* the time loop (recurrent.py) carries H (C) and the direction's outputs [S, B, H].
"""
from __future__ import annotations

from dataclasses import dataclass, field

import mlir.ir as ir
from mlir.dialects import arith, math, tensor

from onnx_mlir_py import ir_linalg as linalg
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.recurrent import hidden_size, recurrent_dims
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, val
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, index_of
from onnx_mlir_py.passes.onnx_to_linalg.index_bounds import require_indices
from onnx_mlir_py.passes.onnx_to_linalg.unary import softplus
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import (extract_slice, insert_slice, loop_index,
                                                            to_index)


def amap(n: int, exprs) -> ir.AffineMap:
    """exprs: dim (int) | ("c", k) constant | (dim, offset)."""
    out = []
    for e in exprs:
        if isinstance(e, int):
            out.append(ir.AffineDimExpr.get(e))
        elif e[0] == "c":
            out.append(ir.AffineConstantExpr.get(e[1]))
        else:
            out.append(ir.AffineDimExpr.get(e[0]) + ir.AffineConstantExpr.get(e[1]))
    return ir.AffineMap.get(n, 0, out)


# -- activations ---------------------------------------------------------------------
_ALPHA = {"Affine": 1.0, "LeakyRelu": 0.01, "ThresholdedRelu": 1.0, "ScaledTanh": 1.0,
          "HardSigmoid": 0.2, "Elu": 1.0}
_BETA = {"Affine": 0.0, "ScaledTanh": 1.0, "HardSigmoid": 0.5}
_NAMES = {n.lower(): n for n in ["Relu", "Tanh", "Sigmoid", "Affine", "LeakyRelu",
                                 "ThresholdedRelu", "ScaledTanh", "HardSigmoid", "Elu",
                                 "Softsign", "Softplus"]}


def activation(op: OnnxOp, name: str, alpha: float, beta: float, et: ir.Type):
    """Scalar activation x -> f(x)."""
    c = lambda v: arith.constant(et, float(v))  # noqa: E731
    one = lambda: c(1.0)  # noqa: E731
    fns = {
        "Relu": lambda x: arith.maximumf(x, c(0.0)),
        "Tanh": lambda x: math.tanh(x),
        "Sigmoid": lambda x: arith.divf(one(), arith.addf(one(), math.exp(arith.negf(x)))),
        "Affine": lambda x: arith.addf(arith.mulf(c(alpha), x), c(beta)),
        "LeakyRelu": lambda x: arith.select(arith.cmpf(arith.CmpFPredicate.OGE, x, c(0.0)), x,
                                            arith.mulf(c(alpha), x)),
        "ThresholdedRelu": lambda x: arith.select(
            arith.cmpf(arith.CmpFPredicate.OGT, x, c(alpha)), x, c(0.0)),
        "ScaledTanh": lambda x: arith.mulf(c(alpha), math.tanh(arith.mulf(c(beta), x))),
        "HardSigmoid": lambda x: arith.minimumf(arith.maximumf(
            arith.addf(arith.mulf(c(alpha), x), c(beta)), c(0.0)), one()),
        "Elu": lambda x: arith.select(arith.cmpf(arith.CmpFPredicate.OGE, x, c(0.0)), x,
                                      arith.mulf(c(alpha), arith.subf(math.exp(x), one()))),
        "Softsign": lambda x: arith.divf(x, arith.addf(one(), math.absf(x))),
        "Softplus": softplus,
    }
    canon = _NAMES.get(name.lower())
    if canon is None:
        op.fail(f"unsupported activation '{name}'")
    return fns[canon]


@dataclass
class Rec:
    x: ir.Value                 # [S, B, I] (layout 0)
    w: ir.Value                 # [D, G*H, I]
    r: ir.Value                 # [D, G*H, H]
    bias: ir.Value | None       # [D, 2*G*H]
    seq_lens: ir.Value | None   # [B] i32
    h0: ir.Value | None         # [D, B, H]
    layout: int
    hidden: int
    gates: int
    reverse: list[bool]         # per direction
    acts: list[list]            # per direction: scalar fns
    clip: float | None
    et: ir.Type
    extra: dict = field(default_factory=dict)
    inp: int | ir.Value = 0     # input size I (static if X or W has it static)

    @property
    def dirs(self) -> int:
        return len(self.reverse)


def transpose(b: LoweringContext, v: ir.Value, perm: list[int]) -> ir.Value:
    d = b.dims(v)
    return val(linalg.transpose(v, outs=[b.empty([d[p] for p in perm], v.type.element_type)],
                                permutation=perm))


def parse(op: OnnxOp, b: LoweringContext, gates: int, default_acts: list[str],
          wr_transposed: bool = False) -> Rec:
    """``wr_transposed``: W is [D, I, G*H] and R [D, H, G*H] (com.microsoft
    DynamicQuantizeLSTM, an LSTM: ms_recurrent.py); rec.w / rec.r are then
    those tensors as given."""
    x, w, r = op.input(0), op.input(1), op.input(2)
    kind = "LSTM" if wr_transposed else op.op_type
    for v, n in ((x, "X"), (w, "W"), (r, "R")):
        if b.ranked(op, v, n).rank != 3:
            op.fail(f"{n} must be 3-D")
    et = x.type.element_type
    if not isinstance(et, (ir.F16Type, ir.F32Type, ir.F64Type)):
        op.fail(f"unsupported element type {et}")
    direction = op.attrs.direction
    direction = direction.decode() if isinstance(direction, bytes) else direction
    reverse = {"forward": [False], "reverse": [True], "bidirectional": [False, True]}.get(
        direction)
    if reverse is None:
        op.fail(f"unknown direction '{direction}'")
    layout = op.attrs.layout if "layout" in op.spec.attributes else 0
    # W, R, B, ... may have dynamic dims: their sizes follow from direction and
    # hidden_size, and are checked at run time (recurrent_dims)
    shapes = [None if op.input(i) is None else b.ixdims(op.input(i))
              for i in range(len(op.spec.inputs))]
    if wr_transposed:               # as [D, G*H, I] and [D, G*H, H] for the checks
        shapes[1:3] = [[s[0], s[2], s[1]] for s in shapes[1:3]]
    if not D.is_static(hidden_size(kind, op.attrs.hidden_size, shapes[1], shapes[2])):
        op.fail("hidden_size is not given and W and R have dynamic dims")
    _, _, inp, hidden = recurrent_dims(checks(op, b), kind, len(reverse),
                                       op.attrs.hidden_size, layout, (shapes + [None] * 8)[:8])
    w_inp = b.ixdim(w, 1 if wr_transposed else 2)  # prefer a static input size (W's or X's)
    inp = index_of(w_inp if D.is_static(w_inp) else inp)
    h0 = op.input(5)
    if layout:
        x = transpose(b, x, [1, 0, 2])
        h0 = transpose(b, h0, [1, 0, 2]) if h0 is not None else None
    # (RNN's schema default is ["Tanh", "Tanh"] whatever the direction)
    names = (op.attrs.activations or []) if op.attrs.has("activations") else []
    names = [n.decode() if isinstance(n, bytes) else n for n in names]
    k = len(default_acts)
    if not names:
        names = default_acts * len(reverse)
    elif len(names) == k and len(reverse) == 2:
        names = names * 2
    elif len(names) == 2 * k and len(reverse) == 1 and op.op_type == "RNN":
        names = names[:k]  # the schema default lists one per direction of a bidirectional RNN
    if len(names) != k * len(reverse):
        op.fail(f"expected {k * len(reverse)} activations, got {len(names)}")
    alphas = list(op.attrs.activation_alpha or [])
    betas = list(op.attrs.activation_beta or [])
    acts = []
    for d in range(len(reverse)):
        fns = []
        for n in names[d * k:(d + 1) * k]:
            canon = _NAMES.get(n.lower(), n)
            a = alphas.pop(0) if canon in _ALPHA and alphas else _ALPHA.get(canon, 0.0)
            bt = betas.pop(0) if canon in _BETA and betas else _BETA.get(canon, 0.0)
            fns.append(activation(op, n, a, bt, et))
        acts.append(fns)
    if op.input(4) is not None:     # rows are read up to their length
        require_indices(op, b, op.input(4), b.dim(x, 0), "the sequence (X's time dim)",
                        what="sequence_lens element", negative=False, inclusive=True)
    return Rec(x, w, r, op.input(3), op.input(4), h0, layout, int(hidden), gates, reverse,
               acts, op.attrs.clip, et, inp=inp)


def clip_fn(rec: Rec):
    if rec.clip is None:
        return lambda v: v
    c = rec.clip
    return lambda v: arith.minimumf(arith.maximumf(v, arith.constant(rec.et, -float(c))),
                                    arith.constant(rec.et, float(c)))


def vec(b: LoweringContext, v: ir.Value, d: int, off: int, n: int) -> ir.Value:
    """v[d, off:off+n] of a 2-D tensor as a 1-D tensor."""
    rt = ir.RankedTensorType.get([n], v.type.element_type)
    return tensor.extract_slice(rt, v, [], [], [], [d, off], [1, n], [1, 1])


def gate(b: LoweringContext, v: ir.Value, k: int, hidden: int) -> ir.Value:
    """Columns [k*hidden, (k+1)*hidden) of the last dim of v."""
    d = b.dims(v)
    off = [0] * (len(d) - 1) + [k * hidden]
    return extract_slice(b, v, off, d[:-1] + [hidden])


def project(b: LoweringContext, rec: Rec, d: int, fold_limit: int) -> ir.Value:
    """[S*B, G*H] (row t*B + b): X·W[d]ᵀ + Wb[d] + Rb[d] (Rb only for
    columns < fold_limit), one ``linalg.matmul`` over all time steps (the
    packed GEMM kernel at -O3, W[d]ᵀ relaid out at compile time when
    constant). A reverse direction projects the per-row reversed X."""
    gh = rec.gates * rec.hidden
    S, B = b.dim(rec.x, 0), b.dim(rec.x, 1)
    x = reverse_time(b, rec, rec.x) if rec.reverse[d] else rec.x
    rows = S * B if isinstance(S, int) and isinstance(B, int) else \
        arith.muli(b.as_index(S), b.as_index(B))
    # X's own input dim in the collapsed type, then W's (static) one: they
    # agree (checked at run time, recurrent_dims)
    x2 = tensor.collapse_shape(b.type_of([rows, b.dim(x, 2)], rec.et), x,
                               _groups([[0, 1], [2]]))
    x2 = b.cast_to(x2, b.type_of([rows, rec.inp], rec.et))
    if rec.bias is None:
        init = b.full([rows, gh], rec.et, 0.0)
    else:
        # the [G*H] bias row once (Wb + Rb on the first fold_limit columns,
        # slices: a select on the column index, once fused with the
        # kernel's block view, became a scalar loop of gathers and scatters),
        # then broadcast over the rows
        add = b.generic([vec(b, rec.bias, d, 0, fold_limit), vec(b, rec.bias, d, gh, fold_limit)],
                        [b.empty([fold_limit], rec.et)], [amap(1, [0])] * 3, ["parallel"],
                        lambda wb, rb, _o: arith.addf(wb, rb))[0]
        row = add if fold_limit == gh else insert_slice(add, vec(b, rec.bias, d, 0, gh), [0],
                                                        [fold_limit])
        init = b.generic([row], [b.empty([rows, gh], rec.et)],
                         [amap(2, [1]), amap(2, [0, 1])], ["parallel"] * 2,
                         lambda v, _o: v)[0]
    wt = transpose(b, extract_2d(b, rec.w, d, [gh, rec.inp]), [1, 0])
    return val(linalg.matmul(x2, wt, outs=[init]))


def _groups(groups):
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(i64, j) for j in g])
                             for g in groups])


def seq_len_at(b: LoweringContext, rec: Rec, bidx: ir.Value) -> ir.Value:
    """Length of batch row ``bidx`` as index (S without sequence_lens)."""
    if rec.seq_lens is None:
        return b.as_index(b.dim(rec.x, 0))
    return to_index(tensor.extract(rec.seq_lens, [bidx]))


def reverse_time(b: LoweringContext, rec: Rec, v: ir.Value) -> ir.Value:
    """out[t, b] = v[L_b - 1 - t, b] for t < L_b, else v[t, b]."""
    def body(_o):
        t, bi, j = loop_index(0), loop_index(1), loop_index(2)
        L = seq_len_at(b, rec, bi)
        inside = arith.cmpi(arith.CmpIPredicate.ult, t, L)
        src = arith.select(inside, arith.subi(arith.subi(L, b.index(1)), t), t)
        return tensor.extract(v, [src, bi, j])
    return b.generic([], [b.empty(b.dims(v), v.type.element_type)], [amap(3, [0, 1, 2])],
                     ["parallel"] * 3, body)[0]


def initial_state(b: LoweringContext, rec: Rec, v: ir.Value | None, d: int) -> ir.Value:
    B = b.dim(rec.x, 1)
    if v is None:
        return b.full([B, rec.hidden], rec.et, 0.0)
    return extract_2d(b, v, d, [B, rec.hidden])


def extract_2d(b: LoweringContext, v: ir.Value, d: int, sizes: list) -> ir.Value:
    """v[d] of a 3-D tensor as a 2-D tensor."""
    rt = b.type_of(sizes, v.type.element_type)
    dyn = [s for s in sizes if not isinstance(s, int)]
    static = [s if isinstance(s, int) else ir.ShapedType.get_dynamic_size() for s in sizes]
    return tensor.extract_slice(rt, v, [], dyn, [], [d, 0, 0], [1] + static, [1, 1, 1])


def recurrence_t(b: LoweringContext, rec: Rec, d: int) -> ir.Value:
    """R[d]ᵀ: [H, G*H] for H·Rᵀ with linalg.matmul."""
    gh = rec.gates * rec.hidden
    r2 = extract_2d(b, rec.r, d, [gh, rec.hidden])
    return transpose(b, r2, [1, 0])


def assemble(b: LoweringContext, rec: Rec, per_dir: list[ir.Value], seq: bool) -> ir.Value:
    """Stack per-direction results: seq -> Y [S, D, B, H] else [D, B, H];
    then to layout 1 if needed."""
    S, B, H = b.dim(rec.x, 0), b.dim(rec.x, 1), rec.hidden
    if seq:
        out = b.empty([S, rec.dirs, B, H], rec.et)
        for d, v in enumerate(per_dir):
            out = insert_slice(v, out, [0, d, 0, 0], [S, 1, B, H])
        return transpose(b, out, [2, 0, 1, 3]) if rec.layout else out
    out = b.empty([rec.dirs, B, H], rec.et)
    for d, v in enumerate(per_dir):
        out = insert_slice(v, out, [d, 0, 0], [1, B, H])
    return transpose(b, out, [1, 0, 2]) if rec.layout else out


def step_slice(b: LoweringContext, proj: ir.Value, t: ir.Value, batch) -> ir.Value:
    """Rows [t*B, (t+1)*B) of the [S*B, G*H] projection: step t, [B, G*H]."""
    start = arith.muli(t, b.as_index(batch))
    return extract_slice(b, proj, [start, 0], [batch, b.dims(proj)[1]])
