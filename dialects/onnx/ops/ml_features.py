"""ArrayFeatureExtractor (ai.onnx.ml v1): Y = X[..., indices] (indices read
flat); a 1-D X gives [1, len(indices)], as onnxruntime."""
from __future__ import annotations

import math

from onnx_mlir_py.registry import shape_rule
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.common import single_result

ML = "ai.onnx.ml"


def _afe(op: OnnxOp):
    x, y = op.shape(op.input(0)), op.shape(op.input(1))
    if x is None:
        return None
    k = None if y is None or None in y else math.prod(y)
    return (1, k) if len(x) == 1 else x[:-1] + (k,)


shape_rule("ArrayFeatureExtractor", 1, domain=ML)(single_result(_afe))
