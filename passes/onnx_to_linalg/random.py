"""Random generators -> one linalg.generic each, drawing from a
counter-based generator in arith: u = splitmix64(key + i * golden) of the
element's linear index i, its top 53 bits as a uniform f64 in [0, 1).
The key is the ``seed`` attribute's bits when set (the same seed gives the
same values, run after run), else a hash of the node's name (fixed per
node: an unseeded node also repeats its values across calls). Normal
values: Box-Muller on two draws. Bernoulli: u < p. Multinomial: the
number of classes whose cumulative exp(x - max) lies at or below
u * total (inverse CDF), per batch row and sample.
"""
from __future__ import annotations

import hashlib
import struct

import mlir.ir as ir
from mlir.dialects import arith, math, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import (LoweringContext, affine_map,
                                                        convert_scalar, is_float)
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import loop_index

MASK = (1 << 64) - 1


def _i64():
    return ir.IntegerType.get_signless(64)


def _c64(v: int) -> ir.Value:
    v &= MASK
    return arith.constant(_i64(), v - (1 << 64) if v >= 1 << 63 else v)


def _key(op: OnnxOp) -> int:
    seed = op.attrs.seed if "seed" in op.spec.attributes else None
    if seed is not None:
        return struct.unpack("<Q", struct.pack("<d", float(seed)))[0]
    return int.from_bytes(hashlib.sha256(op.name.encode()).digest()[:8], "little")


def _mix(z: ir.Value) -> ir.Value:
    """splitmix64's finalizer."""
    z = arith.muli(arith.xori(z, arith.shrui(z, _c64(30))), _c64(0xBF58476D1CE4E5B9))
    z = arith.muli(arith.xori(z, arith.shrui(z, _c64(27))), _c64(0x94D049BB133111EB))
    return arith.xori(z, arith.shrui(z, _c64(31)))


def uniform(key: int, i: ir.Value, open_low: bool = False) -> ir.Value:
    """A uniform f64 in [0, 1) ((0, 1] with open_low) from index i (index)."""
    f64 = ir.F64Type.get()
    n = arith.index_cast(_i64(), i)
    z = _mix(arith.addi(_c64(key), arith.muli(arith.addi(n, _c64(1)), _c64(0x9E3779B97F4A7C15))))
    top = arith.shrui(z, _c64(11))
    if open_low:
        top = arith.addi(top, _c64(1))
    return arith.mulf(arith.uitofp(f64, top), arith.constant(f64, 2.0 ** -53))


def normal(key: int, i: ir.Value) -> ir.Value:
    """A standard normal f64 (Box-Muller) from index i."""
    f64 = ir.F64Type.get()
    two = arith.constant(ir.IndexType.get(), 2)
    u1 = uniform(key, arith.muli(i, two), open_low=True)
    u2 = uniform(key, arith.addi(arith.muli(i, two), arith.constant(ir.IndexType.get(), 1)))
    r = math.sqrt(arith.mulf(arith.constant(f64, -2.0), math.log(u1)))
    return arith.mulf(r, math.cos(arith.mulf(arith.constant(f64, 6.283185307179586), u2)))


def _linear_index(b: LoweringContext, dims: list) -> ir.Value:
    idx = b.index(0)
    for k, d in enumerate(dims):
        idx = arith.addi(arith.muli(idx, b.as_index(d)), loop_index(k))
    return idx


def _draw(op: OnnxOp, b: LoweringContext, dims: list, et: ir.Type, sample) -> ir.Value:
    """A generic over ``dims`` whose element is ``sample(key, linear index)`` (f64)."""
    key = _key(op)
    n = len(dims)

    def body(_o):
        return convert_scalar(sample(key, _linear_index(b, dims)), False, et)
    y = b.generic([], [b.empty(dims, et)], [affine_map(n, list(range(n)))], ["parallel"] * n,
                  body)[0]
    return b.cast_to(y, b.result_type(op))


def _scaled(kind: str, op: OnnxOp):
    f64 = ir.F64Type.get()
    if kind == "uniform":
        lo, hi = float(op.attrs.low), float(op.attrs.high)
        return lambda key, i: arith.addf(arith.constant(f64, lo), arith.mulf(
            arith.constant(f64, hi - lo), uniform(key, i)))
    mean, scale = float(op.attrs.mean), float(op.attrs.scale)
    return lambda key, i: arith.addf(arith.constant(f64, mean), arith.mulf(
        arith.constant(f64, scale), normal(key, i)))


@lowering("RandomUniform", 1, 22)
def lower_random_uniform(op: OnnxOp, b: LoweringContext):
    t = b.result_type(op)
    return [_draw(op, b, list(t.shape), t.element_type, _scaled("uniform", op))]


@lowering("RandomNormal", 1, 22)
def lower_random_normal(op: OnnxOp, b: LoweringContext):
    t = b.result_type(op)
    return [_draw(op, b, list(t.shape), t.element_type, _scaled("normal", op))]


@lowering("RandomUniformLike", 1, 22)
def lower_random_uniform_like(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    b.ranked(op, x)
    return [_draw(op, b, b.dims(x), b.result_type(op).element_type, _scaled("uniform", op))]


@lowering("RandomNormalLike", 1, 22)
def lower_random_normal_like(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    b.ranked(op, x)
    return [_draw(op, b, b.dims(x), b.result_type(op).element_type, _scaled("normal", op))]


@lowering("Bernoulli", 15, 22)
def lower_bernoulli(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    r = b.ranked(op, x).rank
    if not is_float(x.type.element_type):
        op.fail("the probabilities must be floating-point")
    et = b.result_type(op).element_type
    key = _key(op)
    dims = b.dims(x)
    f64 = ir.F64Type.get()

    def body(p, _o):
        hit = arith.cmpf(arith.CmpFPredicate.OLT, uniform(key, _linear_index(b, dims)),
                         convert_scalar(p, False, f64))
        one = arith.uitofp(f64, arith.extui(_i64(), hit))
        return convert_scalar(one, False, et) if et.width != 1 else hit
    ident = affine_map(r, list(range(r)))
    y = b.generic([x], [b.empty(dims, et)], [ident, ident], ["parallel"] * r, body)[0]
    return [b.cast_to(y, b.result_type(op))]


@lowering("Multinomial", 7, 22)
def lower_multinomial(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    if b.ranked(op, x).rank != 2 or not is_float(x.type.element_type):
        op.fail("input must be a 2-D floating-point tensor [batch_size, class_size]")
    et = b.result_type(op).element_type
    f64 = ir.F64Type.get()
    nb, nc = b.dim(x, 0), b.dim(x, 1)
    ns = int(op.attrs.sample_size)
    key = _key(op)
    # the row maxima, then cdf[b, k] = sum_{j <= k} exp(x[b, j] - max[b])
    m = b.generic([x], [b.full([nb], f64, float("-inf"))],
                  [affine_map(2, [0, 1]), affine_map(2, [0])], ["parallel", "reduction"],
                  lambda v, acc: arith.maximumf(acc, convert_scalar(v, False, f64)))[0]

    def cdf_body(v, mx, acc):
        take = arith.cmpi(arith.CmpIPredicate.ule, loop_index(2), loop_index(1))
        e = math.exp(arith.subf(convert_scalar(v, False, f64), mx))
        return arith.select(take, arith.addf(acc, e), acc)
    cdf = b.generic([x, m], [b.full([nb, nc], f64, 0.0)],
                    [affine_map(3, [0, 2]), affine_map(3, [0]), affine_map(3, [0, 1])],
                    ["parallel", "parallel", "reduction"], cdf_body)[0]
    last = arith.subi(b.as_index(nc), b.index(1))

    def pick(c, acc):
        row, s = loop_index(0), loop_index(1)
        total = tensor.extract(cdf, [row, last])
        u = uniform(key, arith.addi(arith.muli(row, b.index(ns)), s))
        below = arith.cmpf(arith.CmpFPredicate.OLE, c, arith.mulf(u, total))
        return arith.addi(acc, arith.extui(et, below))
    cnt = b.generic([cdf], [b.full([nb, ns], et, 0)],
                    [affine_map(3, [0, 2]), affine_map(3, [0, 1])],
                    ["parallel", "parallel", "reduction"], pick)[0]
    top = arith.index_cast(et, last)
    y = b.map_elementwise([cnt], [nb, ns], et, lambda v: arith.minsi(v, top))
    return [b.cast_to(y, b.result_type(op))]
