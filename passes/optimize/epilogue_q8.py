"""Epilogues of the int8 conv kernel: the elementwise ops after an int8
conv's i32 accumulators (QLinearConv's requantization, the DequantizeLinear
after it, a residual add of another dequantized tensor, ReLU / Clip, the
QuantizeLinear after them) computed on the kernel's register tile before it
is stored, instead of by separate passes that write the i32 accumulators to
memory and read them back (4 bytes per output where the result is 1).

1. :func:`epilogue_chain` collects, from the conv's result, the chain of
   all-parallel generics over the conv's output space that each consume the
   previous one's result (its only use, with an identity map), and, for an
   input of such a generic that is not available where the conv is, the
   single-use elementwise generic producing it when its own inputs are (a
   residual branch's DequantizeLinear: the chain then reads that branch's
   8-bit tensor). Every other input ("external") must be defined before the
   conv: the kernel call replaces the conv where it is. Constants inside or
   captured by a body are re-emitted; anything else (``linalg.index``, a
   non-arith/math op, a body reading its output) refuses the epilogue.
2. :func:`emit` writes the chain's body ops on one accumulator vector of 16
   pixels of one filter: each op in MLIR's generic form with its operands'
   types as 16-lane vectors; an external input indexed by the pixel's
   column (its map's last result ``d3``) is read as a vector, any other
   (per channel, per tensor) as a scalar broadcast.

The ops compute what the generics computed, lane by lane, in the same
order and types: fusing never changes a result. The int8 convs are rewritten from the last
to the first, so a conv's chain may take a residual branch whose 8-bit
tensor an earlier conv's kernel then writes directly.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.dialects.onnx.opview import owner_op
from onnx_mlir_py.passes.optimize.epilogue import dominates
from onnx_mlir_py.passes.optimize.kernel_emit import Elem, Emitter, Kind, Type, Value, vector

# at most this many generics in one epilogue (with the absorbed producers)
MAX_GENERICS = 8
MAX_EXTERNALS = 16


def elem_of(t: ir.Type) -> Elem | None:
    """The kernel emitter's element for a scalar MLIR type (None: not one)."""
    if isinstance(t, ir.IntegerType) and t.is_signless:
        return {1: Elem.I1, 8: Elem.I8, 16: Elem.I16, 32: Elem.I32, 64: Elem.I64}.get(t.width)
    for cls, el in ((ir.F32Type, Elem.F32), (ir.F64Type, Elem.F64), (ir.F16Type, Elem.F16),
                    (ir.BF16Type, Elem.BF16)):
        if isinstance(t, cls):
            return el
    return None


@dataclass
class Step:
    """One generic of the epilogue: ``sources[i]`` says where its input i
    comes from: ("acc",) the accumulators, ("step", j) step j's result,
    ("ext", k) external input k."""
    generic: ir.Operation
    sources: list


@dataclass
class Q8Epilogue:
    steps: list
    externals: list              # the external input values (tensors), kernel parameters
    maps: list                   # each external's indexing map (over the 4 output dims)
    result: ir.Value             # the last generic's result (the call replaces it)
    elem: Elem                   # its element type
    constants: dict = field(default_factory=dict)   # outside constant value -> (text, Elem)
    quant: dict | None = None    # :func:`quant_plan`'s, once computed

    @property
    def generics(self) -> list:
        return [s.generic for s in self.steps]


def op_of(u) -> ir.Operation:
    return u.operation if isinstance(u, ir.OpView) else u


def maps_of(g: ir.Operation) -> list:
    return [ir.AffineMapAttr(a).value for a in g.attributes["indexing_maps"]]


def is_identity(m: ir.AffineMap) -> bool:
    return m == ir.AffineMap.get_identity(m.n_dims)


def dim_positions(m: ir.AffineMap) -> list | None:
    """The loop dim of each result (None for a constant 0), or None when a
    result is another expression."""
    out = []
    for r in m.results:
        r = r.maybe_downcast()
        if isinstance(r, ir.AffineDimExpr):
            out.append(r.position)
        elif isinstance(r, ir.AffineConstantExpr) and r.value == 0:
            out.append(None)
        else:
            return None
    return out


def _readable(m: ir.AffineMap, v: ir.Value) -> bool:
    """An input the kernel can read per vector of pixels: a static tensor
    indexed by loop dims / 0, the column dim (3) only as its last index."""
    pos = dim_positions(m)
    t = v.type
    if pos is None or not isinstance(t, ir.RankedTensorType) or not t.has_static_shape \
            or elem_of(t.element_type) is None:
        return False
    return 3 not in pos[:-1]


def constant_text(x: ir.Value) -> str | None:
    """The value of scalar ``x`` as constant text when it is an
    ``arith.constant`` (defined outside the generic); else None."""
    c = owner_op(x)
    if c is None or op_of(c).name != "arith.constant":
        return None
    return str(op_of(c).attributes["value"]).rsplit(" : ", 1)[0]


def body_ok(g: ir.Operation, constants: dict, constant_of=constant_text) -> bool:
    """Body ops are scalar arith/math ops on block arguments, earlier body
    values and constants, whose text ``constant_of`` gives (recorded in
    ``constants``); the output argument is unused."""
    block = g.regions[0].blocks[0]
    args = list(block.arguments)
    if len(list(args[-1].uses)):
        return False
    ops = list(block.operations)
    inside = set()
    for o in ops[:-1]:
        o = op_of(o)
        if not (o.name.startswith("arith.") or o.name.startswith("math.")) or len(o.regions):
            return False
        for r in o.results:
            if elem_of(r.type) is None:
                return False
        for x in o.operands:
            if elem_of(x.type) is None:
                return False
            if isinstance(x.owner, ir.Block):
                if x.owner != block:
                    return False
                continue
            if x in inside:
                continue
            text = constant_of(x)
            if text is None:
                return False
            constants[x] = (text, elem_of(x.type))
        inside.update(o.results)
    return op_of(ops[-1]).name == "linalg.yield"


def _eligible(g: ir.Operation, out_t: ir.Type, constants: dict) -> bool:
    """An all-parallel 4-loop generic with one result of the output space's
    shape (any element type), identity output map and a fusable body."""
    if g.name != "linalg.generic" or len(g.results) != 1 or len(g.regions) != 1:
        return False
    rt = g.results[0].type
    if not isinstance(rt, ir.RankedTensorType) or list(rt.shape) != list(out_t.shape) \
            or elem_of(rt.element_type) is None:
        return False
    if any("parallel" not in str(a) for a in g.attributes["iterator_types"]):
        return False
    maps = maps_of(g)
    if maps[-1].n_dims != 4 or not is_identity(maps[-1]):
        return False
    ins = list(g.operands)[:len(maps) - 1]
    if not all(_readable(m, v) for m, v in zip(maps, ins)):
        return False
    return body_ok(g, constants)


def epilogue_chain(conv: ir.Operation) -> Q8Epilogue | None:
    """The epilogue of ``conv`` (a static 4-D i32 result), or None."""
    v = conv.results[0]
    out_t = v.type
    constants: dict = {}
    steps: list[Step] = []
    externals: list = []
    ext_maps: list = []
    made: dict = {v: ("acc",)}
    cur = v

    def external(x, m):
        for k, (y, n) in enumerate(zip(externals, ext_maps)):
            if y == x and n == m:
                return ("ext", k)
        externals.append(x)
        ext_maps.append(m)
        return ("ext", len(externals) - 1)

    def sources(g, allow_side: bool):
        """Sources of g's inputs (absorbing single-use producers), or None."""
        maps = maps_of(g)
        ins = list(g.operands)[:len(maps) - 1]
        srcs, side = [], []
        for x, m in zip(ins, maps):
            if x in made:
                if not is_identity(m):
                    return None
                srcs.append(made[x])
                continue
            p = owner_op(x) if allow_side else None
            # the elementwise producer of an input (a residual branch's
            # dequantization), taken into the epilogue: its inputs are read
            # instead (8-bit, not the f32 it writes) and its pass goes away
            sub = sources(op_of(p), False) if p is not None and len(list(x.uses)) == 1 \
                and is_identity(m) and _eligible(op_of(p), out_t, constants) else None
            if sub is not None:
                side.append((op_of(p), sub))
                srcs.append(("side", op_of(p)))
            elif dominates(x, conv) or _hoisted_constant(x, conv):
                srcs.append(None)           # external, assigned below
            else:
                return None
        return srcs, side

    while len(steps) < MAX_GENERICS:
        uses = list(cur.uses)
        if len(uses) != 1:
            break
        g = op_of(uses[0].owner)
        if not _eligible(g, out_t, constants) or uses[0].operand_number >= len(maps_of(g)) - 1 \
                or not is_identity(maps_of(g)[uses[0].operand_number]):
            break
        found = sources(g, True)
        if found is None:
            break
        srcs, side = found
        new_ext = {(x, str(m)) for s_, x, m in zip(srcs, list(g.operands), maps_of(g)) if s_ is None}
        for p, (psrcs, _) in side:
            new_ext |= {(x, str(m)) for s_, x, m in zip(psrcs, list(p.operands), maps_of(p))
                        if s_ is None}
        if len(steps) + len(side) + 1 > MAX_GENERICS or \
                len(externals) + len(new_ext) > MAX_EXTERNALS:
            break
        for p, (psrcs, _) in side:
            pm = maps_of(p)
            pins = list(p.operands)[:len(pm) - 1]
            resolved = [s if s is not None else external(x, m)
                        for s, x, m in zip(psrcs, pins, pm)]
            steps.append(Step(p, resolved))
            made[p.results[0]] = ("step", len(steps) - 1)
        maps = maps_of(g)
        ins = list(g.operands)[:len(maps) - 1]
        resolved = []
        for s, x, m in zip(srcs, ins, maps):
            if s is None:
                s = external(x, m)
            elif s[0] == "side":
                s = made[s[1].results[0]]
            resolved.append(s)
        steps.append(Step(g, resolved))
        made[g.results[0]] = ("step", len(steps) - 1)
        cur = g.results[0]
    if not steps:
        return None
    return Q8Epilogue(steps, externals, ext_maps, cur, elem_of(cur.type.element_type),
                      constants)


def _hoisted_constant(x: ir.Value, conv: ir.Operation) -> bool:
    """A constant defined after the conv is moved before it (an external
    input of its epilogue must be defined where the kernel call goes)."""
    c = owner_op(x)
    if c is None or op_of(c).name != "arith.constant" or op_of(c).block != conv.block:
        return False
    op_of(c).move_before(conv)
    return True


def external_type(x: ir.Value) -> Type:
    from onnx_mlir_py.passes.optimize.kernel_emit import tensor
    return tensor(list(x.type.shape), elem_of(x.type.element_type))


def flat_externals(epi: Q8Epilogue, hw: tuple) -> bool:
    """Whether every external reads by (n, f) only or by the whole pixel
    (its last two indices d2, d3 over [OH, OW] = ``hw``): then a conv
    computed as one row of OH*OW pixels can read them as such a row."""
    for x, m in zip(epi.externals, epi.maps):
        pos = dim_positions(m)
        if 2 in pos or 3 in pos:
            if pos[-2:] != [2, 3] or 2 in pos[:-2] or list(x.type.shape[-2:]) != list(hw):
                return False
    return True


def pixel_free(epi: Q8Epilogue) -> bool:
    """Whether no external is read by pixel (by (n, f) only or by nothing):
    a conv computed over its padded rows has no pixel coordinates to read
    them at."""
    return all((pos := dim_positions(m)) is not None and 2 not in pos and 3 not in pos
               for m in epi.maps)


def _attrs_text(o: ir.Operation) -> str:
    attrs = ", ".join(f"{k} = {o.attributes[k]}" for k in o.attributes)
    return f" {{{attrs}}}" if attrs else ""


def _line(name: str, attrs: str, names: list[str], in_types: list[str], out_types: list[str]):
    outs = out_types[0] if len(out_types) == 1 else f"({', '.join(out_types)})"
    return f"\"{name}\"({', '.join(names)}){attrs} : ({', '.join(in_types)}) -> {outs}"


def _step_body(epi: Q8Epilogue, step_i: int) -> list:
    """Step ``step_i``'s body ops but the yield, as what :func:`_step_ops`
    reads of them: ``(result, constant, operands, name, attributes'
    text, result elems)`` (``constant``: its value's text and elem, the
    other fields None). Read once per epilogue: a kernel emits a step's
    ops for every tile and tail (a read through the bindings per op and
    operand each time was a third of the int8 convs' text, #29)."""
    bodies = epi.__dict__.setdefault("_bodies", {})
    body = bodies.get(step_i)
    if body is None:
        body = []
        for o in list(epi.steps[step_i].generic.regions[0].blocks[0].operations)[:-1]:
            o = op_of(o)
            r0 = o.results[0]
            if o.name == "arith.constant":
                body.append((r0, (str(o.attributes["value"]).rsplit(" : ", 1)[0],
                                  elem_of(r0.type)), None, None, None, None))
            else:
                body.append((r0, None, list(o.operands), o.name, _attrs_text(o),
                             [elem_of(r.type) for r in o.results]))
        bodies[step_i] = body
    return body


def _uniform_arg(epi: Q8Epilogue, src) -> bool:
    """Whether a step input is the same for every pixel of a filter (an
    external read by the filter index only, or by none)."""
    if src[0] != "ext":
        return False
    return all(p in (None, 1) for p in dim_positions(epi.maps[src[1]]))


def _step_ops(e: Emitter, epi: Q8Epilogue, step_i: int, env: dict, lanes: int,
              skip=None) -> None:
    """Emit step ``step_i``'s body ops whose operands are all in ``env``
    (and not in ``skip``), in order, adding their results to ``env``."""
    for r0, const, operands, name, attrs, elems in _step_body(epi, step_i):
        if r0 in env or (skip is not None and r0 in skip):
            continue
        if const is not None:
            text, el = const
            env[r0] = e.broadcast(e.const(text, Type(Kind.SCALAR, el)), vector(lanes, el))
            continue
        vals = []
        for x in operands:
            if x not in env and x in epi.constants:      # a constant defined outside the generic
                text, el = epi.constants[x]
                env[x] = e.broadcast(e.const(text, Type(Kind.SCALAR, el)), vector(lanes, el))
            if x not in env:
                break
            vals.append(env[x])
        else:
            rts = [vector(lanes, el) for el in elems]
            line = _line(name, attrs, [str(v) for v in vals], [str(v.type) for v in vals],
                         [str(t) for t in rts])
            env[r0] = e.op("ep", line, rts[0])


# -- the QuantizeLinear tails, computed with fewer ops --------------------------------
# False: every body op is emitted as it is: ``arith.maximumf`` / ``minimumf``
# (NaN-propagating: a compare and a blend each on x86), and a QuantizeLinear
# whose 8-bit result a DequantizeLinear reads (the requantized conv before a
# residual add) converted to 8 bits and back
FAST_QUANT = True

# False: a fused Q -> DQ's clamped integer goes through fptosi / sitofp (two
# conversions) to turn -0.0 into +0.0 instead of one add of +0.0
ZERO_SIGN_ADD = True


@dataclass
class _Tail:
    """The end of a step's body that quantizes ``y``:
    ``q = fptoui/fptosi(minimumf(maximumf(roundeven(y) + zf, lo), hi))``
    (i8), ``zf`` the zero point's f32 conversion (a value of the body that
    depends on no pixel), ``lo`` <= ``hi`` integers within q's range."""
    y: ir.Value
    zf: ir.Value
    lo: float
    hi: float
    to_int: str               # arith.fptoui / arith.fptosi
    results: set              # the ops' results from roundeven on (not emitted as they are)
    dq: ir.Value | None = None   # fused: the reading step's ``uitofp(q) - zf`` (its value)
    reader: int | None = None    # the step of ``dq``
    relu: tuple | None = None    # (step, its input) of a ReLU folded into the clamp (:func:`_relu_before`)
    nan_guard: bool = False      # y was ``select(y != y, -inf, y)`` (:func:`_nan_guarded`)


def _owner_in(v: ir.Value, block) -> ir.Operation | None:
    o = owner_op(v)
    return op_of(o) if o is not None and op_of(o).block == block else None


def _float_const(epi: Q8Epilogue, v: ir.Value, block) -> float | None:
    """The value of f32 constant ``v`` (an ``arith.constant`` in the body or
    one of ``epi.constants``), else None."""
    o = _owner_in(v, block)
    if o is not None and o.name == "arith.constant":
        text = str(o.attributes["value"]).rsplit(" : ", 1)[0]
    elif o is None and v in epi.constants:
        text = epi.constants[v][0]
    else:
        return None
    try:
        return float(text)
    except ValueError:
        return _hex_f32(text) if text.startswith("0x") else None


def _one_use(v: ir.Value) -> bool:
    return len(list(v.uses)) == 1


def _tail(epi: Q8Epilogue, i: int) -> _Tail | None:
    """Step ``i``'s quantizing tail, when its body ends with one."""
    block = epi.steps[i].generic.regions[0].blocks[0]
    ops = [op_of(o) for o in block.operations]
    q = ops[-1].operands[0]
    qo = _owner_in(q, block)
    if qo is None or qo.name not in ("arith.fptoui", "arith.fptosi") or             elem_of(q.type) != Elem.I8 or elem_of(qo.operands[0].type) != Elem.F32:
        return None
    lim = (0.0, 255.0) if qo.name == "arith.fptoui" else (-128.0, 127.0)
    chain, bounds, v = [qo], [], qo.operands[0]
    for name in ("arith.minimumf", "arith.maximumf"):
        o = _owner_in(v, block)
        if o is None or o.name != name or not _one_use(v):
            return None
        c = _float_const(epi, o.operands[1], block)
        if c is None or not lim[0] <= c <= lim[1] or c != int(c):      # (NaN, inf: out)
            return None
        chain.append(o)
        bounds.append(c)
        v = o.operands[0]
    hi, lo = bounds
    ao = _owner_in(v, block)
    if lo > hi or ao is None or ao.name != "arith.addf" or not _one_use(v):
        return None
    for r, zf in (ao.operands[0], ao.operands[1]), (ao.operands[1], ao.operands[0]):
        ro, zo = _owner_in(r, block), _owner_in(zf, block)
        if ro is not None and ro.name == "math.roundeven" and _one_use(r) and zo is not None \
                and zo.name in ("arith.uitofp", "arith.sitofp") and \
                elem_of(zo.operands[0].type) == Elem.I8 and _uniform_value(epi, i, zf):
            guard = _nan_guarded(epi, ro.operands[0], block)
            if guard is None:
                return _Tail(ro.operands[0], zf, lo, hi, qo.name,
                             {o.results[0] for o in chain + [ao, ro]})
            y, guard_ops = guard
            return _Tail(y, zf, lo, hi, qo.name,
                         {o.results[0] for o in chain + [ao, ro] + guard_ops}, nan_guard=True)
    return None


def _nan_guarded(epi: Q8Epilogue, v: ir.Value, block) -> tuple | None:
    """(y, [select, cmpf]) when ``v`` is ``select(cmpf uno y y, -inf, y)``
    (QuantizeLinear's NaN -> the lowest value, onnx_to_linalg/quantize.py),
    both single-use: the tail's clamp ``v > lo ? v : lo`` (:func:`_clamp`)
    gives NaN the lower bound as it gives -inf, so the guard is not emitted
    (exact while the lower bound is lo itself: no ReLU folded, see
    :func:`quant_plan`)."""
    so = _owner_in(v, block)
    if so is None or so.name != "arith.select" or not _one_use(v):
        return None
    c, neg, y = so.operands
    co = _owner_in(c, block)
    if co is None or co.name != "arith.cmpf" or not _one_use(c) or \
            list(co.operands) != [y, y] or "predicate" not in co.attributes or \
            ir.IntegerAttr(co.attributes["predicate"]).value != 14:     # uno
        return None
    if _float_const(epi, neg, block) != float("-inf"):
        return None
    return y, [so, co]


def _hex_f32(text: str) -> float | None:
    """An f32 constant's text as MLIR prints infinities (``0xFF800000``)."""
    import struct
    try:
        return struct.unpack("<f", struct.pack("<I", int(text, 16)))[0]
    except (ValueError, struct.error):
        return None


def _uniform_value(epi: Q8Epilogue, i: int, v: ir.Value) -> bool:
    """Whether body value ``v`` of step ``i`` is computed from its uniform
    inputs (:func:`_uniform_arg`) and constants only."""
    block = epi.steps[i].generic.regions[0].blocks[0]
    if isinstance(v.owner, ir.Block):
        if v.owner != block:
            return False
        k = list(block.arguments).index(v)
        return k < len(epi.steps[i].sources) and _uniform_arg(epi, epi.steps[i].sources[k])
    o = _owner_in(v, block)
    if o is None:
        return v in epi.constants
    return all(_uniform_value(epi, i, x) for x in o.operands)


def _dequantized(epi: Q8Epilogue, i: int, t: _Tail) -> tuple | None:
    """(step j, value d) when step i's 8-bit result is read by one step j
    only, whose body computes ``d = uitofp(q) - uitofp(z)`` from it (sitofp
    for fptosi), z the same zero point as the tail's: then d is computed
    from y directly (:func:`_emit_tail`)."""
    readers = [(j, k) for j, s in enumerate(epi.steps) for k, src in enumerate(s.sources)
               if src == ("step", i)]
    if len(readers) != 1:
        return None
    j, k = readers[0]
    block = epi.steps[j].generic.regions[0].blocks[0]
    arg = list(block.arguments)[k]
    to_f = "arith.uitofp" if t.to_int == "arith.fptoui" else "arith.sitofp"
    uses = list(arg.uses)
    if len(uses) != 1:
        return None
    co = op_of(uses[0].owner)
    if co.name != to_f or not _one_use(co.results[0]):
        return None
    so = op_of(list(co.results[0].uses)[0].owner)
    if so.name != "arith.subf" or so.operands[0] != co.results[0]:
        return None
    zo = _owner_in(so.operands[1], block)
    tz = _owner_in(t.zf, epi.steps[i].generic.regions[0].blocks[0])
    if zo is None or zo.name != tz.name or not isinstance(zo.operands[0].owner, ir.Block) or \
            not isinstance(tz.operands[0].owner, ir.Block):
        return None
    zi = list(block.arguments).index(zo.operands[0])
    ti = list(tz.operands[0].owner.arguments).index(tz.operands[0])
    zs, ts = epi.steps[j].sources[zi], epi.steps[i].sources[ti]
    if zs != ts or zs[0] != "ext":
        return None
    return j, so.results[0]


def quant_plan(epi: Q8Epilogue) -> dict:
    """Step -> its :class:`_Tail` (with the fused DequantizeLinear), for the
    steps that end by quantizing (empty without FAST_QUANT)."""
    if epi.quant is None:
        epi.quant = {}
        for i in range(len(epi.steps)) if FAST_QUANT else ():
            t = _tail(epi, i)
            if t is None:
                continue
            found = _dequantized(epi, i, t)
            if found is not None:
                t.reader, t.dq = found
            elif not t.nan_guard:
                # a folded ReLU's bound max(lo, zf) would be NaN's value
                # too, where QuantizeLinear gives NaN the lowest value lo
                t.relu = _relu_before(epi, i, t)
            epi.quant[i] = t
    return epi.quant


def _positive_constant(x: ir.Value) -> bool:
    """Whether tensor ``x`` is an f32 ``arith.constant`` whose values are all
    finite and above 0."""
    c = owner_op(x)
    if c is None or op_of(c).name != "arith.constant" or elem_of(x.type.element_type) != Elem.F32:
        return False
    try:
        a = ir.DenseFPElementsAttr(op_of(c).attributes["value"])
        vals = np.array([float(a.get_splat_value().value)]) if a.is_splat else np.array(a)
    except (ValueError, TypeError):
        return False
    return bool(vals.size) and bool(np.all(np.isfinite(vals) & (vals > 0)))


def _relu_before(epi: Q8Epilogue, i: int, t: _Tail) -> tuple | None:
    """(r, x) for the step r whose body is only ``maximumf(x, 0.0)`` (a ReLU) when its
    result is read only by step i's ``y = relu / s`` (or ``relu * s``), ``s``
    a per-filter or per-tensor constant above 0: the ReLU is then the
    clamp's lower bound max(lo, zf) (``roundeven(max(x, 0) / s) + zf`` is
    ``max(roundeven(x / s) + zf, zf)``: division by s > 0 keeps the order
    and 0; the add of an integer zf is exact or saturates), not an op."""
    block = epi.steps[i].generic.regions[0].blocks[0]
    yo = _owner_in(t.y, block)
    if yo is None or yo.name not in ("arith.divf", "arith.mulf"):
        return None
    args = list(block.arguments)
    pairs = [(yo.operands[0], yo.operands[1])]
    if yo.name == "arith.mulf":
        pairs.append((yo.operands[1], yo.operands[0]))
    for a, sc in pairs:
        if not (isinstance(a.owner, ir.Block) and isinstance(sc.owner, ir.Block)) or \
                a.owner != block or sc.owner != block or a == sc or not _one_use(a):
            continue
        src, ssrc = epi.steps[i].sources[args.index(a)], epi.steps[i].sources[args.index(sc)]
        if src[0] != "step" or not _uniform_arg(epi, ssrc) or \
                not _positive_constant(epi.externals[ssrc[1]]):
            continue
        r = src[1]
        readers = [(j, k) for j, st in enumerate(epi.steps) for k, x in enumerate(st.sources)
                   if x == ("step", r)]
        rblock = epi.steps[r].generic.regions[0].blocks[0]
        rops = [op_of(o) for o in rblock.operations if op_of(o).name != "arith.constant"]
        if len(readers) != 1 or len(rops) != 2 or rops[0].name != "arith.maximumf" or \
                rops[1].operands[0] != rops[0].results[0]:
            continue
        x, z = rops[0].operands
        if _float_const(epi, z, rblock) != 0.0:
            x, z = z, x
        if _float_const(epi, z, rblock) != 0.0 or not isinstance(x.owner, ir.Block) or \
                x.owner != rblock:
            continue
        return r, x
    return None


def _dq_bounds(e: Emitter, t: _Tail, env: dict, lanes: int) -> tuple:
    """[lo - zf, hi - zf] of a fused tail (exact: small integers)."""
    ft = vector(lanes, Elem.F32)
    return tuple(e.binary("arith.subf", e.splat_const(f"{b:.1f}", ft), env[t.zf], base="q")
                 for b in (t.lo, t.hi))


def _clamp(e: Emitter, v: Value, lo: Value, hi: Value) -> Value:
    """``v`` clamped to [lo, hi] as x86's vmaxps / vminps compute it (one
    instruction each: ``v > lo ? v : lo``, then ``< hi``): for a ``v`` that
    is not NaN, maximumf / minimumf but for a zero's sign (lo, hi are not
    NaN)."""
    m = e.select(e.cmpf("ogt", v, lo, "q"), v, lo, "q")
    return e.select(e.cmpf("olt", m, hi, "q"), m, hi, "q")


def _emit_tail(e: Emitter, t: _Tail, i: int, env: dict, lanes: int, whole: bool = False) -> Value:
    """Step ``i``'s quantization of ``env[t.y]``, exactly as its body
    computes it (the body's 8-bit conversion is poison for a NaN; a zero's
    sign converts to 0 either way), with :func:`_clamp`:

    * read by a DequantizeLinear (``t.dq``): ``uitofp(q) - zf`` is
      ``roundeven(y)`` clamped to [lo - zf, hi - zf] (``zf`` an integer: the
      add is exact below 2^24, and beyond the clamp saturates the same way),
      plus +0.0: the clamped value is an integer of at most 255 in magnitude
      and never NaN (:func:`_clamp` gives NaN the lower bound), so adding
      +0.0 changes only -0.0 into the subtraction's +0.0, as the
      ``fptosi`` / ``sitofp`` round trip did in two conversions
      (ZERO_SIGN_ADD); returns that f32 vector;
    * else ``q``: returns the i8 vector."""
    ft = vector(lanes, Elem.F32)
    if t.dq is not None:
        r = e.op("q", f"math.roundeven {env[t.y]} : {ft}", ft)
        lo, hi = env[("clamp", i)] if ("clamp", i) in env else _dq_bounds(e, t, env, lanes)
        c = _clamp(e, r, lo, hi)
        if ZERO_SIGN_ADD:
            return e.binary("arith.addf", c, e.splat_const("0.0", ft), "q")
        return e.cast("arith.sitofp", e.cast("arith.fptosi", c, vector(lanes, Elem.I32), "q"),
                      ft, "q")
    if MAGIC_ROUND and whole:
        lo, hi, zi = env[("magic", i)] if ("magic", i) in env else _magic_bounds(e, t, env, lanes)
        c = _clamp(e, env[t.y], lo, hi)
        u = e.binary("arith.addf", c, e.splat_const(_MAGIC, ft), "q")
        b = e.cast("arith.bitcast", u, vector(lanes, Elem.I32), "q")
        return e.cast("arith.trunci", e.binary("arith.addi", b, zi, "q"), vector(lanes, Elem.I8),
                      "q")
    r = e.op("q", f"math.roundeven {env[t.y]} : {ft}", ft)
    lo, hi = (e.splat_const(f"{b:.1f}", ft) for b in (t.lo, t.hi))
    if t.relu is not None:
        lo = env[("relu_lo", i)] if ("relu_lo", i) in env else _relu_lo(e, t, env, lanes)
    c = _clamp(e, e.binary("arith.addf", r, env[t.zf], "q"), lo, hi)
    return e.cast(t.to_int, c, vector(lanes, Elem.I8), "q")


# False: a quantizing tail rounds with math.roundeven, adds the zero point
# and clamps in f32, then converts to 8 bits (fptosi / fptoui); True: a tail
# whose vector is stored whole (``emit(whole=True)``) clamps y to the bounds
# minus the zero point, rounds by adding _MAGIC (the integer lands in the low
# mantissa bits) and adds the zero point to those bits as an i32
# (:func:`_emit_tail`): one op fewer a vector, the same bytes. Whole stores
# only: LLVM (x86) stores a one-lane masked store of those bits' low byte
# (arith.trunci, or a byte shuffle) as the whole 4-byte lane (vextractps /
# vmovd) when the zero point's add folds away, overwriting the next 3 bytes.
# A/B (Zen 4, 1 thread, thread CPU time): MobileNetV2 QDQ 0.95, ResNet-50 QDQ 0.99
MAGIC_ROUND = True
# 1.5 * 2^23 (0x4B400000): c + _MAGIC, |c| < 2^22, is _MAGIC + roundeven(c) (the
# spacing of floats in [2^23, 2^24) is 1; _MAGIC even, so a tie goes to the
# even integer as roundeven does), whose low bits are roundeven(c) mod 2^22
_MAGIC = "12582912.0"


def _magic_bounds(e: Emitter, t: _Tail, env: dict, lanes: int) -> tuple:
    """(lo - zf, hi - zf, zf as i32) of a tail rounded with _MAGIC (lo:
    max(lo, zf) with a folded ReLU). roundeven(y) + zf clamped to [lo, hi]
    is roundeven(y clamped to [lo - zf, hi - zf]) + zf: the bounds are
    integers, roundeven keeps the order and integers, and the adds of the
    integer zf are exact; NaN takes the lower bound either way."""
    ft = vector(lanes, Elem.F32)
    zf = env[t.zf]
    lo = _relu_lo(e, t, env, lanes) if t.relu is not None else e.splat_const(f"{t.lo:.1f}", ft)
    hi = e.splat_const(f"{t.hi:.1f}", ft)
    zi = e.cast("arith.fptosi", zf, vector(lanes, Elem.I32), "q")
    return e.binary("arith.subf", lo, zf, "q"), e.binary("arith.subf", hi, zf, "q"), zi


def _relu_lo(e: Emitter, t: _Tail, env: dict, lanes: int) -> Value:
    """max(lo, zf): the clamp's lower bound with a folded ReLU."""
    lo = e.splat_const(f"{t.lo:.1f}", vector(lanes, Elem.F32))
    zf = env[t.zf]
    return e.select(e.cmpf("ogt", zf, lo, "q"), zf, lo, "q")


def acc_offset(epi: Q8Epilogue, pre: dict) -> Value | None:
    """When the epilogue starts by adding a per-filter i32 vector to the
    accumulators (a QLinearConv's bias): that vector (from ``pre``, the
    filter's :func:`uniform` values), which the caller adds to the
    accumulators' initial value instead (integer adds: the same sum in any
    order), recorded in ``pre`` so that :func:`emit` skips the add."""
    if not FAST_QUANT:
        return None
    step = epi.steps[0]
    block = step.generic.regions[0].blocks[0]
    accs = [a for a, s in zip(block.arguments, step.sources) if s == ("acc",)]
    if len(accs) != 1 or not _one_use(accs[0]):
        return None
    o = op_of(list(accs[0].uses)[0].owner)
    if o.name != "arith.addi" or _overflow_flagged(o):     # nsw / nuw: no reordering
        return None
    other = o.operands[1] if o.operands[0] == accs[0] else o.operands[0]
    if other == accs[0] or other not in pre:
        return None
    pre["acc_sum"] = o.results[0]
    return pre[other]


def _overflow_flagged(o: ir.Operation) -> bool:
    """``o`` has nsw / nuw. Read from the attribute: printing ``o`` would
    number (and verify) the model's whole function, ~0.15 s a conv on
    ResNet-50 QDQ (issue #29)."""
    if "overflowFlags" not in o.attributes:
        return False
    return str(o.attributes["overflowFlags"]) != "#arith.overflow<none>"


def uniform(e: Emitter, epi: Q8Epilogue, params: list, f, lanes: int) -> dict:
    """The epilogue ops that depend only on the filter ``f`` (per-channel
    scales and zero points, their products and quotients), as ``lanes``-wide
    vectors: emitted once per filter, before the kernel's pixel loops, and
    passed to :func:`emit`."""
    env: dict = {}
    for i, step in enumerate(epi.steps):
        block = step.generic.regions[0].blocks[0]
        for arg, src in zip(list(block.arguments), step.sources):
            if _uniform_arg(epi, src):
                k = src[1]
                env[arg] = _read_external(e, params[k], epi.maps[k], [0, f, 0, 0], lanes, True)
        _step_ops(e, epi, i, env, lanes)
    for i, t in quant_plan(epi).items():
        if t.dq is not None and t.zf in env:
            env[("clamp", i)] = _dq_bounds(e, t, env, lanes)
        if t.relu is not None and t.zf in env:
            env[("relu_lo", i)] = _relu_lo(e, t, env, lanes)
        if MAGIC_ROUND and t.dq is None and t.zf in env:
            env[("magic", i)] = _magic_bounds(e, t, env, lanes)
    return env


def emit(e: Emitter, epi: Q8Epilogue, acc: Value, params: list, coords: list,
         lanes: int, in_bounds: bool, pre: dict | None = None, whole: bool = False) -> Value:
    """The epilogue on accumulator vector ``acc`` (``lanes`` pixels at loop
    coordinates ``coords`` = [n, f, row, column] of the kernel's (possibly
    flattened) output; ``params`` the externals as the kernel sees them;
    ``pre`` the filter's :func:`uniform` values; ``whole``: the caller stores
    the result with one unmasked vector store, see MAGIC_ROUND). Returns the
    vector to store."""
    results: list[Value | None] = []
    tails = quant_plan(epi)
    relus = dict(t.relu for t in tails.values() if t.relu is not None)
    fused: dict = {}        # a fused DequantizeLinear's value -> the f32 vector
    for i, step in enumerate(epi.steps):
        block = step.generic.regions[0].blocks[0]
        env: dict = dict(pre or {})
        env.update(fused)
        if "acc_sum" in env:        # the bias add is in the accumulators (acc_offset)
            env[env["acc_sum"]] = acc
        for arg, src in zip(list(block.arguments), step.sources):
            if arg in env:
                continue
            if src[0] == "acc":
                env[arg] = acc
            elif src[0] == "step":
                if results[src[1]] is not None:     # else: read by its fused tail
                    env[arg] = results[src[1]]
            else:
                k = src[1]
                env[arg] = _read_external(e, params[k], epi.maps[k], coords, lanes, in_bounds)
        if i in relus:          # folded into the reading step's clamp: its input as it is
            results.append(env[relus[i]])
            continue
        t = tails.get(i)
        _step_ops(e, epi, i, env, lanes, t.results if t is not None else None)
        if t is None:
            results.append(env[op_of(list(block.operations)[-1]).operands[0]])
        elif t.dq is not None:
            fused[t.dq] = _emit_tail(e, t, i, env, lanes)
            results.append(None)
        else:
            results.append(_emit_tail(e, t, i, env, lanes, whole and i == len(epi.steps) - 1))
    return results[-1]


def _read_external(e: Emitter, t: Value, m: ir.AffineMap, coords: list, lanes: int,
                   in_bounds: bool) -> Value:
    pos = dim_positions(m)
    idx = [0 if p is None else coords[p] for p in pos]
    el = t.type.elem
    if pos and pos[-1] == 3:
        zero = e.const("0" if el not in (Elem.F32, Elem.F64, Elem.F16, Elem.BF16) else "0.0",
                       Type(Kind.SCALAR, el))
        return e.read(t, idx, zero, vector(lanes, el), in_bounds=True if in_bounds else False)
    if all(p is None for p in pos):
        return _read_uniform(e, t, lanes)
    return e.broadcast(e.extract(t, idx), vector(lanes, el))


def _read_uniform(e: Emitter, t: Value, lanes: int) -> Value:
    """A per-tensor external (one value: its indices all 0) broadcast to
    ``lanes`` by a ``vector.transfer_read``, which canonicalization does not
    fold as it folds ``tensor.extract`` of a constant at constant indices: the
    scale or zero point stays an operand of the kernel, so two convs that
    differ only in those values have the same kernel text and
    codegen/kernel_functions.py compiles it once (issue #29)."""
    el = t.type.elem
    rank = len(t.type.shape)
    dims = ", ".join(f"d{i}" for i in range(rank))
    pad = e.op("pu", "ub.poison : " + str(Type(Kind.SCALAR, el)), Type(Kind.SCALAR, el))
    vt = vector(lanes, el)
    idx = ", ".join(str(e.ix(0)) for _ in range(rank))
    return e.op("uv", f"vector.transfer_read {t}[{idx}], {pad} {{in_bounds = [true], "
                      f"permutation_map = affine_map<({dims}) -> (0)>}} : {t.type}, {vt}", vt)
