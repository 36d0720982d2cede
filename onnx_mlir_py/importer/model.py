"""Load an ONNX model and check it can be imported (before any MLIR call).

``load_model`` reads a path (with external data, any size) or takes a
ModelProto; ``prepare_model`` rejects invalid models (:mod:`.validate`:
values defined twice, cycles, opsets newer than onnx, ...), applies
``--shapeInformation``, inlines
model-local functions, runs ``onnx.shape_inference`` and sweeps the graph
for ops the dialect lacks, reporting all of them at once.

Two kinds of types come out: what ``onnx.shape_inference`` infers from the
inputs alone (run on a copy without the model's ``value_info`` and output
types, so a wrong declaration cannot spread into the types after it), and
what the model declares. The shape-inference pass checks the declarations
against its own inference and warns where they contradict it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache

import onnx
from onnx import shape_inference

from onnx_mlir_py.dialects.onnx.schema import spec_table
from onnx_mlir_py.errors import ModelLoadError, UnsupportedOpsError, OnnxMlirError
# noqa: F401 (node_label: re-exported)
from onnx_mlir_py.importer.validate import node_label, validate_model


def load_model(src, weights: dict[str, bytes] | None = None) -> onnx.ModelProto:
    """Path or ModelProto -> ModelProto, with a one-line error on bad files.
    ``weights`` (a dict, for the importer): a binary file's large top-level
    initializers may come without their ``raw_data``, whose bytes are put
    in ``weights`` by name instead (:mod:`.lean_parse`)."""
    from onnx_mlir_py.importer.external import has_external, load_external_data
    if isinstance(src, onnx.ModelProto):
        if has_external(src):
            src = _copy(src)
            load_external_data(src, None)
        return src
    path = os.fspath(src)
    if os.path.isdir(path):     # a SavedModel folder never gets here (frontends/tensorflow)
        raise ModelLoadError(f"'{path}' is a directory, expected an .onnx file (or a "
                             "TensorFlow SavedModel directory, with a saved_model.pb)")
    if not os.path.isfile(path):
        raise ModelLoadError(f"cannot read '{path}': no such file")
    try:
        model = _parse_file(path, weights)
    except Exception as e:  # DecodeError, ...
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ModelLoadError(f"cannot read '{path}' as an ONNX model "
                             f"(truncated or not an ONNX protobuf?): {reason}") from None
    if not model.HasField("graph") or (not model.graph.node and not model.graph.output):
        raise ModelLoadError(f"'{path}' holds no ONNX graph (truncated or not a model file?)")
    _check_strings(model, path)
    load_external_data(model, os.path.dirname(os.path.abspath(path)))
    return model


def _parse_file(path: str, weights: dict[str, bytes] | None = None) -> onnx.ModelProto:
    """The ModelProto of a model file. A binary protobuf one (the format
    ``onnx.load`` infers from the extension) is parsed from a read-only
    memory map of the file: ``onnx.load`` first reads the whole file into
    a bytes object, one more copy of every weight byte (ResNet-50: ~50 ms
    CPU of its ~120 ms load, #29); protobuf copies what it keeps. With
    ``weights``, the large initializers' data is read once, into
    ``weights`` (:func:`.lean_parse.parse_lean`), when the file allows."""
    import mmap
    from google.protobuf.message import DecodeError
    from onnx import serialization
    fmt = serialization.registry.get_format_from_file_extension(os.path.splitext(path)[1])
    if fmt not in (None, "protobuf"):
        return onnx.load(path, load_external_data=False)
    with open(path, "rb") as f:
        try:
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):       # an empty file, no mmap on its file system
            return onnx.load(path, load_external_data=False)
    with data, memoryview(data) as view:
        if weights is not None:
            from onnx_mlir_py.importer.lean_parse import parse_lean
            lean = parse_lean(view, INFERENCE_DATA_LIMIT)
            if lean is not None:
                weights.update(lean[1])
                return lean[0]
        model = onnx.ModelProto()
        decoded = model.ParseFromString(view)
        if decoded is not None and decoded != len(data):      # as onnx.load checks
            raise DecodeError(f"Protobuf decoding consumed too few bytes: {decoded} "
                              f"out of {len(data)}")
    return model


def _copy(model: onnx.ModelProto) -> onnx.ModelProto:
    m = onnx.ModelProto()
    m.CopyFrom(model)
    return m


def _check_strings(msg, path: str, where: str = "model") -> None:
    """Protobuf hands a string field that is not UTF-8 (a damaged file) over
    as bytes; names must be text. Data fields (bytes, numbers) are not read:
    reading ``raw_data`` copies it (``ListFields`` did, once more every
    weight byte of the model, #29)."""
    for name, message, repeated in _text_fields(msg.DESCRIPTOR):
        if repeated:
            items = getattr(msg, name)
        elif not message or msg.HasField(name):
            items = (getattr(msg, name),)
        else:
            continue
        for k, v in enumerate(items):
            if message:
                _check_strings(v, path, f"{where}.{name}" + (f"[{k}]" if repeated else ""))
            elif isinstance(v, bytes):
                raise ModelLoadError(f"'{path}': {where}.{name} = {v[:40]!r} is not "
                                     "valid UTF-8 text (a damaged file?)")


@lru_cache(maxsize=None)
def _text_fields(descriptor) -> tuple[tuple[str, bool, bool], ...]:
    """(name, is a message, is repeated) of the string and message fields of
    a message type: what :func:`_check_strings` reads, looked up once per
    type instead of once per message (ResNet-50: 521 messages, 4.3 -> 2.2 ms)."""
    return tuple((f.name, f.type == f.TYPE_MESSAGE, _repeated(f)) for f in descriptor.fields
                 if f.type in (f.TYPE_STRING, f.TYPE_MESSAGE))


def _repeated(f) -> bool:
    """protobuf >= 6 has ``is_repeated`` (7 dropped ``label``)."""
    r = getattr(f, "is_repeated", None)
    return r if r is not None else f.label == f.LABEL_REPEATED


def parse_shape_information(text: str) -> dict[int, list[int | None]]:
    """``"0:1x3x224x224,1:-1x10"`` -> {0: [1, 3, 224, 224], 1: [None, 10]};
    index -1 stands for every input (as onnx-mlir: ``-1:-1x3``)."""
    out = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        try:
            idx, dims = item.split(":")
            if int(idx) < -1:
                raise ValueError(idx)
            out[int(idx)] = [None if int(d) < 0 else int(d) for d in dims.split("x")] \
                if dims else []
        except ValueError:
            raise OnnxMlirError(f"--shapeInformation: cannot parse '{item}', expected "
                                "INDEX:D1xD2x... (INDEX -1: every input) with -1 for a "
                                "dynamic dim") from None
    return out


def real_inputs(graph: onnx.GraphProto) -> list[onnx.ValueInfoProto]:
    """Graph inputs that are not initializers (IR < 4 lists both)."""
    inits = {t.name for t in graph.initializer}
    return [i for i in graph.input if i.name not in inits]


def apply_shape_information(model: onnx.ModelProto, shapes: dict[int, list]) -> None:
    inputs = real_inputs(model.graph)
    if -1 in shapes:        # every input; an input's own index overrides it
        every = shapes[-1]
        shapes = {**{i: every for i in range(len(inputs))},
                  **{i: d for i, d in shapes.items() if i != -1}}
    for idx, dims in shapes.items():
        if not 0 <= idx < len(inputs):
            raise OnnxMlirError(f"--shapeInformation: input index {idx} out of range "
                                f"(model has {len(inputs)} inputs)")
        tt = inputs[idx].type.tensor_type
        old = list(tt.shape.dim)
        if old and len(old) != len(dims):
            raise OnnxMlirError(f"--shapeInformation: input {idx} ('{inputs[idx].name}') "
                                f"has rank {len(old)}, got {len(dims)} dims")
        tt.shape.ClearField("dim")
        for d in dims:
            nd = tt.shape.dim.add()
            if d is not None:
                nd.dim_value = d
    # Declared shapes of everything downstream were computed for the old
    # input shapes: keep only their ranks so inference recomputes the dims
    # (a stale static output dim would silently truncate results).
    for vi in list(model.graph.value_info) + list(model.graph.output):
        if vi.type.HasField("tensor_type") and vi.type.tensor_type.HasField("shape"):
            for d in vi.type.tensor_type.shape.dim:
                d.Clear()


# Initializers above this size reach onnx.shape_inference without their data:
# it only needs their type and dims (shape computations use small tensors),
# and serializing big weights for it dominated the import of large models.
INFERENCE_DATA_LIMIT = 1 << 16


def _inference_copy(model: onnx.ModelProto) -> onnx.ModelProto:
    """A copy for onnx.shape_inference with big initializers' data left out."""
    m = onnx.ModelProto()
    graph = model.graph
    big = [t for t in graph.initializer if _data_size(t) > INFERENCE_DATA_LIMIT]
    if not big:
        m.CopyFrom(model)
        return m
    _copy_fields(model, m, skip="graph")
    _copy_fields(graph, m.graph, skip="initializer")
    big_names = {t.name for t in big}
    g = m.graph
    for t in graph.initializer:
        if t.name not in big_names:
            g.initializer.add().CopyFrom(t)
            continue
        s = g.initializer.add()
        s.name, s.data_type = t.name, t.data_type
        s.dims.extend(t.dims)
        s.data_location = onnx.TensorProto.EXTERNAL
        e = s.external_data.add()
        e.key, e.value = "location", "__elided__"
    return m


def _drop_declarations(model: onnx.ModelProto) -> None:
    """Remove declared value_info and output types (every graph), in place."""
    for g in all_graphs(model.graph):
        del g.value_info[:]
        for o in g.output:
            o.ClearField("type")


def declared_types(model: onnx.ModelProto) -> dict[str, onnx.TypeProto]:
    """Types the model states for values computed by nodes (value_info and
    graph outputs, subgraphs included)."""
    out = {}
    for g in all_graphs(model.graph):
        for vi in list(g.value_info) + list(g.output):
            if vi.HasField("type"):
                out[vi.name] = vi.type
    return out


def _copy_fields(src, dst, skip: str) -> None:
    """Copy the set fields of protobuf message ``src`` into ``dst``, but one."""
    for f, value in src.ListFields():
        if f.name == skip:
            continue
        if _repeated(f):
            getattr(dst, f.name).extend(value)
        elif f.message_type is not None:
            getattr(dst, f.name).CopyFrom(value)
        else:
            setattr(dst, f.name, value)


def _data_size(t: onnx.TensorProto) -> int:
    n = 1
    for d in t.dims:
        n *= d
    return n * 4 if t.data_location != onnx.TensorProto.EXTERNAL else 0


# onnx's data propagation materialises 1-D values dim by dim, whatever their
# type (measured, onnx 1.23: Add of a [2**20] float input 0.6 s and 200 MB, of
# [2**24] 8 s and 2.5 GB, of [2**62] memory until the OOM killer ends the
# process). It matters for small shape-like tensors only: a model with a
# larger 1-D value is inferred without it.
DATA_PROP_MAX_1D = 1 << 16


def _large_1d(model: onnx.ModelProto) -> bool:
    g = model.graph
    for vi in (*g.input, *g.value_info, *g.output):
        t = vi.type.tensor_type
        if t.HasField("shape") and len(t.shape.dim) == 1 and \
                t.shape.dim[0].dim_value > DATA_PROP_MAX_1D:
            return True
    return False


def infer_onnx_types(model: onnx.ModelProto) -> onnx.ModelProto | None:
    """onnx.shape_inference on the model without its declared types (see the
    module docstring); None when it cannot run (our own verifiers then
    report what is wrong, naming the node). With data propagation unless
    a 1-D value is larger than ``DATA_PROP_MAX_1D`` (found by a first
    inference without it)."""
    try:
        m = _inference_copy(model)
        _drop_declarations(m)
        plain = shape_inference.infer_shapes(m)
        if _large_1d(plain):
            return plain
        inferred = shape_inference.infer_shapes(m, data_prop=True)
    except Exception:
        return None
    return inferred


def opset_map(model: onnx.ModelProto) -> dict[str, int]:
    ops = {("" if o.domain == "ai.onnx" else o.domain): o.version for o in model.opset_import}
    ops.setdefault("", 1)
    return ops


def iter_nodes(graph: onnx.GraphProto):
    """Every node, subgraphs included (each node before its subgraphs')."""
    for n in graph.node:
        yield n
        for g in subgraphs(n):
            yield from iter_nodes(g)


def all_graphs(graph: onnx.GraphProto):
    """``graph`` and every subgraph in it, at any depth."""
    yield graph
    for n in graph.node:
        for g in subgraphs(n):
            yield from all_graphs(g)


def check_supported(model: onnx.ModelProto) -> None:
    """Raise one UnsupportedOpsError listing every node the dialect lacks."""
    table = spec_table()
    opsets = opset_map(model)
    local = {(f.domain, f.name) for f in model.functions}
    missing = []
    for n in iter_nodes(model.graph):
        dom = "" if n.domain == "ai.onnx" else n.domain
        if (n.domain, n.op_type) in local:
            continue
        if dom not in opsets:
            missing.append((f"{n.domain}.{n.op_type} (domain not imported by the model)",
                            node_label(n)))
        elif table.resolve(dom, n.op_type, opsets[dom]) is None:
            where = f"{dom}." if dom else ""
            missing.append((f"{where}{n.op_type} (opset {opsets[dom]})", node_label(n)))
    if missing:
        raise UnsupportedOpsError("not in the ONNX dialect", missing)


def _misinferred_values(model: onnx.ModelProto) -> set[str]:
    """Values whose ``onnx.shape_inference`` type may be wrong: the outputs of
    nodes whose onnx inference is known to differ from the spec and
    onnxruntime (``pool.onnx_inference_differs``, ``einsum.onnx_einsum_inference_differs``), and everything computed
    from them. Our shape rules alone type those values."""
    from onnx_mlir_py.dialects.onnx.ops.pool import onnx_inference_differs
    from onnx_mlir_py.dialects.onnx.ops.einsum import onnx_einsum_inference_differs
    table, opsets = spec_table(), opset_map(model)
    bad: set[str] = set()
    nodes = list(iter_nodes(model.graph))
    for n in nodes:
        dom = "" if n.domain == "ai.onnx" else n.domain
        spec = table.resolve(dom, n.op_type, opsets.get(dom, 1)) if dom in opsets else None
        if spec is not None and onnx_inference_differs(
                n.op_type, spec.since_version,
                {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute
                 if a.type == onnx.AttributeProto.INT}) or \
                (n.op_type == "Einsum" and onnx_einsum_inference_differs(n)):
            bad.update(o for o in n.output if o)
    if not bad:
        return bad
    changed = True
    while changed:      # forward closure; a node with a tainted subgraph value is tainted
        changed = False
        for n in nodes:
            reads = set(n.input) | {v for sub in subgraphs(n) for m in iter_nodes(sub)
                                    for v in list(m.input) + list(m.output)}
            if reads & bad and not set(o for o in n.output if o) <= bad:
                bad.update(o for o in n.output if o)
                changed = True
    return bad


def subgraphs(node: onnx.NodeProto):
    """The node's graph attributes, in attribute order."""
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            yield from a.graphs


@dataclass
class PreparedModel:
    model: onnx.ModelProto
    opsets: dict[str, int]
    value_types: dict[str, onnx.TypeProto] = field(default_factory=dict)  # inferred by onnx
    declared: dict[str, onnx.TypeProto] = field(default_factory=dict)     # stated by the model
    # raw_data of the top-level initializers parsed without it (load_model's weights)
    weights: dict[str, bytes] = field(default_factory=dict)


def prepare_model(src, shape_information: dict | None = None,
                  onnx_shape_inference: bool = True) -> PreparedModel:
    weights: dict[str, bytes] = {}
    model = load_model(src, weights)
    checked = validate_model(model)        # a sorted copy if the nodes were out of order
    if checked is not model:
        model = checked
    elif isinstance(src, onnx.ModelProto) and shape_information:
        model = onnx.ModelProto()
        model.CopyFrom(src)
    if shape_information:
        apply_shape_information(model, shape_information)
    if model.functions:
        from onnx import inliner
        try:
            model = inliner.inline_local_functions(model)
        except Exception as e:
            raise ModelLoadError(f"cannot expand the model-local functions: {e}") from None
    check_supported(model)
    types: dict[str, onnx.TypeProto] = {}
    source = infer_onnx_types(model) if onnx_shape_inference else None
    untrusted = _misinferred_values(model) if source else set()
    for g in all_graphs((source or model).graph):
        for vi in list(g.input) + (list(g.value_info) + list(g.output) if source else []):
            if vi.HasField("type") and vi.name not in untrusted:
                types[vi.name] = vi.type
    return PreparedModel(model, opset_map(model), types, declared_types(model), weights)
