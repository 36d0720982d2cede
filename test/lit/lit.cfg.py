# lit configuration: `lit test/lit` (run by the README's test command).
import os
import shutil
import sys

import lit.formats

config.name = "onnx-mlir-py"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)
py = sys.executable
config.substitutions.append(("%python", py))
config.substitutions.append(("%opt", f"{py} -m onnx_mlir_py.opt"))
config.substitutions.append(("%onnx-mlir-py", f"{py} -m onnx_mlir_py.cli"))
# FileCheck: the pure-Python `filecheck` package (test extra).
fc = shutil.which("filecheck") or f"{py} -m filecheck"
config.substitutions.append(("FileCheck", fc))
config.environment["PYTHONPATH"] = os.environ.get("PYTHONPATH", "")
for var in ("HOME", "PATH", "TMPDIR"):
    if var in os.environ:
        config.environment[var] = os.environ[var]
