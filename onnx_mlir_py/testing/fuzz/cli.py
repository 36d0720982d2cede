"""``python -m onnx_mlir_py.testing.fuzz``: generate, check, reduce, save.

    python -m onnx_mlir_py.testing.fuzz --seed 1 --count 100 --opt 0 3 --out fuzz-out
    python -m onnx_mlir_py.testing.fuzz --seed 1 --start 42 --count 1   # case 42 again
    python -m onnx_mlir_py.testing.fuzz --precision bf16 --seed 1 --count 100

``--precision bf16`` compiles with ``--precision bf16`` and draws only the
bf16 mode's specs (``ops/bf16.py``: MatMul / Gemm / Conv and what may follow
them), each case also running on denormal inputs; the oracle is the f32
reference and an error bound per output element (``bf16_bound``).

Case ``i`` of seed ``s`` is the same graph and inputs on every run. Each
bug is reduced (``reducer``) and saved as ``<out>/<kind>-s<seed>-<i>-O<opt>/``
with ``model.onnx`` + ``inputs.npz`` (as generated), ``reduced.onnx`` +
``reduced_inputs.npz``, and ``summary.json`` (one line). ``<out>/results.jsonl``
has one line per case. Exit status 1 when a bug was found.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
import warnings
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

import numpy as np
import onnx

from onnx_mlir_py.testing.fuzz.generator import check, generate
from onnx_mlir_py.testing.fuzz.inputs import Run, make_runs
from onnx_mlir_py.testing.fuzz.runner import BUGS, Evaluator, ReferenceUnavailable

_SEVERITY = ["crash", "mismatch", "run-error", "wrong-error", "timeout"]
_ev: Evaluator | None = None
_cfg: dict = {}


def _signature(detail: str) -> str:
    return re.sub(r"'[^']*'|\d+", "", detail)[:80]


def same_bug(f, target) -> bool:
    if f.kind != target.kind or f.opt != target.opt:
        return False
    return f.kind not in ("crash", "wrong-error") or _signature(f.detail) == \
        _signature(target.detail)


def save_runs(path: str, runs: list[Run]) -> None:
    arrays = {f"run{k}__{name}": a for k, r in enumerate(runs) for name, a in r.feeds.items()}
    arrays["labels"] = np.array([f"{r.binding}:{r.kind}" for r in runs])
    np.savez(path, **arrays)


def load_runs(path: str) -> list[Run]:
    """The runs saved by :func:`save_runs` (a reproducer's inputs)."""
    with np.load(path) as z:
        labels = [str(x) for x in z["labels"]]
        runs = [Run(int(lb.split(":")[0]), lb.split(":")[1], {}) for lb in labels]
        for key in z.files:
            if key != "labels":
                k, name = key.split("__", 1)
                runs[int(k[3:])].feeds[name] = z[key]
    return runs


def _init(cfg: dict) -> None:
    global _ev, _cfg
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    _cfg = cfg
    _ev = Evaluator(cfg["opts"], cfg["cache"], cfg["timeout"], cfg["timeout"],
                    cfg.get("precision", "fp32"))


def _save(case, runs, target, findings, out: str) -> dict:
    d = os.path.join(out, f"{target.kind}-{case.name}-O{target.opt}")
    os.makedirs(d, exist_ok=True)
    onnx.save(case.model, os.path.join(d, "model.onnx"))
    save_runs(os.path.join(d, "inputs.npz"), runs)
    summary = {"case": case.name, "seed": case.seed, "index": case.index, **target.to_dict(),
               "ops": case.ops(), "nodes": len(case.model.graph.node),
               "repro": f"python -m onnx_mlir_py.testing.fuzz --seed {case.seed} "
                        f"--start {case.index} --count 1 --opt {target.opt}" +
                        (f" --precision {_cfg['precision']}"
                         if _cfg.get("precision", "fp32") != "fp32" else "")}
    if _cfg.get("reduce", True):
        from onnx_mlir_py.testing.fuzz.reducer import reduce
        single = Evaluator((target.opt,), _cfg["cache"], _cfg["timeout"], _cfg["timeout"],
                           _cfg.get("precision", "fp32"))
        try:
            def fails(m, rs):
                try:
                    return any(same_bug(f, target) for f in single.evaluate(m, rs))
                except ReferenceUnavailable:
                    return False
            m, rs = reduce(case.model, runs, fails)
        finally:
            single.close()
        onnx.save(m, os.path.join(d, "reduced.onnx"))
        save_runs(os.path.join(d, "reduced_inputs.npz"), rs)
        summary["reduced_nodes"] = len(m.graph.node)
        summary["reduced_ops"] = sorted({n.op_type for n in m.graph.node})
    with open(os.path.join(d, "summary.json"), "w") as f:
        f.write(json.dumps(summary) + "\n")
    return summary


def fuzz_case(seed: int, index: int) -> dict:
    """Generate, check and evaluate case ``index`` of ``seed``; reduce and
    save the most severe bug. Returns the case's record."""
    t0 = time.monotonic()
    cfg = _cfg
    try:
        case = generate(seed, index, cfg["max_nodes"], cfg.get("opset"), cfg.get("ops"))
    except Exception as e:  # noqa: BLE001 - a generator bug: recorded, the run goes on
        return {"case": f"s{seed}-{index}", "ops": [], "nodes": 0, "status": "generator-error",
                "detail": f"{type(e).__name__}: {e}"[:300]}
    rec = {"case": case.name, "ops": case.ops(), "nodes": len(case.model.graph.node)}
    try:
        check(case.model)
    except Exception as e:  # noqa: BLE001 - a generator bug, reported as such
        return {**rec, "status": "invalid", "detail": str(e).splitlines()[0][:300]}
    runs = make_runs(case, tiny=cfg.get("precision") == "bf16")
    try:
        engine, valid = _ev.expected(case.model, runs)
    except ReferenceUnavailable as e:
        return {**rec, "status": "no-reference", "detail": str(e)[:300]}
    findings = _ev.evaluate(case.model, runs, (engine, valid))
    rec.update(engine=engine, runs=len(valid), findings=[f.to_dict() for f in findings])
    bugs = sorted((f for f in findings if f.kind in BUGS), key=lambda f: _SEVERITY.index(f.kind))
    kinds = sorted({f.kind for f in findings})
    rec["status"] = ",".join(kinds) if kinds else "ok"
    if bugs and cfg.get("out"):
        rec["saved"] = _save(case, [r for r, _ in valid], bugs[0], findings, cfg["out"])
    rec["seconds"] = round(time.monotonic() - t0, 2)
    return rec


def _line(rec: dict) -> str:
    s = f"{rec['case']}: {rec['status']} ({rec['nodes']} nodes)"
    for f in rec.get("findings", [])[:2]:
        s += f"\n    {f['kind']} -O{f['opt']} {f['run']}: {f['detail'][:240]}"
    if rec.get("detail"):
        s += f"\n    {rec['detail'][:240]}"
    if "saved" in rec:
        s += f"\n    reduced to {rec['saved'].get('reduced_nodes')} nodes " \
             f"{rec['saved'].get('reduced_ops')}"
    return s


def replay(dirs: list[str], opts, timeout: float, precision: str = "fp32") -> int:
    """Evaluate saved reproducers again; prints their findings, 1 if any is a bug."""
    ev = Evaluator(opts, None, timeout, timeout, precision)
    bad = 0
    try:
        for d in dirs:
            if not os.path.exists(os.path.join(d, "reduced.onnx")):
                print(f"{d}: no reduced.onnx (a run stopped while reducing?): skipped")
                continue
            m = onnx.load(os.path.join(d, "reduced.onnx"))
            found = ev.evaluate(m, load_runs(os.path.join(d, "reduced_inputs.npz")))
            bugs = [f for f in found if f.kind in BUGS]
            bad += bool(bugs)
            shown = bugs or [f for f in found if f.kind != "unstable"] or found
            print(f"{d}: " + ("; ".join(f"{f.kind} -O{f.opt} {f.run}: {f.detail[:200]}"
                                        for f in shown) or "ok"))
    finally:
        ev.close()
    return 1 if bad else 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m onnx_mlir_py.testing.fuzz",
                                description=__doc__.split("\n")[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--start", type=int, default=0, help="first case index")
    p.add_argument("--count", type=int, default=20)
    p.add_argument("--opt", type=int, nargs="+", default=[0, 3])
    p.add_argument("--max-nodes", type=int, default=16)
    p.add_argument("--opset", type=int, default=None, help="default: drawn per case")
    p.add_argument("--ops", nargs="+", default=None, help="only these op specs")
    p.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                   help="bf16: compile with --precision bf16, the bf16 specs, bf16_bound")
    p.add_argument("--out", default="fuzz-out")
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--timeout", type=float, default=300, help="per compile / run, seconds")
    p.add_argument("--no-reduce", action="store_true")
    p.add_argument("--cache", default=None, help="compile cache (default: a temporary one)")
    p.add_argument("-q", "--quiet", action="store_true", help="print only bugs and the summary")
    p.add_argument("--replay", metavar="DIR", nargs="+",
                   help="re-evaluate saved reproducers (reduced.onnx + reduced_inputs.npz)")
    a = p.parse_args(argv)
    warnings.filterwarnings("ignore", category=RuntimeWarning)   # numpy on inf/NaN inputs
    if a.replay:
        return replay(a.replay, a.opt, a.timeout, a.precision)
    os.makedirs(a.out, exist_ok=True)
    cache = a.cache or tempfile.mkdtemp(prefix="onnx-mlir-py-fuzz-")
    ops = a.ops
    if a.precision == "bf16" and ops is None:
        from onnx_mlir_py.testing.fuzz.ops import mode_specs
        ops = mode_specs("bf16")
    cfg = {"opts": a.opt, "cache": cache, "timeout": a.timeout, "max_nodes": a.max_nodes,
           "opset": a.opset, "ops": ops, "out": a.out, "reduce": not a.no_reduce,
           "precision": a.precision}
    counts, bugs = Counter(), Counter()
    t0 = time.monotonic()
    indices = range(a.start, a.start + a.count)
    try:
        with open(os.path.join(a.out, "results.jsonl"), "a") as log:
            if a.jobs > 1:
                ex = ProcessPoolExecutor(a.jobs, get_context("spawn"), _init, (cfg,))
                recs = ex.map(fuzz_case, [a.seed] * len(indices), indices)
            else:
                _init(cfg)
                recs = (fuzz_case(a.seed, i) for i in indices)
            for rec in recs:
                log.write(json.dumps(rec, default=str) + "\n")
                log.flush()
                counts[rec["status"]] += 1
                kinds = {f["kind"] for f in rec.get("findings", [])}
                bugs.update(k for k in kinds if k in BUGS)
                if not a.quiet or kinds & set(BUGS) or rec["status"] in ("invalid", "generator-error"):
                    print(_line(rec), flush=True)
    finally:
        if _ev is not None:
            _ev.close()
        if not a.cache:
            shutil.rmtree(cache, ignore_errors=True)
    print(f"{a.count} cases in {time.monotonic() - t0:.0f} s: " +
          ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print("bugs (cases): " + (", ".join(f"{k} {v}" for k, v in sorted(bugs.items())) or "none"))
    return 1 if bugs else 0


if __name__ == "__main__":
    sys.exit(main())
