"""Constant folding of small ONNX sub-graphs (shape computations).

An op whose operands are all small dense ``onnx.constant`` values is
evaluated with ``onnx.reference`` (the ONNX reference implementation) and
replaced by ``onnx.constant`` ops. ``Shape``/``Size`` of a statically shaped
tensor fold without data. ``Slice`` folds with its family's ``fold_slice``
(the shape rule's parameters and ``slice_axis``): onnx.reference slices with
numpy, which gives nothing for a negative step and a start below -dim where
the spec clamps the start to 0 (a folded ReduceSum of such a slice was 0
instead of the element).
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
import onnx
from onnx import helper, numpy_helper

from onnx_mlir_py.dialects.onnx.opview import OnnxOp, attr_value
from onnx_mlir_py.dialects.onnx.types import MLIR_TO_ELEM_TYPE

MAX_FOLD_ELEMENTS = 1 << 16
# Ops that are deterministic and cheap; everything else is left for codegen.
FOLDABLE = {
    "Shape", "Size", "Gather", "Concat", "Unsqueeze", "Squeeze", "Slice", "Cast",
    "Range", "ConstantOfShape", "Reshape", "Add", "Sub", "Mul", "Div", "Equal",
    "Where", "Expand", "ReduceProd", "ReduceSum", "ReduceMin", "ReduceMax",
    "Identity", "Neg", "Abs", "Max", "Min", "Floor", "Ceil", "Sqrt", "Not", "And",
    "Or", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Mod", "Transpose",
    "Flatten", "Tile", "CastLike", "Constant", "Sign", "Split", "DequantizeLinear",
}


def _const_op(arr: np.ndarray, loc) -> ir.Operation:
    from onnx_mlir_py.dialects.onnx.attributes import dense_bool_attr
    from onnx_mlir_py.dialects.onnx.types import elem_type
    et = elem_type(helper.np_dtype_to_tensor_dtype(arr.dtype))
    ttype = ir.RankedTensorType.get(list(arr.shape), et)
    if arr.dtype == np.bool_:
        attr = dense_bool_attr(arr, ttype)
    else:
        attr = ir.DenseElementsAttr.get(np.ascontiguousarray(arr), type=ttype)
    return ir.Operation.create("onnx.constant", results=[attr.type],
                               attributes={"value": attr}, loc=loc)


def attr_proto(name: str, kind: str, a: ir.Attribute) -> onnx.AttributeProto | None:
    """An MLIR attribute of the ONNX dialect as an AttributeProto (None for a type)."""
    val = attr_value(a)
    if kind == "tensor":
        return helper.make_attribute(name, numpy_helper.from_array(val))
    if kind == "type":
        return None
    return helper.make_attribute(name, val, attr_type=getattr(
        onnx.AttributeProto, kind.upper()))


def _evaluate(v: OnnxOp, inputs: list[np.ndarray | None]) -> list[np.ndarray] | None:
    from onnx.reference import ReferenceEvaluator
    names = [f"i{k}" if x is not None else "" for k, x in enumerate(inputs)]
    attrs = []
    for name, aspec in v.spec.attributes.items():
        if name in v.op.attributes:
            p = attr_proto(name, aspec.kind, v.op.attributes[name])
            if p is None:
                return None
            attrs.append(p)
    outs = [f"o{k}" for k in range(len(v.op.results))]
    node = helper.make_node(v.op_type, names, outs, domain=v.spec.domain)
    node.attribute.extend(attrs)
    g = helper.make_graph(
        [node], "fold",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)
         for n, x in zip(names, inputs) if x is not None],
        [helper.make_value_info(o, onnx.TypeProto()) for o in outs])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid(v.spec.domain,
                                                                     v.version)])
    sess = ReferenceEvaluator(model)
    return sess.run(None, {n: x for n, x in zip(names, inputs) if x is not None})


def _fold_slice(v: OnnxOp, inputs: list) -> list[np.ndarray] | None:
    """Slice with the Slice family's own rule (see the module docstring)."""
    from onnx_mlir_py.dialects.onnx.ops.slice import fold_slice
    out = fold_slice(v, inputs[0])
    return None if out is None else [out]


def _fold_dequantize(v: OnnxOp, inputs: list) -> list[np.ndarray] | None:
    """DequantizeLinear with its family's own rule (onnx.reference has no
    version before 19). Not 8-bit weights (rank >= 2): optimize_onnx's QDQ
    rewrites must see them (a conv of a folded weight stayed f32: QDQ
    MobileNetV2's stem and first 1x1 conv, whose weights are small enough to
    fold here); its ``fold_constant_dequantize`` folds them afterwards."""
    from onnx_mlir_py.dialects.onnx.ops.quantize import fold_dequantize
    x = inputs[0] if inputs else None
    if x is not None and x.ndim >= 2 and x.dtype.itemsize == 1 and x.dtype.kind in "iu":
        return None
    out = fold_dequantize(v, inputs)
    return None if out is None else [out]


def _fold_constant(v: OnnxOp) -> list[np.ndarray] | None:
    """Constant with a dense ``value``: that tensor, as onnx.reference gives
    it, without building and evaluating a model; None when it is too large
    to fold or a resource (the importer's initializers: evaluating failed
    there, after loading onnx.reference, for each of ResNet-50's 108
    weights); other forms (``value_float``, ...) are evaluated."""
    if "value" not in v.op.attributes:
        return _evaluate(v, [])
    a = v.op.attributes["value"]
    if not isinstance(a, ir.DenseElementsAttr) or \
            int(np.prod(a.type.shape)) > MAX_FOLD_ELEMENTS:
        return None
    return [attr_value(a)]


def try_fold(op: ir.Operation) -> bool:
    """Replace ``op`` by constants if it can be evaluated now."""
    v = OnnxOp(op)
    if v.op_type not in FOLDABLE or v.spec.domain or op.regions and len(op.regions):
        return False
    for r in op.results:  # not-yet-inferred results are fine: the value gives the type
        if str(r.type) != "!onnx.unknown" and (not isinstance(r.type, ir.ShapedType) or
                                               str(r.type.element_type) not in MLIR_TO_ELEM_TYPE):
            return False  # sequences, string tensors: never folded
    values = []
    picked = _gather_of_shape(v) if v.op_type == "Gather" else None
    if picked is not None:
        results = [picked]
    elif v.op_type in ("Shape", "Size"):
        shape = v.shape(v.input(0))
        if shape is None or None in shape:
            return False
        s = np.array(shape, dtype=np.int64)
        if v.op_type == "Size":
            results = [np.array(int(np.prod(s)), dtype=np.int64)]
        else:
            start, end = v.attrs.start if v.version >= 15 else 0, \
                v.attrs.end if v.version >= 15 else None
            results = [s[start:end]]
    else:
        for x in op.operands:
            c = OnnxOp.const(x)
            if c is None or c.size > MAX_FOLD_ELEMENTS:
                return False
            values.append(c)
        groups = v.operand_groups()
        flat, k = [], 0
        for g, vs in zip(groups, v.spec.inputs):
            if not g and vs.option != "variadic":
                flat.append(None)
            for _ in g:
                flat.append(values[k])
                k += 1
        while flat and flat[-1] is None:
            flat.pop()
        try:
            results = _fold_slice(v, flat) if v.op_type == "Slice" else \
                _fold_dequantize(v, flat) if v.op_type == "DequantizeLinear" else \
                _fold_constant(v) if v.op_type == "Constant" else \
                _evaluate(v, flat)
        except Exception:
            return False
        if results is None:
            return False
    if any(np.asarray(r).size > MAX_FOLD_ELEMENTS or np.asarray(r).dtype.kind not in "biuf"
           for r in results) or len(results) != len(op.results):
        return False
    with ir.InsertionPoint(op), op.location:
        new = []
        for r, old in zip(results, op.results):
            r = np.asarray(r)
            want = _np_dtype(old)
            if want is not None and r.dtype != want:
                r = r.astype(want)
            new.append(_const_op(r, op.location).result)
    for old, nv in zip(op.results, new):
        old.replace_all_uses_with(nv)
    op.erase()
    return True


def _shape_dims(v: ir.Value) -> list | None:
    """The dims ``Shape(x)`` (``v``, with its start / end) yields, None for
    a dynamic one; None when ``v`` is not such a Shape result."""
    from onnx_mlir_py.dialects.onnx.opview import owner_op
    owner = owner_op(v)
    if owner is None or not owner.name.startswith("onnx.shape"):
        return None
    s = OnnxOp(owner)
    if s.op_type != "Shape" or s.spec.domain:
        return None
    dims = s.shape(s.input(0))
    if dims is None:
        return None
    start, end = (s.attrs.start, s.attrs.end) if s.version >= 15 else (0, None)
    return list(dims)[start:end]


def _gather_of_shape(v: OnnxOp) -> np.ndarray | None:
    """``Gather(Shape(x), constant indices)`` whose picked dims of ``x`` are
    static, though others are not (``x.shape[-1] == 1`` in a torch trace):
    those dims, else None."""
    if len(v.op.results) != 1 or len(v.op.operands) != 2:
        return None
    dims = _shape_dims(v.op.operands[0])
    idx = OnnxOp.const(v.op.operands[1])
    if dims is None or idx is None or idx.dtype.kind not in "iu" or \
            (idx.size and not all(-len(dims) <= int(i) < len(dims) for i in idx.reshape(-1))):
        return None
    picked = [dims[int(i)] for i in idx.reshape(-1)]
    if None in picked:
        return None
    return np.array(picked, dtype=np.int64).reshape(idx.shape)


def _np_dtype(v: ir.Value):
    from onnx_mlir_py.dialects.onnx.types import numpy_dtype
    if not isinstance(v.type, ir.ShapedType):
        return None
    return numpy_dtype(v.type.element_type)


def inline_constant_if(op: ir.Operation) -> list[ir.Operation] | None:
    """``If`` with a constant condition -> the ops of the taken branch, moved
    before it (the branch never taken is dropped, so it is neither inferred
    nor verified, as no runtime would execute it). Returns the moved ops
    (for the caller to infer), or None when ``op`` is not such an If."""
    v = OnnxOp(op)
    if v.op_type != "If" or v.spec.domain:
        return None
    cond = OnnxOp.const(v.input(0))
    if cond is None or cond.size != 1:
        return None
    taken = "then_branch" if bool(cond.reshape(-1)[0]) else "else_branch"
    block = op.regions[v.spec.regions.index(taken)].blocks[0]
    ops = [o.operation for o in block.operations]
    body, term = ops[:-1], ops[-1]
    values = list(term.operands)
    if len(values) != len(op.results):
        return None
    for o in body:
        o.move_before(op)
    for old, new in zip(op.results, values):
        old.replace_all_uses_with(new)
    op.erase()
    return body
