"""Regression net: allowlisted ONNX backend tests still pass through onnx_mlir_py.backend.

``test/backend/allowlist.json`` ({test: [modes it passes]}) is written by
``python test/conformance/backend_tests.py --update`` (the full run, all
suites and modes). CI runs a representative subset, chosen by this rule:
for each mode, walk the allowlisted tests in order (suite order node,
simple, pytorch-converted, pytorch-operator, real; then by name) and take a
test when its graph has an op (other than Constant) that no test taken
earlier in that mode has; the ``real`` models are left to the full run
(they take minutes each). ``ONNX_MLIR_PY_BACKEND_TESTS=all`` runs every
allowlisted (test, mode) instead.

Each test compiles in a crash-isolated child process (an MLIR abort fails
that test only) through the backend and its cache, and compares outputs like
``onnx.backend.test`` (rtol/atol of the test).
"""
import json
import os
import sys
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "test" / "conformance"))

from cases import MODES, SUITES, load_cases, make_task, run_task  # noqa: E402

ALLOWLIST = json.loads((ROOT / "test" / "backend" / "allowlist.json").read_text())
RESULTS = json.loads((ROOT / "test" / "backend" / "results.json").read_text())
TIMEOUT = 300


def select(allowlist: dict, results: dict, full: bool = False) -> list[tuple[str, str]]:
    """(test, mode) pairs to run (see the module docstring for the rule)."""
    def order(name):
        suite = results.get(name, {}).get("suite", "node")
        return (SUITES.index(suite) if suite in SUITES else len(SUITES), name)
    names = sorted(allowlist, key=order)
    if full:
        return [(n, m) for m in MODES for n in names if m in allowlist[n]]
    out = []
    for mode in MODES:
        covered: set = set()
        for n in names:
            info = results.get(n, {})
            if mode not in allowlist[n] or info.get("suite") == "real":
                continue
            ops = set(info.get("ops", [])) - {"Constant"}
            if ops - covered:
                covered |= ops
                out.append((n, mode))
    return out


SELECTED = select(ALLOWLIST, RESULTS, os.environ.get("ONNX_MLIR_PY_BACKEND_TESTS") == "all")


@lru_cache(maxsize=None)
def _cases(suite: str) -> dict:
    names = {n for n, _ in SELECTED if RESULTS.get(n, {}).get("suite") == suite}
    return {c.name: c for c in load_cases([suite])} if names else {}


@pytest.fixture(scope="module")
def worker():
    from onnx_mlir_py.backend.isolate import ChildWorker
    w = ChildWorker()
    yield w
    w.close()


def test_allowlist_is_consistent():
    assert ALLOWLIST, "empty allowlist: run python test/conformance/backend_tests.py --update"
    for name, modes in ALLOWLIST.items():
        assert modes and set(modes) <= set(MODES), name
        assert name in RESULTS and all(RESULTS[name]["modes"].get(m) == "pass" for m in modes)
    assert len(SELECTED) >= len({m for ms in ALLOWLIST.values() for m in ms})


@pytest.mark.parametrize("name,mode", SELECTED, ids=[f"{n}-{m}" for n, m in SELECTED])
def test_backend(name, mode, worker):
    case = _cases(RESULTS[name]["suite"]).get(name)
    assert case is not None, f"{name} is not a test of the installed onnx"
    status, value = worker.call(run_task, (make_task(case, mode),), TIMEOUT)
    assert status == "ok", f"{name} [{mode}]: {status}: {value}"
    assert value["status"] == "pass", \
        f"{name} [{mode}] passed before, now: {value['category']}: {value['detail']}"
