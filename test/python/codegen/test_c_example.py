"""examples/c/run_model.c builds, runs a model .so and prints the same numbers."""
from __future__ import annotations

import subprocess
from pathlib import Path

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.codegen import emit_library
from onnx_mlir_py.codegen.cwrapper import RUNTIME_DIR
from onnx_mlir_py.codegen.tools import tool
from onnx_mlir_py.runtime import ExecutionSession

from codegen_samples import DYNAMIC, MATMUL

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "c" / "run_model.c"


def _build_example(tmp_path) -> str:
    exe = tmp_path / "run_model"
    subprocess.run([tool("gcc"), "-O2", "-Wall", "-Werror", "-o", str(exe), str(EXAMPLE),
                    f"-I{RUNTIME_DIR}", "-ldl"], check=True)
    return str(exe)


def _parse_outputs(text: str) -> list[np.ndarray]:
    outs, cur = [], None
    for line in text.splitlines():
        if line.startswith("output ") and "shape=[" in line:
            shape = line.split("shape=[")[1].split("]")[0]
            cur = ([int(d) for d in shape.split(",") if d], [])
            outs.append(cur)
        elif cur is not None:
            cur[1].append(float(line))
    return [np.array(v, np.float64).reshape(s) for s, v in outs]


def test_c_example_matches_python(tmp_path):
    exe = _build_example(tmp_path)
    with ir.Context():
        so = emit_library(ir.Module.parse(MATMUL), tmp_path / "matmul.so")
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(s, dtype=np.float32) for s in [(32, 64), (64, 48), (48,)]]
    files = []
    for i, x in enumerate(xs):
        f = tmp_path / f"in{i}.bin"
        x.tofile(f)
        files.append(str(f))
    p = subprocess.run([exe, so, *files], capture_output=True, text=True, check=True)
    assert '"name": "x"' in p.stdout and "entry point: run_main_graph" in p.stdout
    (c_out,) = _parse_outputs(p.stdout)
    (py_out,) = ExecutionSession(so).run(xs)
    np.testing.assert_allclose(c_out, py_out, rtol=1e-7)


def test_c_example_dynamic_defaults(tmp_path):
    exe = _build_example(tmp_path)
    with ir.Context():
        so = emit_library(ir.Module.parse(DYNAMIC), tmp_path / "dyn.so")
    p = subprocess.run([exe, so], capture_output=True, text=True, check=True)
    s, t = _parse_outputs(p.stdout)
    a = (0.01 * np.arange(4, dtype=np.float32)).reshape(2, 2)
    np.testing.assert_allclose(s, a + a, rtol=1e-6)
    np.testing.assert_allclose(t, np.exp(np.tanh(a + a)), rtol=1e-5)
