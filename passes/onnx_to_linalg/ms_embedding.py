"""com.microsoft EmbedLayerNormalization -> linalg.

    (range checks of the ids, as Gather's: ``index_bounds.require_indices``)
    s[b, t, :] = word[ids[b, t]] + position[p[b, t]] (+ segment[seg[b, t]])
                                          (one generic reading the ids, the
                                           rows by tensor.extract, as Gather)
    mean, var = moments(s) over H         (the normalization lowerings' helper)
    output = (s - mean) * rsqrt(var + epsilon) * gamma + beta
    mask_index[b] = #{t : mask[b, t] == 1} (one reduction; zeros without mask)
    embedding_sum = s

``p`` is position_ids (a [1, S] or run-time batch-1 one broadcast over the
batch) or the sequence index t (then S <= P is checked at run time). Ids
out of their table (negative ones too: onnxruntime fails the run on them)
fail the call with a message naming the node.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, math, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.ms_embedding import INPUTS, MS, OP, embed_checks, present
from onnx_mlir_py.dialects.onnx.ops.normalization import result_slots
from onnx_mlir_py.passes.onnx_to_linalg.broadcast import runtime_broadcast
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks
from onnx_mlir_py.passes.onnx_to_linalg.index_bounds import require_indices
from onnx_mlir_py.passes.onnx_to_linalg.normalization import moments
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import loop_index, to_index


@lowering(OP, 1, domain=MS)
def lower_embed_layer_norm(op: OnnxOp, b: LoweringContext):
    ins = present(op)
    for i, v in ins.items():
        name, rank = INPUTS[i]
        if b.ranked(op, v, name).rank != rank:
            op.fail(f"input '{name}' must have rank {rank}, got {v.type}")
    word = ins[2]
    et = word.type.element_type
    if not isinstance(et, ir.F32Type):
        op.fail(f"word_embedding must be f32 (onnxruntime's CPU kernel), got {word.type}")
    if (1 in ins) != (4 in ins):
        op.fail("segment_ids and segment_embedding must be both present or both absent")
    embed_checks(checks(op, b), {i: b.ixdims(v) for i, v in ins.items()})
    ids, pos = ins[0], ins[3]
    seg_ids, seg, mask, pids = ins.get(1), ins.get(4), ins.get(7), ins.get(8)
    bd, sd = b.dims(ids)
    h = b.dim(word, 1)
    dims = [bd, sd, h]
    # every id within its table (onnxruntime fails the run otherwise)
    require_indices(op, b, ids, b.dim(word, 0), "word_embedding (dim 0)", what="input id",
                    negative=False)
    if seg_ids is not None:
        require_indices(op, b, seg_ids, b.dim(seg, 0), "segment_embedding (dim 0)",
                        what="segment id", negative=False)
    if pids is not None:
        require_indices(op, b, pids, b.dim(pos, 0), "position_embedding (dim 0)",
                        what="position id", negative=False)
    else:
        s_ix, p_ix = b.ixdim(ids, 1), b.ixdim(pos, 0)
        checks(op, b).require(D.le(s_ix, p_ix), "sequence length {0} exceeds "
                              "position_embedding's {1} rows (no position_ids)", s_ix, p_ix)

    ids_map = affine_map(3, [0, 1])
    gins, gmaps = [ids], [ids_map]
    if seg_ids is not None:
        gins, gmaps = gins + [seg_ids], gmaps + [ids_map]
    if pids is not None:
        pids = runtime_broadcast(b, pids, [bd, sd], 2, {1: (pids, 1)})
        one = not pids.type.is_dynamic_dim(0) and pids.type.shape[0] == 1 and bd != 1
        gins, gmaps = gins + [pids], gmaps + [affine_map(3, ["0" if one else 0, 1])]

    def gather_sum(*a):
        a = list(a[:-1])
        col = loop_index(2)
        wi = to_index(a.pop(0))
        si = to_index(a.pop(0)) if seg_ids is not None else None
        pi = to_index(a.pop(0)) if pids is not None else loop_index(1)
        acc = arith.addf(tensor.extract(word, [wi, col]), tensor.extract(pos, [pi, col]))
        if si is not None:
            acc = arith.addf(acc, tensor.extract(seg, [si, col]))
        return acc
    full = affine_map(3, [0, 1, 2])
    s = b.generic(gins, [b.empty(dims, et)], gmaps + [full], ["parallel"] * 3, gather_sum)[0]

    slots = result_slots(op)
    outs = {}
    if 0 in slots:
        mean, var = moments(b, s, [2])
        eps = b.const(op.attrs.epsilon, et)
        row, vec = affine_map(3, [0, 1]), affine_map(3, [2])

        def norm(sv, m, va, g, be, _o):
            y = arith.mulf(arith.subf(sv, m), math.rsqrt(arith.addf(va, eps)))
            return arith.addf(arith.mulf(y, g), be)
        outs[0] = b.generic([s, mean, var, ins[5], ins[6]], [b.empty(dims, et)],
                            [full, row, row, vec, vec, full], ["parallel"] * 3, norm)[0]
    if 1 in slots:
        i32 = ir.IntegerType.get_signless(32)
        zeros = b.full([bd], i32, 0)
        if mask is None:
            outs[1] = zeros
        else:
            one, zero = b.const(1, i32), b.const(0, i32)

            def count(mv, acc):
                hit = arith.cmpi(arith.CmpIPredicate.eq, mv, one)
                return arith.addi(acc, arith.select(hit, one, zero))
            outs[1] = b.generic([mask], [zeros], [affine_map(2, [0, 1]), affine_map(2, [0])],
                                ["parallel", "reduction"], count)[0]
    if 2 in slots:
        outs[2] = s
    return [b.cast_to(outs[slot], b.result_type(op, i)) for i, slot in enumerate(slots)]
