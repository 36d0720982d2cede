"""``OnnxOp``: a typed view of one ONNX-dialect operation for op rules.

    op.spec                 OpSpec (op type, version, inputs, attributes)
    op.name                 node name (from the MLIR location)
    op.input(i)             operand for ONNX input position i, or None if absent
    op.variadic()           operands of the trailing variadic input
    op.attrs.transB         attribute value with the schema default filled in
                            (int, float, str, list, numpy array, or None)
    op.shape(v)             tuple of int|None (None = dynamic dim), or None if
                            the rank is unknown; op.rank(v), op.elem(v)
    op.const(v)             numpy value when v is defined by onnx.constant
    op.fail("...")          raise VerificationError naming the node
Helpers ``tensor(shape, elem)`` build result types for shape rules.
"""
from __future__ import annotations

import sys
import types
from typing import Sequence

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.errors import ShapeInferenceError, VerificationError, node_error
from onnx_mlir_py.ir_dense import dense_to_numpy  # noqa: F401 (re-exported; safe for i1 splats)
from onnx_mlir_py.ir_util import loc_name
from onnx_mlir_py.dialects.onnx.naming import DIALECT_TO_DOMAIN
from onnx_mlir_py.dialects.onnx.schema import VARIADIC, OpSpec, group_values, spec_table

DYN = ir.ShapedType.get_dynamic_size()

# The bindings try ``import mlir.dialects.<namespace>`` each time they wrap an
# op of a dialect they have no Python module for, and a failed import is not
# remembered: with the IRDL ONNX dialects that is a file-system search per op
# visited (most of verify-onnx's time). An empty module, imported once, ends it.
for _ns in DIALECT_TO_DOMAIN:
    sys.modules.setdefault(f"mlir.dialects.{_ns}", types.ModuleType(f"mlir.dialects.{_ns}"))

Shape = tuple  # tuple[int | None, ...]


def owner_op(v: ir.Value | None) -> ir.Operation | None:
    """The operation defining ``v``: None for a block argument (``Value.owner``
    is an OpView for ops of registered dialects, an Operation otherwise, a
    Block for arguments)."""
    if v is None:
        return None
    owner = v.owner
    if isinstance(owner, ir.OpView):
        owner = owner.operation
    return owner if isinstance(owner, ir.Operation) else None


def is_onnx_op(op: ir.Operation) -> bool:
    return op.name.split(".", 1)[0] in DIALECT_TO_DOMAIN


def node_name(op: ir.Operation) -> str:
    return loc_name(op.location) or "<unnamed>"


class AttrView:
    """Attribute access by ONNX name with schema defaults; unknown names are
    a programming error (AttributeError), not a silent None."""

    def __init__(self, op: "OnnxOp"):
        self._op = op

    def __getattr__(self, name: str):
        spec = self._op.spec
        if name not in spec.attributes:
            raise AttributeError(f"{spec.op_type} v{spec.since_version} has no attribute {name!r}")
        attrs = self._op.op.attributes
        if name in attrs:
            return attr_value(attrs[name])
        return spec.attributes[name].default

    def has(self, name: str) -> bool:
        return name in self._op.op.attributes


def attr_value(a: ir.Attribute):
    """MLIR attribute -> plain Python / numpy value."""
    if isinstance(a, ir.IntegerAttr):
        return int(a.value)
    if isinstance(a, ir.FloatAttr):
        return float(a.value)
    if isinstance(a, ir.StringAttr):
        return a.value
    if isinstance(a, (ir.DenseI64ArrayAttr, ir.DenseF32ArrayAttr, ir.DenseI32ArrayAttr,
                      ir.DenseF64ArrayAttr)):
        return list(a)
    if isinstance(a, ir.ArrayAttr):
        return [attr_value(x) for x in a]
    if isinstance(a, ir.DenseElementsAttr):
        return dense_to_numpy(a)
    if isinstance(a, ir.TypeAttr):
        return a.value
    return a


class OnnxOp:
    def __init__(self, op: ir.Operation, spec: OpSpec | None = None):
        self.op = op
        self.spec = spec or spec_table().by_mlir_name[op.name]
        self.attrs = AttrView(self)
        self._groups = None

    # -- identity -------------------------------------------------------------
    @property
    def name(self) -> str:
        return node_name(self.op)

    @property
    def op_type(self) -> str:
        return self.spec.op_type

    @property
    def version(self) -> int:
        return self.spec.since_version

    def fail(self, message: str, cls=VerificationError):
        raise node_error(cls, self.name, self.op_type, message)

    def shape_fail(self, message: str):
        self.fail(message, ShapeInferenceError)

    # -- operands ---------------------------------------------------------------
    def operand_groups(self) -> list[list[ir.Value]]:
        if self._groups is None:
            self._groups = group_values(self.op.attributes, "operandSegmentSizes",
                                        self.spec.inputs, list(self.op.operands))
        return self._groups

    def input(self, i: int) -> ir.Value | None:
        groups = self.operand_groups()
        if i >= len(groups) or not groups[i]:
            return None
        return groups[i][0]

    def variadic(self) -> list[ir.Value]:
        groups = self.operand_groups()
        for v, g in zip(self.spec.inputs, groups):
            if v.option == VARIADIC:
                return g
        return []

    @property
    def results(self) -> list[ir.Value]:
        return list(self.op.results)

    def result_groups(self) -> list[list[ir.Value]]:
        return group_values(self.op.attributes, "resultSegmentSizes", self.spec.outputs,
                            list(self.op.results))

    # -- types ------------------------------------------------------------------
    @staticmethod
    def shape_of_type(t: ir.Type) -> Shape | None:
        if not isinstance(t, ir.RankedTensorType):
            return None
        return tuple(None if t.is_dynamic_dim(i) else d for i, d in enumerate(t.shape))

    @staticmethod
    def shape(v: ir.Value | None) -> Shape | None:
        if v is None:
            return None
        return OnnxOp.shape_of_type(v.type)

    @classmethod
    def rank(cls, v: ir.Value | None) -> int | None:
        s = cls.shape(v)
        return None if s is None else len(s)

    @staticmethod
    def elem(v: ir.Value | None) -> ir.Type | None:
        if v is None or not isinstance(v.type, ir.ShapedType):
            return None
        return v.type.element_type

    @staticmethod
    def const(v: ir.Value | None) -> np.ndarray | None:
        """Value of ``v`` if an ``onnx.constant`` with dense data defines it."""
        owner = owner_op(v)
        if owner is None or owner.name != "onnx.constant" or "value" not in owner.attributes:
            return None
        a = owner.attributes["value"]
        if isinstance(a, ir.DenseElementsAttr):
            return dense_to_numpy(a)
        return None


def tensor(shape: Sequence[int | None] | None, elem: ir.Type) -> ir.Type:
    """Result type for a shape rule: ranked (None dims dynamic) or unranked."""
    if shape is None:
        return ir.UnrankedTensorType.get(elem)
    return ir.RankedTensorType.get([DYN if d is None else int(d) for d in shape], elem)


def is_dense_resource(a: ir.Attribute) -> bool:
    """The bindings do not downcast DenseResourceElementsAttr; test by its
    syntax (cheap: a resource prints as its name, not its data)."""
    return not isinstance(a, ir.DenseElementsAttr) and str(a).startswith("dense_resource<")


def domain_of(op: ir.Operation) -> str:
    return DIALECT_TO_DOMAIN[op.name.split(".", 1)[0]]
