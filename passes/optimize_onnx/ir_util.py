"""Small IR helpers shared by the ONNX-level rewrites.

* constant values, including ``dense_resource`` initializers (the bindings
  have no accessor for resource blobs: they are read back from the printed
  resource section of a scratch module holding clones of the constant ops,
  all wanted constants in one print);
* creating ``onnx.constant`` ops and ONNX ops of a version the module's opset
  selects (and a lowering rule handles);
* use counts and the ONNX ops of one type.
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
from onnx import numpy_helper

from onnx_mlir_py.dialects.onnx.opview import OnnxOp, is_onnx_op, owner_op
from onnx_mlir_py.dialects.onnx.schema import needs_segments, segment_sizes, spec_table
from onnx_mlir_py.dialects.onnx.attributes import from_value, tensor_attr
from onnx_mlir_py.ir_resources import resource_blobs, resource_name
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.registry import lookup

DEFAULT_OPSET = 17


def onnx_ops(module: ir.Module, op_type: str) -> list[OnnxOp]:
    """ONNX ops of one type (any version, default domain), in program order
    (pre-order: a region body's ops after their op)."""
    specs = {s.mlir_name: s for s in spec_table().versions("", op_type)}
    # the walk selects by name: no view of the other ops (a 50,000-node
    # graph is walked ~25 times by the rewrites)
    return [OnnxOp(op, specs[op.name]) for op in walk_ops(module, specs)]


def n_uses(v: ir.Value) -> int:
    return sum(1 for _ in v.uses)


producer = owner_op        # the op defining a value (None for block arguments)


def producer_view(v: ir.Value | None, op_type: str) -> OnnxOp | None:
    op = producer(v)
    if op is None or not is_onnx_op(op) or op.name not in spec_table().by_mlir_name:
        return None
    view = OnnxOp(op)
    return view if view.op_type == op_type and not view.spec.domain else None


def static_shape(v: ir.Value | None) -> tuple[int, ...] | None:
    s = OnnxOp.shape(v)
    return None if s is None or None in s else s


def same_type(a: ir.Value, b: ir.Value) -> bool:
    return isinstance(a.type, ir.RankedTensorType) and a.type.has_static_shape \
        and str(a.type) == str(b.type)


# -- constants -----------------------------------------------------------------
def _resource_name(v: ir.Value) -> str | None:
    op = producer(v)
    if op is None or op.name != "onnx.constant" or "value" not in op.attributes:
        return None
    return resource_name(op.attributes["value"])


def is_constant(v: ir.Value | None) -> bool:
    op = producer(v)
    return op is not None and op.name == "onnx.constant" and "value" in op.attributes \
        and (OnnxOp.const(v) is not None or _resource_name(v) is not None)


def constant_values(values: list[ir.Value]) -> list[np.ndarray | None]:
    """numpy value of each ``onnx.constant`` result (None if not constant or
    of an element type numpy cannot hold). Resources are read in one print."""
    out: list[np.ndarray | None] = [OnnxOp.const(v) for v in values]
    wanted = [i for i, v in enumerate(values) if out[i] is None and _resource_name(v)]
    if not wanted:
        return out
    blobs = resource_blobs([producer(values[i]) for i in wanted])
    from onnx_mlir_py.dialects.onnx.types import numpy_dtype
    for i in wanted:
        t = values[i].type
        dt = numpy_dtype(t.element_type)
        data = blobs.get(_resource_name(values[i]))
        if data is None or dt is None or np.dtype(dt) == np.bool_:
            continue
        arr = np.frombuffer(data, dtype=dt)
        if arr.size != int(np.prod(t.shape, dtype=np.int64)):
            continue
        out[i] = arr.reshape(list(t.shape)).copy()
    return out


def make_constant(arr: np.ndarray, loc: ir.Location, hint: str = "folded") -> ir.Value:
    """A new ``onnx.constant`` at the current insertion point (large values
    become ``dense_resource`` as the importer makes them)."""
    arr = np.asarray(arr)           # (np.ascontiguousarray would make a 0-d array 1-d)
    attr = tensor_attr(numpy_helper.from_array(arr if arr.flags.c_contiguous else
                                               np.array(arr, order="C")), hint)
    return ir.Operation.create("onnx.constant", results=[attr.type],
                               attributes={"value": attr}, loc=loc).result


# -- new ONNX ops ----------------------------------------------------------------
def module_opset(module_or_op) -> int:
    op = module_or_op.operation if hasattr(module_or_op, "operation") else module_or_op
    while op is not None:
        attrs = op.attributes
        if "onnx.opset_import" in attrs:
            d = attrs["onnx.opset_import"]
            for key in ("ai.onnx", ""):
                try:
                    return int(ir.IntegerAttr(d[key]).value)
                except (KeyError, ValueError, TypeError, IndexError):
                    continue
        parent = op.parent
        op = parent.operation if parent is not None else None
    return DEFAULT_OPSET


def lowerable_spec(op_type: str, opset: int, domain: str = ""):
    """The version of ``op_type`` the opset selects (of ``domain``: for
    com.microsoft, its version 1), if it has shape and lowering rules
    (rewrites never create an op the pipeline cannot take)."""
    spec = spec_table().resolve(domain, op_type, opset if not domain else 1)
    if spec is None or lookup("lower", domain, op_type, spec.since_version) is None \
            or lookup("shape", domain, op_type, spec.since_version) is None:
        return None
    return spec


def schema_attributes(spec, attrs: dict) -> dict:
    """``attrs`` plus the schema defaults of the attributes not given (IRDL
    requires them all)."""
    attributes = {}
    for name, a in spec.attributes.items():
        if name in attrs:
            attributes[name] = attrs[name]
        elif a.has_default:
            attributes[name] = from_value(a.kind, a.default)
    return attributes


def create_op(spec, inputs: list[ir.Value | None], result_types: list[ir.Type],
              attrs: dict, loc: ir.Location) -> ir.Operation:
    """An ONNX op from per-input-position values (None = absent optional);
    schema defaults fill the attributes not given (IRDL requires them all)."""
    attributes = schema_attributes(spec, attrs)
    operands, counts = [], []
    for k, vs in enumerate(spec.inputs):
        x = inputs[k] if k < len(inputs) else None
        counts.append(0 if x is None else 1)
        if x is not None:
            operands.append(x)
    if needs_segments(spec.inputs):
        attributes["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get(
            segment_sizes(spec.inputs, counts))
    if needs_segments(spec.outputs):
        attributes["resultSegmentSizes"] = ir.DenseI32ArrayAttr.get(
            segment_sizes(spec.outputs, [1] * len(result_types)
                          + [0] * (len(spec.outputs) - len(result_types))))
    return ir.Operation.create(spec.mlir_name, results=result_types, operands=operands,
                               attributes=attributes, loc=loc)


def copy_attrs(op: ir.Operation, drop=("operandSegmentSizes", "resultSegmentSizes")) -> dict:
    attrs = op.attributes
    return {name: attrs[name] for name in attrs if name not in drop}


def replace(old: ir.Operation, new_value: ir.Value) -> None:
    """Point the uses of ``old``'s first result at ``new_value``; erase ``old``
    when nothing else uses it (dead producers are left to canonicalize-onnx)."""
    old.results[0].replace_all_uses_with(new_value)
    if all(n_uses(r) == 0 for r in old.results):
        old.erase()


def replace_with_constant(old: ir.Operation, arr: np.ndarray, hint: str) -> None:
    """``old`` (a fold evaluated to ``arr``) replaced by a new ``onnx.constant``
    before it (:func:`make_constant`, :func:`replace`)."""
    with ir.InsertionPoint(old), old.location:
        c = make_constant(arr, old.location, hint)
    replace(old, c)
