"""One op, one name: an op family's shape rule
(``dialects/onnx/ops/<family>.py``), verifier and lowering
(``passes/onnx_to_linalg/<family>.py``) share the file stem, and so do its
tests (``test/lit/onnx[-to-linalg]/<family>[_invalid].mlir``,
``test/python/ops/test_<family>.py``, ``test/python/lowering/test_lower_<family>.py``).

The reports list the rules registered under another stem than their op's
family (the stem of the op's shape rule) and the test files named after no
family: places to fix, not a limit the code is held to, except that the
counts must not grow.
"""
import os
import sys
from pathlib import Path

from onnx_mlir_py import registry

# ops with a shape rule whose verifier or lowering lives under another stem
# (81 before issue 17's renames)
MAX_MISMATCHED_OPS = 0
# test files whose stem names no family (nor another module they test)
MAX_STRAY_TEST_FILES = 3

ROOT = Path(__file__).resolve().parents[2]
TEST_DIRS = {"test/lit/onnx": ("", ".mlir"), "test/lit/onnx-to-linalg": ("", ".mlir"),
             "test/python/ops": ("test_", ".py"),
             "test/python/lowering": ("test_lower_", ".py")}
# suffixes of a family's extra test files
TEST_SUFFIXES = ("_invalid", "_dynamic")


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


def _module_stems() -> tuple[set[str], set[str]]:
    """(family stems, stems of the other modules tests may be named after)."""
    families = {p.stem for p in (ROOT / "dialects/onnx/ops").glob("*.py")} - {"__init__"}
    modules = {p.stem for d in ("dialects/onnx", "passes/onnx_to_linalg")
               for p in (ROOT / d).glob("*.py")}
    return families, modules - {"__init__"}


def stray_test_files() -> list[str]:
    """Test files (of TEST_DIRS) whose stem, without the prefix and a suffix
    of TEST_SUFFIXES, is neither an op family nor a module of
    dialects/onnx or passes/onnx_to_linalg."""
    families, modules = _module_stems()
    out = []
    for d, (prefix, ext) in TEST_DIRS.items():
        for p in sorted((ROOT / d).glob(f"*{ext}")):
            name = p.stem
            if ext == ".py" and not name.startswith("test_"):
                continue                           # helpers, conftest
            stem = name[len(prefix):] if name.startswith(prefix) else name[len("test_"):]
            for suffix in TEST_SUFFIXES:
                stem = stem[:-len(suffix)] if stem.endswith(suffix) else stem
            if stem not in families | modules:
                out.append(f"{d}/{p.name}")
    return out


def test_test_files_share_a_family_stem():
    stray = stray_test_files()
    if stray:
        print(f"\n{len(stray)} test files are named after no op family:")
        for f in stray:
            print(f"  {f}")
    assert len(stray) <= MAX_STRAY_TEST_FILES, \
        f"{len(stray)} test files named after no family (was {MAX_STRAY_TEST_FILES}): {stray}"


def test_test_file_report_is_not_vacuous(tmp_path, monkeypatch):
    (tmp_path / "t").mkdir()
    for name in ("test_lower_norms.py", "test_lower_softmax_dynamic.py", "helpers.py"):
        (tmp_path / "t" / name).write_text("")
    monkeypatch.setattr(sys.modules[__name__], "TEST_DIRS", {"t": ("test_lower_", ".py")})
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    monkeypatch.setattr(sys.modules[__name__], "_module_stems",
                        lambda: ({"softmax", "normalization"}, set()))
    assert stray_test_files() == ["t/test_lower_norms.py"]
