"""Helpers of the cache fault tests (test_cache_*.py): tiny models, a session run in a child process
(a fault that ends in a signal is reported as a failure, not fatal), and a
library with a constructor that leaves a marker file when it is loaded."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

# A session on argv[1] with the cache argv[2]: one JSON line with the result
# (or the error's class and message); warnings stay on stderr.
SESSION = r'''
import json, sys, warnings
import numpy as np
import onnx_mlir_py as ort
from onnx_mlir_py.errors import OnnxMlirError
warnings.simplefilter("always")
try:
    s = ort.InferenceSession(sys.argv[1], cache_dir=sys.argv[2])
    y = s.run(None, {"x": np.arange(4, dtype=np.float32)})[0]
    print(json.dumps({"y": y.tolist(), "library": s.library_path}))
except OnnxMlirError as e:
    print(json.dumps({"error": type(e).__name__, "message": str(e)}))
'''

X = np.arange(4, dtype=np.float32)


def add_model(k: float, name: str = "add") -> onnx.ModelProto:
    """y = x + k, x float[4]: models that differ only in k share a signature."""
    g = helper.make_graph([helper.make_node("Add", ["x", "k"], ["y"])], name,
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
                          [helper.make_tensor("k", TensorProto.FLOAT, [4], [k] * 4)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def expected(model: onnx.ModelProto) -> list:
    from onnx.reference import ReferenceEvaluator
    return ReferenceEvaluator(model).run(None, {"x": X})[0].tolist()


def write_model(tmp_path: Path, k: float, name: str = "add") -> tuple[Path, onnx.ModelProto]:
    model = add_model(k, name)
    path = tmp_path / f"{name}_{k:g}.onnx"
    onnx.save(model, path)
    return path, model


def run_session(model_path, cache, *, env: dict | None = None, umask: int | None = None,
                timeout: float = 600) -> tuple[dict, str, int]:
    """(the session's JSON line, its stderr, its exit status) in a child process."""
    full = dict(os.environ)
    full.pop("ONNX_MLIR_PY_SHARED_CACHE", None)
    full.update(env or {})
    p = subprocess.run([sys.executable, "-c", SESSION, str(model_path), str(cache)],
                       capture_output=True, text=True, env=full, timeout=timeout,
                       preexec_fn=(lambda: os.umask(umask)) if umask is not None else None)
    lines = [s for s in p.stdout.splitlines() if s.startswith("{")]
    return (json.loads(lines[-1]) if lines else {}), p.stderr, p.returncode


def warnings_in(stderr: str, cls: str = "CacheEntryWarning") -> list[str]:
    return [s for s in stderr.splitlines() if f"{cls}:" in s]


def planted_library(tmp_path: Path) -> tuple[Path, Path]:
    """(path of a .so whose constructor writes a marker file, the marker's path)."""
    marker = tmp_path / "constructor-ran"
    src = tmp_path / "planted.c"
    src.write_text('#include <stdio.h>\n'
                   '__attribute__((constructor)) static void planted(void) {\n'
                   f'  FILE *f = fopen("{marker}", "w");\n'
                   '  if (f) { fputs("ran", f); fclose(f); }\n}\n'
                   'int planted_dummy(void) { return 0; }\n')
    so = tmp_path / "planted.so"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    return so, marker
