"""TensorScatter (KV-cache update): ``update`` written into ``past_cache``
along the sequence axis ``axis`` at ``write_indices[b] + i`` per batch
entry ``b`` (modulo the cache's sequence length in mode "circular").
Result: the past cache's type. Verifier: axis a non-batch axis, mode
linear|circular, ``update`` of the cache's rank with equal non-axis dims and
at most the cache's sequence length, ``write_indices`` 1-D of batch size.
Lowering: ``passes/onnx_to_linalg/tensor_scatter.py``.
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp

VERSIONS = (24,)


def mode_of(op: OnnxOp) -> str:
    m = op.attrs.mode
    return m.decode() if isinstance(m, bytes) else m


@shape_rule("TensorScatter", *VERSIONS)
def _tensor_scatter_shape(op: OnnxOp):
    t = op.input(0).type
    return [t if op.elem(op.input(0)) is not None else None]


@verifier("TensorScatter", *VERSIONS)
def _verify(op: OnnxOp):
    mode = mode_of(op)
    if mode not in ("linear", "circular"):
        op.fail(f"attribute 'mode' = '{mode}': expected 'linear' or 'circular'")
    cs, us = op.shape(op.input(0)), op.shape(op.input(1))
    r = len(cs) if cs is not None else None
    axis = op.attrs.axis
    if r is not None:
        if r < 2 or not -r < axis < r or axis in (0, -r):
            op.fail(f"attribute 'axis' = {axis}: expected a value in [{1 - r}, {r - 1}] "
                    f"other than 0 (the batch axis) for past_cache of rank {r}")
        axis %= r
    if cs is not None and us is not None:
        if len(us) != r:
            op.fail(f"update has rank {len(us)} but past_cache has rank {r}")
        for k, (c, u) in enumerate(zip(cs, us)):
            if c is None or u is None:
                continue
            if k != axis and c != u:
                op.fail(f"update dim {k} is {u} but past_cache dim {k} is {c}; "
                        "they must be equal")
            if k == axis and u > c:
                op.fail(f"update's sequence length {u} (axis {k}) exceeds past_cache's "
                        f"{c}")
    if op.input(2) is not None:
        ws = op.shape(op.input(2))
        if ws is not None and len(ws) != 1:
            op.fail(f"write_indices must be 1-D, got shape {list(ws)}")
        if ws is not None and cs is not None and None not in (ws[0], cs[0]) \
                and ws[0] != cs[0]:
            op.fail(f"write_indices has {ws[0]} elements for a batch of {cs[0]}")
