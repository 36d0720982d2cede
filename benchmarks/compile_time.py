"""Compile time, cold: seconds per stage, peak memory and library size per
model, and scaling series with their fitted growth exponent.

    python benchmarks/compile_time.py                       # the default model set
    python benchmarks/compile_time.py --models resnet50,bert_layer -O 3
    python benchmarks/compile_time.py --models none --series chain --sizes 250,500,1000,2000

Each compile runs in a fresh worker process (worker.py) with an empty cache
directory (``ONNX_MLIR_PY_CACHE``, so the runtime's objects are built too, as
on a new machine). The models are built and saved by the parent, so the
worker's peak RSS (VmHWM) is the compiler's (the exporters are not loaded
there; the tools it runs, opt / llc / gcc, are separate processes).
Stage seconds are the compiler's own phases (``onnx_mlir_py.timings``, what
``-v`` prints). Series:

- ``chain``: N elementwise ops cycling Add / Mul (a [256] constant) / Tanh /
  Sigmoid over [64, 256] (issue #29's super-linear case);
- ``convs``: N 3x3 conv + ReLU layers of 32 channels over 32x32;
- ``layers``: N transformer encoder layers (d 256, 4 heads, FFN 1024, a
  sequence of 128), issue #29's "transformer layer stacks 2 -> 24".

The growth exponent is the slope of log(seconds) over log(N) (least
squares): 1 is linear. Results go to ``--out`` (default benchmarks/results)
as compile_time.json / .md, with the machine line.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import resource
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import worker  # noqa: E402

DEFAULT_MODELS = ["mnist_cnn", "mlp", "resnet18", "mobilenetv2", "mobilenetv3", "encoder_layer",
                  "bert_layer", "matmul1024", "resnet50", "gpt2_decode", "efficientnet_dyn",
                  "gpt2_decode_dyn"]
# dynamic-shape rows built here (#29's Done-when): name -> how to build it
#   efficientnet_dyn   torch_zoo's EfficientNet-B0 exported with dynamic batch, H and W
#   gpt2_decode_dyn    decode_zoo's GPT-2-small decode step, batch, sequence and past dynamic
DYNAMIC_MODELS = ("efficientnet_dyn", "gpt2_decode_dyn")
SERIES = ("chain", "convs", "layers")
DEFAULT_SIZES = {"chain": [250, 500, 1000, 2000], "convs": [4, 8, 16, 32],
                 "layers": [2, 4, 8, 16, 24]}


def chain_model(n: int, seed: int = 0):
    """N elementwise ops over [64, 256], cycling Add / Mul (constant) / Tanh / Sigmoid."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(seed)
    c = numpy_helper.from_array((rng.standard_normal(256) * 0.5).astype(np.float32), "c")
    nodes, prev = [], "x"
    for i in range(n):
        kind = ("Add", "Mul", "Tanh", "Sigmoid")[i % 4]
        ins = [prev, "c"] if kind in ("Add", "Mul") else [prev]
        nodes.append(helper.make_node(kind, ins, [f"v{i}"], name=f"n{i}"))
        prev = f"v{i}"
    g = helper.make_graph(nodes, f"chain{n}",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 256])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [64, 256])], [c])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def convs_model(n: int, seed: int = 0):
    """N layers of 3x3 conv (32 -> 32 channels, pad 1) + ReLU over [1, 32, 32, 32]."""
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(seed)
    nodes, inits, prev = [], [], "x"
    for i in range(n):
        w = numpy_helper.from_array((rng.standard_normal((32, 32, 3, 3)) * 0.08)
                                    .astype(np.float32), f"w{i}")
        inits.append(w)
        nodes += [helper.make_node("Conv", [prev, w.name], [f"c{i}"], pads=[1, 1, 1, 1],
                                   name=f"conv{i}"),
                  helper.make_node("Relu", [f"c{i}"], [f"r{i}"], name=f"relu{i}")]
        prev = f"r{i}"
    g = helper.make_graph(nodes, f"convs{n}",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 32, 32])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def layers_model(n: int, seed: int = 0):
    """N post-LN transformer encoder layers (d 256, 4 heads, FFN 1024) over
    [1, 128, 256]: ``testing.models.encoder_layer(layers=N)``."""
    from onnx_mlir_py.testing.models import encoder_layer
    return encoder_layer(layers=n, seed=seed)


def build(name: str):
    """The model of a row: a benchmark model (harness.build), one of
    DYNAMIC_MODELS, or ``chain<N>`` / ``convs<N>``."""
    for s in SERIES:
        if name.startswith(s) and name[len(s):].isdigit():
            return {"chain": chain_model, "convs": convs_model,
                    "layers": layers_model}[s](int(name[len(s):]))
    if name == "efficientnet_dyn":
        import onnx
        import torch_zoo
        with tempfile.TemporaryDirectory(prefix="compile_time_export_") as d:
            return onnx.load(torch_zoo.export_dynamic("efficientnet_b0",
                                                      os.path.join(d, "m.onnx")))
    if name == "gpt2_decode_dyn":
        import decode_zoo
        return decode_zoo.build(name)
    import harness
    return harness.build(name)


# -- worker: one cold compile ---------------------------------------------------------------
def _vm_hwm_mb() -> float:
    """This process's peak RSS (VmHWM: since its exec; getrusage's ru_maxrss
    would include the parent's size at fork)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _work(path: str, opt: int, res: dict) -> None:
    import onnx_mlir_py
    from onnx_mlir_py.timings import Timings
    out_dir = tempfile.mkdtemp(prefix="compile_time_")
    os.environ["ONNX_MLIR_PY_CACHE"] = os.path.join(out_dir, "cache")   # cold: runtime objects too
    try:
        tm = Timings()
        t0 = time.perf_counter()
        so = onnx_mlir_py.compile(path, output=os.path.join(out_dir, "m.so"), opt_level=opt,
                                  timings=tm)
        res["seconds"] = time.perf_counter() - t0
        res["stages"] = {k: round(v, 3) for k, v in tm.items()}
        res["so_mb"] = os.path.getsize(so) / 2 ** 20
        res["peak_rss_mb"] = _vm_hwm_mb()
        res["status"] = "ok"
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)


# -- parent -----------------------------------------------------------------------------------
def growth_exponent(points: list[tuple[int, float]]) -> float | None:
    """Least-squares slope of log(seconds) over log(size)."""
    pts = [(math.log(n), math.log(s)) for n, s in points if n > 0 and s > 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    den = sum((x - mx) ** 2 for x, _ in pts)
    return None if den == 0 else sum((x - mx) * (y - my) for x, y in pts) / den


def _top_stages(stages: dict, k: int = 4) -> str:
    top = sorted(stages.items(), key=lambda kv: -kv[1])[:k]
    return ", ".join(f"{n} {s:.1f}" for n, s in top)


def markdown(result: dict) -> str:
    lines = [f"Machine: {result['machine']}", "",
             f"Cold compiles at -O{result['opt']} (empty cache), one fresh process each.", "",
             "| model | seconds | largest stages (s) | peak RSS MB | .so MB |",
             "| --- | ---: | --- | ---: | ---: |"]
    for r in result["rows"]:
        if r.get("status") != "ok":
            lines.append(f"| {r['name']} | {r.get('status')}: {r.get('error', '')[:80]} "
                         "| | | |")
            continue
        lines.append(f"| {r['name']} | {r['seconds']:.2f} | {_top_stages(r['stages'])} | "
                     f"{r['peak_rss_mb']:.0f} | {r['so_mb']:.1f} |")
    for s, info in result.get("series", {}).items():
        e = info["exponent"]
        pts = ", ".join(f"{n}: {sec:.1f} s" for n, sec in info["points"])
        lines += ["", f"Series {s}: {pts}; growth exponent "
                  + (f"{e:.2f}" if e is not None else "-")]
    return "\n".join(lines) + "\n"


def series_sizes(spec: str, s: str) -> list[int]:
    """The sizes of series ``s`` in ``--sizes``: a plain comma list applies
    to every series; 'chain=250,1000;layers=2,24' gives each its own (a
    series it does not name keeps DEFAULT_SIZES)."""
    if "=" not in spec:
        return [int(v) for v in spec.split(",") if v] or DEFAULT_SIZES[s]
    for part in spec.split(";"):
        name, _, values = part.partition("=")
        if name.strip() == s:
            return [int(v) for v in values.split(",") if v]
    return DEFAULT_SIZES[s]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS),
                    help="comma list of benchmark models ('none' for only the series)")
    ap.add_argument("--series", default="", help=f"comma list of {', '.join(SERIES)}")
    ap.add_argument("--sizes", default="",
                    help="series sizes: a comma list for every series, or per series "
                         "'chain=250,1000;layers=2,24' (default per series)")
    ap.add_argument("-O", dest="opt", type=int, default=3, choices=[0, 1, 2, 3])
    ap.add_argument("--out", default=os.path.join(HERE, "results"), help="results directory")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per compile")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker.serve(args.worker, args.result, lambda res: _work(args.worker, args.opt, res))
        return 0
    import onnx

    import machine
    series = [s for s in args.series.split(",") if s]
    bad = [s for s in series if s not in SERIES]
    if bad:
        raise SystemExit(f"--series: unknown {', '.join(bad)}; known: {', '.join(SERIES)}")
    models = [] if args.models in ("", "none") else args.models.split(",")
    tmp = tempfile.mkdtemp(prefix="compile_time_models_")
    result = {"timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "machine": machine.machine_line(), "opt": args.opt, "rows": [], "series": {}}
    print(f"Machine: {result['machine']}; load {os.getloadavg()[0]:.2f}", flush=True)

    def one(name: str) -> dict:
        path = os.path.join(tmp, f"{name}.onnx")
        try:
            onnx.save(build(name), path)
        except (ImportError, SystemExit) as e:
            return {"name": name, "status": "skipped", "error": f"cannot build: {e}"}
        row = worker.run(__file__, path, ["-O", str(args.opt)], args.timeout)
        row["name"] = name
        os.unlink(path)
        if row.get("status") == "ok":
            print(f"{name:<16} {row['seconds']:8.2f} s  peak {row['peak_rss_mb']:6.0f} MB  "
                  f"{_top_stages(row['stages'])}", flush=True)
        else:
            print(f"{name:<16} {row.get('status')}: {row.get('error', '')}", flush=True)
        return row
    try:
        for name in models:
            result["rows"].append(one(name))
        for s in series:
            sizes = series_sizes(args.sizes, s)
            rows = [one(f"{s}{n}") for n in sizes]
            result["rows"] += rows
            pts = [(n, r["seconds"]) for n, r in zip(sizes, rows) if r.get("status") == "ok"]
            result["series"][s] = {"points": pts, "exponent": growth_exponent(pts)}
            e = result["series"][s]["exponent"]
            print(f"series {s}: growth exponent {e:.2f}" if e is not None else
                  f"series {s}: too few points", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "compile_time.json"), "w") as f:
        json.dump(result, f, indent=1)
    with open(os.path.join(args.out, "compile_time.md"), "w") as f:
        f.write(markdown(result))
    print(f"wrote {os.path.join(args.out, 'compile_time.json')} and compile_time.md")
    return 0 if all(r.get("status") in ("ok", "skipped") for r in result["rows"]) else 1


if __name__ == "__main__":
    sys.exit(main())
