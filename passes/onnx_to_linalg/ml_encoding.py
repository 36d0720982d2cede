"""OneHotEncoder and LabelEncoder with numeric categories / keys.

* OneHotEncoder: a generic over [..., C] comparing each value with the
  constant categories (float inputs truncated toward zero first, as
  onnxruntime); ``zeros = 0``: a value in no category makes the call fail
  (a run-time check naming the node) as onnxruntime's error does.
* LabelEncoder: keys sorted at compile time, each element found by a
  branch-free binary search of fixed depth (ceil(log2(keys + 1)) selects),
  then matched exactly (NaN keys: a NaN input maps to the NaN key's value).

String keys and/or values (v2, v4): the same search comparing with strcmp
(om_str_cmp), string values a constant tensor of literals. OneHotEncoder's
string categories and LabelEncoder v1 are refused, naming the node.
"""
from __future__ import annotations

import math

import mlir.ir as ir
import numpy as np
from mlir.dialects import arith, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.ml_encoding import LABEL_ENCODER, ML, label_table
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, affine_map, is_float
from onnx_mlir_py.passes.onnx_to_linalg.ml_post import dense_const
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import loop_index

F, I = arith.CmpFPredicate, arith.CmpIPredicate
STRINGS = "needs the string tensor ABI (not supported yet)"


@lowering("OneHotEncoder", 1, domain=ML)
def lower_one_hot_encoder(op: OnnxOp, b: LoweringContext):
    if op.attrs.cats_strings:
        op.fail(f"string categories: {STRINGS}")
    cats = list(op.attrs.cats_int64s)
    x = op.input(0)
    r = b.ranked(op, x, "X").rank
    et = x.type.element_type
    i64, f32 = ir.IntegerType.get_signless(64), ir.F32Type.get()
    table = dense_const(np.asarray(cats, np.int64), i64)
    dims = b.dims(x) + [len(cats)]

    def as_i64(v):
        if is_float(et):
            return arith.fptosi(i64, v)
        return v if et == i64 else arith.extsi(i64, v)

    def body(v, _o):
        hit = arith.cmpi(I.eq, as_i64(v), tensor.extract(table, [loop_index(r)]))
        return arith.select(hit, b.const(1.0, f32), b.const(0.0, f32))
    y = b.generic([x], [b.empty(dims, f32)], [affine_map(r + 1, list(range(r))),
                                               affine_map(r + 1, list(range(r + 1)))],
                  ["parallel"] * (r + 1), body)[0]
    if not op.attrs.zeros:
        # every element must be in a category: the smallest row sum is 1
        ok = b.full([], f32, 1.0)
        row_sum = b.full(b.dims(x), f32, 0.0)
        row_sum = b.generic([y], [row_sum], [affine_map(r + 1, list(range(r + 1))),
                                              affine_map(r + 1, list(range(r)))],
                            ["parallel"] * r + ["reduction"], lambda v, a: arith.addf(a, v))[0]
        low = b.generic([row_sum], [ok], [affine_map(r, list(range(r))), affine_map(r, [])],
                        ["reduction"] * r, lambda v, a: arith.minimumf(a, v))[0]
        b.require(arith.cmpf(F.OGE, tensor.extract(low, []), b.const(1.0, f32)),
                  f"node '{op.name}' ({op.op_type}): a value is in no category (zeros = 0)")
    return [y]


def _search(b: LoweringContext, keys: ir.Value, n: int, v: ir.Value, less) -> ir.Value:
    """lower_bound of v in sorted keys[0:n]: an index Value in [0, n]."""
    pos = b.index(0)
    step = 1 << max(0, math.ceil(math.log2(n + 1)) - 1) if n else 0
    while step:
        probe = arith.addi(pos, b.index(step))            # pos + step <= n ?
        inside = arith.cmpi(I.ule, probe, b.index(n))
        at = arith.select(inside, arith.subi(probe, b.index(1)), b.index(0))
        go = arith.andi(inside, less(tensor.extract(keys, [at]), v))
        pos = arith.select(go, probe, pos)
        step //= 2
    return pos


@lowering("LabelEncoder", *LABEL_ENCODER, domain=ML)
def lower_label_encoder(op: OnnxOp, b: LoweringContext):
    t = label_table(op)
    if t is None:
        op.fail(f"LabelEncoder v1 (classes_strings): {STRINGS}")
    keys, vals, default = t
    x = op.input(0)
    et = x.type.element_type
    out_t = b.result_type(op)
    ot = out_t.element_type
    if keys.dtype == object or vals.dtype == object:
        return [_string_label_encoder(op, b, x, keys, vals, default)]
    if is_float(et) != (keys.dtype.kind == "f"):
        op.fail(f"keys of kind {keys.dtype} for X of type {et}")
    nan_val = None
    if keys.dtype.kind == "f":
        nan = np.isnan(keys)
        if nan.any():
            nan_val = vals[np.argmax(nan)]
        keys, vals = keys[~nan], vals[~nan]
    order = np.argsort(keys, kind="stable")
    keys, vals = keys[order], vals[order]
    n = len(keys)
    kc = dense_const(keys if n else np.zeros(1, keys.dtype), et)
    vc = dense_const(vals if n else np.zeros(1, vals.dtype), ot)
    if is_float(et):
        less = lambda k, v: arith.cmpf(F.OLT, k, v)  # noqa: E731
        eq = lambda k, v: arith.cmpf(F.OEQ, k, v)  # noqa: E731
    else:
        less = lambda k, v: arith.cmpi(I.slt, k, v)  # noqa: E731
        eq = lambda k, v: arith.cmpi(I.eq, k, v)  # noqa: E731
    dflt = b.const(default, ot)

    def body(v):
        pos = _search(b, kc, n, v, less)
        inside = arith.cmpi(I.ult, pos, b.index(n))
        at = arith.select(inside, pos, b.index(0))
        hit = arith.andi(inside, eq(tensor.extract(kc, [at]), v))
        out = arith.select(hit, tensor.extract(vc, [at]), dflt)
        if nan_val is not None:
            out = arith.select(arith.cmpf(F.UNO, v, v), b.const(nan_val, ot), out)
        return out
    return [b.map_elementwise([x], b.dims(x), ot, body)]


def _string_label_encoder(op: OnnxOp, b: LoweringContext, x: ir.Value, keys, vals, default):
    """String keys and/or values (docs/design.md "Strings"): the same binary
    search, comparing with strcmp (keys sorted by their UTF-8 bytes); string
    values are a constant tensor of literals."""
    from onnx_mlir_py.passes.onnx_to_linalg.strings_ml import (call_i64, string_literal,
                                                               string_tensor)
    ot = b.result_type(op).element_type
    str_keys, str_vals = keys.dtype == object, vals.dtype == object
    if str_keys != (str(b.onnx_elem(x)) == "!onnx.string"):
        op.fail(f"keys of kind {'string' if str_keys else keys.dtype} for X of type "
                f"{b.onnx_elem(x)}")
    if not str_keys and keys.dtype.kind == "f":
        op.fail("float keys with string values are not supported")
    order = sorted(range(len(keys)), key=lambda i: keys[i].encode() if str_keys else keys[i])
    keys, vals = keys[order], vals[order]
    n = len(keys)
    kc = string_tensor(b, list(keys) or [""]) if str_keys else \
        dense_const(keys.astype(np.int64) if n else np.zeros(1, np.int64), x.type.element_type)
    vc = string_tensor(b, list(vals) or [""]) if str_vals else \
        dense_const(vals if n else np.zeros(1, vals.dtype), ot)
    dflt = string_literal(b, str(default)) if str_vals else b.const(default, ot)
    if str_keys:
        zero = arith.constant(ir.IntegerType.get_signless(64), 0)
        less = lambda k, v: arith.cmpi(I.slt, call_i64(b, "om_str_cmp", [k, v]), zero)  # noqa: E731
        eq = lambda k, v: arith.cmpi(I.eq, call_i64(b, "om_str_cmp", [k, v]), zero)  # noqa: E731
    else:
        less = lambda k, v: arith.cmpi(I.slt, k, v)  # noqa: E731
        eq = lambda k, v: arith.cmpi(I.eq, k, v)  # noqa: E731

    def body(v):
        pos = _search(b, kc, n, v, less)
        inside = arith.cmpi(I.ult, pos, b.index(n))
        at = arith.select(inside, pos, b.index(0))
        hit = arith.andi(inside, eq(tensor.extract(kc, [at]), v))
        return arith.select(hit, tensor.extract(vc, [at]), dflt)
    return b.map_elementwise([x], b.dims(x), ot, body)
