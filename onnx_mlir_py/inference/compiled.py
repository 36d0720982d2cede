"""The compiled library of a session: found in the compile cache of
:mod:`onnx_mlir_py.backend.cache` (key: model bytes + compile options +
compiler fingerprint), compiled there on first use.

Next to each library the session keeps ``<key>.io.json`` (inputs, outputs,
model metadata; checked as the library is, rewritten when it is not valid), so a later session on the same model (another process
too) hashes the model bytes and loads the ``.so``: no onnx import, no
protobuf parse, no compiler; for an unchanged model file not even the hash
(:mod:`.path_index` maps the file to its key). A model with external data is keyed on its
bytes with the external tensors read in (the files next to it are part of
the model).
"""
from __future__ import annotations

import os
from pathlib import Path

from onnx_mlir_py.backend.cache import CompileCache, cache_key
from onnx_mlir_py.inference.errors import InvalidProtobuf, NoSuchFile


def read_model(path: str) -> tuple[bytes, bool]:
    """(the bytes that key and compile the model file, whether external
    tensors were read into them)."""
    if not os.path.isfile(path):
        raise NoSuchFile(f"Load model from {path} failed: file doesn't exist")
    with open(path, "rb") as f:
        raw = f.read()
    # external tensors name their file under the key "location": without
    # those bytes the model certainly has none
    if b"location" not in raw:
        return raw, False
    model = _parse(raw)
    from onnx_mlir_py.importer.external import has_external, load_external_data
    if not has_external(model):
        return raw, False
    load_external_data(model, os.path.dirname(os.path.abspath(path)))
    return model.SerializeToString(deterministic=True), True


def model_data(model) -> bytes:
    """The bytes that key and compile ``model`` (a path, bytes, or an
    ``onnx.ModelProto``)."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model)
    if isinstance(model, (str, os.PathLike)):
        return read_model(os.fspath(model))[0]
    if hasattr(model, "SerializeToString"):
        return model.SerializeToString(deterministic=True)
    raise TypeError("InferenceSession takes a model path or its bytes, got "
                    f"{type(model).__name__}")


def _parse(data: bytes):
    import onnx
    m = onnx.ModelProto()
    try:
        m.ParseFromString(data)
    except Exception as e:  # noqa: BLE001 - protobuf's DecodeError and friends
        raise InvalidProtobuf(f"Failed to load model because protobuf parsing failed: "
                              f"{e}") from None
    if not m.HasField("graph"):
        raise InvalidProtobuf("Failed to load model: the bytes hold no ONNX graph")
    return m


def _info_problem(info: dict) -> str | None:
    """Why a cached model description is not one :func:`.model_info.describe`
    wrote (None: it is)."""
    def args_ok(v):
        return isinstance(v, list) and all(
            isinstance(a, dict) and isinstance(a.get("name"), str) and
            isinstance(a.get("type"), str) and isinstance(a.get("shape"), list) for a in v)
    if not (args_ok(info.get("inputs")) and args_ok(info.get("outputs")) and
            isinstance(info.get("meta"), dict)):
        return "it is not a model description (inputs, outputs, meta)"
    return None


def _cached(cache: CompileCache, key: str) -> tuple[Path, dict] | None:
    """The cached library and model description of ``key``; raises a cached
    compile error; None when not (fully) cached."""
    hit = cache.lookup(key)
    if isinstance(hit, dict):
        from onnx_mlir_py.backend.errors import error_from_dict
        raise error_from_dict(hit)
    if isinstance(hit, Path):
        info = cache.read_record(key, "io", _info_problem)
        return (hit, info) if info is not None else None
    return None


def specialised(data: bytes, free_dims: dict | None):
    """(the model bytes with the free-dimension overrides ``free_dims``
    (``{"name": {...}, "denotation": {...}}``, see :mod:`.free_dims`) applied,
    the specialised model parsed, or None when no dim changed)."""
    if not free_dims:
        return data, None
    from onnx_mlir_py.inference.free_dims import specialise
    parsed = _parse(data)
    if not specialise(parsed, free_dims.get("name", {}), free_dims.get("denotation", {})):
        return data, None
    return parsed.SerializeToString(deterministic=True), parsed


def library(model, options: dict, cache: CompileCache, *, free_dims: dict | None = None,
            in_process: bool = False, timeout: float | None = None) -> tuple[Path, dict]:
    """(path of the compiled library, description of the model, see
    :func:`.model_info.describe`) of ``model`` (a path, bytes or a
    ModelProto), specialised to the free-dimension overrides ``free_dims``
    (see :func:`specialised`: the key hashes the specialised model, the path
    index the overrides); compiles on a cache miss. Compile errors raise the
    compiler's ``OnnxMlirError`` (cached errors too)."""
    from onnx_mlir_py.inference import path_index
    index_options = {**options, "free_dims": free_dims} if free_dims else options
    st = None
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        try:
            st = os.stat(path)
        except OSError:
            st = None
        if st is None or not os.path.isfile(path):
            raise NoSuchFile(f"Load model from {path} failed: file doesn't exist")
        key = path_index.lookup(cache, path, st, index_options)
        found = _cached(cache, key) if key else None
        if found:
            return found
    data, external = read_model(path) if st is not None else (model_data(model), False)
    data, parsed = specialised(data, free_dims)
    key = cache_key(data, options)
    found = _cached(cache, key)
    if not found:
        from onnx_mlir_py.inference.model_info import describe
        info = describe(parsed, specialised=True) if parsed is not None else \
            describe(_parse(data))
        from onnx_mlir_py.backend.compile import compile_cached
        so = compile_cached(data, options, cache=cache, in_process=in_process, timeout=timeout,
                            name=info["meta"]["graph_name"] or None)
        if so != cache.library_path(key):           # a build by edited sources: not stored
            return so, info
        cache.write_record(key, "io", info)
        found = so, info
    if st is not None and not external:
        path_index.record(cache, path, st, index_options, key)
    return found


def _onnx_ir(data: bytes, opt_level: int):
    """(the model in the ONNX dialect after the ONNX-level passes that
    ``opt_level`` runs (shape inference, folding, and from -O2 the graph
    rewrites), the ModelProto it came from)."""
    import onnx

    from onnx_mlir_py.compiler import import_onnx
    from onnx_mlir_py.options import Options
    from onnx_mlir_py.passes.pipeline import run_passes, to_onnx_ir
    from onnx_mlir_py.timings import Timings
    timings = Timings()
    opts = Options(emit="EmitONNXIR", opt_level=opt_level)
    src = onnx.load_from_string(data)
    module = import_onnx(src, opts, timings)
    to_onnx_ir(module, timings)
    if opt_level >= 2:
        run_passes(module, ["optimize-onnx"], timings)
    return module, src


def write_onnx_ir(data: bytes, opt_level: int, path: str) -> str | None:
    """``SessionOptions.optimized_model_filepath`` (runs in the compiler
    child process): a path ending in ``.onnx`` gets the graph after the
    ONNX-level passes as an ONNX model (:mod:`.onnx_export`), or, when it
    cannot be exported, ``data`` (the reason is returned); any other path
    the ONNX-dialect MLIR text."""
    module, src = _onnx_ir(data, opt_level)
    if os.fspath(path).lower().endswith(".onnx"):
        from onnx_mlir_py.inference.onnx_export import export
        model, why = export(module)
        if model is not None:       # the input's metadata
            for k in ("producer_name", "producer_version", "domain", "model_version",
                      "doc_string"):
                setattr(model, k, getattr(src, k))
            model.metadata_props.extend(src.metadata_props)
        with open(path, "wb") as f:
            f.write(data if model is None else model.SerializeToString())
        return why
    from onnx_mlir_py.compiler import print_module
    with open(path, "w") as f:
        print_module(module, f, elide=False)
    return None


def write_optimized_model(data: bytes, opt_level: int, path: str, *, in_process: bool = False,
                          timeout: float | None = None) -> None:
    """``SessionOptions.optimized_model_filepath`` (see :func:`write_onnx_ir`;
    ``data``: the model the session compiled, with its free-dimension
    overrides). An ONNX file that holds the input model because the
    optimized graph could not be exported is said in an ``OnnxMlirWarning``."""
    if in_process:
        why = write_onnx_ir(data, opt_level, path)
    else:
        from onnx_mlir_py.backend.errors import CompilerCrashError, error_from_dict
        from onnx_mlir_py.backend.isolate import shared_worker
        status, why = shared_worker().call(write_onnx_ir, (data, opt_level, os.fspath(path)),
                                           timeout)
        if status == "error":
            raise error_from_dict(why)
        if status != "ok":
            raise CompilerCrashError(f"writing the optimized model {path}: {status}: {why}")
    if why:
        import warnings

        from onnx_mlir_py.errors import OnnxMlirWarning
        warnings.warn(OnnxMlirWarning(f"optimized_model_filepath {path}: the input model was "
                                      f"written (the optimized graph is not exportable: {why})"),
                      stacklevel=3)
