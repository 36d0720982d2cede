"""MatMul followed by Add of a constant bias -> one Gemm (bias as C).

The Gemm lowering (``onnx_to_linalg/gemm.py``) emits ``linalg.matmul`` and
the bias as an elementwise epilogue over the matmul result, so the pair
stays together in one op for the kernel schedules. MatMul with a 2-D A
becomes ``Gemm(A, B, C)``; an N-D A (static leading dims) times a 2-D B is
wrapped in Reshapes, which lower to free collapse/expand_shape:

    Add(MatMul(A[..., K], B[K, N]), c)   c broadcasts to (..., N)
        => Reshape(Gemm(Reshape(A, [M, K]), B, c'), [..., N])

Legal when the MatMul result has no other use, the bias is constant, and the
Add result has the MatMul result's type (the bias does not grow it).
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.optimize_onnx.ir_util import (constant_values, create_op, is_constant,
                                                       lowerable_spec, make_constant, module_opset,
                                                       n_uses, onnx_ops, producer_view, replace,
                                                       static_shape)


def _bias_for_gemm(c: ir.Value, out_shape: tuple) -> tuple[ir.Value | None, bool]:
    """(value to use as C, whether a new constant is needed): C must be
    unidirectionally broadcastable to (M, N)."""
    cs = OnnxOp.shape(c)
    if cs is None or None in cs:
        return None, False
    n = out_shape[-1]
    if len(out_shape) == 2 and len(cs) <= 2:
        return c, False
    full = (1,) * (len(out_shape) - len(cs)) + tuple(cs)
    if any(d != 1 for d in full[:-1]) or full[-1] not in (1, n):
        return None, False
    return c, True


def fuse_matmul_bias(module: ir.Module) -> int:
    count = 0
    opset = module_opset(module)
    gemm = lowerable_spec("Gemm", opset)
    reshape = lowerable_spec("Reshape", opset)
    if gemm is None:
        return 0
    for add in onnx_ops(module, "Add"):
        for mi, ci in ((0, 1), (1, 0)):
            y, c = add.input(mi), add.input(ci)
            mm = producer_view(y, "MatMul")
            if mm is None or n_uses(y) != 1 or not is_constant(c):
                continue
            if str(add.op.results[0].type) != str(y.type):
                continue
            a, w = mm.input(0), mm.input(1)
            sa, sw, so = static_shape(a), static_shape(w), static_shape(y)
            if sa is None or sw is None or so is None or len(sw) != 2 or len(sa) < 2:
                continue
            et = y.type.element_type
            if not isinstance(et, (ir.F32Type, ir.F64Type, ir.F16Type)):
                continue
            c_use, flatten = _bias_for_gemm(c, so)
            if c_use is None or (len(sa) > 2 and reshape is None):
                continue
            loc = add.op.location
            with ir.InsertionPoint(add.op), loc:
                if flatten:
                    cv = constant_values([c])[0]
                    if cv is None:
                        continue
                    c_use = make_constant(cv.reshape(-1), loc, "gemm_c")
                m = int(np.prod(sa[:-1]))
                a2 = a
                if len(sa) > 2:
                    shape = make_constant(np.array([m, sa[-1]], np.int64), loc, "shape")
                    a2 = create_op(reshape, [a, shape],
                                   [ir.RankedTensorType.get([m, sa[-1]], a.type.element_type)],
                                   {}, loc).results[0]
                g = create_op(gemm, [a2, w, c_use], [ir.RankedTensorType.get([m, so[-1]], et)],
                              {}, loc).results[0]
                if len(sa) > 2:
                    shape = make_constant(np.array(so, np.int64), loc, "shape")
                    g = create_op(reshape, [g, shape], [y.type], {}, loc).results[0]
            replace(add.op, g)
            if n_uses(y) == 0:
                mm.op.erase()
            count += 1
            break
    return count
