"""Epilogues of the packed matmul kernel: the elementwise ops after a
convolution (its ReLU, Clip, HardSwish, SiLU, a residual add; not
tanh/erf/log: see HEAVY) computed on the kernel's register tile, before it
is stored, instead of by a separate pass that reads the whole output back
from memory.

1. :func:`epilogue_chain` (used by :mod:`.conv`) finds the elementwise
   generics that consume a value and only it (with other same-shape tensors
   such as a residual, and scalars): a small DAG whose one escaping result
   is the last op's. :func:`.kernel_fusion.body_ops` turns each body into op text on named
   scalars (``%e_in`` the kernel's value, ``%e_t<k>`` tensor k's element,
   ``%e_cap<k>`` captured scalar k).
2. The conv kernel writes them as one generic on its matmul's result,
   tagged :data:`EPILOGUE_ATTR` (:func:`epilogue_generic`).
3. :mod:`.matmul`'s ``pack_matmuls`` moves a tagged generic that is its
   matmul's single user into the kernel function, in the packed result's
   block layout (``matmul_text._blocked_epilogue``), and ``kernel_schedule`` tiles
   it to the register tile and fuses the contraction into it: the
   accumulators get the ops after the k loop and are stored once. A
   pixel-row conv applies them to its transposed blocks instead
   (:func:`vector_lines`, ``conv_pixel_rows``).

Correctness never depends on step 3: an epilogue generic that is not fused
is an ordinary elementwise op (vectorized like any other).
"""
from __future__ import annotations

from dataclasses import dataclass

import mlir.ir as ir

from onnx_mlir_py.passes.optimize.kernel_emit import F32, Emitter, Type, Value
from onnx_mlir_py.passes.optimize.kernel_fusion import body_ops
from onnx_mlir_py.passes.optimize.math_approx import exp_values, sigmoid_exp_names

EPILOGUE_ATTR = "onnx_mlir_py.epilogue"

# False: no epilogue is moved into a kernel (A/B measurements)
ENABLED = True

# at most this many generics (and tensors besides the kernel's value) fused
MAX_GENERICS = 8
MAX_TENSORS = 2

# Ops an epilogue does not take (the kernels keep them in a separate pass).
# math.exp (Sigmoid, SiLU) is taken: the kernel function's copy is written
# as math_approx's polynomial (:func:`.math_approx.exp_values`, the
# standalone kernels' numerics). A math.exp left in the kernel function is
# not approximated (the kernel is built after approximate_math) and became
# one expf call per lane, clobbering the accumulators (the 1.02-1.05x
# slowdown measured when SiLU was first tried here).
HEAVY = {"math.erf", "math.tanh", "math.log"}


@dataclass(frozen=True)
class Epilogue:
    """The fused elementwise ops: ``ops`` (name, result, operands, attrs)
    on ``%e_in``, ``%e_t<k>`` (``tensors[k]``'s element) and ``%e_cap<k>``
    (``captured[k]``, an f32 scalar); ``result`` names the value stored.
    ``generics``: the ops it replaces, in order (the last one's result is
    the epilogue's)."""
    ops: tuple
    result: str
    tensors: tuple
    captured: tuple
    generics: tuple

    @property
    def key(self) -> tuple:
        """What a kernel function built with it depends on."""
        return (self.ops, self.result, len(self.tensors), len(self.captured))


def _op(u) -> ir.Operation:
    return u.operation if isinstance(u, ir.OpView) else u


def identity_parallel(g: ir.Operation, t: ir.Type) -> bool:
    """An all-parallel generic with one result of type ``t`` whose operands
    all have type ``t`` and identity maps."""
    if g.name != "linalg.generic" or len(g.results) != 1 or g.results[0].type != t \
            or len(g.regions) != 1 or len(g.regions[0].blocks) != 1:
        return False
    if any("parallel" not in str(a) for a in g.attributes["iterator_types"]):
        return False
    for a in g.attributes["indexing_maps"]:
        m = ir.AffineMapAttr(a).value
        if m != ir.AffineMap.get_identity(m.n_dims):
            return False
    return all(v.type == t for v in g.operands)


def dominates(x: ir.Value, op: ir.Operation) -> bool:
    """``x`` is defined before ``op``: an argument of an enclosing block, an
    op of an enclosing block, or an earlier op of ``op``'s block."""
    if isinstance(x.owner, ir.Block):
        return True
    o = _op(x.owner)
    return o.block != op.block or o.is_before_in_block(op)


def hoist_to(epi: Epilogue, op: ir.Operation) -> bool:
    """Whether the kernel call may replace the chain at ``op`` (the conv)
    rather than at its last op: every tensor is defined before ``op`` and
    every captured scalar too, or is a constant (moved before ``op``). Then
    the kernel's code stays where the conv's was (``--profile`` times it
    as the conv's, the ops after it as fused into it)."""
    if not all(dominates(t, op) for t in epi.tensors):
        return False
    late = [c for c in epi.captured if not dominates(c, op)]
    if any(_op(c.owner).name != "arith.constant" for c in late):
        return False
    for c in late:
        _op(c.owner).move_before(op)
    return True


def call_site(op: ir.Operation, operands) -> ir.Operation | None:
    """``op`` (the kernel op of a fused chain) when a call reading
    ``operands`` may stand there: each is defined before ``op`` or is a
    constant (moved before it); else None (the call goes at the chain's
    last op). As :func:`hoist_to` for the dynamic kernels' chains: the
    kernel's code stays where its op was, so ``--profile`` times it as that
    node's and its fused users as fused into it."""
    late = [v for v in operands if not dominates(v, op)]
    if any(_op(v.owner).name != "arith.constant" for v in late):
        return None
    for v in late:
        _op(v.owner).move_before(op)
    return op


def grow_chain(v: ir.Value, block, accept, ready) -> list[ir.Operation]:
    """The elementwise generics grown from ``v``, one ready user at a time
    (at most MAX_GENERICS), in dependence order: a candidate is a user, in
    ``block``, of ``v`` or of a result already taken that ``accept(g)``
    takes; the first candidate for which ``ready(g, ext)`` holds is taken
    (``ext``: its inputs other than ``v`` and the results taken; an input
    another candidate computes is not "another tensor": that candidate
    goes first, so such a candidate is never ready)."""
    region: list[ir.Operation] = []
    inside = [v]
    while len(region) < MAX_GENERICS:
        cands = []
        for x in inside:
            for u in x.uses:
                g = _op(u.owner)
                if g in region or g in cands or g.block != block or not accept(g):
                    continue
                cands.append(g)
        pending = [c.results[0] for c in cands]
        taken = None
        for g in cands:
            ext = [x for x in list(g.operands)[:-1] if x not in inside]
            if not any(x in pending for x in ext) and ready(g, ext):
                taken = g
                break
        if taken is None:
            break
        region.append(taken)
        inside.append(taken.results[0])
    return region


def closed_prefixes(v: ir.Value, region: list[ir.Operation]):
    """The prefixes of ``region`` (:func:`grow_chain`), longest first, whose
    values other than their last result are used only inside them."""
    for n in range(len(region), 0, -1):
        chain = region[:n]
        vals = [v] + [g.results[0] for g in chain]
        if all(all(_op(u.owner) in chain for u in x.uses) for x in vals[:-1]):
            yield chain


def epilogue_chain(v: ir.Value, dynamic: bool = False) -> Epilogue | None:
    """The elementwise ops that consume ``v`` (a static f32 tensor), as one
    :class:`Epilogue`, or None: :func:`grow_chain` of all-parallel
    identity-map generics of ``v``'s type whose inputs are ``v``, results
    already taken, or other tensors (at most MAX_TENSORS), with a
    :func:`.kernel_fusion.body_ops` body; then cut to the longest prefix
    whose only value used outside it is its last result. (So no
    other tensor is computed from ``v``: that would be a use outside.
    Whether the kernel call may go where ``v``'s op was: :func:`hoist_to`.)
    ``dynamic``: ``v`` may have run-time dims, and then the chain reads no
    other tensor (only ``v``, its own results and scalars: :func:`dynamic_chain`)."""
    t = v.type
    if not isinstance(t, ir.RankedTensorType) or not (dynamic or t.has_static_shape) \
            or not isinstance(t.element_type, ir.F32Type):
        return None
    max_tensors = 0 if dynamic else MAX_TENSORS
    if isinstance(v.owner, ir.Block):
        return None
    region = grow_chain(v, _op(v.owner).block, lambda g: identity_parallel(g, t),
                        lambda g, ext: len(ext) <= max_tensors)
    for chain in closed_prefixes(v, region):
        if _into_concat(chain[-1].results[0]):
            return None
        found = _translate(v, chain)
        if found is not None:
            return found
    return None


def dynamic_chain(v: ir.Value):
    """The dynamic-H/W kernels' (:mod:`.conv_dyn`'s copy out, :mod:`.pool_dyn`'s
    depthwise rows) chain of elementwise ops on ``v`` when ``v`` has more
    than one user (a single user is :func:`.kernel_fusion.epilogue_user`'s):
    SiLU, ``v * sigmoid(v)``, its Sigmoid and Mul both reading ``v``. An
    :func:`epilogue_chain` of ``v``'s dims (run-time ones too) that reads no
    other tensor, as ``(generics, ops, result, captured)``: ``ops`` in
    :func:`vector_lines`' form (a ``math.exp`` written as math_approx's
    polynomial, as the static epilogues and the standalone kernel do). None
    when there is no such chain (e.g. the Sigmoid has another user: then
    nothing is fused)."""
    if not ENABLED or len(list(v.uses)) < 2:
        return None
    epi = epilogue_chain(v, dynamic=True)
    if epi is None or epi.tensors:
        return None
    return epi.generics, epi.ops, epi.result, list(epi.captured)


def _into_concat(r: ir.Value) -> bool:
    """``r`` (or a slice of it: a Split) is inserted into a larger tensor (a
    Concat). Bufferization then writes the separate elementwise pass straight
    into the concat's buffer; a kernel call's result would be copied there
    (YOLO's C3 blocks, measured with them fused too: 1.003-1.014x one-thread
    CPU time)."""
    for u in r.uses:
        o = _op(u.owner)
        if o.name == "tensor.insert_slice" and o.operands[0] == r:
            return True
        if o.name == "tensor.extract_slice" and _into_concat(o.results[0]):
            return True
    return False


def _translate(v: ir.Value, chain: list[ir.Operation]) -> Epilogue | None:
    names = {v: "%e_in"}
    tensors: list[ir.Value] = []
    captured: list[ir.Value] = []
    ops = []
    result = None
    for j, g in enumerate(chain):
        ins = list(g.operands)[:-1]
        idx = {}
        for i, x in enumerate(ins):
            if x not in names:
                if len(tensors) == MAX_TENSORS:
                    return None
                tensors.append(x)
                names[x] = f"%e_t{len(tensors) - 1}"
            idx[i] = names[x]
        found = body_ops(g, idx, f"epb{j}", captured)
        if found is None:
            return None
        text, result = found
        if any(op[0] in HEAVY for op in text):
            return None
        ops += text
        names[g.results[0]] = result
    return Epilogue(tuple(ops), result, tuple(tensors), tuple(captured), tuple(chain))


def epilogue_generic(e: Emitter, src: Value, tensors: list[Value], caps: list[Value],
                     maps: list[str], ops: tuple, result: str, expand_exp: bool = False) -> Value:
    """``linalg.generic`` (tagged EPILOGUE_ATTR) computing the epilogue
    ``ops`` on ``src`` and ``tensors`` (of ``src``'s type, or smaller when
    their map leaves dims out: a broadcast; read with ``maps[i]``: src
    first, then the tensors; the result written with the last map) into a
    fresh tensor of ``src``'s type; ``caps`` the captured scalars.
    ``expand_exp``: a ``math.exp`` written as math_approx's polynomial (in a
    kernel function, built after ``approximate_math`` ran; the conv-level
    generic keeps ``math.exp``, which ``pack_matmuls`` reads back with
    :func:`.kernel_fusion.body_ops`)."""
    tt = src.type
    ins = [src] + list(tensors)
    iters = ", ".join(['"parallel"'] * len(tt.shape))
    map_text = ", ".join(f"affine_map<{m}>" for m in maps)
    args = [Value(e.fresh("epa"), F32) for _ in ins]
    out = Value(e.fresh("epo"), F32)
    empty = e.empty(list(tt.shape), base="epe")
    res = Value(e.fresh("epi"), tt)
    e(f"{res} = linalg.generic {{indexing_maps = [{map_text}], iterator_types = [{iters}], "
      f"{EPILOGUE_ATTR}}} ins({', '.join(map(str, ins))} : {', '.join(str(v.type) for v in ins)}) "
      f"outs({empty} : {tt}) {{")
    e(f"^bb0({', '.join(f'{a}: f32' for a in args + [out])}):")
    e.ind += 1
    names = {"%e_in": args[0]} | {f"%e_t{k}": a for k, a in enumerate(args[1:])} \
        | {f"%e_cap{k}": c for k, c in enumerate(caps)}
    y = _body(e, ops, result, names, F32, "", expand_exp)
    e(f"linalg.yield {y} : f32")
    e.ind -= 1
    e(f"}} -> {tt}")
    return res


def vector_lines(e: Emitter, ops: tuple, result: str, src: Value, tensors: list[Value],
                 caps: list[Value]) -> Value:
    """The epilogue ``ops`` on the vector ``src``, ``tensors`` the tensors'
    elements read as the same vectors, ``caps`` the captured scalars
    (broadcast here)."""
    names = {"%e_in": src} | {f"%e_t{k}": t for k, t in enumerate(tensors)}
    names |= {f"%e_cap{k}": e.broadcast(c, src.type, base="epc") for k, c in enumerate(caps)}
    return _body(e, ops, result, names, src.type, "dense", True)


def _body(e: Emitter, ops: tuple, result: str, names: dict, t: Type, splat: str,
          expand_exp: bool) -> Value:
    """Emit the epilogue ``ops`` (op name, result name, operand names,
    attributes) on values of type ``t``, the operand names looked up in
    ``names`` (which gets the results); a constant is ``splat<value>`` when
    ``splat`` is given; a ``math.exp`` as :func:`.math_approx.exp_values`
    when ``expand_exp``. Returns the value of ``result``."""
    sig = sigmoid_exp_names(ops) if expand_exp else set()
    for name, r, opnds, attrs in ops:
        if name == "arith.constant":
            value = f"{splat}<{opnds[0]}>" if splat else opnds[0]
            names[r] = e.op("epk", f"arith.constant {value} : {t}", t)
        elif name == "math.exp" and expand_exp:
            names[r] = exp_values(e, names.get(opnds[0], opnds[0]), normal=r in sig)
        else:
            names[r] = e.op("epb", f"{name} {', '.join(str(names.get(a, a)) for a in opnds)}"
                                   f"{attrs} : {t}", t)
    return names[result]
