"""The conformance runner's pool: an abort or a hang in one task is reported
for that task and the other tasks still run."""
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "test" / "conformance"))

from pool import run_tasks  # noqa: E402


def _work(task):
    if task == "abort":
        os.abort()
    if task == "hang":
        time.sleep(60)
    return task * 2


def test_abort_and_hang_are_counted_not_fatal():
    tasks = [1, "abort", 2, "hang", 3]
    t0 = time.monotonic()
    got = dict(run_tasks(tasks, _work, jobs=2, timeout=30,
                         timeout_of=lambda t: 3 if t == "hang" else 30))
    assert time.monotonic() - t0 < 50
    assert got[1] == ("ok", 2) and got[2] == ("ok", 4) and got[3] == ("ok", 6)
    assert got["abort"][0] == "crash" and "SIGABRT" in got["abort"][1]
    assert got["hang"][0] == "timeout"
