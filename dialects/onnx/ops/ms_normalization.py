"""SkipLayerNormalization, SkipSimplifiedLayerNormalization (com.microsoft) and
SimplifiedLayerNormalization (onnxruntime's, default domain), as onnxruntime's
CPU kernels define them.

* Skip[Simplified]LayerNormalization: ``input`` [B, S, H] or [T, H]; ``skip``
  of input's shape, or (3-D input) [1, S, H] or [S, H]; gamma, beta, bias
  [H]. Results: output and input_skip_bias_sum have input's shape and type;
  mean and inv_std_var (f32) have input's shape with the last dim 1 (the
  simplified op's mean is all zeros, as onnxruntime writes it).
* SimplifiedLayerNormalization: RMS normalization over dims axis..rank-1;
  ``scale`` broadcasts to X (numpy rules) and has X's element type; Y has
  X's shape and type; inv_std_var (f32: stash_type 1, the only one
  supported) has X's shape with the normalized dims 1.

:func:`skip_checks` and :func:`simplified_checks` run at verification
(static dims) and again in the lowering (run-time dims).
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import fmt
from onnx_mlir_py.dialects.onnx.ops.normalization import result_slots

MS = "com.microsoft"
SKIP_OPS = ("SkipLayerNormalization", "SkipSimplifiedLayerNormalization")
_FLOATS = ("f16", "bf16", "f32")


def skip_params(op: OnnxOp) -> list[tuple[str, ir.Value | None]]:
    """(name, value) of the [H] parameters: gamma, beta (not in the simplified
    op), bias; absent ones are None."""
    names = [i.onnx_name for i in op.spec.inputs]
    return [(n, op.input(names.index(n))) for n in ("gamma", "beta", "bias") if n in names]


def skip_checks(ctx: D.ShapeChecks, x: list, sk: list, params: list) -> None:
    """onnxruntime's shape rules of the skip ops on dims (ints, UNKNOWN or
    run-time values): ``x`` input's dims (rank 2 or 3), ``sk`` skip's,
    ``params`` [(name, length)] of the present 1-D parameters. A 3-D skip
    whose batch is neither 1 nor the input's is refused (onnxruntime reads it
    cyclically)."""
    h = x[-1]
    if len(sk) == len(x):
        start = 0
        if len(x) == 3:
            ctx.require(D.either(D.eq(sk[0], 1), D.eq(sk[0], x[0])),
                        "skip dim 0 is {0}: expected 1 or input's batch size {1}", sk[0], x[0])
            start = 1
        for k in range(start, len(x)):
            ctx.require(D.eq(sk[k], x[k]), f"skip dim {k} is {{0}}: expected input's dim {k} "
                        f"({{1}})", sk[k], x[k])
    else:   # [S, H] against [B, S, H]
        for k in range(2):
            ctx.require(D.eq(sk[k], x[k + 1]), f"skip dim {k} is {{0}}: expected input's dim "
                        f"{k + 1} ({{1}})", sk[k], x[k + 1])
    for name, n in params:
        ctx.require(D.eq(n, h), f"input '{name}' has {{0}} elements: expected hidden size "
                    f"{{1}} (input's last dim)", n, h)


def _skip_verify(op: OnnxOp) -> None:
    x, sk = op.shape(op.input(0)), op.shape(op.input(1))
    et = op.elem(op.input(0))
    if et is not None and str(et) not in _FLOATS:
        op.fail(f"input has element type {et}: expected f32, f16 or bf16")
    for name, v in [("skip", op.input(1))] + skip_params(op):
        if v is not None and op.elem(v) is not None and et is not None and op.elem(v) != et:
            op.fail(f"input '{name}' has element type {op.elem(v)}: expected input's ({et})")
    if x is not None and len(x) not in (2, 3):
        op.fail(f"input 'input' has shape {fmt(x)}: expected rank 2 or 3")
    if sk is not None and len(sk) not in (2, 3):
        op.fail(f"input 'skip' has shape {fmt(sk)}: expected rank 2 or 3")
    if x is not None and sk is not None and len(sk) > len(x):
        op.fail(f"input 'skip' has shape {fmt(sk)}: expected input's shape {fmt(x)}"
                + (", [1, S, H] or [S, H]" if len(x) == 3 else ""))
    params = []
    for name, v in skip_params(op):
        s = op.shape(v)
        if s is not None and len(s) != 1:
            op.fail(f"input '{name}' has shape {fmt(s)}: expected rank 1 (hidden size)")
        if s is not None:
            params.append((name, D.UNKNOWN if s[0] is None else s[0]))
    if x is not None and sk is not None:
        skip_checks(D.inference_checks(op), D.from_static(x), D.from_static(sk), params)


def _skip_shape(op: OnnxOp):
    _skip_verify(op)
    x = op.input(0)
    xs, et = op.shape(x), op.elem(x)
    if et is None:
        return [None] * len(op.results)
    stat = None if xs is None else tuple(xs[:-1]) + (1,)
    f32 = ir.F32Type.get()
    return [tensor(stat, f32) if slot in (1, 2) else tensor(xs, et)
            for slot in result_slots(op)]


for _op in SKIP_OPS:
    verifier(_op, 1, domain=MS)(_skip_verify)
    shape_rule(_op, 1, domain=MS)(_skip_shape)


# -- SimplifiedLayerNormalization (default domain, onnxruntime's) ----------------------

def simplified_checks(ctx: D.ShapeChecks, x: list, s: list) -> None:
    """scale (dims ``s``) broadcasts to X (dims ``x``): each of its dims,
    right-aligned, is 1 or X's."""
    r, sr = len(x), len(s)
    for j in range(sr):
        k = r - sr + j
        ctx.require(D.either(D.eq(s[j], 1), D.eq(s[j], x[k])),
                    f"scale dim {j} is {{0}}: expected 1 or X's dim {k} ({{1}})", s[j], x[k])


def _simplified_axis(op: OnnxOp, r: int) -> int:
    a = op.attrs.axis
    if not -r <= a < r:
        op.fail(f"attribute 'axis' = {a}: expected a value in [{-r}, {r - 1}] for input 'X' "
                f"of rank {r}")
    return a + r if a < 0 else a


@verifier("SimplifiedLayerNormalization", 1)
def _simplified_verify(op: OnnxOp):
    if op.attrs.stash_type != 1:
        op.fail(f"attribute 'stash_type' = {op.attrs.stash_type}: only 1 (float) is "
                f"supported (onnxruntime's CPU kernel)")
    x, s = op.input(0), op.input(1)
    et, st = op.elem(x), op.elem(s)
    if et is not None and st is not None and et != st:
        op.fail(f"input 'scale' has element type {st}: expected X's ({et}), as onnxruntime's "
                f"CPU kernel")
    xs, ss = op.shape(x), op.shape(s)
    if xs is None:
        return
    _simplified_axis(op, len(xs))
    if ss is not None:
        if len(ss) > len(xs):
            op.fail(f"input 'scale' has shape {fmt(ss)}: expected it to broadcast to X's "
                    f"shape {fmt(xs)}")
        simplified_checks(D.inference_checks(op), D.from_static(xs), D.from_static(ss))


@shape_rule("SimplifiedLayerNormalization", 1)
def _simplified_shape(op: OnnxOp):
    _simplified_verify(op)
    x = op.input(0)
    xs, et = op.shape(x), op.elem(x)
    if et is None:
        return [None] * len(op.results)
    out = [tensor(xs, et)]
    if len(op.results) > 1:
        stat = None
        if xs is not None:
            axis = _simplified_axis(op, len(xs))
            stat = tuple(d if k < axis else 1 for k, d in enumerate(xs))
        out.append(tensor(stat, ir.F32Type.get()))
    return out
