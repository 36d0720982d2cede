"""Fold per-output-channel affine ops after a Conv into its weights and bias.

    Conv(x, W, b) -> BatchNormalization(scale, B, mean, var)   (inference)
        => Conv(x, W * k, (b - mean) * k + B),  k = scale / sqrt(var + eps)
    Conv(x, W, b) -> Mul(c) / Div(c)       => Conv(x, W * c, b * c)   (c per channel)
    Conv(x, W, b) -> Add(c) / Sub(c)       => Conv(x, W, b + c)

Legal when W (and b, if present) and the per-channel operands are constants,
the Conv result has no other use (folding must not change another reader),
and the constant broadcast against the Conv result (N, M, spatial...) varies
along the channel axis only without changing the result's shape or type.
The arithmetic is done in float64 on the constants and stored in the Conv's
element type; new ``onnx.constant`` ops hold the result.
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.optimize_onnx.ir_util import (constant_values, copy_attrs, is_constant,
                                                       make_constant, n_uses, onnx_ops,
                                                       producer_view, replace)

_FLOAT = (np.float16, np.float32, np.float64)


def _foldable_conv(x: ir.Value) -> OnnxOp | None:
    conv = producer_view(x, "Conv")
    if conv is None or n_uses(x) != 1:
        return None
    w, b = conv.input(1), conv.input(2)
    if not is_constant(w) or (b is not None and not is_constant(b)):
        return None
    if not isinstance(x.type, ir.RankedTensorType) or x.type.rank < 3:
        return None
    return conv


def _channel_vector(c: np.ndarray, out_rank: int, m: int) -> np.ndarray | None:
    """A constant broadcast against (N, M, spatial...) -> its (M,) vector,
    or None when it varies along another axis or would grow the result."""
    if c.ndim > out_rank:
        return None
    full = (1,) * (out_rank - c.ndim) + c.shape
    if any(d != 1 for k, d in enumerate(full) if k != 1) or full[1] not in (1, m):
        return None
    return np.broadcast_to(c.reshape(full[1]), (m,)).astype(np.float64)


def _rebuild_conv(conv: OnnxOp, old: ir.Operation, w: np.ndarray, b: np.ndarray) -> None:
    """Replace ``old`` (the op after the conv) by a Conv with new constants."""
    dt = w.dtype
    with ir.InsertionPoint(conv.op), conv.op.location:
        w_new = make_constant(w.astype(dt), conv.op.location, "conv_w")
        b_new = make_constant(b.astype(dt), conv.op.location, "conv_b")
        new = ir.Operation.create(conv.op.name, results=[old.results[0].type],
                                  operands=[conv.input(0), w_new, b_new],
                                  attributes=copy_attrs(conv.op), loc=conv.op.location)
    replace(old, new.results[0])
    if n_uses(conv.op.results[0]) == 0:
        conv.op.erase()


def _weights(conv: OnnxOp) -> tuple[np.ndarray, np.ndarray] | None:
    w, b = conv.input(1), conv.input(2)
    vals = constant_values([w] + ([b] if b is not None else []))
    wv = vals[0]
    if wv is None or wv.dtype.type not in _FLOAT:
        return None
    m = wv.shape[0]
    bv = vals[1] if b is not None else np.zeros((m,), wv.dtype)
    if bv is None or bv.shape != (m,):
        return None
    return wv, bv


def fold_batchnorm_into_conv(module: ir.Module) -> int:
    count = 0
    for bn in onnx_ops(module, "BatchNormalization"):
        if "training_mode" in bn.spec.attributes and bn.attrs.training_mode:
            continue
        if any(n_uses(r) for r in bn.op.results[1:]) or bn.version < 9:
            continue
        conv = _foldable_conv(bn.input(0))
        if conv is None or not all(is_constant(bn.input(i)) for i in range(1, 5)):
            continue
        if str(bn.op.results[0].type) != str(bn.input(0).type):
            continue
        wb = _weights(conv)
        if wb is None:
            continue
        w, b = wb
        m = w.shape[0]
        params = constant_values([bn.input(i) for i in range(1, 5)])
        if any(p is None or p.shape != (m,) for p in params):
            continue
        scale, shift, mean, var = (p.astype(np.float64) for p in params)
        k = scale / np.sqrt(var + float(bn.attrs.epsilon))
        w_new = w.astype(np.float64) * k.reshape((m,) + (1,) * (w.ndim - 1))
        b_new = (b.astype(np.float64) - mean) * k + shift
        _rebuild_conv(conv, bn.op, w_new.astype(w.dtype), b_new.astype(w.dtype))
        count += 1
    return count


def fold_affine_into_conv(module: ir.Module) -> int:
    """Mul/Div/Add/Sub by a per-channel constant right after a Conv."""
    count = 0
    for op_type in ("Mul", "Div", "Add", "Sub"):
        for op in onnx_ops(module, op_type):
            # the Conv operand and the constant; Div/Sub only with the conv first
            order = [(0, 1)] if op_type in ("Div", "Sub") else [(0, 1), (1, 0)]
            for xi, ci in order:
                x, c = op.input(xi), op.input(ci)
                if str(op.op.results[0].type) != str(x.type):
                    continue
                conv = _foldable_conv(x)
                if conv is None or not is_constant(c):
                    continue
                wb = _weights(conv)
                if wb is None:
                    continue
                w, b = wb
                cv = constant_values([c])[0]
                if cv is None or cv.dtype != w.dtype:
                    continue
                vec = _channel_vector(cv, x.type.rank, w.shape[0])
                if vec is None or (op_type == "Div" and not np.all(vec)):
                    continue
                w64, b64 = w.astype(np.float64), b.astype(np.float64)
                if op_type in ("Mul", "Div"):
                    k = vec if op_type == "Mul" else 1.0 / vec
                    w64 = w64 * k.reshape((-1,) + (1,) * (w.ndim - 1))
                    b64 = b64 * k
                else:
                    b64 = b64 + (vec if op_type == "Add" else -vec)
                _rebuild_conv(conv, op.op, w64.astype(w.dtype), b64.astype(w.dtype))
                count += 1
                break
    return count
