"""Scoring on Ray Data: compile once in the driver, score on every worker.

    import ray
    from onnx_mlir_py.integrations.ray import OnnxScorer, compile_for_ray

    ray.init()
    model = compile_for_ray("model.onnx")           # compiles here, once
    ds = ray.data.from_items([{"x": row} for row in rows])
    scored = ds.map_batches(OnnxScorer, fn_constructor_kwargs={"model": model},
                            batch_size=256, batch_format="numpy", concurrency=2)

:func:`compile_for_ray` compiles the model in the driver (through
``InferenceSession``, so into the compile cache) and puts the model bytes,
the compiled ``.so`` and its description into Ray's object store.
:class:`OnnxScorer` (a ``map_batches`` callable class: one instance per Ray
actor) writes that entry into a private compile cache of its own and opens
an ``InferenceSession`` on it: a cache hit, never a compile. A worker whose
onnx-mlir-py, onnx, MLIR bindings or CPU ISA level differ from the driver's
(so that its cache key differs) is refused with one line instead of
compiling. Each batch (a dict of numpy columns) is scored by
``InferenceSession.run``; the outputs are added to the batch as columns.

Needs the ``[ray]`` extra (``ray[data]``); models whose dims must be fixed
per run (compiled for each run's input shapes) are refused.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from pathlib import Path

FORMAT = 1      # the layout of the shipped dict


def _options():
    """The compile options an ``InferenceSession`` with default options uses
    on this machine (they, the compiler fingerprint and the model make the
    cache key)."""
    from onnx_mlir_py.inference.options import SessionOptions
    from onnx_mlir_py.inference.session import _compile_options
    return _compile_options(SessionOptions(), {})


def package(model, *, cache_dir: str | os.PathLike | None = None) -> dict:
    """Compile ``model`` (a path, bytes or ``onnx.ModelProto``) here, once,
    and return what a worker needs to score it without compiling: the model
    bytes, the cache key, the library bytes and the model's description."""
    from onnx_mlir_py.backend.cache import CompileCache, cache_key
    from onnx_mlir_py.inference import compiled
    from onnx_mlir_py.inference.session import InferenceSession
    data = compiled.model_data(model)
    sess = InferenceSession(data, cache_dir=cache_dir)
    key = cache_key(data, _options())
    cache = CompileCache(cache_dir)
    if not sess._library or Path(sess.library_path) != cache.library_path(key):
        raise ValueError("compile_for_ray: the model has no single compiled library (it is "
                         "compiled for each run's input shapes, or by edited compiler "
                         "sources): give its inputs fixed or symbolic dims")
    info = cache.read_record(key, "io")
    if info is None:
        raise ValueError(f"compile_for_ray: the compile cache {cache.dir} has no description "
                         f"of the compiled model (entry {key})")
    return {"format": FORMAT, "model": data, "key": key,
            "library": Path(sess.library_path).read_bytes(), "io": info}


def compile_for_ray(model, *, cache_dir: str | os.PathLike | None = None):
    """:func:`package` put into Ray's object store (``ray.init`` first): the
    ``ObjectRef`` to hand to :class:`OnnxScorer` as its ``model``."""
    import ray
    return ray.put(package(model, cache_dir=cache_dir))


def install(pkg: dict, cache_dir: str | os.PathLike) -> str:
    """Write the shipped entry ``pkg`` into the compile cache ``cache_dir``
    and return its key; refuses (one line) when this process would key the
    model differently from the driver (and so compile it again)."""
    from onnx_mlir_py.backend.cache import CompileCache, cache_key
    if not isinstance(pkg, dict) or pkg.get("format") != FORMAT:
        raise ValueError("OnnxScorer: model must be what compile_for_ray returned")
    key = cache_key(pkg["model"], _options())
    if key != pkg["key"]:
        raise RuntimeError(f"OnnxScorer on {os.uname().nodename}: this worker's compile key "
                           f"({key[:12]}) differs from the driver's ({pkg['key'][:12]}): "
                           f"another onnx-mlir-py / onnx / MLIR version or CPU ISA level; "
                           f"install the same on every node")
    cache = CompileCache(cache_dir)
    with cache.locked(key):
        built = cache.temp_library(key)
        built.write_bytes(pkg["library"])
        cache.store_library(key, built)
        cache.write_record(key, "io", pkg["io"], quiet=False)
    if not isinstance(cache.lookup(key), Path):     # else the session would compile
        raise RuntimeError(f"OnnxScorer: the shipped library did not install into {cache.dir} "
                           f"(compiler sources edited since this process started?)")
    return key


class OnnxScorer:
    """A Ray Data ``map_batches`` callable class: ``model`` is what
    :func:`compile_for_ray` returned (an ``ObjectRef``, or the dict of
    :func:`package`); ``columns`` maps a model input to the batch column
    that feeds it (default: the column of the same name); ``output_names``
    picks outputs (default: all); ``intra_op_num_threads``: the threads of
    each actor's session (default 1: Ray runs one actor per CPU)."""

    def __init__(self, model, columns: dict | None = None, output_names: list | None = None,
                 intra_op_num_threads: int = 1):
        from onnx_mlir_py.inference.options import SessionOptions
        from onnx_mlir_py.inference.session import InferenceSession
        if type(model).__name__ == "ObjectRef":
            import ray
            model = ray.get(model)
        self._dir = tempfile.mkdtemp(prefix="onnx-mlir-py-ray-")
        self._cleanup = weakref.finalize(self, shutil.rmtree, self._dir, True)
        install(model, self._dir)                       # the session below is a cache hit
        so = SessionOptions()
        so.intra_op_num_threads = intra_op_num_threads
        self.session = InferenceSession(model["model"], so, cache_dir=self._dir)
        self._columns = {i.name: (columns or {}).get(i.name, i.name)
                         for i in self.session.get_inputs()}
        self._outputs = list(output_names) if output_names else \
            [o.name for o in self.session.get_outputs()]

    def __call__(self, batch: dict) -> dict:
        missing = [c for c in self._columns.values() if c not in batch]
        if missing:
            raise KeyError(f"OnnxScorer: the batch has no column {missing[0]!r} (columns: "
                           f"{sorted(batch)}; map model inputs to columns with columns=...)")
        feeds = {name: batch[col] for name, col in self._columns.items()}
        outs = self.session.run(self._outputs, feeds)
        return {**batch, **dict(zip(self._outputs, outs))}
