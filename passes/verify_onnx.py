"""verify-onnx: semantic checks IRDL cannot state, one error per line.

Generic checks for every ONNX op, from the generated spec table:
* operand and result element types are allowed by the schema's type
  constraints (``T: tensor(float16), tensor(float)``), and all values bound
  to one type parameter agree (``Add``: A, B and C have one element type);
* attributes the IRDL does not declare (optional, no default) have the
  right kind.
Then the op's own ``@verifier`` rule, if registered (ranks, attribute
consistency, broadcast compatibility).
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.dialects.onnx.attributes import is_string_tensor_attr
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, domain_of, is_dense_resource, is_onnx_op
from onnx_mlir_py.dialects.onnx.schema import VARIADIC
from onnx_mlir_py.dialects.onnx.types import onnx_type_name
from onnx_mlir_py.registry import lookup

_KIND_CHECK = {
    "int": lambda a: isinstance(a, ir.IntegerAttr),
    "float": lambda a: isinstance(a, ir.FloatAttr),
    "string": lambda a: isinstance(a, ir.StringAttr),
    "ints": lambda a: isinstance(a, ir.DenseI64ArrayAttr),
    "floats": lambda a: isinstance(a, ir.DenseF32ArrayAttr),
    "strings": lambda a: isinstance(a, ir.ArrayAttr),
    "tensor": lambda a: isinstance(a, ir.DenseElementsAttr) or is_dense_resource(a) or
    is_string_tensor_attr(a),
    "type": lambda a: isinstance(a, ir.TypeAttr),
}


def _type_name(t: ir.Type, names: dict | None) -> str | None:
    """The ONNX type name of ``t``, None when it is not inferred yet;
    ``names``: a cache (type -> name) kept over one verify run (a model has
    few distinct types: a 50,000-node chain one)."""
    if names is not None and t in names:
        return names[t]
    if "!onnx.unknown" in str(t) if not isinstance(t, ir.ShapedType) else \
            str(t.element_type) == "!onnx.unknown":
        name = None
    else:
        name = onnx_type_name(t)
    if names is not None:
        names[t] = name
    return name


def check_types(v: OnnxOp, names: dict | None = None) -> None:
    spec = v.spec
    bound: dict[str, tuple[str, str]] = {}
    groups = v.operand_groups()
    res_groups = v.result_groups()
    for what, specs, vals in (("input", spec.inputs, groups), ("output", spec.outputs, res_groups)):
        for vs, group in zip(specs, vals):
            allowed = spec.allowed_types(vs)
            for val in group:
                name = _type_name(val.type, names)
                if name is None:
                    continue  # not inferred yet: nothing to check
                if allowed and name not in allowed:
                    v.fail(f"{what} '{vs.onnx_name}' has type {name}, expected one of "
                           f"{', '.join(allowed)}")
                if vs.type_str in spec.type_constraints and vs.homogeneous:
                    prev = bound.setdefault(vs.type_str, (name, vs.onnx_name))
                    if prev[0] != name:
                        v.fail(f"{what} '{vs.onnx_name}' has type {name} but "
                               f"'{prev[1]}' has {prev[0]} (both are {vs.type_str})")


def check_attribute_kinds(v: OnnxOp) -> None:
    for name, aspec in v.spec.attributes.items():
        if name in v.op.attributes:
            check = _KIND_CHECK.get(aspec.kind)
            if check and not check(v.op.attributes[name]):
                v.fail(f"attribute '{name}' must be {aspec.kind}, got "
                       f"{v.op.attributes[name]}")


def verify_op(op: ir.Operation, names: dict | None = None) -> None:
    """``names``: :func:`_type_name`'s cache."""
    v = OnnxOp(op)
    check_attribute_kinds(v)
    check_types(v, names)
    rule = lookup("verify", domain_of(op), v.op_type, v.version)
    if rule is not None:
        rule(v)


def verify_onnx(module: ir.Module) -> None:
    """Raise VerificationError (one line, node named) on the first bad op.
    The branches of an If whose condition is not a constant are left to
    shape inference (:func:`verify_nested`, once the condition did not fold:
    a branch never taken is dropped unverified, as no runtime executes it;
    a Squeeze of ``x.shape[-1] == 1`` that a static ``x`` cannot take)."""
    verify_nested(module.operation, {})


def deferred_if(op: ir.Operation) -> bool:
    """An If whose condition may still fold to a constant (its branches are
    verified once shape inference kept it)."""
    return op.name.startswith("onnx.if") and OnnxOp(op).op_type == "If" and \
        not domain_of(op) and OnnxOp.const(op.operands[0]) is None


def verify_nested(root: ir.Operation, names: dict | None = None) -> None:
    """Verify the ONNX ops nested in ``root`` in program order (bodies after
    their op), not into the branches of a :func:`deferred_if`; ``names``:
    :func:`_type_name`'s cache."""
    names = {} if names is None else names
    for region in root.regions:
        for block in region.blocks:
            for op in block.operations:
                op = op.operation
                if is_onnx_op(op):
                    verify_op(op, names)
                    if deferred_if(op):
                        continue
                if len(op.regions):
                    verify_nested(op, names)
