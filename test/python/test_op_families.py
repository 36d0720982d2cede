"""One op, one name: an op family's shape rule
(``dialects/onnx/ops/<family>.py``), verifier and lowering
(``passes/onnx_to_linalg/<family>.py``) share the file stem.

The report lists the rules registered under another stem than their op's
family (the stem of the op's shape rule): places to fix, not a limit the
code is held to, except that the count must not grow.
"""
import os

from onnx_mlir_py import registry

# ops with a shape rule whose verifier or lowering lives under another stem
# (81 before issue 17's renames)
MAX_MISMATCHED_OPS = 0


def _stem(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]


def mismatches() -> list[tuple[str, str, str, str]]:
    """[(op, kind, rule's stem, family stem)] for rules outside their family."""
    out = []
    for (domain, op), kinds in sorted(registry.rules_table().items()):
        if "shape" not in kinds:
            continue
        family = {_stem(registry.source_of("shape", domain, op, v)) for v in kinds["shape"]}
        if len(family) != 1:
            out.append((op, "shape", ",".join(sorted(family)), "?"))
            continue
        (fam,) = family
        for kind in ("verify", "lower"):
            stems = {_stem(registry.source_of(kind, domain, op, v)) for v in kinds.get(kind, {})}
            for s in sorted(stems - {fam}):
                out.append((op, kind, s, fam))
    return out


def test_rules_share_their_family_stem():
    rows = mismatches()
    ops = sorted({r[0] for r in rows})
    if rows:
        print(f"\n{len(ops)} ops have rules outside their family:")
        for op, kind, stem, fam in rows:
            print(f"  {op:28} {kind:7} in {stem}.py, family {fam}")
    assert len(ops) <= MAX_MISMATCHED_OPS, \
        f"{len(ops)} ops with rules outside their family (was {MAX_MISMATCHED_OPS}): {ops}"


def test_report_finds_a_known_mismatch(monkeypatch):
    """The report is not vacuous: a lowering registered under another stem
    than its shape rule's shows up."""
    real = registry.source_of

    def fake(kind, domain, op, v):
        if kind == "lower" and op == "Add":
            return "/x/passes/onnx_to_linalg/somewhere_else.py"
        return real(kind, domain, op, v)
    monkeypatch.setattr(registry, "source_of", fake)
    assert ("Add", "lower", "somewhere_else", "elementwise") in mismatches()
