"""``--precision bf16``: the f32 contractions (Conv, MatMul, Gemm) read
bf16 inputs and accumulate in f32.

The compiler marks the module with :data:`PRECISION_ATTR` (``"bf16"``)
before lowering; the conv / matmul / gemm lowerings then pass their two
contraction operands through :func:`operand`: a constant (the weights) is
rounded to bf16 at compile time (round to nearest even, as
``ml_dtypes.bfloat16``), any other value through an elementwise
``arith.truncf`` (also round to nearest even). The linalg contraction
(matmul, batch_matmul, conv_2d_nchw_fchw, ...) then has bf16 inputs and an
f32 output: its body extends each product's operands to f32 (exact) and
accumulates in f32. Everything else (bias, epilogues, other ops) stays f32.

The error against f32 is that of the rounded inputs: each input has a
relative error <= 2^-8 (8 significant bits, round to nearest), so a product
<= ~2^-7 and a dot product of K terms <= ~2^-7 of sum |a_k w_k| (about
2^-8 sqrt(K) of its scale for random signs); ``onnx-mlir-py verify
--precision bf16`` reports it, and the fuzzer's bf16 mode
(``testing/fuzz/bf16_bound.py``) checks every element against the actual
rounding's effect.
"""
from __future__ import annotations

import ml_dtypes
import mlir.ir as ir
import numpy as np
from mlir.dialects import arith

from onnx_mlir_py.errors import CompileError

PRECISION_ATTR = "onnx_mlir_py.precision"


def check_target(target, precision: str) -> None:
    """A one-line CompileError unless ``target`` (a Target, or a list of
    them: ISA variants) can run ``precision``."""
    if precision != "bf16":
        return
    for t in target if isinstance(target, (list, tuple)) else [target]:
        if t is None or not (t.avx512_bf16 or t.amx_bf16):
            name = "the default target" if t is None else \
                f"target {t.cpu or t.level or t.arch or 'generic'}"
            raise CompileError(f"--precision bf16 needs AVX512-BF16 or AMX-BF16; "
                               f"{name} has neither")


def mark(module: ir.Module, precision: str) -> None:
    """Tell the lowerings the precision of the contractions."""
    if precision == "fp32":
        return
    with module.context:
        module.operation.attributes[PRECISION_ATTR] = ir.StringAttr.get(precision)


def module_precision(module: ir.Module | None) -> str:
    if module is None or PRECISION_ATTR not in module.operation.attributes:
        return "fp32"
    return ir.StringAttr(module.operation.attributes[PRECISION_ATTR]).value


def enabled(b, et: ir.Type) -> bool:
    """Whether a contraction of ``et`` elements lowers with bf16 inputs."""
    return isinstance(et, ir.F32Type) and module_precision(b.module) == "bf16"


def constant_f32(v: ir.Value) -> np.ndarray | None:
    """The value of a static f32 ``arith.constant`` (dense or dense_resource)."""
    from onnx_mlir_py.ir_dense import dense_to_numpy
    from onnx_mlir_py.ir_resources import resource_name
    from onnx_mlir_py.passes.onnx_to_linalg.storage_consts import resource_bytes
    from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import owner_op
    o = owner_op(v)
    t = v.type
    if o is None or o.name != "arith.constant" or not isinstance(t, ir.RankedTensorType) \
            or not t.has_static_shape or not isinstance(t.element_type, ir.F32Type):
        return None
    a = o.attributes["value"]
    if isinstance(a, ir.DenseElementsAttr):
        arr = dense_to_numpy(a)
        return None if arr is None else arr.astype(np.float32, copy=False).reshape(t.shape)
    if resource_name(a) is None:
        return None
    data = resource_bytes(a, t)
    if len(data) != 4 * int(np.prod(t.shape, dtype=np.int64)):
        return None
    return np.frombuffer(data, np.float32).reshape(t.shape)


def round_bf16(x: np.ndarray) -> np.ndarray:
    """f32 -> bf16 (round to nearest even), as ``ml_dtypes.bfloat16``."""
    return np.asarray(x, np.float32).astype(ml_dtypes.bfloat16)


def _const_bf16(arr: np.ndarray, t: ir.RankedTensorType) -> ir.Value:
    from onnx_mlir_py.ir_resources import resource_attr
    bt = ir.RankedTensorType.get(list(t.shape), ir.BF16Type.get())
    bits = np.ascontiguousarray(round_bf16(arr).view(np.uint16))
    return arith.constant(bt, resource_attr(bits, "bf16_weights", bt))


def operand(b, v: ir.Value) -> ir.Value:
    """``v`` (an f32 tensor) as bf16: a constant converted now (a new
    constant, at the insertion point: it dominates its one use), else an
    elementwise ``arith.truncf``."""
    arr = constant_f32(v)
    if arr is not None:
        return _const_bf16(arr, v.type)
    bf16 = ir.BF16Type.get()
    return b.map_elementwise([v], b.dims(v), bf16, lambda x: arith.truncf(bf16, x))


def operands(b, et: ir.Type, *vs: ir.Value) -> tuple:
    """``vs`` through :func:`operand` when the contraction of ``et`` runs
    in bf16 (:func:`enabled`), else as they are."""
    if not enabled(b, et):
        return vs
    return tuple(operand(b, v) for v in vs)


def widen_to(x: ir.Value, acc_type: ir.Type) -> ir.Value:
    """A bf16 scalar of a contraction body extended to the accumulator's type."""
    return x if x.type == acc_type else arith.extf(acc_type, x)
