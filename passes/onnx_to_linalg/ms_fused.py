"""com.microsoft fused ops: FusedMatMul, FusedConv.

FusedMatMul: each operand that is read reordered (transA/B, transBatchA/B:
``dialects/onnx/ops/ms_fused.py::operand_perm``) becomes a linalg.transpose,
then MatMul's lowering (gemm.py ``_matmul``: matmul / batch_matmul /
broadcasting contraction, f16 accumulated in f32) and, for alpha != 1, one
elementwise scaling generic. The contraction is MatMul's, so -O3 packs it
like a MatMul's (a transposed constant B is folded into the packed weights).

FusedConv: Conv's lowering (conv.py ``convolve``: the conv op + its bias
generic), then ``+ Z`` and the activation as elementwise generics on its
result, in that order: the structure Conv -> Add -> Relu lowers to, which
the -O3 conv kernels take with their epilogues (passes/optimize/epilogue.py).
The activation bodies are unary.py's (Relu, Tanh, Sigmoid, LeakyRelu,
HardSigmoid; Clip: max then min with the constant bounds). f16 is computed
in f32 (conv, Z, activation) and rounded once.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith

from onnx_mlir_py import ir_linalg as linalg
from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.ms_fused import (MS, activation_of, check_elem,
                                                     fused_matmul_flags, operand_perm)
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, val
from onnx_mlir_py.passes.onnx_to_linalg.conv import convolve
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import require_same_dim
from onnx_mlir_py.passes.onnx_to_linalg.gemm import _matmul, is_half, narrow, widen
from onnx_mlir_py.passes.onnx_to_linalg.ms_activation import as_result_shape, unary_body


def _permute(b: LoweringContext, x: ir.Value, perm: list[int] | None) -> ir.Value:
    if perm is None:
        return x
    d = b.dims(x)
    return val(linalg.transpose(x, outs=[b.empty([d[p] for p in perm], x.type.element_type)],
                                permutation=perm))


@lowering("FusedMatMul", 1, domain=MS)
def lower_fused_matmul(op: OnnxOp, b: LoweringContext):
    a, w = op.input(0), op.input(1)
    check_elem(op, b.ranked(op, a).element_type)
    ra, rw = a.type.rank, b.ranked(op, w).rank
    ta, tb, tba, tbb = fused_matmul_flags(op)
    if (tba or tbb) and (ra != rw or ra < 3):
        op.fail(f"transBatchA={int(tba)} / transBatchB={int(tbb)} need inputs of one rank "
                f">= 3, got ranks {ra} and {rw}")
    out_t = b.result_type(op)
    et = out_t.element_type
    alpha = op.attrs.alpha
    half = is_half(et)
    ct = ir.F32Type.get() if half else et
    if half:
        a, w = widen(b, a), widen(b, w)
    a = _permute(b, a, operand_perm(ra, ta, tba))
    w = _permute(b, w, operand_perm(rw, tb, tbb))
    y = _matmul(op, b, a, w, ir.RankedTensorType.get(list(out_t.shape), ct))
    if alpha != 1.0:
        y = b.map_elementwise([y], b.dims(y), ct, lambda s: arith.mulf(s, b.const(alpha, ct)))
    return [narrow(b, y, et) if half else y]


def _activation(op: OnnxOp, name: str, params: list[float]):
    """The scalar body of FusedConv's activation."""
    if name == "LeakyRelu":
        return unary_body(op, name, alpha=params[0])
    if name == "HardSigmoid":
        return unary_body(op, name, alpha=params[0], beta=params[1])
    if name == "Clip":
        lo, hi = params

        def clip(x):
            x = arith.maximumf(x, LoweringContext.const(lo, x.type))
            return arith.minimumf(x, LoweringContext.const(hi, x.type))
        return clip
    return unary_body(op, name)     # Relu, Tanh, Sigmoid


@lowering("FusedConv", 1, domain=MS)
def lower_fused_conv(op: OnnxOp, b: LoweringContext):
    x, w, bias, z = (op.input(i) for i in range(4))
    check_elem(op, b.ranked(op, x).element_type)
    act, params = activation_of(op)
    et = b.result_type(op).element_type
    half = is_half(et)
    ct = ir.F32Type.get() if half else et
    if half:  # f32 accumulation, Z and activation; rounded once (gemm.is_half)
        x, w, bias, z = (widen(b, v) for v in (x, w, bias, z))
    y = convolve(op, b, x, w, bias, ct)
    if z is not None:
        r = y.type.rank
        if b.ranked(op, z).rank != r:
            op.fail(f"input 'Z' has rank {z.type.rank}: expected the output's rank {r}")
        for k in range(r):
            require_same_dim(op, b, z, k, y, k, "Z", "Y")
        z = as_result_shape(op, b, z, y.type)
        y = b.map_elementwise([y, z], b.dims(y), ct, arith.addf)
    if act is not None:
        y = b.map_elementwise([y], b.dims(y), ct, _activation(op, act, params))
    return [narrow(b, y, et) if half else y]
