"""``OpSpec``: what the dialect knows about one (domain, op, since_version).

Built from ``onnx.defs`` by the generator (``irdl_gen.py``) and stored in the
checked-in ``generated/ops.json``, so the compiler never depends on the
schemas of whatever onnx version the user happens to have installed.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, asdict
from functools import lru_cache
from pathlib import Path

from onnx_mlir_py.dialects.onnx.naming import mlir_op_name, value_name

GENERATED_DIR = Path(__file__).parent / "generated"
SPECS_JSON = GENERATED_DIR / "ops.json"
IRDL_FILE = GENERATED_DIR / "onnx.irdl.mlir"

SINGLE, OPTIONAL, VARIADIC = "single", "optional", "variadic"

# IRDL (MLIR 22) binds one type per constraint variable, so a `variadic`
# group would force all its values to one type (Concat of a 2x3 and a 4x3
# tensor would not verify). A variadic ONNX input/output is therefore
# declared as VARIADIC_SLOTS optional operands, each with its own constraint,
# and ops with one carry operandSegmentSizes/resultSegmentSizes.
VARIADIC_SLOTS = 64


def segment_sizes(values: list, counts: list[int]) -> list[int]:
    """Per-ONNX-value counts -> IRDL segment sizes (variadic -> slots)."""
    out = []
    for v, n in zip(values, counts):
        if v.option == VARIADIC:
            out.extend([1] * n + [0] * (VARIADIC_SLOTS - n))
        else:
            out.append(n)
    return out


def needs_segments(values: list) -> bool:
    return any(v.option == VARIADIC for v in values) or \
        sum(v.option != SINGLE for v in values) > 1


def group_values(op_attrs, seg_attr: str, values: list, flat: list) -> list[list]:
    """Inverse of segment_sizes: IR operands/results -> one list per ONNX value."""
    if seg_attr in op_attrs:
        sizes = list(op_attrs[seg_attr])
        counts, pos = [], 0
        for v in values:
            if v.option == VARIADIC:
                counts.append(sum(sizes[pos:pos + VARIADIC_SLOTS]))
                pos += VARIADIC_SLOTS
            else:
                counts.append(sizes[pos])
                pos += 1
    else:
        n_single = sum(v.option == SINGLE for v in values)
        rest = len(flat) - n_single
        counts = [1 if v.option == SINGLE else rest for v in values]
    out, pos = [], 0
    for n in counts:
        out.append(flat[pos:pos + n])
        pos += n
    return out

# ONNX AttrType names -> short kind used in specs.
ATTR_KINDS = {
    "INT": "int", "FLOAT": "float", "STRING": "string", "INTS": "ints",
    "FLOATS": "floats", "STRINGS": "strings", "TENSOR": "tensor",
    "SPARSE_TENSOR": "sparse_tensor", "GRAPH": "graph", "GRAPHS": "graphs",
    "TYPE_PROTO": "type", "TYPE_PROTOS": "types", "TENSORS": "tensors",
    "SPARSE_TENSORS": "sparse_tensors",
}


@dataclass
class ValueSpec:
    name: str            # IRDL (lowercase) name
    onnx_name: str
    option: str          # single | optional | variadic
    type_str: str        # type parameter ("T") or literal type ("tensor(int64)")
    homogeneous: bool = True
    min_arity: int = 1


@dataclass
class AttrSpec:
    name: str
    kind: str            # see ATTR_KINDS values
    required: bool
    default: object = None   # JSON value, None when no default

    @property
    def has_default(self) -> bool:
        return self.default is not None


@dataclass
class OpSpec:
    domain: str
    op_type: str
    since_version: int
    mlir_name: str
    inputs: list[ValueSpec]
    outputs: list[ValueSpec]
    attributes: dict[str, AttrSpec]
    type_constraints: dict[str, list[str]]
    min_input: int = 0
    max_input: int = 0
    min_output: int = 0
    max_output: int = 0
    has_function: bool = False
    deprecated: bool = False
    newest: bool = True

    @property
    def regions(self) -> list[str]:
        return [a.name for a in self.attributes.values() if a.kind == "graph"]

    def allowed_types(self, v: ValueSpec) -> list[str]:
        return self.type_constraints.get(v.type_str, [v.type_str])

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.domain, self.op_type, self.since_version)


# --------------------------------------------------------------------------
# Generator side: onnx.defs -> OpSpec
# --------------------------------------------------------------------------
def _option(p) -> str:
    # onnx.defs and onnxruntime's schema objects name the same enum values
    return {"Single": SINGLE, "Optional": OPTIONAL,
            "Variadic": VARIADIC}[str(p.option).rsplit(".", 1)[-1]]


def _default_value(a):
    import onnx
    import onnx.helper
    default = getattr(a, "default_value", None)
    if default is None:   # onnxruntime's schemas: a serialised AttributeProto
        raw = getattr(a, "_default_value", b"")
        default = onnx.AttributeProto.FromString(raw) if raw else onnx.AttributeProto()
    if not default.name:
        return None
    v = onnx.helper.get_attribute_value(default)
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, (list, tuple)):
        return [x.decode("utf-8", "replace") if isinstance(x, bytes) else x for x in v]
    if isinstance(v, (int, float, str)):
        return v
    return None  # tensor/graph defaults are not materialised


def spec_from_schema(schema, newest: bool) -> OpSpec:
    def values(params):
        return [ValueSpec(value_name(p.name), p.name, _option(p),
                          getattr(p, "type_str", None) or p.typeStr,
                          bool(getattr(p, "is_homogeneous", getattr(p, "isHomogeneous", True))),
                          int(getattr(p, "min_arity", 1)))
                for p in params]
    inputs, outputs = values(schema.inputs), values(schema.outputs)
    taken = {v.name for v in inputs}
    for v in outputs:  # IRDL forbids an operand and a result of the same name
        while v.name in taken:
            v.name += "_out"
        taken.add(v.name)
    attrs = {}
    for name, a in sorted(schema.attributes.items()):
        kind = ATTR_KINDS[str(a.type).split(".")[-1]]
        attrs[name] = AttrSpec(name, kind, bool(a.required), _default_value(a))
    return OpSpec(
        domain=schema.domain or "",
        op_type=schema.name,
        since_version=schema.since_version,
        mlir_name=mlir_op_name(schema.domain or "", schema.name,
                               None if newest else schema.since_version),
        inputs=inputs,
        outputs=outputs,
        attributes=attrs,
        type_constraints={t.type_param_str: list(t.allowed_type_strs)
                          for t in schema.type_constraints},
        min_input=schema.min_input, max_input=min(schema.max_input, 2**31 - 1),
        min_output=schema.min_output, max_output=min(schema.max_output, 2**31 - 1),
        has_function=bool(getattr(schema, "has_function", False)
                          or getattr(schema, "has_context_dependent_function", False)),
        deprecated=bool(schema.deprecated),
        newest=newest,
    )


def specs_from_onnx_defs() -> list[OpSpec]:
    import onnx.defs as defs
    from onnx_mlir_py.dialects.onnx.naming import DOMAIN_TO_DIALECT, ORT_DOMAINS
    return _specs_by_version(s for s in defs.get_all_schemas_with_history()
                             if (s.domain or "") in DOMAIN_TO_DIALECT
                             and (s.domain or "") not in ORT_DOMAINS)


def specs_from_onnxruntime() -> list[OpSpec]:
    """The contrib ops of onnxruntime (``com.microsoft``, and the few it adds
    to the default domain, ``naming.ORT_DEFAULT_DOMAIN_OPS``), from the
    schemas onnxruntime registers (``get_all_operator_schema``)."""
    from onnxruntime.capi.onnxruntime_pybind11_state import get_all_operator_schema
    from onnx_mlir_py.dialects.onnx.naming import ORT_DEFAULT_DOMAIN_OPS, ORT_DOMAINS
    return _specs_by_version(
        s for s in get_all_operator_schema()
        if s.domain in ORT_DOMAINS or (s.domain == "" and s.name in ORT_DEFAULT_DOMAIN_OPS))


def _specs_by_version(schemas) -> list[OpSpec]:
    by_op: dict[tuple[str, str], list] = {}
    for s in schemas:
        by_op.setdefault((s.domain or "", s.name), []).append(s)
    out = []
    for key in sorted(by_op):
        versions = sorted(by_op[key], key=lambda s: s.since_version)
        for s in versions:
            out.append(spec_from_schema(s, newest=s is versions[-1]))
    return out


# --------------------------------------------------------------------------
# Runtime side: ops.json -> OpSpec
# --------------------------------------------------------------------------
def specs_to_json(specs: list[OpSpec], onnx_version: str, ort_version: str) -> str:
    # One op per line keeps diffs of regenerated tables readable.
    ops = ",\n".join(json.dumps(asdict(s), sort_keys=True) for s in specs)
    return (f'{{"onnx_version": "{onnx_version}", "onnxruntime_version": "{ort_version}", '
            f'"ops": [\n{ops}\n]}}\n')


def _spec_from_dict(d: dict) -> OpSpec:
    d = dict(d)
    d["inputs"] = [ValueSpec(**v) for v in d["inputs"]]
    d["outputs"] = [ValueSpec(**v) for v in d["outputs"]]
    d["attributes"] = {k: AttrSpec(**v) for k, v in d["attributes"].items()}
    return OpSpec(**d)


class SpecTable:
    """All op specs, indexed for the importer and the passes."""

    def __init__(self, specs: list[OpSpec], onnx_version: str):
        self.onnx_version = onnx_version
        self.specs = specs
        self.by_mlir_name = {s.mlir_name: s for s in specs}
        self._versions: dict[tuple[str, str], list[OpSpec]] = {}
        for s in specs:
            self._versions.setdefault((s.domain, s.op_type), []).append(s)
        for v in self._versions.values():
            v.sort(key=lambda s: s.since_version)

    def versions(self, domain: str, op_type: str) -> list[OpSpec]:
        return self._versions.get((_norm_domain(domain), op_type), [])

    def resolve(self, domain: str, op_type: str, opset: int) -> OpSpec | None:
        """Highest version <= opset (ONNX's own dispatch rule)."""
        best = None
        for s in self.versions(domain, op_type):
            if s.since_version <= opset:
                best = s
        return best

    def op_types(self) -> list[tuple[str, str]]:
        return sorted(self._versions)


def _norm_domain(domain: str) -> str:
    return "" if domain in ("", "ai.onnx") else domain


@lru_cache(maxsize=1)
def spec_table() -> SpecTable:
    data = json.loads(SPECS_JSON.read_text())
    return SpecTable([_spec_from_dict(d) for d in data["ops"]], data["onnx_version"])
