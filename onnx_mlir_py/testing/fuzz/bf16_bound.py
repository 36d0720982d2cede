"""The fuzzer's oracle for ``--precision bf16``: an error bound per output
element against the f32 reference.

The reference (onnxruntime, or onnx.reference) computes the model in f32;
the compiled model rounds the two inputs of every f32 MatMul / Gemm / Conv
to bf16 (round to nearest even: relative error <= 2^-8, bf16 having 8
significant bits) and sums the exact products in f32. :func:`bounds`
carries, node by node over the reference's intermediate values, a bound
``e`` on ``|ours - reference|`` per element (both sides' errors):

* a contraction ``y = sum_k a_k w_k`` of K terms, with input bounds
  ``e_a, e_w`` (0 for graph inputs and constants): bf16 rounding is known
  (``ba = bf16(a)``, ``bw = bf16(w)``, as ml_dtypes rounds: the compiler's
  rounding) and monotone, so ours' rounded inputs are within
  ``da = max(bf16(a + e_a) - ba, ba - bf16(a - e_a))`` of ``ba`` (0 unless the
  interval crosses a rounding boundary), and with ``A = |ba| + da``,
  ``W = |bw| + dw`` (products summed as the contraction sums them: matmul,
  conv, in f64):

      e_y = |sum ba bw - sum a w|               the rounding itself, computed
          + sum (da W + |ba| dw)                ours' inputs, rounded
          + g_K (sum A W + sum |a| |w|)         f32 sums, ours and the reference's
          + 2^-126 (sum_k A + sum_k W + 2 K)    vdpbf16ps flushes bf16 denormals
                                                (inputs and partial sums) to zero

  with ``g_K = K u32 / (1 - K u32)``, u32 = 2^-24 (and f64's own error);
  Gemm scales by ``|alpha|`` and adds ``|beta| e_C``, Conv adds its bias's
  bound, each plus the f32 rounding of those steps (2 u32 of the
  magnitudes, both sides). So the bound is the bf16 rounding's actual
  effect plus K u32 of the terms: a lost product or a wrong tap exceeds it;
* Add: ``e_a + e_b``; Mul: ``|a| e_b + |b| e_a + e_a e_b``; plus 2 u32 |y|;
  a Mul of a contraction (constant weights) by a constant scalar also
  allows the contraction with its weights scaled (-O3 folds the scale into
  the weights, which then round to bf16 as ``w * c``: s5-28);
* Relu, Identity, Reshape, Flatten, Transpose, Squeeze, Unsqueeze: the op
  applied to ``e`` (1-Lipschitz, elementwise or data movement).

Non-finite values: the finite parts give the bound (inf and NaN terms
decide the result whatever the order and rounding, in both); where the
reference is NaN or +-inf ours must be the same, unless an inf term's
partner may round (in ours) to another sign, to zero or to a denormal
(vdpbf16ps flushes it: inf * denormal is NaN there, s2-15: a Conv of a
MatMul's results near 0 with inf weights). Where ``|y| + e_y`` may
overflow (a partial sum or a rounded input beyond bf16's or f32's range),
``e`` is inf: the position is not compared. Any other op on the way to an
output: :class:`Unbounded` (the bf16 mode's generator makes none).
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
from onnx import helper

U32 = 2.0 ** -24
TINY = 2.0 ** -126          # smallest normal f32 / bf16
BIG = 3.0e38                # beyond: a bf16 rounding or an f32 sum may overflow
MOVES = {"Relu", "Identity", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze"}
CONTRACTIONS = {"MatMul", "Gemm", "Conv"}


class Unbounded(Exception):
    """An op the bound does not model."""


def rounded_model(model: onnx.ModelProto, ops=CONTRACTIONS) -> onnx.ModelProto:
    """``model`` with inputs 0 and 1 of every node of ``ops`` rounded to bf16
    and back to f32 (onnx Casts): the bf16 mode's arithmetic in f32, for a
    reference evaluator."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    nodes = []
    for k, n in enumerate(out.graph.node):
        if n.op_type in ops:
            for i in (0, 1):
                b, f = f"bf16_{k}_{i}", f"bf16_{k}_{i}_f32"
                nodes += [helper.make_node("Cast", [n.input[i]], [b], to=onnx.TensorProto.BFLOAT16),
                          helper.make_node("Cast", [b], [f], to=onnx.TensorProto.FLOAT)]
                n.input[i] = f
        nodes.append(n)
    del out.graph.node[:]
    out.graph.node.extend(nodes)
    return out


def _attrs(node) -> dict:
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _finite_abs(x: np.ndarray) -> np.ndarray:
    a = np.abs(np.asarray(x, np.float64))
    return np.where(np.isfinite(a), a, 0.0)


def _matmul(a, w):
    return np.matmul(a, w)


def _conv(attrs):
    from onnx_mlir_py.testing.fuzz.reference_conv import conv
    kw = {k: attrs[k] for k in ("auto_pad", "dilations", "group", "kernel_shape", "pads",
                                "strides") if k in attrs}
    return lambda x, w: conv(x, w, **kw)


def _gemm_operands(attrs, a, w):
    a = a.T if attrs.get("transA", 0) else a
    w = w.T if attrs.get("transB", 0) else w
    return a, w


def _bf16(x: np.ndarray) -> np.ndarray:
    """f32 values rounded to bf16 (nearest even, as ``arith.truncf`` and the
    compile-time weights), as f64."""
    return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16).astype(np.float64)


def _f32_outward(x: np.ndarray, up: bool) -> np.ndarray:
    """f64 -> the nearest f32 at or beyond ``x`` (up: >= x, else <= x)."""
    with np.errstate(all="ignore"):
        y = x.astype(np.float32)
        away = (y < x) if up else (y > x)
        return np.where(away, np.nextafter(y, np.float32(np.inf if up else -np.inf)), y)


def _rounded(v: np.ndarray, e: np.ndarray) -> tuple:
    """(bf16(v) of the reference's finite values, the bound on
    ``|bf16(ours) - bf16(v)|`` for ours within ``e`` of ``v``: bf16 rounding
    is monotone, so ours rounds into [bf16(v - e), bf16(v + e)])."""
    fin = np.isfinite(v)
    x = np.where(fin, np.asarray(v, np.float64), 0.0)
    b = _bf16(x)
    with np.errstate(all="ignore"):
        d = np.maximum(_bf16(_f32_outward(x + e, True)) - b, b - _bf16(_f32_outward(x - e, False)))
    return b, np.where(np.isnan(d), np.inf, d)


def _class_unsure(v: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Where ``inf`` times ours' bf16 rounding of ``v`` may differ from
    ``inf * v`` (the reference's): ours within ``e`` may round to the other
    sign, to zero, or to a denormal that vdpbf16ps flushes (inf * 0 = NaN)."""
    fin = np.isfinite(v)
    x = np.where(fin, np.asarray(v, np.float64), 0.0)
    with np.errstate(all="ignore"):
        lo, hi = _bf16(_f32_outward(x - e, False)), _bf16(_f32_outward(x + e, True))
    sure = ((x > 0) & (lo >= TINY)) | ((x < 0) & (hi <= -TINY)) | ((x == 0) & (lo == 0) &
                                                                    (hi == 0))
    return (fin & ~sure).astype(np.float64)


def contraction(node, vals: list, errs: list) -> np.ndarray:
    """``e`` of a MatMul / Gemm / Conv output from its inputs' values and
    bounds (the module docstring)."""
    at = _attrs(node)
    a, w = vals[0], vals[1]
    ea, ew = errs[0], errs[1]
    if node.op_type == "Gemm":
        a, w = _gemm_operands(at, a, w)
        ea, ew = _gemm_operands(at, ea, ew)
    op = _conv(at) if node.op_type == "Conv" else _matmul
    k = int(np.prod(w.shape[1:])) if node.op_type == "Conv" else a.shape[-1]
    fa, fw = _finite_abs(a), _finite_abs(w)
    ba, da = _rounded(a, ea)
    bw, dw = _rounded(w, ew)
    gk = k * U32 / (1 - k * U32)
    with np.errstate(all="ignore"):
        A, W = np.abs(ba) + da, np.abs(bw) + dw
        aw = op(A, W)
        ref = op(np.where(np.isfinite(a), a, 0.0).astype(np.float64),
                 np.where(np.isfinite(w), w, 0.0).astype(np.float64))
        e = np.abs(op(ba, bw) - ref)                        # the rounding, computed
        e += op(da, W) + op(np.abs(ba), dw)                 # ours' inputs, rounded
        e += gk * (aw + op(fa, fw)) + 2 * k * 2.0 ** -53 * (aw + op(fa, fw))   # f32 / f64 sums
        e += TINY * (op(A, np.ones_like(W)) + op(np.ones_like(A), W) + 2 * k)  # vdpbf16ps DAZ/FTZ
        over = ~np.isfinite(aw) | (aw >= BIG)
        # an inf term whose partner's class (sign, zero) ours may not share (NaN: NaN)
        nfa, nfw = np.isinf(a).astype(np.float64), np.isinf(w).astype(np.float64)
        over |= (op(nfa, _class_unsure(w, ew)) + op(_class_unsure(a, ea), nfw)) > 0
        if node.op_type == "Gemm":
            alpha, beta = abs(at.get("alpha", 1.0)), abs(at.get("beta", 1.0))
            c = _finite_abs(vals[2]) if len(vals) > 2 and node.input[2] else 0.0
            ec = errs[2] if len(vals) > 2 and node.input[2] else 0.0
            e = alpha * e + beta * ec + 4 * U32 * (alpha * aw + beta * (c + ec))
            over = over | (alpha * aw + beta * (c + ec) >= BIG)
        elif node.op_type == "Conv" and len(vals) > 2 and node.input[2]:
            shape = [1, -1] + [1] * (aw.ndim - 2)
            b = (_finite_abs(vals[2]) + errs[2]).reshape(shape)
            e = e + errs[2].reshape(shape) + 4 * U32 * (aw + b)
            over = over | (aw + b >= BIG)
    return np.where(over | np.isnan(e), np.inf, e)


def _elementwise(node, vals, errs, y) -> np.ndarray:
    a, b = (_finite_abs(v) for v in vals)
    ea, eb = errs
    with np.errstate(all="ignore"):
        if node.op_type in ("Add", "Sub"):
            e = ea + eb
        else:
            e = a * eb + b * ea + ea * eb
            # inf times a value whose sign (or zero-ness) the error may flip
            nf_a, nf_b = ~np.isfinite(vals[0]), ~np.isfinite(vals[1])
            e = np.where((nf_a & (eb >= b)) | (nf_b & (ea >= a)), np.inf, e)
        return e + 2 * U32 * _finite_abs(y)


def _moved(node, opset: int, errs: list, vals: list) -> np.ndarray:
    """The op applied to the bound (its other inputs as they are)."""
    from onnx_mlir_py.testing.fuzz.reference_fixes import one_node
    ins = [errs[0].astype(np.float32) if errs[0].dtype != np.float32 else errs[0]] + \
        [np.asarray(v) for v in vals[1:]]
    out = one_node(node, opset, ins, "reference")[0]
    return np.asarray(out, np.float64) * (1 + 2 ** -20)


def _folded_scale(node, producer: dict, val: dict, err: dict, consts: set, y) -> np.ndarray:
    """Mul of a contraction's result (constant weights) by a constant scalar:
    -O2/-O3 fold it into the weights (optimize_onnx fold-affine-into-conv),
    which are then rounded to bf16 as ``w * c`` (s5-28). The bound of that
    computation: the contraction with weights and bias scaled by ``c``, plus
    the f32 roundings of the scaling; 0 when the pattern does not apply."""
    for x, c in (node.input, node.input[::-1]):
        p = producer.get(x)
        if p is None or p.op_type not in CONTRACTIONS or c not in consts or \
                p.input[1] not in consts or np.size(val[c]) != 1:
            continue
        k = np.float32(np.asarray(val[c]).reshape(()))
        ins = [val[i] if i else None for i in p.input]
        es = [err.get(i) if i else None for i in p.input]
        ins[1] = (ins[1] * k).astype(np.float32)
        if len(ins) > 2 and p.input[2]:
            ins[2] = (ins[2] * k).astype(np.float32)
            es[2] = es[2] * abs(float(k))
        with np.errstate(all="ignore"):
            return contraction(p, ins, es) + 4 * U32 * (_finite_abs(y) + np.abs(k) *
                                                        _finite_abs(val[x]))
    return np.zeros(np.shape(y))


def bounds(model: onnx.ModelProto, feeds: dict, values: dict) -> dict:
    """Graph output -> ``e`` (float64, its shape): the bound on
    ``|ours - reference|``. ``values``: every node output's reference value
    (``verify.values.expose_values``)."""
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 17)
    val = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    val.update(feeds)
    val.update(values)
    err = {n: np.zeros(np.shape(v)) for n, v in val.items() if n not in values}
    consts = {t.name for t in model.graph.initializer}
    producer = {o: n for n in model.graph.node for o in n.output}
    for node in model.graph.node:
        ins = [val[i] if i else None for i in node.input]
        es = [err.get(i) if i else None for i in node.input]
        y = val[node.output[0]]
        if node.op_type in CONTRACTIONS:
            e = contraction(node, ins, es)
        elif node.op_type in ("Add", "Sub", "Mul"):
            e = _elementwise(node, ins, [np.broadcast_to(x, np.shape(v))
                                         for x, v in zip(es, ins)], y)
            if node.op_type == "Mul":
                e = np.maximum(e, _folded_scale(node, producer, val, err, consts, y))
        elif node.op_type in MOVES:
            e = _moved(node, opset, es, ins)
        else:
            raise Unbounded(f"no bf16 error bound for {node.op_type}")
        e = np.broadcast_to(np.asarray(e, np.float64), np.shape(y))
        with np.errstate(all="ignore"):
            e = np.where(_finite_abs(y) + e >= BIG, np.inf, e)
        err[node.output[0]] = e
    return {o.name: err[o.name] for o in model.graph.output}


def compare(got, exp, e) -> str | None:
    """None if ``got`` is within ``e`` of ``exp`` (the same NaN / infinity
    where ``exp`` is not finite; ``e`` inf: not compared), else a reason."""
    got, exp = np.asarray(got), np.asarray(exp)
    if got.shape != exp.shape or got.dtype != exp.dtype:
        return f"{got.dtype}{list(got.shape)} != expected {exp.dtype}{list(exp.shape)}"
    g, x = got.astype(np.float64), exp.astype(np.float64)
    with np.errstate(all="ignore"):
        close = np.abs(g - x) <= e
    same = (np.isnan(x) & np.isnan(g)) | (np.isinf(x) & (g == x))
    ok = np.where(np.isfinite(x), close, same) | np.isinf(e)
    if ok.all():
        return None
    bad = ~ok
    i = tuple(int(k) for k in np.argwhere(bad)[0])
    return f"{int(bad.sum())} of {bad.size} beyond the bf16 bound, first at {i}: " \
           f"got {got[i]}, expected {exp[i]} (bound {e[i]:.3g})"


def reference_bounds(model: onnx.ModelProto, feeds: dict, engine: str) -> dict:
    """:func:`bounds` over ``engine``'s intermediate values on ``feeds``."""
    from onnx_mlir_py.testing.fuzz.oracle import _ort_session, reference_outputs
    from onnx_mlir_py.verify.values import expose_values
    exposed, names = expose_values(model)
    if engine == "onnxruntime":
        outs = _ort_session(exposed).run(None, feeds)
    else:
        outs = reference_outputs(exposed, feeds)
    return bounds(model, feeds, {n: np.asarray(v) for n, v in zip(names, outs)})
