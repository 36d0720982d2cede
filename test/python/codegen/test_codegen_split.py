"""Parallel codegen (codegen/split.py): a module split by llvm-split, its
parts optimised and compiled at most ``jobs`` at a time
(tool_process.run_tools), gives the same results as the whole module; a
part's tool failure is one error; an interrupt kills the running tools."""
from __future__ import annotations

import os
import subprocess
import sys
import time

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from onnx_mlir_py.codegen import split
from onnx_mlir_py.errors import CompileError
from onnx_mlir_py.testing.check import assert_match, reference
from onnx_mlir_py.tool_process import run_tools


def _model():
    rng = np.random.default_rng(0)
    nodes, cur = [], "x"
    inits = []
    for i in range(3):      # convs with parallel loops: several functions to split
        inits.append(nh.from_array((rng.standard_normal((16, 16, 3, 3)) * 0.2).astype(np.float32), f"w{i}"))
        nodes += [h.make_node("Conv", [cur, f"w{i}"], [f"c{i}"], pads=[1, 1, 1, 1]),
                  h.make_node("Tanh", [f"c{i}"], [f"t{i}"])]
        cur = f"t{i}"
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [1, 16, 24, 24])],
                     [h.make_tensor_value_info(cur, TP.FLOAT, [1, 16, 24, 24])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    return m, {"x": rng.standard_normal((1, 16, 24, 24)).astype(np.float32)}


def test_split_library_matches(tmp_path, monkeypatch):
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    seen = []
    real = split.split_objects

    def spy(ll, tmp, jobs, *a, **k):
        objs = real(ll, tmp, jobs, *a, **k)
        seen.append(len(objs))
        # translated in this process: bitcode for llvm-split (#29)
        from onnx_mlir_py.codegen import llvm_capi
        assert (ll[:4] == b"BC\xc0\xde") == llvm_capi.available()
        return objs
    monkeypatch.setattr(split, "split_objects", spy)
    monkeypatch.setattr(split, "SPLIT_MIN_BYTES", 0)
    monkeypatch.setenv(split.JOBS_ENV, "2")
    m, feeds = _model()
    so = onnx_mlir_py.compile(m, output=str(tmp_path / "m.so"), opt_level=3)
    assert seen == [2 * split.PARTS_PER_JOB]
    got = ExecutionSession(so, num_threads=2).run([feeds["x"]])
    assert_match(got, reference(m, feeds, "onnxruntime"), rtol=1e-4, atol=1e-5)
    assert not list(tmp_path.glob("part*")), "parts are temporaries"


def test_compiled_whole_text_and_bitcode(monkeypatch):
    """Bitcode counts as TEXT_PER_BITCODE times its size against SPLIT_MIN_BYTES."""
    monkeypatch.setattr(split, "SPLIT_MIN_BYTES", 1000)
    text, bc = b"; text\n" * 200, b"BC\xc0\xde" + b"\0" * 90
    assert not split.compiled_whole(text) and split.compiled_whole(text[:999])
    assert split.compiled_whole(bc)
    assert not split.compiled_whole(bc + b"\0" * (1000 // split.TEXT_PER_BITCODE))


def test_one_job_compiles_whole(tmp_path, monkeypatch):
    import onnx_mlir_py
    called = []
    monkeypatch.setattr(split, "split_objects", lambda *a, **k: called.append(1))
    monkeypatch.setattr(split, "SPLIT_MIN_BYTES", 0)
    monkeypatch.setenv(split.JOBS_ENV, "1")
    m, _ = _model()
    onnx_mlir_py.compile(m, output=str(tmp_path / "m.so"), opt_level=3)
    assert not called


def test_run_tools_order_codes_and_stderr():
    cmds = [["sh", "-c", f"sleep 0.{3 - i}; echo err{i} >&2; exit {i}"] for i in range(3)]
    res = run_tools(cmds, 2)
    assert [r.returncode for r in res] == [0, 1, 2]
    assert [r.stderr.strip() for r in res] == [b"err0", b"err1", b"err2"]


def test_run_tools_at_most_jobs_at_a_time(tmp_path):
    log = tmp_path / "log"
    cmd = ["sh", "-c", f"echo start >> {log}; sleep 0.3; echo end >> {log}"]
    t0 = time.monotonic()
    run_tools([cmd] * 4, 2)
    took = time.monotonic() - t0
    lines = log.read_text().split()
    assert lines.count("start") == 4 and took >= 0.55     # two rounds of two
    depth = peak = 0
    for w in lines:
        depth += 1 if w == "start" else -1
        peak = max(peak, depth)
    assert peak <= 2


def test_split_tool_failure_is_one_error(tmp_path):
    bad = tmp_path / "bad"
    bad.write_text("#!/bin/sh\necho 'LLVM ERROR: broken part' >&2\nexit 1\n")
    bad.chmod(0o755)
    with pytest.raises(CompileError, match="broken part"):
        split._run_all([[str(bad)], ["true"]], 2, "llc")


def test_run_tools_interrupt_kills_running(tmp_path):
    """A KeyboardInterrupt while tools run (here raised from the poll) kills
    and reaps them: no tool outlives the call."""
    pidfile = tmp_path / "pids"
    cmd = ["sh", "-c", f"echo $$ >> {pidfile}; exec sleep 30"]
    code = (f"import time, subprocess\n"
            f"from onnx_mlir_py.tool_process import run_tools\n"
            f"orig = subprocess.Popen.poll\n"
            f"t0 = time.monotonic()\n"
            f"import os\n"
            f"def started():\n"
            f"    return os.path.exists({str(pidfile)!r}) and len(open({str(pidfile)!r}).read().split()) == 2\n"
            f"def poll(self):\n"
            f"    # both tools running (their pids written), however loaded the machine\n"
            f"    if started() or time.monotonic() - t0 > 20.0: raise KeyboardInterrupt\n"
            f"    return orig(self)\n"
            f"subprocess.Popen.poll = poll\n"
            f"try:\n    run_tools([{cmd!r}] * 2, 2)\nexcept KeyboardInterrupt:\n    print('interrupted')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "interrupted" in out.stdout, out.stderr
    pids = [int(p) for p in pidfile.read_text().split()]
    assert len(pids) == 2
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
