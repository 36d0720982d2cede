"""Refuse tensors whose static size a 64-bit integer cannot hold.

A shape such as ``[2**40, 2**40]`` passes shape inference (dims are plain
int64s) but not codegen: MLIR computes the strides of a buffer as the
product of its static dims in int64 and asserts (``integer overflow in size
computation`` in ``makeCanonicalStridedLayoutExpr``), which kills the
process; allocation sizes are computed in bytes, in int64 too.
:func:`check_sizes` refuses such a tensor first, with one
``CompileError`` line naming the graph input or the node that makes it:

- at the start of ``lower-to-linalg`` (every -O level), on the ONNX IR after
  shape inference: graph inputs and every node result;
- at the start of codegen (``codegen.llvm.emit_mlir_llvm``) on the
  tensor-level module: the buffers the -O3 passes or the lowering made.

The limit is on the product of the static non-zero dims (dynamic dims
count as 1, since that is the stride MLIR computes), times the element's
bytes: at most ``2**63 - 1``.
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.errors import CompileError, node_error
from onnx_mlir_py.ir_util import loc_name, walk_ops

INT64_MAX = 2 ** 63 - 1
# ops whose results the vector dialect defines as vectors or scalars (a
# vector's element is an integer, index or float), never a ranked tensor or
# memref: nothing of theirs to check (the -O3 kernels' bodies: 15,000 of
# the 18,800 ops of ResNet-50's tensor-level module, a Python call each).
# Not vector.transfer_write / vector.mask: on tensors they return one.
_VECTOR_RESULTS = frozenset({
    "vector.broadcast", "vector.extract", "vector.fma", "vector.shuffle",
    "vector.to_elements", "vector.from_elements", "vector.insert", "vector.transfer_read",
    "vector.load", "vector.shape_cast",
    "vector.extract_strided_slice", "vector.insert_strided_slice", "vector.transpose",
    "vector.bitcast", "vector.splat", "vector.outerproduct",
})


def _element_bytes(t: ir.Type) -> int:
    width = getattr(t, "width", None)         # IntegerType, FloatType
    if isinstance(width, int) and width > 0:
        return max(1, (width + 7) // 8)
    if isinstance(t, ir.ComplexType):
        return 2 * _element_bytes(t.element_type)
    return 8                                  # index, strings (pointers), others


def size_problem(shape, elem_bytes: int) -> str | None:
    """Why a tensor of ``shape`` (negative dims: dynamic) and ``elem_bytes``
    bytes per element cannot be compiled, or None."""
    count = 1
    for d in shape:
        if d > 0:
            count *= d
    if count > INT64_MAX:
        return f"{count} elements, more than a 64-bit size can count (at most 2^63-1)"
    if count * elem_bytes > INT64_MAX:
        return f"{count} elements of {elem_bytes} bytes = {count * elem_bytes} bytes, more " \
               "than a 64-bit size can hold (at most 2^63-1)"
    return None


def type_problem(t: ir.Type) -> str | None:
    """:func:`size_problem` of a ranked tensor or memref type, else None."""
    if not isinstance(t, (ir.RankedTensorType, ir.MemRefType)):
        return None
    t = ir.ShapedType(t)
    return size_problem(list(t.shape), _element_bytes(t.element_type))


def _shape_text(t: ir.Type) -> str:
    t = ir.ShapedType(t)
    return "[" + ", ".join("?" if t.is_dynamic_dim(k) else str(t.shape[k])
                           for k in range(t.rank)) + f"] of {t.element_type}"


def _input_names(func: ir.Operation) -> list[str | None]:
    attrs = func.attributes["arg_attrs"] if "arg_attrs" in func.attributes else None
    n = len(func.regions[0].blocks[0].arguments)
    names: list[str | None] = [None] * n
    if attrs is not None:
        for i in range(min(n, len(attrs))):
            d = attrs[i]
            if isinstance(d, ir.DictAttr) and "onnx.name" in d:
                names[i] = ir.StringAttr(d["onnx.name"]).value
    return names


def _op_label(op: ir.Operation) -> tuple[str, str]:
    """(node name, op type) for a message: the ONNX node's own name, or the
    node a lowered op came from (its location)."""
    from onnx_mlir_py.dialects.onnx.opview import OnnxOp, is_onnx_op
    if is_onnx_op(op):
        v = OnnxOp(op)
        return v.name, v.op_type
    return loc_name(op.location) or "?", op.name


def _checked_ops(f: ir.Operation) -> list[ir.Operation]:
    """The ops nested in ``f`` whose results may be tensors or memrefs
    (all but :data:`_VECTOR_RESULTS`), in program order."""
    return walk_ops(f, exclude=_VECTOR_RESULTS)


def check_sizes(module: ir.Module) -> None:
    """CompileError (one line) for the first graph input or op result whose
    static size overflows int64 (see the module docstring)."""
    seen: set = set()           # types already found fine (types are uniqued)
    for f in module.body.operations:
        f = f.operation
        if f.name != "func.func" or not len(f.regions[0].blocks):
            continue
        args = f.regions[0].blocks[0].arguments
        for i, (arg, name) in enumerate(zip(args, _input_names(f))):
            why = type_problem(arg.type)
            if why:
                sym = ir.StringAttr(f.attributes["sym_name"]).value
                who = f"input '{name}'" if name else f"argument {i} of @{sym}"
                raise CompileError(f"{who}: shape {_shape_text(arg.type)} has {why}")
        for op in _checked_ops(f):
            for r in op.results:
                t = r.type
                if t in seen:
                    continue
                why = type_problem(t)
                if why:
                    node, op_type = _op_label(op)
                    raise node_error(CompileError, node, op_type,
                                     f"result {r.result_number} has shape {_shape_text(t)}: "
                                     f"{why}")
                seen.add(t)
