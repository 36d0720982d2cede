"""IR matchers for fusing the ops around a kernel into it: the zero
``tensor.pad`` before a conv, the ``linalg.fill`` its output starts from, a
per-channel bias add and a unary elementwise epilogue (ReLU, Clip, ...) after
it. Used by the depthwise kernel (``depthwise.py``: pad, bias and epilogue)
and the im2col conv (``conv.py``: bias). Each matcher returns None unless the
pattern is exact (static f32 shapes, single uses), so a rewrite that uses it
never changes what the fused ops compute.
"""
from __future__ import annotations

import math

import mlir.ir as ir

from onnx_mlir_py.dialects.onnx.opview import owner_op
from onnx_mlir_py.passes.optimize.kernel_emit import f32_hex

# elementwise ops of a fused epilogue (same text on f32 and on vectors)
VECTORIZABLE = {
    "arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.maximumf", "arith.minimumf",
    "arith.maxnumf", "arith.minnumf", "arith.negf", "math.absf", "math.exp", "math.tanh",
    "math.sqrt", "math.rsqrt", "math.fma", "math.erf", "math.log",
}


def static_f32(v) -> list[int] | None:
    t = v.type
    if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape \
            or not isinstance(t.element_type, ir.F32Type):
        return None
    return list(t.shape)


def batch_shape(v: ir.Value) -> list[int | None] | None:
    """Shape of an f32 tensor whose dims are static except dim 0, which may
    be dynamic (None); else None."""
    t = v.type
    if not isinstance(t, ir.RankedTensorType) or not isinstance(t.element_type, ir.F32Type) \
            or t.rank == 0:
        return None
    dyn = ir.ShapedType.get_dynamic_size()
    shape = list(t.shape)
    if any(s == dyn for s in shape[1:]):
        return None
    return [None if shape[0] == dyn else shape[0]] + shape[1:]


def fill_scalar(v: ir.Value):
    """(scalar, dest) when ``v`` is the result of a ``linalg.fill`` of an f32."""
    o = owner_op(v)
    if o is None or o.name != "linalg.fill" or len(o.operands) != 2:
        return None
    if not isinstance(o.operands[0].type, ir.F32Type):
        return None
    return o.operands[0], o.operands[1]


def zero_fill(v: ir.Value) -> bool:
    """``v`` is a ``linalg.fill`` of the constant 0.0 (a bias add after the
    kernel may then become the accumulators' start: bias + 0 + sum)."""
    fill = fill_scalar(v)
    c = owner_op(fill[0]) if fill is not None else None
    return c is not None and c.name == "arith.constant" and \
        isinstance(c.attributes["value"], ir.FloatAttr) and \
        ir.FloatAttr(c.attributes["value"]).value == 0.0


def single_user(v: ir.Value) -> ir.Operation | None:
    uses = list(v.uses)
    if len(uses) != 1:
        return None
    o = uses[0].owner
    return o.operation if isinstance(o, ir.OpView) else o


def zero_pad(v: ir.Value, shape=batch_shape):
    """(source, (top, left, bottom, right)) when ``v`` is a static +0.0
    ``tensor.pad`` of the two spatial dims of an f32 tensor (static but for
    a dynamic batch; ``shape``: the source's check, :func:`const_pad`'s), used once."""
    found = const_pad(v, shape)
    if found is None or found[2] != 0.0 or math.copysign(1.0, found[2]) < 0:
        return None
    return found[:2]


def const_pad(v: ir.Value, shape=batch_shape, attr=ir.FloatAttr):
    """(source, (top, left, bottom, right), value) when ``v`` is a static
    ``tensor.pad`` with a constant of the two spatial dims of an f32 tensor
    (static but for a dynamic batch), used once. ``shape`` / ``attr``: the
    source's check and the constant's attribute class for other types
    (pool_q8: 8-bit tensors, ``ir.IntegerAttr``)."""
    o = owner_op(v)
    if o is None or o.name != "tensor.pad" or len(o.operands) != 1 or single_user(v) is None:
        return None
    if shape(o.operands[0]) is None:
        return None
    lo = list(ir.DenseI64ArrayAttr(o.attributes["static_low"]))
    hi = list(ir.DenseI64ArrayAttr(o.attributes["static_high"]))
    if len(lo) != 4 or lo[:2] != [0, 0] or hi[:2] != [0, 0] or min(lo + hi) < 0:
        return None
    ops = [x.operation for x in o.regions[0].blocks[0].operations]
    if len(ops) not in (1, 2) or ops[-1].name != "tensor.yield":
        return None
    cst = owner_op(ops[-1].operands[0])
    if cst is None or cst.name != "arith.constant" \
            or not isinstance(cst.attributes["value"], attr):
        return None
    value = attr(cst.attributes["value"]).value
    if len(ops) == 2 and ops[0] != cst:
        return None
    return o.operands[0], (lo[2], lo[3], hi[2], hi[3]), value


def window_ints(op: ir.Operation, name: str) -> list[int]:
    """A linalg conv / pool's ``strides`` or ``dilations`` (default 1, 1)."""
    if name not in op.attributes:
        return [1, 1]
    return [int(x) for x in ir.DenseIntElementsAttr(op.attributes[name])]


_ID4 = "(d0, d1, d2, d3) -> (d0, d1, d2, d3)"
_CH4 = "(d0, d1, d2, d3) -> (d1)"


def elementwise_user(v: ir.Value, n_in: int):
    """The single user of ``v`` when it is an all-parallel 4-D generic with
    ``n_in`` inputs, the first ``v`` read with the identity map."""
    user = single_user(v)
    if user is None or user.name != "linalg.generic" or len(user.results) != 1 \
            or len(user.operands) != n_in + 1 or user.operands[0] != v:
        return None
    iters = [str(a) for a in user.attributes["iterator_types"]]
    if len(iters) != 4 or any("parallel" not in it for it in iters):
        return None
    if user.results[0].type != v.type:
        return None
    maps = [str(ir.AffineMapAttr(a).value) for a in user.attributes["indexing_maps"]]
    if maps[0] != _ID4 or maps[-1] != _ID4:
        return None
    return user, maps


def bias_add_user(v: ir.Value):
    """``(generic, bias)`` when the single user of ``v`` is ``v + bias[c]``."""
    found = elementwise_user(v, 2)
    if found is None:
        return None
    user, maps = found
    if maps[1] != _CH4 or static_f32(user.operands[1]) is None:
        return None
    body = user.regions[0].blocks[0]
    ops = [o.operation for o in body.operations]
    if len(ops) != 2 or ops[0].name != "arith.addf" or ops[1].name != "linalg.yield":
        return None
    add = ops[0]
    if len(add.attributes) > 1 or ("fastmath" in add.attributes and len(add.attributes) == 1
                                   and str(add.attributes["fastmath"]) != "#arith.fastmath<none>"):
        return None
    if set(add.operands) != {body.arguments[0], body.arguments[1]} \
            or ops[1].operands[0] != add.results[0]:
        return None
    return user, user.operands[1]


def call_in_place(op: ir.Operation, fused, fn: str, args: list) -> None:
    """Replace ``op`` (and its fused bias add ``fused`` from ``bias_add_user``,
    if any) by a call of kernel function ``fn`` on ``args``: at the bias add
    when fused (its bias may be computed between the two ops, a run-time
    broadcast of a dynamic bias input; fuzz s2001-2)."""
    chain = [op] + ([fused[0]] if fused is not None else [])
    replace_with_call(fn, args, chain, chain[-1])


def replace_with_call(fn: str, operands: list, erase: list, last: ir.Operation,
                      dead: list = (), at: ir.Operation | None = None) -> ir.Operation:
    """Replace ``last``'s result by a call of kernel function ``fn`` on
    ``operands``, inserted before ``last`` (every operand of a fused chain
    dominates its last op: a fused epilogue's captured scalars may be defined
    after the kernel op) or before ``at`` when the caller knows they all
    dominate it, then erase the fused ops ``erase`` (the kernel op
    first, ``last`` among them; erased in reverse) and ``dead`` (ops the
    kernel reads through: a pad, a prologue). The call's location names every
    fused node, the kernel op's first (errors, --profile)."""
    from mlir.dialects import func
    with ir.InsertionPoint(at or last), \
            ir.Location.fused([o.location for o in list(erase) + list(dead)]):
        call = func.CallOp([last.results[0].type], ir.FlatSymbolRefAttr.get(fn), operands)
    last.results[0].replace_all_uses_with(call.results[0])
    for o in reversed(erase):
        o.erase()
    for o in dead:
        o.erase()
    return call


def attr_text(o: ir.Operation) -> str | None:
    """The op's attributes as text after its operands (None: unsupported)."""
    names = [o.attributes[i].name for i in range(len(o.attributes))]
    if any(n != "fastmath" for n in names):
        return None
    if not names:
        return ""
    fm = str(o.attributes["fastmath"])
    if fm == "#arith.fastmath<none>":
        return ""
    return " fastmath<" + fm.split("<", 1)[1].rstrip(">") + ">"


def _f32_constant(o) -> str | None:
    """The hex text of ``o``'s value when it is an f32 ``arith.constant``."""
    if o is None or o.name != "arith.constant" or not isinstance(o.results[0].type, ir.F32Type) \
            or not isinstance(o.attributes["value"], ir.FloatAttr):
        return None
    return f32_hex(ir.FloatAttr(o.attributes["value"]).value)


def body_ops(g: ir.Operation, names: dict, tag: str, captured: list):
    """``(ops, result)``: the body of generic ``g`` as op text; ``names``
    maps its input operands' indices to names; scalars from outside the body
    are appended to ``captured`` (named ``%e_cap<k>``). None when the body
    has an op that is not :data:`.kernel_fusion.VECTORIZABLE` (or an f32
    constant) or reads its init."""
    body = g.regions[0].blocks[0]
    n_in = len(g.operands) - 1
    local = {body.arguments[i]: names[i] for i in range(n_in)}
    out_arg = body.arguments[n_in]
    ops = [o.operation for o in body.operations]
    text = []
    for k, o in enumerate(ops[:-1]):
        res = f"%{tag}_{k}"
        if _f32_constant(o) is not None:
            text.append(("arith.constant", res, (_f32_constant(o),), ""))
            local[o.results[0]] = res
            continue
        if o.name not in VECTORIZABLE or len(o.results) != 1 or o.regions \
                or not isinstance(o.results[0].type, ir.F32Type):
            return None
        attrs = attr_text(o)
        if attrs is None:
            return None
        opnds = []
        for x in o.operands:
            if x in local:
                opnds.append(local[x])
            elif x == out_arg or not isinstance(x.type, ir.F32Type) or \
                    (isinstance(x.owner, ir.Block) and x.owner == body):
                return None
            elif _f32_constant(owner_op(x)) is not None:
                # a constant canonicalize hoisted out of the body (the window
                # kernels' inliner) is text again: SiLU's 1 + exp(-x) then
                # matches math_approx.sigmoid_exp_names (the one-scale exp)
                local[x] = f"%{tag}_c{len(text)}"
                text.append(("arith.constant", local[x], (_f32_constant(owner_op(x)),), ""))
                opnds.append(local[x])
            else:
                if x not in captured:
                    captured.append(x)
                opnds.append(f"%e_cap{captured.index(x)}")
        local[o.results[0]] = res
        text.append((o.name, res, tuple(opnds), attrs))
    yld = ops[-1]
    if yld.name != "linalg.yield" or len(yld.operands) != 1 or yld.operands[0] not in local:
        return None
    return text, local[yld.operands[0]]


def epilogue_user(v: ir.Value):
    """``(generic, ops, result, captured)`` when the single user of ``v`` is a
    unary elementwise generic of :data:`VECTORIZABLE` ops on f32 values,
    f32 constants and scalars defined outside it; ``ops`` are (name, result, operands, attrs)
    text on ``%e_in`` (the element) and ``%e_cap<k>`` (captured[k]), a
    constant as ``arith.constant dense<bits>`` (the row kernels' vectors)."""
    found = elementwise_user(v, 1)
    if found is None:
        return None
    user, _maps = found
    captured: list[ir.Value] = []
    found = body_ops(user, {0: "%e_in"}, "e", captured)
    if found is None:
        return None
    ops = tuple((f"arith.constant dense<{o[2][0]}>", o[1], (), "") if o[0] == "arith.constant" else o
                for o in found[0])
    return user, ops, found[1], captured

def prologue_producer(v: ir.Value):
    """``(generic, ops, result, captured, source)`` when ``v`` is the result of
    a unary elementwise generic of the :func:`epilogue_user` kind whose input
    ``source`` and result ``v`` each have a single user: a kernel reading ``v``
    (the depthwise kernel's copy of its input plane, after a 1x1 conv's
    ReLU6/HardSwish) may then read ``source`` and apply the ops itself,
    instead of a separate pass writing ``v`` through memory."""
    g = owner_op(v)
    if g is None or g.name != "linalg.generic" or len(g.operands) != 2 \
            or single_user(v) is None:
        return None
    found = epilogue_user(g.operands[0])
    if found is None or found[0] != g:
        return None
    return found + (g.operands[0],)
