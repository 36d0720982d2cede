"""A corrupt cache entry is found before it is loaded, removed and rebuilt
once, with one CacheEntryWarning: the next session gives the right result
(never SIGBUS from a truncated library, never a raw KeyError from a garbage
signature JSON, never another model's results)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from _cache_faults import expected, run_session, warnings_in, write_model


def _corrupt(case: str, so: Path, other: Path) -> None:
    """Damage the entry of ``so`` as ``case`` says (``other``: another model's
    valid library, same signature)."""
    meta, io = so.with_suffix(".meta.json"), so.with_suffix(".io.json")
    if case == "truncated":             # a crash / power loss during the write
        data = so.read_bytes()
        so.write_bytes(data[:len(data) // 2])
    elif case == "zero-byte":
        so.write_bytes(b"")
    elif case == "garbage":
        so.write_bytes(b"\x00garbage" * (so.stat().st_size // 8))
    elif case == "same-size-flip":      # size and ELF header right, one byte wrong
        data = bytearray(so.read_bytes())
        data[len(data) // 2] ^= 0xFF
        so.write_bytes(bytes(data))
    elif case == "foreign":             # another model's library, its own record
        shutil.copyfile(other, so)
    elif case == "foreign-with-record":  # ... with that model's record too
        shutil.copyfile(other, so)
        shutil.copyfile(other.with_suffix(".meta.json"), meta)
    elif case == "no-record":
        meta.unlink()
    elif case == "garbage-record":
        meta.write_text("{not json")
    elif case == "garbage-io":
        io.write_text('{"a": 1}')
    elif case == "truncated-io":
        io.write_text(io.read_text()[:40])
    elif case == "io-of-another-key":
        io.write_text(other.with_suffix(".io.json").read_text())
    else:
        raise AssertionError(case)


CASES = ["truncated", "zero-byte", "garbage", "same-size-flip", "foreign", "foreign-with-record",
         "no-record", "garbage-record", "garbage-io", "truncated-io", "io-of-another-key"]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A cache holding two models that differ only in a constant (compiled
    once for the module): (cache, model path, model, its library, the other
    model's library)."""
    tmp = tmp_path_factory.mktemp("pristine")
    cache = tmp / "cache"
    path, model = write_model(tmp, 1.0)
    other_path, other_model = write_model(tmp, 5.0)
    first, err, rc = run_session(path, cache)
    other, _, _ = run_session(other_path, cache)
    assert rc == 0 and first.get("y") == expected(model), (first, err)
    assert other.get("y") == expected(other_model)
    return cache, path, model, Path(first["library"]), Path(other["library"])


@pytest.mark.parametrize("case", CASES)
def test_a_corrupt_entry_is_rebuilt_once_with_one_warning(tmp_path, pristine, case):
    cache0, path, model, so0, other0 = pristine
    cache = tmp_path / "cache"
    shutil.copytree(cache0, cache)          # (modes kept)
    so, other_so = (cache / p.relative_to(cache0) for p in (so0, other0))
    _corrupt(case, so, other_so)

    again, err, rc = run_session(path, cache)
    assert rc == 0, f"the session died (status {rc}): {err[-500:]}"
    assert again.get("y") == expected(model), (again, err)
    warned = warnings_in(err)
    assert len(warned) == 1, err
    assert str(so.with_suffix("")) in warned[0]
    # healed: the next session loads the entry without a word
    third, err, rc = run_session(path, cache)
    assert rc == 0 and third.get("y") == expected(model) and not warnings_in(err), err
    assert third["library"] == str(so)
    meta = json.loads(so.with_suffix(".meta.json").read_text())
    assert meta["key"] == so.stem and meta["size"] == so.stat().st_size
    assert not list(cache.rglob(".*")), "temp files left in the cache"


def test_a_cached_compile_error_that_is_garbage_is_recompiled(tmp_path):
    from onnx_mlir_py.backend.cache import CompileCache
    cache = tmp_path / "cache"
    path, model = write_model(tmp_path, 2.0)
    first, err, _ = run_session(path, cache)
    so = Path(first["library"])
    key = so.stem
    CompileCache(cache).remove(key)
    so.with_suffix(".err.json").write_text('{"key": "%s", "type": 3}' % key)
    again, err, rc = run_session(path, cache)
    assert rc == 0 and again.get("y") == expected(model), (again, err)
    assert len(warnings_in(err)) == 1 and ".err.json" in warnings_in(err)[0]
