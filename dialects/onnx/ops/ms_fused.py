"""com.microsoft fused ops: FusedMatMul, FusedConv.

* FusedMatMul(A, B; alpha, transA, transB, transBatchA, transBatchB):
  alpha * op(A) @ op(B) with numpy.matmul's batch broadcasting, where
  op(X) (rank r >= 2) reorders X's dims (onnxruntime's
  FusedMatMulShapeInference and MatMulComputeHelper):

      transBatch=0: [0..r-3] + ([r-1, r-2] if trans else [r-2, r-1])
      transBatch=1: [1..r-2] + ([r-1, 0] if trans else [0, r-1])

  i.e. transBatch moves the leading dim to the matrix rows (a stored
  [M, b.., K] read as [b.., M, K]). A 1-D operand is never transposed.
  transBatchA/B need both inputs of one rank >= 3 (the kernel enforces it).
* FusedConv(X, W, B?, Z?; Conv's attributes, activation, activation_params):
  activation(Conv(X, W, B) + Z), Z of Y's shape; activation one of Relu,
  Tanh, Sigmoid, LeakyRelu (params [alpha]), Clip ([min, max]),
  HardSigmoid ([alpha, beta]), or none (onnxruntime's GetFusedActivationAttr).

Element types: those onnxruntime's CPU provider runs: f32, f16, and f64 for
FusedMatMul (FusedConv has no f64 kernel); others are refused.
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import fmt
from onnx_mlir_py.dialects.onnx.ops.conv import conv_shape
from onnx_mlir_py.dialects.onnx.ops.gemm import matmul_shape
from onnx_mlir_py.dialects.onnx.ops.ms_activation import check_elem_in

MS = "com.microsoft"

TYPES = {"FusedMatMul": ("f32", "f16", "f64"), "FusedConv": ("f32", "f16")}

# activation -> number of activation_params it takes
ACTIVATIONS = {"Relu": 0, "Tanh": 0, "Sigmoid": 0, "LeakyRelu": 1, "Clip": 2, "HardSigmoid": 2}


def check_elem(op: OnnxOp, et) -> None:
    check_elem_in(op, et, TYPES[op.op_type])


# -- FusedMatMul --------------------------------------------------------------------

def operand_perm(rank: int, trans: bool, trans_batch: bool) -> list[int] | None:
    """The dims of a FusedMatMul operand in the order numpy.matmul reads
    them (None: as stored)."""
    if rank < 2:
        return None
    if trans_batch:
        perm = list(range(1, rank - 1)) + ([rank - 1, 0] if trans else [0, rank - 1])
    elif trans:
        perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    else:
        return None
    return perm


def fused_matmul_flags(op: OnnxOp):
    """(transA, transB, transBatchA, transBatchB) as bools (onnxruntime: != 0)."""
    return (op.attrs.transA != 0, op.attrs.transB != 0,
            op.attrs.transBatchA != 0, op.attrs.transBatchB != 0)


def _fused_matmul(op: OnnxOp):
    check_elem(op, op.elem(op.input(0)))
    a, b = op.shape(op.input(0)), op.shape(op.input(1))
    ta, tb, tba, tbb = fused_matmul_flags(op)
    for name, s in (("A", a), ("B", b)):
        if s is not None and len(s) < 1:
            op.fail(f"input '{name}' is a scalar: expected rank >= 1")
    if (tba or tbb) and a is not None and b is not None and \
            (len(a) != len(b) or len(a) < 3):
        op.fail(f"transBatchA={int(tba)} / transBatchB={int(tbb)} need inputs of one rank "
                f">= 3: A {fmt(a)}, B {fmt(b)}")
    views = []
    for name, s, t, tbt in (("A", a, ta, tba), ("B", b, tb, tbb)):
        p = None if s is None else operand_perm(len(s), t, tbt)
        views.append(s if p is None else tuple(s[i] for i in p))
    va, vb = views
    if va is not None and vb is not None:
        ka = va[-1]
        kb = vb[0] if len(vb) == 1 else vb[-2]
        if ka is not None and kb is not None and ka != kb:
            op.fail(f"inner dimensions differ: A {fmt(a)} (transA={int(ta)}, "
                    f"transBatchA={int(tba)}) has K = {ka}, B {fmt(b)} (transB={int(tb)}, "
                    f"transBatchB={int(tbb)}) has K = {kb}")
    return matmul_shape(op, va, vb)


@verifier("FusedMatMul", 1, domain=MS)
def _fused_matmul_verify(op: OnnxOp):
    _fused_matmul(op)


@shape_rule("FusedMatMul", 1, domain=MS)
def _fused_matmul_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    shape = _fused_matmul(op)
    return [None if et is None else tensor(shape, et)]


# -- FusedConv ----------------------------------------------------------------------

def activation_of(op: OnnxOp) -> tuple[str | None, list[float]]:
    """(activation name or None, its parameters), checked as onnxruntime does."""
    act = op.attrs.activation
    params = op.attrs.activation_params
    if act is None:
        return None, []
    if act not in ACTIVATIONS:
        op.fail(f"activation '{act}' is not supported (expected one of "
                f"{', '.join(ACTIVATIONS)})")
    n = ACTIVATIONS[act]
    if n == 0:
        return act, []
    if params is None or len(params) != n:
        op.fail(f"activation '{act}' takes {n} activation_params, got "
                f"{0 if params is None else len(params)}")
    return act, [float(p) for p in params]


def _fused_conv(op: OnnxOp):
    check_elem(op, op.elem(op.input(0)))
    activation_of(op)
    y = conv_shape(op)
    z = op.shape(op.input(3))
    if z is not None and y is not None:
        if len(z) != len(y) or any(a is not None and b is not None and a != b
                                   for a, b in zip(y, z)):
            op.fail(f"input 'Z' has shape {fmt(z)}: expected the convolution's output "
                    f"shape {fmt(y)}")
        y = tuple(a if a is not None else b for a, b in zip(y, z))
    return y


@verifier("FusedConv", 1, domain=MS)
def _fused_conv_verify(op: OnnxOp):
    _fused_conv(op)


@shape_rule("FusedConv", 1, domain=MS)
def _fused_conv_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    shape = _fused_conv(op)
    return [None if et is None else tensor(shape, et)]
