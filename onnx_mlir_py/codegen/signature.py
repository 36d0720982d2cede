"""The entry point's signature: names, element types and shapes of ``@main_graph``.

Read from the tensor-level module *before* any MLIR pass runs, and validated
in pure Python so that malformed input raises :class:`CompileError` instead of
aborting the process inside MLIR. The same data feeds the generated C wrapper
(input checks, ``ONNX_TYPE_*`` codes) and the JSON signatures returned by
``omInputSignature`` / ``omOutputSignature`` (onnx-mlir's format).
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import mlir.ir as ir

from onnx_mlir_py.errors import CompileError
# set by LoweringContext.require
from onnx_mlir_py.check_abi import CHECKS_ATTR
from onnx_mlir_py.ir_util import module_strings

ENTRY_NAME = "main_graph"
# TensorSpec.kind, in the order of the C runtime's OM_KIND_* codes
KINDS = ("tensor", "seq", "opt", "opt_seq")

# ONNX type name -> (signature type string as onnx-mlir prints it, ONNX_TYPE code, bytes).
ONNX_DTYPES: dict[str, tuple[str, int, int]] = {
    "float": ("f32", 1, 4), "uint8": ("ui8", 2, 1), "int8": ("i8", 3, 1),
    "uint16": ("ui16", 4, 2), "int16": ("i16", 5, 2), "int32": ("i32", 6, 4),
    "int64": ("i64", 7, 8), "bool": ("i1", 9, 1), "float16": ("f16", 10, 2),
    "double": ("f64", 11, 8), "uint32": ("ui32", 12, 4), "uint64": ("ui64", 13, 8),
    "bfloat16": ("bf16", 16, 2),
    # one element per byte in memory (ml_dtypes' layout; the packed 4-bit /
    # 2-bit form exists only in TensorProto); lowered as i8 + onnx.dtype
    "float8e4m3fn": ("f8E4M3FN", 17, 1), "float8e4m3fnuz": ("f8E4M3FNUZ", 18, 1),
    "float8e5m2": ("f8E5M2", 19, 1), "float8e5m2fnuz": ("f8E5M2FNUZ", 20, 1),
    "uint4": ("ui4", 21, 1), "int4": ("i4", 22, 1), "float4e2m1": ("f4E2M1FN", 23, 1),
    "float8e8m0": ("f8E8M0FNU", 24, 1), "uint2": ("ui2", 25, 1), "int2": ("i2", 26, 1),
    # char *[]: one pointer to a NUL-terminated UTF-8 string per element (as
    # onnx-mlir); lowered as i64 + onnx.dtype "string" (docs/design.md)
    "string": ("string", 8, 8),
}
# MLIR element type text -> ONNX type name (signless ints read as signed).
MLIR_TO_ONNX: dict[str, str] = {
    "f32": "float", "f64": "double", "f16": "float16", "i1": "bool",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "si8": "int8", "si16": "int16", "si32": "int32", "si64": "int64",
    "ui8": "uint8", "ui16": "uint16", "ui32": "uint32", "ui64": "uint64", "bf16": "bfloat16",
}
_SIG_TO_ONNX = {sig: name for name, (sig, _, _) in ONNX_DTYPES.items()}
_ALIASES = {"float32": "float", "float64": "double", "boolean": "bool", "half": "float16"}


@dataclass(frozen=True)
class TensorSpec:
    """One input or output of the entry point."""
    name: str
    onnx_type: str          # "float", "int64", "bool", "uint8", ...
    dims: tuple[int, ...]   # -1 for a dynamic dimension
    mlir_type: str          # element type in the MLIR signature ("f32", "i8", ...)
    # (dim, name) of the dynamic dims with an ONNX dim_param: dims of the
    # inputs with the same name must be equal (checked by the entry point)
    dim_params: tuple[tuple[int, str], ...] = ()
    # "tensor", or a sequence / optional value ("seq", "opt", "opt_seq")
    # whose elements the other fields describe (an !llvm.ptr in @main_graph)
    kind: str = "tensor"
    unranked: bool = False   # elements of any rank (a sequence's only)
    # an output that was a ZipMap (ai.onnx.ml) of this [N, C] tensor: its C
    # class labels; the Python runtime returns a list of {label: score} dicts
    zipmap: tuple = ()
    # an int64 output of indices into these (string) class labels; the Python
    # runtime returns the labels (a string class-label output of ai.onnx.ml)
    labels: tuple = ()

    @property
    def sig_type(self) -> str:
        return ONNX_DTYPES[self.onnx_type][0]

    @property
    def type_code(self) -> int:
        return ONNX_DTYPES[self.onnx_type][1]

    @property
    def elem_size(self) -> int:
        return ONNX_DTYPES[self.onnx_type][2]

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def c_rank(self) -> int:
        return -1 if self.unranked else self.rank

    @property
    def kind_code(self) -> int:
        return KINDS.index(self.kind)

    @property
    def words(self) -> int:
        """8-byte words of this result in @main_graph's returned struct."""
        return 3 + 2 * self.rank if self.kind == "tensor" else 1

    def to_json_obj(self) -> dict:
        d = {"type": self.sig_type, "dims": None if self.unranked else list(self.dims),
             "name": self.name}
        if self.kind != "tensor":
            d["kind"] = self.kind
        if self.zipmap:
            d["zipmap"] = list(self.zipmap)
        if self.labels:
            d["labels"] = list(self.labels)
        return d


@dataclass(frozen=True)
class EntrySignature:
    """Inputs and outputs of the entry function."""
    entry: str
    inputs: tuple[TensorSpec, ...]
    outputs: tuple[TensorSpec, ...]
    # messages of the run-time checks in the model code, by check id
    checks: tuple[str, ...] = ()

    def dim_ties(self) -> list[tuple[int, int, int, int, str]]:
        """``(i, k, j, l, name)``: dim k of input i must equal dim l of input j
        (the first input dim named ``name``), for every later dim of that name."""
        first: dict[str, tuple[int, int]] = {}
        ties = []
        for i, t in enumerate(self.inputs):
            for k, name in t.dim_params:
                if name in first:
                    ties.append((i, k, *first[name], name))
                else:
                    first[name] = (i, k)
        return ties

    def input_json(self) -> str:
        return json.dumps([t.to_json_obj() for t in self.inputs])

    def output_json(self) -> str:
        return json.dumps([t.to_json_obj() for t in self.outputs])


def entry_or_none(module: ir.Module, entry: str = ENTRY_NAME,
                  op_name: str = "func.func") -> ir.Operation | None:
    """The ``func.func @<entry>`` of ``module`` (a declaration too; ``op_name``:
    another function op, ``llvm.func`` after the LLVM lowering), or None."""
    for op in module.body.operations:
        op = op.operation
        if op.name == op_name and "sym_name" in op.attributes and \
                op.attributes["sym_name"].value == entry:
            return op
    return None


def find_entry(module: ir.Module, entry: str = ENTRY_NAME) -> ir.Operation:
    """The ``func.func @<entry>`` of ``module``; CompileError if absent."""
    op = entry_or_none(module, entry)
    if op is None:
        raise CompileError(f"the module has no func.func @{entry}")
    if len(op.regions[0].blocks) == 0:
        raise CompileError(f"@{entry} is a declaration without a body")
    return op


def _attr_dict(arr_attr, i: int) -> dict[str, str]:
    if arr_attr is None:
        return {}
    d = arr_attr[i]
    if not isinstance(d, ir.DictAttr):
        return {}
    out = {}
    for key in ("onnx.name", "onnx.dtype", "onnx.dim_params", "onnx.type", "onnx.zipmap",
                "onnx.labels"):
        if key in d:
            a = d[key]
            if not isinstance(a, ir.StringAttr):
                raise CompileError(f"attribute {key} must be a string, got {a}")
            out[key] = a.value
    return out


def _value_kind(what: str, text: str) -> tuple[str, str]:
    """``!onnx.seq<tensor<?xf32>>`` -> ("seq", "tensor<?xf32>"), from the
    ``onnx.type`` attribute of a sequence / optional argument or result."""
    kind, inner = [], text
    for box, name in (("!onnx.opt<", "opt"), ("!onnx.seq<", "seq")):
        if inner.startswith(box) and inner.endswith(">"):
            kind.append(name)
            inner = inner[len(box):-1]
    k = "_".join(kind)
    if k not in KINDS[1:] or not inner.startswith("tensor<"):
        raise CompileError(f"{what}: unsupported value type {text} (tensors, sequences of "
                           "tensors and optionals of either are supported)")
    return k, inner


def _value_spec(kind: str, i: int, attrs: dict[str, str], ctx: ir.Context) -> TensorSpec:
    """A sequence / optional argument or result: its elements' type."""
    name = attrs.get("onnx.name", f"{kind}_{i}")
    what = f"{kind} #{i} ('{name}')"
    vkind, inner = _value_kind(what, attrs["onnx.type"])
    t = ir.Type.parse(inner, context=ctx)
    elem = str(t.element_type)
    onnx_type = _SIG_TO_ONNX.get(elem.replace("si", "i") if elem.startswith("si") else elem)
    if onnx_type is None:
        raise CompileError(f"{what}: unsupported element type {elem}")
    if isinstance(t, ir.UnrankedTensorType):
        return TensorSpec(name, onnx_type, (), elem, (), vkind, True)
    dims = tuple(-1 if t.is_dynamic_dim(k) else t.shape[k] for k in range(t.rank))
    return TensorSpec(name, onnx_type, dims, elem, (), vkind)


def _spec(kind: str, i: int, ty: ir.Type, attrs: dict[str, str]) -> TensorSpec:
    what = f"{kind} #{i}"
    if str(ty) == "!llvm.ptr" and "onnx.type" in attrs:
        return _value_spec(kind, i, attrs, ty.context)
    if not isinstance(ty, ir.RankedTensorType):
        raise CompileError(f"{what} of @{ENTRY_NAME} must be a ranked tensor, got {ty}")
    rt = ty
    elem = str(rt.element_type)
    name = attrs.get("onnx.name", f"{kind}_{i}")
    what = f"{kind} #{i} ('{name}')"
    if elem not in MLIR_TO_ONNX:
        raise CompileError(f"{what}: unsupported element type {elem} "
                           f"(supported: {', '.join(sorted(MLIR_TO_ONNX))})")
    onnx_type = attrs.get("onnx.dtype", MLIR_TO_ONNX[elem]).lower()
    onnx_type = _ALIASES.get(onnx_type, onnx_type)
    if onnx_type not in ONNX_DTYPES:
        raise CompileError(f"{what}: unsupported onnx.dtype '{onnx_type}'")
    if ONNX_DTYPES[onnx_type][2] != ONNX_DTYPES[MLIR_TO_ONNX[elem]][2]:
        raise CompileError(f"{what}: onnx.dtype '{onnx_type}' does not match "
                           f"the element type {elem}")
    dims = tuple(-1 if rt.is_dynamic_dim(k) else rt.shape[k] for k in range(rt.rank))
    zipmap = tuple(json.loads(attrs["onnx.zipmap"])) if "onnx.zipmap" in attrs else ()
    labels = tuple(json.loads(attrs["onnx.labels"])) if "onnx.labels" in attrs else ()
    return TensorSpec(name, onnx_type, dims, elem,
                      _parse_dim_params(what, attrs.get("onnx.dim_params", ""), dims),
                      zipmap=zipmap, labels=labels)


def _parse_dim_params(what: str, text: str, dims: tuple[int, ...]) -> tuple:
    """``"0:batch,2:seq"`` -> ``((0, "batch"), (2, "seq"))`` (dynamic dims only:
    a static dim is checked against the signature already)."""
    out = []
    for item in filter(None, text.split(",")):
        k, sep, name = item.partition(":")
        if not sep or not k.isdigit() or not name:
            raise CompileError(f"{what}: malformed onnx.dim_params '{text}'")
        k = int(k)
        if k >= len(dims):
            raise CompileError(f"{what}: onnx.dim_params '{text}' names dim {k} of a "
                               f"rank-{len(dims)} tensor")
        if dims[k] < 0:
            out.append((k, name))
    return tuple(out)


def extract_signature(module: ir.Module, entry: str = ENTRY_NAME) -> EntrySignature:
    """Validate ``@entry`` against the backend's input contract and describe it."""
    op = find_entry(module, entry)
    fty = op.attributes["function_type"].value
    arg_attrs = op.attributes["arg_attrs"] if "arg_attrs" in op.attributes else None
    res_attrs = op.attributes["res_attrs"] if "res_attrs" in op.attributes else None
    ins = tuple(_spec("input", i, t, _attr_dict(arg_attrs, i)) for i, t in enumerate(fty.inputs))
    outs = tuple(_spec("output", i, t, _attr_dict(res_attrs, i))
                 for i, t in enumerate(fty.results))
    if not outs:
        raise CompileError(f"@{entry} has no results")
    return EntrySignature(entry, ins, outs, check_messages(module))


def check_messages(module: ir.Module) -> tuple[str, ...]:
    return module_strings(module, CHECKS_ATTR) or ()
