"""onnx-mlir-py -O3 against onnxruntime, in one command:

    python benchmarks/run.py [--models mnist_cnn,'lstm*',...] [--threads 1,2] [--quick]

Each model is built with ``onnx.helper`` and seeded random weights
(``onnx_mlir_py.testing.models`` plus a 1024^3 MatMul) or written in plain
torch and exported by ``torch.onnx.export`` (``torch_zoo.py``), compiled with
``onnx_mlir_py.compile(..., opt_level=3)``, checked against onnxruntime
(rtol 1e-3, atol 1e-4; a mismatch is reported, not timed) and timed against
onnxruntime in the same process, runs interleaved, median of N, per thread
count; then, per thread count, the CPU seconds the process burns in the
second after one run of each engine (its pool threads spinning while idle:
``harness.idle_cpu_pair``). Every model runs in its own worker process (a crash or a hang costs
that model's row only). Writes ``<out>/latest.json`` and ``<out>/latest.png``.
"""
from __future__ import annotations

import argparse
import fnmatch
import math
import os
import platform
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402
import machine  # noqa: E402
import worker  # noqa: E402

QUICK = dict(warmup=1, min_reps=3, max_reps=5, budget_s=0.2)
FULL = dict(warmup=3, min_reps=10, max_reps=200, budget_s=4.0)


# -- worker: one model, all thread counts, in one process ------------------------------
def _work(name: str, threads: list[int], quick: bool, res: dict) -> None:
    model = harness.build(name)
    res["gflop"] = harness.count_flops(harness.static_twin(name) or model) / 1e9
    tmp = tempfile.mkdtemp(prefix=f"bench_{name}_")
    try:
        _measure(name, model, tmp, threads, quick, res)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _measure(name, model, tmp, threads, quick, res) -> None:
    import onnx

    import onnx_mlir_py
    path = os.path.join(tmp, f"{name}.onnx")
    onnx.save(model, path)
    if name in harness.DECODE_MODELS:
        import decode_zoo
        res["weight_gb"] = decode_zoo.weight_bytes(model) / 1e9
    twin = harness.static_twin(name)
    # a dynamic model runs at its static twin's shape
    feeds = harness.feeds(name, twin if twin is not None else model)
    t0 = time.perf_counter()
    try:
        so = onnx_mlir_py.compile(path, output=os.path.join(tmp, f"{name}.so"), opt_level=3)
    except Exception as e:
        res["compile_s"] = time.perf_counter() - t0
        res["status"] = "compile-error"
        res["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        return
    res["compile_s"] = time.perf_counter() - t0
    args = list(feeds.values())
    ref = harness.ort_session(path, threads[0]).run(None, feeds)
    ours = harness.ours_session(so, threads[0]).run(args)
    ok, err = harness.check_outputs(ours, ref)
    if not ok and name in harness.QUANT_MODELS:
        # a quantized model: a value on a rounding edge may land one step
        # apart; allowed as far as onnxruntime's own optimization levels differ
        spread = harness.ort_level_spread(path, feeds)
        res["ort_level_spread"] = spread
        ok = err <= 1.5 * spread
    res["max_abs_err"] = err
    if not ok:
        res["status"] = "mismatch"
        return
    so_static = None
    if twin is not None:
        spath = os.path.join(tmp, f"{name}_static.onnx")
        onnx.save(twin, spath)
        so_static = onnx_mlir_py.compile(spath, output=os.path.join(tmp, f"{name}_static.so"),
                                         opt_level=3)
    res["status"] = "ok"
    res["threads_controllable"] = harness.ours_threads_supported()
    cfg = QUICK if quick else FULL
    res["timings"] = {}
    for t in threads:
        s_ours = harness.ours_session(so, t)
        s_ort = harness.ort_session(path, t)
        tm = harness.time_engines(lambda: s_ours.run(args), lambda: s_ort.run(None, feeds), t,
                                  cfg)
        gf = res["gflop"]
        tm.update(ours_gflops=gf / (tm["ours_ms"] / 1e3) if gf else None,
                  ort_gflops=gf / (tm["ort_ms"] / 1e3) if gf else None)
        if "weight_gb" in res:  # a decode step: one token per run, the weights read once
            for e in ("ours", "ort"):
                tm[f"{e}_tokens_s"] = 1e3 / tm[f"{e}_ms"]
                tm[f"{e}_weights_gb_s"] = res["weight_gb"] / (tm[f"{e}_ms"] / 1e3)
        res["timings"][str(t)] = tm
        # CPU the process burns in the second after a run (pool threads spinning)
        tm.update(harness.idle_cpu_pair(lambda: s_ours.run(args),
                                        lambda: s_ort.run(None, feeds)))
        if so_static is not None:
            # dynamic / static, ours against ours, in a pairing of their own
            s_static = harness.ours_session(so_static, t)
            t_dyn, t_static = harness.time_interleaved(lambda: s_ours.run(args),
                                                       lambda: s_static.run(args),
                                                       settle_s=0.1 if t > 1 else 0.0, **cfg)
            res["timings"][str(t)].update(
                dyn_ms=harness.median_ms(t_dyn), static_ms=harness.median_ms(t_static),
                dyn_vs_static=harness.median_ms(t_dyn) / harness.median_ms(t_static))
            del s_static
        del s_ours, s_ort
    if name.startswith("matmul"):
        n = model.graph.input[0].type.tensor_type.shape.dim[0].dim_value
        gflops, how = harness.numpy_gflops_1t(n, reps=3 if quick else 10)
        res["numpy_gflops_1t"], res["numpy_threads_limited_by"] = gflops, how
        one = res["timings"].get("1")
        if one and one["ours_gflops"]:
            res["ours_vs_numpy_1t"] = one["ours_gflops"] / gflops


# -- parent: run the workers, print, write JSON and the chart ---------------------------
def _fmt(x, spec):
    return "-" if x is None else format(x, spec)


def _pct_peak(tm: dict, t: int, peak: float) -> float | None:
    return 100 * tm["ours_gflops"] / (peak * t) if tm["ours_gflops"] and peak else None


def print_row(r: dict, threads: list[int], peak: float) -> None:
    if r["status"] != "ok":
        print(f"{r['name']:<14} {'':>3} {r['status']}: {r.get('error', '')}"
              + (f" (max abs err {r['max_abs_err']:.3g})" if "max_abs_err" in r else ""),
              flush=True)
        return
    for t in threads:
        tm = r["timings"][str(t)]
        dyn = (f"   dynamic/static {tm['dyn_vs_static']:.2f} ({tm['dyn_ms']:.3f} / "
               f"{tm['static_ms']:.3f} ms)") if "dyn_vs_static" in tm else ""
        if "ours_tokens_s" in tm:
            dyn = (f"   tokens/s {tm['ours_tokens_s']:.1f} / {tm['ort_tokens_s']:.1f}, weights "
                   f"GB/s {tm['ours_weights_gb_s']:.1f} / {tm['ort_weights_gb_s']:.1f}")
        idle = (f"   idle CPU s {tm['ours_idle_cpu_s']:.4f} / {tm['ort_idle_cpu_s']:.4f}"
                if "ours_idle_cpu_s" in tm else "")
        print(f"{r['name']:<14} {t:>3} {tm['ours_ms']:>10.3f} {tm['ort_ms']:>10.3f} "
              f"{tm['ratio']:>7.2f} {_fmt(tm['ours_gflops'], '8.1f'):>8} "
              f"{_fmt(tm['ort_gflops'], '8.1f'):>8} {_fmt(_pct_peak(tm, t, peak), '5.1f'):>5} "
              f"{r['compile_s']:>9.2f}{dyn}{idle}", flush=True)


def markdown(result: dict) -> str:
    """The table for an issue note."""
    threads = result["threads"]
    peak = result["peak"]["gflops_per_core"]
    lines = ([f"Machine: {result['machine']['line']}", ""] if "line" in result.get("machine", {})
             else []) + \
        [f"Peak: {result['peak']['how']} (benchmarks/machine.py); '% peak' is ours "
         "against the peak of the threads used.", "",
         "| model | threads | ours ms | onnxruntime ms | ratio | ours GFLOPS | "
         "onnxruntime GFLOPS | % peak | compile s |",
         "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in result["models"]:
        if r["status"] != "ok":
            lines.append(f"| {r['name']} | | {r['status']}: {r.get('error', '')[:80]} "
                         "| | | | | | |")
            continue
        for t in threads:
            tm = r["timings"][str(t)]
            lines.append(f"| {r['name']} | {t} | {tm['ours_ms']:.3f} | {tm['ort_ms']:.3f} | "
                         f"{tm['ratio']:.2f} | {_fmt(tm['ours_gflops'], '.1f')} | "
                         f"{_fmt(tm['ort_gflops'], '.1f')} | "
                         f"{_fmt(_pct_peak(tm, t, peak), '.1f')} | {r['compile_s']:.1f} |")
    for t in threads:
        lines.append(f"| **geomean** | {t} | | | **{_fmt(result['geomean'][str(t)], '.2f')}** "
                     "| | | | |")
    lines += _side_table(result, "dyn_vs_static",
                         ["dynamic model", "threads", "dynamic ms", "static ms",
                          "dynamic / static"],
                         lambda tm: [f"{tm['dyn_ms']:.3f}", f"{tm['static_ms']:.3f}",
                                     f"{tm['dyn_vs_static']:.2f}"])
    lines += _side_table(result, "ours_tokens_s",
                         ["decode step", "threads", "ours ms", "onnxruntime ms", "ratio",
                          "ours tokens/s", "onnxruntime tokens/s", "ours weights GB/s",
                          "onnxruntime weights GB/s"],
                         lambda tm: [f"{tm['ours_ms']:.3f}", f"{tm['ort_ms']:.3f}",
                                     f"{tm['ratio']:.2f}", f"{tm['ours_tokens_s']:.1f}",
                                     f"{tm['ort_tokens_s']:.1f}", f"{tm['ours_weights_gb_s']:.1f}",
                                     f"{tm['ort_weights_gb_s']:.1f}"])
    lines += _side_table(result, "ours_idle_cpu_s",
                         ["CPU s burned in the 1 s after a run", "threads", "ours",
                          "onnxruntime"],
                         lambda tm: [f"{tm['ours_idle_cpu_s']:.4f}",
                                     f"{tm['ort_idle_cpu_s']:.4f}"])
    if "matmul_vs_numpy_1t" in result:
        lines.append(f"\nmatmul: {100 * result['matmul_vs_numpy_1t']:.0f}% of numpy's "
                     f"single-thread GFLOPS ({result['numpy_gflops_1t']:.1f}) in the same run.")
    if not result["ours_threads_controllable"]:
        lines.append("\nOur thread count is not controllable yet: the same library ran at "
                     "every thread count.")
    return "\n".join(lines) + "\n"


def _side_table(result: dict, field: str, head: list[str], cells) -> list[str]:
    """A table of the models whose timings have ``field`` (dynamic rows, decode
    steps): one row per thread count, name, threads, then ``cells(timings)``."""
    threads = result["threads"]
    rows = [r for r in result["models"] if r["status"] == "ok"
            and field in r["timings"][str(threads[0])]]
    if not rows:
        return []
    lines = ["", "| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 1)]
    for r in rows:
        for t in threads:
            lines.append(f"| {r['name']} | {t} | " + " | ".join(cells(r["timings"][str(t)]))
                         + " |")
    return lines


def geomeans(rows: list[dict], threads: list[int]) -> dict:
    out = {}
    for t in threads:
        # the dynamic copies are not in it: the geomean stays comparable
        rs = [r["timings"][str(t)]["ratio"] for r in rows
              if r["status"] == "ok" and r["name"] not in harness.DYNAMIC]
        out[str(t)] = math.exp(sum(map(math.log, rs)) / len(rs)) if rs else None
    return out


def write_chart(result: dict, path: str) -> str | None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (pip install -e '.[bench]'): no PNG written"
    rows = [r for r in result["models"] if r["status"] == "ok"]
    threads = result["threads"]
    if not rows:
        return "no model ran: no PNG written"
    fig, ax = plt.subplots(figsize=(max(6, 1.3 * len(rows) + 2), 4))
    width = 0.8 / len(threads)
    for k, t in enumerate(threads):
        xs = [i + (k - (len(threads) - 1) / 2) * width for i in range(len(rows))]
        ax.bar(xs, [r["timings"][str(t)]["ratio"] for r in rows], width,
               label=f"{t} thread{'s' if t > 1 else ''}")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.axhline(1.5, color="red", linewidth=0.8, linestyle="--", label="goal (geomean 1.5)")
    ax.set_xticks(range(len(rows)), [r["name"] for r in rows], rotation=20)
    ax.set_ylabel("onnx-mlir-py -O3 time / onnxruntime time")
    ax.set_title("lower is better; geomean " + ", ".join(
        f"{t}t: {_fmt(result['geomean'][str(t)], '.2f')}" for t in threads))
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return None


def select_models(spec: str) -> list[str]:
    """Comma list of model names or fnmatch patterns -> names, in the order
    given (a pattern's matches in the order of harness.ALL_MODELS);
    ``matmulN`` is any size. SystemExit on an item that matches nothing."""
    names: list[str] = []
    for item in (m.strip() for m in spec.split(",")):
        if not item:
            continue
        hits = [n for n in harness.ALL_MODELS if fnmatch.fnmatchcase(n, item)]
        if not hits and item.startswith("matmul") and item[6:].isdigit():
            hits = [item]
        if not hits:
            raise SystemExit(f"--models: {item!r} matches no model; known: "
                             f"{', '.join(harness.ALL_MODELS)}")
        names += [n for n in hits if n not in names]
    return names


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", help=f"comma list of names or shell patterns ('lstm*') "
                                     f"(default: {','.join(harness.ALL_MODELS)}; "
                                     "--quick: mnist_cnn,mlp,matmul256)")
    ap.add_argument("--out", default=os.path.join(HERE, "results"), help="results directory")
    args = worker.parse(ap, argv, threads="1,2")
    threads = args.threads
    if args.worker:
        worker.serve(args.worker, args.result,
                     lambda res: _work(args.worker, threads, args.quick, res))
        return 0
    default = "mnist_cnn,mlp,matmul256" if args.quick else ",".join(harness.ALL_MODELS)
    names = select_models(args.models or default)
    controllable = harness.ours_threads_supported()
    import numpy
    import onnxruntime
    print(f"{machine.machine_line()}; onnxruntime {onnxruntime.__version__}, "
          f"numpy {numpy.__version__}, load {os.getloadavg()[0]:.2f}")
    if not controllable:
        print("note: ExecutionSession has no num_threads parameter yet: our thread count is "
              "not controllable; 'ours' is the same library at every thread count")
    pk = machine.peak()
    print(f"peak: {pk['how']}")
    print(f"{'model':<14} {'thr':>3} {'ours ms':>10} {'ort ms':>10} {'ratio':>7} "
          f"{'ours GF/s':>8} {'ort GF/s':>8} {'%peak':>5} {'compile s':>9}")
    rows = []
    for name in names:
        r = worker.run(__file__, name, args.worker_args, args.timeout)
        rows.append(r)
        print_row(r, threads, pk["gflops_per_core"])
    result = {
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "quick": args.quick, "threads": threads, "ours_threads_controllable": controllable,
        "machine": {"line": machine.machine_line(), "cpus": os.cpu_count(),
                    "loadavg": list(os.getloadavg()),
                    "python": platform.python_version(), "onnxruntime": onnxruntime.__version__,
                    "numpy": numpy.__version__},
        "peak": pk, "models": rows, "geomean": geomeans(rows, threads),
    }
    mm = [r for r in rows if "ours_vs_numpy_1t" in r]
    if mm:
        result["matmul_vs_numpy_1t"] = mm[0]["ours_vs_numpy_1t"]
        result["numpy_gflops_1t"] = mm[0]["numpy_gflops_1t"]
    n_ok = sum(r["status"] == "ok" and r["name"] not in harness.DYNAMIC for r in rows)
    result["geomean_models"] = n_ok
    for t in threads:
        g = result["geomean"][str(t)]
        print(f"geomean ratio (ours/onnxruntime) at {t} thread(s): {_fmt(g, '.2f')}"
              f" over {n_ok} of {sum(r['name'] not in harness.DYNAMIC for r in rows)} models")
    if mm:
        print(f"{mm[0]['name']}: ours {mm[0]['timings']['1']['ours_gflops']:.1f} GFLOPS = "
              f"{100 * mm[0]['ours_vs_numpy_1t']:.0f}% of numpy 1-thread "
              f"({mm[0]['numpy_gflops_1t']:.1f} GFLOPS)")
    jpath, _ = harness.write_result(args.out, "latest", result, markdown(result))
    msg = write_chart(result, os.path.join(args.out, "latest.png"))
    print(f"wrote {jpath}" + (f"; {msg}" if msg else f" and {os.path.join(args.out, 'latest.png')}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
