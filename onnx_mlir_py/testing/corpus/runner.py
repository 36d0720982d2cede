"""Run corpus cases in a crash-isolated child process and judge the outcome.

``run_case`` and ``ort_reference`` are module-level functions sent to a
:class:`~onnx_mlir_py.backend.isolate.ChildWorker` (one long-lived child runs
many cases; a signal or an abort there is reported as ``("crash", ...)`` and
the next case starts a fresh child). ``judge`` turns a case and its results
into None (the outcome is the asserted one) or a one-line failure reason.
"""
from __future__ import annotations

import os
import re
import tempfile
import traceback

import numpy as np

from onnx_mlir_py.testing.corpus.case import Case

TIMEOUT = 120.0
_NOT_OURS = ("InternalCompilerError", "CompilerCrashError", "CompileTimeoutError")


def _error(e: BaseException) -> dict:
    from onnx_mlir_py.errors import OnnxMlirError
    tb = traceback.extract_tb(e.__traceback__)
    where = f"{os.path.basename(tb[-1].filename)}:{tb[-1].lineno}" if tb else "?"
    return {"type": type(e).__name__, "ours": isinstance(e, OnnxMlirError),
            "message": str(e), "where": where}


def _write(d: str, case: Case) -> str:
    path = os.path.join(d, "model.onnx")
    with open(path, "wb") as f:
        f.write(case.model)
    for rel, data in case.files.items():
        p = os.path.join(d, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        if isinstance(data, tuple):          # ("symlink", target)
            os.symlink(data[1], p)
            continue
        with open(p, "wb") as f:
            f.write(data)
    return path


def run_case(case: Case, so_path: str | None = None) -> dict:
    """(child) Compile the case's model and run its inputs: {"compile": error
    dict | None, "runs": [{"outputs": [...]} | {"error": dict}]}. The library
    is kept at ``so_path`` when given (the C-API run uses it)."""
    import warnings

    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory(prefix="corpus-") as d:
        os.makedirs(os.path.join(d, "m"))
        path = _write(os.path.join(d, "m"), case)
        try:
            so = onnx_mlir_py.compile(path, so_path or os.path.join(d, "m.so"),
                                      opt_level=case.opt_level)
            sess = ExecutionSession(so)
        except Exception as e:  # noqa: BLE001 - judged by the caller
            return {"compile": _error(e), "runs": []}
        runs = []
        for r in case.runs:
            try:
                runs.append({"outputs": [np.asarray(a) for a in sess.run(list(r.inputs))]})
            except Exception as e:  # noqa: BLE001
                runs.append({"error": _error(e)})
        return {"compile": None, "runs": runs, "n_inputs": len(sess.input_specs)}


def ort_reference(case: Case) -> dict:
    """(child) onnxruntime's outputs for each run, or why it refused."""
    import onnxruntime as ort
    with tempfile.TemporaryDirectory(prefix="corpus-ort-") as d:
        os.makedirs(os.path.join(d, "m"))
        path = _write(os.path.join(d, "m"), case)
        try:
            opts = ort.SessionOptions()
            opts.log_severity_level = 4
            s = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
        except Exception as e:  # noqa: BLE001
            return {"load": str(e).splitlines()[0] if str(e) else type(e).__name__, "runs": []}
        names = [i.name for i in s.get_inputs()]
        runs = []
        for r in case.runs:
            if r.error is not None or r.expected is not None:
                runs.append({"error": "not run (the case states the outcome)"})
                continue
            try:
                runs.append({"outputs": s.run(None, dict(zip(names, r.inputs)))})
            except Exception as e:  # noqa: BLE001
                runs.append({"error": str(e).splitlines()[0] if str(e) else type(e).__name__})
        return {"load": None, "runs": runs}


def _bad_error(err: dict) -> str | None:
    if not err["ours"] or err["type"] in _NOT_OURS:
        return f"traceback: {err['type']} at {err['where']}: {err['message'][:200]}"
    if "\n" in err["message"].strip():
        return f"{err['type']} message of {err['message'].count(chr(10)) + 1} lines: " \
               f"{err['message'][:200]!r}"
    return None


def _class_ok(err: dict, want: str | None) -> bool:
    if want is None:
        return True
    from onnx_mlir_py import errors
    from onnx_mlir_py.runtime import errors as rt
    cls = getattr(errors, want, None) or getattr(rt, want, None)
    got = getattr(errors, err["type"], None) or getattr(rt, err["type"], None)
    return cls is not None and got is not None and issubclass(got, cls)


def _want_error(err: dict | None, want: str | None, match: str | None, what: str) -> str | None:
    if err is None:
        return f"{what}: expected {want or 'an error'}, it succeeded"
    if not _class_ok(err, want):
        return f"{what}: expected {want}, got {err['type']}: {err['message'][:200]}"
    if match and not re.search(match, err["message"]):
        return f"{what}: message does not match {match!r}: {err['message'][:200]}"
    return None


def compare(got: list, ref: list) -> str | None:
    if len(got) != len(ref):
        return f"{len(got)} outputs, onnxruntime gives {len(ref)}"
    for i, (g, e) in enumerate(zip(got, ref)):
        e = np.asarray(e)
        if g.shape != e.shape or g.dtype != e.dtype:
            return f"output {i}: {g.dtype}{list(g.shape)}, onnxruntime {e.dtype}{list(e.shape)}"
        if e.dtype.kind in "fc":
            if not np.allclose(g, e, rtol=1e-4, atol=1e-5, equal_nan=True):
                return f"output {i}: max abs diff {np.nanmax(np.abs(g - e)):.3g}"
        elif not np.array_equal(g, e):
            return f"output {i}: {int((g != e).sum())} elements differ"
    return None


def judge(case: Case, status: str, result, ref: dict | None) -> str | None:
    """None when ``result`` (``run_case``'s reply: status "ok"|"error"|"crash"|
    "timeout") is the case's asserted outcome, else why not (one line)."""
    if status != "ok":
        return f"{status}: {result if isinstance(result, str) else result.get('message')}"
    comp = result["compile"]
    if comp is not None and (bad := _bad_error(comp)):
        return "compile " + bad
    if case.expect == "error":
        return _want_error(comp, case.error, case.match, "compile")
    if comp is not None:
        return None if case.expect == "clean" else f"compile: unexpected {comp['type']}: " \
                                                   f"{comp['message'][:200]}"
    for k, (run, res) in enumerate(zip(case.runs, result["runs"])):
        err = res.get("error")
        if err is not None and (bad := _bad_error(err)):
            return f"run {k} " + bad
        if run.error is not None:
            if (why := _want_error(err, run.error, run.match, f"run {k}")):
                return why
            continue
        if err is not None:
            if case.expect == "clean":
                continue
            return f"run {k}: unexpected {err['type']}: {err['message'][:200]}"
        if run.expected is not None:
            if (why := compare(res["outputs"], run.expected)):
                return f"run {k}: wrong result: {why}"
            continue
        if ref is None or ref.get("load") is not None:
            why = ref.get("load") if ref else "no reference"
            return f"run {k}: accepted, but onnxruntime refuses the model: {why[:200]}"
        rr = ref["runs"][k]
        if "error" in rr:
            return f"run {k}: gave a result, onnxruntime refuses the inputs: {rr['error'][:200]}"
        if (why := compare(res["outputs"], rr["outputs"])):
            return f"run {k}: wrong result: {why}"
    return None


def needs_reference(case: Case) -> bool:
    return case.expect != "error" and any(r.error is None and r.expected is None
                                          for r in case.runs)
