"""``onnx-mlir-py profile model.onnx [--runs N] [--threads N]``: where a
model's time goes.

It compiles the model with ``--profile`` (through ``InferenceSession`` with
``enable_profiling``, so the library lands in the compile cache), runs it on
random inputs (a fixed seed; symbolic dims from ``--dim NAME=VALUE``, else
1), and reads back the trace the library wrote (onnxruntime's profile
format, kept as ``--trace``). It prints the nodes that took the most time,
the time per op type, and the share of the model call spent outside the
nodes' code (the entry wrapper's input checks and output wrapping,
allocations between nodes), and draws the top nodes as a PNG bar chart
(``--chart``; needs matplotlib: ``pip install 'onnx-mlir-py[profile]'``).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from onnx_mlir_py.profiler.summary import report, summarize, write_chart


def random_feed(inputs, dims: dict[str, int], seed: int = 0) -> dict[str, np.ndarray]:
    """Random inputs for ``InferenceSession.get_inputs()``: symbolic dims from
    ``dims`` (else 1)."""
    from onnx_mlir_py.inference.model_info import np_dtype
    rng = np.random.default_rng(seed)
    feed = {}
    for i in inputs:
        shape = [d if isinstance(d, int) and d >= 0 else dims.get(d, 1) if isinstance(d, str)
                 else 1 for d in i.shape]
        dt = np_dtype(i.type)
        if dt.kind == "f":
            feed[i.name] = rng.standard_normal(shape).astype(dt)
        elif dt.kind == "b":
            feed[i.name] = rng.integers(0, 2, shape).astype(dt)
        else:
            feed[i.name] = rng.integers(0, 4, shape).astype(dt)
    return feed


def _parse_dims(items: list[str]) -> dict[str, int]:
    out = {}
    for it in items:
        name, _, value = it.partition("=")
        if not name or not value.isdigit():
            raise SystemExit(f"onnx-mlir-py profile: error: --dim takes NAME=VALUE, got {it!r}")
        out[name] = int(value)
    return out


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="onnx-mlir-py profile",
                                 description="Time every node of a model compiled with "
                                             "--profile; print where the time goes.")
    ap.add_argument("model", help="the .onnx file")
    ap.add_argument("--runs", type=int, default=10, help="measured runs (default 10)")
    ap.add_argument("--warmup", type=int, default=1, help="runs not measured (default 1)")
    ap.add_argument("--threads", type=int, default=1, help="threads of the -O3 kernels")
    for lvl in range(4):
        ap.add_argument(f"-O{lvl}", dest="opt_level", action="store_const", const=lvl)
    ap.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                    help="compile precision (as onnx-mlir-py --precision): bf16 times the "
                         "model's Conv / MatMul / Gemm in bf16 with f32 accumulation")
    ap.add_argument("--dim", action="append", default=[], metavar="NAME=VALUE",
                    help="value of a symbolic input dim (default 1)")
    ap.add_argument("--top", type=int, default=15, help="nodes listed and charted")
    ap.add_argument("--trace", help="the trace JSON (default: <model>.profile.json)")
    ap.add_argument("--chart", help="the PNG bar chart (default: <model>.profile.png)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    ap.add_argument("--debug", action="store_true", help="show Python tracebacks")
    ap.set_defaults(opt_level=3)
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if args.runs < 1 or args.warmup < 0 or args.threads < 0:
        print("onnx-mlir-py profile: error: --runs must be >= 1, --warmup and --threads >= 0",
              file=sys.stderr)
        return 2
    from onnx_mlir_py.cli_guard import run_guarded
    return run_guarded(lambda: _profile(args), args.debug)


def _profile(args) -> int:
    import onnx_mlir_py as ort
    base = args.model[:-5] if args.model.endswith(".onnx") else args.model
    trace = args.trace or base + ".profile.json"
    chart = args.chart or base + ".profile.png"
    so = ort.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = trace + ".tmp"
    so.intra_op_num_threads = args.threads
    if args.precision != "fp32":
        from onnx_mlir_py.inference.config_entries import PRECISION
        so.add_session_config_entry(PRECISION, args.precision)
    so.graph_optimization_level = {0: ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
                                   1: ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
                                   2: ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
                                   3: ort.GraphOptimizationLevel.ORT_ENABLE_ALL}[args.opt_level]
    prec = "" if args.precision == "fp32" else f", --precision {args.precision}"
    print(f"compiling {args.model} with --profile (-O{args.opt_level}{prec}) ...", file=sys.stderr)
    sess = ort.InferenceSession(args.model, so)
    feed = random_feed(sess.get_inputs(), _parse_dims(args.dim), args.seed)
    for _ in range(args.warmup):
        sess.run(None, feed)
    calls = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        sess.run(None, feed)
        calls.append(time.perf_counter() - t0)
    os.replace(sess.end_profiling(), trace)
    with open(trace) as f:
        s = summarize(json.load(f), skip=args.warmup)
    print(f"{args.model}: -O{args.opt_level}{prec}, {args.threads} thread(s)")
    report(s, args.top, call_us=1e6 * sum(calls) / len(calls))
    print(f"\ntrace (Perfetto / chrome://tracing): {trace}")
    if write_chart(s, chart, args.top, os.path.basename(args.model)) is None:
        print("chart: not drawn, matplotlib is not installed "
              "(pip install 'onnx-mlir-py[profile]')")
    else:
        print(f"chart: {chart}")
    return 0
