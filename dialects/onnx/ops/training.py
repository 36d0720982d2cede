"""Optimizers of ai.onnx.preview.training (v1): Adagrad, Adam, Momentum.

Inputs: R (scalar learning rate, f32/f64), T (scalar int64 update count), then
n tensor groups laid out by role: X1..Xn, G1..Gn, [V1..Vn (Adam, Momentum)],
[H1..Hn (Adagrad, Adam)]. Outputs by role too: X_new1..n, then the new
accumulators (H_new for Adagrad, V_new for Momentum, V_new and H_new for Adam).
Each new tensor has the type of the tensor it updates; G, V and H must have
X's shape (the gradient and accumulators of X) and all tensors of the groups
one element type (T3).
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.common import fmt

TRAINING = "ai.onnx.preview.training"

# op -> (input roles per group, indices of the roles an output role updates)
ROLES = {"Adagrad": ("XGH", (0, 2)), "Momentum": ("XGV", (0, 2)),
         "Adam": ("XGVH", (0, 2, 3))}


def _optimizer(groups: int):
    """New tensors: output j of group g updates input 2 + n * src[g] + j."""
    src = {2: (0, 2), 3: (0, 2, 3)}[groups]

    def rule(op: OnnxOp):
        ins = op.variadic()
        n = len(ins) // (groups + 1)
        out = []
        for k in range(len(op.results)):
            g, j = divmod(k, n) if n else (0, 0)
            i = n * src[g] + j if g < len(src) else None
            t = ins[i].type if i is not None and i < len(ins) else None
            out.append(t if t is not None and str(t) != "!onnx.unknown" else None)
        return out
    return rule


shape_rule("Momentum", 1, domain=TRAINING)(_optimizer(2))
shape_rule("Adagrad", 1, domain=TRAINING)(_optimizer(2))
shape_rule("Adam", 1, domain=TRAINING)(_optimizer(3))


def groups(op: OnnxOp) -> tuple[int, dict[str, list]]:
    """(n, {role: [n inputs]}) of a verified optimizer node."""
    roles = ROLES[op.op_type][0]
    ins = op.variadic()
    n = len(ins) // len(roles)
    return n, {c: ins[k * n:(k + 1) * n] for k, c in enumerate(roles)}


def _scalar_check(op: OnnxOp, name: str):
    """R and T hold one element (their types are checked by the schema's
    type constraints)."""
    s = op.shape(op.input(0 if name == "R" else 1))
    if s is not None and any(d is not None and d != 1 for d in s):
        op.fail(f"input '{name}' has shape {fmt(s)}: expected a scalar (one element)")


def _verify(op: OnnxOp):
    roles, _ = ROLES[op.op_type]
    ins = op.variadic()
    k = len(roles)
    if not ins or len(ins) % k:
        op.fail(f"{len(ins)} tensor inputs after R and T: expected a positive multiple of "
                f"{k} ({', '.join(roles)} for each optimized tensor)")
    n = len(ins) // k
    outs = len(op.results)
    want = n * (k - 1)
    if outs != want:
        op.fail(f"{outs} outputs for {n} optimized tensor(s): expected {want}")
    _scalar_check(op, "R")
    _scalar_check(op, "T")
    _, by_role = groups(op)
    et0 = None
    for i in range(n):
        xs = op.shape(by_role["X"][i])
        for c in roles:
            v = by_role[c][i]
            et = op.elem(v)
            if et is not None:
                if et0 is not None and et != et0:
                    op.fail(f"input '{c}{i + 1}' has element type {et}: expected {et0} "
                            f"(one type for all optimized tensors)")
                et0 = et0 or et
            s = op.shape(v)
            if c == "X" or s is None or xs is None:
                continue
            if len(s) != len(xs) or any(a is not None and b is not None and a != b
                                        for a, b in zip(s, xs)):
                op.fail(f"input '{c}{i + 1}' has shape {fmt(s)}: expected the shape "
                        f"{fmt(xs)} of 'X{i + 1}'")
    a = op.attrs
    if op.op_type == "Momentum":   # (its required attributes: checked on import)
        if a.mode not in ("standard", "nesterov"):
            op.fail(f"attribute 'mode' = {a.mode!r}: expected 'standard' or 'nesterov'")


for _op in ROLES:
    verifier(_op, 1, domain=TRAINING)(_verify)
