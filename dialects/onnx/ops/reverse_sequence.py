"""ReverseSequence: the first ``sequence_lens[b]`` elements along
``time_axis`` of each batch entry ``b`` (along ``batch_axis``) reversed, the
rest copied. Result: the input's type. Verifier: rank >= 2, the two axes
0 and 1 (in either order), ``sequence_lens`` 1-D with one length per batch
entry. Lowering: ``passes/onnx_to_linalg/reverse_sequence.py``.
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.common import same_as_input

VERSIONS = (10, 28)

shape_rule("ReverseSequence", *VERSIONS)(same_as_input)


@verifier("ReverseSequence", *VERSIONS)
def _verify(op: OnnxOp):
    ba, ta = op.attrs.batch_axis, op.attrs.time_axis
    if {ba, ta} != {0, 1}:
        op.fail(f"batch_axis {ba} and time_axis {ta} must be 0 and 1 (in either order)")
    r = op.rank(op.input(0))
    if r is not None and r < 2:
        op.fail(f"input must have rank >= 2, got rank {r}")
    s = op.shape(op.input(1))
    if s is not None and len(s) != 1:
        op.fail(f"sequence_lens must be 1-D, got shape {list(s)}")
    xs = op.shape(op.input(0))
    if s is not None and xs is not None and len(s) == 1 and None not in (s[0], xs[ba]) \
            and s[0] != xs[ba]:
        op.fail(f"sequence_lens has {s[0]} lengths for a batch of {xs[ba]}")
