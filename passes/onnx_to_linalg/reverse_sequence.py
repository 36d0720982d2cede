"""ReverseSequence: one linalg.generic over the output; element [.., t, ..]
of batch entry b reads the input at time ``len[b] - 1 - t`` when
``t < len[b]``, else at ``t``. The lengths are range-checked first (0 to the
time axis' size, index_bounds.py) and their count against the batch dim.
"""
from __future__ import annotations

from mlir.dialects import arith, tensor

from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import require_same_dim
from onnx_mlir_py.passes.onnx_to_linalg.index_bounds import require_indices
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import loop_index, to_index
from onnx_mlir_py.registry import lowering


@lowering("ReverseSequence", 10, 28)
def lower_reverse_sequence(op: OnnxOp, b: LoweringContext):
    x, lens = op.input(0), op.input(1)
    r = b.ranked(op, x).rank
    b.ranked(op, lens, "sequence_lens")
    ba, ta = op.attrs.batch_axis, op.attrs.time_axis
    dims = b.dims(x)
    require_same_dim(op, b, lens, 0, x, ba, "sequence_lens", "input")
    require_indices(op, b, lens, dims[ta], f"time axis {ta}", what="sequence length",
                    negative=False, inclusive=True)

    def body(n, _o):
        t, n = loop_index(ta), to_index(n)
        inside = arith.cmpi(arith.CmpIPredicate.ult, t, n)
        rev = arith.subi(arith.subi(n, b.index(1)), t)
        idx = [loop_index(k) for k in range(r)]
        idx[ta] = arith.select(inside, rev, t)
        return tensor.extract(x, idx)
    init = b.empty(dims, x.type.element_type)
    maps = [affine_map(r, [ba]), affine_map(r, list(range(r)))]
    return [b.generic([lens], [init], maps, ["parallel"] * r, body)[0]]
