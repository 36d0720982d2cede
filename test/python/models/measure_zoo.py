"""Compile time and run latency of zoo models vs onnxruntime (a script, not
a test): python test/python/models/measure_zoo.py [names...] [--O 3] [--runs 10]

Without --O, ResNet-18/MobileNetV2 use -O2 (their -O3 compile currently
gets OOM-killed, see test_models_e2e.py) and the rest -O3.
Prints one line per model: compile seconds (with per-phase timings), our
median latency, onnxruntime median latency with 1 thread and with its
default thread pool, and the max abs difference to onnxruntime.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time

import numpy as np
import onnxruntime as ort

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.testing import models as M
from onnx_mlir_py.timings import Timings

BUILD = {
    "mnist_cnn": lambda: M.mnist_cnn(),
    "mlp": lambda: M.mlp(batch=64),
    "resnet18": lambda: M.resnet18(batch=1),
    "mobilenetv2": lambda: M.mobilenetv2(batch=1),
    "encoder_layer": lambda: M.encoder_layer(batch="N"),
    "bert_layer": lambda: M.bert_layer(seq=128, batch="N"),
}


def _median_latency(fn, runs: int) -> float:
    fn()  # warm-up
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def measure(name: str, opt_level: int, runs: int, workdir: str) -> dict:
    model = BUILD[name]()
    feeds = M.random_inputs(model, batch=1)
    timings = Timings()
    t = time.perf_counter()
    so = onnx_mlir_py.compile(model, output=os.path.join(workdir, f"{name}.so"),
                              opt_level=opt_level, timings=timings)
    compile_s = time.perf_counter() - t
    sess = ExecutionSession(so)
    ins = [feeds[i.name] for i in model.graph.input]
    ours = _median_latency(lambda: sess.run(ins), runs)
    got = sess.run(ins)[0]
    res = {"model": name, "opt_level": opt_level, "compile_s": round(compile_s, 1),
           "phases": {k: round(v, 2) for k, v in timings.items() if isinstance(v, float)},
           "ours_ms": round(ours * 1e3, 2)}
    for threads in (1, 0):
        so_opt = ort.SessionOptions()
        so_opt.intra_op_num_threads = threads
        s = ort.InferenceSession(model.SerializeToString(), so_opt,
                                 providers=["CPUExecutionProvider"])
        key = "ort_1thread_ms" if threads == 1 else "ort_default_ms"
        res[key] = round(_median_latency(lambda: s.run(None, feeds), runs) * 1e3, 2)
        if threads == 1:
            res["max_abs_diff"] = float(np.abs(s.run(None, feeds)[0] - got).max())
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="*", default=["resnet18", "mobilenetv2", "bert_layer"])
    ap.add_argument("--O", type=int, default=None, dest="opt_level")
    ap.add_argument("--runs", type=int, default=10)
    a = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        for n in a.names:
            lvl = a.opt_level if a.opt_level is not None else \
                (2 if n in ("resnet18", "mobilenetv2") else 3)
            print(json.dumps(measure(n, lvl, a.runs, d)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
