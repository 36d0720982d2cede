"""Elementwise specs: unary, binary and variadic with broadcasting, Where,
Clip, Cast."""
from __future__ import annotations

import numpy as np

from onnx_mlir_py.testing.fuzz.ops import (BOOL, F16, FLOATS, I8, I32, I64, INTS, U8, allowed,
                                           bcast, broadcastable_dims, first, pick_dtype, spec)

# op -> attribute sampler (rng -> dict)
UNARY = {
    "Abs": None, "Neg": None, "Sign": None, "Relu": None, "Identity": None,
    "Exp": None, "Log": None, "Sqrt": None, "Sigmoid": None, "Tanh": None, "Sin": None,
    "Cos": None, "Tan": None, "Atan": None, "Asin": None, "Acos": None, "Sinh": None,
    "Cosh": None, "Asinh": None, "Floor": None, "Ceil": None, "Round": None,
    "Reciprocal": None, "Erf": None, "Softplus": None, "Softsign": None, "HardSwish": None,
    "Mish": None,
    "Elu": lambda r: {"alpha": r.uniform(0.1, 2)},
    "LeakyRelu": lambda r: {"alpha": r.uniform(0.01, 0.5)},
    "Selu": lambda r: {"alpha": r.uniform(1, 2), "gamma": r.uniform(0.5, 1.5)},
    "HardSigmoid": lambda r: {"alpha": r.uniform(0.05, 0.5), "beta": r.uniform(0.2, 0.8)},
    "Celu": lambda r: {"alpha": r.uniform(0.2, 2)},
    "ThresholdedRelu": lambda r: {"alpha": r.uniform(-0.5, 1)},
    "Gelu": lambda r: {"approximate": r.choice(["none", "tanh"])},
}
BINARY = ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mod", "Equal", "Less", "Greater",
          "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "PRelu"]
COMPARE = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}


@spec("unary", weight=6)
def unary(g):
    op = g.rng.choice(sorted(UNARY))
    x = first(g, op)
    attrs = UNARY[op](g.rng) if UNARY[op] else {}
    g.add(op, [x], lambda s: s, x.dtype, **attrs)


@spec("predicate", weight=1)
def predicate(g):
    op = g.rng.choice(["IsNaN", "IsInf", "Not"])
    x = first(g, op)
    attrs = {}
    if op == "IsInf" and g.rng.random() < 0.5:
        attrs = g.rng.choice([{"detect_negative": 0}, {"detect_positive": 0}])
    g.add(op, [x], lambda s: s, BOOL, **attrs)


def _divisor(g, op, x, dims):
    """Integer Div/Mod: a constant divisor without 0 or -1 (both trap on x86
    in onnxruntime for some dividends)."""
    if any(len(set(d)) > 1 for d in dims):
        dims = tuple(g.static_dim(1) if len(set(d)) > 1 else d for d in dims)
    a = g.random_array(x.dtype, tuple(d[0] for d in dims), nonzero=True)
    a[a == -1] = 3
    return g.const(a, x.dtype)


@spec("binary", weight=7)
def binary(g):
    r = g.rng
    op = r.choice(BINARY)
    if op == "Pow":
        types = allowed(op, g.opset) & set(FLOATS)
    else:
        types = allowed(op, g.opset)
    x = first(g, op, dtypes=types)
    attrs = {}
    if op == "Mod":
        attrs["fmod"] = 1 if x.dtype in FLOATS else r.randint(0, 1)
    if op in ("Div", "Mod") and x.dtype not in FLOATS:
        y = _divisor(g, op, x, broadcastable_dims(g, x.dims))
    elif op == "PRelu":
        y = g.operand(x.dtype, broadcastable_dims(g, x.dims))
    else:
        y = g.pick(lambda v: v is not x and v.dtype == x.dtype and _compatible(v, x), p_new=0.5)
        if y is None:
            y = g.operand(x.dtype, broadcastable_dims(g, x.dims))
        if r.random() < 0.5:
            x, y = y, x
    out = BOOL if op in COMPARE else x.dtype
    if op == "PRelu":
        g.add(op, [x, y], lambda a, b: _unidirectional(a, b), out)
    else:
        g.add(op, [x, y], bcast, out, **attrs)


def _unidirectional(a, b):
    if bcast(a, b) != tuple(a):
        raise ValueError("not unidirectional")
    return a


def _compatible(a, b) -> bool:
    """``a`` and ``b`` broadcast together at every binding."""
    nb = max((len(d) for d in a.dims + b.dims), default=1)
    try:
        for k in range(nb):
            bcast(a.shape(k), b.shape(k))
    except ValueError:
        return False
    return True


@spec("variadic", weight=1.5)
def variadic(g):
    op = g.rng.choice(["Sum", "Mean", "Max", "Min"])
    x = first(g, op)
    ys = [x]
    for _ in range(g.rng.randint(1, 3)):
        y = g.pick(lambda v: v.dtype == x.dtype and v not in ys and _compatible(v, x), p_new=0.5)
        ys.append(y if y is not None else g.operand(x.dtype, broadcastable_dims(g, x.dims)))
    g.rng.shuffle(ys)
    g.add(op, ys, bcast, x.dtype)


@spec("where", weight=1.5)
def where(g):
    x = first(g, "Where", dtypes=allowed("Where", g.opset, 1))
    c = g.pick(lambda v: v.dtype == BOOL and _compatible(v, x), p_new=0.3)
    if c is None:
        c = g.new_input(BOOL, broadcastable_dims(g, x.dims))
    y = g.pick(lambda v: v is not x and v.dtype == x.dtype and _compatible(v, x), p_new=0.5)
    if y is None:
        y = g.operand(x.dtype, broadcastable_dims(g, x.dims))
    g.add("Where", [c, x, y], bcast, x.dtype)


@spec("clip", weight=1)
def clip(g):
    x = first(g, "Clip")
    lo, hi = sorted(g.random_array(x.dtype, (2,)).tolist())
    ins = [x, g.const(np.array(lo), x.dtype) if g.rng.random() < 0.8 else "",
           g.const(np.array(hi), x.dtype) if g.rng.random() < 0.8 else ""]
    while ins[-1] == "":
        ins.pop()
    g.add("Clip", ins, lambda s, *_: s, x.dtype, shape_args=[v for v in ins if v != ""])


_RANGE = {I8: (-128, 127), U8: (0, 255), I32: (-2**31, 2**31 - 256), I64: (-2**62, 2**62)}


@spec("cast", weight=2)
def cast(g):
    x = first(g, "Cast")
    to = pick_dtype(g, (set(FLOATS) | set(INTS) | {BOOL}) - {x.dtype}, weights_f32=2)
    if x.dtype in FLOATS and to in INTS:
        # float -> int is undefined out of range (and for NaN): clamp into range first
        lo, hi = _RANGE[to]
        if x.dtype == F16:
            lo, hi = max(lo, -60000), min(hi, 60000)
        zero = g.const(np.array(0), x.dtype)
        nan = g.add("IsNaN", [x], lambda s: s, BOOL, usable=False)[0]
        safe = g.add("Where", [nan, zero, x], bcast, x.dtype, usable=False)[0]
        x = g.add("Clip", [safe, g.const(np.array(lo), x.dtype), g.const(np.array(hi), x.dtype)],
                  lambda s, *_: s, x.dtype, usable=False)[0]
    if g.rng.random() < 0.2 and g.opset >= 15:
        like = g.const(np.zeros((), dtype="float32"), to)
        g.add("CastLike", [x, like], lambda s, _: s, to)
    else:
        g.add("Cast", [x], lambda s: s, to, to=to)

