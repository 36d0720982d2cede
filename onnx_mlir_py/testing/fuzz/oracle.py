"""The reference side: onnxruntime (``onnx.reference`` for graphs with an op
or type onnxruntime has no kernel for), and the comparison.

Tolerance policy (``tolerance``), per graph output:

* integer and bool outputs: exact.
* float outputs: ``|got - exp| <= atol + rtol * |exp|`` elementwise, with
  ``rtol = R[t] * (1 + n / 4)`` and ``atol = A[t] * scale * (1 + n / 4)``,
  where ``t`` is the least precise float type on the output's ancestry
  (R/A: f64 1e-9/1e-10, f32 1e-3/1e-4, f16 2e-2/1e-2), ``n`` the number of
  rounding ops there (everything but pure data movement), and ``scale``
  the largest finite ``|exp|`` of the output (at least 1): accumulations
  (MatMul, Conv, reductions) round relative to their largest terms, not
  to each result.
* non-finite values: where ``exp`` is NaN, ``got`` must be NaN; where
  either is +-inf, both must be the same infinity (the type's +-max counts as
  +-inf: onnxruntime's MaxPool pads with lowest(), not -inf). On *edge* runs (inputs
  with inf/NaN/huge values) an output whose ancestry accumulates (sums
  over an axis) may differ in *which* non-finite value or overflow it
  reaches (summation order decides inf - inf vs overflow): positions where
  either side is non-finite or beyond 1e-3 of the type's max are skipped.
* shapes and element types: exact.

NAN_SEMANTICS. The ONNX spec does not say what MaxPool, GlobalMaxPool,
ReduceMax/ReduceMin do with a NaN in a window (onnx 1.23's operator docs
never mention NaN). onnxruntime's answer depends on the NaN's position and
on the kernel it picks (1.32, x86: 2-D MaxPool and GlobalMaxPool return NaN
only when the NaN comes last in the window (SSE maxps), 1-D MaxPool skips
it, ReduceMax only keeps it in first place), so no single semantic matches
it. The compiler propagates NaN (IEEE 754-2019 ``maximum``, arith.maximumf,
at -O0 and -O3), as numpy's max, torch's max_pool and onnx.reference's
ReduceMax do. A mismatch there goes to the second opinion (onnx.reference
with ``reference_fixes``, whose pools propagate NaN too) and
counts as ``ort-deviation`` when that agrees. ArgMax/ArgMin follow
onnxruntime's scan instead (``_ort_arg``): it is position-dependent but
consistent across its kernels.
"""
from __future__ import annotations

import numpy as np
import onnx

from onnx_mlir_py.testing.fuzz.reference_fixes import fixed_ops, for_reference

EXACT_OPS = {"Identity", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat",
             "Split", "Slice", "Gather", "Expand", "Tile", "Pad", "Shape", "ConstantOfShape",
             "Where", "Cast", "CastLike", "Neg", "Abs", "Relu", "Max", "Min", "Clip", "If",
             "Loop", "IsNaN", "IsInf", "Not", "Equal", "Less", "Greater", "LessOrEqual",
             "GreaterOrEqual", "And", "Or", "Xor", "Sign", "Floor", "Ceil", "Round",
             "MaxPool", "GlobalMaxPool", "ReduceMax", "ReduceMin", "ArgMax", "ArgMin",
             "Hardmax"}
ACCUMULATING = {"MatMul", "Gemm", "Conv", "ReduceSum", "ReduceMean", "ReduceProd", "ReduceL1",
                "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp", "ReduceLogSum", "Softmax",
                "LogSoftmax", "LayerNormalization", "AveragePool", "GlobalAveragePool",
                "LpPool", "CumSum", "Sum", "Mean", "Loop"}
_R = {np.float64: 1e-9, np.float32: 1e-3, np.float16: 2e-2}
_A = {np.float64: 1e-10, np.float32: 1e-4, np.float16: 1e-2}
_PREC = [np.float16, np.float32, np.float64]


class ReferenceUnavailable(Exception):
    """Neither onnxruntime nor onnx.reference accepts the model."""


def _ort_session(model: onnx.ModelProto):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.log_severity_level = 4
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(model.SerializeToString(), so,
                                providers=["CPUExecutionProvider"])


def reference_runner(model: onnx.ModelProto):
    """(engine name, ``run(feeds) -> outputs``): onnxruntime, or onnx.reference
    when onnxruntime lacks a kernel. Other load failures raise
    ReferenceUnavailable (the graph is not valid for onnxruntime)."""
    try:
        sess = _ort_session(model)
        return "onnxruntime", lambda feeds: sess.run(None, feeds)
    except Exception as e:  # noqa: BLE001 - onnxruntime's own exception types
        if "NOT_IMPLEMENTED" not in str(e):
            raise ReferenceUnavailable(f"onnxruntime: {str(e).splitlines()[0][:300]}") from None
    try:
        ev = reference_evaluator(model)
    except Exception as e:  # noqa: BLE001
        raise ReferenceUnavailable(f"onnx.reference: {e}") from None
    return "onnx.reference", lambda feeds: [np.asarray(x) for x in ev.run(None, feeds)]


def reference_outputs(model: onnx.ModelProto, feeds: dict) -> list:
    """onnx.reference's outputs (the second opinion on an onnxruntime mismatch)."""
    return [np.asarray(x) for x in reference_evaluator(model).run(None, feeds)]


def reference_evaluator(model: onnx.ModelProto):
    """onnx.reference's evaluator for ``model``, around its known bugs
    (``reference_fixes``)."""
    from onnx.reference import ReferenceEvaluator
    return ReferenceEvaluator(for_reference(model), new_ops=fixed_ops())


def unstable_positions(model: onnx.ModelProto, feeds: dict, engine: str) -> dict:
    """Graph output -> the positions that depend on an ill-conditioned sum on
    this run, by ``engine``'s intermediate values (``conditioning``)."""
    from onnx_mlir_py.testing.fuzz.conditioning import unstable
    from onnx_mlir_py.testing.fuzz.reference_fixes import one_node
    from onnx_mlir_py.verify.values import expose_values
    exposed, names = expose_values(model)
    if engine == "onnxruntime":
        outs = _ort_session(exposed).run(None, feeds)
    else:
        outs = reference_outputs(exposed, feeds)
    values = {n: np.asarray(v) for n, v in zip(names, outs)}

    def run_node(node, opset, inputs):
        try:
            return one_node(node, opset, inputs, "onnxruntime")
        except Exception:  # noqa: BLE001 - no onnxruntime kernel: onnx.reference
            return one_node(node, opset, inputs, "reference")
    return unstable(model, feeds, values, run_node, _R)


def ancestry(model: onnx.ModelProto) -> dict[str, list[onnx.NodeProto]]:
    """Graph output -> the nodes it depends on."""
    producer = {o: n for n in model.graph.node for o in n.output}
    out = {}
    for vo in model.graph.output:
        seen, stack, nodes = set(), [vo.name], []
        while stack:
            n = producer.get(stack.pop())
            if n is None or id(n) in seen:
                continue
            seen.add(id(n))
            nodes.append(n)
            stack.extend(n.input)
            for a in n.attribute:           # outer values used by If/Loop bodies
                if a.type == onnx.AttributeProto.GRAPH:
                    stack.extend(i for bn in a.g.node for i in bn.input)
        out[vo.name] = nodes
    return out


def float_types(model: onnx.ModelProto) -> dict[str, set]:
    """Graph output -> the float numpy types of values on its ancestry."""
    inferred = onnx.shape_inference.infer_shapes(model)
    types = {}
    for vi in list(inferred.graph.value_info) + list(inferred.graph.input) + \
            list(inferred.graph.output):
        types[vi.name] = vi.type.tensor_type.elem_type
    for t in inferred.graph.initializer:
        types[t.name] = t.data_type
    anc = ancestry(model)
    out = {}
    for name, nodes in anc.items():
        names = {name} | {i for n in nodes for i in list(n.input) + list(n.output)}
        fl = set()
        for nm in names:
            t = types.get(nm)
            if t in (onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16):
                fl.add(onnx.helper.tensor_dtype_to_np_dtype(t).type)
        out[name] = fl
    return out


def _reference_erf(n: onnx.NodeProto) -> bool:
    return n.op_type == "Erf" or (n.op_type == "Gelu" and not any(
        a.name == "approximate" and a.s == b"tanh" for a in n.attribute))


def tolerance(model: onnx.ModelProto, engine: str = "onnxruntime") -> dict[str, dict]:
    """Graph output -> {rtol, atol, accumulates} (see the module docstring).
    onnx.reference (onnx 1.23) computes Erf in float32 whatever the input
    type, so with it an output after an Erf (or erf Gelu) is float32-precise."""
    anc, fts = ancestry(model), float_types(model)
    tol = {}
    for name, nodes in anc.items():
        n = sum(nd.op_type not in EXACT_OPS for nd in nodes)
        prec = min(fts[name], key=_PREC.index) if fts[name] else np.float32
        if engine == "onnx.reference" and prec == np.float64 and \
                any(_reference_erf(nd) for nd in nodes):
            prec = np.float32
        f = 1 + n / 4
        tol[name] = {"rtol": _R[prec] * f, "atol": _A[prec] * f,
                     "accumulates": any(nd.op_type in ACCUMULATING for nd in nodes)}
    return tol


def _verdict(got: np.ndarray, exp: np.ndarray, tol: dict, edge: bool, skip):
    """(why the shapes or types differ, or None; positions that match; atol's scale)."""
    if got.shape != exp.shape:
        return f"shape {got.shape} != expected {exp.shape}", None, 1.0
    if got.dtype != exp.dtype:
        return f"dtype {got.dtype} != expected {exp.dtype}", None, 1.0
    if skip is None or skip.shape != exp.shape:
        skip = np.zeros(exp.shape, bool)
    if exp.dtype.kind != "f":
        return None, skip | (got == exp), 1.0
    g, e = got.astype(np.float64), exp.astype(np.float64)
    # +-max of the type stands for +-inf (onnxruntime's pooling pads with lowest())
    top = float(np.finfo(exp.dtype).max)
    e = np.where(np.abs(e) == top, np.copysign(np.inf, e), e)
    g = np.where(np.abs(g) == top, np.copysign(np.inf, g), g)
    if edge and tol["accumulates"]:
        big = top * 1e-3
        skip = skip | ~np.isfinite(e) | ~np.isfinite(g) | (np.abs(e) > big) | (np.abs(g) > big)
    fin = np.isfinite(e)
    scale = max(1.0, float(np.abs(e[fin]).max())) if fin.any() else 1.0
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.abs(g - e) <= tol["atol"] * scale + tol["rtol"] * np.abs(e)
    same_nonfinite = (np.isnan(e) & np.isnan(g)) | (np.isinf(e) & (g == e))
    return None, skip | np.where(fin & np.isfinite(g), close, same_nonfinite), scale


def compare(got, exp, tol: dict, edge: bool, skip=None, second=None) -> str | None:
    """None if ``got`` matches ``exp`` under ``tol``; else a one-line reason.
    ``skip``: positions not compared (``unstable_positions``), or None.
    ``second``: the second opinion; a position matching either answer matches
    (s2000-482: Ceil(Tanh(x)) at two rounding edges, -8.96 -> tanh -0.99999997
    rounds to -0.99999994 (ours, numpy; onnxruntime -1), -9.62 -> -0.99999999
    rounds to -1 (ours, onnxruntime; numpy -0.99999994))."""
    got, exp = np.asarray(got), np.asarray(exp)
    why, ok, scale = _verdict(got, exp, tol, edge, skip)
    if why:
        return why
    if second is not None and not ok.all():
        why2, ok2, _ = _verdict(got, np.asarray(second), tol, edge, skip)
        if why2 is None:
            ok = ok | ok2
    if ok.all():
        return None
    bad = ~ok
    i = tuple(int(k) for k in np.argwhere(bad)[0])
    if exp.dtype.kind != "f":
        return f"{int(bad.sum())} of {bad.size} differ, first at {i}: " \
               f"got {got[i]}, expected {exp[i]}"
    return f"{int(bad.sum())} of {bad.size} differ, first at {i}: got {got[i]}, " \
           f"expected {exp[i]} (rtol {tol['rtol']:.2g}, atol {tol['atol'] * scale:.2g})"
