"""The malformed-input corpus through the C API (issue 12): every case with
run-time inputs is compiled once (in the crash-isolated child, which also
gives the Python outcome of each run) and each run goes through
examples/c/run_model.c in a subprocess. An error from Python must be exit
status 1 from C with the same node-naming message and kind; a result from
Python the same outputs, value for value (onnx_mlir_py/testing/corpus/c_api)."""
from __future__ import annotations

import onnx
import pytest

from onnx_mlir_py.testing.corpus import all_cases
from onnx_mlir_py.testing.corpus.c_api import (build_run_model, c_cases, check_case,
                                               expressible, judge_c_run)

CASES = c_cases(all_cases())


@pytest.fixture(scope="module")
def run_model_exe(tmp_path_factory):
    return build_run_model(str(tmp_path_factory.mktemp("run_model")))


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_through_c(case, run_model_exe, tmp_path, corpus_child):
    rep = check_case(corpus_child, case, run_model_exe, str(tmp_path))
    assert not rep.failures, "\n".join(rep.failures)
    if case.expect == "ok":
        assert rep.compiled, "an 'ok' case did not compile"
    if rep.compiled:
        assert rep.runs + rep.not_expressible == len(case.runs)
        assert rep.errors_matched + rep.outputs_matched == rep.runs


def _n_inputs(case) -> int:
    g = onnx.load_from_string(case.model).graph
    return len({i.name for i in g.input} - {t.name for t in g.initializer})


def test_runtime_runs_reach_c():
    """Every run of the run-time cases goes through C but six of
    Relu/wrong_inputs (0 or 2 inputs, None, a list, strings, objects)."""
    runtime = [c for c in CASES if c.category == "runtime"]
    assert len(runtime) >= 40
    skipped = {(c.name, k) for c in runtime for k, r in enumerate(c.runs)
               if not expressible(r.inputs, _n_inputs(c))}
    assert {n for n, _ in skipped} == {"runtime/Relu/wrong_inputs"} and len(skipped) == 6
    assert sum(len(c.runs) for c in runtime) - len(skipped) >= 150


def test_cli_c_api(capsys):
    from onnx_mlir_py.testing.corpus.__main__ import main
    assert main(["-k", "runtime/Range/delta_zero", "--c-api", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "through C: 1 cases compiled, 3 runs, 1 errors matched, 2 outputs matched" in out, out


# -- the judge fails what it must fail ----------------------------------------
_GATHER = "node 'bad' (Gather): index 4 is out of range [-4, 3] for data axis 0 (size 4)"
_RIE = {"error": {"type": "RuntimeInputError", "message": "run_main_graph failed: " + _GATHER}}


def test_judge_library_errors():
    assert judge_c_run(_RIE, 1, "", f"run failed (errno 22, check): {_GATHER}\n") is None
    assert "SIGSEGV" in judge_c_run(_RIE, -11, "", "")
    assert "status 0" in judge_c_run(_RIE, 0, "output 0 shape=[1] type=1\n1\n", "")
    assert "status 2" in judge_c_run(_RIE, 2, "", "cannot read 4 bytes from x.bin\n")
    other_node = _GATHER.replace("'bad'", "'g2'")
    assert "C says" in judge_c_run(_RIE, 1, "", f"run failed (errno 22, check): {other_node}")
    assert "kind alloc" in judge_c_run(_RIE, 1, "", f"run failed (errno 12, alloc): {_GATHER}")
    oom = {"error": {"type": "ModelRunError", "message": "run_main_graph failed: node 'bad' "
                     "(Pad): out of memory: the model could not allocate 8 bytes"}}
    assert judge_c_run(oom, 1, "", "run failed (errno 12, alloc): " +
                       oom["error"]["message"][23:]) is None


def test_judge_input_errors():
    py = {"error": {"type": "RuntimeInputError", "message": "input 0 ('x'): dimension 1: "
                    "expected 3, got 2 (expected shape [2, 3], got [2, 2])"}}
    c = "run failed (errno 22, other): run_main_graph: input 0 ('x'): dimension {}: " \
        "expected shape [2,3], got [2,2]"
    assert judge_c_run(py, 1, "", c.format(1)) is None
    assert "C says" in judge_c_run(py, 1, "", c.format(0))
    assert "C says" in judge_c_run(py, 1, "", c.format(1).replace("0 ('x')", "1 ('y')"))


def test_judge_outputs():
    import numpy as np
    py = {"outputs": [np.array([0.1, np.nan], np.float64), np.array([2 ** 62 + 1], np.int64)]}
    out = "output 0 shape=[2] type=11\n{}\nnan\noutput 1 shape=[1] type=7\n{}\n"
    assert judge_c_run(py, 0, out.format("0.10000000000000001", 2 ** 62 + 1), "") is None
    assert "values differ" in judge_c_run(py, 0, out.format("0.1000001", 2 ** 62 + 1), "")
    assert "values differ" in judge_c_run(py, 0, out.format("0.10000000000000001", 2 ** 62), "")
    assert "float32" in judge_c_run(py, 0, out.replace("type=11", "type=1").format(0.1, 1), "")
    assert "status 1" in judge_c_run(py, 1, "", "run failed (errno 22, check): x\n")
