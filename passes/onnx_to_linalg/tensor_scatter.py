"""TensorScatter (KV-cache update) -> one parallel linalg.generic over the
present cache (gather form, no scatter loop): element ``[.., j, ..]`` (``j``
on the sequence axis) of batch entry ``b`` takes ``update[.., i, ..]`` with
``i = j - write_indices[b]`` (mode "circular": modulo max_sequence_length)
when ``0 <= i < sequence_length``, else ``past_cache[.., j, ..]``. Each
cache slot is written exactly once, so this is the reference's loop order
(the update's length is checked to be at most the cache's, so circular
writes never overlap).

Checks (naming the node): update's rank and non-axis dims equal the
cache's, sequence_length <= max_sequence_length, write_indices one per
batch entry and, in mode "linear", each in ``[0, max_sequence_length -
sequence_length]`` (index_bounds.py) so that no write lands past the cache.
"""
from __future__ import annotations

from mlir.dialects import arith, tensor

from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.tensor_scatter import VERSIONS, mode_of
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, index_of, require_same_dim
from onnx_mlir_py.passes.onnx_to_linalg.index_bounds import require_indices
from onnx_mlir_py.passes.onnx_to_linalg.loops import if_then_else
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import loop_index, to_index
from onnx_mlir_py.registry import lowering


@lowering("TensorScatter", *VERSIONS)
def lower_tensor_scatter(op: OnnxOp, b: LoweringContext):
    cache, upd, wi = op.input(0), op.input(1), op.input(2)
    r = b.ranked(op, cache, "past_cache").rank
    if b.ranked(op, upd, "update").rank != r:
        op.fail(f"update must have the rank of past_cache ({r})")
    mode = mode_of(op)
    if mode not in ("linear", "circular"):
        op.fail(f"attribute 'mode' = '{mode}': expected 'linear' or 'circular'")
    axis = op.attrs.axis
    if r < 2 or not -r < axis < r or axis in (0, -r):
        op.fail(f"attribute 'axis' = {axis}: expected a value in [{1 - r}, {r - 1}] "
                f"other than 0 (the batch axis) for past_cache of rank {r}")
    axis %= r
    for k in range(r):
        if k != axis:
            require_same_dim(op, b, upd, k, cache, k, "update", "past_cache")
    max_seq, seq = b.ixdim(cache, axis), b.ixdim(upd, axis)
    checks(op, b).require(D.le(seq, max_seq), f"update's sequence length {{0}} (axis {axis}) "
                          "exceeds past_cache's {1}", seq, max_seq)
    if wi is not None:
        if b.ranked(op, wi, "write_indices").rank != 1:
            op.fail("write_indices must be 1-D")
        require_same_dim(op, b, wi, 0, cache, 0, "write_indices", "past_cache")
        if mode == "linear":
            require_indices(op, b, wi, max_seq - seq,
                            f"past_cache axis {axis} of size max_sequence_length minus "
                            "update's sequence_length", what="write index",
                            negative=False, inclusive=True)
    dims = b.dims(cache)
    et = cache.type.element_type
    m_ix, s_ix = b.as_index(index_of(max_seq)), b.as_index(index_of(seq))

    def body(*args):
        w, c = (to_index(args[0]), args[1]) if wi is not None else (None, args[0])
        idx = [loop_index(k) for k in range(r)]   # linalg.index: outside the scf.if
        j = idx[axis]
        i = arith.subi(j, w) if w is not None else j
        if mode == "circular" and w is not None:   # floor modulo: w may be negative
            rem = arith.remsi(i, m_ix)
            neg = arith.cmpi(arith.CmpIPredicate.slt, rem, b.index(0))
            i = arith.select(neg, arith.addi(rem, m_ix), rem)
        inside = arith.cmpi(arith.CmpIPredicate.ult, i, s_ix)   # 0 <= i < seq

        idx[axis] = i

        def read():
            return [tensor.extract(upd, idx)]
        return if_then_else(inside, [et], read, lambda: [c])[0]

    ident = affine_map(r, list(range(r)))
    inputs, maps = [cache], [ident]
    if wi is not None:
        inputs, maps = [wi, cache], [affine_map(r, [0]), ident]
    init = b.empty(dims, et)
    return [b.generic(inputs, [init], maps + [ident], ["parallel"] * r, body)[0]]
