"""Verifiers and shape rules, one module per op family.

Each module registers its rules with ``onnx_mlir_py.registry`` when imported;
this list is the one place that imports them (one line each, easy to grep).
"""
from . import elementwise  # noqa: F401
