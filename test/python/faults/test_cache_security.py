"""A cache only its owner can write: made 0700 / 0600 (0700 for a library)
whatever the umask; a directory or entry another user could have written is
refused with one line before anything is loaded, so a planted library's
constructor never runs; a shared cache is opted into explicitly, read-only
and checked by hash."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from _cache_faults import expected, planted_library, run_session, warnings_in, write_model

OTHER_UID = 54321


def _chown_other(path) -> None:
    """Give ``path`` to another user (root only: else the test is skipped, saying why)."""
    if os.geteuid() != 0:
        pytest.skip("making a file another user's needs root (chown)")
    os.chown(path, OTHER_UID, OTHER_UID)


def _modes(cache: Path) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {"dir": set(), "so": set(), "file": set()}
    for root, dirs, files in os.walk(cache):
        out["dir"].add(stat.S_IMODE(os.stat(root).st_mode))
        for f in files:
            kind = "so" if f.endswith(".so") else "file"
            out[kind].add(stat.S_IMODE(os.stat(os.path.join(root, f)).st_mode))
    return out


@pytest.mark.parametrize("umask", [0o002, 0o000])
def test_modes_are_private_whatever_the_umask(tmp_path, umask):
    path, model = write_model(tmp_path, 1.5)
    cache = tmp_path / "cache"
    out, err, rc = run_session(path, cache, umask=umask)
    assert rc == 0 and out.get("y") == expected(model), (out, err[-500:])
    modes = _modes(cache)
    assert modes == {"dir": {0o700}, "so": {0o700}, "file": {0o600}}, modes


def _plant(so: Path, planted: Path) -> None:
    """Replace the library with ``planted`` and forge its record to match, as
    someone who can write the cache would."""
    shutil.copyfile(planted, so)
    data = planted.read_bytes()
    so.with_suffix(".meta.json").write_text(json.dumps(
        {"key": so.stem, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}))


def _one_line_refusal(out: dict, where: Path, problem: str) -> None:
    assert out.get("error") == "UnsafeCacheError", out
    assert str(where) in out["message"] and problem in out["message"], out
    assert "\n" not in out["message"]


def _group_writable_cache(cache: Path, so: Path) -> tuple[Path, str]:
    os.chmod(cache, 0o775)              # as a cache made under umask 002 by older versions
    return cache, "writable by group"


def _other_writable_shard(cache: Path, so: Path) -> tuple[Path, str]:
    os.chmod(so.parent, 0o777)
    return so.parent, "writable by group and others"


def _entry_of_another_user(cache: Path, so: Path) -> tuple[Path, str]:
    _chown_other(so)
    return so, f"owned by uid {OTHER_UID}"


def _record_of_another_user(cache: Path, so: Path) -> tuple[Path, str]:
    _chown_other(so.with_suffix(".meta.json"))
    return so.with_suffix(".meta.json"), f"owned by uid {OTHER_UID}"


@pytest.mark.parametrize("exposure", [_group_writable_cache, _other_writable_shard,
                                      _entry_of_another_user, _record_of_another_user],
                         ids=lambda f: f.__name__.strip("_"))
def test_a_cache_another_user_could_write_is_refused(tmp_path, exposure):
    """A library planted with a record that matches it, where another user
    could have put them: refused in one line, the library never loaded."""
    so_planted, marker = planted_library(tmp_path)
    path, _ = write_model(tmp_path, 2.5)
    cache = tmp_path / "cache"
    first, _, _ = run_session(path, cache)
    so = Path(first["library"])
    _plant(so, so_planted)
    where, problem = exposure(cache, so)
    out, err, rc = run_session(path, cache)
    assert rc == 0, err[-500:]
    _one_line_refusal(out, where, problem)
    assert not marker.exists(), "the planted library was loaded"


def test_a_planted_library_without_a_matching_record_is_never_loaded(tmp_path):
    """Planted in a private cache (only by its owner, then): its hash does not
    match the record, so it is replaced by a rebuild, not loaded."""
    so_planted, marker = planted_library(tmp_path)
    path, model = write_model(tmp_path, 4.5)
    cache = tmp_path / "cache"
    first, _, _ = run_session(path, cache)
    shutil.copyfile(so_planted, first["library"])
    out, err, rc = run_session(path, cache)
    assert rc == 0 and out.get("y") == expected(model), (out, err[-500:])
    assert len(warnings_in(err)) == 1
    assert not marker.exists(), "the planted library was loaded"


def _shared_cache(tmp_path: Path, model_path: Path) -> tuple[Path, Path]:
    """A cache filled by another user (uid OTHER_UID), readable by all:
    (its directory, the library of the model)."""
    shared = tmp_path / "shared"
    first, err, _ = run_session(model_path, shared)
    for root, dirs, files in os.walk(shared):
        _chown_other(root)
        os.chmod(root, 0o775)           # even group-writable: the user opted in
        for f in files:
            _chown_other(os.path.join(root, f))
            os.chmod(os.path.join(root, f), 0o644)
    return shared, Path(first["library"])


def test_a_foreign_cache_is_refused_unless_opted_into(tmp_path):
    path, model = write_model(tmp_path, 5.5)
    shared, _ = _shared_cache(tmp_path, path)
    out, err, rc = run_session(path, shared)
    assert rc == 0, err[-500:]
    _one_line_refusal(out, shared, f"owned by uid {OTHER_UID}")


def test_a_shared_cache_is_read_only_and_checked(tmp_path):
    path, model = write_model(tmp_path, 5.5)
    shared, lib = _shared_cache(tmp_path, path)
    before = {p: p.stat().st_mtime_ns for p in shared.rglob("*")}
    private = tmp_path / "mine"
    env = {"ONNX_MLIR_PY_SHARED_CACHE": str(shared)}
    out, err, rc = run_session(path, private, env=env)
    assert rc == 0 and out.get("y") == expected(model), (out, err[-500:])
    assert out["library"].startswith(str(private)) and not warnings_in(err)
    assert Path(out["library"]).read_bytes() == lib.read_bytes()     # copied, not compiled
    assert {p: p.stat().st_mtime_ns for p in shared.rglob("*")} == before, "shared cache written"


def test_a_planted_library_in_a_shared_cache_is_never_loaded(tmp_path):
    so_planted, marker = planted_library(tmp_path)
    path, model = write_model(tmp_path, 6.5)
    shared, lib = _shared_cache(tmp_path, path)
    os.chmod(lib, 0o666)
    shutil.copyfile(so_planted, lib)    # the record (the owner's) does not match
    out, err, rc = run_session(path, tmp_path / "mine",
                               env={"ONNX_MLIR_PY_SHARED_CACHE": str(shared)})
    assert rc == 0 and out.get("y") == expected(model), (out, err[-500:])
    warned = warnings_in(err)
    assert len(warned) == 1 and "shared compile cache entry" in warned[0], err
    assert not marker.exists(), "the planted library was loaded"
