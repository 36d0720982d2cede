"""The -O3 stage's output, cached by the structure of its input (#29).

A model compiled again with other weights (a fine-tuned or re-exported
ResNet-50: every kernel already in the kernel cache) spent most of its
compile in the -O3 stage (:func:`.optimize`: the kernel plan, the kernels'
schedules, the weights' packing), redoing exactly what the first compile
did. This cache keeps that stage's output module and gives it to any input
module of the same structure:

- **Key**: the input module's text (locations included; every inline
  constant's values included), each weight (``dense_resource`` constant)
  named by its order of appearance instead of by its name and without its
  bytes, hashed with the target's every fact, the thread switch, the format
  and the compiler's fingerprint (the MLIR / LLVM wheels' versions and this
  compiler's sources: an edit misses every entry).
- **What the stage does with the weights' bytes** is recorded while it
  runs (:mod:`.value_reads`): each new weight it makes is a *recipe*
  (numpy relayout steps from one weight), each yes/no it decides on
  a weight's values a *test*. A compile whose stage reads a weight's bytes
  for anything else (the int8 and 4-bit weight packing, bf16), or turns a
  weight into an inline constant, is not stored.
- **Entry**: the output module's text, each weight constant a placeholder
  (``{om.ph = "in3"}`` / ``"rc5"``), the events, and the kernel plan (what
  ``-v`` and ``--print-kernel-plan`` show); a JSON file
  ``<kernel cache>/o3/<key[:2]>/<key>.o3`` with its sha256 beside it,
  stored and checked as the kernel cache's sidecars are (private
  directories, files 0600, a damaged entry removed with one
  ``CacheEntryWarning`` and the stage run).
- **A hit** evaluates the events in order on the new module's weights
  (every recipe must give a weight again, every test its recorded answer;
  else the stage runs as usual: the entry stands for other weights),
  parses the text, puts the weights in the placeholders and replaces the
  module's body by it. The output is then the stage's output for these
  weights, byte for byte (checked: ``--EmitLLVMIR`` of a miss and a hit).

Where: ``<kernel cache>/o3`` (``codegen/kernel_cache.cache_dir``: off with
``ONNX_MLIR_PY_KERNEL_CACHE=0``); ``ONNX_MLIR_PY_STAGE_CACHE=0`` turns off
this cache alone (the test suite does, as its tests patch the stage's
thresholds: ``test/python/conftest.py``).
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import warnings
from contextlib import nullcontext
from dataclasses import asdict

import mlir.ir as ir

from onnx_mlir_py.errors import CacheEntryWarning

ENV = "ONNX_MLIR_PY_STAGE_CACHE"
SUFFIX = ".o3"
_FORMAT = "onnx-mlir-py o3 stage cache 1"
_PH_ATTR = "om.ph"          # a weight's placeholder: which one ("in3", "rc5")
# an inline float constant of more elements than this (not a splat) is a weight:
# any but a scalar (a bias of 16 channels is as much a weight as a kernel)
PROMOTE_MIN = 1


class _Miss(Exception):
    """The entry does not stand for these weights (a recipe or a test differs)."""


class Stats:
    """What the last compile's stage did (``-v``, the tests)."""
    def __init__(self):
        self.hit = False
        self.stored = False
        self.refused: str | None = None     # why the stage was not stored
        self.miss: str | None = None        # why an entry of its key was not taken


LAST = Stats()


def _store():
    """The store of this compile (None: off): ``$ONNX_MLIR_PY_STAGE_CACHE``
    (a directory, or ``0``), else the kernel cache's ``o3`` folder."""
    v = os.environ.get(ENV, "")
    if v == "0":
        return None
    from onnx_mlir_py.codegen.kernel_cache import _Store, cache_dir

    class Store(_Store):
        def _off(self, why: str) -> None:
            # an unsafe, unreadable or unwritable directory: off for this
            # compile, and the kernel cache says so (one warning, not two)
            self.dir = None
    if v:
        from pathlib import Path
        return Store(Path(v))
    d = cache_dir()
    return None if d is None else Store(d / "o3")


def _zero(t: ir.ShapedType) -> ir.Attribute | None:
    et = t.element_type
    if isinstance(et, ir.IntegerType):
        return ir.DenseElementsAttr.get_splat(t, ir.IntegerAttr.get(et, 0))
    if isinstance(et, ir.FloatType):
        return ir.DenseElementsAttr.get_splat(t, ir.FloatAttr.get(et, 0.0))
    return None


def _weight_constants(module: ir.Module, promote: bool = False
                      ) -> list[tuple[ir.Operation, ir.Attribute, str]] | None:
    """(op, value, resource name) of each weight constant (a
    ``dense_resource``; ``promote``: see :func:`promote_weights`); None for
    a quantized model (see there)."""
    import numpy as np

    from onnx_mlir_py.ir_resources import resource_attr, resource_name
    from onnx_mlir_py.ir_util import walk_ops
    from onnx_mlir_py.passes.optimize.packs import _np_dtype
    constants = walk_ops(module.operation, "arith.constant")
    for op in constants:
        t = op.results[0].type
        et = ir.ShapedType(t).element_type if isinstance(t, ir.ShapedType) else t
        if isinstance(et, ir.IntegerType) and 1 < et.width <= 8:
            return None
    out = []
    for op in constants:
        attr = op.attributes["value"]
        if isinstance(attr, ir.DenseFPElementsAttr):
            if attr.is_splat or not promote:
                continue
            t = ir.RankedTensorType(attr.type)
            dt = _np_dtype(t.element_type)
            if dt is None or not t.has_static_shape or \
                    int(np.prod(t.shape, dtype=np.int64)) <= PROMOTE_MIN:
                continue
            arr = np.ascontiguousarray(np.array(attr).astype(dt, copy=False).reshape(t.shape))
            attr = resource_attr(arr, "__om_weight", t)
            op.attributes["value"] = attr
        elif isinstance(attr, ir.DenseElementsAttr):
            continue
        name = resource_name(attr)
        if name is not None:
            out.append((op, attr, name))
    return out


def promote_weights(module: ir.Module) -> list[tuple[ir.Operation, ir.Attribute, str]] | None:
    """Make each inline float constant of more than :data:`PROMOTE_MIN`
    elements that is not a splat (the initializers of up to 1024 elements
    the importer keeps inline: biases, norms' scales) a ``dense_resource``
    of the same values. Its values then leave the key and the cached module
    as the large weights' do, and MLIR's folders, which do not read a
    resource, cannot fold them into other constants behind the recorder's
    back. Returns the weight constants as :func:`_weight_constants` does;
    None, changing nothing, for a quantized model (an 8-bit or narrower
    integer constant: its weight packing is not cached, and its kernels
    read small float constants as they are)."""
    with module.context:
        return _weight_constants(module, promote=True)


def _bytecode(module: ir.Module, weights, ref_of) -> bytes | None:
    """The module's bytecode with each weight constant a placeholder: a zero
    splat of its type and ``om.ph = ref_of(name)`` (put back after); None
    when a weight's element type has no zero."""
    swapped = []
    with module.context, ir.Location.unknown():
        zeros = [_zero(ir.ShapedType(attr.type)) for _, attr, _ in weights]
    if any(z is None for z in zeros):
        return None
    try:
        with module.context, ir.Location.unknown():
            for (op, attr, name), zero in zip(weights, zeros):
                op.attributes["value"] = zero
                swapped.append((op, attr))
                op.attributes[_PH_ATTR] = ir.StringAttr.get(ref_of(name))
        buf = io.BytesIO()
        module.operation.write_bytecode(buf)
        return buf.getvalue()
    finally:
        for op, attr in swapped:
            op.attributes["value"] = attr
            if _PH_ATTR in op.attributes:
                del op.attributes[_PH_ATTR]


def stage_key(data: bytes, target, threads: bool) -> str:
    from onnx_mlir_py.backend.cache import compiler_fingerprint
    from onnx_mlir_py.passes.optimize.kernel_budget import budget
    h = hashlib.sha256()
    # (the kernel budget decides which nodes stay on the generic path)
    for part in (_FORMAT, compiler_fingerprint(), repr(target), str(bool(threads)),
                 str(budget())):
        h.update(part.encode() + b"\0")
    h.update(data)
    return h.hexdigest()


def cached_optimize(module: ir.Module, target, *, threads: bool, on_plan=None, timings=None,
                    phase: str = "optimize (tensor -O3)", cacheable: bool = True):
    """:func:`.optimize` through the cache (see the module docstring).
    ``cacheable``: False for the stages that always read weights in ways the
    cache cannot redo (``--precision bf16``): then the stage runs as
    without the cache."""
    from onnx_mlir_py.passes.optimize import optimize
    global LAST
    LAST = Stats()
    store = _store() if cacheable else None

    def run(rec=None):
        if rec is None:
            return optimize(module, target, threads=threads, on_plan=on_plan, timings=timings,
                            phase=phase)
        from onnx_mlir_py.passes.optimize.value_reads import recording
        with recording(rec):
            return optimize(module, target, threads=threads, on_plan=on_plan, timings=timings,
                            phase=phase)
    if store is None:
        return run()

    def step(name):
        return nullcontext() if timings is None else timings.step(phase, name)
    with step("stage cache key"):
        weights = promote_weights(module)
        if weights is None:
            LAST.refused = "a quantized model"
            return run()
        names: dict[str, int] = {}
        data = _bytecode(module, weights,
                         lambda n: f"in{names.setdefault(n, len(names))}")
        if data is None:
            LAST.refused = "a weight of an element type without a placeholder"
            return run()
        key = stage_key(data, target, threads)
        inputs = list(names)
    with step("stage cache lookup"):
        entry = _load(store, key)
        plan = None if entry is None else _apply(store, key, entry, module, weights, inputs,
                                                 target, threads)
    if plan is not None:
        LAST.hit = True
        if on_plan is not None:
            on_plan(plan)
        return plan
    from onnx_mlir_py.passes.optimize.value_reads import Recorder
    rec = Recorder({n: i for i, n in enumerate(inputs)})
    plan = run(rec)
    LAST.refused = rec.refused
    # an entry of this key that stands for other weights' answers stays
    # (the first model's: the common case), not replaced by this one's
    if rec.refused is None and LAST.miss is None:
        with step("stage cache store"):
            _save(store, key, module, rec, plan, len(inputs))
    return plan


# -- the entry: JSON, a zero byte, the module's bytecode ---------------------------

def _load(store, key: str) -> tuple[dict, bytes] | None:
    data = store.load_sidecar(key, SUFFIX)
    if data is None:
        return None
    try:
        cut = data.index(b"\0")
        entry = json.loads(data[:cut])
        if entry.get("format") != _FORMAT or entry.get("key") != key:
            raise ValueError("it is for another key or format")
        return entry, data[cut + 1:]
    except (ValueError, TypeError, AttributeError) as e:
        _drop(store, key, f"unreadable ({e})")
        return None


def _drop(store, key: str, why: str) -> None:
    warnings.warn(CacheEntryWarning(f"-O3 stage cache entry {key}: {why}; removed, running "
                                    f"the stage"), stacklevel=3)
    store.drop_sidecar(key, SUFFIX)


def _save(store, key: str, module: ir.Module, rec, plan, n_inputs: int) -> None:
    """Store the stage's output ``module`` (weights as placeholders)."""
    from onnx_mlir_py.backend.cache import sources_unchanged
    with module.context:        # (not promoted: an inline constant here derives from inline ones)
        weights = _weight_constants(module)
    unknown = [n for _, _, n in weights or () if n not in rec.refs]
    if weights is None or unknown:
        LAST.refused = f"the stage's output has weights of unknown origin ({unknown[:3]})"
        return

    def ref_of(name):
        r = rec.refs[name]
        return f"{r[0]}{r[1]}"
    data = _bytecode(module, weights, ref_of)
    if data is None:
        return
    # a weight outside an arith.constant would be in the bytecode with its bytes
    stray = [n for n in rec.refs if n.encode() in data]
    if stray:
        LAST.refused = f"a weight outside a constant ({stray[0]})"
        return
    if not sources_unchanged():
        return
    head = {"format": _FORMAT, "key": key, "inputs": n_inputs, "events": rec.events,
            "plan": [asdict(e) for e in plan.entries]}
    store.store(key, json.dumps(head).encode() + b"\0" + data, SUFFIX)
    LAST.stored = True


# -- a hit ------------------------------------------------------------------------

def _apply(store, key: str, found, module: ir.Module, weights, inputs: list[str], target,
           threads: bool):
    """Replace ``module``'s body by the entry's for these weights; the
    kernel plan, or None (the entry does not stand for these weights, or is
    damaged: removed)."""
    entry, data = found
    try:
        weights = _weights(entry, module, weights, inputs)
    except _Miss as e:
        LAST.miss = str(e)
        return None
    except (KeyError, IndexError, TypeError, ValueError) as e:
        _drop(store, key, f"its events do not apply ({type(e).__name__}: {e})")
        return None
    try:
        new = ir.Module.parse(data, module.context)
    except ir.MLIRError as e:
        _drop(store, key, f"its module does not parse ({str(e).splitlines()[0]})")
        return None
    from onnx_mlir_py.ir_util import walk_ops
    held = [op for op in walk_ops(new.operation, "arith.constant") if _PH_ATTR in op.attributes]
    refs = [ir.StringAttr(op.attributes[_PH_ATTR]).value for op in held]
    if any(r not in weights for r in refs):
        _drop(store, key, "a placeholder names no weight")
        return None
    for op, r in zip(held, refs):
        op.attributes["value"] = weights[r]
        del op.attributes[_PH_ATTR]
    _replace_body(module, new)
    from onnx_mlir_py.passes.optimize.kernel_plan import KernelPlan, PlanEntry
    return KernelPlan(target, threads, [PlanEntry(**e) for e in entry["plan"]])


def _weights(entry: dict, module: ir.Module, constants, inputs: list[str]) -> dict[str, ir.Attribute]:
    """The weights of the output module ("in<i>" / "rc<k>" -> attribute):
    the inputs' own, the recipes' evaluated on their bytes (every test
    checked); :class:`_Miss` when one differs from the recorded run."""
    import numpy as np

    from onnx_mlir_py.passes.optimize.packs import _const_value, apply_step
    if entry["inputs"] != len(inputs):
        raise ValueError("another number of weights")
    ops: dict[str, ir.Operation] = {}
    for op, _, name in constants:
        ops.setdefault(name, op)
    attrs = {f"in{i}": ops[n].attributes["value"] for i, n in enumerate(inputs)}
    values: dict[str, np.ndarray] = {}
    blobs: dict = {}

    def value(ref) -> np.ndarray:
        r = f"{ref[0]}{ref[1]}"
        if r not in values:
            if ref[0] != "in":
                raise ValueError(f"{r} is used before it is made")
            v = _const_value(ops[inputs[ref[1]]], blobs)
            if v is None:
                raise _Miss(f"weight {r} cannot be read")
            values[r] = v
        return values[r]

    def relayout(x, steps):
        for i, st in enumerate(steps):
            x = apply_step(st, x, lazy=i + 1 < len(steps))
        return np.ascontiguousarray(x)
    # the recipes of input weights in 2 threads (numpy copies without the GIL)
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(2) as pool:
        made = {id(ev): pool.submit(relayout, value(ev["src"]), ev["steps"])
                for ev in entry["events"] if "recipe" in ev and ev["src"][0] == "in"}
        return _apply_events(entry, module, attrs, values, value, made, relayout)


def _apply_events(entry, module, attrs, values, value, made, relayout):
    """The events in order (see :func:`_weights`); ``made``: the recipes
    already under way."""
    from onnx_mlir_py.ir_resources import resource_name
    from onnx_mlir_py.passes.optimize.packs import _folded_attr
    from onnx_mlir_py.passes.optimize.value_reads import PREDICATES
    for ev in entry["events"]:
        if "test" in ev:
            if PREDICATES[ev["test"]](value(ev["src"])) != ev["result"]:
                raise _Miss(f"the test {ev['test']!r} of a weight differs")
            continue
        job = made.get(id(ev))
        y = job.result() if job is not None else relayout(value(ev["src"]), ev["steps"])
        with module.context:
            rt = ir.RankedTensorType(ir.Type.parse(ev["type"]))
            if list(rt.shape) != list(y.shape):
                raise ValueError(f"recipe {ev['recipe']} gives {y.shape}, not {ev['type']}")
            attr = _folded_attr(y, rt, weight=True)
        if resource_name(attr) is None:
            raise _Miss("a packed weight is uniform")   # the stage would make it a splat
        r = f"rc{ev['recipe']}"
        values[r], attrs[r] = y, attr
    return attrs


def _replace_body(module: ir.Module, new: ir.Module) -> None:
    """``module`` becomes ``new`` (its ops moved, its attributes copied)."""
    body = module.body
    for op in list(body.operations):
        op.erase()
    for op in list(new.body.operations):
        body.append(op)
    attrs, new_attrs = module.operation.attributes, new.operation.attributes
    for name in [attrs[i].name for i in range(len(attrs))]:
        del attrs[name]
    for i in range(len(new_attrs)):
        attrs[new_attrs[i].name] = new_attrs[i].attr
