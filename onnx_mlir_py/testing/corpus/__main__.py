"""``python -m onnx_mlir_py.testing.corpus``: run the corpus, list failures."""
from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

from onnx_mlir_py.backend.isolate import ChildWorker
from onnx_mlir_py.testing.corpus import all_cases
from onnx_mlir_py.testing.corpus.runner import (TIMEOUT, judge, needs_reference, ort_reference,
                                                run_case)


def _python(w, c, _tmp):
    status, res = w.call(run_case, (c,), TIMEOUT)
    ref = None
    if status == "ok" and needs_reference(c) and res["compile"] is None:
        rs, ref = w.call(ort_reference, (c,), TIMEOUT)
        ref = ref if rs == "ok" else {"load": f"onnxruntime {rs}", "runs": []}
    why = judge(c, status, res, ref)
    return c, [why] if why else [], None


def _c_api(exe):
    from onnx_mlir_py.testing.corpus.c_api import check_case

    def one(w, c, tmp):
        with tempfile.TemporaryDirectory(dir=tmp) as d:
            rep = check_case(w, c, exe, d)
        return c, rep.failures, rep
    return one


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m onnx_mlir_py.testing.corpus")
    ap.add_argument("-k", default="", help="only cases whose name contains this")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--c-api", action="store_true",
                    help="run the cases with run-time inputs through examples/c/run_model.c "
                         "and compare every run with the Python outcome")
    args = ap.parse_args(argv)
    cases = [c for c in all_cases() if args.k in c.name]
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="corpus-c-") as tmp:
        if args.c_api:
            from onnx_mlir_py.testing.corpus.c_api import build_run_model, c_cases
            cases, one = c_cases(cases), _c_api(build_run_model(tmp))
        else:
            one = _python
        workers = [ChildWorker(max_calls=200) for _ in range(args.jobs)]
        with ThreadPoolExecutor(args.jobs) as ex:
            # worker j handles cases j, j+jobs, ... one at a time
            lanes = [ex.submit(lambda j: [one(workers[j], cases[i], tmp)
                                          for i in range(j, len(cases), args.jobs)], j)
                     for j in range(args.jobs)]
            results = [r for lane in lanes for r in lane.result()]
        for w in workers:
            w.close()
    by_cat = collections.Counter(c.category for c in cases)
    failed = collections.Counter()
    for c, whys, _ in sorted(results, key=lambda r: r[0].name):
        for why in whys:
            print(f"FAIL {c.name}: {why}")
        failed[c.category] += bool(whys)
    for cat, n in sorted(by_cat.items()):
        print(f"{cat:16s} {n:4d} cases, {failed[cat]} failed")
    if args.c_api:
        reps = [r for _, _, r in results]
        print(f"through C: {sum(r.compiled for r in reps)} cases compiled, "
              f"{sum(r.runs for r in reps)} runs, {sum(r.errors_matched for r in reps)} "
              f"errors matched, {sum(r.outputs_matched for r in reps)} outputs matched, "
              f"{sum(r.not_expressible for r in reps)} runs not expressible in C")
    print(f"{len(cases)} cases, {sum(failed.values())} failed, {time.time() - t0:.0f} s")
    return 1 if sum(failed.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
