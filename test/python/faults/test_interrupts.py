"""Interrupts clean up (issue 30 item 4): SIGINT, SIGTERM and SIGKILL at
several steps of a compile, by the command line and by an InferenceSession
(compile worker), leave no tool running, no temporary file or folder and no
cache placeholder; the command line prints one line and exits 128 + signal.

Each compile runs in a subprocess with a private TMPDIR and compile cache and
stops at a pause point (``onnx_mlir_py/test_hooks.py``): a phase, a running
tool (llc waits for its input, gcc is stopped), or "linked" (the library
written to ``<out>.tmp<pid>``). The pause file names the compiler's pid and
the tool's.
"""
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

# Every case waits for a pause point; a compile that never gets there fails
# the test instead of hanging it.
PAUSE_TIMEOUT_S = 120


def _model(path, seed=0):
    w = nh.from_array(np.random.default_rng(seed).standard_normal((16, 16), np.float32), "w")
    g = h.make_graph([h.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [4, 16])],
                     [h.make_tensor_value_info("y", T.FLOAT, [4, 16])], [w])
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), str(path))
    return str(path), nh.to_array(w)


@pytest.fixture
def env(tmp_path):
    tmp, cache = tmp_path / "tmp", tmp_path / "cache"
    tmp.mkdir()
    e = dict(os.environ, TMPDIR=str(tmp), ONNX_MLIR_PY_CACHE=str(cache),
             ONNX_MLIR_PY_TEST_PAUSE_FILE=str(tmp_path / "paused"))
    e.pop("ONNX_MLIR_PY_TEST_PAUSE", None)
    return e


def _stat(pid):
    """(state, pgid, ppid) of a process, None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return rest[0], int(rest[2]), int(rest[1])


def _running(pid) -> bool:
    st = _stat(pid)
    return st is not None and st[0] != "Z"


def _group(pgid):
    """Live (not zombie) processes of process group ``pgid``."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = _stat(int(d))
            if st is not None and st[1] == pgid and st[0] != "Z":
                out.append(int(d))
    return out


def _wait_gone(pids, timeout=5.0):
    """The pids still running (or their process groups) after ``timeout``."""
    end = time.monotonic() + timeout
    while True:
        left = [p for p in pids if _running(p) or _group(p)]
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.05)


def _paused(p, env):
    """Wait for the pause file: (compiler pid, tool pid or 0)."""
    path = env["ONNX_MLIR_PY_TEST_PAUSE_FILE"]
    end = time.monotonic() + PAUSE_TIMEOUT_S
    while not os.path.exists(path):
        if p.poll() is not None:
            pytest.fail(f"ended before the pause point: {p.returncode} "
                        f"{p.stderr.read().decode()[-2000:]}")
        if time.monotonic() > end:
            p.kill()
            pytest.fail("the pause point was not reached")
        time.sleep(0.02)
    pid, tool = map(int, open(path).read().split())
    return pid, tool


def _leftovers(env, out_dir):
    """Temporaries: anything in the private TMPDIR, <out>.tmp<pid> files,
    cache placeholders (.<key>.*)."""
    found = [os.path.join(env["TMPDIR"], n) for n in os.listdir(env["TMPDIR"])]
    found += [str(p) for p in out_dir.iterdir() if ".tmp" in p.name]
    for root, _, files in os.walk(env["ONNX_MLIR_PY_CACHE"]):
        found += [os.path.join(root, f) for f in files if f.startswith(".")]
    return found


# -- the command line ----------------------------------------------------------------
CLI_CASES = [
    # (pause point, signal)
    ("optimize (tensor -O3)", signal.SIGINT),
    ("llc", signal.SIGINT),
    ("gcc", signal.SIGINT),
    ("linked", signal.SIGINT),
    ("opt", signal.SIGTERM),
    ("linked", signal.SIGTERM),
    ("llc", signal.SIGKILL),
    ("gcc", signal.SIGKILL),
    ("linked", signal.SIGKILL),
]


@pytest.mark.parametrize("point,sig", CLI_CASES,
                         ids=[f"{s.name}-{p.split()[0]}" for p, s in CLI_CASES])
def test_cli_signal(tmp_path, env, point, sig):
    model, _ = _model(tmp_path / "m.onnx")
    out = tmp_path / "out"
    out.mkdir()
    e = dict(env, ONNX_MLIR_PY_TEST_PAUSE=point)
    if point == "llc":
        # llc as a tool: in-process LLVM (the default) runs no llc process,
        # and the host's triple and CPU no longer come from `llc --version`
        # (codegen/llvm_capi.host_llvm), which this case used to pause in
        e["ONNX_MLIR_PY_LLVM_IN_PROCESS"] = "0"
    # its own session: the signal goes to its process group, as a terminal's
    # Ctrl-C goes to the foreground group (the tools have groups of their own)
    p = subprocess.Popen([sys.executable, "-m", "onnx_mlir_py.cli", "-O3", model, "-o",
                          str(out / "m")], env=e, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    pid, tool = _paused(p, e)
    assert pid == p.pid
    if point == "linked":
        assert (out / f"m.so.tmp{pid}").exists()
    os.killpg(p.pid, sig)
    rc = p.wait(60)
    err = p.stderr.read().decode()
    assert _wait_gone([tool] if tool else []) == [], f"{point}: tool {tool} left running"
    assert not (out / "m.so").exists()
    if sig == signal.SIGKILL:
        assert rc == -signal.SIGKILL
        # it ran no code: its folder stays, named with its pid, for a later run
        left = _leftovers(env, out)
        assert all(f"{pid}" in os.path.basename(f) for f in left), left
        r = subprocess.run([sys.executable, "-m", "onnx_mlir_py.cli", "-O0", model, "-o",
                            str(out / "m")], env=env, capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, r.stderr
        assert _leftovers(env, out) == [], "a later compile collects a killed one's files"
        return
    want = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}[sig]
    assert (rc, err) == (128 + sig, want + "\n")
    assert _leftovers(env, out) == []


# -- an InferenceSession: the compile worker -----------------------------------------------
SESSION_SCRIPT = textwrap.dedent("""
    import os, sys
    import numpy as np
    from onnx_mlir_py.inference import InferenceSession
    model, other, w = sys.argv[1], sys.argv[2], np.load(sys.argv[3])
    try:
        InferenceSession(model)
    except KeyboardInterrupt as e:
        print("caught", type(e).__name__, flush=True)
    # the next compile gets its own answer (not the interrupted call's)
    os.environ.pop("ONNX_MLIR_PY_TEST_PAUSE")
    x = np.ones((4, 16), np.float32)
    y = InferenceSession(other).run(None, {"x": x})[0]
    np.testing.assert_allclose(y, x @ w, rtol=1e-5, atol=1e-5)
    print("second ok", flush=True)
""")


def _session(tmp_path, env, point):
    model, _ = _model(tmp_path / "m.onnx", 0)
    other, w = _model(tmp_path / "other.onnx", 1)
    np.save(tmp_path / "w.npy", w)
    e = dict(env, ONNX_MLIR_PY_TEST_PAUSE=point)
    p = subprocess.Popen([sys.executable, "-c", SESSION_SCRIPT, model, other,
                          str(tmp_path / "w.npy")], env=e, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    worker, tool = _paused(p, e)
    assert worker != p.pid       # compiled in the worker
    return p, worker, tool


@pytest.mark.parametrize("point,group", [("llc", True), ("linked", False)])
def test_session_interrupted_ends_the_compile(tmp_path, env, point, group):
    """Ctrl-C (to the foreground group: the program and its worker, which
    ignores it; or to the program alone) while a session compiles: the
    worker's call unwinds, the program goes on and its next compile works."""
    p, worker, tool = _session(tmp_path, env, point)
    if group:
        os.killpg(p.pid, signal.SIGINT)
    else:
        os.kill(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err.decode()[-3000:]
    assert out.decode().split("\n")[:2] == ["caught KeyboardInterrupt", "second ok"]
    assert _wait_gone([worker] + ([tool] if tool else [])) == []
    assert _leftovers(env, tmp_path) == []


@pytest.mark.parametrize("point,sig", [("llc", signal.SIGKILL), ("linked", signal.SIGTERM)])
def test_session_process_killed(tmp_path, env, point, sig):
    """The session's process dies mid-compile without running any code
    (SIGKILL; SIGTERM, which Python does not catch by default): its worker
    notices, unwinds (placeholder, work folder, its log removed) and ends;
    the tool dies."""
    p, worker, tool = _session(tmp_path, env, point)
    os.kill(p.pid, sig)
    p.wait(30)
    assert p.returncode == -sig
    assert _wait_gone([worker] + ([tool] if tool else []), timeout=10) == []
    assert _leftovers(env, tmp_path) == []


def test_sweep_keeps_live_and_foreign_entries(tmp_path, monkeypatch):
    """The collector removes only entries of dead pids of this namespace."""
    from onnx_mlir_py import scratch
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(scratch.tempfile, "tempdir", None)
    ns = scratch._pid_namespace()
    dead = subprocess.Popen(["true"])
    dead.wait()
    live = tmp_path / f"omp-{os.getpid()}-{ns}-live"
    gone = tmp_path / f"omp-{dead.pid}-{ns}-gone"
    other_ns = tmp_path / f"omp-{dead.pid}-1{ns}-elsewhere"
    log = tmp_path / f"onnx-mlir-py-worker-{dead.pid}-{ns}-x.log"
    unrelated = tmp_path / "omp-notours"
    for d in (live, gone, other_ns, unrelated):
        d.mkdir()
    log.write_text("")
    (gone / "model.o").write_bytes(b"x")
    assert sorted(scratch.sweep_stale(tmp_path)) == sorted([str(gone), str(log)])
    assert live.exists() and other_ns.exists() and unrelated.exists()


def test_killed_worker_leftovers_go_with_the_next_compile(tmp_path, env):
    """The worker itself killed mid-compile (the OOM killer, a crash) runs no
    code: its cache placeholder and work folder stay until the next compile
    of that model removes them (under the key's lock nobody else compiles
    it; the folder's pid is dead)."""
    model, w = _model(tmp_path / "m.onnx")
    np.save(tmp_path / "w.npy", w)
    e = dict(env, ONNX_MLIR_PY_TEST_PAUSE="llc")
    code = "import sys; from onnx_mlir_py.inference import InferenceSession; " \
           "InferenceSession(sys.argv[1])"
    p = subprocess.Popen([sys.executable, "-c", code, model], env=e, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    worker, tool = _paused(p, e)
    os.kill(worker, signal.SIGKILL)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 1 and "CompilerCrashError" in err.decode(), err.decode()[-2000:]
    assert _wait_gone([tool]) == []
    left = _leftovers(env, tmp_path)
    assert any(os.path.basename(f).startswith(".") for f in left), left   # the placeholder
    again = subprocess.run([sys.executable, "-c", SESSION_SCRIPT.split("try:")[0] +
                            "y = InferenceSession(model).run(None, {'x': np.ones((4, 16), "
                            "np.float32)})[0]\nnp.testing.assert_allclose(y, np.ones((4, 16)) @ w,"
                            " rtol=1e-5, atol=1e-5)\n", model, model, str(tmp_path / "w.npy")],
                           env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert _leftovers(env, tmp_path) == []
