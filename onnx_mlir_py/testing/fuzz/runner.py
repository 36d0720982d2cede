"""Compile a model at each optimisation level and run it, both crash-isolated,
and classify what happened against the reference.

Classes (``Finding.kind``), the first five are bugs:

* ``mismatch``    an output differs from the reference (``oracle.compare``);
* ``crash``       the compiler or the compiled model died (abort, signal), or
                  a Python traceback escaped the compiler (InternalCompilerError);
* ``wrong-error`` a clean compile error that calls the (valid) model invalid;
* ``run-error``   the compiled model raised on inputs the reference accepts;
* ``timeout``     compile or run outlived its limit;
* ``refusal``     a clean "not supported" compile error: counted, not a bug;
* ``unstable``    an output differs from the reference only at positions an
                  ill-conditioned computation decides (``conditioning``: a sum
                  whose rounding or summation order, or an op of such a sum
                  within its rounding error, decides the value): not a bug,
                  not a pass either (s2705-30: 1 / a Conv result 1e-5);
* ``ort-deviation`` a mismatch against onnxruntime where ``onnx.reference``
                  agrees with the compiled model (at every position that
                  differs from onnxruntime) (onnxruntime's ReduceMax
                  skips a NaN unless it comes first, for instance): not a bug.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from onnx_mlir_py.backend.cache import CompileCache
from onnx_mlir_py.backend.compile import compile_cached
from onnx_mlir_py.backend.errors import (CompilerCrashError, CompileTimeoutError,
                                         InternalCompilerError)
from onnx_mlir_py.backend.isolate import ChildWorker
from onnx_mlir_py.errors import OnnxMlirError, UnsupportedOpsError
from onnx_mlir_py.testing.fuzz.oracle import (ReferenceUnavailable, compare, reference_outputs,
                                              reference_runner, tolerance, unstable_positions)

BUGS = ("mismatch", "crash", "wrong-error", "run-error", "timeout")
_REFUSAL = re.compile(r"not supported|unsupported|not implemented|only (float|at|one|tensors)",
                      re.I)


@dataclass
class Finding:
    kind: str
    opt: int
    run: str          # the run label ("b0-edge"), "" for compile findings
    detail: str

    def to_dict(self) -> dict:
        return asdict(self)


def _run_library(so: str, feeds_list: list) -> list:
    """In the run child: each input list through one ExecutionSession."""
    from onnx_mlir_py.backend.errors import error_to_dict
    from onnx_mlir_py.runtime import ExecutionSession
    sess = ExecutionSession(so)
    out = []
    for arrays in feeds_list:
        try:
            out.append(("ok", sess.run(arrays)))
        except Exception as e:  # noqa: BLE001 - reported to the parent
            d = error_to_dict(e)
            out.append(("error", f"{d['type']}: {d['message']}"))
    return out


class Evaluator:
    """Reference + compile + run + compare for one model and its runs."""

    def __init__(self, opts=(0, 3), cache_dir=None, compile_timeout: float = 300,
                 run_timeout: float = 120, precision: str = "fp32"):
        self.opts = tuple(opts)
        self.precision = precision      # "bf16": compiled so, compared by bf16_bound
        self.cache = CompileCache(cache_dir)
        self.compile_timeout, self.run_timeout = compile_timeout, run_timeout
        self.worker = ChildWorker(max_calls=40)

    def close(self) -> None:
        self.worker.close()

    def compile(self, model, opt: int) -> tuple[str, str]:
        try:
            options = {"opt_level": opt}
            if self.precision != "fp32":
                options["precision"] = self.precision
            return "ok", str(compile_cached(model, options, cache=self.cache,
                                            timeout=self.compile_timeout))
        except CompileTimeoutError as e:
            return "timeout", str(e)
        except (CompilerCrashError, InternalCompilerError) as e:
            return "crash", str(e)
        except UnsupportedOpsError as e:
            return "refusal", str(e)
        except OnnxMlirError as e:
            return ("refusal" if _REFUSAL.search(str(e)) else "wrong-error"), str(e)

    def expected(self, model, runs) -> tuple[str, list]:
        """(engine, [(run, outputs)]) for the runs the reference accepts;
        raises ReferenceUnavailable if it accepts none."""
        engine, ref = reference_runner(model)
        valid = []
        for run in runs:
            try:
                valid.append((run, ref(run.feeds)))
            except Exception:  # noqa: BLE001 - a run the reference rejects is dropped
                continue
        if not valid:
            raise ReferenceUnavailable(f"{engine} rejects every run")
        return engine, valid

    def evaluate(self, model, runs, expected=None) -> list[Finding]:
        """Findings of ``model`` over ``runs`` (``inputs.Run``) at every opt level;
        ``expected``: the result of :meth:`expected`, if already known."""
        engine, valid = expected if expected is not None else self.expected(model, runs)
        tol = tolerance(model, engine)
        second = {}
        bf16_bounds: dict = {}

        def bf16_mismatches(run, outs, exp, other):
            from onnx_mlir_py.testing.fuzz import bf16_bound
            if id(run) not in bf16_bounds:
                bf16_bounds[id(run)] = bf16_bound.reference_bounds(model, run.feeds, engine)
            e, other = bf16_bounds[id(run)], other if other is not None else [None] * len(exp)
            bad = [f"output {n}: {why}" for n, g, x, s in zip(names, outs, exp, other)
                   if (why := bf16_bound.compare(g, x, e[n])) and
                   (s is None or bf16_bound.compare(g, s, e[n]))]
            return bad, []

        def mismatches(run, outs, exp, other=None):
            """(outputs that differ from ``exp`` (at a position that differs from
            ``other`` too, when given), skipping unstable positions
            (``conditioning``); outputs that differ only at unstable positions)."""
            if len(outs) != len(exp) or (other is not None and len(other) != len(exp)):
                return [f"{len(outs)} outputs, expected {len(exp)}"], []
            if self.precision == "bf16":
                return bf16_mismatches(run, outs, exp, other)
            edge, other = run.kind == "edge", other if other is not None else [None] * len(exp)
            bad = {n: why for n, g, e, s in zip(names, outs, exp, other)
                   if (why := compare(g, e, tol[n], edge, None, s))}
            skip = unstable_of(run) if bad else {}
            real = {n: why for n, g, e, s in zip(names, outs, exp, other)
                    if n in bad and (why := compare(g, e, tol[n], edge, skip.get(n), s))}
            return [f"output {n}: {why}" for n, why in real.items()], \
                [f"output {n}: {why}, each at a position an ill-conditioned computation "
                 f"decides (conditioning)" for n, why in bad.items() if n not in real]

        def unstable_of(run):
            if id(run) not in unstable:
                try:
                    unstable[id(run)] = unstable_positions(model, run.feeds, engine)
                except Exception:  # noqa: BLE001 - no intermediate values: nothing skipped
                    unstable[id(run)] = {}
            return unstable[id(run)]
        unstable: dict = {}

        def second_opinion(run):
            if id(run) not in second:
                try:
                    second[id(run)] = reference_outputs(model, run.feeds)
                except Exception:  # noqa: BLE001 - no second opinion then
                    second[id(run)] = None
            return second[id(run)]
        names = [o.name for o in model.graph.output]
        order = [i.name for i in model.graph.input]
        found = []
        for opt in self.opts:
            status, so = self.compile(model, opt)
            if status != "ok":
                found.append(Finding(status, opt, "", so))
                continue
            feeds = [[run.feeds[n] for n in order] for run, _ in valid]
            status, res = self.worker.call(_run_library, (so, feeds), self.run_timeout)
            if status in ("crash", "timeout"):
                found.append(Finding(status, opt, "run", f"running the model: {res}"))
                continue
            if status == "error":
                found.append(Finding("crash", opt, "run", f"harness: {res.get('message')}"))
                continue
            for (run, exp), (st, got) in zip(valid, res):
                if st == "error":
                    found.append(Finding("run-error", opt, run.label, got))
                    continue
                bad, shaky = mismatches(run, got, exp)
                found += [Finding("unstable", opt, run.label, b) for b in shaky]
                if bad and engine == "onnxruntime":
                    ref = second_opinion(run)
                    both = mismatches(run, got, exp, ref)[0] if ref is not None else bad
                    if not both:
                        found += [Finding("ort-deviation", opt, run.label, b) for b in bad]
                        continue
                    bad = both      # name the positions onnx.reference rejects too
                found += [Finding("mismatch", opt, run.label, b) for b in bad]
        return found


__all__ = ["BUGS", "Evaluator", "Finding", "ReferenceUnavailable"]
