"""What the ISA level is worth: each benchmark model compiled at -O3 for two
``march`` choices (default ``x86-64-v3`` against ``x86-64-v4``; either may be
a library with ISA variants, ``x86-64-v3+x86-64-v4``) and timed against each
other:

    python benchmarks/march.py [--models resnet18,'lstm*'] [--a x86-64-v3] [--b x86-64-v4]
                               [--threads 1] [--rounds 3] [--quick] [--out rows.json]

Per model, in a worker process of its own: both libraries are checked
against onnxruntime (rtol 1e-3, atol 1e-4, as run.py); then runs alternate in
blocks between the two (``harness.time_interleaved``), median of N. With
``--rounds R`` the pairing is repeated R times (fresh blocks each time, on a
shared machine the load changes between them) and the row reports the median
of the R per-round ratios besides each round's. Prints A ms, B ms, B / A
(below 1: B is faster), the ratio of the fastest runs (min B / min A) and
both compile times. On a loaded machine the fastest runs are the ones no other
process preempted: a run that gets preempted takes a time slice longer (10-18
ms measured here at load 11 on 2 cores), and a longer run is preempted more
often, so the medians of two engines of different speed drift apart (a 1 ms
and a 2 ms encoder layer measured 1.1 / 8.8 ms in medians); compare the min
ratio when the two disagree.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402
import worker  # noqa: E402

QUICK = dict(warmup=1, min_reps=3, max_reps=5, budget_s=0.2)
FULL = dict(warmup=2, min_reps=10, max_reps=400, budget_s=3.0)


def _work(name, a, b, threads, rounds, quick, res) -> None:
    import onnx

    import onnx_mlir_py
    model = harness.build(name)
    twin = harness.static_twin(name)
    feeds = harness.feeds(name, twin if twin is not None else model)
    args = list(feeds.values())
    tmp = tempfile.mkdtemp(prefix=f"march_{name}_")
    try:
        path = os.path.join(tmp, f"{name}.onnx")
        onnx.save(model, path)
        ref = harness.ort_session(path, 1).run(None, feeds)
        libs = {}
        for march in (a, b):
            t0 = time.perf_counter()
            libs[march] = onnx_mlir_py.compile(path, os.path.join(tmp, f"{march}.so"),
                                               opt_level=3, march=march)
            res[f"compile_s_{march}"] = time.perf_counter() - t0
        res["timings"] = {}
        for t in threads:
            sa, sb = harness.ours_session(libs[a], t), harness.ours_session(libs[b], t)
            for march, s in ((a, sa), (b, sb)):
                ok, err = harness.check_outputs(s.run(args), ref)
                res[f"max_abs_err_{march}"] = err
                if not ok:
                    res["status"] = f"mismatch ({march})"
                    return
            per = []
            for _ in range(rounds):
                ta, tb = harness.time_interleaved(lambda: sa.run(args), lambda: sb.run(args),
                                                  settle_s=0.1 if t > 1 else 0.0,
                                                  **(QUICK if quick else FULL))
                per.append((harness.median_ms(ta), harness.median_ms(tb), min(ta), min(tb)))
            ratios = [p[1] / p[0] for p in per]
            res["timings"][str(t)] = {"a_ms": statistics.median(p[0] for p in per),
                                      "b_ms": statistics.median(p[1] for p in per),
                                      "ratio": statistics.median(ratios), "rounds": ratios,
                                      "a_min_ms": 1e3 * min(p[2] for p in per),
                                      "b_min_ms": 1e3 * min(p[3] for p in per)}
            tm = res["timings"][str(t)]
            tm["min_ratio"] = tm["b_min_ms"] / tm["a_min_ms"]
        res["status"] = "ok"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default="mnist_cnn,mlp,resnet18,mobilenetv2,mobilenetv3,"
                                        "encoder_layer,bert_layer,matmul1024")
    ap.add_argument("--a", default="x86-64-v3", help="march A (the baseline)")
    ap.add_argument("--b", default="x86-64-v4", help="march B")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out")
    args = worker.parse(ap, argv, threads="1")
    threads = args.threads
    if args.worker:
        worker.serve(args.worker, args.result, lambda res: _work(
            args.worker, args.a, args.b, threads, args.rounds, args.quick, res))
        return 0
    import run
    names = run.select_models(args.models)
    print(f"{os.cpu_count()} cpus, load {os.getloadavg()[0]:.2f}; A = {args.a}, B = {args.b}")
    print(f"{'model':<14} {'thr':>3} {'A ms':>10} {'B ms':>10} {'B/A':>6}  rounds         "
          f"{'min B/A':>7}  compile A/B s")
    rows = []
    for name in names:
        r = worker.run(__file__, name, ["--a", args.a, "--b", args.b, "--rounds",
                                        str(args.rounds)] + args.worker_args, args.timeout)
        rows.append(r)
        if r["status"] != "ok":
            print(f"{name:<14} {r['status']}: {r.get('error', '')}", flush=True)
            continue
        for t in threads:
            tm = r["timings"][str(t)]
            print(f"{name:<14} {t:>3} {tm['a_ms']:>10.3f} {tm['b_ms']:>10.3f} {tm['ratio']:>6.3f}"
                  f"  {' '.join(f'{x:.2f}' for x in tm['rounds']):<14} {tm['min_ratio']:>7.3f}  "
                  f"{r['compile_s_' + args.a]:.1f}/{r['compile_s_' + args.b]:.1f}", flush=True)
    ok = [r["timings"][str(threads[0])] for r in rows if r["status"] == "ok"]
    if ok:
        gm = statistics.geometric_mean([tm["ratio"] for tm in ok])
        gmin = statistics.geometric_mean([tm["min_ratio"] for tm in ok])
        print(f"geomean B/A at {threads[0]} thread(s): {gm:.3f} (medians), {gmin:.3f} (fastest "
              f"runs) over {len(ok)} models")
    worker.write_json(args.out, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
