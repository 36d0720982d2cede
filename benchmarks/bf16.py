"""``--precision bf16`` against our own fp32 build (issue #28 item 4: >= 3x on
ResNet-50 on an AMX machine, with the error reported).

    python benchmarks/bf16.py [--models resnet50,resnet18] [--threads 1,2] [--out DIR]

Each model is compiled twice (-O3, fp32 and ``--precision bf16``) and the two
libraries are timed in one process in alternating blocks
(``harness.time_interleaved``; with several threads each block starts after a
0.1 s pause, so the other library's pool threads have gone idle). The bf16
error is reported against the fp32 build's outputs on the same inputs (max
|diff|, and relative to max |fp32|), and whether the top-1 class agrees for
a classifier. Writes ``<out>/bf16.json`` and ``bf16.md`` with the machine line.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile

import numpy as np
import onnx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import machine  # noqa: E402

DEFAULT = "resnet50,resnet18,mobilenetv2"
CFG = dict(warmup=3, min_reps=20, max_reps=200, budget_s=6.0)


def _compile(model: onnx.ModelProto, path: str, precision: str) -> str:
    import onnx_mlir_py
    return str(onnx_mlir_py.compile(model, path, opt_level=3, precision=precision))


def run_model(name: str, threads: list[int], tmp: str) -> list[dict]:
    from onnx_mlir_py.runtime import ExecutionSession
    model = harness.build(name)
    feeds = harness.feeds(name, model)
    libs = {p: _compile(model, os.path.join(tmp, f"{name}_{p}.so"), p) for p in ("fp32", "bf16")}
    names = [i.name for i in model.graph.input
             if i.name not in {t.name for t in model.graph.initializer}]
    args = [feeds[n] for n in names]
    rows = []
    for t in threads:
        s32 = ExecutionSession(libs["fp32"], num_threads=t)
        s16 = ExecutionSession(libs["bf16"], num_threads=t)
        y32, y16 = s32.run(args), s16.run(args)
        err = max(float(np.max(np.abs(a.astype(np.float64) - b))) for a, b in zip(y32, y16))
        top = max(float(np.max(np.abs(a))) for a in y32)
        same_top1 = all(np.array_equal(np.argmax(a.reshape(a.shape[0], -1), 1),
                                       np.argmax(b.reshape(b.shape[0], -1), 1))
                        for a, b in zip(y32, y16))
        t32, t16 = harness.time_interleaved(lambda: s32.run(args), lambda: s16.run(args),
                                            settle_s=0.1 if t > 1 else 0.0, **CFG)
        r = {"model": name, "threads": t,
             "fp32_ms": harness.median_ms(t32), "bf16_ms": harness.median_ms(t16),
             "fp32_min_ms": 1e3 * min(t32), "bf16_min_ms": 1e3 * min(t16),
             "speedup": harness.median_ms(t32) / harness.median_ms(t16),
             "speedup_min": min(t32) / min(t16), "reps": len(t16),
             "max_abs_err": err, "rel_err": err / top if top else None, "same_top1": same_top1,
             "fp32_spread_pct": harness.spread_pct(t32), "bf16_spread_pct": harness.spread_pct(t16)}
        rows.append(r)
        print(f"{name:12s} {t} thr  fp32 {r['fp32_ms']:8.2f}  bf16 {r['bf16_ms']:8.2f} ms  "
              f"{r['speedup']:.2f}x (min {r['speedup_min']:.2f}x)  max|err| {err:.2e} "
              f"({100 * r['rel_err']:.2f}% of max|y|), top-1 {'same' if same_top1 else 'DIFFERS'}",
              flush=True)
        del s32, s16
    return rows


def markdown(rows: list[dict], line: str) -> str:
    out = ["# `--precision bf16` vs our fp32 (benchmarks/bf16.py)", "", f"Machine: {line}", "",
           "| model | threads | fp32 ms (median / min) | bf16 ms (median / min) | speedup "
           "(median / min) | max abs err (rel) | top-1 |",
           "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        out.append(f"| {r['model']} | {r['threads']} | {r['fp32_ms']:.2f} / {r['fp32_min_ms']:.2f} "
                   f"| {r['bf16_ms']:.2f} / {r['bf16_min_ms']:.2f} | **{r['speedup']:.2f}x** / "
                   f"{r['speedup_min']:.2f}x | {r['max_abs_err']:.2e} "
                   f"({100 * r['rel_err']:.2f}%) | {'same' if r['same_top1'] else 'differs'} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=DEFAULT)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = ap.parse_args(argv)
    from onnx_mlir_py.target import resolve
    if not resolve(host_default=True).avx512_bf16:
        print("bf16.py: this CPU has neither AVX512-BF16 nor AMX-BF16", file=sys.stderr)
        return 2
    line = machine.machine_line()
    print(line, flush=True)
    threads = [int(t) for t in args.threads.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            rows += run_model(name, threads, tmp)
    result = {"machine": line, "rows": rows}
    print("\n".join(harness.write_result(args.out, "bf16", result, markdown(rows, line))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
