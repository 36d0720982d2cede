"""Reload without leaks (issue 30 item 6): opening a new file at one path
again and again unloads the libraries nobody uses (their pool threads
stopped and joined, dlclose), keeps no private copies on disk, and runs the
new code each time. Counted in a subprocess from /proc/self: threads, mapped
model libraries, omp-reload files in its TMPDIR. Before the fix, 50 reloads
gave +50 threads, +49 mapped libraries and 49 copies in the temp directory."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnx_mlir_py

RELOADS = 50

SCRIPT = textwrap.dedent("""
    import gc, json, os, shutil, sys, tempfile
    import numpy as np
    from onnx_mlir_py.runtime import ExecutionSession
    libs, target, keep, n = sys.argv[1:3], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])

    def counts():
        files = [l.split(None, 5)[5].strip() for l in open("/proc/self/maps")
                 if len(l.split(None, 5)) == 6]
        maps = {f for f in files if "omp-reload" in f or f.split(" (deleted)")[0] == target}
        tmp = [f for f in os.listdir(tempfile.gettempdir()) if f.startswith("omp-reload")]
        return {"threads": len(os.listdir("/proc/self/task")), "maps": len(maps),
                "tmp": len(tmp)}

    x = np.arange(64 * 256, dtype=np.float32).reshape(64, 256) / 1000
    outs, seen, old = [], [], None
    for i in range(n):
        shutil.copy(libs[i % 2], target + ".new")
        os.replace(target + ".new", target)       # a new file at the same path
        s = ExecutionSession(target, num_threads=2)
        outs.append(s.run([x])[0].tolist() if i < 2 else s.run([x])[0][0, 1].item())
        if keep:
            old, s = s, None            # the previous session lives while the next opens
        else:
            del s
        gc.collect()
        seen.append(counts())
    print(json.dumps({"outs": outs[:2], "firsts": outs[2:], "seen": seen}))
""")


def _matmul(path, scale):
    w = nh.from_array((np.eye(256, dtype=np.float32) * scale), "w")
    g = h.make_graph([h.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [64, 256])],
                     [h.make_tensor_value_info("y", T.FLOAT, [64, 256])], [w])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), str(path))
    return str(path)


@pytest.fixture(scope="module")
def two_libraries(tmp_path_factory):
    """Two multi-threaded (-O3) builds of one signature, different results
    (big enough for the MatMul to be split over threads)."""
    d = tmp_path_factory.mktemp("reload")
    out = []
    for k, scale in enumerate((1.0, 2.0)):
        so = d / f"v{k}.so"
        onnx_mlir_py.compile(_matmul(d / f"v{k}.onnx", scale), str(so), opt_level=3)
        out.append(str(so))
    from onnx_mlir_py.runtime import ExecutionSession
    if not ExecutionSession(out[0]).multithreaded:
        pytest.fail("the -O3 MatMul has no thread pool: the test would not see thread leaks")
    return out


@pytest.mark.parametrize("keep", [0, 1], ids=["sequential", "overlapping"])
def test_reloads_stay_bounded(tmp_path, two_libraries, keep):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    r = subprocess.run([sys.executable, "-c", SCRIPT, *two_libraries, str(tmp_path / "m.so"),
                        str(keep), str(RELOADS)], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, TMPDIR=str(tmp)))
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout)
    x = np.arange(64 * 256, dtype=np.float32).reshape(64, 256) / 1000
    # each reload runs the new file's code (v0: x, v1: 2x), not the first one loaded
    np.testing.assert_allclose(res["outs"][0], x, rtol=1e-6)
    np.testing.assert_allclose(res["outs"][1], 2 * x, rtol=1e-6)
    assert res["firsts"] == [float(x[0, 1] * (1 + i % 2)) for i in range(2, RELOADS)]
    first, last = res["seen"][1], res["seen"][-1]
    # at most: the live sessions' libraries (1 + keep) and their pools (1 worker each)
    assert last["maps"] <= 1 + keep, res["seen"]
    assert last["threads"] <= first["threads"] + keep, res["seen"]
    assert max(s["threads"] for s in res["seen"]) <= first["threads"] + 1 + keep
    assert max(s["tmp"] for s in res["seen"]) == 0
    assert os.listdir(tmp) == []
