"""Helpers shared by the tensor-manipulation rules: axis normalisation,
constant operands of any ``Constant`` form, and a small value propagation
for 0-D/1-D integer shape tensors (``Shape -> Gather -> Unsqueeze ->
Concat -> Reshape``) so that shape rules see dims even when the sub-graph
was not folded (dynamic dims, or constants the folder cannot read).
"""
from __future__ import annotations

import math

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.dialects.onnx.opview import OnnxOp, attr_value, dense_to_numpy, owner_op, tensor

def i64() -> ir.Type:
    return ir.IntegerType.get_signless(64)


def fmt(s) -> str:
    if s is None:
        return "<unranked>"
    return "[" + "x".join("?" if d is None else str(d) for d in s) + "]"


def single_result(shape_fn, elem_input: int = 0):
    """The shape rule of a one-result op: ``shape_fn(op)`` (a shape, None
    for unranked) with the element type of input ``elem_input``; no type
    while that element type is unknown (``shape_fn`` is not called then)."""
    def rule(op: OnnxOp):
        et = op.elem(op.input(elem_input))
        return [None if et is None else tensor(shape_fn(op), et)]
    return rule


def input_shape(op: OnnxOp, k: int = 0):
    return op.shape(op.input(k))


same_as_input = single_result(input_shape)    # same shape and element type as input 0


def norm_axis(op: OnnxOp, axis: int, rank: int, what: str = "axis") -> int:
    """``axis`` in [-rank, rank-1] -> [0, rank-1]; fails naming the node."""
    if not -rank <= axis < rank:
        op.fail(f"{what} {axis} is out of range for rank {rank} "
                f"(expected [{-rank}, {rank - 1}])")
    return axis + rank if axis < 0 else axis


def norm_axes(op: OnnxOp, axes, rank: int, what: str = "axes") -> list[int]:
    one = "axis" if what == "axes" else what
    out = [norm_axis(op, int(a), rank, one) for a in axes]
    if len(set(out)) != len(out):
        op.fail(f"{what} {list(int(a) for a in axes)} has duplicate entries "
                f"(rank {rank})")
    return out


def _owner_view(v: ir.Value | None) -> OnnxOp | None:
    owner = owner_op(v)
    if owner is None:
        return None
    from onnx_mlir_py.dialects.onnx.opview import is_onnx_op
    if not is_onnx_op(owner):
        return None
    try:
        return OnnxOp(owner)
    except KeyError:
        return None


def constant_attr_value(c: OnnxOp) -> np.ndarray | None:
    """Value of a ``Constant`` op of any version, from whichever of its
    ``value*`` attributes the importer kept."""
    attrs = c.op.attributes
    if "value" in attrs:
        a = attrs["value"]
        return dense_to_numpy(a) if isinstance(a, ir.DenseElementsAttr) else None
    if "value_int" in attrs:
        return np.array(attr_value(attrs["value_int"]), dtype=np.int64)
    if "value_ints" in attrs:
        return np.array(attr_value(attrs["value_ints"]), dtype=np.int64)
    if "value_float" in attrs:
        return np.array(attr_value(attrs["value_float"]), dtype=np.float32)
    if "value_floats" in attrs:
        return np.array(attr_value(attrs["value_floats"]), dtype=np.float32)
    return None


def const_value(v: ir.Value | None) -> np.ndarray | None:
    """numpy value of ``v`` if a Constant (any version or form) defines it."""
    o = _owner_view(v)
    if o is None or o.op_type != "Constant":
        return None
    return constant_attr_value(o)


def const_ints(v: ir.Value | None) -> list[int] | None:
    """Constant integer values of ``v`` (flattened), or None."""
    c = const_value(v)
    if c is None or c.dtype.kind not in "iu":
        return None
    return [int(x) for x in np.asarray(c).reshape(-1)]


def int_values(v: ir.Value | None, depth: int = 0) -> list[int | None] | None:
    """Elements of a 0-D/1-D integer tensor ``v`` (None = unknown element),
    propagated through the ops that build shapes; None if not even the
    element count is known."""
    if v is None or depth > 32:
        return None
    c = const_value(v)
    if c is not None:
        if c.dtype.kind not in "iu" or c.ndim > 1:
            return None
        return [int(x) for x in c.reshape(-1)]
    o = _owner_view(v)
    vals = None
    if o is not None:
        vals = _propagate(o, depth + 1)
    if vals is None:
        s = OnnxOp.shape(v)
        if s is not None and len(s) <= 1 and None not in s:
            return [None] * (s[0] if s else 1)
    return vals


def _propagate(o: OnnxOp, depth: int) -> list[int | None] | None:
    t = o.op_type
    if t == "Shape":
        s = o.shape(o.input(0))
        if s is None:
            return None
        if o.version >= 15:
            r = len(s)
            start, end = o.attrs.start, o.attrs.end
            return list(s[slice(*slice(start, end).indices(r)[:2])])
        return list(s)
    if t == "Size":
        s = o.shape(o.input(0))
        if s is None or None in s:
            return [None]
        return [int(math.prod(s))]
    if t in ("Identity", "Squeeze", "Unsqueeze", "Reshape", "Flatten"):
        return int_values(o.input(0), depth)
    if t == "Cast":
        if o.version < 6:
            return None
        import onnx
        if o.attrs.to not in (onnx.TensorProto.INT64, onnx.TensorProto.INT32):
            return None
        return int_values(o.input(0), depth)
    if t == "Concat":
        out = []
        for x in o.variadic():
            xs = int_values(x, depth)
            if xs is None:
                return None
            out += xs
        return out
    if t == "Gather":
        data = int_values(o.input(0), depth)
        idx = const_ints(o.input(1))
        if data is None or idx is None:
            return None
        n = len(data)
        if any(not -n <= i < n for i in idx):
            return None
        return [data[i] for i in idx]
    if t == "Slice" and o.version >= 10:
        data = int_values(o.input(0), depth)
        starts, ends = const_ints(o.input(1)), const_ints(o.input(2))
        steps = const_ints(o.input(4)) if o.input(4) is not None else [1]
        if data is None or starts is None or ends is None or steps is None \
                or len(starts) != 1 or len(ends) != 1 or steps[0] == 0:
            return None
        from onnx_mlir_py.dialects.onnx import dims as D
        # (slice.py imports this module)
        from onnx_mlir_py.dialects.onnx.ops.slice import slice_axis
        first, cnt = slice_axis(D.ShapeChecks(lambda _m: None), len(data), starts[0],
                                ends[0], steps[0])
        return [data[first + i * steps[0]] for i in range(cnt)]
    if t in ("Add", "Sub", "Mul", "Div"):
        a, b = int_values(o.input(0), depth), int_values(o.input(1), depth)
        if a is None or b is None:
            return None
        if len(a) == 1:
            a = a * len(b)
        if len(b) == 1:
            b = b * len(a)
        if len(a) != len(b):
            return None
        def f(x, y):
            if x is None or y is None:
                return None
            if t == "Add":
                return x + y
            if t == "Sub":
                return x - y
            if t == "Mul":
                return x * y
            return None if y == 0 else int(x / y)
        return [f(x, y) for x, y in zip(a, b)]
    return None


def known_len(v: ir.Value | None) -> int | None:
    """Number of elements of a 1-D tensor if static."""
    s = OnnxOp.shape(v)
    if s is None or len(s) != 1:
        return None
    return s[0]


def dtype_attr(op: OnnxOp, name: str, code: int) -> ir.Type:
    """The element type an integer attribute (``dtype``, ``to``, ...) names;
    a code that is no ONNX element type fails naming the node."""
    from onnx_mlir_py.dialects.onnx.types import elem_type
    try:
        return elem_type(code)
    except ValueError:
        op.fail(f"attribute '{name}' ({code}) is not a supported element type")


def check_flag(op: OnnxOp, name: str) -> None:
    """A 0/1 attribute (keepdims, ...) holds 0 or 1."""
    v = getattr(op.attrs, name)
    if v is not None and v not in (0, 1):
        op.fail(f"attribute '{name}' = {v}: expected 0 or 1")


def dtype_or_input(op: OnnxOp, name: str) -> ir.Type | None:
    """The element type the ``name`` attribute (``dtype``) names when set, else
    input 0's."""
    code = getattr(op.attrs, name) if name in op.spec.attributes else None
    return dtype_attr(op, name, code) if code else op.elem(op.input(0))


def like_input(op: OnnxOp, et: ir.Type | None) -> list:
    """One result of input 0's shape with element type ``et`` (*Like ops)."""
    return [tensor(op.shape(op.input(0)), et) if et is not None else None]

