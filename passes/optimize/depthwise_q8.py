"""Depthwise convs of a QDQ model on 8-bit data: the kernel plan's ``depthwise_q8``.

A QDQ model's depthwise conv (``quantize_static``: DequantizeLinear ->
Conv(group = C) -> QuantizeLinear) lowers at -O2/-O3 to

    xf  = generic(xq, sx, zx)          DequantizeLinear: (x - zx) * sx, 8-bit -> f32
    xp  = tensor.pad xf (0.0)           the conv's pads
    acc = depthwise_conv(xp, W) into fill(0.0)          W: the f32 weights
    y   = generic(acc, b[c]) ... generic(., sy, zy)     bias add, [ReLU / Clip,] QuantizeLinear

(the weights' and the bias' DequantizeLinear are evaluated at compile time,
``optimize_onnx/quantize.py``). Each f32 tensor between them went through
memory: the dequantized input (4 bytes an element, written by one pass and
read by the pad's copy), the conv's output and the QuantizeLinear pass over
it. Here the whole chain is one call of the row kernel (:mod:`.row_kernel`)
whose ends are 8-bit:

- the scratch plane copy (:mod:`.row_plane`) reads the 8-bit input plane
  and applies the DequantizeLinear generic's ops to each vector it copies
  (into the f32 plane whose border is the pad's 0.0);
- the taps are the f32 kernel's FMAs on the same f32 weights, from the
  conv's fill value;
- the ops of the generics after the conv up to the first 8-bit result (bias
  add, ReLU / Clip, QuantizeLinear's divide, round half to even, zero point,
  saturation) run on each accumulator vector, which is stored as 8-bit.

What it computes: the ops of the unfused generics, lane by lane, in their
order and types (``epilogue_q8.emit`` writes them), with the row kernel's
FMA sum: the same as the f32 kernel of :mod:`.depthwise` followed by the
separate passes, which add the bias first and so may round differently;
outputs agree with onnxruntime as the f32 path did (within one quantization
step where a value falls on a rounding boundary). Not onnxruntime's integer
sum: that needs the 8-bit weights and the int32 bias, which are folded to
f32 before lowering (QDQ groups with one group become QLinearConv at the
ONNX level; depthwise groups do not, see ``quantize._qdq_conv``).

Taken: the f32 depthwise convs :func:`.depthwise.depthwise_window` takes
(channel multiplier 1, strides and dilations any, static shapes but for a
dynamic batch, which the kernel loops over itself), into a ``linalg.fill``,
whose input is a (padded) all-parallel generic of an 8-bit tensor used only
by it, and whose output chain (each generic the single user of the
previous result) reaches an 8-bit result; every other operand of those
generics is a static tensor indexed by the channel or by nothing (scales,
zero points, bias), so their per-channel parts are computed once per
channel (``epilogue_q8.uniform``). ``ENABLED = False`` leaves these convs to
the f32 kernel (A/B measurements).
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.dialects.onnx.opview import owner_op
from onnx_mlir_py.passes.optimize.depthwise import depthwise_window
from onnx_mlir_py.passes.optimize.epilogue_q8 import (Q8Epilogue, Step, dim_positions,
                                                      is_identity, maps_of, op_of, body_ok,
                                                      constant_text, elem_of, emit,
                                                      external_type, uniform)
from onnx_mlir_py.passes.optimize.kernel_emit import Elem, Emitter, Value
from onnx_mlir_py.passes.optimize.kernel_fusion import fill_scalar, single_user, zero_pad
from onnx_mlir_py.passes.optimize.row_plan import Conv
from onnx_mlir_py.passes.optimize.window_rewrite import rewrite_all
from onnx_mlir_py.target import Target

ENABLED = True
KERNEL = "depthwise_q8"
# generics after the conv up to the 8-bit one (bias add, ReLU, Clip, QuantizeLinear)
MAX_STEPS = 4


class Quant:
    """The 8-bit ends of one conv's kernel (``Conv.quant``): ``pro`` the
    DequantizeLinear generic on the input, ``epi`` the generics after the
    conv. Hashed by identity: each conv gets its own kernel function."""

    in_elem = Elem.I8

    def __init__(self, pro: Q8Epilogue, epi: Q8Epilogue):
        self.pro, self.epi = pro, epi
        self.out_elem = epi.elem

    def params(self, e: Emitter) -> list[Value]:
        """The kernel's parameters for the generics' other operands (scales,
        zero points, bias): the prologue's, then the epilogue's."""
        return [e.param("qp", external_type(x)) for x in self.pro.externals] + \
            [e.param("qe", external_type(x)) for x in self.epi.externals]

    def channel(self, e: Emitter, params: list[Value], ch: Value, lanes: int):
        """Per channel ``ch``: the ops that depend on it only, as vectors."""
        k = len(self.pro.externals)
        pp, ep = params[:k], params[k:]
        return pp, uniform(e, self.pro, pp, ch, lanes), ep, uniform(e, self.epi, ep, ch, lanes)

    def prologue(self, e: Emitter, st, v: Value) -> Value:
        """An 8-bit input vector dequantized (f32)."""
        return emit(e, self.pro, v, st[0], [], v.type.shape[0], True, st[1])

    def epilogue(self, e: Emitter, st, acc: Value, whole: bool = False) -> Value:
        """An accumulator vector through the generics after the conv (8-bit);
        ``whole``: stored with one unmasked full-vector store (the
        requantization may round with ``epilogue_q8.MAGIC_ROUND``)."""
        return emit(e, self.epi, acc, st[2], [], acc.type.shape[0], True, st[3], whole)


def _step(g: ir.Operation, first: ir.Value, externals: list, maps: list, constants: dict):
    """The sources of generic ``g`` (see ``epilogue_q8.Step``: its first input,
    ``("acc",)``, is ``first``; the others are appended to ``externals``)
    when ``g`` is an all-parallel 4-D generic with one result of ``first``'s
    shape, both with identity maps, whose other inputs are static tensors
    indexed by the channel (d1) or by nothing, with a body of scalar
    arith/math ops; else None."""
    if g.name != "linalg.generic" or len(g.results) != 1 or len(g.regions) != 1:
        return None
    if any("parallel" not in str(a) for a in g.attributes["iterator_types"]):
        return None
    ms = maps_of(g)
    ins = list(g.operands)[:len(ms) - 1]
    rt, ft = g.results[0].type, first.type
    if not ins or ins[0] != first or first in ins[1:] or ms[-1].n_dims != 4 or \
            not (is_identity(ms[0]) and is_identity(ms[-1])) or \
            not isinstance(rt, ir.RankedTensorType) or rt.shape != ft.shape or \
            elem_of(rt.element_type) is None:
        return None
    srcs = [("acc",)]
    for x, m in zip(ins[1:], ms[1:]):
        pos, t = dim_positions(m), x.type
        if pos is None or any(p not in (None, 1) for p in pos) or \
                not isinstance(t, ir.RankedTensorType) or not t.has_static_shape or \
                elem_of(t.element_type) is None:
            return None
        externals.append(x)
        maps.append(m)
        srcs.append(("ext", len(externals) - 1))
    return srcs if body_ok(g, constants, _constant_text) else None


def _constant_text(x: ir.Value) -> str | None:
    """``epilogue_q8.constant_text``, and also the ``tensor.extract`` of a
    0-d splat ``arith.constant`` (a Clip's bounds, extracted outside the
    generic)."""
    o = owner_op(x)
    if o is not None and op_of(o).name == "tensor.extract" and len(op_of(o).operands) == 1:
        c = owner_op(op_of(o).operands[0])
        if c is None or op_of(c).name != "arith.constant":
            return None
        text = str(op_of(c).attributes["value"])
        if not text.startswith("dense<") or text.startswith("dense<["):
            return None     # a splat's value only
        return text[len("dense<"):].split(">", 1)[0]
    return constant_text(x)


def _dequantize(v: ir.Value) -> Q8Epilogue | None:
    """The generic producing ``v`` (f32) from an 8-bit tensor, used only by
    ``v``'s single user, as a one-step epilogue on that tensor."""
    g = owner_op(v)
    if g is None or single_user(v) is None or not isinstance(v.type.element_type, ir.F32Type):
        return None
    g = op_of(g)
    if g.name != "linalg.generic" or not g.operands:
        return None
    xq = g.operands[0]
    if not isinstance(xq.type, ir.RankedTensorType) or elem_of(xq.type.element_type) != Elem.I8:
        return None
    externals, maps, constants = [], [], {}
    srcs = _step(g, xq, externals, maps, constants)
    if srcs is None:
        return None
    return Q8Epilogue([Step(g, srcs)], externals, maps, v, Elem.F32, constants)


def _requantize(op: ir.Operation) -> Q8Epilogue | None:
    """The generics after ``op`` up to the first with an 8-bit result."""
    cur = op.results[0]
    steps, externals, maps, constants = [], [], [], {}
    while len(steps) < MAX_STEPS:
        g = single_user(cur)
        srcs = _step(g, cur, externals, maps, constants) if g is not None else None
        if srcs is None:
            return None
        steps.append(Step(g, [("step", len(steps) - 1) if s == ("acc",) and steps else s
                              for s in srcs]))
        cur = g.results[0]
        if elem_of(cur.type.element_type) == Elem.I8:
            return Q8Epilogue(steps, externals, maps, cur, Elem.I8, constants)
    return None


def _match(op: ir.Operation):
    """``(Conv, operands, ops to erase, op whose result is replaced, dead ops)`` or None."""
    if not ENABLED:
        return None
    found = depthwise_window(op)
    if found is None:
        return None
    _xs, ws, os_, s, d = found
    x, pad = op.operands[0], (0, 0, 0, 0)      # no pads: a plane copy all the same
    padded = zero_pad(x)
    if padded is not None:
        x, pad = padded
    pro = _dequantize(x)
    fill = fill_scalar(op.operands[2])
    if pro is None or fill is None:
        return None
    epi = _requantize(op)
    if epi is None:
        return None
    xq = pro.steps[0].generic.operands[0]
    dyn = ir.ShapedType.get_dynamic_size()
    xs = tuple(None if v == dyn else v for v in xq.type.shape)
    last = op_of(epi.steps[-1].generic)
    cv = Conv(xs, tuple(pad), ws[1], ws[2], tuple(os_), tuple(s), tuple(d), "scalar",
              quant=Quant(pro, epi))
    operands = [xq, op.operands[1], last.operands[-1], fill[0]] + pro.externals + epi.externals
    erase = [op] + [op_of(st.generic) for st in epi.steps]
    dead = ([owner_op(op.operands[0])] if padded is not None else []) + [op_of(pro.steps[0].generic)]
    return cv, operands, erase, last, dead


def depthwise_q8_convs(module: ir.Module, target: Target, threads: bool = False,
                       plan=None) -> int:
    """Replace every depthwise conv :func:`_match` takes (with a kernel
    ``plan``: those it gave to ``depthwise_q8``) and its 8-bit ends by the
    row kernel. Returns how many were rewritten."""
    return rewrite_all(module, "linalg.depthwise_conv_2d_nchw_chw", _match, "__om_depthwise_q8",
                       target, threads, plan, KERNEL)
