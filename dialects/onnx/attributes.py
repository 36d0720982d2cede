"""ONNX AttributeProto -> MLIR attributes, one converter per attribute kind:
the dialect's attribute vocabulary, shared by the importer (building ops)
and the passes that build constants (fold_constants, optimize_onnx).

Kinds follow ``AttrSpec.kind``: ``int`` -> ``N : si64``, ``float`` ->
``f32``, ``string`` -> StringAttr, ``ints`` -> ``array<i64: ...>``,
``floats`` -> ``array<f32: ...>``, ``strings`` -> ArrayAttr of strings,
``tensor`` -> dense / dense_resource elements, ``type`` -> TypeAttr.
Graph attributes become regions (see ``nodes.py``), not attributes.
"""
from __future__ import annotations

import sys

import mlir.ir as ir
import numpy as np
import onnx
from onnx import AttributeProto as AP

from onnx_mlir_py.ir_resources import resource_attr
from onnx_mlir_py.dialects.onnx.types import elem_type, type_from_proto

# Discardable attribute: the result types a node's model declared (set by the
# importer, checked and removed by shape-inference).
DECLARED_ATTR = "onnx.declared"
# {graph attribute name: base64 of its serialized GraphProto} on ops whose ONNX
# function body expand-functions may substitute (see importer/nodes.py)
GRAPH_PROTOS_ATTR = "onnx.graph_protos"

# Above this many elements a tensor becomes a dense resource (zero copy, and
# elided when the IR is printed).
RESOURCE_THRESHOLD = 1024

_KIND_OF_PROTO = {
    AP.INT: "int", AP.FLOAT: "float", AP.STRING: "string", AP.INTS: "ints",
    AP.FLOATS: "floats", AP.STRINGS: "strings", AP.TENSOR: "tensor",
    AP.GRAPH: "graph", AP.GRAPHS: "graphs", AP.TYPE_PROTO: "type",
    AP.TYPE_PROTOS: "types", AP.SPARSE_TENSOR: "sparse_tensor",
    AP.TENSORS: "tensors", AP.SPARSE_TENSORS: "sparse_tensors",
}


def proto_kind(a: onnx.AttributeProto) -> str:
    return _KIND_OF_PROTO.get(a.type, "undefined")


def _si64(v: int) -> ir.Attribute:
    return ir.IntegerAttr.get(ir.IntegerType.get_signed(64), int(v))


def _str(v) -> ir.Attribute:
    if isinstance(v, bytes):
        v = v.decode("utf-8", "replace")
    return ir.StringAttr.get(v)


def from_value(kind: str, v) -> ir.Attribute:
    """Python value (as in ``ops.json`` defaults) -> MLIR attribute."""
    if kind == "int":
        return _si64(v)
    if kind == "float":
        return ir.FloatAttr.get(ir.F32Type.get(), float(v))
    if kind == "string":
        return _str(v)
    if kind == "ints":
        return ir.DenseI64ArrayAttr.get([int(x) for x in v])
    if kind == "floats":
        return ir.DenseF32ArrayAttr.get([float(x) for x in v])
    if kind == "strings":
        return ir.ArrayAttr.get([_str(x) for x in v])
    raise ValueError(f"no default conversion for attribute kind {kind}")


_resource_counter = [0]


def _mlir_str(b: bytes) -> str:
    return '"' + "".join(chr(c) if 32 <= c < 127 and c not in (34, 92) else f"\\{c:02X}"
                         for c in b) + '"'


def string_tensor_attr(t: onnx.TensorProto) -> ir.Attribute:
    """A STRING TensorProto -> ``dense<[...]> : tensor<..x!onnx.string>`` (MLIR's
    DenseStringElementsAttr; read back by strings_of)."""
    shape = list(t.dims)
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    data = list(t.string_data)
    if len(data) != n:
        raise ValueError(f"string tensor of shape {shape} has {len(data)} values")

    def nest(flat, dims):
        if not dims:
            return _mlir_str(flat[0])
        step = len(flat) // dims[0] if dims[0] else 0
        return "[" + ", ".join(nest(flat[i * step:(i + 1) * step], dims[1:])
                               for i in range(dims[0])) + "]"
    body = nest(data, shape) if n else ""
    ty = "x".join([str(d) for d in shape] + ["!onnx.string"])
    return ir.Attribute.parse(f"dense<{body}> : tensor<{ty}>")


def is_string_tensor_attr(attr: ir.Attribute) -> bool:
    """A string_tensor_attr (DenseStringElementsAttr of !onnx.string)."""
    t = getattr(attr, "type", None)
    return isinstance(t, ir.ShapedType) and str(t.element_type) == "!onnx.string" and \
        str(attr).startswith("dense<")


def strings_of(attr: ir.Attribute) -> list[str]:
    """The flat element strings of a string_tensor_attr (a splat repeated)."""
    import re
    text = str(attr)
    body = text[text.index("<") + 1:text.rindex("> :")]
    vals = [bytes(92 if m == "\\\\" else int(m[1:], 16) if m.startswith("\\") else ord(m)
                  for m in re.findall(r"\\\\|\\[0-9A-Fa-f]{2}|[^\\]", q)
                  ).decode("utf-8", errors="replace")
            for q in re.findall(r'"((?:[^"\\]|\\\\|\\[0-9A-Fa-f]{2})*)"', body)]
    n = int(np.prod(attr.type.shape, dtype=np.int64)) if attr.type.rank else 1
    return vals * n if len(vals) == 1 and n != 1 else vals


def tensor_attr(t: onnx.TensorProto, name_hint: str = "",
                raw: bytes | None = None) -> ir.Attribute:
    """TensorProto -> DenseElementsAttr (small) or DenseResourceElementsAttr.
    ``raw``: the tensor's raw_data when the proto was parsed without it."""
    from onnx import numpy_helper
    et = elem_type(t.data_type)
    if t.data_type == onnx.TensorProto.STRING:
        return string_tensor_attr(t)
    if raw is None and t.HasField("raw_data"):
        raw = t.raw_data                                    # each read copies it
    check_payload(t, raw)
    arr = np.frombuffer(raw, onnx.helper.tensor_dtype_to_np_dtype(t.data_type)).reshape(t.dims) \
        if raw is not None and t.data_type in _SIZE and sys.byteorder == "little" \
        and not t.HasField("segment") else numpy_helper.to_array(t)   # to_array's raw path
    shape = list(arr.shape)
    ttype = ir.RankedTensorType.get(shape, et)
    if t.data_type == onnx.TensorProto.BOOL:
        return dense_bool_attr(arr, ttype)
    if arr.dtype.isbuiltin != 1 or arr.dtype.itemsize * 8 != _bitwidth(et):
        arr = _raw_bits(arr, et)  # bf16 / float8: keep the bits of the proto
    arr = np.ascontiguousarray(arr)
    if arr.size > RESOURCE_THRESHOLD:
        _resource_counter[0] += 1
        name = f"{_sanitize(name_hint) or 'tensor'}_{_resource_counter[0]}"
        return resource_attr(arr, name, ttype)
    if arr.size == 0:
        return ir.DenseElementsAttr.get(np.zeros((0,), arr.dtype), type=ttype)
    return ir.DenseElementsAttr.get(arr, type=ttype)


_P = onnx.TensorProto
# dtype -> the typed field that holds its values (one entry per element)
_FIELD = {_P.FLOAT: "float_data", _P.DOUBLE: "double_data", _P.INT64: "int64_data",
          _P.UINT32: "uint64_data", _P.UINT64: "uint64_data", _P.INT32: "int32_data",
          _P.INT16: "int32_data", _P.INT8: "int32_data", _P.UINT16: "int32_data",
          _P.UINT8: "int32_data", _P.BOOL: "int32_data", _P.FLOAT16: "int32_data",
          _P.BFLOAT16: "int32_data"}
_SIZE = {_P.FLOAT: 4, _P.DOUBLE: 8, _P.INT64: 8, _P.UINT32: 4, _P.UINT64: 8, _P.INT32: 4,
         _P.INT16: 2, _P.INT8: 1, _P.UINT16: 2, _P.UINT8: 1, _P.BOOL: 1, _P.FLOAT16: 2,
         _P.BFLOAT16: 2}


def check_payload(t: onnx.TensorProto, raw: bytes | None = None) -> None:
    """The tensor's data agrees with its dims (ValueError saying how not),
    before numpy reads it: a damaged payload gets a message that names the
    counts, and nothing is allocated for dims that the data cannot fill.
    ``raw``: ``t.raw_data`` if already read (a read copies it)."""
    dims = list(t.dims)
    if any(d < 0 for d in dims):
        raise ValueError(f"dims {dims} has a negative dim")
    n = 1
    for d in dims:
        n *= d
    name = onnx.TensorProto.DataType.Name(t.data_type)
    if t.data_type not in _SIZE:
        return                                  # packed / complex / string types: numpy checks
    typed = [f for f in set(_FIELD.values()) if len(getattr(t, f))]
    has_raw = raw is not None or t.HasField("raw_data")
    if has_raw and typed:
        return                                  # raw_data wins (as in onnxruntime)
    if has_raw:
        need = n * _SIZE[t.data_type]
        got = len(raw if raw is not None else t.raw_data)
        if got != need:
            raise ValueError(f"raw_data holds {got} bytes, dims {dims} of "
                             f"{name} need {need}")
        return
    field = _FIELD[t.data_type]
    got = len(getattr(t, field))
    if got != n:
        other = [f for f in typed if f != field]
        hint = f" ({other[0]} is set instead)" if other else ""
        raise ValueError(f"{field} holds {got} values, dims {dims} of {name} need {n}{hint}")


def dense_bool_attr(arr: np.ndarray, ttype: ir.RankedTensorType) -> ir.DenseElementsAttr:
    """i1 elements are bit-packed in MLIR's buffer layout (a byte per bool is
    rejected for more than one element)."""
    bits = np.packbits(np.ascontiguousarray(arr, dtype=np.bool_).reshape(-1), bitorder="little")
    return ir.DenseElementsAttr.get(bits, type=ttype)


def _bitwidth(et: ir.Type) -> int:
    if isinstance(et, ir.ComplexType):
        return 2 * _bitwidth(et.element_type)
    return getattr(et, "width", 0) or 0


def _raw_bits(arr: np.ndarray, et: ir.Type) -> np.ndarray:
    """Element bits for types numpy has no native dtype for (bf16, f8, and
    f4/int4/int2 unpacked from the proto's packing by numpy_helper: ml_dtypes
    keeps one per byte, the bits in the low part, as MLIR's dense storage)."""
    width = _bitwidth(et)
    if width in (2, 4, 8, 16) and arr.dtype.itemsize * 8 == max(width, 8):
        return np.ascontiguousarray(arr).view({1: np.uint8, 2: np.uint16}[arr.dtype.itemsize])
    raise ValueError(f"constants of element type {et} are not supported yet")


def _sanitize(s: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in s)[:40]


def from_proto(a: onnx.AttributeProto, kind: str | None = None) -> ir.Attribute:
    """AttributeProto -> MLIR attribute (graphs are handled by the caller)."""
    k = kind or proto_kind(a)
    if k == "int":
        return _si64(a.i)
    if k == "float":
        return ir.FloatAttr.get(ir.F32Type.get(), a.f)
    if k == "string":
        return _str(a.s)
    if k == "ints":
        return ir.DenseI64ArrayAttr.get(list(a.ints))
    if k == "floats":
        return ir.DenseF32ArrayAttr.get(list(a.floats))
    if k == "strings":
        return ir.ArrayAttr.get([_str(x) for x in a.strings])
    if k == "tensor":
        return tensor_attr(a.t, a.name)
    if k == "type":
        return ir.TypeAttr.get(type_from_proto(a.tp))
    if k == "types":
        return ir.ArrayAttr.get([ir.TypeAttr.get(type_from_proto(x)) for x in a.type_protos])
    if k == "tensors":
        return ir.ArrayAttr.get([tensor_attr(x, a.name) for x in a.tensors])
    raise ValueError(f"attribute kind {k} is not supported")
