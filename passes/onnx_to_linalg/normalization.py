"""BatchNormalization (inference mode) -> one linalg.generic:
y = (x - mean) / sqrt(var + epsilon) * scale + B, channel dim 1."""
from __future__ import annotations

from mlir.dialects import arith, math

from onnx_mlir_py.registry import lowering
from ...dialects.onnx.opview import OnnxOp
from .builder import LoweringContext, affine_map, is_float


@lowering("BatchNormalization", 9, 14, 15)
def lower_batch_norm(op: OnnxOp, b: LoweringContext):
    if "training_mode" in op.spec.attributes and op.attrs.training_mode:
        op.fail("training_mode=1 is not supported")
    if any(len(list(r.uses)) for r in op.op.results[1:]):
        op.fail("running mean/var outputs are not supported (inference only)")
    x, scale, bias, mean, var = (op.input(i) for i in range(5))
    r = b.ranked(op, x).rank
    et = x.type.element_type
    if r < 2 or not is_float(et):
        op.fail("input must be a float tensor of rank >= 2")
    for v in (scale, bias, mean, var):
        if b.ranked(op, v).rank != 1 or v.type.element_type != et:
            op.fail("scale, B, mean and var must be 1-D of the input's element type")
    eps = op.attrs.epsilon
    dims = b.dims(x)
    full = affine_map(r, list(range(r)))
    ch = affine_map(r, [1])

    def body(xv, s, bb, m, v, _o):
        inv = math.rsqrt(arith.addf(v, b.const(eps, et)))
        return arith.addf(arith.mulf(arith.mulf(arith.subf(xv, m), inv), s), bb)
    y = b.generic([x, scale, bias, mean, var], [b.empty(dims, et)],
                  [full, ch, ch, ch, ch, full], ["parallel"] * r, body)[0]
    rest = [b.full(b.dims(v), et, 0.0) for v in (mean, var)][:len(op.op.results) - 1]
    return [y] + rest
