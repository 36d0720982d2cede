"""com.microsoft activations: Gelu, BiasGelu, FastGelu, QuickGelu, BiasAdd.

onnxruntime's contrib ops (docs/ContribOperators.md, contrib_ops/cpu/bert/
bias_gelu.cc, activations.h; BiasAdd: contrib_ops/cuda/diffusion/bias_add.cc):

* Gelu(X): the exact (erf) GELU; Y has X's shape.
* BiasGelu(A, B): Gelu(A + B), B 1-D with A's last dim (A rank >= 1).
* FastGelu(X, bias?): the tanh approximation of Gelu(X (+ bias)), bias 1-D
  with X's last dim (X rank >= 1, also without bias: the kernel's check).
* QuickGelu(X; alpha=1.702): X * Sigmoid(alpha * X).
* BiasAdd(X, bias, skip): X + bias + skip, X and skip [N, S, C] of one
  shape, bias [C].

Element types: the ones onnxruntime's CPU provider runs (its kernels, or the
function body it inlines), so each is tested against it: f32 and f16 for all;
f64 for FastGelu and QuickGelu (function bodies; Gelu's and BiasGelu's need
Erf(double), which it lacks). Others (bf16, f64 where it has none) are
refused naming the node.
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import fmt

MS = "com.microsoft"

# element types (MLIR spelling) each op is lowered for
TYPES = {
    "Gelu": ("f32", "f16"),
    "BiasGelu": ("f32", "f16"),
    "FastGelu": ("f32", "f16", "f64"),
    "QuickGelu": ("f32", "f16", "f64"),
    "BiasAdd": ("f32", "f16"),
}
_NAMES = {"f32": "float", "f16": "float16", "f64": "double", "bf16": "bfloat16"}


def check_elem(op: OnnxOp, et) -> None:
    """Refuse an element type the op is not lowered for (``et``: MLIR type or None)."""
    check_elem_in(op, et, TYPES[op.op_type])


def check_elem_in(op: OnnxOp, et, ok: tuple) -> None:
    """Refuse an element type ``et`` not in ``ok`` (MLIR type names), naming
    onnxruntime's CPU types (the contrib ops' families share it)."""
    if et is None:
        return
    if str(et) not in ok:
        op.fail(f"element type {_NAMES.get(str(et), str(et))} is not supported "
                f"(supported: {', '.join(_NAMES[t] for t in ok)}; onnxruntime's CPU "
                f"provider runs no other)")


def _merge(a, b):
    """Two shapes of one tensor (either may be None): the known dims of both."""
    if a is None:
        return b
    if b is None:
        return a
    return tuple(x if x is not None else y for x, y in zip(a, b))


def _check_bias(op: OnnxOp, x, i: int, name: str):
    """Input ``i`` (optional) must be 1-D with X's last dim; returns X's
    shape with its last dim taken from the bias when X's is dynamic."""
    v = op.input(i)
    if v is None:
        return x
    s = op.shape(v)
    if s is None:
        return x
    if len(s) != 1:
        op.fail(f"input '{name}' has shape {fmt(s)}: expected rank 1 (the last dim of "
                f"the input), got rank {len(s)}")
    if x is None or not x:
        return x
    c = x[-1]
    if c is not None and s[0] is not None and s[0] != c:
        op.fail(f"input '{name}' has shape {fmt(s)}: expected {c} elements (the last dim "
                f"of the input {fmt(x)}), got {s[0]}")
    return x[:-1] + (c if c is not None else s[0],)


def _activation(op: OnnxOp):
    """Checks the node; returns the output shape (None: unranked)."""
    x_v = op.input(0)
    check_elem(op, op.elem(x_v))
    x = op.shape(x_v)
    t = op.op_type
    if t in ("BiasGelu", "FastGelu") and x is not None and len(x) < 1:
        op.fail(f"input '{op.spec.inputs[0].onnx_name}' is a scalar: expected rank >= 1 "
                f"(the bias is added along the last dim)")
    if t == "BiasGelu":
        return _check_bias(op, x, 1, "B")
    if t == "FastGelu":
        return _check_bias(op, x, 1, "bias")
    if t == "BiasAdd":
        if x is not None and len(x) != 3:
            op.fail(f"input 'X' has shape {fmt(x)}: expected rank 3 (N, S, C), "
                    f"got rank {len(x)}")
        skip = op.shape(op.input(2))
        if skip is not None:
            if len(skip) != 3:
                op.fail(f"input 'skip' has shape {fmt(skip)}: expected rank 3 (N, S, C), "
                        f"got rank {len(skip)}")
            if x is not None:
                for k, (a, b) in enumerate(zip(x, skip)):
                    if a is not None and b is not None and a != b:
                        op.fail(f"input 'skip' has shape {fmt(skip)}: expected X's shape "
                                f"{fmt(x)} (dim {k}: {a}, got {b})")
        return _check_bias(op, _merge(x, skip), 1, "bias")
    return x


def _verify(op: OnnxOp):
    _activation(op)


def _shape(op: OnnxOp):
    et = op.elem(op.input(0))
    shape = _activation(op)
    return [None if et is None else tensor(shape, et)]


for _op in TYPES:
    verifier(_op, 1, domain=MS)(_verify)
    shape_rule(_op, 1, domain=MS)(_shape)
