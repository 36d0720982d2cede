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
with ``_fixed_ops``, whose MaxPool and GlobalMaxPool propagate NaN too) and
counts as ``ort-deviation`` when that agrees. ArgMax/ArgMin follow
onnxruntime's scan instead (``_ort_arg``): it is position-dependent but
consistent across its kernels.
"""
from __future__ import annotations

import numpy as np
import onnx

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
    for n in model.graph.node:
        if n.op_type in _REFERENCE_WRONG and _REFERENCE_WRONG[n.op_type](n):
            raise ReferenceUnavailable(f"onnx.reference is wrong for {n.op_type} here")
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
    (``for_reference``, ``_fixed_ops``)."""
    from onnx.reference import ReferenceEvaluator
    return ReferenceEvaluator(for_reference(model), new_ops=_fixed_ops())


def _ort_arg(x: np.ndarray, axis: int, keepdims, last, largest: bool) -> np.ndarray:
    """onnxruntime's ArgMax/ArgMin (numpy's differ on NaN): a scan from the
    first element that moves on only to a better one (or an equal one with
    select_last_index), so a NaN wins only in first place."""
    y = np.moveaxis(x, axis, -1)
    best, idx = y[..., 0], np.zeros(y.shape[:-1], np.int64)
    with np.errstate(invalid="ignore"):
        for i in range(1, y.shape[-1]):
            v = y[..., i]
            take = (v > best if largest else v < best) | ((v == best) if last else False)
            best, idx = np.where(take, v, best), np.where(take, i, idx)
    return np.expand_dims(idx, axis) if keepdims else idx


def _spec_slice(data, starts, ends, axes, steps) -> np.ndarray:
    """Slice as the spec clamps: start to [0, d] (step > 0) or [0, d - 1]
    (step < 0), end to [0, d] or [-1, d - 1] (-1: through index 0)."""
    r = data.ndim
    axes = range(len(starts)) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    sl = [slice(None)] * r
    for s, e, a, st in zip(starts, ends, axes, steps):
        a = int(a) + r if a < 0 else int(a)
        d = data.shape[a]
        s, e, st = int(s), int(e), int(st)
        s, e = s + d if s < 0 else s, e + d if e < 0 else e
        if st > 0:
            s, e = min(max(s, 0), d), min(max(e, 0), d)
        else:
            s, e = min(max(s, 0), d - 1), min(max(e, -1), d - 1)
        sl[a] = slice(s, e if e >= 0 else None, st)
    return data[tuple(sl)]


def _fixed_ops() -> list:
    """Replacements for onnx.reference (onnx 1.23) kernels: GlobalMaxPool
    reduces the last two axes whatever the rank ([3,2,3] gives (3,1), not
    (3,2,1)); ArgMax/ArgMin follow numpy on NaN (the first NaN wins), the
    compiler and the primary oracle onnxruntime do not (``_ort_arg``); PRelu
    gives slope * x at x = 0 (NaN for an infinite slope; the spec: x >= 0 -> x);
    Slice with a negative step and a start below -dim gives nothing (numpy
    clamps it to -1; the spec clamps it to 0, ``_spec_slice``); Loop stacks
    its scan outputs with ``np.vstack`` (per-iteration [1, 2] values give
    (T, 2), not (T, 1, 2)) and fails on zero iterations (``_loop``)."""
    from onnx.reference.op_run import OpRun
    from onnx.reference.ops.op_loop import Loop as _Loop

    class Loop(_Loop):
        op_domain = ""

        def _run(self, M, cond, *args, context=None, body=None, attributes=None,
                 bindings=None):
            return _loop(self, M, cond, args, context, attributes, bindings)

    class GlobalMaxPool(OpRun):
        op_domain = ""

        def _run(self, x):
            return (x.max(axis=tuple(range(2, x.ndim)), keepdims=True),)

    class ArgMax(OpRun):
        op_domain = ""

        def _run(self, x, axis=0, keepdims=1, select_last_index=0):
            return (_ort_arg(x, axis, keepdims, select_last_index, True),)

    class ArgMin(OpRun):
        op_domain = ""

        def _run(self, x, axis=0, keepdims=1, select_last_index=0):
            return (_ort_arg(x, axis, keepdims, select_last_index, False),)
    class PRelu(OpRun):
        op_domain = ""

        def _run(self, x, slope):
            with np.errstate(invalid="ignore", over="ignore"):
                return (np.where(x < 0, x * slope, x).astype(x.dtype),)
    class Slice(OpRun):
        op_domain = ""

        def _run(self, data, starts=None, ends=None, axes=None, steps=None):
            return (_spec_slice(data, starts, ends, axes, steps),)
    return [GlobalMaxPool, ArgMax, ArgMin, PRelu, Slice, Loop, _nan_max_pool()]


def _loop(op, trips, cond, initial, context, attributes, bindings) -> tuple:
    """Loop as the spec says: carried values flow from one iteration to the
    next; scan outputs are the per-iteration values stacked on a new axis 0
    (zero iterations: an empty axis 0 before the body's declared scan shape,
    which must then be static)."""
    body = op.body
    names_in, names_out = body.input_names, body.output_names
    n_carried = len(names_in) - 2
    env = dict(context or {})
    env.update(zip(names_in[2:], initial))
    carried = list(initial)
    scans: list[list] = [[] for _ in range(op.K)]
    it = 0
    go = True if cond is None else bool(np.asarray(cond))
    while go and (trips is None or it < int(np.asarray(trips))):
        env[names_in[0]] = np.array(it, dtype=np.int64)
        env[names_in[1]] = np.array(go)
        env.update(zip(names_in[2:], carried))
        outs = op._run_body(env, attributes=attributes, bindings=bindings)
        go = bool(np.asarray(outs[0]))
        carried = list(outs[1:1 + n_carried])
        for k in range(op.K):
            scans[k].append(np.asarray(outs[1 + n_carried + k]))
        it += 1
    res = list(carried)
    for k, vals in enumerate(scans):
        if vals:
            res.append(np.stack(vals))
            continue
        vi = op.onnx_node.attribute[[a.name for a in op.onnx_node.attribute].index("body")]
        t = vi.g.output[1 + n_carried + k].type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
        if not t.HasField("shape") or None in dims:
            raise RuntimeError("zero-iteration Loop scan output of unknown shape")
        res.append(np.empty([0] + dims, dtype=onnx.helper.tensor_dtype_to_np_dtype(t.elem_type)))
    return tuple(res)


def _nan_max_pool():
    """MaxPool with a NaN anywhere in a window giving NaN (NAN_SEMANTICS).
    onnx.reference's own kernel (onnx 1.23) skips a NaN on its unit-stride,
    undilated path and propagates it on the other: it runs here twice, on
    ``x`` with NaN as -inf (the max of the rest) and on the NaN mask."""
    from onnx.reference.ops.op_max_pool import MaxPool as RefMaxPool

    class MaxPool(RefMaxPool):
        op_domain = ""

        def _run(self, x, auto_pad=None, ceil_mode=None, dilations=None, kernel_shape=None,
                 pads=None, storage_order=None, strides=None):
            kw = dict(auto_pad=auto_pad, ceil_mode=ceil_mode, dilations=dilations,
                      kernel_shape=kernel_shape, pads=pads, storage_order=storage_order,
                      strides=strides)
            if x.dtype.kind != "f" or not np.isnan(x).any():
                return super()._run(x, **kw)
            nan = np.isnan(x)
            res = list(super()._run(np.where(nan, -np.inf, x).astype(x.dtype), **kw))
            hit = super()._run(nan.astype(x.dtype), **kw)[0]
            res[0] = np.where(hit > 0, np.nan, res[0]).astype(x.dtype)
            return tuple(res)
    return MaxPool


def for_reference(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` rewritten (same meaning) around onnx.reference (onnx 1.23) bugs:
    a Loop without a ``cond`` input (it means true) runs zero iterations there,
    so it gets a constant true."""
    m = onnx.ModelProto()
    m.CopyFrom(model)

    def fix(g: onnx.GraphProto) -> bool:
        need = False
        for n in g.node:
            if n.op_type == "Loop" and len(n.input) > 1 and n.input[1] == "":
                n.input[1] = _TRUE
                need = True
            for a in n.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    need = fix(a.g) or need
        return need
    if fix(m.graph):  # one constant in the main graph, seen by every body
        m.graph.node.insert(0, onnx.helper.make_node(
            "Constant", [], [_TRUE], value=onnx.helper.make_tensor(
                _TRUE, onnx.TensorProto.BOOL, [], [True])))
    return m


_TRUE = "__reference_loop_true"


def _ceil_mode(n) -> bool:
    return any(a.name == "ceil_mode" and a.i for a in n.attribute)


# onnx.reference (onnx 1.23) miscomputes these: MaxPool [1,1,5] k3 pads 1,1 ceil_mode
# gives 4 columns (onnxruntime and the formula: 5)
_REFERENCE_WRONG = {"MaxPool": _ceil_mode, "AveragePool": _ceil_mode, "LpPool": _ceil_mode}


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


def compare(got, exp, tol: dict, edge: bool) -> str | None:
    """None if ``got`` matches ``exp`` under ``tol``; else a one-line reason."""
    got, exp = np.asarray(got), np.asarray(exp)
    if got.shape != exp.shape:
        return f"shape {got.shape} != expected {exp.shape}"
    if got.dtype != exp.dtype:
        return f"dtype {got.dtype} != expected {exp.dtype}"
    if exp.dtype.kind != "f":
        bad = got != exp
        if bad.any():
            i = tuple(int(k) for k in np.argwhere(bad)[0])
            return f"{int(bad.sum())} of {bad.size} differ, first at {i}: " \
                   f"got {got[i]}, expected {exp[i]}"
        return None
    g, e = got.astype(np.float64), exp.astype(np.float64)
    # +-max of the type stands for +-inf (onnxruntime's pooling pads with lowest())
    top = float(np.finfo(exp.dtype).max)
    e = np.where(np.abs(e) == top, np.copysign(np.inf, e), e)
    g = np.where(np.abs(g) == top, np.copysign(np.inf, g), g)
    skip = np.zeros(e.shape, bool)
    if edge and tol["accumulates"]:
        big = top * 1e-3
        skip = ~np.isfinite(e) | ~np.isfinite(g) | (np.abs(e) > big) | (np.abs(g) > big)
    fin = np.isfinite(e)
    scale = max(1.0, float(np.abs(e[fin]).max())) if fin.any() else 1.0
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.abs(g - e) <= tol["atol"] * scale + tol["rtol"] * np.abs(e)
    same_nonfinite = (np.isnan(e) & np.isnan(g)) | (np.isinf(e) & (g == e))
    ok = skip | np.where(fin & np.isfinite(g), close, same_nonfinite)
    if ok.all():
        return None
    bad = ~ok
    i = tuple(int(k) for k in np.argwhere(bad)[0])
    return f"{int(bad.sum())} of {bad.size} differ, first at {i}: got {got[i]}, " \
           f"expected {exp[i]} (rtol {tol['rtol']:.2g}, atol {tol['atol'] * scale:.2g})"
