"""What the -O3 stage reads of the weights' values, for the stage cache.

The -O3 stage's output is cached by the structure of its input with the
weights' bytes left out (:mod:`.stage_cache`): a second model that differs
only in its weights (``dense_resource`` constants) takes the cached output,
its weights put in. That is exact only when everything the stage does with
a weight's bytes is known and can be done again on the new ones. While the
stage runs under :func:`recording`, each read of a weight says what it is
for, and the :class:`Recorder` keeps it as an *event*:

- a **recipe** (``packs.fold_constant_relayouts``): a new weight made from
  one weight (or an earlier recipe's) by numpy relayout steps
  (``packs.fold_step``): the hit evaluates the steps on the new bytes;
- a **test** (:func:`test`): a yes/no the stage decided on a weight's
  values (all finite: ``conv_direct.finite_constant``; all zero:
  ``matmul_q8._zero_constant``): the hit evaluates it on the new bytes and
  takes the entry only when every answer is the recorded one.

A read that is neither (any other caller of ``packs._const_value`` or of
``ir_resources.resource_blobs``: the int8 and 4-bit weight packing, bf16)
*refuses* the entry: the compile runs the stage and stores nothing.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager

import numpy as np

# the yes/no questions the stage asks of a weight's values (test kinds)
PREDICATES = {
    "finite": lambda v: bool(np.isfinite(v).all()),
    "zero": lambda v: not bool(np.any(v)),
}


def _caller() -> str:
    """The function that called the reader that told the recorder
    (``resource_blobs`` / ``_const_value``), as ``name (file)``."""
    code = sys._getframe(3).f_code
    return f"{code.co_name} ({code.co_filename.rsplit('/', 1)[-1]})"


class Recorder:
    """The events of one run of the -O3 stage (see the module docstring).
    ``inputs``: the input module's weights, resource name -> its index in
    the order the key names them."""

    def __init__(self, inputs: dict[str, int]):
        self.refs: dict[str, list] = {n: ["in", i] for n, i in inputs.items()}
        self.events: list[dict] = []
        self.refused: str | None = None
        self.recipes = 0
        self.explaining = 0         # inside a read that says what it is for

    def refuse(self, why: str) -> None:
        if self.refused is None:
            self.refused = why

    def ref(self, name: str) -> list | None:
        """The event reference of the weight ``name`` (an input or a recipe)."""
        r = self.refs.get(name)
        if r is None:
            self.refuse(f"a weight of unknown origin ({name}) is read")
        return r

    def on_blob_read(self) -> None:
        """``ir_resources.resource_blobs`` was called (see :func:`recording`)."""
        if not self.explaining:
            self.refuse(f"{_caller()} reads a weight's bytes")

    def read(self, name: str, purpose: str | None) -> None:
        """``packs._const_value`` reads the weight ``name`` for ``purpose``
        ("fold", a test kind; None: a read the cache cannot redo)."""
        if purpose is None:
            self.refuse(f"{_caller()} reads a weight's values")

    def recipe(self, source: str, steps: list, name: str | None, type_str: str) -> None:
        """A relayout of the weight ``source`` became the weight ``name``
        (None: an inline constant, whose values would be in the cached
        text: refused)."""
        src = self.ref(source)
        if name is None:
            self.refuse(f"a relayout of the weight {source} is an inline constant")
            return
        if src is None:
            return
        self.refs[name] = ["rc", self.recipes]
        self.events.append({"recipe": self.recipes, "src": src, "steps": steps, "type": type_str})
        self.recipes += 1

    def test(self, name: str, kind: str, result: bool) -> None:
        src = self.ref(name)
        if src is not None:
            self.events.append({"test": kind, "src": src, "result": result})


_active: Recorder | None = None


def active() -> Recorder | None:
    return _active


@contextmanager
def recording(rec: Recorder):
    """Run the stage with ``rec`` told of every read of a weight's bytes."""
    global _active
    from onnx_mlir_py import ir_resources
    _active = rec
    ir_resources.set_read_observer(rec.on_blob_read)
    try:
        yield rec
    finally:
        _active = None
        ir_resources.set_read_observer(None)


@contextmanager
def explained():
    """A read of a weight's bytes whose purpose the reader records."""
    rec = _active
    if rec is None:
        yield
        return
    rec.explaining += 1
    try:
        yield
    finally:
        rec.explaining -= 1


def test(op, kind: str) -> bool:
    """Whether ``op`` is a constant whose values pass the test ``kind``
    (:data:`PREDICATES`); recorded when the constant is a weight."""
    from onnx_mlir_py.passes.optimize.packs import _const_value
    v = _const_value(op, {}, purpose=kind)
    result = v is not None and PREDICATES[kind](v)
    rec = _active
    if rec is not None and op.name == "arith.constant":
        from onnx_mlir_py.ir_resources import resource_name
        name = resource_name(op.attributes["value"])
        if name is not None:
            rec.test(name, kind, result)
    return result
