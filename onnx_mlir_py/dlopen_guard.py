"""MLIR loaded into a process that loaded TensorFlow first.

TensorFlow bundles its own LLVM and MLIR; when its libraries are in the
process first, the MLIR Python bindings' native modules bind some LLVM
symbols to TensorFlow's copies and the process dies with a segmentation
fault while MLIR registers its dialects (measured: ``import tensorflow``
then ``import mlir.ir``, TF 2.21, MLIR 22). The other order is fine.

:func:`install` (run by ``import onnx_mlir_py``) adds an import hook: when
``tensorflow`` is already imported, the native modules of
``mlir._mlir_libs`` are opened with ``RTLD_DEEPBIND``, so they resolve
their symbols in their own libraries first. Without TensorFlow in the
process nothing changes.
"""
from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys

_PREFIX = "mlir._mlir_libs."


class _DeepBindLoader(importlib.abc.Loader):
    def __init__(self, inner):
        self.inner = inner

    def create_module(self, spec):
        old = sys.getdlopenflags()
        sys.setdlopenflags(old | os.RTLD_DEEPBIND)
        try:
            return self.inner.create_module(spec)
        finally:
            sys.setdlopenflags(old)

    def exec_module(self, module):
        self.inner.exec_module(module)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if not name.startswith(_PREFIX) or "tensorflow" not in sys.modules:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            return spec
        spec.loader = _DeepBindLoader(spec.loader)
        return spec


def install() -> None:
    if hasattr(os, "RTLD_DEEPBIND") and not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
