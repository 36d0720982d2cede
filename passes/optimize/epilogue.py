"""Epilogues of the packed matmul kernel: the elementwise ops after a
convolution (its ReLU, Clip, HardSwish, a residual add; not SiLU: see
HEAVY) computed on the
kernel's register tile, before it is stored, instead of by a separate pass
that reads the whole output back from memory.

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

from onnx_mlir_py.passes.optimize.kernel_emit import tensor_type
from onnx_mlir_py.passes.optimize.kernel_fusion import body_ops

EPILOGUE_ATTR = "onnx_mlir_py.epilogue"

# False: no epilogue is moved into a kernel (A/B measurements)
ENABLED = True

# at most this many generics (and tensors besides the kernel's value) fused
MAX_GENERICS = 8
MAX_TENSORS = 2

# Ops an epilogue does not take (the kernels keep them in a separate pass):
# their polynomials (math_approx.py) and the accumulators outgrow the
# registers. Measured on Zen 4, 1 thread, conv + SiLU fused / separate:
# 1x1 64 -> 64 on 32x32 1.02-1.04 (128 spills of zmm registers), YOLO
# 1.05; run a row of the tile at a time from the stored tile, 1.29-1.41.
# ReLU, Clip, HardSwish and residual adds spill nothing.
HEAVY = {"math.exp", "math.erf", "math.tanh", "math.log"}


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


def epilogue_chain(v: ir.Value) -> Epilogue | None:
    """The elementwise ops that consume ``v`` (a static f32 tensor), as one
    :class:`Epilogue`, or None. Grown one ready user at a time: an
    all-parallel identity-map generic of ``v``'s type (in ``v``'s block)
    whose inputs are ``v``, results already taken, or other tensors (at
    most MAX_TENSORS), with a :func:`.kernel_fusion.body_ops` body; then cut to the longest
    prefix whose only value used outside it is its last result. (So no
    other tensor is computed from ``v``: that would be a use outside.
    Whether the kernel call may go where ``v``'s op was: :func:`hoist_to`.)"""
    t = v.type
    if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape \
            or not isinstance(t.element_type, ir.F32Type):
        return None
    if isinstance(v.owner, ir.Block):
        return None
    anchor = _op(v.owner)
    region: list[ir.Operation] = []
    inside = [v]
    while len(region) < MAX_GENERICS:
        cands = []
        for x in inside:
            for u in x.uses:
                g = _op(u.owner)
                if g in region or g in cands or g.block != anchor.block \
                        or not identity_parallel(g, t):
                    continue
                cands.append(g)
        ready = None
        # (an input another candidate computes is not "another tensor": that
        # candidate goes first, so the chain is in dependence order)
        pending = [c.results[0] for c in cands]
        for g in cands:
            ext = [x for x in list(g.operands)[:-1] if x not in inside]
            if len(ext) <= MAX_TENSORS and not any(x in pending for x in ext):
                ready = g
                break
        if ready is None:
            break
        region.append(ready)
        inside.append(ready.results[0])
    # the longest prefix whose values other than its last result stay inside it
    for n in range(len(region), 0, -1):
        chain = region[:n]
        vals = [v] + [g.results[0] for g in chain]
        if all(all(_op(u.owner) in chain for u in x.uses) for x in vals[:-1]):
            found = _translate(v, chain)
            if found is not None:
                return found
    return None


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


def scalar_line(op_name: str, res: str, opnds: tuple, attrs: str) -> str:
    """One op of an epilogue body on f32 scalars."""
    if op_name == "arith.constant":
        return f"{res} = arith.constant {opnds[0]} : f32"
    return f"{res} = {op_name} {', '.join(opnds)}{attrs} : f32"


def epilogue_generic(res: str, src: str, tensors: list[str], caps: list[str], shape,
                     maps: list[str], dims: int, ops: tuple, result: str, ind: str = "    ") -> list[str]:
    """Lines of ``res = linalg.generic`` (tagged EPILOGUE_ATTR) computing the
    epilogue ``ops`` on ``src`` and ``tensors`` (all of type ``shape``, read
    with ``maps[i]``: src first, then the tensors; the result written with
    the last map) into a fresh tensor; ``caps`` the captured scalars' SSA
    names."""
    tt = tensor_type(shape)
    ins = [src] + list(tensors)
    iters = ", ".join(['"parallel"'] * dims)
    map_text = ", ".join(f"affine_map<{m}>" for m in maps)
    args = ", ".join(f"%epa{i}: f32" for i in range(len(ins))) + ", %epo: f32"
    sub = {"%e_in": "%epa0"}
    sub.update({f"%e_t{k}": f"%epa{k + 1}" for k in range(len(tensors))})
    sub.update({f"%e_cap{k}": c for k, c in enumerate(caps)})
    lines = [f"{ind}{res}_e = tensor.empty() : {tt}",
             f"{ind}{res} = linalg.generic {{indexing_maps = [{map_text}], iterator_types = [{iters}], "
             f"{EPILOGUE_ATTR}}} ins({', '.join(ins)} : {', '.join([tt] * len(ins))}) "
             f"outs({res}_e : {tt}) {{",
             f"{ind}^bb0({args}):"]
    for name, r, opnds, attrs in ops:
        opnds = tuple(sub.get(a, a) for a in opnds) if name != "arith.constant" else opnds
        lines.append(f"{ind}  " + scalar_line(name, r, opnds, attrs))
    lines += [f"{ind}  linalg.yield {sub.get(result, result)} : f32", f"{ind}}} -> {tt}"]
    return lines


def vector_lines(ops: tuple, result: str, src: str, tensors: list[str], caps: list[str],
                 vtype: str, tag: str, ind: str) -> tuple[list[str], str]:
    """``(lines, value)``: the epilogue ``ops`` on vector ``src`` (of type
    ``vtype``), ``tensors`` the SSA names of the tensors' elements read as
    the same vectors, ``caps`` the captured scalars (broadcast here); the
    names are suffixed with ``tag`` (one set per use in a function)."""
    lines = []
    names = {"%e_in": src}
    names.update({f"%e_t{k}": t for k, t in enumerate(tensors)})
    for k, c in enumerate(caps):
        names[f"%e_cap{k}"] = f"%epc{k}_{tag}"
        lines.append(f"{ind}%epc{k}_{tag} = vector.broadcast {c} : f32 to {vtype}")
    for name, res, opnds, attrs in ops:
        r = f"{res}_{tag}"
        if name == "arith.constant":
            lines.append(f"{ind}{r} = arith.constant dense<{opnds[0]}> : {vtype}")
        else:
            lines.append(f"{ind}{r} = {name} {', '.join(names[a] for a in opnds)}{attrs} : {vtype}")
        names[res] = r
    return lines, names[result]
