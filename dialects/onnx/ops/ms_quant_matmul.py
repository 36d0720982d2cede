"""com.microsoft quantized matmuls: QGemm, DynamicQuantizeMatMul, MatMulIntegerToFloat, MatMulNBits.

onnxruntime's contrib ops (docs/ContribOperators.md; CPU kernels
contrib_ops/cpu/quantization/quant_gemm.cc, dynamic_quantize_matmul.cc,
matmul_nbits.cc + matmul_nbits_helper.h):

* QGemm(A, a_scale, a_zero_point, B, b_scale, b_zero_point, C?, y_scale?,
  y_zero_point?; alpha, transA, transB): 2-D A [M, K] (transA: [K, M]) and
  B [K, N] (transB: [N, K]); Y is [M, N], y_zero_point's type when given,
  else float. a_scale / a_zero_point / y_scale / y_zero_point have one
  element, b_scale / b_zero_point one or N (per column); C (int32) is
  broadcastable to [M, N]. A y_zero_point needs a y_scale (onnxruntime
  would write int32 results into the 8-bit output).
* MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zero_point?, b_zero_point?,
  bias?) and DynamicQuantizeMatMul(A, B, b_scale, b_zero_point?, bias?):
  numpy matmul shapes, Y of a_scale's type (A's for DynamicQuantizeMatMul).
  a_scale / a_zero_point have one element; b_scale / b_zero_point are what
  onnxruntime applies inside its GEMM: one element, [N] with a 2-D B, or B's
  shape with dim -2 = 1 (per column of each B matrix). Other b_scale shapes
  onnxruntime multiplies in after adding the bias, and a non-scalar a_scale
  likewise: refused. bias is [N].
* MatMulNBits(A, B, scales, zero_points?, g_idx?, bias?; K, N, bits,
  block_size, accuracy_level): Y is A's shape with the last dim K -> N.
  bits 2, 4 or 8; block_size a power of two >= 16; B [N, k_blocks,
  blob_size] (k_blocks = ceil(K / block_size), blob_size = block_size * bits
  / 8); scales [N, k_blocks] (or flattened); zero_points uint8 packed
  [N, ceil(k_blocks * bits / 8)] or of the scales' type [N, k_blocks] (or
  flattened); bias [N]. Refused: g_idx, weight_prepacked != 0, bfloat16
  and 8-bit weights with float zero points (onnxruntime's CPU provider runs
  neither).
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import fmt
from onnx_mlir_py.dialects.onnx.ops.gemm import matmul_shape

MS = "com.microsoft"


def _name(op: OnnxOp, i: int) -> str:
    return op.spec.inputs[i].onnx_name


def one_element(op: OnnxOp, i: int, why: str = "") -> None:
    """Input ``i`` (if present) is a scalar or a 1-D tensor of one element
    (onnxruntime's IsScalarOr1ElementVector)."""
    s = op.shape(op.input(i))
    if s is None:
        return
    if len(s) > 1 or (len(s) == 1 and s[0] not in (None, 1)):
        op.fail(f"input '{_name(op, i)}' has shape {fmt(s)}: expected a scalar or one "
                f"element{why}")


# -- QGemm ---------------------------------------------------------------------------

def _qgemm(op: OnnxOp):
    a, w = op.shape(op.input(0)), op.shape(op.input(3))
    for i, s in ((0, a), (3, w)):
        if s is not None and len(s) != 2:
            op.fail(f"input '{_name(op, i)}' has shape {fmt(s)}: expected rank 2")
    ta, tb = op.attrs.transA, op.attrs.transB
    m = ka = kb = n = None
    if a is not None:
        m, ka = (a[1], a[0]) if ta else (a[0], a[1])
    if w is not None:
        kb, n = (w[1], w[0]) if tb else (w[0], w[1])
    if ka is not None and kb is not None and ka != kb:
        op.fail(f"inner dimensions differ: A {fmt(a)} (transA={ta}) has K = {ka}, "
                f"B {fmt(w)} (transB={tb}) has K = {kb}")
    for i in (1, 2, 7, 8):
        one_element(op, i)
    for i in (4, 5):
        s = op.shape(op.input(i))
        if s is None:
            continue
        if len(s) > 1 or (len(s) == 1 and None not in (s[0], n) and s[0] not in (1, n)):
            op.fail(f"input '{_name(op, i)}' has shape {fmt(s)}: expected a scalar or a 1-D "
                    f"tensor of 1 or N = {'?' if n is None else n} elements (per column)")
    c = op.shape(op.input(6))
    if c is not None:
        if len(c) > 2:
            op.fail(f"input 'C' has shape {fmt(c)}: expected rank <= 2 (broadcastable to "
                    f"[M, N])")
        for cd, yd, what in zip(reversed(c), (n, m), ("N", "M")):
            if cd is not None and cd != 1 and yd is not None and cd != yd:
                op.fail(f"input 'C' has shape {fmt(c)}: not broadcastable to [M, N] = "
                        f"{fmt((m, n))} ({what}: expected 1 or {yd}, got {cd})")
    if op.input(8) is not None and op.input(7) is None:
        op.fail("input 'y_zero_point' is given without 'y_scale': not supported "
                "(onnxruntime writes the int32 accumulators into the 8-bit output)")
    if a is None or w is None:
        return None
    return (m, n)


@verifier("QGemm", 1, domain=MS)
def _qgemm_verify(op: OnnxOp):
    _qgemm(op)


@shape_rule("QGemm", 1, domain=MS)
def _qgemm_shape(op: OnnxOp):
    et = op.elem(op.input(8)) if op.input(8) is not None else ir.F32Type.get()
    return [None if et is None else tensor(_qgemm(op), et)]


# -- MatMulIntegerToFloat / DynamicQuantizeMatMul ---------------------------------------

def b_param_ok(p, w) -> bool | None:
    """onnxruntime's IsBQuantParamSupported: a b_scale / b_zero_point of
    shape ``p`` that its GEMM applies per column (B of shape ``w``): one
    element, [N] with a 2-D B, or B's shape with dim -2 = 1. None: unknown
    at compile time (a dynamic dim decides)."""
    if len(p) == 0 or (len(p) == 1 and p[0] == 1):
        return True
    if len(p) == 1 and len(w) == 2:
        if p[0] is None or w[1] is None:
            return None
        return p[0] == w[1]
    if len(p) != len(w) or len(p) < 2:
        return False if len(p) != 1 or p[0] is not None else None
    unknown = False
    for k, (pd, wd) in enumerate(zip(p, w)):
        want = 1 if k == len(p) - 2 else wd
        if pd is None or want is None:
            unknown = True
        elif pd != want:
            return False
    return None if unknown else True


def _check_b_param(op: OnnxOp, i: int, b_i: int):
    p, w = op.shape(op.input(i)), op.shape(op.input(b_i))
    if p is None or w is None:
        return
    if b_param_ok(p, w) is False:
        op.fail(f"input '{_name(op, i)}' has shape {fmt(p)}: not supported with B {fmt(w)} "
                f"(expected one element, [N] with a 2-D B, or B's shape with dim -2 = 1: "
                f"per column)")


def _check_bias_n(op: OnnxOp, i: int, n):
    s = op.shape(op.input(i))
    if s is None:
        return
    if len(s) != 1 or (s[0] is not None and n is not None and s[0] != n):
        op.fail(f"input '{_name(op, i)}' has shape {fmt(s)}: expected [N] = "
                f"[{'?' if n is None else n}]")


def _matmul_to_float(op: OnnxOp, a_i: int, b_i: int, a_scale_i: int | None,
                     a_zp_i: int | None, b_scale_i: int, b_zp_i: int, bias_i: int):
    a, w = op.shape(op.input(a_i)), op.shape(op.input(b_i))
    shape = matmul_shape(op, a, w)
    if w is not None and len(w) < 2:
        op.fail(f"input 'B' has shape {fmt(w)}: expected rank >= 2")
    for i in (a_scale_i, a_zp_i):
        if i is not None:
            one_element(op, i, " (a per-row a_scale / a_zero_point is not supported)")
    for i in (b_scale_i, b_zp_i):
        _check_b_param(op, i, b_i)
    _check_bias_n(op, bias_i, w[-1] if w is not None and len(w) >= 2 else None)
    return shape


@verifier("MatMulIntegerToFloat", 1, domain=MS)
def _mitf_verify(op: OnnxOp):
    _matmul_to_float(op, 0, 1, 2, 4, 3, 5, 6)


@shape_rule("MatMulIntegerToFloat", 1, domain=MS)
def _mitf_shape(op: OnnxOp):
    et = op.elem(op.input(2))
    shape = _matmul_to_float(op, 0, 1, 2, 4, 3, 5, 6)
    return [None if et is None else tensor(shape, et)]


@verifier("DynamicQuantizeMatMul", 1, domain=MS)
def _dqmm_verify(op: OnnxOp):
    _matmul_to_float(op, 0, 1, None, None, 2, 3, 4)


@shape_rule("DynamicQuantizeMatMul", 1, domain=MS)
def _dqmm_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    shape = _matmul_to_float(op, 0, 1, None, None, 2, 3, 4)
    return [None if et is None else tensor(shape, et)]


# -- MatMulNBits ------------------------------------------------------------------------

def nbits_layout(op: OnnxOp) -> tuple[int, int, int, int, int, int]:
    """(K, N, bits, block_size, k_blocks, blob_size) after checking the
    attributes; k_blocks = ceil(K / block_size), blob_size = bytes per block."""
    k, n, bits, bs = op.attrs.K, op.attrs.N, op.attrs.bits, op.attrs.block_size
    if bits not in (2, 4, 8):
        op.fail(f"attribute 'bits' = {bits}: expected 2, 4 or 8")
    if bs is None or bs < 16 or bs & (bs - 1):
        op.fail(f"attribute 'block_size' = {bs}: expected a power of two >= 16")
    if k is None or n is None or k < 1 or n < 1:
        op.fail(f"attributes 'K' = {k} and 'N' = {n}: expected positive values")
    if op.attrs.weight_prepacked:
        op.fail(f"attribute 'weight_prepacked' = {op.attrs.weight_prepacked}: B prepacked "
                f"for an execution provider is not supported")
    kb = -(-k // bs)
    return k, n, bits, bs, kb, bs * bits // 8


def _expect(op: OnnxOp, i: int, shapes: list[tuple]) -> None:
    s = op.shape(op.input(i))
    if s is None:
        return
    for want in shapes:
        if len(s) == len(want) and all(d is None or d == e for d, e in zip(s, want)):
            return
    op.fail(f"input '{_name(op, i)}' has shape {fmt(s)}: expected "
            f"{' or '.join(fmt(w) for w in shapes)}")


def nbits_empty_b(op: OnnxOp) -> bool:
    """B with a (static) zero dim: an omitted projection, Y = 0 (+ bias)."""
    s = op.shape(op.input(1))
    return s is not None and 0 in s


_NBITS_TYPES = ("f32", "f16")


def _nbits(op: OnnxOp):
    k, n, bits, bs, kb, blob = nbits_layout(op)
    a = op.shape(op.input(0))
    et = op.elem(op.input(0))
    if et is not None and str(et) not in _NBITS_TYPES:
        op.fail(f"element type {et} is not supported (float and float16 only: "
                f"onnxruntime's CPU provider runs no other)")
    if a is not None:
        if len(a) < 1:
            op.fail("input 'A' is a scalar: expected rank >= 1")
        if a[-1] is not None and a[-1] != k:
            op.fail(f"input 'A' has shape {fmt(a)}: its last dim must be K = {k}")
    if op.input(4) is not None:
        op.fail("input 'g_idx' is not supported (deprecated; onnxruntime's results with it "
                "do not follow the documented formula)")
    zp = op.input(3)
    zp_et = op.elem(zp)
    if zp is not None and zp_et is not None and not (
            isinstance(zp_et, ir.IntegerType) and zp_et.width == 8):
        if bits == 8:
            op.fail("8-bit weights with float zero points are not supported (onnxruntime's "
                    "CPU provider refuses them too)")
        if op.elem(op.input(2)) is not None and zp_et != op.elem(op.input(2)):
            op.fail(f"input 'zero_points' ({zp_et}) must be uint8 or of the scales' type "
                    f"({op.elem(op.input(2))})")
    if not nbits_empty_b(op):
        _expect(op, 1, [(n, kb, blob)])
        _expect(op, 2, [(n, kb), (n * kb,)])
        if zp is not None:
            if zp_et is not None and isinstance(zp_et, ir.IntegerType):
                zb = -(-kb * bits // 8)
                _expect(op, 3, [(n, zb), (n * zb,)])
            else:
                _expect(op, 3, [(n, kb), (n * kb,)])
    _expect(op, 5, [(n,)])
    if a is None:
        return None
    return tuple(a[:-1]) + (n,)


@verifier("MatMulNBits", 1, domain=MS)
def _nbits_verify(op: OnnxOp):
    _nbits(op)


@shape_rule("MatMulNBits", 1, domain=MS)
def _nbits_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    shape = _nbits(op)
    return [None if et is None else tensor(shape, et)]
