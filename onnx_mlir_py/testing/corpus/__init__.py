"""The malformed-input corpus (issue 12): models and inputs a compiler meets
in the wild — damaged files, hostile attributes, bad initializer payloads,
external data pointing outside the model's folder, If branches that disagree,
hostile run-time inputs — each with its asserted outcome (see :mod:`.case`).

    python -m onnx_mlir_py.testing.corpus [-k SUBSTRING] [--jobs N]

runs every case in crash-isolated child processes and lists the failures;
``test/python/corpus/test_malformed_corpus.py`` runs each case as a test.
"""
from __future__ import annotations

from onnx_mlir_py.testing.corpus.case import Case, Run


def all_cases() -> list[Case]:
    from onnx_mlir_py.testing.corpus import (attributes, control, damage, payloads, runtime_inputs,
                                             structure)
    cases = []
    for mod in (damage, attributes, payloads, control, runtime_inputs, structure):
        cases.extend(mod.cases())
    names = [c.name for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    assert not dup, f"duplicate corpus case names: {sorted(dup)}"
    return cases


__all__ = ["Case", "Run", "all_cases"]
