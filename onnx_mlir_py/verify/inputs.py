"""The inputs ``onnx-mlir-py verify`` runs the model on.

Random (a fixed seed): floats from a standard normal, integers in [0, 10),
bools half true. A dynamic dim takes its size from ``--shape`` (``x:2x3,y:4``,
an input's name or index, then its dims), else from the other inputs that
share its ``dim_param``, else ``--dim`` (default 1).

Given: a folder in the layout of onnx's test data (``input_0.pb``,
``input_1.pb``, ... each a serialized ``TensorProto``, in the order of the
model's inputs), or an ``.npz`` keyed by input name (or ``arr_0``, ``arr_1``,
... by position, as ``numpy.savez(f, *arrays)`` writes them).
"""
from __future__ import annotations

import os
import re

import numpy as np
import onnx
from onnx import helper, numpy_helper

from onnx_mlir_py.errors import OnnxMlirError
from onnx_mlir_py.importer.model import real_inputs


class VerifyInputError(OnnxMlirError):
    """The inputs given to ``verify`` (or the options that shape them) are wrong."""


def parse_shapes(text: str | None) -> dict[str, list[int]]:
    """``"x:2x3,1:4"`` -> ``{"x": [2, 3], "1": [4]}`` (a rank-0 input: ``x:``)."""
    out: dict[str, list[int]] = {}
    for part in filter(None, (text or "").split(",")):
        name, sep, dims = part.rpartition(":")
        if not sep or not name:
            raise VerifyInputError(f"--shape: expected NAME:D0xD1..., got {part!r}")
        try:
            out[name] = [int(d) for d in dims.split("x")] if dims else []
        except ValueError:
            raise VerifyInputError(f"--shape: dims of {name!r} must be integers joined by "
                                   f"'x', got {dims!r}") from None
        if any(d < 0 for d in out[name]):
            raise VerifyInputError(f"--shape: dims of {name!r} must be >= 0, got {dims!r}")
    return out


def _dims(vi: onnx.ValueInfoProto) -> list | None:
    """Declared dims: int, a dim_param string, or None (unnamed); None if no shape."""
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None)
            for d in t.shape.dim]


def _np_dtype(vi: onnx.ValueInfoProto) -> np.dtype:
    if not vi.type.HasField("tensor_type"):
        raise VerifyInputError(f"input '{vi.name}' is not a tensor: give it with --inputs")
    try:
        return np.dtype(helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type))
    except Exception:
        raise VerifyInputError(f"input '{vi.name}': no numpy type for element type "
                               f"{vi.type.tensor_type.elem_type}") from None


def input_shapes(model: onnx.ModelProto, shapes: dict[str, list[int]], dim: int
                 ) -> dict[str, list[int]]:
    """The run-time shape of every input (see the module docstring)."""
    ins = real_inputs(model.graph)
    by_key = {}
    for k, vi in enumerate(ins):
        by_key[vi.name] = by_key[str(k)] = vi
    unknown = [k for k in shapes if k not in by_key]
    if unknown:
        raise VerifyInputError(f"--shape: no input {unknown[0]!r} (the model's inputs: "
                               f"{[vi.name for vi in ins]})")
    given = {by_key[k].name: v for k, v in shapes.items()}
    params: dict[str, int] = {}          # dim_param -> size, learnt from --shape
    out: dict[str, list[int]] = {}
    for vi in ins:
        declared = _dims(vi)
        if vi.name in given:
            want = given[vi.name]
            if declared is not None:
                if len(want) != len(declared):
                    raise VerifyInputError(f"--shape: input '{vi.name}' has rank "
                                           f"{len(declared)}, got {len(want)} dims")
                for i, (d, w) in enumerate(zip(declared, want)):
                    if isinstance(d, int) and d != w:
                        raise VerifyInputError(f"--shape: input '{vi.name}' dim {i} is {d} "
                                               f"in the model, got {w}")
                    if isinstance(d, str):
                        params.setdefault(d, w)
            out[vi.name] = list(want)
    for vi in ins:
        if vi.name in out:
            continue
        declared = _dims(vi)
        if declared is None:
            raise VerifyInputError(f"input '{vi.name}' has no declared shape: give it with "
                                   f"--shape {vi.name}:D0xD1...")
        out[vi.name] = [d if isinstance(d, int) else params.get(d, dim) for d in declared]
    return out


def random_inputs(model: onnx.ModelProto, shapes: dict[str, list[int]] | None = None,
                  dim: int = 1, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    sizes = input_shapes(model, shapes or {}, dim)
    out = {}
    for vi in real_inputs(model.graph):
        dt, shape = _np_dtype(vi), sizes[vi.name]
        if dt == np.bool_:
            out[vi.name] = rng.random(shape) < 0.5
        elif dt.kind in "iu":
            out[vi.name] = rng.integers(0, 10, shape).astype(dt)
        elif dt.kind == "f":
            out[vi.name] = rng.standard_normal(shape).astype(dt)
        else:
            raise VerifyInputError(f"input '{vi.name}': cannot make random {dt} values; "
                                   "give the inputs with --inputs")
    return out


def load_inputs(path: str, model: onnx.ModelProto) -> dict[str, np.ndarray]:
    """A folder of ``input_<k>.pb`` or an ``.npz`` -> {input name: array}."""
    names = [vi.name for vi in real_inputs(model.graph)]
    if os.path.isdir(path):
        arrays = _load_pb_dir(path)
        keyed = False
    elif os.path.isfile(path):
        try:
            with np.load(path, allow_pickle=False) as z:
                data = {k: z[k] for k in z.files}
        except Exception as e:
            raise VerifyInputError(f"--inputs: cannot read '{path}' as an .npz: "
                                   f"{str(e).splitlines()[0] if str(e) else type(e).__name__}"
                                   ) from None
        keyed = not all(re.fullmatch(r"arr_\d+", k) for k in data)
        if keyed:
            missing = [n for n in names if n not in data]
            if missing:
                raise VerifyInputError(f"--inputs: '{path}' lacks input {missing[0]!r}")
            extra = [k for k in data if k not in names]
            if extra:
                raise VerifyInputError(f"--inputs: '{path}' has an array {extra[0]!r} that is "
                                       f"not an input of the model (inputs: {names})")
            return data
        arrays = [data[f"arr_{i}"] for i in range(len(data))]
    else:
        raise VerifyInputError(f"--inputs: no such file or folder '{path}'")
    if len(arrays) != len(names):
        raise VerifyInputError(f"--inputs: '{path}' holds {len(arrays)} input(s), the model "
                               f"has {len(names)} ({names})")
    return dict(zip(names, arrays))


def _load_pb_dir(path: str) -> list[np.ndarray]:
    files = {}
    for f in os.listdir(path):
        m = re.fullmatch(r"input_(\d+)\.pb", f)
        if m:
            files[int(m.group(1))] = os.path.join(path, f)
    if sorted(files) != list(range(len(files))):
        raise VerifyInputError(f"--inputs: '{path}' must hold input_0.pb, input_1.pb, ... "
                               f"(found {sorted(files) or 'none'})")
    out = []
    for k in range(len(files)):
        t = onnx.TensorProto()
        try:
            with open(files[k], "rb") as f:
                t.ParseFromString(f.read())
            out.append(numpy_helper.to_array(t))
        except Exception as e:
            raise VerifyInputError(f"--inputs: cannot read '{files[k]}' as a TensorProto: "
                                   f"{str(e).splitlines()[0] if str(e) else type(e).__name__}"
                                   ) from None
    return out
