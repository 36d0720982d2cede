"""``python -m onnx_mlir_py.testing.corpus``: run the corpus, list failures."""
from __future__ import annotations

import argparse
import collections
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from onnx_mlir_py.backend.isolate import ChildWorker
from onnx_mlir_py.testing.corpus import all_cases
from onnx_mlir_py.testing.corpus.runner import (TIMEOUT, judge, needs_reference, ort_reference,
                                                run_case)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m onnx_mlir_py.testing.corpus")
    ap.add_argument("-k", default="", help="only cases whose name contains this")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args(argv)
    cases = [c for c in all_cases() if args.k in c.name]
    workers = [ChildWorker(max_calls=200) for _ in range(args.jobs)]
    t0 = time.time()

    def one(i):
        w, c = workers[i % args.jobs], cases[i]
        status, res = w.call(run_case, (c,), TIMEOUT)
        ref = None
        if status == "ok" and needs_reference(c) and res["compile"] is None:
            rs, ref = w.call(ort_reference, (c,), TIMEOUT)
            ref = ref if rs == "ok" else {"load": f"onnxruntime {rs}", "runs": []}
        return c, judge(c, status, res, ref)

    by_cat = collections.Counter(c.category for c in cases)
    failed = collections.Counter()
    with ThreadPoolExecutor(args.jobs) as ex:
        # worker i handles cases i, i+jobs, ... one at a time
        lanes = [ex.submit(lambda j: [one(i) for i in range(j, len(cases), args.jobs)], j)
                 for j in range(args.jobs)]
        results = [r for lane in lanes for r in lane.result()]
    for c, why in sorted(results, key=lambda r: r[0].name):
        if why:
            failed[c.category] += 1
            print(f"FAIL {c.name}: {why}")
    for w in workers:
        w.close()
    for cat, n in sorted(by_cat.items()):
        print(f"{cat:16s} {n:4d} cases, {failed[cat]} failed")
    print(f"{len(cases)} cases, {sum(failed.values())} failed, {time.time() - t0:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
