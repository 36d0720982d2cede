"""sequence-to-tensors: sequences known at compile time become plain tensors.

torch.onnx.export writes ``SplitToSequence`` + ``SequenceAt(i)`` (and
``SequenceConstruct`` + ``ConcatFromSequence``) where the number of pieces
and the positions are constants. This pass follows, in program order, every
sequence whose elements are known values: SequenceEmpty, SequenceConstruct,
SequenceInsert / SequenceErase at a constant (or default) position of a
known sequence, and SplitToSequence with a static axis length (or a constant
list of sizes), which becomes one ``Split`` (+ ``Squeeze`` for keepdims=0).
Its consumers are rewritten: SequenceAt at a constant position -> the
element, SequenceLength -> a constant, ConcatFromSequence -> ``Concat``
(of ``Unsqueeze``d elements for new_axis). A position out of range is left
alone (the run-time op reports it, naming the node). The sequence ops left
without users are erased by canonicalize-onnx; the rest run on the C
runtime (passes/onnx_to_linalg/sequence.py). ``compiler.lower`` runs it
before lower-to-linalg, then shape-inference again when anything changed
(elements are often more static than the sequence's element type).
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.dialects.onnx.attributes import from_value
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, is_onnx_op
from onnx_mlir_py.dialects.onnx.schema import needs_segments, segment_sizes, spec_table
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes.optimize_onnx.ir_util import (lowerable_spec, make_constant,
                                                         module_opset, schema_attributes)


def _const_int(v: ir.Value | None) -> int | None:
    c = OnnxOp.const(v) if v is not None else None
    if c is None or np.asarray(c).size != 1:
        return None
    return int(np.asarray(c).reshape(()))


def _norm(pos: int | None, n: int, insert: bool) -> int | None:
    """Position -> index in [0, n) ([0, n] for an insert); None if out of range."""
    if pos is None:
        return n if insert else (n - 1 if n else None)
    p = pos + n if pos < 0 else pos
    return p if 0 <= p <= (n if insert else n - 1) else None


def _create(op_type: str, opset: int, operands: list, result_types: list, attrs: dict,
            loc: ir.Location) -> ir.Operation | None:
    """An ONNX op (variadic inputs/outputs given flat), or None when the opset
    selects a version without rules."""
    spec = lowerable_spec(op_type, opset)
    if spec is None:
        return None
    attributes = schema_attributes(spec, attrs)
    if needs_segments(spec.inputs):
        counts = [len(operands) if i == 0 else 0 for i in range(len(spec.inputs))]
        if len(spec.inputs) > 1 and op_type in ("Split", "Squeeze", "Unsqueeze"):
            counts = [1, len(operands) - 1] + [0] * (len(spec.inputs) - 2)
        attributes["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get(
            segment_sizes(spec.inputs, counts))
    if needs_segments(spec.outputs):
        attributes["resultSegmentSizes"] = ir.DenseI32ArrayAttr.get(
            segment_sizes(spec.outputs, [len(result_types)] + [0] * (len(spec.outputs) - 1)))
    return ir.Operation.create(spec.mlir_name, results=result_types, operands=operands,
                               attributes=attributes, loc=loc)


def _ints_input_or_attr(op_type: str, opset: int, name: str, values: list[int],
                        loc: ir.Location) -> tuple[list, dict]:
    """(extra operands, attributes) for ``name`` (Split's split, Squeeze /
    Unsqueeze's axes): an input from opset 13, an attribute before."""
    spec = lowerable_spec(op_type, opset)
    if spec is not None and name in spec.attributes:
        return [], {name: ir.DenseI64ArrayAttr.get(values)}
    return [make_constant(np.array(values, np.int64), loc, name)], {}


def _with_dim(t: ir.RankedTensorType, axis: int, d: int | None) -> ir.RankedTensorType:
    shape = list(t.shape)
    shape[axis] = ir.ShapedType.get_dynamic_size() if d is None else d
    return ir.RankedTensorType.get(shape, t.element_type)


def _split(v: OnnxOp, opset: int) -> list[ir.Value] | None:
    x = v.input(0)
    t = x.type
    if not isinstance(t, ir.RankedTensorType):
        return None
    a = v.attrs.axis + t.rank if v.attrs.axis < 0 else v.attrs.axis
    if not 0 <= a < t.rank:
        return None
    n = None if t.is_dynamic_dim(a) else int(t.shape[a])
    split = v.input(1)
    if split is None:
        if n is None:
            return None
        sizes, squeeze = [1] * n, not v.attrs.keepdims
    else:
        c = OnnxOp.const(split)
        if c is None:
            return None
        c = np.asarray(c).astype(np.int64)
        if c.ndim == 0:
            if n is None or c <= 0:
                return None
            k = int(c)
            sizes = [k] * (n // k) + ([n % k] if n % k else [])
        else:
            sizes = [int(s) for s in c.reshape(-1)]
            if min(sizes, default=-1) < 0 or (n is not None and sum(sizes) != n):
                return None       # the run-time op reports it
        squeeze = False
    if not sizes:
        return []
    loc = v.op.location
    extra, attrs = _ints_input_or_attr("Split", opset, "split", sizes, loc)
    attrs["axis"] = from_value("int", a)
    sp = _create("Split", opset, [x] + extra, [_with_dim(t, a, s) for s in sizes], attrs, loc)
    if sp is None:
        return None
    pieces = list(sp.results)
    if squeeze:
        out = []
        for p in pieces:
            extra, attrs = _ints_input_or_attr("Squeeze", opset, "axes", [a], loc)
            shape = [d for k, d in enumerate(p.type.shape) if k != a]
            sq = _create("Squeeze", opset, [p] + extra,
                         [ir.RankedTensorType.get(shape, t.element_type)], attrs, loc)
            if sq is None:
                return None
            out.append(sq.results[0])
        pieces = out
    return pieces


def _concat(v: OnnxOp, elems: list[ir.Value], opset: int) -> ir.Value | None:
    rt = v.op.results[0].type
    if not elems or not all(isinstance(e.type, ir.RankedTensorType) for e in elems):
        return None
    r = elems[0].type.rank
    loc = v.op.location
    if v.attrs.new_axis:
        a = v.attrs.axis + r + 1 if v.attrs.axis < 0 else v.attrs.axis
        if not 0 <= a <= r:
            return None
        ups = []
        for e in elems:
            extra, attrs = _ints_input_or_attr("Unsqueeze", opset, "axes", [a], loc)
            shape = list(e.type.shape)
            shape.insert(a, 1)
            u = _create("Unsqueeze", opset, [e] + extra,
                        [ir.RankedTensorType.get(shape, e.type.element_type)], attrs, loc)
            if u is None:
                return None
            ups.append(u.results[0])
        elems = ups
    else:
        a = v.attrs.axis + r if v.attrs.axis < 0 else v.attrs.axis
        if not 0 <= a < r:
            return None
    c = _create("Concat", opset, elems, [rt], {"axis": from_value("int", a)}, loc)
    return c.results[0] if c is not None else None


def sequence_to_tensors(module: ir.Module) -> bool:
    """Rewrite what the module's known sequences allow; True if anything changed."""
    known: dict[ir.Value, list[ir.Value]] = {}
    changed = False
    table = spec_table().by_mlir_name
    with module.context:
        for op in walk_ops(module, is_onnx_op):
            if op.name not in table:
                continue
            v = OnnxOp(op)
            if v.spec.domain:
                continue
            t, opset = v.op_type, module_opset(op)
            with ir.InsertionPoint(op), op.location:
                if t == "SequenceEmpty":
                    known[op.results[0]] = []
                elif t == "SequenceConstruct":
                    known[op.results[0]] = list(v.variadic())
                elif t in ("SequenceInsert", "SequenceErase") and v.input(0) in known:
                    s = known[v.input(0)]
                    pos_in = v.input(2 if t == "SequenceInsert" else 1)
                    pos = None if pos_in is None else _const_int(pos_in)
                    if pos_in is not None and pos is None:
                        continue
                    p = _norm(pos, len(s), t == "SequenceInsert")
                    if p is None:
                        continue
                    known[op.results[0]] = s[:p] + [v.input(1)] + s[p:] \
                        if t == "SequenceInsert" else s[:p] + s[p + 1:]
                elif t == "SplitToSequence":
                    pieces = _split(v, opset)
                    if pieces is not None:
                        known[op.results[0]] = pieces
                        changed = True
                elif t == "SequenceAt" and v.input(0) in known:
                    s = known[v.input(0)]
                    pos = _const_int(v.input(1))
                    p = None if pos is None else _norm(pos, len(s), False)
                    if p is not None:
                        op.results[0].replace_all_uses_with(s[p])
                        changed = True
                elif t == "SequenceLength" and v.input(0) in known:
                    c = make_constant(np.array(len(known[v.input(0)]), np.int64), op.location,
                                      "seq_len")
                    op.results[0].replace_all_uses_with(c)
                    changed = True
                elif t == "ConcatFromSequence" and v.input(0) in known:
                    c = _concat(v, known[v.input(0)], opset)
                    if c is not None:
                        op.results[0].replace_all_uses_with(c)
                        changed = True
    return changed
