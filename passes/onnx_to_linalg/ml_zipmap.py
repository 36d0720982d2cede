"""ZipMap: on a graph output it is removed before lowering (ml_outputs.py:
the library returns the scores, the Python runtime the dicts); the lowering
rule only refuses a ZipMap anywhere else, naming the node."""
from __future__ import annotations

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.ml_zipmap import ML
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext


@lowering("ZipMap", 1, domain=ML)
def lower_zipmap(op: OnnxOp, b: LoweringContext):
    op.fail("ZipMap is supported only directly on a graph output (its sequence of maps is "
            "made by the Python runtime); export with options={'zipmap': False}")
