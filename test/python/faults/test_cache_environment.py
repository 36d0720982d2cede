"""Failures of the machine are reported as such (one line naming the cause)
and never cached: after the fault is gone, the next session compiles and
runs. A real compile error is still cached."""
from __future__ import annotations

import contextlib
import os
import stat
import subprocess
from pathlib import Path

import pytest

from _cache_faults import expected, run_session, write_model


def _fake_cc(tmp_path: Path, body: str) -> dict:
    """$CC: a shell script standing in for gcc (the link step)."""
    cc = tmp_path / "fake-gcc"
    cc.write_text("#!/bin/sh\n" + body + "\n")
    cc.chmod(0o755)
    return {"CC": str(cc)}


ENV_FAULTS = {
    # the OOM killer (or a supervisor) ends the linker
    "killed-by-SIGKILL": ("kill -KILL $$", "killed by SIGKILL"),
    # gcc reports its own killed child and exits 1
    "ld-killed": ('echo "collect2: fatal error: ld terminated with signal 9 [Killed]" >&2; exit 1',
                  "a tool it ran was killed"),
    "disk-full": ('echo "/usr/bin/ld: final link failed: No space left on device" >&2; exit 1',
                  "the disk is full"),
    "quota": ('echo "/usr/bin/ld: cannot open output file x.so: Disk quota exceeded" >&2; exit 1',
              "the disk quota is exceeded"),
}


@pytest.mark.parametrize("fault", sorted(ENV_FAULTS))
def test_an_environment_failure_is_not_cached(tmp_path, fault):
    script, cause = ENV_FAULTS[fault]
    cache = tmp_path / "cache"
    path, model = write_model(tmp_path, 3.0)
    out, err, rc = run_session(path, cache, env=_fake_cc(tmp_path, script))
    assert rc == 0, err[-500:]
    assert out.get("error") == "EnvironmentFailure", out
    assert cause in out["message"] and "\n" not in out["message"], out
    assert not list(cache.rglob("*.err.json")) and not list(cache.rglob("*.so")), \
        "an environment failure was cached"
    out, err, rc = run_session(path, cache)          # the fault is gone
    assert rc == 0 and out.get("y") == expected(model), (out, err[-500:])


def test_a_real_compile_error_is_still_cached(tmp_path):
    cache = tmp_path / "cache"
    path, _ = write_model(tmp_path, 4.0)
    fake = _fake_cc(tmp_path, 'echo "entry.c:1:1: error: expected something" >&2; exit 1')
    out, _, _ = run_session(path, cache, env=fake)
    assert out.get("error") == "CompileError" and "expected something" in out["message"], out
    assert len(list(cache.rglob("*.err.json"))) == 1
    out, _, _ = run_session(path, cache)             # served from the cache, not recompiled
    assert out.get("error") == "CompileError" and "expected something" in out["message"], out


@contextlib.contextmanager
def _mounted(where: Path, options: str):
    """A tmpfs at ``where`` (root only, else the test is skipped, saying why)."""
    where.mkdir(parents=True, exist_ok=True)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root / CAP_SYS_ADMIN): "
                    f"{p.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _remount(where: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(where)], check=True)


def test_a_full_disk_is_not_cached(tmp_path):
    path, model = write_model(tmp_path, 6.0)
    with _mounted(tmp_path / "cache", "size=24k,mode=0700") as cache:
        out, err, rc = run_session(path, cache)
        assert rc == 0, err[-500:]
        assert out.get("error") == "EnvironmentFailure", out
        assert "disk is full" in out["message"] or "No space left" in out["message"], out
        assert not list(cache.rglob("*.err.json")) and not list(cache.rglob("*.so"))
        assert not list(cache.rglob(".*")), "temp files left in the cache"
        _remount(cache, "size=16m")
        out, err, rc = run_session(path, cache)
        assert rc == 0 and out.get("y") == expected(model), (out, err[-500:])


def test_a_read_only_cache_is_not_cached_into(tmp_path):
    path, model = write_model(tmp_path, 7.0)
    with _mounted(tmp_path / "cache", "size=16m,mode=0700") as cache:
        _remount(cache, "ro")
        out, err, rc = run_session(path, cache)
        assert rc == 0, err[-500:]
        assert out.get("error") == "EnvironmentFailure", out
        assert "Read-only file system" in out["message"] and str(cache) in out["message"], out
        _remount(cache, "rw")
        assert not os.listdir(cache)
        out, err, rc = run_session(path, cache)
        assert rc == 0 and out.get("y") == expected(model), (out, err[-500:])
        assert stat.S_IMODE(Path(out["library"]).stat().st_mode) == 0o700


@pytest.mark.parametrize("exc, cause", [
    (MemoryError(), "out of memory (MemoryError)"),
    (OSError(28, "No space left on device", "/tmp/omp-x/model.o"), "[ENOSPC]"),
    (OSError(122, "Disk quota exceeded"), "[EDQUOT]"),
    (PermissionError(13, "Permission denied", "/cache/ab"), "[EACCES]"),
])
def test_errors_of_the_machine_inside_the_compiler_are_not_cached(tmp_path, monkeypatch,
                                                                   exc, cause):
    import onnx_mlir_py
    from onnx_mlir_py.backend.cache import CompileCache
    from onnx_mlir_py.backend.compile import build
    from onnx_mlir_py.errors import EnvironmentFailure
    from _cache_faults import add_model

    def failing(*a, **k):
        raise exc
    monkeypatch.setattr(onnx_mlir_py, "compile", failing, raising=False)
    with pytest.raises(EnvironmentFailure) as info:
        build(add_model(1.0).SerializeToString(), {}, "ab" * 20, str(tmp_path))
    assert cause in str(info.value) and "\n" not in str(info.value)
    assert CompileCache(tmp_path).lookup("ab" * 20) is None
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix != ".lock"]
