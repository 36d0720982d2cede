"""ONNX types (TensorProto.DataType, TypeProto) -> MLIR types, and back.

The dialect's type vocabulary, shared by the importer (building ops), the
op rules (result types) and the passes.
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
import onnx
from onnx import TensorProto as TP

# ONNX element type -> MLIR type text. Signed ints are signless (as arith
# wants), unsigned ints are ``uiN`` (as onnx-mlir does).
ELEM_TYPE_TO_MLIR = {
    TP.FLOAT: "f32", TP.DOUBLE: "f64", TP.FLOAT16: "f16", TP.BFLOAT16: "bf16",
    TP.INT8: "i8", TP.INT16: "i16", TP.INT32: "i32", TP.INT64: "i64",
    TP.UINT8: "ui8", TP.UINT16: "ui16", TP.UINT32: "ui32", TP.UINT64: "ui64",
    TP.BOOL: "i1", TP.STRING: "!onnx.string",
    TP.COMPLEX64: "complex<f32>", TP.COMPLEX128: "complex<f64>",
    TP.FLOAT8E4M3FN: "f8E4M3FN", TP.FLOAT8E4M3FNUZ: "f8E4M3FNUZ",
    TP.FLOAT8E5M2: "f8E5M2", TP.FLOAT8E5M2FNUZ: "f8E5M2FNUZ",
    TP.INT4: "i4", TP.UINT4: "ui4", TP.FLOAT4E2M1: "f4E2M1FN",
}
for _name, _mlir in (("FLOAT8E8M0", "f8E8M0FNU"), ("INT2", "i2"), ("UINT2", "ui2"),
                     ("FLOAT6E2M3", "f6E2M3FN"), ("FLOAT6E3M2", "f6E3M2FN")):
    if hasattr(TP, _name):
        ELEM_TYPE_TO_MLIR[getattr(TP, _name)] = _mlir

MLIR_TO_ELEM_TYPE = {v: k for k, v in ELEM_TYPE_TO_MLIR.items()}

# ONNX schema type strings ("tensor(float)") element part -> MLIR text.
ONNX_TYPE_NAME_TO_MLIR = {
    onnx.helper.tensor_dtype_to_string(k).split(".")[-1].lower(): v
    for k, v in ELEM_TYPE_TO_MLIR.items()
}
ONNX_TYPE_NAME_TO_MLIR.update({"float": "f32", "double": "f64", "bool": "i1"})
MLIR_TO_ONNX_TYPE_NAME = {}
for _k, _v in ONNX_TYPE_NAME_TO_MLIR.items():
    MLIR_TO_ONNX_TYPE_NAME.setdefault(_v, _k)
MLIR_TO_ONNX_TYPE_NAME.update({"f32": "float", "f64": "double", "i1": "bool"})

UNKNOWN = "!onnx.unknown"


def elem_type(onnx_elem: int) -> ir.Type:
    try:
        return ir.Type.parse(ELEM_TYPE_TO_MLIR[onnx_elem])
    except KeyError:
        raise ValueError(f"unsupported ONNX element type {dtype_name(onnx_elem)}") from None


def dtype_name(onnx_elem: int) -> str:
    """``TensorProto.FLOAT`` -> "FLOAT"; a code ONNX does not define -> "999 (not an ONNX type)"."""
    try:
        return onnx.helper.tensor_dtype_to_string(onnx_elem).split(".")[-1]
    except (KeyError, ValueError, TypeError):
        return f"{onnx_elem} (not an ONNX element type)"


def tensor_type(onnx_elem: int, shape) -> ir.Type:
    """``shape`` is None (unranked) or a sequence of int / None (dynamic)."""
    et = elem_type(onnx_elem)
    if shape is None:
        return ir.UnrankedTensorType.get(et)
    dyn = ir.ShapedType.get_dynamic_size()
    return ir.RankedTensorType.get([dyn if d is None else int(d) for d in shape], et)


def _dims(shape_proto, overrides=None) -> list:
    dims = []
    for d in shape_proto.dim:
        dims.append(d.dim_value if d.HasField("dim_value") and d.dim_value >= 0 else None)
    return dims


def type_from_proto(tp: onnx.TypeProto) -> ir.Type:
    """TypeProto -> MLIR type; ``!onnx.unknown`` where the proto says nothing."""
    kind = tp.WhichOneof("value")
    if kind == "tensor_type":
        t = tp.tensor_type
        if not t.elem_type:
            return ir.Type.parse(UNKNOWN)
        return tensor_type(t.elem_type, _dims(t.shape) if t.HasField("shape") else None)
    if kind == "sequence_type":
        inner = type_from_proto(tp.sequence_type.elem_type)
        return ir.Type.parse(f"!onnx.seq<{inner}>")
    if kind == "optional_type":
        inner = type_from_proto(tp.optional_type.elem_type)
        return ir.Type.parse(f"!onnx.opt<{inner}>")
    if kind == "map_type":
        k = ELEM_TYPE_TO_MLIR[tp.map_type.key_type]
        v = type_from_proto(tp.map_type.value_type)
        return ir.Type.parse(f"!onnx.map<{k}, {v}>")
    if kind == "sparse_tensor_type":
        t = tp.sparse_tensor_type
        return tensor_type(t.elem_type, _dims(t.shape) if t.HasField("shape") else None)
    return ir.Type.parse(UNKNOWN)


def meet(a: ir.Type, b: ir.Type) -> ir.Type | None:
    """The type that says everything ``a`` and ``b`` say (``a``'s element
    type and dims first), or None when they contradict each other (element
    type, rank or a static dim). Sequences and optionals meet their element
    types; other non-tensor types: ``a`` unless unknown."""
    if str(a) == UNKNOWN:
        return b
    sa, sb = str(a), str(b)
    for box in ("!onnx.seq<", "!onnx.opt<"):
        if sa.startswith(box) and sb.startswith(box):
            inner = meet(ir.Type.parse(sa[len(box):-1]), ir.Type.parse(sb[len(box):-1]))
            return None if inner is None else ir.Type.parse(f"{box}{inner}>")
    if str(b) == UNKNOWN or not isinstance(a, ir.ShapedType) or \
            not isinstance(b, ir.ShapedType):
        return a
    ea, eb = str(a.element_type), str(b.element_type)
    if ea != eb and UNKNOWN not in (ea, eb):
        return None
    et = b.element_type if ea == UNKNOWN else a.element_type
    if not isinstance(b, ir.RankedTensorType):
        return a if ea != UNKNOWN else _with_elem(a, et)
    if not isinstance(a, ir.RankedTensorType):
        return _with_elem(b, et)
    if a.rank != b.rank:
        return None
    dims = []
    for k in range(a.rank):
        da = None if a.is_dynamic_dim(k) else a.shape[k]
        db = None if b.is_dynamic_dim(k) else b.shape[k]
        if da is not None and db is not None and da != db:
            return None
        dims.append(da if da is not None else db)
    dyn = ir.ShapedType.get_dynamic_size()
    return ir.RankedTensorType.get([dyn if d is None else d for d in dims], et)


def _with_elem(t: ir.ShapedType, et: ir.Type) -> ir.Type:
    if isinstance(t, ir.RankedTensorType):
        return ir.RankedTensorType.get(list(t.shape), et)
    return ir.UnrankedTensorType.get(et)


def onnx_type_name(t: ir.Type) -> str:
    """MLIR type -> ONNX schema type string (``tensor(float)``, ``seq(...)``)."""
    s = str(t)
    if s.startswith("!onnx.seq<"):
        return f"seq({onnx_type_name(ir.Type.parse(s[len('!onnx.seq<'):-1]))})"
    if s.startswith("!onnx.opt<"):
        return f"optional({onnx_type_name(ir.Type.parse(s[len('!onnx.opt<'):-1]))})"
    if s.startswith("!onnx.map<"):      # schemas write map(int64, float): the value's elem
        key, _, value = s[len("!onnx.map<"):-1].partition(", ")
        v = onnx_type_name(ir.Type.parse(value))
        v = v[len("tensor("):-1] if v.startswith("tensor(") else v
        return f"map({MLIR_TO_ONNX_TYPE_NAME.get(key, key)}, {v})"
    if isinstance(t, ir.ShapedType):
        e = str(t.element_type)
        return f"tensor({MLIR_TO_ONNX_TYPE_NAME.get(e, e)})"
    return s


def numpy_dtype(t: ir.Type):
    """Element type (MLIR) -> numpy dtype, or None."""
    name = MLIR_TO_ONNX_TYPE_NAME.get(str(t))
    if name is None or name == "string":
        return None
    code = MLIR_TO_ELEM_TYPE[str(t)]
    try:
        return np.dtype(onnx.helper.tensor_dtype_to_np_dtype(code))
    except Exception:
        return None
