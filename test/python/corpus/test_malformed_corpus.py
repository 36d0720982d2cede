"""The malformed-input corpus (onnx_mlir_py/testing/corpus, issue 12): every
case runs in a crash-isolated child process (one long-lived child per test
worker runs many cases; a signal there fails the case, not the session) and
must have its asserted outcome: a one-line error of our own classes naming
the node/input/value, or a result that matches onnxruntime. Never a
traceback, a signal or a timeout."""
from __future__ import annotations

import collections

import pytest

from onnx_mlir_py.testing.corpus import all_cases
from onnx_mlir_py.testing.corpus.runner import (TIMEOUT, judge, needs_reference,
                                                ort_reference, run_case)

CASES = all_cases()


def test_corpus_size():
    """At least 200 cases, each category represented (issue 12)."""
    by_cat = collections.Counter(c.category for c in CASES)
    assert len(CASES) >= 200, by_cat
    assert set(by_cat) == {"damage", "attributes", "payloads", "external", "control",
                           "runtime", "structure"}, by_cat


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case(case, corpus_child):
    w = corpus_child
    status, result = w.call(run_case, (case,), TIMEOUT)
    ref = None
    if status == "ok" and result["compile"] is None and needs_reference(case):
        rs, ref = w.call(ort_reference, (case,), TIMEOUT)
        if rs != "ok":
            ref = {"load": f"onnxruntime {rs}: {ref}", "runs": []}
    why = judge(case, status, result, ref)
    assert why is None, why
