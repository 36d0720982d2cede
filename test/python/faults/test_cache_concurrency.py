"""One compile per model: threads of one process (and processes) opening the
same new model at once wait for the first one's compile and load its entry
(the cache is re-checked under the entry's lock)."""
from __future__ import annotations

import json
import subprocess
import sys
import threading

import numpy as np

from _cache_faults import X, expected, write_model

# Opens argv[1] in argv[3] threads at once (cache argv[2]); prints the number
# of compiles this process ran and the libraries the sessions loaded.
THREADS = r'''
import json, sys, threading
import numpy as np
import onnx_mlir_py as ort
from onnx_mlir_py.backend import compile as compile_mod
compiles, real = [], compile_mod._compile
def counting(*a, **k):
    compiles.append(1)
    return real(*a, **k)
compile_mod._compile = counting
n = int(sys.argv[3]); barrier = threading.Barrier(n); results = [None] * n
def open_one(i):
    barrier.wait()
    s = ort.InferenceSession(sys.argv[1], cache_dir=sys.argv[2])
    results[i] = (s.library_path, s.run(None, {"x": np.arange(4, dtype=np.float32)})[0].tolist())
threads = [threading.Thread(target=open_one, args=(i,)) for i in range(n)]
[t.start() for t in threads]; [t.join() for t in threads]
print(json.dumps({"compiles": len(compiles), "results": results}))
'''


def _run(path, cache, threads: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", THREADS, str(path), str(cache), str(threads)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _result(p: subprocess.Popen) -> dict:
    out, err = p.communicate(timeout=600)
    assert p.returncode == 0, err[-800:]
    return json.loads(out.strip().splitlines()[-1])


def test_threads_of_one_process_compile_a_new_model_once(tmp_path):
    path, model = write_model(tmp_path, 8.0)
    got = _result(_run(path, tmp_path / "cache", 4))
    assert got["compiles"] == 1, got
    assert len({lib for lib, _ in got["results"]}) == 1
    assert all(y == expected(model) for _, y in got["results"])


def test_processes_compile_a_new_model_once(tmp_path):
    path, model = write_model(tmp_path, 9.0)
    procs = [_run(path, tmp_path / "cache", 2) for _ in range(3)]
    got = [_result(p) for p in procs]
    assert sum(g["compiles"] for g in got) == 1, got
    assert all(y == expected(model) for g in got for _, y in g["results"])
    assert not list((tmp_path / "cache").rglob(".*")), "temp files left in the cache"


def test_compile_cached_in_threads_in_this_process(tmp_path, monkeypatch):
    """The same through the backend API, counted here (the compile runs in
    the shared compiler child)."""
    from onnx_mlir_py.backend import compile as compile_mod
    from onnx_mlir_py.backend.cache import CompileCache
    from onnx_mlir_py.runtime import ExecutionSession
    from _cache_faults import add_model
    model = add_model(10.0, "threads_here")
    calls, real = [], compile_mod._compile
    monkeypatch.setattr(compile_mod, "_compile", lambda *a, **k: calls.append(1) or real(*a, **k))
    cache, barrier, paths = CompileCache(tmp_path / "cache"), threading.Barrier(3), []

    def one():
        barrier.wait()
        paths.append(compile_mod.compile_cached(model, {"opt_level": 1}, cache=cache))

    threads = [threading.Thread(target=one) for _ in range(3)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert len(calls) == 1 and len(set(paths)) == 1 and len(paths) == 3
    y = ExecutionSession(str(paths[0])).run([X])[0]
    np.testing.assert_array_equal(y, np.array(expected(model), np.float32))
