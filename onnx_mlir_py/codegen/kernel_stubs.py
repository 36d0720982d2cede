"""The kernel cache keyed at the tensor level: a hit is bufferized as a
stub with the cached kernel's bufferization summary (issue #29).

Right after :func:`.kernel_functions.outline_kernels` (before
bufferization) each kernel function is keyed by its tensor-level text, its
own name a placeholder (+ the target, opt level and compiler fingerprint,
which covers the bufferization options and every later stage, and the
module's data layout): :func:`stub_kernels`. What the kernel becomes
(bufferized, lowered, compiled) is this compiler's deterministic function
of that.

The model's own code still needs the kernel at bufferization: one-shot
bufferization (``bufferize-function-boundaries``) reads from each callee
which tensor arguments it reads and writes and which result is equivalent
to which argument, and treats an external declaration as reading and
writing everything and returning new buffers (copies in the caller). So
an entry (the *sidecar*, ``<key>.t`` beside the memref-level entry of
:mod:`.kernel_cache`) records, at a miss:

- ``access``: each tensor argument's ``bufferization.access`` (``read``,
  ``write``, ``read-write``, ``none``), computed by upstream's one-shot
  analysis (``test-analysis-only``) on copies of the missed kernels taken
  once the model's bufferization prepared them
  (:func:`.bufferize.prepare_module`: the very bodies its analysis reads;
  no second preparation of copies), but for ``eliminate-empty-tensors``
  (see :func:`_summaries`), and set on the kernel itself before the
  model's analysis (:func:`summarize_misses`), so the caller sees the same
  summary at a miss and at a hit (the analysis takes the attribute instead
  of analysing the body); removed after bufferization;
- ``equiv``: for each result, the argument it is equivalent to (a kernel
  writes its destinations in place and returns them; one with any other
  result is not cached here);
- ``type``: the kernel's bufferized ``function_type``, and the memref-level
  key of its object (:func:`.kernel_cache.key_kernels`), and whether it
  calls the thread pool.

A hit replaces the kernel's body by a *stub* with exactly that summary: its
arguments carry the recorded ``bufferization.access`` and it returns the
equivalent argument of each result. After bufferization
(:func:`resolve_stubs`) the stub's bufferized ``function_type`` must equal
the recorded one (else :class:`StubMismatch`, the entry removed: the
caller compiles again without stubs, never a wrong library), then it becomes an external declaration of the object's symbol
``__om_kc_<memref key[:32]>`` and the object is linked, as a memref-level
hit. Only kernels keyed at the memref level get a sidecar (no symbol, no
``dense_resource``, no allocation).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import mlir.ir as ir

from onnx_mlir_py.codegen.kernel_functions import PREFIX as KERNEL_PREFIX

ACCESS = "bufferization.access"
_EQUIV = "__equivalent_func_args__"
_MODES = ("none", "read", "write", "read-write")


class StubMismatch(Exception):
    """A stub bufferized to another type than its entry recorded (a compiler
    bug or a planted entry): the entry is removed; :func:`.link.to_library`
    compiles the module again without tensor-level hits."""


@dataclass
class Summary:
    """What the caller's bufferization reads from a kernel (see the module
    docstring), and its tensor-level key."""
    key: str
    access: list            # per argument: a mode of _MODES, "" for a non-tensor
    equiv: list             # per result: the argument it is equivalent to


@dataclass
class Stub:
    """A hit bufferized as a stub: the object to link once its bufferized
    type is checked."""
    key: str                # tensor-level
    memref: str             # the memref-level key of its object
    symbol: str             # the object's kernel symbol
    type: str               # the recorded bufferized function_type
    data: bytes | None      # None: a miss compiled ahead (kernel_ahead.py), its
    #                         object linked from the pool's output
    parallel: bool
    ahead: bool = False     # keyed by kernel_ahead.py (bufferized there): a hit of
    #                         its data is a memref-level one


def sidecar(s: Summary, memref_key: str, ftype: str, parallel: bool) -> bytes:
    from onnx_mlir_py.codegen.kernel_cache import NAME_PREFIX
    return json.dumps({"key": s.key, "memref": memref_key, "symbol": NAME_PREFIX + memref_key[:32],
                       "type": ftype, "access": s.access, "equiv": s.equiv,
                       "parallel": parallel}, sort_keys=True).encode()


def _parse(data: bytes, key: str, fn: ir.Operation) -> dict | None:
    """The sidecar ``data`` of ``key`` for the kernel ``fn`` when it is
    well formed and fits the kernel's signature; None otherwise."""
    from onnx_mlir_py.codegen.kernel_cache import NAME_PREFIX
    try:
        d = json.loads(data)
        ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
        ins, outs = list(ftype.inputs), list(ftype.results)
        ok = d["key"] == key and len(d["access"]) == len(ins) and len(d["equiv"]) == len(outs) \
            and all((a in _MODES) == isinstance(t, ir.RankedTensorType)
                    and (a in _MODES or a == "") for a, t in zip(d["access"], ins)) \
            and all(isinstance(e, int) and 0 <= e < len(ins) and ins[e] == t
                    for e, t in zip(d["equiv"], outs)) \
            and isinstance(d["type"], str) and isinstance(d["memref"], str) \
            and len(d["memref"]) == 64 and isinstance(d["parallel"], bool) \
            and all(c in "0123456789abcdef" for c in d["memref"]) \
            and d["symbol"] == NAME_PREFIX + d["memref"][:32]
    except (ValueError, KeyError, TypeError):
        return None
    return d if ok else None


def _set_access(fn: ir.Operation, access: list) -> None:
    old = fn.attributes["arg_attrs"] if "arg_attrs" in fn.attributes else None
    new = []
    for i, a in enumerate(access):
        entries = {na.name: na.attr for na in old[i]} if old is not None else {}
        if a:
            entries[ACCESS] = ir.StringAttr.get(a)
        new.append(ir.DictAttr.get(entries))
    fn.attributes["arg_attrs"] = ir.ArrayAttr.get(new)


def strip_access(module: ir.Module) -> None:
    """Remove the ``bufferization.access`` this module set on the kernels'
    arguments (after bufferization: the memref-level text is then as
    before)."""
    for op in module.body.operations:
        op = op.operation
        if op.name != "func.func" or "arg_attrs" not in op.attributes:
            continue
        old = op.attributes["arg_attrs"]
        if not any(ACCESS in d for d in old):
            continue
        dicts = [{na.name: na.attr for na in d if na.name != ACCESS} for d in old]
        if any(dicts):
            op.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(d) for d in dicts])
        else:
            del op.attributes["arg_attrs"]


def _summaries(module: ir.Module, fns: list[ir.Operation]) -> list[tuple[list, list] | None]:
    """(access, equiv) of each of ``fns`` (kernels of ``module``, prepared by
    :func:`.bufferize.prepare` as the module's bufferization prepared them),
    from upstream's one-shot analysis on copies of them; None for a kernel
    with a result equivalent to no argument."""
    from mlir.dialects import builtin
    from onnx_mlir_py.codegen.bufferize import ONE_SHOT
    from onnx_mlir_py.codegen.passes import run_pipeline
    # each copy in a module of its own, so the pass manager analyses them on
    # the context's threads: a kernel calls no function, so it is analysed
    # alone as with the others (a caller does not change its callee's analysis)
    with ir.Location.unknown():
        m = ir.Module.create()
        attrs = module.operation.attributes
        clones = []
        for fn in fns:
            with ir.InsertionPoint(m.body):
                inner = builtin.ModuleOp()
            for i in range(len(attrs)):
                inner.operation.attributes[attrs[i].name] = attrs[i].attr
            clones.append(fn.clone(ir.InsertionPoint(inner.body)).operation)
    assert ONE_SHOT.endswith("}")
    # no eliminate-empty-tensors (half the cost): it only makes an op write into
    # the slice of a destination its result is inserted into, which the insert
    # writes already (and the op's read of what was an empty reads no value)
    # not verified after: the analysis only annotates these copies, which are
    # read for their annotations and dropped (ResNet-50: 11 verifications, 23 ms)
    run_pipeline(m, "builtin.module(builtin.module(" + ONE_SHOT[:-1] + " test-analysis-only}))",
                 "kernel cache summaries", verify=False)
    out = []
    for fn in clones:
        ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
        arg_attrs = fn.attributes["arg_attrs"] if "arg_attrs" in fn.attributes else None
        access = []
        for i, t in enumerate(ftype.inputs):
            a = ""
            if isinstance(t, ir.RankedTensorType):
                d = arg_attrs[i] if arg_attrs is not None else None
                a = ir.StringAttr(d[ACCESS]).value if d is not None and ACCESS in d else None
            access.append(a)
        ret = fn.regions[0].blocks[0].operations[
            len(fn.regions[0].blocks[0].operations) - 1].operation
        equiv = [ir.IntegerAttr(e).value for e in ret.attributes[_EQUIV]] \
            if _EQUIV in ret.attributes else [-1] * len(ftype.results)
        ok = None not in access and all(e >= 0 for e in equiv) \
            and all(isinstance(t, ir.RankedTensorType) for t in ftype.results)
        out.append((access, equiv) if ok else None)
    return out


def _make_stub(fn: ir.Operation, access: list, equiv: list) -> None:
    """Replace ``fn``'s body by a stub with the summary (access, equiv)."""
    from mlir.dialects import func
    block = fn.regions[0].blocks[0]
    for op in reversed(list(block.operations)):
        op.operation.erase()
    with ir.InsertionPoint(block), fn.location:
        func.ReturnOp([block.arguments[e] for e in equiv])
    _set_access(fn, access)


def stub_kernels(module: ir.Module, early) -> None:
    """Key each kernel function of the tensor-level ``module`` (see the
    module docstring): a hit becomes a stub (``early.stubs``), a miss is
    left to :func:`summarize_misses` (``early.misses``)."""
    from onnx_mlir_py.codegen.kernel_cache import (_FORMAT, _RESOURCE, _layout, _print,
                                                   _rename, _symbols, NAME_PREFIX)
    from onnx_mlir_py.codegen.kernel_functions import printed_kernels
    printed = printed_kernels(module)   # the merge's prints: each kernel printed once
    with module.context:
        head = _FORMAT + b"tensor\0" + early.target.encode() + b"\0" + _layout(module).encode()
        for op in module.body.operations:
            op = op.operation
            if op.name != "func.func" or not len(op.regions[0].blocks):
                continue
            name = ir.StringAttr(op.attributes["sym_name"]).value
            if not name.startswith(KERNEL_PREFIX):
                continue
            text = printed.get(name) or _print(op)
            if _RESOURCE in text or any(s != name for s in _symbols(text)):
                continue
            key = hashlib.sha256(head + _rename(text, {name: NAME_PREFIX}).encode()).hexdigest()
            hit = early.cache.load_sidecar(key) if early.allow_stubs else None
            d = _parse(hit, key, op) if hit is not None else None
            data = early.cache.load(d["memref"]) if d is not None else None
            if data is None:
                early.misses[name] = key
                continue
            _make_stub(op, d["access"], d["equiv"])
            early.stubs[name] = Stub(key, d["memref"], d["symbol"], d["type"], data,
                                     d["parallel"])


def summarize_misses(module: ir.Module, early) -> None:
    """Each missed kernel of :func:`stub_kernels` gets its summary as
    ``bufferization.access`` (``early.pending``, for its sidecar): from the
    kernels of ``module`` prepared by :func:`.bufferize.prepare_module`
    (the very bodies its analysis reads), before that analysis."""
    if not early.misses:
        return
    with module.context:
        fns = [op.operation for op in module.body.operations
               if op.operation.name == "func.func"
               and ir.StringAttr(op.operation.attributes["sym_name"]).value in early.misses]
        for op, s in zip(fns, _summaries(module, fns)):
            if s is not None:
                name = ir.StringAttr(op.attributes["sym_name"]).value
                _set_access(op, s[0])
                early.pending[name] = Summary(early.misses[name], *s)


def resolve_stubs(module: ir.Module, early) -> set[str]:
    """After bufferization: each stub's bufferized type checked against its
    entry's, then made an external declaration of its object's symbol (the
    calls retargeted), its object written for the link; the access
    attributes removed. Returns the symbols declared."""
    from onnx_mlir_py.codegen.parallel_for import PARALLEL_FOR_FN
    from onnx_mlir_py.ir_util import walk_ops
    declared: set[str] = set()
    with module.context:
        strip_access(module)
        if not early.stubs:
            return declared
        fns, calls = {}, []
        for op in module.body.operations:
            op = op.operation
            if op.name != "func.func":
                continue
            name = ir.StringAttr(op.attributes["sym_name"]).value
            if name in early.stubs:
                fns[name] = op
            elif not name.startswith(KERNEL_PREFIX):
                calls += [c for c in walk_ops(op, "func.call")
                          if ir.FlatSymbolRefAttr(c.attributes["callee"]).value in early.stubs]
        for c in calls:
            s = early.stubs[ir.FlatSymbolRefAttr(c.attributes["callee"]).value]
            c.attributes["callee"] = ir.FlatSymbolRefAttr.get(s.symbol)
        for name, s in early.stubs.items():
            op = fns[name]
            ftype = ir.TypeAttr(op.attributes["function_type"]).value
            if str(ftype) != s.type:
                early.cache.drop_sidecar(s.key)
                raise StubMismatch(
                    f"kernel cache entry {s.key}: its stub bufferized to {ftype}, its kernel "
                    f"to {s.type}; removed, compiling without the cache's tensor-level hits")
            if s.symbol not in declared:
                declared.add(s.symbol)
                with ir.InsertionPoint(op), op.location:
                    ir.Operation.create("func.func", attributes={
                        "sym_name": ir.StringAttr.get(s.symbol),
                        "function_type": ir.TypeAttr.get(ftype),
                        "sym_visibility": ir.StringAttr.get("private")}, regions=1)
                if s.data is not None:      # a hit (else compiled ahead: Early.ahead_parts)
                    early.loaded.add(s.memref)
                    obj = early.tmp / f"kernel_t{len(early.objects)}.o"
                    obj.write_bytes(s.data)
                    early.objects.append(str(obj))
                    early.hits += 1
                    early.stub_hits += not s.ahead
                if s.parallel:
                    early.calls.add(PARALLEL_FOR_FN)
            op.erase()
    return declared
