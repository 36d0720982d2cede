"""What ``get_inputs`` / ``get_outputs`` / ``get_modelmeta`` report, taken
from the ONNX model as onnxruntime takes it, and kept as JSON next to the
cached library so a later session needs neither onnx nor the model parsed.

Shapes: an int per static dim, the ``dim_param`` string for a symbolic dim,
None for a dim with neither, ``[]`` for a scalar or a tensor without a
shape. Types: ``'tensor(float)'``, ``'tensor(int64)'``, ...
"""
from __future__ import annotations

import numpy as np


class NodeArg:
    """An input or output: ``.name``, ``.type`` (``'tensor(float)'``),
    ``.shape`` (list of int / dim_param str / None)."""
    __slots__ = ("name", "type", "shape")

    def __init__(self, name: str, type: str, shape: list):  # noqa: A002 - onnxruntime's name
        self.name, self.type, self.shape = name, type, shape

    def __eq__(self, other) -> bool:
        return isinstance(other, NodeArg) and \
            (self.name, self.type, self.shape) == (other.name, other.type, other.shape)

    __hash__ = None

    def __repr__(self) -> str:
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


class ModelMetadata:
    """``get_modelmeta()``: the model's producer, names, doc strings, version
    and ``metadata_props`` (``custom_metadata_map``)."""
    __slots__ = ("producer_name", "graph_name", "domain", "description", "graph_description",
                 "version", "custom_metadata_map")

    def __init__(self, producer_name="", graph_name="", domain="", description="",
                 graph_description="", version=0, custom_metadata_map=None):
        self.producer_name, self.graph_name, self.domain = producer_name, graph_name, domain
        self.description, self.graph_description = description, graph_description
        self.version = version
        self.custom_metadata_map = dict(custom_metadata_map or {})

    def __repr__(self) -> str:
        return "ModelMetadata(" + ", ".join(f"{k}={getattr(self, k)!r}"
                                           for k in self.__slots__) + ")"


# 'tensor(float)' -> numpy dtype (the element types the compiled code takes)
_NP = {"float": np.float32, "double": np.float64, "float16": np.float16, "bool": np.bool_,
       "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
       "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64}
_NP_NAME = {np.dtype(v): k for k, v in _NP.items()}


def np_dtype(type_str: str) -> np.dtype | None:
    """numpy dtype of a ``'tensor(...)'`` type string (None: not a tensor
    type numpy has)."""
    if type_str.startswith("tensor(") and type_str.endswith(")"):
        dt = _NP.get(type_str[7:-1])
        return None if dt is None else np.dtype(dt)
    return None


def type_of_array(a: np.ndarray) -> str:
    """onnxruntime's name of an array's type (``'tensor(double)'``)."""
    name = _NP_NAME.get(a.dtype)
    if name is None:
        name = {"U": "string", "S": "string", "O": "object"}.get(a.dtype.kind, str(a.dtype))
    return f"tensor({name})"


def _type_str(tp) -> str:
    from onnx import TensorProto
    which = tp.WhichOneof("value")
    if which == "tensor_type":
        return f"tensor({TensorProto.DataType.Name(tp.tensor_type.elem_type).lower()})"
    if which == "sequence_type":
        return f"seq({_type_str(tp.sequence_type.elem_type)})"
    if which == "optional_type":
        return f"optional({_type_str(tp.optional_type.elem_type)})"
    if which == "map_type":
        key = TensorProto.DataType.Name(tp.map_type.key_type).lower()
        return f"map({key},{_type_str(tp.map_type.value_type)})"
    return which or "unknown"


def _shape(tp) -> list:
    if tp.WhichOneof("value") != "tensor_type" or not tp.tensor_type.HasField("shape"):
        return []
    out = []
    for d in tp.tensor_type.shape.dim:
        which = d.WhichOneof("value")
        out.append(d.dim_value if which == "dim_value" else
                   d.dim_param if which == "dim_param" else None)
    return out


def _arg(vi) -> dict:
    """``rank``: None when the shape is unknown (``shape`` is ``[]`` then too,
    as for a scalar, as onnxruntime shows it)."""
    tp = vi.type
    known = tp.WhichOneof("value") == "tensor_type" and tp.tensor_type.HasField("shape")
    shape = _shape(tp)
    return {"name": vi.name, "type": _type_str(tp), "shape": shape,
            "rank": len(shape) if known else None}


def _outputs(model, merge: bool = False) -> list[dict]:
    """The graph outputs with what onnx shape inference adds to their
    declared types (onnxruntime shows inferred output shapes too). ``merge``
    (inputs specialised by free-dimension overrides): a dim inference
    computes wins over the declared one, as in onnxruntime."""
    outs = [_arg(vi) for vi in model.graph.output]
    if not merge and all(o["rank"] is not None and None not in o["shape"] for o in outs):
        return outs
    try:
        from onnx import shape_inference

        from onnx_mlir_py.importer.model import _inference_copy
        inferred = shape_inference.infer_shapes(_inference_copy(model))
    except Exception:  # noqa: BLE001 - the declared types are still right
        return outs
    # onnx names the unknown dims it makes 'unk__<n>'; onnxruntime shows None
    known = {d for vi in model.graph.input for d in _shape(vi.type) if isinstance(d, str)}
    better = {}
    for vi in inferred.graph.output:
        a = _arg(vi)
        a["shape"] = [None if isinstance(d, str) and d.startswith("unk__") and d not in known
                      else d for d in a["shape"]]
        better[vi.name] = a
    if merge:
        return [o if b is None or b["rank"] != o["rank"] else
                {**o, "shape": [bd if isinstance(bd, int) or od is None else od
                                for od, bd in zip(o["shape"], b["shape"])]}
                for o, b in ((o, better.get(o["name"])) for o in outs)]
    return [better.get(o["name"], o) if o["rank"] is None or None in o["shape"] else o
            for o in outs]


_UNSET_VERSION = 2**63 - 1     # onnxruntime's version of a model without model_version


def describe(model, specialised: bool = False) -> dict:
    """JSON-able description of an ``onnx.ModelProto``: its real inputs (not
    initializers), outputs and metadata. ``specialised``: input dims were
    fixed by free-dimension overrides (output dims re-inferred)."""
    g = model.graph
    inits = {t.name for t in g.initializer}
    return {"inputs": [_arg(vi) for vi in g.input if vi.name not in inits],
            "outputs": _outputs(model, merge=specialised),
            "meta": {"producer_name": model.producer_name, "graph_name": g.name,
                     "domain": model.domain, "description": model.doc_string,
                     "graph_description": g.doc_string, "version": int(model.model_version) if model.HasField("model_version")
                     else _UNSET_VERSION,
                     "custom_metadata_map": {p.key: p.value for p in model.metadata_props}}}


def node_args(entries: list[dict]) -> list[NodeArg]:
    return [NodeArg(e["name"], e["type"], list(e["shape"])) for e in entries]
