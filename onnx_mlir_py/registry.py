"""Op rules keyed by (kind, domain, op type, since_version).

Each op module registers what it knows with decorators that name the exact
schema versions they handle, so support follows from registered rules and an
old-semantics model is never handled by a newer rule by accident:

    @shape_rule("Gemm", 11, 13)
    def _gemm_shape(op: OnnxOp) -> list[ir.Type]: ...

    @verifier("Gemm", 11, 13)
    def _gemm_verify(op: OnnxOp) -> None: ...   # op.fail("...") on error

Kinds: ``verify`` (semantic checks beyond IRDL), ``shape`` (result types),
``lower`` (ONNX -> upstream MLIR, used by passes/onnx_to_linalg).
``--list-ops`` and docs/ops.md are generated from this table.
"""
from __future__ import annotations

import sys
from typing import Callable

from onnx_mlir_py.dialects.onnx.schema import spec_table

KINDS = ("verify", "shape", "lower")
_RULES: dict[tuple[str, str, str], dict[int, Callable]] = {}
# (kind, domain, op type, version) -> the file that registered that rule
_SOURCES: dict[tuple[str, str, str, int], str] = {}


class RegistryError(Exception):
    """A rule names an op or version that the generated dialect lacks
    (a programming error, raised at import time of the op module)."""


def register(kind: str, op_type: str, *versions: int, domain: str = ""):
    if kind not in KINDS:
        raise RegistryError(f"unknown rule kind {kind!r}")
    known = {s.since_version for s in spec_table().versions(domain, op_type)}
    if not known:
        raise RegistryError(f"{kind} rule for unknown op {domain or 'ai.onnx'}.{op_type}")
    if not versions:
        raise RegistryError(f"{kind} rule for {op_type}: list the schema versions it handles "
                            f"(known: {sorted(known)})")
    bad = [v for v in versions if v not in known]
    if bad:
        raise RegistryError(f"{kind} rule for {op_type}: no schema version(s) {bad} "
                            f"(known: {sorted(known)})")

    def deco(fn: Callable) -> Callable:
        # the module applying the decorator, or registering a table entry
        # (``lowering(op, *vs)(wrapper(body))``): not the wrapper's module
        source = sys._getframe(1).f_globals.get("__file__", "?")
        table = _RULES.setdefault((kind, domain, op_type), {})
        for v in versions:
            if v in table:
                raise RegistryError(f"two {kind} rules for {op_type} v{v}: "
                                    f"{table[v].__qualname__} and {fn.__qualname__}")
            table[v] = fn
            _SOURCES[(kind, domain, op_type, v)] = source
        return fn
    return deco


def shape_rule(op_type: str, *versions: int, domain: str = ""):
    return register("shape", op_type, *versions, domain=domain)


def verifier(op_type: str, *versions: int, domain: str = ""):
    return register("verify", op_type, *versions, domain=domain)


def lowering(op_type: str, *versions: int, domain: str = ""):
    return register("lower", op_type, *versions, domain=domain)


def lookup(kind: str, domain: str, op_type: str, since_version: int) -> Callable | None:
    load_all_rules()
    return _RULES.get((kind, domain, op_type), {}).get(since_version)


def has_lowering(domain: str, op_type: str, since_version: int) -> bool:
    """True if ``lower-to-linalg`` has a rule for this op version (the pass
    ``expand-functions`` expands the ONNX function bodies of ops that have none)."""
    return lookup("lower", domain, op_type, since_version) is not None


def rules_table() -> dict[tuple[str, str], dict[str, dict[int, Callable]]]:
    """{(domain, op_type): {kind: {version: fn}}} for --list-ops and docs."""
    load_all_rules()
    out: dict = {}
    for (kind, domain, op), table in _RULES.items():
        out.setdefault((domain, op), {})[kind] = table
    return out


def source_of(kind: str, domain: str, op_type: str, since_version: int) -> str:
    """The file that registered the rule: for a table-driven rule, the file
    of its table entry, not the file of the shared wrapper function."""
    load_all_rules()
    return _SOURCES.get((kind, domain, op_type, since_version), "?")


_loaded = [False]


def load_all_rules() -> None:
    """Import every op module once (they register on import)."""
    if _loaded[0]:
        return
    _loaded[0] = True
    from onnx_mlir_py.dialects.onnx import ops  # noqa: F401  (verify + shape rules)
    import importlib.util
    if importlib.util.find_spec("onnx_mlir_py.passes.onnx_to_linalg") is not None:
        importlib.import_module("onnx_mlir_py.passes.onnx_to_linalg")  # lowerings
