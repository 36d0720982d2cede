"""ArrayFeatureExtractor: Y[..., j] = X[..., indices.flat[j]] (a 1-D X is one
row). The indices are range-checked before the gather (index_bounds.py);
negative indices are refused as onnxruntime does."""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.ml_features import ML
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map
from onnx_mlir_py.passes.onnx_to_linalg.index_bounds import require_indices
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import imul, loop_index


@lowering("ArrayFeatureExtractor", 1, domain=ML)
def lower_array_feature_extractor(op: OnnxOp, b: LoweringContext):
    x, ind = op.input(0), op.input(1)
    r = b.ranked(op, x, "X").rank
    b.ranked(op, ind, "Y")
    if r == 0:
        op.fail("X must have at least one dim")
    last = b.dim(x, r - 1)
    require_indices(op, b, ind, last, f"X axis {r - 1}", negative=False)
    et = x.type.element_type
    out_t = b.result_type(op)
    ind_dims = b.dims(ind)
    k = 1
    for d in ind_dims:
        k = imul(b, k, d)
    lead = b.dims(x)[:-1] if r > 1 else [1]
    dims = lead + [k]
    ix = ir.IndexType.get()

    def body(_o):
        rem, pos = loop_index(len(dims) - 1), []
        for d in reversed(ind_dims):          # the flat position -> indices' coordinates
            pos.insert(0, arith.remui(rem, b.as_index(d)))
            rem = arith.divui(rem, b.as_index(d))
        j = arith.index_cast(ix, tensor.extract(ind, pos))
        idx = [loop_index(i) for i in range(len(dims) - 1)] if r > 1 else []
        return tensor.extract(x, idx + [j])
    y = b.generic([], [b.empty(dims, et)], [affine_map(len(dims), list(range(len(dims))))],
                  ["parallel"] * len(dims), body)[0]
    return [b.cast_to(y, out_t) if y.type != out_t and out_t.rank == len(dims) else y]
