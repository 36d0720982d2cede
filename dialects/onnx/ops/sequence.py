"""Sequence and Optional values: SequenceEmpty / Construct / Insert / Erase /
At / Length, ConcatFromSequence, SplitToSequence, Optional /
OptionalHasElement / OptionalGetElement: element types and shapes as the
ONNX spec states them (``!onnx.seq<T>``, ``!onnx.opt<T>``). SequenceMap has
no rule: expand-functions replaces it by its ONNX function body (a Loop over
the elements). Lowering: ``passes/onnx_to_linalg/sequence.py``.
"""
from __future__ import annotations

import mlir.ir as ir
import onnx

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import const_ints, i64, norm_axis
from onnx_mlir_py.dialects.onnx.ops.control_flow import (known, merge, opt_elem, opt_of,
                                                         seq_elem, seq_of)


# -- verifiers -----------------------------------------------------------------------

def _elem_type(t: ir.Type | None) -> str | None:
    """Element type of a (known) tensor type, as text."""
    return str(t.element_type) if known(t) and isinstance(t, ir.ShapedType) else None


def _check_position(op: OnnxOp, i: int) -> None:
    """A position input is a scalar (onnxruntime also takes one element of
    rank 1); anything else would read a value that is not there."""
    p = op.input(i)
    if p is None:
        return
    s = op.shape(p)
    if s is not None and s not in ((), (1,), (None,)):     # [?]: checked at run time
        op.fail(f"position must be a scalar, got shape {list(s)}")


@verifier("SequenceInsert", 11)
def _seq_insert_verify(op: OnnxOp):
    a, b = _elem_type(seq_elem(op.input(0).type)), _elem_type(op.input(1).type)
    if a is not None and b is not None and a != b:
        op.fail(f"inserts a tensor of {b} into a sequence of {a} tensors")
    _check_position(op, 2)


@verifier("SequenceAt", 11)
def _seq_at_verify(op: OnnxOp):
    _check_position(op, 1)


@verifier("SequenceErase", 11)
def _seq_erase_verify(op: OnnxOp):
    _check_position(op, 1)


@verifier("SplitToSequence", 11, 24)
def _split_to_seq_verify(op: OnnxOp):
    s = op.shape(op.input(0))
    if s is not None:
        norm_axis(op, op.attrs.axis, len(s))
    split = op.input(1)
    if split is not None and op.rank(split) is not None and op.rank(split) > 1:
        op.fail(f"split must be a scalar or 1-D, got rank {op.rank(split)}")


# -- Optional ------------------------------------------------------------------------

@shape_rule("Optional", 15, 28)
def _optional_shape(op: OnnxOp):
    x = op.input(0)
    if x is not None:
        return [opt_of(x.type) if known(x.type) else None]
    t = op.attrs.type
    return [opt_of(t)] if isinstance(t, ir.Type) and known(t) else [None]


@shape_rule("OptionalHasElement", 15, 18, 28)
def _has_element_shape(op: OnnxOp):
    return [tensor((), ir.IntegerType.get_signless(1))]


@shape_rule("OptionalGetElement", 15, 18, 28)
def _get_element_shape(op: OnnxOp):
    t = op.input(0).type
    inner = opt_elem(t)
    if inner is not None:
        return [inner if known(inner) else None]
    return [t if known(t) else None]


# -- Sequences -----------------------------------------------------------------------

def _elem_of_dtype(op: OnnxOp, code: int) -> ir.Type:
    from onnx_mlir_py.dialects.onnx.ops.common import dtype_attr
    return dtype_attr(op, "dtype", code)


@shape_rule("SequenceEmpty", 11)
def _seq_empty_shape(op: OnnxOp):
    code = op.attrs.dtype if op.attrs.dtype is not None else onnx.TensorProto.FLOAT
    return [seq_of(tensor(None, _elem_of_dtype(op, code)))]


@shape_rule("SequenceConstruct", 11)
def _seq_construct_shape(op: OnnxOp):
    ts = [v.type for v in op.variadic()]
    t = ts[0] if ts else None
    for u in ts[1:]:
        t = merge(t, u)
    return [seq_of(t) if known(t) else None]


@shape_rule("SequenceInsert", 11)
def _seq_insert_shape(op: OnnxOp):
    e = seq_elem(op.input(0).type)
    t = op.input(1).type
    if not known(t):
        return [None]
    if e is None or not known(e):
        return [seq_of(t)] if e is not None else [None]
    m = merge(e, t)
    if m is None and isinstance(t, ir.ShapedType):
        m = tensor(None, t.element_type)
    return [seq_of(m) if m is not None else None]


@shape_rule("SequenceErase", 11)
def _seq_erase_shape(op: OnnxOp):
    t = op.input(0).type
    return [t if known(t) else None]


@shape_rule("SequenceAt", 11)
def _seq_at_shape(op: OnnxOp):
    e = seq_elem(op.input(0).type)
    return [e if known(e) else None]


@shape_rule("SequenceLength", 11)
def _seq_length_shape(op: OnnxOp):
    return [tensor((), i64())]


@shape_rule("ConcatFromSequence", 11)
def _concat_from_seq_shape(op: OnnxOp):
    e = seq_elem(op.input(0).type)
    if not known(e) or not isinstance(e, ir.ShapedType):
        return [None]
    s = OnnxOp.shape_of_type(e)
    if s is None:
        return [tensor(None, e.element_type)]
    new_axis = op.attrs.new_axis
    r = len(s) + (1 if new_axis else 0)
    a = norm_axis(op, op.attrs.axis, r)
    if new_axis:
        return [tensor(s[:a] + (None,) + s[a:], e.element_type)]
    return [tensor(s[:a] + (None,) + s[a + 1:], e.element_type)]


@shape_rule("SplitToSequence", 11, 24)
def _split_to_seq_shape(op: OnnxOp):
    x = op.input(0)
    et, s = op.elem(x), op.shape(x)
    if et is None:
        return [None]
    if s is None:
        return [seq_of(tensor(None, et))]
    a = norm_axis(op, op.attrs.axis, len(s))
    split = op.input(1)
    if split is None:
        keep = op.attrs.keepdims
        dims = s[:a] + ((1,) if keep else ()) + s[a + 1:]
        return [seq_of(tensor(dims, et))]
    c = const_ints(split)
    d = None
    if c is not None and len(c) == 1 and op.rank(split) == 0 and s[a] is not None \
            and c[0] > 0 and s[a] % c[0] == 0:
        d = c[0]
    elif c is not None and len(set(c)) == 1 and op.rank(split) == 1:
        d = c[0]
    return [seq_of(tensor(s[:a] + (d,) + s[a + 1:], et))]
