"""Helpers for the backend tests: compile MLIR text to a .so and load it."""
from __future__ import annotations

import time

import mlir.ir as ir
import pytest

from onnx_mlir_py.codegen import emit_library
from onnx_mlir_py.runtime import ExecutionSession


class Compiled:
    def __init__(self, path, seconds):
        self.path = path
        self.seconds = seconds
        self.session = ExecutionSession(path)


@pytest.fixture(scope="module")
def compile_mlir(tmp_path_factory):
    """``compile_mlir(text, name, **kw) -> Compiled`` (a fresh context each)."""
    root = tmp_path_factory.mktemp("so")

    def build(text: str, name: str, patch=None, **kw) -> Compiled:
        with ir.Context():
            module = ir.Module.parse(text)
            if patch is not None:
                patch(module)
            path = root / f"{name}.so"
            t0 = time.perf_counter()
            emit_library(module, path, **kw)
            return Compiled(str(path), time.perf_counter() - t0)

    return build
