"""ONNX-level graph rewrites run at -O2/-O3, after shape inference and
before lowering (``onnx_mlir_py.compiler.lower`` runs ``optimize-onnx`` at -O2 and -O3).

    fold-bn-into-conv        BatchNormalization (inference) after a Conv with
                             constant weights -> new Conv weights and bias
    fold-affine-into-conv    per-channel Mul/Div/Add/Sub constants after a Conv
    fuse-matmul-bias         MatMul + constant-bias Add -> Gemm
    merge-transposes         Transpose pairs composed / identity removed
    merge-reshapes           reshape-like pairs -> one Reshape
    remove-identity-like     Reshape/Expand/Cast/... to the same type removed
    pretranspose-gemm-weights  Gemm transA/transB on constants done at compile time
    fold-constant-transposes Transpose of a constant (any size) -> constant
    fuse-qdq-conv            Q(Conv(DQ, DQ, DQ)) [with a ReLU] -> QLinearConv, when the
                             -O3 target has int8 kernels (module attribute int8_kernels)
    fuse-qdq-maxpool         Q(MaxPool(DQ(xq))) of one scale and zero point -> MaxPool(xq)
    fold-constant-dequantize DequantizeLinear of constants (QDQ weights) -> f32 constant
    fuse-attention           MatMul / scale / mask Add / Softmax / MatMul -> Attention
    pow-to-mul               Pow(x, 2 | 3 | 4) of a float x -> Muls (no powf call)
    channels-last-convs      Conv -> Transpose . NhwcConv . Transpose, the transposes
                             pushed through the elementwise ops and GlobalAveragePool
                             until they cancel, when the module is bf16 and the -O3
                             target has AMX-BF16 (module attribute amx_bf16)

Each pass is ``module -> number of rewrites``; ``optimize_onnx`` repeats them
until nothing changes, then deletes dead ops (canonicalize-onnx). The LATE
ones join only once the others are at that fixed point (channels-last-convs:
the folds into Conv first).
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.passes.canonicalize import canonicalize_onnx
from onnx_mlir_py.passes.optimize_onnx.attention import fuse_attention
from onnx_mlir_py.passes.optimize_onnx.channels_last import channels_last_convs
from onnx_mlir_py.passes.optimize_onnx.conv_fold import (fold_affine_into_conv,
                                                         fold_batchnorm_into_conv)
from onnx_mlir_py.passes.optimize_onnx.matmul_bias import fuse_matmul_bias
from onnx_mlir_py.passes.optimize_onnx.pow_mul import pow_to_mul
from onnx_mlir_py.passes.optimize_onnx.quantize import (fold_constant_dequantize, fuse_qdq_conv,
                                                        fuse_qdq_gemm, fuse_qdq_maxpool)
from onnx_mlir_py.passes.optimize_onnx.reshape_chains import (merge_reshapes, merge_transposes,
                                                              remove_identity_like)
from onnx_mlir_py.passes.optimize_onnx.weight_layout import (fold_constant_transposes,
                                                             pretranspose_gemm_weights)

REWRITES = {
    "fuse-qdq-conv": fuse_qdq_conv,
    "fuse-qdq-gemm": fuse_qdq_gemm,
    "fuse-qdq-maxpool": fuse_qdq_maxpool,
    "fold-constant-dequantize": fold_constant_dequantize,
    "remove-identity-like": remove_identity_like,
    "merge-transposes": merge_transposes,
    "merge-reshapes": merge_reshapes,
    "fold-bn-into-conv": fold_batchnorm_into_conv,
    "fold-affine-into-conv": fold_affine_into_conv,
    "fuse-matmul-bias": fuse_matmul_bias,
    "pretranspose-gemm-weights": pretranspose_gemm_weights,
    "fold-constant-transposes": fold_constant_transposes,
    "fuse-attention": fuse_attention,
    "pow-to-mul": pow_to_mul,
    "channels-last-convs": channels_last_convs,
}
LATE = ("channels-last-convs",)
MAX_ROUNDS = 8


def run_rewrite(name: str, module: ir.Module) -> None:
    """One rewrite as a pipeline pass (with dead-op removal after it)."""
    REWRITES[name](module)
    canonicalize_onnx(module)


def optimize_onnx(module: ir.Module) -> dict[str, int]:
    """All rewrites to a fixed point; returns the number of rewrites per pass."""
    counts = {name: 0 for name in REWRITES}

    def one_round(names) -> int:
        changed = 0
        for name in names:
            n = REWRITES[name](module)
            counts[name] += n
            changed += n
            if n:
                canonicalize_onnx(module)
        return changed

    names = [name for name in REWRITES if name not in LATE]
    with module.context, ir.Location.unknown():
        for _ in range(MAX_ROUNDS):
            if not one_round(names):
                if len(names) == len(REWRITES) or not one_round(LATE):
                    break
                names = list(REWRITES)
    return counts


__all__ = ["REWRITES", "optimize_onnx", "run_rewrite"]
