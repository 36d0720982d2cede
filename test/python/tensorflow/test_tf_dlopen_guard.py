"""MLIR loaded after TensorFlow: without onnx_mlir_py/dlopen_guard.py the
process died with SIGSEGV while MLIR registered its dialects (TF 2.21,
MLIR 22). A fresh process imports TensorFlow first, then compiles and runs."""
from __future__ import annotations

from tf_process import EXAMPLE, run_code
from tf_skip import requires_tf

pytestmark = requires_tf


def test_compile_after_importing_tensorflow(tmp_path):
    code = ("import os; os.environ['TF_CPP_MIN_LOG_LEVEL'] = '3'\n"
            "import tensorflow, numpy as np\n"
            "import onnx_mlir_py\n"
            f"so = onnx_mlir_py.compile({EXAMPLE!r}, {str(tmp_path / 'm.so')!r}, opt_level=0)\n"
            "(y,) = onnx_mlir_py.ExecutionSession(so).run([np.ones((1, 1, 28, 28), 'f4')])\n"
            "print(y.shape)\n")
    r = run_code(code, timeout=600)
    assert r.returncode == 0, f"exit {r.returncode}: {r.stderr[-2000:]}"
    assert r.stdout.strip() == "(1, 10)"
