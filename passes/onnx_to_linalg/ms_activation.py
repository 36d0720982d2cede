"""com.microsoft activations -> one elementwise linalg.generic each:
Gelu, BiasGelu, FastGelu, QuickGelu, BiasAdd.

The scalar bodies are unary.py's (its ``UNARY`` table: Gelu with
``approximate`` "none" / "tanh", Sigmoid), given the attribute values
through a small stand-in for the op (:class:`_Params`). A bias is 1-D along
the last dim (BiasGelu, FastGelu, BiasAdd) and a skip has X's shape
(BiasAdd): checked exactly as onnxruntime's kernels do (at run time for
dynamic dims; a bias of 1 does not broadcast), then read with the result's
loops. f16 is computed in f32 and rounded once (onnxruntime's CPU provider
runs its f16 nodes in f32, through inserted casts).
"""
from __future__ import annotations

import types

import mlir.ir as ir
from mlir.dialects import arith

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.ms_activation import MS, check_elem
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import require_same_dim
from onnx_mlir_py.passes.onnx_to_linalg.gemm import is_half
from onnx_mlir_py.passes.onnx_to_linalg.unary import UNARY


class _Params:
    """What unary.py's scalar bodies read of their op (``attrs.<name>``,
    ``fail``), for a body used with attribute values of another op."""

    def __init__(self, op: OnnxOp, **attrs):
        self.attrs = types.SimpleNamespace(**attrs)
        self.fail = op.fail


def unary_body(op: OnnxOp, name: str, **attrs):
    """unary.py's scalar body of ONNX op ``name`` (float operands) with the
    given attribute values: ``f(x) -> y``."""
    fn, params = UNARY[name], _Params(op, **attrs)
    return lambda x: fn(params, False, x)


def as_result_shape(op: OnnxOp, b: LoweringContext, v: ir.Value, out_t: ir.RankedTensorType,
                    dims=None) -> ir.Value:
    """``v`` (dims already checked equal to the result's ``dims``, a prefix
    or suffix alignment given by ``dims``: result dim index per dim of v)
    with the result's static dims."""
    t = v.type
    dims = list(range(out_t.rank - t.rank, out_t.rank)) if dims is None else dims
    shape = []
    for j, k in enumerate(dims):
        s = None if t.is_dynamic_dim(j) else int(t.shape[j])
        o = None if out_t.is_dynamic_dim(k) else int(out_t.shape[k])
        if s is not None and o is not None and s != o:
            op.fail(f"an input has dim {s} where the result has {o}")
        shape.append(ir.ShapedType.get_dynamic_size() if s is None and o is None else
                     (s if s is not None else o))
    return b.cast_to(v, ir.RankedTensorType.get(shape, t.element_type))


def lower_biased(op: OnnxOp, b: LoweringContext, fn, bias: ir.Value | None = None,
                 skip: ir.Value | None = None, bias_name: str = "bias") -> ir.Value:
    """``fn(x [+ bias] [+ skip])`` elementwise over X = input 0, computed in
    f32 for f16 (``fn`` on scalars of the compute type). ``bias``: 1-D of X's
    last dim; ``skip``: X's shape (both checked, at run time if dynamic)."""
    x = op.input(0)
    check_elem(op, b.ranked(op, x).element_type)
    out_t = b.result_type(op)
    et = out_t.element_type
    ct = ir.F32Type.get() if is_half(et) else et
    r = out_t.rank
    if b.ranked(op, x).rank != r:
        op.fail(f"input rank {x.type.rank} differs from the result's {r}")
    ins, maps = [as_result_shape(op, b, x, out_t)], [affine_map(r, list(range(r)))]
    if skip is not None:
        if b.ranked(op, skip).rank != r:
            op.fail(f"input 'skip' has rank {skip.type.rank}: expected X's rank {r}")
        for k in range(r):
            require_same_dim(op, b, skip, k, x, k, "skip", "X")
        ins.append(as_result_shape(op, b, skip, out_t))
        maps.append(maps[0])
    if bias is not None:
        if b.ranked(op, bias).rank != 1 or r < 1:
            op.fail(f"input '{bias_name}' must be 1-D and X of rank >= 1 (got ranks "
                    f"{bias.type.rank}, {r})")
        require_same_dim(op, b, bias, 0, x, r - 1, bias_name, "X")
        ins.append(as_result_shape(op, b, bias, out_t, [r - 1]))
        maps.append(affine_map(r, [r - 1]))
    dims = [int(out_t.shape[k]) if not out_t.is_dynamic_dim(k) else b.dim(ins[0], k)
            for k in range(r)]

    def body(*a):
        xs = [arith.extf(ct, s) if s.type != ct else s for s in a[:len(ins)]]
        v = xs[0]
        if bias is not None:        # X + bias (+ skip): onnxruntime's order
            v = arith.addf(v, xs[-1])
        if skip is not None:
            v = arith.addf(v, xs[1])
        y = fn(v)
        return arith.truncf(et, y) if ct != et else y
    return b.generic(ins, [b.empty(dims, et)], maps + [maps[0]], ["parallel"] * r, body)[0]


@lowering("Gelu", 1, domain=MS)
def lower_gelu(op: OnnxOp, b: LoweringContext):
    return [lower_biased(op, b, unary_body(op, "Gelu", approximate="none"))]


@lowering("BiasGelu", 1, domain=MS)
def lower_bias_gelu(op: OnnxOp, b: LoweringContext):
    return [lower_biased(op, b, unary_body(op, "Gelu", approximate="none"), op.input(1),
                         bias_name="B")]


@lowering("FastGelu", 1, domain=MS)
def lower_fast_gelu(op: OnnxOp, b: LoweringContext):
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), x = X (+ bias): ONNX
    Gelu's tanh body, constants to float32 precision as onnxruntime's f32
    kernel (its f64 function body has them to 6 digits: 0.797885, 0.035677)."""
    if b.ranked(op, op.input(0)).rank < 1:
        op.fail("input 'X' is a scalar: expected rank >= 1")
    return [lower_biased(op, b, unary_body(op, "Gelu", approximate="tanh"), op.input(1))]


@lowering("QuickGelu", 1, domain=MS)
def lower_quick_gelu(op: OnnxOp, b: LoweringContext):
    """x * Sigmoid(alpha * x)."""
    sigmoid = unary_body(op, "Sigmoid")
    alpha = op.attrs.alpha
    return [lower_biased(op, b, lambda x: arith.mulf(
        x, sigmoid(arith.mulf(x, b.const(alpha, x.type)))))]


@lowering("BiasAdd", 1, domain=MS)
def lower_bias_add(op: OnnxOp, b: LoweringContext):
    """X + bias + skip (X, skip [N, S, C], bias [C])."""
    if b.ranked(op, op.input(0)).rank != 3:
        op.fail(f"input 'X' has rank {op.input(0).type.rank}: expected 3 (N, S, C)")
    return [lower_biased(op, b, lambda v: v, op.input(1), op.input(2))]
