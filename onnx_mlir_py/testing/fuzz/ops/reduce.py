"""Reductions, ArgMax/ArgMin, Softmax/LogSoftmax, LayerNormalization, CumSum."""
from __future__ import annotations

import numpy as np

from onnx_mlir_py.testing.fuzz.ops import FLOATS, I64, allowed, first, spec

REDUCE = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
          "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp", "ReduceLogSum"]


def _axes_input(op: str, opset: int) -> bool:
    return opset >= (13 if op == "ReduceSum" else 18)


@spec("reduce", weight=3)
def reduce(g):
    r = g.rng
    op = r.choice(REDUCE)
    x = first(g, op, rank=(1, 4))
    attrs = {}
    keep = r.randint(0, 1)
    if not keep or r.random() < 0.5:
        attrs["keepdims"] = keep
    n = r.randint(0, x.rank)
    axes = sorted(r.sample(range(x.rank), n))
    noop = 0
    if not axes and _axes_input(op, g.opset) and r.random() < 0.3:
        noop = attrs["noop_with_empty_axes"] = 1
    signed = [a - x.rank if r.random() < 0.3 else a for a in axes]
    ins = [x]
    if axes and _axes_input(op, g.opset):
        ins.append(g.const(np.array(signed, dtype=np.int64)))
    elif axes:
        attrs["axes"] = signed
    red = set(axes) if axes or not noop else set()
    if not axes and not noop:
        red = set(range(x.rank))

    def shape(s, *_):
        return tuple(1 if i in red else d for i, d in enumerate(s) if keep or i not in red)
    g.add(op, ins, shape, x.dtype, shape_args=[x], **attrs)


@spec("argmax", weight=1)
def argmax(g):
    r = g.rng
    op = r.choice(["ArgMax", "ArgMin"])
    x = first(g, op, rank=(1, 4))
    axis = r.randrange(x.rank)
    keep = r.randint(0, 1)
    attrs = {"axis": axis - x.rank if r.random() < 0.3 else axis, "keepdims": keep}
    if r.random() < 0.4:
        attrs["select_last_index"] = 1

    def shape(s):
        if s[axis] == 0:
            raise ValueError("ArgMax of an empty axis")
        return tuple(1 if i == axis else d for i, d in enumerate(s) if keep or i != axis)
    g.add(op, [x], shape, I64, **attrs)


@spec("softmax", weight=2)
def softmax(g):
    r = g.rng
    op = r.choice(["Softmax", "LogSoftmax", "Hardmax"])
    x = first(g, op, rank=(1, 4))
    axis = r.randrange(x.rank)
    g.add(op, [x], lambda s: s, x.dtype, axis=axis - x.rank if r.random() < 0.5 else axis)


@spec("layernorm", weight=1.5, min_opset=17)
def layernorm(g):
    r = g.rng
    x = first(g, "LayerNormalization", rank=(1, 4),
              dtypes=allowed("LayerNormalization", g.opset) & set(FLOATS))
    axis = r.randrange(x.rank)
    ins = [x, g.operand(x.dtype, x.dims[axis:], p_const=0.7)]
    if r.random() < 0.6:
        ins.append(g.operand(x.dtype, x.dims[axis:], p_const=0.7))
    attrs = {"axis": axis - x.rank if r.random() < 0.5 else axis}
    if r.random() < 0.5:
        attrs["epsilon"] = r.choice([1e-5, 1e-3, 0.1])
    g.add("LayerNormalization", ins, lambda s, *_: s, x.dtype, **attrs)


@spec("cumsum", weight=0.7)
def cumsum(g):
    r = g.rng
    x = first(g, "CumSum", rank=(1, 4))
    axis = r.randrange(x.rank) - (x.rank if r.random() < 0.3 else 0)
    attrs = {k: 1 for k in ("exclusive", "reverse") if r.random() < 0.4}
    g.add("CumSum", [x, g.const(np.array(axis, dtype=np.int64))], lambda s, _: s, x.dtype,
          **attrs)
