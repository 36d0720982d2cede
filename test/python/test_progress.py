"""The progress line of a compile: on stderr in a terminal (a pseudo-terminal
here), per-op counts, erased at the end; nothing when stderr is not a
terminal or with -q; -v still prints the timing table."""
import io
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from onnx_mlir_py.progress import Progress, count, show_progress, write_line
from onnx_mlir_py.timings import Timings

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mnist_small.onnx"


def cli_in_pty(*args):
    """Run the CLI with stderr on a pseudo-terminal: (rc, stdout, what the terminal got)."""
    master, slave = os.openpty()
    env = dict(os.environ, TERM="xterm")
    p = subprocess.Popen([sys.executable, "-m", "onnx_mlir_py.cli", *map(str, args)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave,
                         env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:           # EIO: the child closed its end
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    out = p.stdout.read().decode()
    p.stdout.close()
    return p.wait(timeout=300), out, b"".join(chunks).decode()


def test_terminal_shows_phases_and_op_counts_then_erases(tmp_path):
    rc, _, tty = cli_in_pty(EXAMPLE, "-O0", "-o", tmp_path / "m")
    assert rc == 0, tty
    assert (tmp_path / "m.so").exists()
    frames = tty.split("\r")
    drawn = [f for f in frames if f.startswith("[onnx-mlir-py")]
    for phase in ("import", "shape-inference", "lower-to-linalg", "codegen: llc",
                  "codegen: link"):
        assert any(f"] {phase}" in f for f in drawn), (phase, drawn)
    # the per-op passes count, up to the number of ops they go through
    lowered = [re.search(r"lower-to-linalg (\d+)/(\d+) ops", f) for f in drawn]
    counts = [(int(m.group(1)), int(m.group(2))) for m in lowered if m]
    assert counts and counts[-1][0] == counts[-1][1] > 0, drawn
    assert any(re.search(r"shape-inference \d+/\d+ ops", f) for f in drawn)
    assert all(re.fullmatch(r"\[onnx-mlir-py +\d+\.\d s\] .* \(\d+\.\d s\)\x1b\[K", f)
               for f in drawn), drawn
    assert tty.endswith("\r\x1b[K")                 # erased: the terminal is left clean


def test_terminal_verbose_keeps_table_and_quiet_is_silent(tmp_path):
    rc, _, tty = cli_in_pty(EXAMPLE, "-O0", "-o", tmp_path / "m", "-v")
    assert rc == 0, tty
    table = tty[tty.rindex("\r\x1b[K") + 4:]        # after the progress line is erased
    assert "[onnx-mlir-py] lower-to-linalg" in table and "[onnx-mlir-py] total" in table
    rc, _, tty = cli_in_pty(EXAMPLE, "-O0", "-o", tmp_path / "m", "-q")
    assert rc == 0 and tty == ""


def test_no_progress_when_stderr_is_not_a_terminal(tmp_path):
    r = subprocess.run([sys.executable, "-m", "onnx_mlir_py.cli", str(EXAMPLE), "-O0", "-o",
                        str(tmp_path / "m")], capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, TERM="xterm"))
    assert r.returncode == 0 and r.stderr == "", r.stderr


def test_error_erases_the_line_first(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(EXAMPLE.read_bytes()[:200])
    rc, _, tty = cli_in_pty(bad, "-O0")
    assert rc == 1
    assert "\r\x1b[Kerror: cannot read" in tty.replace("\r\n", "\n"), repr(tty)


def _read_all(master) -> str:
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks).decode()


def test_progress_in_process_counts_and_warnings_on_their_own_line():
    master, slave = os.openpty()
    stream = os.fdopen(slave, "w")
    t = Timings()
    with show_progress(t, None, stream=stream) as p:      # a terminal: shown
        assert isinstance(p, Progress)
        with t.phase("lower-to-linalg"):
            for i in range(3):
                count(i, 3)
            count(3, 3)
            write_line("warning: something")
            time.sleep(0.6)           # the painter redraws on its own
    stream.close()
    text = _read_all(master).replace("\r\n", "\n")
    os.close(master)
    assert "] lower-to-linalg 3/3 ops (" in text      # the latest count (sent at once)
    assert "\r\x1b[Kwarning: something\n\r[onnx-mlir-py" in text, repr(text)
    assert text.endswith("\r\x1b[K") and t.listener is None and "lower-to-linalg" in t
    count(1, 2)                      # no display now: nothing happens


def test_painter_redraws_while_the_interpreter_is_busy_in_c():
    """The clocks move while this process holds the GIL (as in a long MLIR pass)."""
    master, slave = os.openpty()
    stream = os.fdopen(slave, "w")
    t = Timings()
    with show_progress(t, True, stream=stream):
        with t.phase("codegen: mlir"):
            time.sleep(0.2)
            busy_c_call(1.2)
    stream.close()
    frames = [f for f in _read_all(master).split("\r") if "codegen: mlir" in f]
    os.close(master)
    assert len(frames) >= 4, frames     # redrawn every 0.25 s during the busy second


def busy_c_call(seconds: float) -> None:
    """A C loop that keeps the GIL (re.match on a pathological pattern) ~``seconds`` long."""
    import re as _re
    n, t0 = 18, time.perf_counter()
    while True:
        start = time.perf_counter()
        _re.match(r"(a*)*b", "a" * n)
        if time.perf_counter() - t0 >= seconds:
            return
        if time.perf_counter() - start < 0.05:
            n += 1


@pytest.mark.parametrize("enabled, shown", [(None, False), (False, False)])
def test_not_shown_on_a_non_terminal(enabled, shown):
    s = io.StringIO()
    with show_progress(Timings(), enabled, stream=s) as p:
        assert p is None
    assert s.getvalue() == ""
