"""Compile a model to a cached ``.so``, in a child process or in-process.

``compile_cached(model, options)`` returns the path of the library for
(model, options), compiling it only when the cache has no entry. Isolated
compiles (the default) run in :func:`.isolate.shared_worker`; errors come
back as the same ``OnnxMlirError`` subclass, a dead or hung child as
:class:`CompilerCrashError` / :class:`CompileTimeoutError` naming the model.
Only compile errors of the model are cached; a full disk, a killed tool or
out of memory is an ``EnvironmentFailure`` (not cached).
"""
from __future__ import annotations

import os
from pathlib import Path

import onnx

from onnx_mlir_py.errors import EnvironmentFailure, OnnxMlirError, environment_failure
from onnx_mlir_py.backend.cache import CompileCache, cache_key
from onnx_mlir_py.backend.cache_files import unlink_quiet
from onnx_mlir_py.backend.errors import (CompilerCrashError, CompileTimeoutError, error_from_dict,
                     error_to_dict)

OPTION_NAMES = ("opt_level", "mcpu", "march", "shape_information", "profile", "precision",
                "host")
# "host": part of the cache key only, not a compile option: the build
# machine's ISA level and the extensions the -O3 kernels use
# (inference/session.py), for a -O3 compile for the host by default
KEY_ONLY = ("host",)


def normalize_options(options: dict) -> dict:
    bad = sorted(set(options) - set(OPTION_NAMES))
    if bad:
        raise TypeError(f"unknown compile option(s) {bad}; known: {list(OPTION_NAMES)}")
    # profile=False, precision="fp32": the default build, left out, so its key stays the same
    out = {k: v for k, v in options.items() if v is not None and not (k == "profile" and not v)
           and not (k == "precision" and v == "fp32")}
    if "shape_information" in out:
        si = out["shape_information"]
        if isinstance(si, str):
            from onnx_mlir_py.importer.model import parse_shape_information
            si = parse_shape_information(si)
        out["shape_information"] = {int(k): [None if d is None or d < 0 else int(d) for d in v]
                                    for k, v in si.items()}
        if not out["shape_information"]:
            del out["shape_information"]
    return out


def model_bytes(model) -> bytes:
    if isinstance(model, (bytes, bytearray)):
        return bytes(model)
    if isinstance(model, (str, os.PathLike)):   # onnx.load also reads external data
        return onnx.load(os.fspath(model)).SerializeToString(deterministic=True)
    if isinstance(model, onnx.ModelProto):
        return model.SerializeToString(deterministic=True)
    raise TypeError(f"expected an onnx.ModelProto, bytes or a path, got {type(model).__name__}")


def build(data: bytes, options: dict, key: str, cache_dir: str) -> str:
    """Compile ``data`` into the cache entry ``key`` (runs in the child).
    Compile errors are stored in the cache; failures of the environment
    (``EnvironmentFailure``, an ``OSError`` or ``MemoryError``) are not."""
    from onnx_mlir_py import compile as compile_model
    cache = CompileCache(cache_dir)
    try:
        tmp = cache.temp_library(key)
    except OSError as e:
        raise environment_failure(e, f"cannot write to the compile cache {cache_dir}") from None
    kept = None
    try:
        model = onnx.load_from_string(data)
        try:
            compile_model(model, tmp, **{k: v for k, v in options.items() if k not in KEY_ONLY})
        except EnvironmentFailure:
            raise
        except OnnxMlirError as e:
            cache.store_error(key, error_to_dict(e))
            raise
        # the cache entry, or (sources edited mid-run: not cached) tmp itself
        kept = cache.store_library(key, tmp)
        return str(kept)
    except (OSError, MemoryError) as e:
        raise environment_failure(e, f"compiling into the cache {cache_dir}") from None
    finally:
        if kept != tmp:
            unlink_quiet(tmp)


def compile_cached(model, options: dict | None = None, *, name: str | None = None,
                   in_process: bool = False, timeout: float | None = None,
                   cache: CompileCache | None = None, use_cache: bool = True) -> Path:
    """Path of the compiled library of ``model`` (ModelProto, bytes or path).

    ``in_process``: compile in this process (faster, but an MLIR abort ends
    the process). ``use_cache=False`` recompiles even when an entry exists.
    One compile per key at a time (threads and processes): a caller that
    waited for another's compile finds its entry.
    """
    options = normalize_options(dict(options or {}))
    data = model_bytes(model)
    cache = cache or CompileCache()
    key = cache_key(data, options)
    if use_cache:
        hit = _cached(cache, key)
        if hit is not None:
            return hit
    with cache.locked(key):
        if use_cache:       # re-check: compiled by the holder of the lock we waited for
            hit = _cached(cache, key)
            if hit is not None:
                return hit
        return _compile(data, options, key, cache, name, in_process, timeout)


def _cached(cache: CompileCache, key: str) -> Path | None:
    """The checked library of ``key``; raises its cached compile error."""
    hit = cache.lookup(key)
    if isinstance(hit, dict):
        raise error_from_dict(hit)
    return hit


def _remove_dead_placeholders(cache: CompileCache, key: str) -> None:
    """(Under the key's lock: nobody else compiles ``key``.) The library
    placeholders of ``key`` (``.<key>.*.so``) and their link outputs
    (``.so.tmp<pid>``) left by a compile that could not clean up: a worker
    killed (crash, timeout) or a process killed during an in-process compile."""
    shard = cache.library_path(key).parent
    for pattern in (f".{key}.*.so", f".{key}.*.so.tmp*"):
        for p in shard.glob(pattern):
            unlink_quiet(p)


def _compile(data: bytes, options: dict, key: str, cache: CompileCache, name: str | None,
             in_process: bool, timeout: float | None) -> Path:
    _remove_dead_placeholders(cache, key)
    if in_process:
        try:
            return Path(build(data, options, key, str(cache.dir)))
        except OnnxMlirError:
            raise
        except Exception as e:  # noqa: BLE001 - same error as from the child
            raise error_from_dict(error_to_dict(e)) from e
    from onnx_mlir_py.backend.isolate import shared_worker
    status, value = shared_worker().call(build, (data, options, key, str(cache.dir)), timeout)
    if status == "ok":
        return Path(value)
    if status == "error":
        raise error_from_dict(value)
    what = f"model '{name or _model_name(data)}'"
    if status == "timeout":
        raise CompileTimeoutError(f"compiling {what}: {value}")
    raise CompilerCrashError(f"compiling {what} crashed the compiler process ({value})")


def _model_name(data: bytes) -> str:
    try:
        m = onnx.ModelProto()
        m.ParseFromString(data)
        return m.graph.name or "?"
    except Exception:  # noqa: BLE001
        return "?"
