"""Per-feature preprocessing of ai.onnx.ml (v1): Scaler, Normalizer,
Binarizer, Imputer.

* Scaler: (X - offset) * scale, offset/scale one value or one per feature
  (last dim); f32 result.
* Normalizer: each row of a 2-D X divided by its MAX / L1 / L2 norm; f32.
* Binarizer: X > threshold -> 1 else 0, X's type.
* Imputer: values equal to replaced_value (NaN: NaNs) become the imputed
  value of their column (one value, or one per column); X's type.
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import same_as_input

ML = "ai.onnx.ml"


def per_feature(op: OnnxOp, name: str, values, allow_empty: bool = False) -> list:
    """A per-feature attribute: 1 value, or one per feature of X's last dim."""
    values = list(values or [])
    x = op.shape(op.input(0))
    c = x[-1] if x else None
    if not values and not allow_empty:
        op.fail(f"attribute {name} must have 1 value or one per feature")
    if len(values) > 1 and c is not None and len(values) != c:
        op.fail(f"attribute {name} has {len(values)} values for {c} features")
    return values


@shape_rule("Scaler", 1, domain=ML)
def _scaler_shape(op: OnnxOp):
    return [tensor(op.shape(op.input(0)), ir.F32Type.get())]


@verifier("Scaler", 1, domain=ML)
def _scaler_verify(op: OnnxOp):
    per_feature(op, "offset", op.attrs.offset)
    per_feature(op, "scale", op.attrs.scale)


@shape_rule("Normalizer", 1, domain=ML)
def _normalizer_shape(op: OnnxOp):
    return [tensor(op.shape(op.input(0)), ir.F32Type.get())]


@verifier("Normalizer", 1, domain=ML)
def _normalizer_verify(op: OnnxOp):
    if op.attrs.norm not in ("MAX", "L1", "L2"):
        op.fail(f"norm {op.attrs.norm!r} is not one of MAX, L1, L2")
    x = op.shape(op.input(0))
    if x is not None and len(x) not in (1, 2):
        op.fail(f"X must be 1-D or 2-D, got rank {len(x)}")


shape_rule("Binarizer", 1, domain=ML)(same_as_input)
shape_rule("Imputer", 1, domain=ML)(same_as_input)


def imputer_values(op: OnnxOp) -> tuple[list, object]:
    """(imputed values, replaced value) of the attribute kind that is set."""
    f, i = op.attrs.imputed_value_floats, op.attrs.imputed_value_int64s
    if bool(f) == bool(i):
        op.fail("exactly one of imputed_value_floats and imputed_value_int64s must be given")
    if f:
        return per_feature(op, "imputed_value_floats", f), op.attrs.replaced_value_float
    return per_feature(op, "imputed_value_int64s", i), op.attrs.replaced_value_int64


@verifier("Imputer", 1, domain=ML)
def _imputer_verify(op: OnnxOp):
    imputer_values(op)
