"""ONNX backend conformance of onnx-mlir-py: every onnx backend test, three modes.

    python test/conformance/backend_tests.py                 # full run, all suites and modes
    python test/conformance/backend_tests.py --suite node --mode static --jobs 2
    python test/conformance/backend_tests.py --filter 'test_(conv|gemm)' -v
    python test/conformance/backend_tests.py --update        # + rewrite test/backend/*.json
                                                             #   and docs/SupportedONNXOps.md

Suites: node, simple, pytorch-converted, pytorch-operator, real (the 9 light
models shipped with onnx; nothing is downloaded). Modes: static, dynamic
(every input dim unknown), constant (inputs become initializers). Each test
is compiled through ``onnx_mlir_py.backend`` in a crash-isolated worker
process (an MLIR abort is counted as ``crash``), run, and compared like
``onnx.backend.test`` (its ``assert_similar_outputs``, the test's rtol/atol,
1e-3/1e-7 by default). Compiled libraries are cached (``$ONNX_MLIR_PY_CACHE``),
so a re-run only compiles what changed. Prints ``N passed, N failed`` per
suite and mode and a table of failure reasons.

``--update`` merges the results of the tests that ran into
``test/backend/allowlist.json`` ({test: [modes it passes]}) and
``test/backend/results.json`` (suite, ops and per-mode outcome of each test),
then regenerates ``docs/SupportedONNXOps.md``.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

from cases import MODES, SUITES, load_cases, make_task, run_task  # noqa: E402
from pool import run_tasks  # noqa: E402

ALLOWLIST = ROOT / "test" / "backend" / "allowlist.json"
RESULTS = ROOT / "test" / "backend" / "results.json"


def reply_to_result(task: dict, reply) -> dict:
    status, value = reply
    if status == "ok":
        return value
    if status == "error":       # run_task itself failed (should not happen)
        return {"status": "fail", "category": "internal error", "key": value.get("type", "?"),
                "detail": value.get("message", "")}
    key = ", ".join([o for o in task["ops"] if o != "Constant"][:3]) or "-"
    return {"status": "fail", "category": status, "key": key, "detail": value}


def run(cases, modes, jobs: int, timeout: float, real_timeout: float, options: dict,
        verbose: bool = False):
    """-> {(test name, mode): result dict}."""
    by_name = {c.name: c for c in cases}

    def tasks():
        # Cases first by mode, so a partial run gives full numbers for static.
        for mode in modes:
            for c in cases:
                yield make_task(c, mode, options)

    results = {}
    total = len(cases) * len(modes)
    t0 = time.monotonic()
    try:
        for i, (task, reply) in enumerate(run_tasks(
                tasks(), run_task, jobs=jobs, timeout=timeout,
                timeout_of=lambda t: real_timeout if t["suite"] == "real" else timeout), 1):
            res = reply_to_result(task, reply)
            results[(task["name"], task["mode"])] = res
            if verbose and res["status"] != "pass":
                print(f"FAIL {task['mode']:8} {task['name']}: {res['category']}: "
                      f"{res['detail'][:160]}", flush=True)
            elif not verbose and i % 200 == 0:
                print(f"... {i}/{total} ({time.monotonic() - t0:.0f} s)", file=sys.stderr,
                      flush=True)
    except KeyboardInterrupt:   # Ctrl-C / SIGTERM: report (and --update) what finished
        print(f"interrupted after {len(results)}/{total} (test, mode) runs; partial results",
              flush=True)
    del by_name
    return results


def summarize(cases, modes, results) -> str:
    lines = []
    suite_of = {c.name: c.suite for c in cases}
    for suite in SUITES:
        names = [c.name for c in cases if c.suite == suite]
        if not names:
            continue
        for mode in modes:
            rs = [results[(n, mode)] for n in names if (n, mode) in results]
            p = sum(r["status"] == "pass" for r in rs)
            lines.append(f"{suite:18} {mode:8} {p} passed, {len(rs) - p} failed")
    allp = sum(r["status"] == "pass" for r in results.values())
    lines.append(f"{'all':18} {'all':8} {allp} passed, {len(results) - allp} failed")
    # Failure reasons: category -> key -> tests.
    groups: dict[tuple, list] = defaultdict(list)
    for (name, mode), r in results.items():
        if r["status"] != "pass":
            groups[(r["category"], r["key"])].append((name, mode, r["detail"]))
    if groups:
        cat_counts = Counter()
        for (cat, _), items in groups.items():
            cat_counts[cat] += len(items)
        lines.append("")
        lines.append("failures by category (test x mode counts; a test missing several "
                     "ops is counted once, under all of them)")
        for cat, n in cat_counts.most_common():
            lines.append(f"  {cat}: {n}")
            keys = sorted(((k, v) for (c, k), v in groups.items() if c == cat),
                          key=lambda kv: (-len(kv[1]), kv[0]))
            for k, items in keys[:40]:
                ex = items[0]
                lines.append(f"    {len(items):5}  {k[:40]:40}  e.g. {ex[0]} [{ex[1]}]: "
                             f"{ex[2][:110]}")
            if len(keys) > 40:
                rest = sum(len(v) for _, v in keys[40:])
                lines.append(f"    {rest:5}  ... {len(keys) - 40} more keys")
    del suite_of
    return "\n".join(lines)


def update_files(cases, modes, results) -> None:
    allow = json.loads(ALLOWLIST.read_text()) if ALLOWLIST.exists() else {}
    full = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    for c in cases:
        entry = full.setdefault(c.name, {"suite": c.suite, "ops": c.ops, "modes": {}})
        entry["suite"], entry["ops"] = c.suite, c.ops
        passing = set(allow.get(c.name, []))
        for mode in modes:
            r = results.get((c.name, mode))
            if r is None:
                continue
            if r["status"] == "pass":
                passing.add(mode)
                entry["modes"][mode] = "pass"
            else:
                passing.discard(mode)
                entry["modes"][mode] = f"{r['category']}: {r['detail'][:200]}"
        if passing:
            allow[c.name] = [m for m in MODES if m in passing]
        else:
            allow.pop(c.name, None)
    ALLOWLIST.parent.mkdir(parents=True, exist_ok=True)
    ALLOWLIST.write_text("{\n" + ",\n".join(f"{json.dumps(n)}: {json.dumps(m)}"
                                            for n, m in sorted(allow.items())) + "\n}\n")
    RESULTS.write_text(json.dumps(dict(sorted(full.items())), indent=1, sort_keys=True) + "\n")
    from onnx_mlir_py import ops_doc
    ops_doc.main(["--supported"])


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--suite", action="append", choices=SUITES,
                    help="suite(s) to run (repeatable; default: all)")
    ap.add_argument("--mode", action="append", choices=MODES,
                    help="mode(s) to run (repeatable; default: all)")
    ap.add_argument("--filter", metavar="REGEX", help="only tests whose name matches")
    ap.add_argument("--jobs", "-j", type=int, default=2, help="worker processes (default 2)")
    ap.add_argument("--timeout", type=float, default=90.0,
                    help="seconds per test (compile + run), default 90")
    ap.add_argument("--real-timeout", type=float, default=1200.0,
                    help="seconds per 'real' model test, default 1200")
    ap.add_argument("-O", dest="opt_level", type=int, choices=(0, 1, 2, 3),
                    help="compile optimisation level (default: the compiler's)")
    ap.add_argument("--update", action="store_true",
                    help="merge results into test/backend/*.json and regenerate "
                         "docs/SupportedONNXOps.md")
    ap.add_argument("--json", metavar="FILE", help="write every result to FILE")
    ap.add_argument("-v", "--verbose", action="store_true", help="print each failure")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupt)
    suites = args.suite or list(SUITES)
    modes = args.mode or list(MODES)
    t0 = time.monotonic()
    cases = load_cases(suites, args.filter)
    print(f"{len(cases)} tests x {len(modes)} mode(s), {args.jobs} worker(s), cache "
          f"{os.environ.get('ONNX_MLIR_PY_CACHE') or '~/.cache/onnx-mlir-py'}", flush=True)
    options = {"opt_level": args.opt_level} if args.opt_level is not None else {}
    results = run(cases, modes, args.jobs, args.timeout, args.real_timeout, options,
                  args.verbose)
    cases_run = {n for n, _ in results}
    cases = [c for c in cases if c.name in cases_run]
    print(summarize(cases, modes, results))
    print(f"({time.monotonic() - t0:.0f} s)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"name": n, "mode": m, **r} for (n, m), r in sorted(results.items())],
                      f, indent=1)
    if args.update:
        update_files(cases, modes, results)
        print(f"updated {ALLOWLIST.relative_to(ROOT)}, {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
