"""RoiAlign: [num_rois, C, output_height, output_width] (lowering:
passes/onnx_to_linalg/roi_align.py)."""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.common import fmt, single_result


def _roi_align(op: OnnxOp):
    x, rois = op.shape(op.input(0)), op.shape(op.input(1))
    return (rois[0] if rois else None, x[1] if x else None,
            op.attrs.output_height, op.attrs.output_width)


shape_rule("RoiAlign", 10, 16, 22)(single_result(_roi_align))


def coordinate_mode(op: OnnxOp) -> str:
    """v10 has no attribute: its behaviour is 'output_half_pixel' (onnxruntime)."""
    return "output_half_pixel" if op.version < 16 else op.attrs.coordinate_transformation_mode


@verifier("RoiAlign", 10, 16, 22)
def _roi_align_verify(op: OnnxOp):
    if op.attrs.mode not in ("avg", "max"):
        op.fail(f"attribute 'mode' = '{op.attrs.mode}': expected 'avg' or 'max'")
    cm = coordinate_mode(op)
    if cm not in ("half_pixel", "output_half_pixel"):
        op.fail(f"attribute 'coordinate_transformation_mode' = '{cm}': expected "
                "'half_pixel' or 'output_half_pixel'")
    for name in ("output_height", "output_width"):
        if getattr(op.attrs, name) < 1:
            op.fail(f"attribute '{name}' = {getattr(op.attrs, name)}: expected >= 1")
    if op.attrs.sampling_ratio < 0:
        op.fail(f"attribute 'sampling_ratio' = {op.attrs.sampling_ratio}: expected >= 0")
    x, rois, bi = (op.shape(op.input(k)) for k in range(3))
    if x is not None and len(x) != 4:
        op.fail(f"input 'X' has shape {fmt(x)}: expected [N, C, H, W]")
    if rois is not None and (len(rois) != 2 or rois[1] not in (None, 4)):
        op.fail(f"input 'rois' has shape {fmt(rois)}: expected [num_rois, 4]")
    if bi is not None and len(bi) != 1:
        op.fail(f"input 'batch_indices' has shape {fmt(bi)}: expected [num_rois]")
    if rois and bi and None not in (rois[0], bi[0]) and rois[0] != bi[0]:
        op.fail(f"rois has {rois[0]} rois but batch_indices has {bi[0]} entries")
