"""Expand (numpy broadcast of the input to a shape operand) and Tile.

``expand_dims`` / ``tile_dims`` are the shape logic, shared by the shape
rules (operand elements from ``int_values``: ints or ``UNKNOWN``) and the
lowerings (constants or run-time values, checks in the compiled code).
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.common import int_values, single_result
from onnx_mlir_py.dialects.onnx.ops.reshape import fmt_dims, fmt_target


def expand_dims(ctx: D.ShapeChecks, in_dims: list, shape: list) -> list:
    """Result dims of Expand: ``in_dims`` and ``shape`` right-aligned and
    broadcast (each pair equal, or one of them 1); shape dims are >= 0."""
    r = max(len(in_dims), len(shape))
    a = [1] * (r - len(in_dims)) + list(in_dims)
    s = [1] * (r - len(shape)) + list(shape)
    si, st = fmt_dims(in_dims), fmt_target(shape)
    out = []
    for k in range(r):
        ctx.require(D.ge(s[k], 0), f"shape {st} has a negative dim {{0}}", s[k])
        ctx.require(D.either(D.either(D.eq(a[k], 1), D.eq(s[k], 1)), D.eq(a[k], s[k])),
                    f"input {si} cannot be expanded to shape {st}: dim {k} of the result "
                    f"is {{0}} vs {{1}}", a[k], s[k])
        same = s[k] if D.is_static(s[k]) else a[k]      # a == s unless one is 1
        out.append(D.select(D.eq(s[k], 1), a[k], D.select(D.eq(a[k], 1), s[k], same)))
    return out


def tile_dims(ctx: D.ShapeChecks, in_dims: list, reps: list) -> list:
    """Result dims of Tile: ``in_dims[k] * reps[k]``, repeats >= 0."""
    if len(reps) != len(in_dims):
        ctx.require(False, f"repeats has {len(reps)} elements, expected one per input dim "
                           f"(input {fmt_dims(in_dims)} has rank {len(in_dims)})")
        return [D.UNKNOWN] * len(in_dims)
    for r in reps:
        ctx.require(D.ge(r, 0), f"repeats {fmt_target(reps)} has a negative value {{0}}", r)
    return [d * r for d, r in zip(in_dims, reps)]


def _rules(op_type: str, versions: tuple[int, ...], dims_fn, operand: str,
           rank_if_unknown: bool) -> None:
    """Shape rule and verifier of an op whose result dims are
    ``dims_fn(ctx, input dims, elements of the 1-D operand 1)``; when the
    elements are not known the result has the input's rank if
    ``rank_if_unknown``, else no known rank."""
    def dims(op: OnnxOp, check: bool):
        data = op.shape(op.input(0))
        if data is None:
            return None
        values = int_values(op.input(1))
        if values is None:
            return [None] * len(data) if rank_if_unknown else None
        ctx = D.inference_checks(op) if check else D.ShapeChecks(lambda _m: None)
        return D.to_static(dims_fn(ctx, D.from_static(data), D.from_static(values)))

    def verify(op: OnnxOp):
        r = op.rank(op.input(1))
        if r is not None and r != 1:
            op.fail(f"{operand} must be 1-D, got rank {r}")
        dims(op, True)

    shape_rule(op_type, *versions)(single_result(lambda op: dims(op, False)))
    verifier(op_type, *versions)(verify)


_rules("Expand", (8, 13), expand_dims, "shape input", rank_if_unknown=False)
_rules("Tile", (6, 13), tile_dims, "repeats", rank_if_unknown=True)
