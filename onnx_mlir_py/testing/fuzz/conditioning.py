"""Edge runs: the output positions that depend on an ill-conditioned sum.

On an *edge* run (inputs with inf, NaN, +-1e30, 1e-30) a sum of terms
much larger than its result is decided by summation order and by whether
the multiply-adds are fused: MatMul of [inf, -1.6e30, 1e30 * -1e30, ...]
is inf with fma and NaN (inf - inf) without (s2000-321); 127 * -2.76 +
3 * -1e30 + 3 * 1e30 + ... is 0 or the rounding residue of 3e30
(s2000-634). Both answers are IEEE-correct, and a later comparison
(GreaterOrEqual) or clamp (HardSigmoid) turns them into values that look
exact. :func:`unstable` marks, per graph output, the positions that
depend on such a sum, from the reference's own intermediate values:

* a sum (``TERMS``: MatMul, Gemm, Conv, ReduceSum/Mean, CumSum, Sum, Mean,
  AveragePool, GlobalAveragePool) is unstable at a position where the same
  node run on the absolute values of the finite elements of its float
  inputs (inf and NaN as 0: those decide the result whatever the order) is
  not finite (a partial sum may overflow) or where
  ``n * u * that > rtol * max(|result|, 1)``: the
  worst-case rounding error of ``n`` terms (``u`` the type's unit
  roundoff) exceeds the oracle's relative tolerance;
* another accumulating op (Softmax, LayerNormalization, ...) where its
  result is not finite or beyond 1e-3 of the type's max (the rule
  ``oracle.compare`` applies to an output), except sums of non-negative
  terms (ReduceL1/L2/SumSquare, LpPool: no cancellation);
* Sin, Cos, Tan of a computed value (not a graph input or constant, nor
  only moved from one) where 16 ulps of that value, absolute, exceed the
  relative tolerance (f32: beyond about 1000; s2000-1636: Tan of a Conv
  result -1.27e29, one ulp apart at -O0, -0.73 for 0.35);
* Floor, Ceil, Round of a computed value within the relative tolerance of
  a step (an integer; k + 1/2 for Round): 5.9999995 or 6.0 from LpPool decide
  5 or 6 (s2000-350, -482). This rule, like the others, is applied on every
  run once an output differs, not only on edge runs;
* Mod of a computed dividend or divisor (float) where its quotient ``x / y``
  lies within the relative tolerance of a nonzero integer (``x - trunc(x /
  y) * y``: the Floor rule on the quotient, whose steps are where fmod jumps
  by ``|y|``): beyond about 500 (f32) every position, as an ulp of ``x`` or
  ``y`` moves the result anywhere in ``[0, |y|)`` (s3605-30: fmod(1e30, a
  Softmax result 0.0104838) is 0.0054 by numpy, onnx.reference and -O0,
  0.0078 at -O3 and 0.0036 in onnxruntime, the divisors one ulp apart);
* an elementwise op of values computed by sums is unstable where its
  result, for one input moved by that input's error bound (the sum's
  worst-case rounding error ``n * u * magnitude``, carried through data
  movement and through earlier elementwise ops by the same rule), moves by
  more than the relative tolerance (of ``max(|result|, 1)``; a bool or
  integer result: changes): Reciprocal of a Conv result 1.0196e-5 whose
  10 terms bound its error by 3.1e-6 (s2705-30: 97542 at -O0, 98075 in
  onnxruntime, from conv results 5.6e-8 apart), Tan near a pole,
  GreaterOrEqual of a sum within its error of the other side;
* instability then flows to what depends on it: elementwise ops (with
  broadcasting), data movement and max/sum-like reductions and pools (the
  node run on the masks), MatMul-like ops (the node run on one mask at a
  time, the other operands ones); any other node with an unstable input
  gets an unstable output everywhere.
"""
from __future__ import annotations

import numpy as np
import onnx

TERMS = {"MatMul", "Gemm", "Conv", "ReduceSum", "ReduceMean", "CumSum", "Sum", "Mean",
         "AveragePool", "GlobalAveragePool"}
ELEMENTWISE = {
    "Abs", "Acos", "Add", "And", "Asin", "Asinh", "Atan", "Cast", "CastLike", "Ceil", "Celu",
    "Clip", "Cos", "Cosh", "Div", "Elu", "Equal", "Erf", "Exp", "Floor", "Gelu", "Greater",
    "GreaterOrEqual", "HardSigmoid", "HardSwish", "Identity", "IsInf", "IsNaN", "LeakyRelu",
    "Less", "LessOrEqual", "Log", "Max", "Mean", "Min", "Mish", "Mod", "Mul", "Neg", "Not",
    "Or", "Pow", "PRelu", "Reciprocal", "Relu", "Round", "Selu", "Sigmoid", "Sign", "Sin",
    "Sinh", "Softplus", "Softsign", "Sqrt", "Sub", "Sum", "Tan", "Tanh", "ThresholdedRelu",
    "Where", "Xor", "QuantizeLinear", "DequantizeLinear"}
# the node run on 0/1 masks in place of its inputs: > 0 where an unstable value lands
MOVE = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Split", "Slice",
        "Gather", "Expand", "Tile", "Pad", "MaxPool", "GlobalMaxPool", "ReduceMax",
        "ReduceSum", "ReduceMean", "ReduceL1", "ReduceL2", "ReduceSumSquare", "AveragePool",
        "GlobalAveragePool", "LpPool", "CumSum"}
# ... one input at a time, the other float inputs ones
PRODUCT = {"MatMul", "Gemm", "Conv"}
NEVER = {"Shape", "Size"}
# sums of non-negative terms: no cancellation, inf only where the terms overflow
NONNEG = {"ReduceL1", "ReduceL2", "ReduceSumSquare", "LpPool"}
# periodic functions of a computed argument: its rounding error, absolute,
# decides the result once PERIODIC_ULPS ulps of it exceed the tolerance
PERIODIC = {"Sin", "Cos", "Tan"}
PERIODIC_ULPS = 16
# step functions of a computed argument: where it lies within the tolerance of
# a step (an integer; for Round, k + 1/2), its last ulp decides the result
ROUNDING = {"Floor": 0.0, "Ceil": 0.0, "Round": 0.5}
# x - trunc(x / y) * y: the quotient's rounding step decides, as for Floor
MODULO = {"Mod"}
_U = {np.dtype(np.float16): 2.0 ** -11, np.dtype(np.float32): 2.0 ** -24,
      np.dtype(np.float64): 2.0 ** -53}


def _terms(node: onnx.NodeProto, ins: list, out: np.ndarray) -> int:
    """How many terms each result of the sum ``node`` adds (an upper estimate)."""
    op, x = node.op_type, ins[0]
    if op == "MatMul":
        return x.shape[-1] if x.ndim else 1
    if op == "Gemm":
        ta = any(a.name == "transA" and a.i for a in node.attribute)
        return x.shape[0 if ta else 1] + 1
    if op == "Conv":
        return int(np.prod(ins[1].shape[1:])) + 1
    if op in ("Sum", "Mean"):
        return len(ins)
    if op == "CumSum":
        return max(x.shape) if x.ndim else 1
    return max(1, x.size // max(1, out.size))


def _magnitude(node, opset: int, ins: list, run_node) -> np.ndarray:
    """``node`` on the absolute values of the finite elements of its float
    inputs (inf and NaN as 0: a NaN term gives NaN, inf terms give inf or NaN
    whatever the order, unless finite partial sums overflow)."""
    n = onnx.NodeProto()
    n.CopyFrom(node)
    for a in n.attribute:           # Gemm's alpha, beta
        if a.type == onnx.AttributeProto.FLOAT:
            a.f = abs(a.f)
    with np.errstate(all="ignore"):
        mags = [np.where(np.isfinite(x), np.abs(x), 0).astype(x.dtype)
                if x.dtype.kind == "f" else x for x in ins]
    return run_node(n, opset, mags)[0]


def _spread(node, opset: int, ins: list, masks: list, outs: list, run_node) -> list:
    """Unstable positions of ``node``'s outputs, from its inputs' (``masks``)."""
    op = node.op_type
    if op in NEVER or not any(m is not None and m.any() for m in masks):
        return [None] * len(outs)
    full = [np.ones(o.shape, bool) for o in outs]
    try:
        if op in ELEMENTWISE:
            m = np.zeros(outs[0].shape, bool)
            for k in masks:
                if k is not None:
                    m = m | np.broadcast_to(k, m.shape)
            return [m]
        if op in PRODUCT:
            res = [np.zeros(o.shape, bool) for o in outs]
            for i, k in enumerate(masks):
                if k is None or not k.any():
                    continue
                feed = [x if j != i and x.dtype.kind != "f" else
                        (k.astype(x.dtype) if j == i else np.ones_like(x))
                        for j, x in enumerate(ins)]
                for r, y in zip(res, run_node(node, opset, feed)):
                    r |= y != 0
            return res
        if op in MOVE:
            feed = [x if k is None or x.dtype.kind not in "fiub" else k.astype(x.dtype)
                    for x, k in zip(ins, masks)]
            data = [j for j, (x, k) in enumerate(zip(ins, masks)) if k is not None]
            if op != "Concat" and data != [0]:
                return full             # an index, shape or pad input is unstable
            return [y != 0 for y in run_node(node, opset, feed)]
    except Exception:  # noqa: BLE001 - the node refuses the masks: everything unstable
        return full
    return full


def _own(node, ins: list, y: np.ndarray, rtol: dict, rounded: bool, err):
    """The positions where ``node`` itself is unstable (module docstring), or
    None; ``err``: a sum's error bound (``_sum_error``), or None."""
    from onnx_mlir_py.testing.fuzz.oracle import ACCUMULATING
    op, r = node.op_type, rtol[y.dtype.type]
    with np.errstate(all="ignore"):
        if op in TERMS and err is not None and err.shape == y.shape:
            return ~np.isfinite(err) | (err > r * np.maximum(np.abs(y), 1))
        if op in ROUNDING and rounded and ins[0].shape == y.shape:
            x = ins[0].astype(np.float64)
            off = ROUNDING[op]
            step = np.floor(x - off + 0.5) + off          # the nearest step
            return np.abs(x - step) <= r * np.maximum(np.abs(x), 1)
        if op in MODULO and rounded and len(ins) == 2:
            x, d = (np.broadcast_to(a.astype(np.float64), y.shape) for a in ins)
            q = x / d
            k = np.round(q)
            return np.isfinite(x) & np.isfinite(d) & (d != 0) & (k != 0) & \
                ~(np.abs(q - k) > r * np.maximum(np.abs(q), 1))
        if op in PERIODIC and rounded and ins[0].shape == y.shape:
            return PERIODIC_ULPS * _U[y.dtype] * np.abs(ins[0].astype(np.float64)) > r
        if op in ACCUMULATING and op not in NONNEG:
            return ~np.isfinite(y) | (np.abs(y) > float(np.finfo(y.dtype).max) * 1e-3)
    return None


def _sum_error(node, opset: int, ins: list, y: np.ndarray, run_node) -> np.ndarray | None:
    """The worst-case rounding error of the sum ``node`` (``TERMS``) at each
    result, ``n * u * magnitude``, as float64 (inf where the magnitude
    overflows), or None when the reference refuses the magnitudes."""
    try:
        mag = _magnitude(node, opset, ins, run_node).astype(np.float64)
    except Exception:  # noqa: BLE001 - the reference refuses: no bound
        return None
    with np.errstate(all="ignore"):
        return np.where(np.isfinite(mag), _terms(node, ins, y) * _U[y.dtype] * mag, np.inf)


def _perturbed(node, opset: int, ins: list, errs: list, y: np.ndarray, run_node,
               rtol: dict):
    """(unstable positions, the result's error bound) of the elementwise
    ``node`` whose inputs carry error bounds ``errs`` (None: exact): each
    bounded input moved by +-its bound, the others kept (module docstring)."""
    moved = np.zeros(y.shape, np.float64)
    bad = np.zeros(y.shape, bool)
    r = rtol.get(y.dtype.type, max(rtol.values()))
    with np.errstate(all="ignore"):
        for i, e in enumerate(errs):
            if e is None:
                continue
            e = np.where(np.isfinite(e), e, 0.0)
            for sign in (1.0, -1.0):
                feed = list(ins)
                feed[i] = (ins[i].astype(np.float64) + sign * e).astype(ins[i].dtype)
                yp = np.asarray(run_node(node, opset, feed)[0])
                if yp.shape != y.shape:
                    return np.ones(y.shape, bool), None
                if y.dtype.kind != "f":
                    bad |= yp != y
                    continue
                same = (yp == y) | (np.isnan(yp) & np.isnan(y))
                d = np.where(same, 0.0, np.abs(yp.astype(np.float64) - y))
                bad |= ~same & ~(d <= r * np.maximum(np.abs(y.astype(np.float64)), 1))
                moved = np.maximum(moved, np.where(np.isfinite(d), d, np.inf))
    return bad, (moved if y.dtype.kind == "f" else None)


def _moved_error(node, opset: int, ins: list, errs: list, run_node) -> np.ndarray | None:
    """The error bound of a data-movement node's result (``MOVE``, its data
    input bounded): the node run on the bound."""
    if node.op_type not in MOVE or errs[0] is None or \
            any(e is not None for e in errs[1:]):
        return None
    try:
        e = np.where(np.isfinite(errs[0]), errs[0], 0.0).astype(ins[0].dtype)
        return np.asarray(run_node(node, opset, [e] + list(ins[1:]))[0]).astype(np.float64)
    except Exception:  # noqa: BLE001 - the node refuses: no bound
        return None


def _carried(node, opset: int, ins: list, bounds: list, y: np.ndarray, run_node, rtol: dict):
    """(unstable positions or None, the result's error bound or None) of a
    node (not a sum) some of whose inputs carry error bounds."""
    if node.op_type in ELEMENTWISE:
        try:
            return _perturbed(node, opset, ins, bounds, y, run_node, rtol)
        except Exception:  # noqa: BLE001 - the node refuses the moved inputs
            return np.ones(y.shape, bool), None
    if y.dtype.kind == "f":
        return None, _moved_error(node, opset, ins, bounds, run_node)
    return None, None


def unstable(model: onnx.ModelProto, feeds: dict, values: dict, run_node,
             rtol: dict) -> dict[str, np.ndarray]:
    """Graph output -> bool mask of its unstable positions (see the module
    docstring); ``values``: every value of the main graph as the reference
    computed it (``verify.values.expose_values``), ``run_node(node, opset,
    inputs)``: one node in the reference engine, ``rtol``: the oracle's base
    relative tolerance per numpy float type."""
    from onnx_mlir_py.testing.fuzz.oracle import EXACT_OPS
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 21)
    vals = {**{t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer},
            **feeds, **values}
    mask: dict[str, np.ndarray | None] = {}
    errs: dict[str, np.ndarray] = {}    # values computed by sums -> their error bound
    rounded: set[str] = set()           # values a rounding op computed (or moved)
    for node in model.graph.node:
        if node.op_type not in EXACT_OPS or any(i in rounded for i in node.input):
            rounded.update(node.output)
        if any(o not in vals for o in node.output if o):
            continue                    # not exposed (a sequence): nothing known
        ins = [vals[i] for i in node.input if i]
        outs = [vals[o] for o in node.output if o]
        got = _spread(node, opset, ins, [mask.get(i) for i in node.input if i], outs, run_node)
        y = outs[0] if outs else None
        own, bounds = None, [errs.get(i) for i in node.input if i]
        if y is not None and y.dtype.kind == "f":
            e = _sum_error(node, opset, ins, y, run_node) if node.op_type in TERMS else None
            # a computed input (Mod: either one; the others take one input)
            own = _own(node, ins, y, rtol, any(i in rounded for i in node.input if i), e)
            if e is not None and e.shape == y.shape:
                errs[node.output[0]] = e
        if own is not None and own.shape == y.shape:
            got[0] = own if got[0] is None else (got[0] | own)
        if y is not None and node.op_type not in TERMS and any(e is not None for e in bounds):
            bad, e = _carried(node, opset, ins, bounds, y, run_node, rtol)
            if bad is not None:
                got[0] = bad if got[0] is None else (got[0] | bad)
            if e is not None and e.shape == y.shape:
                errs[node.output[0]] = e
        for o, m in zip([o for o in node.output if o], got):
            mask[o] = m
    return {vo.name: mask[vo.name] for vo in model.graph.output
            if mask.get(vo.name) is not None}
