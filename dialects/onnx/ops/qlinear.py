"""com.microsoft QLinear ops: QLinearAdd, QLinearMul, QLinearGlobalAveragePool,
QLinearAveragePool, QLinearConcat, QLinearSigmoid, QLinearLeakyRelu,
QLinearSoftmax (what onnxruntime's quantize_static(..., QuantFormat.QOperator)
writes into CNNs).

onnxruntime's CPU kernels (contrib_ops/cpu/quantization/qlinear_*.cc) take
every scale and zero point per tensor (``IsScalarOr1ElementVector``: a
scalar or a 1-D tensor of one element; a longer one fails there, so it is
refused here, a dynamic length at run time); 8-bit types only (uint8 /
int8, the schemas' T). An absent optional zero point is 0, as the kernels
read it (onnxruntime's own type inference refuses one given as "" before a
present input for QLinearAdd / QLinearMul / QLinearAveragePool; the schema
allows it, and so does this compiler). Shapes:

* QLinearAdd / QLinearMul: numpy broadcast of A and B.
* QLinearGlobalAveragePool: X of rank >= 3, the spatial dims set to 1
  (with channels_last=1 X is [N, D1.., C]).
* QLinearAveragePool: onnxruntime's window arithmetic (``qpool_axes``;
  kernels of 1 to 3 spatial axes, no dilations), channels_last as above.
* QLinearConcat: Y_scale, Y_zero_point, then (X, X_scale, X_zero_point)
  triples; Concat's shape of the X's, Y_zero_point's type.
* QLinearSigmoid / QLinearLeakyRelu / QLinearSoftmax: X's shape.
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.broadcast import broadcast_shapes
from onnx_mlir_py.dialects.onnx.ops.common import fmt, single_result
from onnx_mlir_py.dialects.onnx.ops.concat_split import concat_dims
from onnx_mlir_py.dialects.onnx.ops.conv import Window, opt_attr, window

MS = "com.microsoft"

# the per-tensor quantization parameters of each op (input positions)
PARAMS = {
    "QLinearAdd": (1, 2, 4, 5, 6, 7),
    "QLinearMul": (1, 2, 4, 5, 6, 7),
    "QLinearGlobalAveragePool": (1, 2, 3, 4),
    "QLinearAveragePool": (1, 2, 3, 4),
    "QLinearSigmoid": (1, 2, 3, 4),
    "QLinearLeakyRelu": (1, 2, 3, 4),
    "QLinearSoftmax": (1, 3, 4),      # its x_zero_point is not used by onnxruntime
    "QLinearConcat": (0, 1),
}


def input_name(op: OnnxOp, i: int) -> str:
    return op.spec.inputs[i].onnx_name


def check_per_tensor(op: OnnxOp, v, name: str) -> None:
    """A scale or zero point is a scalar or a 1-D tensor of one element
    (onnxruntime's kernels refuse anything else); a dynamic length is
    checked at run time by the lowering."""
    s = op.shape(v)
    if s is None:
        return
    if len(s) > 1 or (len(s) == 1 and s[0] not in (None, 1)):
        op.fail(f"input '{name}' has shape {fmt(s)}: expected a scalar or a 1-D tensor of "
                f"one element (onnxruntime supports per-tensor quantization only)")


def _check_params(op: OnnxOp) -> None:
    for i in PARAMS[op.op_type]:
        v = op.input(i)
        if v is not None:
            check_per_tensor(op, v, input_name(op, i))


def _flag(op: OnnxOp, name: str) -> int:
    v = opt_attr(op, name, 0)
    if v not in (0, 1):
        op.fail(f"attribute '{name}' = {v}: expected 0 or 1")
    return v


# -- QLinearAdd / QLinearMul -------------------------------------------------------

def _binary(op: OnnxOp):
    _check_params(op)
    return broadcast_shapes(op, [op.shape(op.input(0)), op.shape(op.input(3))])


for _op in ("QLinearAdd", "QLinearMul"):
    verifier(_op, 1, domain=MS)(_binary)
    shape_rule(_op, 1, domain=MS)(single_result(_binary))


# -- pooling -------------------------------------------------------------------------

def spatial_positions(rank: int, channels_last: int) -> tuple[list[int], int]:
    """(positions of the spatial dims, position of C) in X."""
    if channels_last:
        return list(range(1, rank - 1)), rank - 1
    return list(range(2, rank)), 1


def _gap(op: OnnxOp):
    _check_params(op)
    cl = _flag(op, "channels_last")
    x = op.shape(op.input(0))
    if x is None:
        return None
    if len(x) < 3:
        op.fail(f"input 'X' has shape {fmt(x)}: expected rank >= 3, got rank {len(x)}")
    sp, _c = spatial_positions(len(x), cl)
    return tuple(1 if k in sp else d for k, d in enumerate(x))


verifier("QLinearGlobalAveragePool", 1, domain=MS)(_gap)
shape_rule("QLinearGlobalAveragePool", 1, domain=MS)(single_result(_gap))


class QAxis:
    """One spatial axis of onnxruntime's QLinearAveragePool window
    (``dims`` values): window ``o`` covers input cells
    [o*stride - pad_begin, o*stride - pad_begin + kernel) clipped to the input."""

    def __init__(self, pad_begin, pad_end, out):
        self.pad_begin, self.pad_end, self.out = pad_begin, pad_end, out


def _trunc_half(v):
    """C++'s ``v / 2`` (rounds toward zero) of a dim that may be negative."""
    return D.select(D.lt(v, 0), 0 - ((0 - v) // 2), v // 2)


def qpool_axes(win: Window, ctx: D.ShapeChecks, in_dims) -> list[QAxis]:
    """onnxruntime's PoolAttributes::InferOutputSize for QLinearAveragePool
    (no dilations): SAME pads from ``(ceil(in/s) - 1) * s + k - in``, which
    is negative when the kernel is smaller than the stride (then the begin
    pad, C++ division rounding toward zero, moves the windows right); the
    output size ``(in + pads - k) / s + 1``, floored or (ceil_mode) ceiled,
    and with ceil_mode a last window starting at or past ``in + pad_begin``
    dropped. An output size below 1 is refused (onnxruntime gives an empty
    tensor)."""
    n = len(in_dims)
    axes = []
    for i, size in enumerate(in_dims):
        k, s = win.kernel[i], win.strides[i]
        if win.auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            need = (D.ceil_div(size, s) - 1) * s + k - size
            pb = _trunc_half(need + 1) if win.auto_pad == "SAME_LOWER" else _trunc_half(need)
            pe = need - pb
        elif win.pads is not None and win.auto_pad == "NOTSET":
            pb, pe = win.pads[i], win.pads[i + n]
        else:
            pb = pe = 0
        gap = size + pb + pe - k
        if win.ceil_mode:
            ctx.require(D.gt(gap + s, 0),
                        f"spatial axis {i}: the padded input size {{0}} is smaller than the "
                        f"kernel {k} by the stride {s} or more: no window fits", size + pb + pe)
            out = D.ceil_div(gap, s) + 1
            out = D.select(D.ge((out - 1) * s, size + pb), out - 1, out)
        else:
            ctx.require(D.ge(gap, 0),
                        f"spatial axis {i}: the padded input size {{0}} is smaller than the "
                        f"kernel {k}: no window fits", size + pb + pe)
            out = gap // s + 1
        axes.append(QAxis(pb, pe, out))
    return axes


def qpool_window(op: OnnxOp, n: int) -> Window:
    """The checked window attributes of QLinearAveragePool for ``n`` spatial
    axes (onnxruntime: 1 to 3 axes, each pad smaller than its kernel)."""
    if not 1 <= n <= 3:
        op.fail(f"{n} spatial axes: onnxruntime's QLinearAveragePool supports 1 to 3")
    win = window(op, n, require_kernel=True)
    if win.pads is not None:
        for i, p in enumerate(win.pads):
            if p >= win.kernel[i % n]:
                op.fail(f"attribute 'pads' = {list(win.pads)}: pad {p} of spatial axis "
                        f"{i % n} is not smaller than the kernel size {win.kernel[i % n]}")
    return win


def _avg_pool(op: OnnxOp):
    _check_params(op)
    cl = _flag(op, "channels_last")
    _flag(op, "count_include_pad")
    x = op.shape(op.input(0))
    kernel = opt_attr(op, "kernel_shape")
    if kernel is None:
        op.fail("attribute 'kernel_shape' is required")
    if x is None:
        qpool_window(op, len(kernel))
        return None
    if len(x) < 3:
        op.fail(f"input 'X' has shape {fmt(x)}: expected rank >= 3, got rank {len(x)}")
    sp, _c = spatial_positions(len(x), cl)
    win = qpool_window(op, len(sp))
    axes = qpool_axes(win, D.inference_checks(op), D.from_static([x[k] for k in sp]))
    outs = D.to_static([a.out for a in axes])
    out = list(x)
    for k, d in zip(sp, outs):
        out[k] = d
    return tuple(out)


verifier("QLinearAveragePool", 1, domain=MS)(_avg_pool)
shape_rule("QLinearAveragePool", 1, domain=MS)(single_result(_avg_pool))


# -- QLinearConcat -------------------------------------------------------------------

def concat_triples(op: OnnxOp) -> list[tuple]:
    """The (X, X_scale, X_zero_point) triples of QLinearConcat (checked)."""
    ins = op.variadic()
    if len(ins) < 3 or len(ins) % 3:
        op.fail(f"expected (X, X_scale, X_zero_point) triples after Y_scale and "
                f"Y_zero_point, got {len(ins)} inputs")
    return [tuple(ins[i:i + 3]) for i in range(0, len(ins), 3)]


def _concat(op: OnnxOp):
    _check_params(op)
    triples = concat_triples(op)
    yz = op.elem(op.input(1))
    for j, (x, s, z) in enumerate(triples):
        if op.elem(s) is not None and str(op.elem(s)) != "f32":
            op.fail(f"X_scale of input #{j} has element type {op.elem(s)}, expected float")
        for v, what in ((x, "X"), (z, "X_zero_point")):
            if yz is not None and op.elem(v) is not None and op.elem(v) != yz:
                op.fail(f"{what} of input #{j} has element type {op.elem(v)}, expected "
                        f"{yz} (that of Y_zero_point)")
        check_per_tensor(op, s, f"X_scale of input #{j}")
        check_per_tensor(op, z, f"X_zero_point of input #{j}")
    return concat_dims(op, [op.shape(x) for x, _s, _z in triples], op.attrs.axis)


verifier("QLinearConcat", 1, domain=MS)(_concat)
shape_rule("QLinearConcat", 1, domain=MS)(single_result(_concat, elem_input=1))


# -- lookup-table activations, QLinearSoftmax ----------------------------------------

def _elementwise(op: OnnxOp):
    _check_params(op)
    return op.shape(op.input(0))


for _op in ("QLinearSigmoid", "QLinearLeakyRelu"):
    verifier(_op, 1, domain=MS)(_elementwise)
    shape_rule(_op, 1, domain=MS)(single_result(_elementwise))


def softmax_axis(op: OnnxOp, rank: int) -> int:
    """QLinearSoftmax's axis in [0, rank). An absent axis is the schema's -1
    for every ``opset``, as onnxruntime runs it (its kernel's "1 below
    opset 13" default is never reached: the schema default fills the
    attribute first)."""
    if op.attrs.opset is None:
        op.fail("attribute 'opset' is required")
    axis = op.attrs.axis
    if not -rank <= axis < rank:
        op.fail(f"attribute 'axis' = {axis}: expected a value in [{-rank}, {rank - 1}] for "
                f"input 'X' of rank {rank}")
    return axis + rank if axis < 0 else axis


def _softmax(op: OnnxOp):
    s = _elementwise(op)
    if op.attrs.opset is None:
        op.fail("attribute 'opset' is required")
    if s is not None:
        if len(s) == 0:
            op.fail("input 'X' is a scalar: expected rank >= 1")
        softmax_axis(op, len(s))
    return s


verifier("QLinearSoftmax", 1, domain=MS)(_softmax)
shape_rule("QLinearSoftmax", 1, domain=MS)(single_result(_softmax))
