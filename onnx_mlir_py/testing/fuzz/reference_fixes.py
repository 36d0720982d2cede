"""Replacements for onnx.reference (onnx 1.23), the fuzz oracle's second
opinion (and its reference where onnxruntime has no kernel), around its
known bugs: kernels (``fixed_ops``) and a model rewrite (``for_reference``)."""
from __future__ import annotations

import numpy as np
import onnx


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


def _spec_pad(data, pads, axes, mode: str, value) -> np.ndarray:
    """Pad with negative pads as onnxruntime does (onnx.reference raised on
    them, numpy.pad: s2000-198 had no second opinion): mode constant pads,
    then crops (a negative pad may remove padding: size 0 with pads 1, -1
    stays 0); the other modes crop the input first (that matters for wrap),
    and a crop past the input is an error there."""
    r = data.ndim
    axes = list(range(r)) if axes is None else [int(a) + r if a < 0 else int(a) for a in axes]
    pads = [int(p) for p in pads]
    n = len(axes)
    lo, hi = [0] * r, [0] * r
    for i, a in enumerate(axes):
        lo[a], hi[a] = pads[i], pads[n + i]
    width = [(max(0, b), max(0, e)) for b, e in zip(lo, hi)]
    if mode == "constant":
        x = np.pad(data, width, constant_values=value)
        crop = [slice(max(0, -b), x.shape[k] - min(x.shape[k], max(0, -e)))
                for k, (b, e) in enumerate(zip(lo, hi))]
        return np.ascontiguousarray(x[tuple(crop)]).astype(data.dtype)
    if any(max(0, -b) + max(0, -e) > d for b, e, d in zip(lo, hi, data.shape)):
        raise ValueError("Pad: negative pads remove more than the input")
    crop = [slice(max(0, -b), d - max(0, -e)) for b, e, d in zip(lo, hi, data.shape)]
    return np.pad(data[tuple(crop)], width, mode=mode).astype(data.dtype)


def fixed_ops() -> list:
    """Replacements for onnx.reference (onnx 1.23) kernels: GlobalMaxPool
    reduces the last two axes whatever the rank ([3,2,3] gives (3,1), not
    (3,2,1)); ArgMax/ArgMin follow numpy on NaN (the first NaN wins), the
    compiler and the primary oracle onnxruntime do not (``_ort_arg``); PRelu
    gives slope * x at x = 0 (NaN for an infinite slope; the spec: x >= 0 -> x);
    Slice with a negative step and a start below -dim gives nothing (numpy
    clamps it to -1; the spec clamps it to 0, ``_spec_slice``); Pad with a
    negative pad fails (numpy.pad; ``_spec_pad``); Mean does not broadcast its
    first input (``+=``: [3] and [5, 5, 3] raised, s2000-615); Softmax,
    LogSoftmax, Hardmax skip the 2-D coercion before opset 13 and LogSoftmax
    underflows in f16 (``_softmax``); Softsign of a 0-d input raises (s2000-143);
    an integer ReduceMean over no element
    is -2**63 (``_reduce_mean``); a dilated Conv multiplies the input under
    its kernel's holes by 0 (NaN for a NaN or inf there: ``reference_conv``); Loop stacks
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

    class Softsign(OpRun):   # onnx.reference's np.divide(out=) raised on a 0-d input
        op_domain = ""

        def _run(self, x):
            return (np.asarray(x / (1 + np.abs(x))).astype(x.dtype),)

    class Mean(OpRun):
        op_domain = ""

        def _run(self, *args):
            total = args[0]
            for a in args[1:]:
                total = total + a       # broadcasts (onnx.reference's += did not)
            return ((total / len(args)).astype(args[0].dtype),)

    class Softmax(OpRun):
        op_domain = ""

        def _run(self, x, **_):
            return (_softmax(self, x),)

    class LogSoftmax(Softmax):
        pass

    class Hardmax(Softmax):
        pass

    class ReduceMean(OpRun):
        op_domain = ""

        def _run(self, data, axes=None, keepdims=1, noop_with_empty_axes=0):
            return (_reduce_mean(data, axes, keepdims, noop_with_empty_axes),)

    class Pad(OpRun):
        op_domain = ""

        def _run(self, data, pads=None, constant_value=None, axes=None, mode="constant",
                 value=None, paddings=None):
            pads = paddings if pads is None else pads
            c = value if constant_value is None else constant_value
            return (_spec_pad(data, pads, axes, mode or "constant", 0 if c is None else c),)

    class Conv(OpRun):
        op_domain = ""

        def _run(self, x, w, b=None, auto_pad=None, dilations=None, group=None,
                 kernel_shape=None, pads=None, strides=None):
            from onnx_mlir_py.testing.fuzz.reference_conv import conv
            return (conv(x, w, b, auto_pad, dilations, group or 1, kernel_shape, pads, strides),)
    return [GlobalMaxPool, Conv, ArgMax, ArgMin, PRelu, Slice, Loop, Pad, Mean, Softmax, LogSoftmax,
            Hardmax, ReduceMean, Softsign, *_int_log_reductions(), *_nan_pools(), *_old_qdq()]


def _old_qdq() -> list:
    """QuantizeLinear / DequantizeLinear before opset 19, which onnx.reference
    (1.23) has no kernel for ('found 19, 21, 23, 25'), so a model with them had
    no second opinion (s3700-5: onnxruntime's MaxPool skipping a NaN counted as
    a mismatch): onnx.reference's opset-19 kernel, whose meaning for the older
    versions' types (8-bit and int32, per tensor or per axis) is the same. Its
    QuantizeLinear converts rint(+-inf) to int32 (INT_MIN), so +inf gave the
    lowest value, not the highest (onnxruntime, the compiler), and NaN
    (INT_MIN too) plus a negative zero point wrapped around to the highest
    (s2812-1): an input to an 8- or 16-bit quantization is first clipped to
    twice the type's range, NaN to its low end (the lowest value, as in
    onnxruntime)."""
    from onnx.reference.op_run import OpRun
    from onnx.reference.ops import load_op

    def run(self, *ins, **_):
        version = max(19, self.run_params["opsets"][""])
        own = load_op("", self.onnx_node.op_type, version)
        ins = list(ins)
        out = ins[2].dtype if len(ins) > 2 and ins[2] is not None else np.dtype(np.uint8)
        if self.onnx_node.op_type == "QuantizeLinear" and ins[0].dtype.kind == "f" and \
                out.kind in "iu" and out.itemsize <= 2:
            with np.errstate(all="ignore"):
                lim = float(np.min(np.abs(ins[1]))) * 2.0 * 2 ** (8 * out.itemsize)
            if np.isfinite(lim) and lim > 0:
                x = np.where(np.isnan(ins[0]), -lim, ins[0])
                ins[0] = np.clip(x, -lim, lim).astype(ins[0].dtype)
        return own(self.onnx_node, self.run_params).run(*ins)
    return [type(op, (OpRun,), {"op_domain": "", "_run": run})
            for op in ("QuantizeLinear", "DequantizeLinear")]


def _int_log_reductions() -> list:
    """Integer ReduceLogSum / ReduceLogSumExp, which onnx.reference (1.23)
    refuses (opset 28 dropped the integer types): the opset-18 function body,
    log(sum) and log(sum(exp)) in double (max-shifted), truncated toward zero
    and saturated, NaN and -inf the type's lowest value. onnxruntime agrees
    except for int32/int64 LogSumExp, which truncates each exp(x - max) term.
    Float inputs go to onnx.reference's own kernel."""
    from onnx.reference.op_run import OpRun
    from onnx.reference.ops import load_op

    def run(self, data, axes=None, **_):
        if data.dtype.kind not in "iu":
            own = load_op("", self.onnx_node.op_type, self.run_params["opsets"][""])
            ins = [data, axes] if len(self.onnx_node.input) > 1 else [data]
            return own(self.onnx_node, self.run_params).run(*ins)
        at = {a.name: onnx.helper.get_attribute_value(a) for a in self.onnx_node.attribute}
        axes = None if axes is None else [int(a) for a in np.asarray(axes).ravel()]
        d = data.astype(np.float64)
        exp = self.onnx_node.op_type == "ReduceLogSumExp"
        with np.errstate(all="ignore"):
            if not axes and at.get("noop_with_empty_axes", 0):
                y = d if exp else np.log(d)
            else:
                ax = tuple(a % data.ndim for a in axes) if axes else None
                m = d.max(axis=ax, keepdims=True, initial=-np.inf) if exp else 0.0
                m = np.where(np.isfinite(m), m, 0.0)
                s = np.sum(np.exp(d - m) if exp else d, axis=ax, keepdims=True)
                y = np.log(s) + m
                if not at.get("keepdims", 1):
                    y = np.squeeze(y, axis=ax)
            info = np.iinfo(data.dtype)
            small, big = ~(y >= float(info.min)), y >= float(info.max) + 1   # NaN: small
            y = np.where(small | big, 0, np.trunc(y)).astype(data.dtype)
            return (np.where(big, info.max, np.where(small, info.min, y)).astype(data.dtype),)
    return [type(op, (OpRun,), {"op_domain": "", "_run": run})
            for op in ("ReduceLogSum", "ReduceLogSumExp")]


def _reduce_mean(data: np.ndarray, axes, keepdims, noop_with_empty_axes) -> np.ndarray:
    """ReduceMean (every version: ``axes`` an attribute or an input). An
    integer mean over no element is 0, as in onnxruntime (numpy's NaN cast to
    int64 gave -2**63: s2000-1876); floats keep numpy's NaN."""
    axes = None if axes is None else [int(a) for a in np.asarray(axes).reshape(-1)]
    if not axes:
        if noop_with_empty_axes:
            return data
        axes = list(range(data.ndim))
    axes = tuple(a + data.ndim if a < 0 else a for a in axes)
    keep = bool(keepdims)
    if data.dtype.kind in "iub" and any(data.shape[a] == 0 for a in axes):
        shape = [1 if k in axes else d for k, d in enumerate(data.shape)] if keep else \
            [d for k, d in enumerate(data.shape) if k not in axes]
        return np.zeros(shape, data.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(np.mean(data, axis=axes, keepdims=keep, dtype=data.dtype))


def _softmax(op, x: np.ndarray) -> np.ndarray:
    """Softmax, LogSoftmax, Hardmax as the spec says: before opset 13 over the
    input coerced to 2-D at ``axis`` (default 1), then over ``axis`` alone
    (default -1); f16 computed in f32 and rounded once (onnx.reference took
    the log of an f16 softmax: LogSoftmax of [0, 17.84] gave -inf for
    -17.84, s2000-1290; it ignored the 2-D coercion)."""
    opset, node = op.run_params["opsets"][""], op.onnx_node
    axis = next((a.i for a in node.attribute if a.name == "axis"), 1 if opset < 13 else -1)
    axis = axis + x.ndim if axis < 0 else axis
    if x.size == 0:
        return x.copy()
    w = x.reshape(int(np.prod(x.shape[:axis])), -1) if opset < 13 else x
    ax = 1 if opset < 13 else axis
    if node.op_type == "Hardmax":
        y = np.zeros(w.shape, x.dtype)
        np.put_along_axis(y, np.expand_dims(np.argmax(w, axis=ax), ax), 1, axis=ax)
        return y.reshape(x.shape)
    w = w.astype(np.float32) if w.dtype == np.float16 else w
    with np.errstate(all="ignore"):
        t = w - w.max(axis=ax, keepdims=True)
        s = np.exp(t).sum(axis=ax, keepdims=True)
        y = np.exp(t) / s if node.op_type == "Softmax" else t - np.log(s)
    return y.astype(x.dtype).reshape(x.shape)


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


def one_node(node: onnx.NodeProto, opset: int, inputs: list, engine: str) -> list:
    """``node`` alone on ``inputs`` (one array each), in onnxruntime or onnx.reference."""
    from onnx import helper as h
    n = onnx.NodeProto()
    n.CopyFrom(node)
    del n.input[:]
    del n.output[:]
    n.input.extend(f"i{k}" for k in range(len(inputs)))
    n.output.extend(f"o{k}" for k in range(len(node.output)))
    ins = [h.make_tensor_value_info(f"i{k}", h.np_dtype_to_tensor_dtype(a.dtype), a.shape)
           for k, a in enumerate(inputs)]
    m = h.make_model(h.make_graph([n], "node", ins, []),
                     opset_imports=[h.make_opsetid("", opset)])
    m = onnx.shape_inference.infer_shapes(m)
    types = {vi.name: vi for vi in m.graph.value_info}
    m.graph.output.extend(types.get(o, h.make_tensor_value_info(o, 0, None)) for o in n.output)
    feeds = {f"i{k}": a for k, a in enumerate(inputs)}
    if engine == "onnxruntime":
        from onnx_mlir_py.testing.fuzz.oracle import _ort_session
        return list(_ort_session(m).run(None, feeds))
    from onnx.reference import ReferenceEvaluator
    return [np.asarray(y) for y in ReferenceEvaluator(m).run(None, feeds)]


def _nan_pools() -> list:
    """MaxPool, AveragePool and LpPool with a NaN anywhere in a window giving
    NaN (oracle.py NAN_SEMANTICS), computed by onnxruntime (by onnx.reference
    where onnxruntime has no kernel) on ``x`` with NaN as the pool's neutral
    value (-inf for MaxPool, 0 otherwise) and on the NaN mask. onnx.reference
    (onnx 1.23) skips NaN (AveragePool averages the rest: s2000-879; MaxPool on
    its unit-stride path), pads with NaN internally, and gets ceil_mode
    (s2000-314) and auto_pad SAME_LOWER with stride > 1 (s2000-647) windows wrong.
    onnxruntime's MaxPool of a window of -inf is the lowest finite value; here
    it is -inf, the maximum (s2000-869)."""
    from onnx.reference.op_run import OpRun

    def run(self, x, **_):
        opset = self.run_params["opsets"][""]
        nan = np.isnan(x) if x.dtype.kind == "f" else np.zeros(x.shape, bool)
        neutral = -np.inf if self.onnx_node.op_type == "MaxPool" else 0
        clean = np.where(nan, neutral, x).astype(x.dtype)
        for engine in ("onnxruntime", "reference"):
            try:
                res = one_node(self.onnx_node, opset, [clean], engine)
                hit = one_node(self.onnx_node, opset, [nan.astype(x.dtype)], engine)[0] \
                    if nan.any() else None
                break
            except Exception:  # noqa: BLE001 - no kernel for this type: the next engine
                if engine == "reference":
                    raise
                if _reference_wrong_pool(self.onnx_node):
                    raise RuntimeError(f"onnx.reference is wrong for this {self.onnx_node.op_type}"
                                       f" and onnxruntime has no {x.dtype} kernel") from None
        if hit is not None:
            res[0] = np.where(hit > 0, np.nan, res[0]).astype(x.dtype)
        if neutral == -np.inf and x.dtype.kind == "f" and np.isneginf(x).any():
            # onnxruntime's MaxPool starts from the lowest finite value: a window
            # of -inf gives -3.4e38, the spec's max -inf (s2000-869)
            live = one_node(self.onnx_node, opset, [(~np.isneginf(x)).astype(x.dtype)],
                            engine)[0]
            res[0] = np.where(live > 0, res[0], -np.inf).astype(x.dtype)
        return tuple(res)
    return [type(op, (OpRun,), {"op_domain": "", "_run": run})
            for op in ("MaxPool", "AveragePool", "LpPool")]


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


def _reference_wrong_pool(n: onnx.NodeProto) -> bool:
    """onnx.reference (onnx 1.23) miscomputes these pools' windows: MaxPool
    [1,1,5] k3 pads 1,1 ceil_mode gives 4 columns (onnxruntime and the
    formula: 5); SAME_LOWER [4,1,5,2] k3 strides 3,2 gives 1 row (2)."""
    return any((a.name == "ceil_mode" and a.i) or (a.name == "auto_pad" and a.s.startswith(b"SAME"))
               for a in n.attribute)

