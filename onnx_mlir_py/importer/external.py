"""External tensor data (``data_location: EXTERNAL``), checked before any
byte is read: the location must be a relative path to a regular file inside
the model's folder (no absolute path, no ``..``, no symlink leading out, no
NUL), ``offset``/``length`` must be non-negative integers within the file,
and the byte count must be what the tensor's dims and dtype need. Anything
else is a one-line ModelLoadError naming the tensor (and the node, for a
Constant's value). onnxruntime refuses the same files.
"""
from __future__ import annotations

import os

import onnx
from onnx import TensorProto

from onnx_mlir_py.errors import ModelLoadError

KEYS = ("location", "offset", "length", "checksum")


def _tensors(graph: onnx.GraphProto, where: str = ""):
    """(tensor, description) for every tensor of the graph and its subgraphs."""
    for t in graph.initializer:
        yield t, f"initializer '{t.name}'{where}"
    for n in graph.node:
        label = n.name or f"{n.op_type}:{n.output[0] if n.output else ''}"
        for a in n.attribute:
            what = f"node '{label}' ({n.op_type}) attribute '{a.name}'"
            if a.type == onnx.AttributeProto.TENSOR:
                yield a.t, what
            elif a.type == onnx.AttributeProto.TENSORS:
                for t in a.tensors:
                    yield t, what
            elif a.type == onnx.AttributeProto.GRAPH:
                yield from _tensors(a.g, f" (in {what})")
            elif a.type == onnx.AttributeProto.GRAPHS:
                for g in a.graphs:
                    yield from _tensors(g, f" (in {what})")


def has_external(model: onnx.ModelProto) -> bool:
    return any(t.data_location == TensorProto.EXTERNAL for t, _ in _tensors(model.graph))


def _nbytes(t: TensorProto) -> int | None:
    """Bytes the dims and dtype need (None: a dtype without a fixed size)."""
    try:
        bits = onnx.helper.tensor_dtype_to_np_dtype(t.data_type).itemsize * 8
    except (KeyError, ValueError, TypeError):
        return None
    if t.data_type in (TensorProto.STRING,):
        return None
    for name, b in (("INT4", 4), ("UINT4", 4), ("FLOAT4E2M1", 4), ("INT2", 2), ("UINT2", 2)):
        if t.data_type == getattr(TensorProto, name, -1):
            bits = b
    n = 1
    for d in t.dims:
        if d < 0:
            return None
        n *= d
    return (n * bits + 7) // 8


def _resolve(location: str, base: str, fail) -> str:
    if not location:
        fail("has no 'location'")
    if "\0" in location:
        fail(f"location {location!r} contains a NUL character")
    if os.path.isabs(location) or location.startswith(("\\", "/")) or \
            (len(location) > 1 and location[1] == ":"):
        fail(f"location '{location}' is an absolute path; it must be relative to the "
             "model's folder")
    if ".." in location.replace("\\", "/").split("/"):
        fail(f"location '{location}' contains '..'; it must stay inside the model's folder")
    root = os.path.realpath(base)
    path = os.path.realpath(os.path.join(root, location))
    if os.path.commonpath([root, path]) != root:
        fail(f"location '{location}' leads outside the model's folder (a symlink)")
    if not os.path.exists(path):
        fail(f"file '{location}' does not exist next to the model")
    if not os.path.isfile(path):
        fail(f"location '{location}' is not a regular file")
    return path


def _int_field(info: dict, key: str, fail) -> int | None:
    if key not in info:
        return None
    try:
        v = int(info[key])
    except ValueError:
        fail(f"'{key}' = {info[key]!r} is not an integer")
    if v < 0:
        fail(f"'{key}' = {v} is negative")
    return v


def load_external_data(model: onnx.ModelProto, base: str | None) -> None:
    """Read every external tensor's bytes into ``raw_data``, in place
    (``base``: the model's folder; None for a ModelProto given in memory,
    whose external tensors are refused: their folder is unknown)."""
    for t, what in _tensors(model.graph):
        if t.data_location != TensorProto.EXTERNAL:
            continue

        def fail(msg, what=what):
            raise ModelLoadError(f"{what}: external data: {msg}")
        if base is None:
            fail("the model was given in memory, so its folder is unknown; compile the "
                 "model file (or load it with load_external_data=True)")
        info = {}
        for e in t.external_data:
            if e.key not in KEYS:
                fail(f"unknown key '{e.key}' (expected {', '.join(KEYS)})")
            info[e.key] = e.value
        path = _resolve(info.get("location", ""), base, fail)
        offset = _int_field(info, "offset", fail) or 0
        length = _int_field(info, "length", fail)
        size = os.path.getsize(path)
        if offset > size:
            fail(f"offset {offset} is past the end of '{info['location']}' ({size} bytes)")
        if length is None:
            length = size - offset
        elif offset + length > size:
            fail(f"offset {offset} + length {length} is past the end of "
                 f"'{info['location']}' ({size} bytes)")
        need = _nbytes(t)
        if need is not None and length != need:
            fail(f"{length} bytes at offset {offset} of '{info['location']}', but dims "
                 f"{list(t.dims)} of {TensorProto.DataType.Name(t.data_type)} need {need}")
        if t.HasField("raw_data") or t.float_data or t.int32_data or t.int64_data:
            fail("the tensor also holds data in the model file")
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read(length)
        t.raw_data = data
        t.data_location = TensorProto.DEFAULT
        del t.external_data[:]
