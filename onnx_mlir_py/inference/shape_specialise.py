"""Libraries specialised to the input shapes of a run, for a model whose
generic (dynamic-shape) compile needs them.

A model whose generic compile is refused with ``NeedsInputShapesError`` (a
rank known only at run time: torch traces ``if x.shape[-1] == 1: x =
x.squeeze(-1)`` into an If whose branches yield different ranks) runs in an
``InferenceSession`` through :class:`ShapeDispatch`: each run's input shapes
(the signature) pick a library compiled for exactly those shapes, where the
If's condition folds at compile time (``passes/fold_constants.py``) and the
branch not taken is dropped. The specialised model is the model with every
input dim set; the compile cache key hashes it (with the compile options),
as for free-dimension overrides, so each signature has its own cached
library and a later session with the same shapes loads it. A run whose shapes
have no library yet compiles one (under the session's lock), with a one-line
:class:`~onnx_mlir_py.errors.ShapesSpecialisedWarning` the first time the
session uses that signature; a library never runs inputs of other shapes
(it is chosen by them, and its own input checks refuse other dims).
"""
from __future__ import annotations

import warnings

import numpy as np

from onnx_mlir_py.errors import NeedsInputShapesError, ShapesSpecialisedWarning

CLI_SYNTAX = "--shapeInformation INDEX:D1xD2x...[,INDEX:...]"
HINT = "the generic compile needs concrete input shapes"


def _dims(vi) -> list | None:
    """The declared dims of a graph input (int, name or None), None when it
    is not a tensor of known rank."""
    if not (vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape")):
        return None
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
            for d in vi.type.tensor_type.shape.dim]


def shapes_hint(model, cli: bool) -> str:
    """How to pass concrete input shapes for ``model`` (a path or a
    ModelProto): the CLI's ``--shapeInformation`` (``cli``) or
    ``compile()``'s ``shape_information``, with this model's inputs (a
    dynamic dim shown as 1, its name said)."""
    from onnx_mlir_py.importer.model import real_inputs
    try:
        import onnx
        m = model if hasattr(model, "graph") else onnx.load(model, load_external_data=False)
        inputs = [(vi.name, _dims(vi)) for vi in real_inputs(m.graph)]
    except Exception:  # noqa: BLE001 - a TensorFlow model, an unreadable file: the syntax only
        inputs = []
    given = [(i, name, dims) for i, (name, dims) in enumerate(inputs) if dims]
    free = [f"{d if isinstance(d, str) else '?'} of '{name}'" for _, name, dims in given
            for d in dims if not isinstance(d, int)]
    if cli:
        spec = ",".join(f"{i}:" + "x".join(str(d) if isinstance(d, int) else "1" for d in dims)
                        for i, _, dims in given)
        how = f"pass them with {CLI_SYNTAX}" + (f", e.g. --shapeInformation {spec}"
                                                 if spec else "")
    else:
        spec = ", ".join(f"{i}: [" + ", ".join(str(d) if isinstance(d, int) else "1"
                                              for d in dims) + "]" for i, _, dims in given)
        how = "pass them as shape_information={INDEX: [dims]}" + (
            f", e.g. shape_information={{{spec}}}" if spec else "")
    return (f"{HINT}: {how}"
            + (f" (the dynamic dims {', '.join(free)} set to the sizes of a run)"
               if free else "") + "; InferenceSession does this at each run's shapes")


def with_hint(e: NeedsInputShapesError, model, cli: bool) -> NeedsInputShapesError:
    """``e`` with :func:`shapes_hint` appended (one line)."""
    return NeedsInputShapesError(f"{e}; {shapes_hint(model, cli)}")


def specialised_data(data: bytes, shapes: list) -> bytes:
    """The model ``data`` with each tensor input's dims set to ``shapes``
    (one tuple per real input; None: not a tensor, left as declared)."""
    from onnx_mlir_py.importer.model import real_inputs
    from onnx_mlir_py.inference.compiled import _parse
    m = _parse(data)
    for vi, shape in zip(real_inputs(m.graph), shapes):
        if shape is None or not vi.type.HasField("tensor_type"):
            continue
        dims = vi.type.tensor_type.shape.dim
        del dims[:]
        for d in shape:
            dims.add().dim_value = int(d)
    return m.SerializeToString(deterministic=True)


def signature(arrays) -> tuple:
    """The input shapes of a run (None for a sequence / optional input)."""
    return tuple(tuple(int(d) for d in a.shape) if isinstance(a, np.ndarray) else None
                 for a in arrays)


def _shapes_text(names: list[str], sig: tuple) -> str:
    return ", ".join(f"{n} [{', '.join(map(str, s))}]" for n, s in zip(names, sig)
                     if s is not None)


def dispatch(model, free_dims: dict | None, reason: str, path: str | None, compile_for,
             load) -> tuple[dict, "ShapeDispatch"]:
    """(the description of ``model`` (with its free-dimension overrides), its
    :class:`ShapeDispatch`) for a session whose generic compile was refused
    for ``reason``; ``compile_for(data)`` is the library path of model bytes,
    ``load(path)`` its ExecutionSession."""
    import os

    from onnx_mlir_py.inference.compiled import _parse, model_data, specialised
    from onnx_mlir_py.inference.model_info import describe
    data, parsed = specialised(model_data(model), free_dims)
    info = describe(parsed, specialised=True) if parsed is not None else describe(_parse(data))
    name = os.path.basename(path) if path else repr(info["meta"]["graph_name"] or "<bytes>")
    reason = reason.split(f"; {HINT}")[0]       # compile()'s hint: not for a session
    return info, ShapeDispatch(data, [e["name"] for e in info["inputs"]], name, reason,
                               compile_for, load)


class ShapeDispatch:
    """Stands for the session's ``ExecutionSession``: runs each input
    signature on its own specialised library (compiled on first use).
    ``compile_for(data) -> library path`` compiles (or loads from the cache)
    the specialised model; ``load(path)`` makes its ExecutionSession."""

    def __init__(self, data: bytes, names: list[str], model_name: str, reason: str,
                 compile_for, load):
        self._data, self._names, self._model, self._reason = data, names, model_name, reason
        self._compile_for, self._load = compile_for, load
        self._libs: dict[tuple, object] = {}
        self._paths: dict[tuple, str] = {}
        self._last, self._last_path = None, ""

    def session_for(self, arrays):
        sig = signature(arrays)
        sess = self._libs.get(sig)
        if sess is None:
            path = self._compile_for(specialised_data(self._data, list(sig)))
            sess = self._libs[sig] = self._load(path)
            self._paths[sig] = str(path)
            warnings.warn(ShapesSpecialisedWarning(
                f"model {self._model}: compiled for input shapes "
                f"{_shapes_text(self._names, sig)}: the generic compile needs them because "
                f"{self._reason}"), stacklevel=5)
        self._last, self._last_path = sess, self._paths[sig]
        return sess

    @property
    def last_library(self) -> str:
        """The library of the last run ("" before the first)."""
        return self._last_path

    @property
    def library_paths(self) -> dict[tuple, str]:
        """Input signature -> the library compiled for it (so far)."""
        return dict(self._paths)

    # -- the ExecutionSession interface the session uses ----------------------
    @property
    def can_run_into(self) -> bool:
        return False        # the library is known only once a run's shapes are

    def run(self, arrays) -> list:
        return self.session_for(arrays).run(arrays)

    def run_into(self, arrays, out_alloc) -> list:
        return self.session_for(arrays).run_into(arrays, out_alloc)

    def end_profiling(self, path) -> str:
        """The profile of the library of the last run."""
        if self._last is None:
            from onnx_mlir_py.runtime.errors import ModelRunError
            raise ModelRunError("no run yet: the model is compiled for each run's input shapes")
        return self._last.end_profiling(path)

    def reset_profile(self) -> None:
        if self._last is not None:
            self._last.reset_profile()
