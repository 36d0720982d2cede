"""The corpus through the C API (issue 12): every case with run-time inputs
is compiled once (:func:`.runner.run_case` in the crash-isolated child, which
also gives each run's Python outcome and keeps the library), each run's inputs
are written as raw ``.bin`` files and ``examples/c/run_model.c`` runs the
library on them in a subprocess (``file.bin:DIMS:TYPE``). A run must end the
same way from C as from Python:

- Python raises: C exits with status 1 (not 0, not a signal) and says the
  same thing: an error of the model code (``run_main_graph failed: MSG``) with
  the same MSG (node name, op type, values) and the same kind (``check`` for
  a RuntimeInputError); an input the Python runtime refuses before the call
  (dtype, rank, dims) refused by the library's own check, naming the same
  input and the same mismatch.
- Python gives outputs: C exits 0 and prints the same outputs (shape, element
  type and every value, exactly).

Runs the C example cannot express (an input that is not a numpy array of a
signature type, a different number of inputs) are counted, not run.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from onnx_mlir_py.runtime.signature import CODE_TO_DTYPE, SIG_TYPES
from onnx_mlir_py.testing.corpus.case import Case
from onnx_mlir_py.testing.corpus.runner import TIMEOUT, run_case

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "c" / "run_model.c"
ENTRY_FAILED = "run_main_graph failed: "
# (string tensors: run_model reads raw data from files, it cannot pass char*[])
_TYPE_NAME = {dt: name for name, (dt, _) in SIG_TYPES.items() if name != "string"}
_C_ERROR = re.compile(r"^(?:run failed \(errno (\d+), (\w+|\?)\)|cannot create input \d+"
                      r"|cannot create the input list): (.*)$", re.M)
_INPUT = re.compile(r"input (\d+) \('([^']*)'\)")
# the mismatch an input check names: Python's words -> the library's
_MISMATCH = ((r"expected dtype", r"expected element type"), (r"expected rank", r"expected rank"),
             (r"dimension (\d+):", r"dimension (\d+):"))
EINVAL = 22


def c_cases(cases: list[Case]) -> list[Case]:
    """The cases with run-time inputs (compiling them may still fail)."""
    return [c for c in cases if c.runs and c.expect != "error"]


def build_run_model(d: str) -> str:
    """Compile examples/c/run_model.c into ``d``; the executable's path."""
    from onnx_mlir_py.codegen.cwrapper import RUNTIME_DIR
    from onnx_mlir_py.codegen.tools import tool
    if not EXAMPLE.is_file():
        raise FileNotFoundError(f"{EXAMPLE} not found (the C example is part of a source "
                                "checkout, not of an installed package)")
    exe = os.path.join(d, "run_model")
    subprocess.run([tool("gcc"), "-O2", "-Wall", "-Werror", "-o", exe, str(EXAMPLE),
                    f"-I{RUNTIME_DIR}", "-ldl"], check=True, capture_output=True)
    return exe


def expressible(inputs, n_inputs: int) -> bool:
    """Whether run_model can pass these inputs: one numpy array (or scalar)
    of a signature element type per model input."""
    return isinstance(inputs, (list, tuple)) and len(inputs) == n_inputs and all(
        isinstance(x, (np.ndarray, np.generic)) and np.asarray(x).dtype in _TYPE_NAME
        for x in inputs)


def c_args(inputs, d: str, k: int) -> list[str]:
    """run_model's arguments for run ``k`` (raw data in ``d``: tofile writes
    C order, whatever the array's layout)."""
    args = []
    for i, x in enumerate(inputs):
        x = np.asarray(x)
        path = os.path.join(d, f"run{k}_in{i}.bin")
        x.tofile(path)
        args.append(f"{path}:{'x'.join(str(n) for n in x.shape)}:{_TYPE_NAME[x.dtype]}")
    return args


def parse_outputs(text: str) -> list[np.ndarray]:
    """The outputs run_model prints: 'output i shape=[..] type=code' + values."""
    heads = []
    for line in text.splitlines():
        m = re.fullmatch(r"output \d+ shape=\[([-\d,]*)\] type=(\d+)", line)
        if m:
            heads.append(([int(v) for v in m[1].split(",") if v], CODE_TO_DTYPE[int(m[2])], []))
        elif heads:
            heads[-1][2].append(line)
    outs = []
    for shape, dt, vals in heads:
        if dt.kind == "f":
            a = np.array([float(v) for v in vals], np.float64).astype(dt)
        else:
            a = np.array([int(v) for v in vals], np.int64 if dt.kind != "u" else np.uint64)
            a = a.astype(dt)
        outs.append(a.reshape(shape))
    return outs


def _same_outputs(got: list[np.ndarray], want: list[np.ndarray]) -> str | None:
    if len(got) != len(want):
        return f"C prints {len(got)} outputs, Python gives {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"output {i}: C {g.dtype}{list(g.shape)}, Python {w.dtype}{list(w.shape)}"
        if not np.array_equal(g, w, equal_nan=w.dtype.kind == "f"):
            return f"output {i}: {int((g != w).sum())} of {w.size} values differ"
    return None


def _same_error(err: dict, c_errno: int | None, c_kind: str | None, c_msg: str) -> str | None:
    msg = err["message"]
    if msg.startswith(ENTRY_FAILED):          # the library refused: the same message
        want = msg[len(ENTRY_FAILED):]
        if c_msg != want:
            return f"C says {c_msg!r}, Python {want!r}"
        if (c_kind == "check") != (err["type"] == "RuntimeInputError"):
            return f"C error kind {c_kind}, Python raises {err['type']}"
        return None
    # the Python runtime refused the inputs before the call: the library must too
    subject = _INPUT.search(msg)
    if not subject:
        return f"Python's {err['type']} names no input: {msg[:200]!r}"
    if c_errno != EINVAL or subject[0] not in c_msg:
        return f"C says {c_msg!r} (errno {c_errno}), Python {msg!r}"
    for py, c in _MISMATCH:
        pm, cm = re.search(py, msg), re.search(c, c_msg)
        if pm and (not cm or pm.groups() != cm.groups()):
            return f"C says {c_msg!r}, Python {msg!r}"
        if pm:
            return None
    return f"Python's {err['type']} names no mismatch C checks: {msg[:200]!r}"


def judge_c_run(py: dict, rc: int, stdout: str, stderr: str) -> str | None:
    """None when the C run (exit status ``rc``) ends as Python's run ``py``
    ({"outputs": [...]} or {"error": dict}) did, else why not (one line)."""
    if rc < 0:
        try:
            name = signal.Signals(-rc).name
        except ValueError:
            name = f"signal {-rc}"
        return f"C died of {name}: {stderr.strip()[-200:]!r}"
    if "error" in py:
        err = py["error"]
        if rc != 1:
            return f"Python raises {err['type']}, C exits with status {rc}: " \
                   f"{stderr.strip()[-200:]!r}"
        m = _C_ERROR.search(stderr)
        if not m:
            return f"C exits with status 1 without an error line: {stderr.strip()[-200:]!r}"
        return _same_error(err, int(m[1]) if m[1] else None, m[2], m[3])
    if rc != 0:
        return f"Python gives outputs, C exits with status {rc}: {stderr.strip()[-200:]!r}"
    return _same_outputs(parse_outputs(stdout), py["outputs"])


@dataclass
class CReport:
    """One case through C: whether it compiled, what its runs gave."""
    compiled: bool = False
    runs: int = 0                # runs executed through run_model
    errors_matched: int = 0
    outputs_matched: int = 0
    not_expressible: int = 0
    failures: list = field(default_factory=list)


def check_case(worker, case: Case, exe: str, d: str) -> CReport:
    """Compile ``case`` in ``worker`` (a ChildWorker) into ``d``, run each
    run through ``exe`` (run_model) and compare with the Python outcome."""
    rep = CReport()
    so = os.path.join(d, "m.so")
    status, res = worker.call(run_case, (case, so), TIMEOUT)
    if status != "ok":
        rep.failures.append(f"compile child {status}: "
                            f"{res if isinstance(res, str) else res.get('message')}")
        return rep
    if res["compile"] is not None:        # nothing runs (the Python corpus judges it)
        return rep
    rep.compiled = True
    for k, (run, py) in enumerate(zip(case.runs, res["runs"])):
        if not expressible(run.inputs, res["n_inputs"]):
            rep.not_expressible += 1
            continue
        try:
            p = subprocess.run([exe, so, *c_args(run.inputs, d, k)], capture_output=True,
                               text=True, timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            rep.failures.append(f"run {k}: C timed out after {TIMEOUT:.0f} s")
            continue
        rep.runs += 1
        why = judge_c_run(py, p.returncode, p.stdout, p.stderr)
        if why:
            rep.failures.append(f"run {k}: {why}")
        elif "error" in py:
            rep.errors_matched += 1
        else:
            rep.outputs_matched += 1
    return rep
