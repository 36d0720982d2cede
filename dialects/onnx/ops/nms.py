"""NonMaxSuppression (10, 11): boxes [B, N, 4], scores [B, C, N] ->
selected_indices [num_selected, 3] (batch, class, box), int64.

num_selected depends on the values (``?`` at compile time). ``nms_dims``
checks the inputs' dims against each other (at compile time where they are
known, in the compiled code otherwise) and gives (B, C, N); at most
B * C * min(N, max_output_boxes_per_class) boxes are selected.
"""
from __future__ import annotations

from onnx_mlir_py.dialects.onnx.types import elem_type
from onnx_mlir_py.registry import shape_rule
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor


def nms_dims(ctx: D.ShapeChecks, boxes: list, scores: list) -> tuple:
    """(B, C, N) from boxes [B, N, 4] and scores [B, C, N], checked."""
    ctx.require(D.eq(boxes[0], scores[0]),
                "boxes have {0} batches but scores have {1}", boxes[0], scores[0])
    ctx.require(D.eq(boxes[1], scores[2]),
                "boxes have {0} boxes per batch but scores have {1}", boxes[1], scores[2])
    ctx.require(D.eq(boxes[2], 4), "boxes must have 4 coordinates, got {0}", boxes[2])
    return boxes[0], scores[1], boxes[1]


@shape_rule("NonMaxSuppression", 10, 11)
def _nms_shape(op: OnnxOp):
    boxes, scores = op.shape(op.input(0)), op.shape(op.input(1))
    for v, what in ((boxes, "boxes"), (scores, "scores")):
        if v is not None and len(v) != 3:
            op.shape_fail(f"{what} must be 3-D, got rank {len(v)}")
    if boxes is not None and scores is not None:
        nms_dims(D.inference_checks(op), D.from_static(boxes), D.from_static(scores))
    return [tensor((None, 3), elem_type(7))]  # [num_selected, 3] int64
