"""A kernel schedule run once per distinct kernel, its result replayed on
the copies (issue #29: each kernel compiled once).

A repeated block repeats its kernels op for op: ResNet-50's bottleneck
blocks give 44 packed contractions of far fewer distinct kernels, and the
transform interpreter tiled, packed and vectorized every copy again (the
largest step of its -O3 stage). A kernel's ops run in a temporary function
of their own (:func:`.payload_func.isolated` with ``opaque``): the values
from outside are its arguments, the weights and every other constant of
data included, and only the leaf ops without data (scalar and splat
constants, static ``tensor.empty``) are cloned in. Two such functions of
the same text (the schedule's tag left out) under the same schedule are the
same function up to their arguments, so the first one's result, with the
second one's arguments and clones in their place, is a correct result for
the second (the interpreter is deterministic: it is the very IR it would
have made). :func:`capture` keeps a copy of the first result, :func:`replay`
puts a copy of it in each later function's place.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

import mlir.ir as ir

from onnx_mlir_py.passes.optimize.payload_func import Payload


# "0": every kernel runs its schedule (A/B, debugging)
ENV = "ONNX_MLIR_PY_SCHEDULE_MEMO"


def enabled() -> bool:
    return os.environ.get(ENV, "1") != "0"


def key(payload: Payload, body: str, tag: str) -> str:
    """The memo key of ``payload`` under the schedule ``body``: the
    function's full text (every attribute's values) without the schedule
    tag's value."""
    text = payload.op.get_asm(large_elements_limit=None, use_local_scope=True,
                              assume_verified=True)
    return body + "\0" + re.sub(re.escape(tag) + r" = -?\d+ : i64", tag, text)


@dataclass
class Template:
    """A schedule's result: a detached copy of the function (in ``holder``),
    and where its first op, its return and each clone stand in its entry
    block (indices; None for a clone the schedule erased)."""
    holder: ir.Module
    sentinel: int
    ret: int
    clones: list


def capture(payload: Payload) -> Template:
    """``payload`` after its schedule ran, as a :class:`Template`."""
    ops = [o.operation for o in payload.op.regions[0].blocks[0].operations]

    def at(target):
        return next((i for i, o in enumerate(ops) if o == target), None)
    holder = ir.Module.create()
    payload.op.clone(ir.InsertionPoint(holder.body))
    return Template(holder, at(payload.sentinel), at(payload.ret),
                    [at(c) for c in payload.clones])


def replay(payload: Payload, template: Template) -> None:
    """Replace ``payload``'s kernel ops by a copy of ``template``'s, its
    arguments and clones mapped to ``payload``'s own."""
    entry = payload.op.regions[0].blocks[0]
    keep = [payload.sentinel, payload.ret] + list(payload.clones)
    old = [o.operation for o in entry.operations if not any(o.operation == k for k in keep)]
    copy = template.holder.body.operations[0].operation.clone(
        ir.InsertionPoint(template.holder.body))
    src = copy.regions[0].blocks[0]
    ops = [o.operation for o in src.operations]
    for k, i in enumerate(template.clones):
        if i is not None:
            for r, mine in zip(ops[i].results, payload.clones[k].results):
                r.replace_all_uses_with(mine)
    for a, mine in zip(src.arguments, entry.arguments):
        a.replace_all_uses_with(mine)
    skip = {i for i in template.clones if i is not None} | {template.sentinel, template.ret}
    for i, o in enumerate(ops):
        if i not in skip:
            o.move_before(payload.sentinel if i < template.sentinel else payload.ret)
    for i, v in enumerate(ops[template.ret].operands):
        payload.ret.operands[i] = v
    for o in reversed(old):         # the kernel's own ops, users first
        o.erase()
    copy.erase()
