"""Seconds spent per compiler phase: the one timing mechanism.

A :class:`Timings` object flows through the whole pipeline
(``compiler.run_pipeline``, ``passes.pipeline.run_passes``, the codegen
stages); each phase adds its time under its name::

    t = Timings()
    onnx_mlir_py.compile("model.onnx", timings=t)
    t.report()            # what ``onnx-mlir-py -v`` prints

It is a ``dict`` (phase name -> seconds, in the order first seen), so
callers can also read or serialise it directly. Its ``listener`` (the
progress display of :mod:`onnx_mlir_py.progress`) is told when phases start.

Inside a phase, :meth:`Timings.step` times its steps (the -O3 kernel steps,
the codegen stages of ``codegen: mlir``): kept in ``steps`` (phase -> step
-> seconds), printed indented under their phase and not added to the total
(the phase's time already holds them).
"""
from __future__ import annotations

import sys
import time
from contextlib import contextmanager

from onnx_mlir_py.test_hooks import pause_point


class Timings(dict):
    # told when a phase starts and ends (onnx_mlir_py.progress.Progress), or None
    listener = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.steps: dict[str, dict[str, float]] = {}

    @contextmanager
    def step(self, phase: str, name: str):
        """Add the time spent in the ``with`` block to step ``name`` of
        ``phase`` (see the module docstring)."""
        t0 = time.perf_counter()
        try:
            yield
        finally:
            d = self.steps.setdefault(phase, {})
            d[name] = d.get(name, 0.0) + time.perf_counter() - t0

    @contextmanager
    def phase(self, name: str):
        """Add the time spent in the ``with`` block to phase ``name``."""
        if self.listener is not None:
            self.listener.enter(name)
        pause_point(name)           # test hook (onnx_mlir_py/test_hooks.py): nothing unless set
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self[name] = self.get(name, 0.0) + time.perf_counter() - t0
            if self.listener is not None:
                self.listener.leave(name)

    def report(self, file=None) -> None:
        """One ``[onnx-mlir-py] phase  ms`` line per phase, then the total."""
        file = sys.stderr if file is None else file
        for name, seconds in self.items():
            print(f"[onnx-mlir-py] {name:<22} {seconds * 1000:9.1f} ms", file=file)
            for step, s in self.steps.get(name, {}).items():
                print(f"[onnx-mlir-py]   {step:<28} {s * 1000:9.1f} ms", file=file)
        print(f"[onnx-mlir-py] {'total':<22} {sum(self.values()) * 1000:9.1f} ms", file=file)
