"""A long entry bufferized in chunks: linear time in the model (issue #29).

One-shot bufferization (``eliminate-empty-tensors``, the analysis) and the
ownership-based deallocation pipeline grow with the square of the ops in
one block: a 5,000-node elementwise chain at -O2 (about 10,000 top-level
ops in ``main_graph``) spent 27 s CPU there, 2,000 nodes 3 s; at -O3, with
the kernels outlined, 10,000 nodes spent 6 s (1,000: 0.07 s). And the
deallocation pipeline frees a buffer at the end of its block, so every
intermediate of the entry lived until the function returned.

:func:`outline_chunks` cuts the entry's top-level ops, when there are more
than ``min_ops`` of them, into consecutive chunks of about ``size`` ops and
moves each into a private function ``__om_chunk_<k>(live-ins) ->
(live-outs)`` called in its place; the analysis and the deallocation then
work per function (bufferize-function-boundaries), and a chunk's
intermediates are freed at its end. The chunks stay functions, marked
``noinline``: LLVM otherwise inlined the entry's outlined loop nests back
into one function of 150,000 lines for a 2,000-node chain at -O2, and
``opt`` / ``llc`` grew faster than the model there (10,000 nodes: 86 s of
their CPU); as functions, ``codegen/split.py`` also spreads them over the
cores. Run time: one call per chunk.

A cut is made only where it costs no copy at run time:

- each tensor that leaves a chunk is a buffer the chunk allocates (a
  ``tensor.empty``, a pad, ...: followed back through the destinations of
  the ops that write into it and through calls into the callee), and no
  two leave in the same buffer. A view, a constant or a buffer from before
  the chunk returned from a function would be cloned by the deallocation
  pipeline; and the caller takes two results for two buffers (a
  ``tensor.empty`` shared by the ops of both sides, returned with the
  result of one of them that was written into it, was then overwritten
  in the caller: fuzzer case s2901-2 with chunks of 3 ops);
- no tensor entering a chunk is a slice: an argument has the identity
  layout, so a strided view would be copied into a new buffer.

Otherwise the cut moves on to the next op. Operand-less constants (scalar
and vector ``arith.constant``, ``ub.poison``) and static ``tensor.empty``
ops are moved to the top of the entry first and cloned into the chunks
that use them (an empty shared by the -O3 kernels of both sides of a cut
would leave one chunk with a result written into it); tensor constants
stay in the entry and are passed.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import func

from onnx_mlir_py.codegen.buffer_origin import origin
from onnx_mlir_py.codegen.parallel_for import defining_op
from onnx_mlir_py.codegen.signature import find_entry
from onnx_mlir_py.ir_util import walk_ops

PREFIX = "__om_chunk_"
# cut an entry with more top-level ops than CHUNK_MIN_OPS into chunks of
# about CHUNK_OPS (the quadratic steps then cost ~(CHUNK_OPS / n)^2 of what
# the whole block costs, per chunk; a 10,000-node chain at -O2, CPU: 256 ops
# 26.2 s, 64 ops 23.6 s, bufferize and opt + llc both less)
CHUNK_OPS = 64
CHUNK_MIN_OPS = 1024

_HOISTED = ("arith.constant", "ub.poison", "tensor.empty")


class _Entry:
    """The entry block's top-level ops and where each top-level value is used."""

    def __init__(self, fn: ir.Operation):
        self.fn = fn
        self.block = fn.regions[0].blocks[0]
        self.ops = [op.operation for op in self.block.operations]
        self.args = set(self.block.arguments)
        self.index: dict = {}            # top-level value -> index of its op (args: -1)
        for a in self.args:
            self.index[a] = -1
        for i, op in enumerate(self.ops):
            for r in op.results:
                self.index[r] = i
        # value -> [(top-level index of the user, using op, operand number)];
        # per top-level op: [(using op, operand number, value)]
        self.uses: dict = {}
        self.last_use: dict = {}
        self.sites: list[list] = [[] for _ in self.ops]
        for i, top in enumerate(self.ops):
            for op in walk_ops(top, include_root=True):
                for k, v in enumerate(op.operands):
                    if v not in self.index:
                        continue         # defined inside ``top``
                    self.uses.setdefault(v, []).append((i, op, k))
                    self.last_use[v] = i
                    self.sites[i].append((op, k, v))


def _hoist_constants(fn: ir.Operation) -> None:
    block = fn.regions[0].blocks[0]
    ops = [op.operation for op in block.operations]
    first = ops[0]
    for op in ops:
        if op.name in _HOISTED and not len(op.operands) and op != first:
            op.move_before(first)


def _clonable(v: ir.Value) -> bool:
    """A value each chunk makes for itself: a scalar or vector constant, or
    a static ``tensor.empty`` (no contents: a copy per chunk is what
    ``bufferize.split_shared_empties`` makes per user)."""
    d = defining_op(v)
    return (d is not None and d.name in _HOISTED and not len(d.operands)
            and (d.name == "tensor.empty" or not isinstance(v.type, ir.RankedTensorType)))


class _Cutter:
    def __init__(self, entry: _Entry, callees: dict):
        self.e = entry
        self.callees = callees

    def live_ins(self, s: int, e: int) -> list:
        seen, out = set(), []
        for i in range(s, e):
            for _, _, v in self.e.sites[i]:
                if self.e.index[v] < s and v not in seen:
                    seen.add(v)
                    out.append(v)
        return out

    def live_outs(self, s: int, e: int) -> list:
        out = []
        for i in range(s, e):
            for r in self.e.ops[i].results:
                if self.e.last_use.get(r, -1) >= e:
                    out.append(r)
        return out

    def _ok_type(self, v: ir.Value) -> bool:
        """Whether ``v`` may be a chunk's argument or result: not a vector
        (an i1 vector passed between functions made llc fail with "Cannot
        emit physreg copy instruction" on AVX-512: fuzzer case s2901-38 with
        chunks of 3 ops), an unranked tensor or a memref. Constant vectors
        are cloned, not passed."""
        if _clonable(v):
            return True
        t = v.type
        return not (isinstance(t, (ir.VectorType, ir.UnrankedTensorType, ir.MemRefType,
                                   ir.UnrankedMemRefType)))

    def valid(self, s: int, e: int) -> bool:
        roots = set()
        for v in self.live_outs(s, e):
            if not self._ok_type(v):
                return False
            if isinstance(v.type, ir.RankedTensorType):
                o = origin(v, self.callees)
                if o.viewed or o.root is None:
                    return False
                if not (s <= self.e.index.get(o.root, -1) < e or _clonable(o.root)):
                    return False        # not allocated in the chunk
                if o.root in roots:     # two results in one buffer: the caller
                    return False        # would take them for two
                roots.add(o.root)
        for v in self.live_ins(s, e):
            if not self._ok_type(v):
                return False
            if isinstance(v.type, ir.RankedTensorType) and not _clonable(v) \
                    and origin(v, self.callees).sliced:
                return False
        return True


def outline_chunks(module: ir.Module, entry: str, size: int | None = None,
                   min_ops: int | None = None) -> list[str]:
    """Move the entry's ops into chunk functions (see the module docstring);
    returns their names (none when the entry has at most ``min_ops`` ops;
    the defaults: CHUNK_OPS, CHUNK_MIN_OPS)."""
    size = CHUNK_OPS if size is None else size
    min_ops = CHUNK_MIN_OPS if min_ops is None else min_ops
    with module.context:
        fn = find_entry(module, entry)
        if len(fn.regions[0].blocks) != 1:
            return []
        n_ops = sum(1 for _ in fn.regions[0].blocks[0].operations)
        if n_ops <= min_ops:
            return []
        _hoist_constants(fn)
        e = _Entry(fn)
        callees = {op.operation.attributes["sym_name"].value: op.operation
                   for op in module.body.operations
                   if op.operation.name == "func.func" and len(op.operation.regions[0].blocks)}
        cut = _Cutter(e, callees)
        n = len(e.ops) - 1                   # the terminator stays
        s = 0
        while s < n and e.ops[s].name in _HOISTED and not len(e.ops[s].operands):
            s += 1
        names, renamed = [], {}
        while n - s > size // 2:
            # the rest in one chunk when it is short, else at least ``size`` ops
            ends = [n] if n - s <= size + size // 2 else []
            ends += range(min(s + size, n), min(s + 2 * size, n) + 1)
            end = next((x for x in ends if cut.valid(s, x)), None)
            if end is None:             # no cut without a copy here: leave these ops
                s += size
                continue
            name = f"{PREFIX}{len(names)}"
            _outline(e, s, end, name, cut, renamed)
            names.append(name)
            s = end
        return names


def _outline(e: _Entry, s: int, end: int, name: str, cut: _Cutter, renamed: dict) -> None:
    ins = cut.live_ins(s, end)
    outs = cut.live_outs(s, end)
    passed = [v for v in ins if not _clonable(v)]
    first = e.ops[s]
    with ir.InsertionPoint(e.fn), first.location:
        f = func.FuncOp(name, ir.FunctionType.get([v.type for v in passed],
                                                  [v.type for v in outs]),
                        visibility="private")
        f.attributes["llvm.linkage"] = ir.Attribute.parse("#llvm.linkage<internal>")
        # kept out of the entry by LLVM too (see the module docstring)
        f.attributes["passthrough"] = ir.Attribute.parse('["noinline"]')
        block = f.add_entry_block()
    with ir.InsertionPoint(first), first.location:
        call = func.CallOp([v.type for v in outs], ir.FlatSymbolRefAttr.get(name),
                           [renamed.get(v, v) for v in passed])
    with ir.InsertionPoint(block), first.location:
        ret = func.ReturnOp(outs)
    inner = dict(zip(passed, block.arguments))
    for v in ins:
        if v not in inner:
            inner[v] = defining_op(v).clone(ir.InsertionPoint(ret)).results[0]
    for i in range(s, end):
        e.ops[i].move_before(ret)
    for i in range(s, end):             # not by value: a constant has uses everywhere
        for op, k, v in e.sites[i]:
            if v in inner:
                op.operands[k] = inner[v]
    for v, r in zip(outs, call.results):
        renamed[v] = r
        for i, op, k in e.uses[v]:
            if i >= end:
                op.operands[k] = r

