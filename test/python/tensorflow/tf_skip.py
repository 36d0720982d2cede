"""The skip marker of the TensorFlow frontend tests (a module of its own:
``from conftest import ...`` resolves to whichever conftest.py was imported
first when other test directories are collected in the same run)."""
from __future__ import annotations

import pytest

from onnx_mlir_py.frontends.tensorflow.errors import missing_packages

MISSING = missing_packages()
SKIP_REASON = ("the [tf] extra is absent (pip install -e '.[tf]'): not installed: "
               + ", ".join(MISSING))
requires_tf = pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)
