"""onnx_mlir_py.integrations.ray on a local 2-CPU Ray cluster (marker ``ray``:
the ``[ray]`` extra; deselected without it; CI's Ray step): a dynamic-batch
model compiled once in the driver, scored by two actors in batches of two
sizes, compared with onnxruntime row by row."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from onnx_mlir_py.integrations import ray as om_ray

pytestmark = pytest.mark.ray


def _model() -> bytes:
    """[N, 16] -> MatMul [16, 8] + bias -> Relu -> Softmax: y [N, 8]; and the
    row sums of x, s [N] (two outputs, dynamic batch N)."""
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((16, 8)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "b")
    axes = numpy_helper.from_array(np.array([1], np.int64), "axes")
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]),
             helper.make_node("Add", ["h", "b"], ["hb"]),
             helper.make_node("Relu", ["hb"], ["r"]),
             helper.make_node("Softmax", ["r"], ["y"], axis=1),
             helper.make_node("ReduceSum", ["x", "axes"], ["s"], keepdims=0)]
    g = helper.make_graph(nodes, "scorer",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 8]),
                           helper.make_tensor_value_info("s", TensorProto.FLOAT, ["N"])],
                          initializer=[w, b, axes])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    return m.SerializeToString()


@pytest.fixture(scope="module")
def ray():
    """A local cluster of 2 CPUs whose session files (logs, sockets) go to a
    short temporary folder, removed afterwards."""
    import shutil
    import tempfile
    import ray
    d = tempfile.mkdtemp(prefix="ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _temp_dir=d)
    yield ray
    ray.shutdown()
    shutil.rmtree(d, ignore_errors=True)


def test_scores_on_two_workers_compiling_once(ray, tmp_path, monkeypatch):
    import onnxruntime
    from onnx_mlir_py.backend import compile as backend_compile
    compiles = []
    real = backend_compile.compile_cached
    monkeypatch.setattr(backend_compile, "compile_cached",
                        lambda *a, **k: compiles.append(1) or real(*a, **k))
    data = _model()
    ref = om_ray.compile_for_ray(data, cache_dir=tmp_path / "cache")
    assert len(compiles) == 1

    x = np.random.default_rng(1).standard_normal((100, 16)).astype(np.float32)
    ds = ray.data.from_items([{"features": row, "id": i} for i, row in enumerate(x)])
    # the actors cannot compile: no C compiler for them ($CC: a linker that fails)
    rows = ds.map_batches(om_ray.OnnxScorer, batch_size=16, batch_format="numpy",
                          concurrency=2, fn_constructor_kwargs={
                              "model": ref, "columns": {"x": "features"}},
                          runtime_env={"env_vars": {"CC": "false"}}).take_all()
    assert len(compiles) == 1
    assert sorted(int(r["id"]) for r in rows) == list(range(100))
    xs = np.stack([r["features"] for r in rows])
    want = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"]).run(
        None, {"x": xs})
    np.testing.assert_allclose(np.stack([r["y"] for r in rows]), want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.array([r["s"] for r in rows]), want[1], rtol=1e-5, atol=1e-5)


def test_scorer_loads_the_shipped_library_and_cleans_up(tmp_path, monkeypatch):
    """In-process: the scorer's session runs the driver's library from its own
    cache (a hit: compiling fails here), scores a batch, and removes its
    folder when collected."""
    import gc
    import os
    from onnx_mlir_py.backend import compile as backend_compile
    pkg = om_ray.package(_model(), cache_dir=tmp_path / "driver")

    def no_compile(*a, **k):
        raise AssertionError("the scorer compiled")
    monkeypatch.setattr(backend_compile, "compile_cached", no_compile)
    scorer = om_ray.OnnxScorer(pkg, output_names=["s"])
    folder = scorer._dir
    assert os.path.basename(scorer.session.library_path)[:-len(".so")] == pkg["key"]
    x = np.arange(32, dtype=np.float32).reshape(2, 16)
    out = scorer({"x": x})
    assert set(out) == {"x", "s"}
    np.testing.assert_allclose(out["s"], x.sum(1))
    with pytest.raises(KeyError, match="no column 'x'"):
        scorer({"features": x})
    del scorer
    gc.collect()
    assert not os.path.exists(folder)


def test_a_worker_that_would_compile_is_refused(tmp_path):
    """Another compile key (another version or ISA level) fails in one line
    instead of compiling on the worker."""
    pkg = om_ray.package(_model(), cache_dir=tmp_path / "driver")
    with pytest.raises(RuntimeError, match="differs from the driver's"):
        om_ray.install({**pkg, "key": "0" * 40}, tmp_path / "worker")
    with pytest.raises(ValueError, match="what compile_for_ray returned"):
        om_ray.install({"model": b""}, tmp_path / "worker")


def test_throughput_benchmark_runs_both_engines(tmp_path):
    """benchmarks/ray_throughput.py (the README's Ray figure): a tiny run
    scores the rows with both engines and writes its table."""
    import json
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    r = subprocess.run([sys.executable, os.path.join(root, "benchmarks", "ray_throughput.py"),
                        "--rows", "4000", "--rounds", "1", "--batch", "256",
                        "--out", str(tmp_path)], capture_output=True, text=True, timeout=600,
                       env={**os.environ, "ONNX_MLIR_PY_CACHE": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr[-2000:]
    res = json.loads((tmp_path / "ray_throughput.json").read_text())
    assert set(res["rows_per_s"]) == {"onnx-mlir-py", "onnxruntime"}
    assert all(v > 0 for v in res["rows_per_s"].values())
    assert "| onnx-mlir-py |" in (tmp_path / "ray_throughput.md").read_text()
