"""Value-dependent shape sub-graphs (Shape -> Gather/Slice -> Concat ->
Reshape/Expand/ConstantOfShape) and If/Loop with small bodies."""
from __future__ import annotations

import math

import numpy as np
from onnx import helper

from onnx_mlir_py.testing.fuzz.ops import (BOOL, FLOATS, I64, INTS, Reject, allowed, bcast,
                                           broadcastable_dims, first, lowered, spec)
from onnx_mlir_py.testing.fuzz.ops.shape import reshape_shape


@spec("shape_chain", weight=2)
def shape_chain(g):
    r = g.rng
    kind = r.choice(["reshape_keep", "reshape_flatten", "expand", "const_of_shape"])
    x = first(g, "Reshape", rank=(1, 4))
    shp = g.node("Shape", [x])[0]
    if kind == "reshape_keep":         # [x.shape[a], -1]
        a = r.randrange(x.rank)
        idx = g.const(np.array([a], dtype=np.int64))
        dim = g.node("Gather", [shp, idx], axis=0)[0]
        new = g.node("Concat", [dim, g.const(np.array([-1], dtype=np.int64))], axis=0)[0]
        g.add("Reshape", [x, new], lambda s: reshape_shape(s, [s[a], -1]), x.dtype,
              shape_args=[x])
    elif kind == "reshape_flatten":    # x.shape[:k] + [-1]
        k = r.randint(0, x.rank - 1)
        head = g.node("Slice", [shp, g.const(np.array([0], dtype=np.int64)),
                                g.const(np.array([k], dtype=np.int64))])[0]
        new = g.node("Concat", [head, g.const(np.array([-1], dtype=np.int64))], axis=0)[0]
        g.add("Reshape", [x, new], lambda s: reshape_shape(s, list(s[:k]) + [-1]), x.dtype,
              shape_args=[x])
    elif kind == "expand":             # Expand(y, Shape(x)), y broadcastable to x
        y = g.operand(x.dtype if r.random() < 0.5 else r.choice(sorted(FLOATS)),
                      broadcastable_dims(g, x.dims))
        g.add("Expand", [y, shp], lambda ys, xs: bcast(ys, xs), y.dtype, shape_args=[y, x])
    else:                              # ConstantOfShape(Shape(x)[..]) of a random value
        value = g.random_array(x.dtype, (1,))
        g.add("ConstantOfShape", [shp], lambda s: s, x.dtype, shape_args=[x],
              value=helper.make_tensor("value", x.dtype, [1], value.tolist()))


def _body_unary(g, dtype):
    ops = [op for op in ("Neg", "Abs", "Sin", "Exp", "Relu", "Identity", "Floor")
           if lowered(op, g.opset) and dtype in allowed(op, g.opset)]
    return g.rng.choice(ops)


def _branch(g, x, dtype):
    """A no-input graph computing one value shaped like ``x`` from it."""
    r = g.rng
    out = g.fresh("b")
    if r.random() < 0.5:
        nodes = [helper.make_node(_body_unary(g, dtype), [x.name], [out])]
        inits = []
    else:
        c = g.fresh("c")
        arr = g.random_array(dtype, ())
        inits = [helper.make_tensor(c, dtype, [], [arr.item()])]
        op = r.choice([o for o in ("Add", "Mul", "Sub", "Max") if dtype in allowed(o, g.opset)])
        nodes = [helper.make_node(op, [x.name, c], [out])]
    return helper.make_graph(nodes, g.fresh("branch"), [],
                             [helper.make_tensor_value_info(out, dtype, None)], inits)


NUMERIC = tuple(FLOATS) + tuple(INTS)


@spec("if", weight=1)
def if_(g):
    if not lowered("If", g.opset):
        raise Reject("If")
    x = first(g, "Add", dtypes=[t for t in NUMERIC], rank=(0, 3))
    cond = g.pick(lambda v: v.dtype == BOOL and math.prod(v.shape(0)) == 1
                  and all(len(set(d)) == 1 for d in v.dims), p_new=0.5)
    if cond is None:
        cond = g.new_input(BOOL, r_dims(g))
    g.add("If", [cond], lambda s: s, x.dtype, shape_args=[x],
          then_branch=_branch(g, x, x.dtype), else_branch=_branch(g, x, x.dtype))


def r_dims(g):
    return g.rng.choice([(), (g.static_dim(1),)])


@spec("loop", weight=1)
def loop(g):
    r = g.rng
    if not lowered("Loop", g.opset):
        raise Reject("Loop")
    # the body's Add / Mul / Sub must accept x's type at this opset (int8 etc. came later)
    x = first(g, "Add", dtypes=[t for t in NUMERIC
                                if all(t in allowed(o, g.opset) for o in ("Add", "Mul", "Sub"))],
              rank=(0, 3))
    trips = r.randint(0, 3)
    scan = trips > 0 and r.random() < 0.5
    it, cin, vin = g.fresh("i"), g.fresh("cond"), g.fresh("v")
    cout, vout = g.fresh("cond"), g.fresh("v")
    nodes = [helper.make_node("Identity", [cin], [cout])]
    kind = r.choice(["iter", "outer", "unary"])
    if kind == "iter":                  # v + cast(i)
        ci = g.fresh("ci")
        nodes += [helper.make_node("Cast", [it], [ci], to=x.dtype),
                  helper.make_node("Add", [vin, ci], [vout])]
    elif kind == "outer":               # v * 0.5 + x (x from the outer scope)
        t = g.fresh("t")
        op = "Mul" if x.dtype in FLOATS else "Sub"
        nodes += [helper.make_node(op, [vin, x.name], [t]),
                  helper.make_node("Add", [t, x.name], [vout])]
    else:
        nodes += [helper.make_node(_body_unary(g, x.dtype), [vin], [vout])]
    outs = [helper.make_tensor_value_info(cout, BOOL, []),
            helper.make_tensor_value_info(vout, x.dtype, None)]
    if scan:
        sv = g.fresh("s")
        nodes.append(helper.make_node("Identity", [vout], [sv]))
        outs.append(helper.make_tensor_value_info(sv, x.dtype, None))
    body = helper.make_graph(nodes, g.fresh("body"),
                             [helper.make_tensor_value_info(it, I64, []),
                              helper.make_tensor_value_info(cin, BOOL, []),
                              helper.make_tensor_value_info(vin, x.dtype, None)], outs)
    m = g.const(np.array(trips, dtype=np.int64))
    cond = g.const(np.array(True)) if r.random() < 0.5 else ""
    types = [x.dtype, x.dtype] if scan else [x.dtype]
    g.add("Loop", [m, cond, x], lambda s: [s, (trips,) + s] if scan else [s], types,
          shape_args=[x], body=body)
