"""The tool launcher (onnx_mlir_py/tool_launcher.py): tools start through it
(vfork, no Python pre-exec step), it is built once into the cache and
checked before use, and without it the tools start as before."""
from __future__ import annotations

import os
import subprocess

import pytest

from onnx_mlir_py import tool_launcher, tool_process


@pytest.fixture
def fresh(tmp_path, monkeypatch):
    """A private cache and no launcher chosen yet in this process."""
    monkeypatch.setenv("ONNX_MLIR_PY_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(tool_launcher.DISABLE_ENV, raising=False)
    monkeypatch.setattr(tool_launcher, "_state", {})
    monkeypatch.setattr(tool_launcher, "_ahead", None)
    return tmp_path / "cache"


def _spawned(monkeypatch) -> list[list[str]]:
    seen = []
    real = subprocess.Popen

    def popen(args, *a, **kw):
        seen.append((list(args), "preexec_fn" in kw, kw.get("process_group")))
        return real(args, *a, **kw)
    monkeypatch.setattr(tool_process.subprocess, "Popen", popen)
    return seen


def test_tools_start_through_the_launcher(fresh, monkeypatch):
    seen = _spawned(monkeypatch)
    r = tool_process.run_tool(["/bin/sh", "-c", "echo $$; echo $PPID"])
    assert r.returncode == 0
    exe = tool_launcher._state["path"]
    assert exe is not None and exe.startswith(str(fresh)), exe
    args, preexec, group = seen[-1]
    assert args[0] == exe and args[2] == "/bin/sh" and not preexec and group == 0
    child, parent = (int(x) for x in r.stdout.split())
    assert parent == os.getpid() and child != parent      # exec'd in the launcher's place
    # run_tools too, in order
    out = tool_process.run_tools([["/bin/sh", "-c", "exit 3"], ["/bin/true"]], 2)
    assert [p.returncode for p in out] == [3, 0]
    assert all(a[0] == exe for a, _, _ in seen[-2:])


def test_a_corrupt_launcher_is_built_again(fresh):
    exe = tool_launcher.launcher(tool_process._build_launcher)
    data = bytearray(open(exe, "rb").read())
    data[len(data) // 2] ^= 0xFF
    with open(exe, "wb") as f:
        f.write(data)
    tool_launcher._state.clear()
    again = tool_launcher.launcher(tool_process._build_launcher)
    assert again == exe and open(again, "rb").read() != bytes(data)
    assert oct(os.stat(again).st_mode & 0o777) == oct(0o700)


def test_a_missing_tool_is_the_oserror_popen_gives(fresh):
    with pytest.raises(FileNotFoundError):
        tool_process.run_tool(["/nonexistent/llc", "--version"])


def test_without_a_launcher_tools_start_as_before(fresh, monkeypatch):
    monkeypatch.setenv(tool_launcher.DISABLE_ENV, "1")
    seen = _spawned(monkeypatch)
    assert tool_process.run_tool(["/bin/true"]).returncode == 0
    assert seen[-1][0] == ["/bin/true"] and seen[-1][1]


def test_a_launcher_that_cannot_run_falls_back(fresh, monkeypatch, tmp_path):
    """e.g. a cache on a noexec mount: the launch fails, the tool starts the
    old way and the launcher is not tried again."""
    bad = tmp_path / "not-executable"
    bad.write_bytes(b"\x7fELF")
    monkeypatch.setattr(tool_launcher, "_state", {"path": str(bad)})
    r = tool_process.run_tool(["/bin/sh", "-c", "echo ok"])
    assert r.returncode == 0 and r.stdout == b"ok\n"
    assert tool_launcher._state["path"] is None


def test_a_new_cache_builds_it_in_the_runtime_prefetch(fresh, monkeypatch):
    # a gcc beside the runtime's prefetch chain (all started without the
    # launcher) builds it; the compile's thread runs no gcc for it and takes
    # it from there
    from onnx_mlir_py.codegen import runtime_objects as ro
    seen = _spawned(monkeypatch)
    built = []
    monkeypatch.setattr(tool_process, "_build_launcher",
                        lambda args: built.append(args) or subprocess.run(args))
    assert tool_launcher.wanted()
    with ro.Prefetch(["om_string.c"]) as pre:
        chain = seen[0]
        assert chain[1] and chain[0][0] == "/bin/sh"       # the pre-exec path
        assert "tool_launch.c" in chain[0][2]
        assert not tool_launcher.wanted()                  # announced
        exe = tool_launcher.launcher(tool_process._build_launcher)
        assert pre.take("om_string.c") is not None
    assert built == [] and exe is not None and exe.startswith(str(fresh))
    assert tool_launcher._ahead is None and not tool_launcher.wanted()
    r = tool_process.run_tool(["/bin/true"])
    assert r.returncode == 0 and seen[-1][0][0] == exe


def test_a_launcher_build_ahead_that_died_is_built_here(fresh, monkeypatch):
    # the chain killed (the compile failed) before it built the launcher: the
    # first tool builds it itself, as before
    from onnx_mlir_py.codegen import runtime_objects as ro
    with ro.Prefetch(["om_string.c"]):
        pass                                # closed at once: the chain is killed
    assert tool_launcher._ahead is not None
    exe = tool_launcher.launcher(tool_process._build_launcher)
    assert exe is not None and os.path.isfile(exe) and tool_launcher._ahead is None
