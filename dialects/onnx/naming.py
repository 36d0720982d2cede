"""ONNX names -> the lowercase names IRDL requires.

IRDL (MLIR 22) only accepts lowercase dialect, op and operand names, so every
ONNX name goes through one documented, injective mapping:

* op types: CamelCase -> snake_case (``BatchNormalization`` ->
  ``batch_normalization``, ``MatMulInteger`` -> ``mat_mul_integer``), with a
  small table of exceptions for acronyms that the rule would split badly
  (``IsNaN`` -> ``is_nan``).
* older opset versions of an op get the suffix ``_v<since_version>``
  (``Softmax`` opset 11 -> ``onnx.softmax_v11``); the newest version keeps
  the plain name.
* domains map to dialects: ``ai.onnx`` (and ``""``) -> ``onnx``,
  ``ai.onnx.ml`` -> ``onnx_ml``, ``ai.onnx.preview.training`` ->
  ``onnx_training``, ``ai.onnx.preview`` -> ``onnx_preview``, and
  onnxruntime's contrib domain ``com.microsoft`` -> ``com_microsoft``.
* operand, result and region names are lowercased and sanitised to
  identifiers (``X`` -> ``x``, ``initial_h`` -> ``initial_h``).

``test/python/test_naming.py`` checks that the mapping is injective over all
schemas.
"""
from __future__ import annotations

import re

DOMAIN_TO_DIALECT = {
    "": "onnx",
    "ai.onnx": "onnx",
    "ai.onnx.ml": "onnx_ml",
    "ai.onnx.preview.training": "onnx_training",
    "ai.onnx.preview": "onnx_preview",
    "com.microsoft": "com_microsoft",
}
DIALECT_TO_DOMAIN = {"onnx": "", "onnx_ml": "ai.onnx.ml",
                     "onnx_training": "ai.onnx.preview.training",
                     "onnx_preview": "ai.onnx.preview",
                     "com_microsoft": "com.microsoft"}

# Domains whose schemas come from onnxruntime (its contrib ops) instead of
# onnx.defs, and the contrib ops onnxruntime registers in the default domain
# that onnx.defs lacks (its transformer optimizer writes them).
ORT_DOMAINS = ("com.microsoft",)
ORT_DEFAULT_DOMAIN_OPS = ("SimplifiedLayerNormalization",)

# Op types the generic CamelCase rule would split badly.
OP_NAME_EXCEPTIONS = {
    "IsNaN": "is_nan",
    "IsInf": "is_inf",
    "BitShift": "bit_shift",
}

_CAMEL1 = re.compile(r"([A-Z]+)([A-Z][a-z])")
_CAMEL2 = re.compile(r"([a-z0-9])([A-Z])")


def snake_op_name(op_type: str) -> str:
    """``BatchNormalization`` -> ``batch_normalization``."""
    if op_type in OP_NAME_EXCEPTIONS:
        return OP_NAME_EXCEPTIONS[op_type]
    s = _CAMEL1.sub(r"\1_\2", op_type)
    s = _CAMEL2.sub(r"\1_\2", s)
    return s.lower()


def mlir_op_name(domain: str, op_type: str, since_version: int | None = None) -> str:
    """Full MLIR op name; ``since_version`` set only for older versions."""
    dialect = DOMAIN_TO_DIALECT[domain]
    base = snake_op_name(op_type)
    if since_version is not None:
        base = f"{base}_v{since_version}"
    return f"{dialect}.{base}"


def value_name(onnx_name: str) -> str:
    """Operand/result/region name as IRDL accepts it."""
    s = re.sub(r"[^0-9a-z]+", "_", onnx_name.lower())
    s = re.sub(r"_+", "_", s).strip("_")  # IRDL: no leading/double underscores
    if not s or s[0].isdigit():
        s = "v_" + s
    return s
