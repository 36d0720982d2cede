"""Parse a binary model file with its large weights read once (#29).

Parsing a ModelProto copies every ``raw_data`` byte into protobuf's memory,
and reading ``TensorProto.raw_data`` copies it again into a ``bytes``
(ResNet-50: 2 x 100 MB, ~50 ms of CPU each with the page faults). Here the
top-level graph's large plain initializers (``raw_data`` only, a numeric
type, more data than ``model.INFERENCE_DATA_LIMIT``: the ones that reach
``onnx.shape_inference`` without their data anyway) are cut out of the
protobuf bytes before the parse; their data is copied once, from the
memory-mapped file into a ``bytes`` per tensor, kept by name
(``weights``) for the importer (``nodes.GraphImporter``).

Only a file of the plain layout is parsed this way: one ``graph`` field,
top-level initializers with unique names, each cut one with exactly one
``raw_data``, one UTF-8 ``name``, non-negative ``dims`` and no other data
field. Anything else (and any wire-format error) returns None and the
caller parses the whole file as before, so protobuf reports a bad file
with the same message.
"""
from __future__ import annotations

import onnx

_T = onnx.TensorProto
_F = {f.name: f.number for f in _T.DESCRIPTOR.fields}
_GRAPH = onnx.ModelProto.DESCRIPTOR.fields_by_name["graph"].number
_INIT = onnx.GraphProto.DESCRIPTOR.fields_by_name["initializer"].number
# a tensor with one of these is parsed as it is (external data, typed data, a segment)
_OTHER_DATA = {_F[n] for n in ("segment", "float_data", "int32_data", "string_data",
                               "int64_data", "double_data", "uint64_data", "external_data",
                               "data_location")}
# the types whose raw_data the importer reads as numbers (attributes.tensor_attr)
_NUMERIC = {_T.FLOAT, _T.DOUBLE, _T.INT64, _T.INT32, _T.INT16, _T.INT8, _T.UINT8, _T.UINT16,
            _T.UINT32, _T.UINT64, _T.FLOAT16, _T.BFLOAT16, _T.BOOL}
_LEN, _VARINT = 2, 0


class _Layout(Exception):
    """Not the plain layout (or not valid protobuf): parse the whole file."""


def _varint(b, i: int, end: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if i >= end or shift > 63:
            raise _Layout
        c = b[i]
        i += 1
        value |= (c & 0x7F) << shift
        if c < 0x80:
            return value, i
        shift += 7


def _fields(b, i: int, end: int):
    """(field number, wire type, tag offset, payload start, payload end) of
    each field of the message in ``b[i:end]``."""
    while i < end:
        at = i
        tag, i = _varint(b, i, end)
        number, wire = tag >> 3, tag & 7
        start = i
        if wire == _VARINT:
            _, i = _varint(b, i, end)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == _LEN:
            n, start = _varint(b, i, end)
            i = start + n
        else:                       # groups
            raise _Layout
        if number == 0 or i > end:
            raise _Layout
        yield number, wire, at, start, i


def _encode(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _dims(b, wire: int, start: int, end: int) -> list[int]:
    if wire == _VARINT:
        return [_signed(_varint(b, start, end)[0])]
    if wire != _LEN:
        raise _Layout
    dims, i = [], start
    while i < end:
        v, i = _varint(b, i, end)
        dims.append(_signed(v))
    return dims


def _cut(b, start: int, end: int, min_size: int):
    """(name, raw_data start, end, raw_data field's offset and end) of the
    initializer in ``b[start:end]`` if its data is to be cut out, else
    (name or None, None...)."""
    name = raw = None
    names = raws = types = 0
    dims: list[int] = []
    data_type = None
    other = False
    for number, wire, at, s, e in _fields(b, start, end):
        if number == _F["name"]:
            if wire != _LEN:
                raise _Layout
            names += 1
            try:
                name = bytes(b[s:e]).decode("utf-8")
            except UnicodeDecodeError:
                raise _Layout from None
        elif number == _F["raw_data"]:
            if wire != _LEN:
                raise _Layout
            raws += 1
            raw = (s, e, at)
        elif number == _F["dims"]:
            dims += _dims(b, wire, s, e)
        elif number == _F["data_type"]:
            if wire != _VARINT:
                raise _Layout
            types += 1
            data_type = _signed(_varint(b, s, e)[0])
        elif number in _OTHER_DATA:
            other = True
    if names != 1:
        raise _Layout               # unnamed or renamed initializers: the whole parse
    n = 1
    for d in dims:
        n *= d
    if raws != 1 or types != 1 or other or data_type not in _NUMERIC or \
            any(d < 0 for d in dims) or n * 4 <= min_size:
        return name, None
    return name, raw


def parse_lean(b, min_size: int) -> tuple[onnx.ModelProto, dict[str, bytes]] | None:
    """The ModelProto of the serialized model ``b`` (a buffer) with the cut
    initializers' ``raw_data`` left out, and their data by name; None when
    ``b`` is not of the plain layout (see the module docstring)."""
    try:
        return _parse_lean(b, min_size)
    except _Layout:
        return None


def _parse_lean(b, min_size: int):
    graphs = [f for f in _fields(b, 0, len(b)) if f[0] == _GRAPH]
    if len(graphs) != 1 or graphs[0][1] != _LEN:
        raise _Layout
    _, _, g_at, g_start, g_end = graphs[0]
    parts, weights, names = [], {}, set()
    for number, wire, at, s, e in _fields(b, g_start, g_end):
        if number != _INIT:
            parts.append(b[at:e])
            continue
        if wire != _LEN:
            raise _Layout
        name, raw = _cut(b, s, e, min_size)
        if name in names:
            raise _Layout
        names.add(name)
        if raw is None:
            parts.append(b[at:e])
            continue
        r_start, r_end, r_at = raw
        weights[name] = bytes(b[r_start:r_end])
        body = b"".join((b[s:r_at], b[r_end:e]))
        parts.append(_encode(_INIT << 3 | _LEN) + _encode(len(body)) + body)
    if not weights:
        raise _Layout               # nothing to gain
    graph = b"".join(parts)
    data = b"".join((b[:g_at], _encode(_GRAPH << 3 | _LEN), _encode(len(graph)), graph,
                     b[g_end:]))
    model = onnx.ModelProto()
    try:
        decoded = model.ParseFromString(data)
    except Exception:               # noqa: BLE001 - the whole parse reports it
        raise _Layout from None
    if decoded is not None and decoded != len(data):
        raise _Layout
    return model, weights
