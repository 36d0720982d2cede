"""Done-when of issue 14 item 1 and issue 32 item 1: a script written for
onnxruntime runs unchanged after ``import onnx_mlir_py as ort`` (its one
import line changed) on five models, one with symbolic dims and several
inputs and outputs, with onnxruntime's results and the same reported
inputs/outputs; the script also runs with OrtValues, an IOBinding with
pre-allocated outputs, run_async and a free-dimension override."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from _models import script_models

HERE = Path(__file__).parent
SCRIPT = (HERE / "ort_script.py").read_text()
IMPORT = "import onnxruntime as ort\n"
assert SCRIPT.count(IMPORT) == 1


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("cache")


def _run_script(text: str, tmp: Path, name: str, model: str, settings, cache: Path) -> dict:
    script = tmp / f"{name}.py"
    script.write_text(text)
    out = tmp / f"{name}.npz"
    env = dict(os.environ, ONNX_MLIR_PY_CACHE=str(cache))
    p = subprocess.run([sys.executable, str(script), model, json.dumps(settings), str(out)],
                       capture_output=True, text=True, env=env, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    report = json.loads(p.stdout.strip().splitlines()[-1])
    with np.load(out) as z:
        report["values"] = {k: z[k] for k in z.files}
    return report


@pytest.mark.parametrize("name", list(script_models()))
def test_ort_script_runs_unchanged(name, tmp_path, cache):
    model, settings = script_models()[name]
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    want = _run_script(SCRIPT, tmp_path, "with_ort", str(path), settings, cache)
    ours = SCRIPT.replace(IMPORT, "import onnx_mlir_py as ort\n")
    got = _run_script(ours, tmp_path, "with_omp", str(path), settings, cache)
    for k in ("inputs", "outputs", "providers", "meta", "inplace", "fixed"):
        assert got[k] == want[k], k
    assert all(got["inplace"])              # the pre-allocated buffers hold the outputs
    assert (got["fixed"] is None) == (not settings[0])  # a dim override where dims are symbolic
    assert sorted(got["values"]) == sorted(want["values"])
    for k, w in want["values"].items():
        g = got["values"][k]
        assert g.dtype == w.dtype and g.shape == w.shape, k
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4, err_msg=k)
    # one run per setting, at different shapes when the model has symbolic dims
    shapes = {got["values"][f"{i}/{got['outputs'][0][0]}"].shape for i in range(len(settings))}
    assert len(shapes) == len(settings)
