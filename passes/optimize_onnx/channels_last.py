"""channels-last-convs: under ``--precision bf16`` on a target with AMX-BF16,
the convs of a CNN run channels-last (NHWC) and so do the elementwise ops
between them, so no conv transposes its input or its result at run time
(the AMX bf16 conv kernel takes ``linalg.conv_2d_nhwc_fhwc``: NhwcConv's
lowering, passes/onnx_to_linalg/conv.py).

    Conv(x, W, B)  (2-D, group 1, W constant, static shapes, f32)
        => Transpose(NhwcConv(Transpose(x, [0, 2, 3, 1]), W, B), [0, 3, 1, 2])
    E(Transpose(x, P))                     (E unary elementwise: UNARY)
        => Transpose(E(x), P)
    E(Transpose(a, P), Transpose(b, P) | c)  (E binary elementwise: BINARY; every
                                            non-constant input a Transpose by P of
                                            E's rank; a constant c relaid out)
        => Transpose(E(a, b | c'), P)
    GlobalAveragePool(Transpose(x, [0, 3, 1, 2]))
        => Transpose(ReduceMean(x, axes [1, 2], keepdims 1), [0, 3, 1, 2])

then merge-transposes cancels the Transpose(P) . Transpose(P^-1) pairs met
between two convs. A constant operand c of a binary op is first given E's
rank as numpy broadcasting does (leading 1s), then transposed by P^-1, so
every element meets the same partner as before: a [C] constant against an
NCHW tensor broadcasts over W (not the channels), and stays so ([1, 1, C, 1]
against NHWC). A Transpose is pushed into each consumer that takes it; one
that does not (MaxPool, Reshape, ...) keeps reading it NCHW: nothing is
computed twice, the transpose stays for that consumer only.

Only in a module marked bf16 (passes/onnx_to_linalg/bf16.py's
PRECISION_ATTR) and with :data:`AMX_BF16_ATTR` (set by compiler.lower when
the -O3 target has AMX-BF16): elsewhere the NCHW kernels are the tuned ones
(Zen 4, fp32) and nothing changes. It runs once the other rewrites are at
their fixed point (``optimize_onnx``'s LATE rewrites), so BatchNormalization
and affine folds still see Conv.

Numerics: the same ops on the same values in another layout; only the
contractions' inputs are rounded to bf16, as without the rewrite.
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.dialects.onnx.opview import OnnxOp, is_onnx_op
from onnx_mlir_py.dialects.onnx.schema import spec_table
from onnx_mlir_py.passes.optimize_onnx.ir_util import (constant_values, copy_attrs, create_op,
                                                       is_constant, lowerable_spec, make_constant,
                                                       module_opset, onnx_ops, producer_view,
                                                       replace, static_shape)
from onnx_mlir_py.passes.optimize_onnx.reshape_chains import merge_transposes, transpose_perm

AMX_BF16_ATTR = "onnx_mlir_py.amx_bf16"
TO_NHWC, TO_NCHW = [0, 2, 3, 1], [0, 3, 1, 2]

# float elementwise ops of one data input (Clip's min / max, scalars, are kept)
UNARY = ("Relu", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Elu", "Selu",
         "Celu", "Softplus", "Softsign", "ThresholdedRelu", "Gelu", "Mish", "Erf", "Neg", "Abs",
         "Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Ceil", "Round", "Sin", "Cos",
         "Identity", "Clip")
# elementwise ops of two inputs with numpy broadcasting (Sum / Max / Min: of 2 inputs)
BINARY = ("Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "PRelu")


def enabled(module: ir.Module) -> bool:
    from onnx_mlir_py.passes.onnx_to_linalg.bf16 import module_precision
    return AMX_BF16_ATTR in module.operation.attributes and module_precision(module) == "bf16"


def _inverse(p: list[int]) -> list[int]:
    inv = [0] * len(p)
    for i, k in enumerate(p):
        inv[k] = i
    return inv


def _f32(v: ir.Value) -> bool:
    return isinstance(v.type, ir.RankedTensorType) and isinstance(v.type.element_type,
                                                                  ir.F32Type)


def _tensor(shape, et) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), et)


def _transpose(spec, x: ir.Value, perm: list[int], loc) -> ir.Value:
    shape = [x.type.shape[p] for p in perm]
    return create_op(spec, [x], [_tensor(shape, x.type.element_type)],
                     {"perm": ir.DenseI64ArrayAttr.get(perm)}, loc).results[0]


def _view(op: ir.Operation) -> OnnxOp | None:
    if not is_onnx_op(op) or op.name not in spec_table().by_mlir_name:
        return None
    v = OnnxOp(op)
    return None if v.spec.domain else v


def _eligible_conv(c: OnnxOp) -> bool:
    x, w, y = c.input(0), c.input(1), c.op.results[0]
    xs, ys = static_shape(x), static_shape(y)
    return xs is not None and ys is not None and len(xs) == 4 and _f32(x) \
        and (c.attrs.group or 1) == 1 and is_constant(w) and static_shape(w) is not None


def convs_to_nhwc(module: ir.Module, spec_t, spec_nc) -> int:
    count = 0
    for c in onnx_ops(module, "Conv"):
        if not _eligible_conv(c):
            continue
        loc = c.op.location
        y = c.op.results[0]
        with ir.InsertionPoint(c.op), loc:
            xt = _transpose(spec_t, c.input(0), TO_NHWC, loc)
            ys = [y.type.shape[p] for p in TO_NHWC]
            nc = create_op(spec_nc, [xt, c.input(1), c.input(2)], [_tensor(ys, y.type.element_type)],
                           copy_attrs(c.op), loc).results[0]
            out = _transpose(spec_t, nc, TO_NCHW, loc)
        replace(c.op, out)
        count += 1
    return count


def _push_into(e: OnnxOp, perm: list[int], spec_t) -> bool:
    """``e`` (an elementwise consumer of a Transpose by ``perm``) rebuilt on
    the transposes' inputs, its result transposed by ``perm``; False if it
    does not qualify."""
    y = e.op.results[0]
    ys = static_shape(y)
    r = len(perm)
    if ys is None or len(ys) != r or len(e.op.results) != 1:
        return False
    inv = _inverse(perm)
    data = [0] if e.op_type in UNARY else list(range(len(e.op.operands)))
    if e.op_type in ("Sum", "Max", "Min") and len(e.op.operands) != 2:
        return False
    new_operands = list(e.op.operands)
    consts = []
    for k in data:
        v = e.op.operands[k]
        t = producer_view(v, "Transpose")
        if t is not None and transpose_perm(t) == perm and len(static_shape(t.input(0)) or ()) == r:
            new_operands[k] = t.input(0)
        elif is_constant(v):
            consts.append(k)
        else:
            return False
    if all(k in consts for k in data):
        return False                # nothing transposed
    if consts:
        vals = constant_values([e.op.operands[k] for k in consts])
        if any(c is None or c.ndim > r for c in vals):
            return False
    loc = e.op.location
    with ir.InsertionPoint(e.op), loc:
        for k, c in zip(consts, vals if consts else []):
            full = c.reshape((1,) * (r - c.ndim) + c.shape)     # numpy's broadcasting
            new_operands[k] = make_constant(np.ascontiguousarray(full.transpose(inv)), loc,
                                            "channels_last")
        shape = [ys[p] for p in inv]
        new = ir.Operation.create(e.op.name, results=[_tensor(shape, y.type.element_type)],
                                  operands=new_operands, attributes=copy_attrs(e.op, drop=()),
                                  loc=loc)
        out = _transpose(spec_t, new.results[0], perm, loc)
    replace(e.op, out)
    return True


def _gap_to_reduce_mean(g: OnnxOp, spec_t, spec_rm) -> bool:
    t = producer_view(g.input(0), "Transpose")
    if t is None or transpose_perm(t) != TO_NCHW or static_shape(t.input(0)) is None \
            or static_shape(g.op.results[0]) is None:
        return False
    x = t.input(0)
    n, h, w, c = x.type.shape
    loc = g.op.location
    with ir.InsertionPoint(g.op), loc:
        rt = _tensor([n, 1, 1, c], x.type.element_type)
        if spec_rm.since_version >= 18:
            axes = make_constant(np.array([1, 2], np.int64), loc, "axes")
            rm = create_op(spec_rm, [x, axes], [rt], {}, loc)
        else:
            rm = create_op(spec_rm, [x], [rt], {"axes": ir.ArrayAttr.get(
                [ir.IntegerAttr.get(ir.IntegerType.get_signed(64), a) for a in (1, 2)])}, loc)
        out = _transpose(spec_t, rm.results[0], TO_NCHW, loc)
    replace(g.op, out)
    return True


def push_transposes(module: ir.Module, spec_t, spec_rm) -> int:
    count = 0
    for t in onnx_ops(module, "Transpose"):
        perm = transpose_perm(t)
        if perm is None:
            continue
        owners = []
        for use in t.op.results[0].uses:
            o = use.owner.operation if hasattr(use.owner, "operation") else use.owner
            if not any(o == p for p in owners):     # (Add(t, t): one consumer)
                owners.append(o)
        for o in owners:
            e = _view(o)
            if e is None:
                continue
            if e.op_type in UNARY or e.op_type in BINARY:
                count += _push_into(e, perm, spec_t)
            elif e.op_type == "GlobalAveragePool" and spec_rm is not None:
                count += _gap_to_reduce_mean(e, spec_t, spec_rm)
    return count


def dedupe_transposes(module: ir.Module) -> int:
    """Transposes of one value by one perm in one block -> the first (it
    comes first in program order: it dominates the others): a conv input
    read by two convs (ResNet's downsample branch) is transposed once."""
    seen, count = {}, 0
    for t in onnx_ops(module, "Transpose"):
        perm = transpose_perm(t)
        if perm is None:
            continue
        key = (t.input(0), tuple(perm), t.op.block)
        first = seen.setdefault(key, t)
        if first is not t and str(first.op.results[0].type) == str(t.op.results[0].type):
            replace(t.op, first.op.results[0])
            count += 1
    return count


def channels_last_convs(module: ir.Module) -> int:
    if not enabled(module):
        return 0
    opset = module_opset(module)
    spec_t = lowerable_spec("Transpose", opset)
    spec_nc = lowerable_spec("NhwcConv", opset, "com.microsoft")
    spec_rm = lowerable_spec("ReduceMean", opset)
    if spec_t is None or spec_nc is None:
        return 0
    count = convs_to_nhwc(module, spec_t, spec_nc)
    if not count:
        return 0
    while True:
        n = push_transposes(module, spec_t, spec_rm) + merge_transposes(module) + \
            dedupe_transposes(module)
        if not n:
            return count
        count += n
