"""examples/c/README.md, verbatim: the commands between its ``c-example``
markers run in a copy of the repository's examples/ (a fresh folder) with the
installed CLI, and the outputs run_model prints match onnxruntime's on the
same inputs (run_model's default fill, 0.01 * i)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "examples" / "c" / "README.md"

pytestmark = pytest.mark.quick


def readme_commands(text: str) -> str:
    """The shell lines of the fenced block between the c-example markers."""
    m = re.search(r"<!-- c-example -->\s*```\w*\n(.*?)```\s*<!-- /c-example -->", text, re.S)
    assert m, f"{README}: no ```...``` block between <!-- c-example --> markers"
    return m.group(1)


def parse_outputs(text: str) -> list[np.ndarray]:
    """run_model's "output i shape=[..] type=T" blocks as arrays."""
    outs = []
    for line in text.splitlines():
        if line.startswith("output ") and "shape=[" in line:
            dims = line.split("shape=[")[1].split("]")[0]
            outs.append(([int(d) for d in dims.split(",") if d], []))
        elif outs and not line.startswith(("entry point:", "input signature:",
                                           "output signature:")):
            outs[-1][1].append(float(line))
    return [np.array(v, np.float64).reshape(s) for s, v in outs]


def test_readme_commands_build_and_run_the_c_example(tmp_path):
    # the layout the README's "cd examples/c" and "../mnist_small.onnx" expect
    shutil.copytree(ROOT / "examples" / "c", tmp_path / "examples" / "c")
    shutil.copy(ROOT / "examples" / "mnist_small.onnx", tmp_path / "examples")
    env = dict(os.environ)
    # the CLI installed next to this interpreter (a venv not activated)
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    script = "set -e\n" + readme_commands(README.read_text())
    r = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, f"README commands failed:\n{script}\n{r.stderr}"
    assert "entry point: run_main_graph" in r.stdout, r.stdout
    (got,) = parse_outputs(r.stdout)

    import onnxruntime as ort
    model = onnx.load(ROOT / "examples" / "mnist_small.onnx")
    (inp,) = model.graph.input
    shape = [d.dim_value for d in inp.type.tensor_type.shape.dim]
    x = (0.01 * np.arange(np.prod(shape), dtype=np.float64)).astype(np.float32).reshape(shape)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = sess.run(None, {inp.name: x})
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_readme_block_is_found_and_parsed():
    """The extraction itself: the block holds the build, compile and run
    lines; a README without the markers is named in the failure."""
    cmds = readme_commands(README.read_text())
    assert "$(onnx-mlir-py --cflags)" in cmds and "./run_model model.so" in cmds
    with pytest.raises(AssertionError, match="c-example"):
        readme_commands("```sh\n./run_model model.so\n```\n")
    out = "entry point: run_main_graph\noutput 0 shape=[1,2] type=1\n0.5\n-1\n"
    (a,) = parse_outputs(out)
    np.testing.assert_array_equal(a, [[0.5, -1.0]])
