"""Pieces of the benchmark: the model set, FLOP counting, interleaved timing
and numpy's single-thread GFLOPS. ``run.py`` is the command."""
from __future__ import annotations

import inspect
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# -- the model set ---------------------------------------------------------------
ZOO_MODELS = ["mnist_cnn", "mlp", "resnet18", "mobilenetv2", "mobilenetv3", "encoder_layer",
              "bert_layer"]
MATMUL = "matmul1024"
# real-sized models written in plain torch and exported by torch.onnx (torch_zoo.py)
TORCH_MODELS = (["resnet50", "text_cnn"]
                + [f"{rnn}_b{b}_t{t}" for rnn in ("lstm", "gru") for b in (2, 16) for t in (20, 100)]
                + ["vit_tiny", "bert_base", "gpt2_small", "yolo"])
# scikit-learn models exported by skl2onnx (ai.onnx.ml tree ensembles; sklearn_zoo.py)
SKLEARN_MODELS = ["rf100_10k", "gbdt100_10k"]
# one LLM decode step with a KV cache, built with onnx.helper (decode_zoo.py); run.py
# shows tokens/s and the weights' GB/s for these rows
DECODE_MODELS = ["gpt2_decode", "llama_int4_decode"]
# dynamic-axes copies of zoo models (name -> (static model, axis -> dim_param)),
# run at the static model's shape and timed against it as well
DYNAMIC = {"resnet18_dyn": ("resnet18", {0: "N"}),
           "resnet18_dyn_hw": ("resnet18", {0: "N", 2: "H", 3: "W"}),
           "mobilenetv2_dyn": ("mobilenetv2", {0: "N"}),
           "mobilenetv3_dyn": ("mobilenetv3", {0: "N"}),
           "bert_layer_dyn": ("bert_layer", {0: "N", 1: "S"}),
           # a torch_zoo model: exported with those axes dynamic (torch_zoo.export_dynamic)
           "efficientnet_dyn": ("efficientnet_b0", {0: "N", 2: "H", 3: "W"})}
# torch_zoo models that are only the static twin of a DYNAMIC row
TORCH_TWINS = ["efficientnet_b0"]
# models quantized by onnxruntime's tools (quant_zoo.py), beside their f32 rows
QUANT_MODELS = ["resnet18_qdq", "resnet50_qdq", "mobilenetv2_qdq", "bert_base_dq"]
ALL_MODELS = (ZOO_MODELS + [MATMUL] + TORCH_MODELS + DECODE_MODELS + SKLEARN_MODELS
              + list(DYNAMIC) + QUANT_MODELS)


def matmul_model(n: int = 1024, seed: int = 0) -> onnx.ModelProto:
    """(n, n) input times an (n, n) constant: the GFLOPS check."""
    rng = np.random.default_rng(seed)
    w = numpy_helper.from_array((rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32), "W")
    g = helper.make_graph(
        [helper.make_node("MatMul", ["input", "W"], ["output"], name="matmul")], "matmul",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [n, n])],
        [helper.make_tensor_value_info("output", TensorProto.FLOAT, [n, n])], [w])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 10
    return m


def build(name: str) -> onnx.ModelProto:
    if name == MATMUL:
        return matmul_model()
    if name.startswith("matmul") and name[6:].isdigit():  # e.g. matmul256 for quick runs
        return matmul_model(int(name[6:]))
    if name in TORCH_MODELS or name in TORCH_TWINS:
        import tempfile
        import torch_zoo
        with tempfile.TemporaryDirectory(prefix="bench_export_") as d:
            return onnx.load(torch_zoo.export(name, os.path.join(d, f"{name}.onnx")))
    if name in DYNAMIC and DYNAMIC[name][0] in TORCH_TWINS:
        import tempfile
        import torch_zoo
        base, axes = DYNAMIC[name]
        with tempfile.TemporaryDirectory(prefix="bench_export_") as d:
            return onnx.load(torch_zoo.export_dynamic(base, os.path.join(d, f"{name}.onnx"),
                                                      axes))
    if name in SKLEARN_MODELS:
        import sklearn_zoo
        return sklearn_zoo.build(name)
    if name in DECODE_MODELS:
        import decode_zoo
        return decode_zoo.build(name)
    if name in QUANT_MODELS:
        import quant_zoo
        return quant_zoo.build(name)
    from onnx_mlir_py.testing import models
    if name in DYNAMIC:
        base, names = DYNAMIC[name]
        return models.with_symbolic_dims(models.ZOO[base](), names)
    if name not in models.ZOO:
        raise SystemExit(f"unknown model {name!r}; known: {', '.join(ALL_MODELS)}")
    return models.ZOO[name]()


def static_twin(name: str) -> onnx.ModelProto | None:
    """The static model a dynamic row is compared with (None for the others)."""
    return build(DYNAMIC[name][0]) if name in DYNAMIC else None


def feeds(name: str, model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    """The inputs of model ``name`` (token ids in range for the torch models)."""
    if name in TORCH_MODELS:
        import torch_zoo
        return torch_zoo.feeds(name, seed)
    if name in SKLEARN_MODELS:
        import sklearn_zoo
        return sklearn_zoo.feeds(name)
    if name in DECODE_MODELS:
        import decode_zoo
        return decode_zoo.feeds(name, model, seed)
    if name in QUANT_MODELS:
        import quant_zoo
        return quant_zoo.feeds(name, model, seed)
    return random_feeds(model, seed)


def random_feeds(model: onnx.ModelProto, seed: int = 0) -> dict[str, np.ndarray]:
    try:
        from onnx_mlir_py.testing.models import random_inputs
        return random_inputs(model, seed=seed)
    except ImportError:  # the zoo module is optional for matmul models
        rng = np.random.default_rng(seed)
        init = {i.name for i in model.graph.initializer}
        return {vi.name: rng.standard_normal([d.dim_value for d in
                                              vi.type.tensor_type.shape.dim]).astype(np.float32)
                for vi in model.graph.input if vi.name not in init}


# -- FLOPs: 2 x MACs of Conv / MatMul / Gemm / LSTM / GRU / RNN ----------------
def _shapes(model: onnx.ModelProto) -> dict[str, list[int]]:
    # data_prop: Shape -> Gather -> Concat -> Reshape chains of exported models
    inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
    g = inferred.graph
    out = {}
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        t = vi.type.tensor_type
        if t.HasField("shape"):
            out[vi.name] = [d.dim_value if d.HasField("dim_value") else 0 for d in t.shape.dim]
    for init in g.initializer:
        out[init.name] = list(init.dims)
    return out


def count_flops(model: onnx.ModelProto) -> int:
    shapes = _shapes(model)
    total = 0
    for node in model.graph.node:
        y = shapes.get(node.output[0])
        if not y:
            continue
        if node.op_type == "Conv":
            w = shapes.get(node.input[1])  # (M, C/group, k...)
            if w:
                total += 2 * int(np.prod(y)) * int(np.prod(w[1:]))
        elif node.op_type == "MatMul":
            a = shapes.get(node.input[0])
            if a:
                total += 2 * int(np.prod(y)) * a[-1]
        elif node.op_type == "Gemm":
            a = shapes.get(node.input[0])
            trans_a = next((a_.i for a_ in node.attribute if a_.name == "transA"), 0)
            if a:
                total += 2 * int(np.prod(y)) * (a[0] if trans_a else a[1])
        elif node.op_type in ("LSTM", "GRU", "RNN"):
            x, w, r = (shapes.get(n) for n in node.input[:3])
            if x and w and r:   # X [T, B, I] (layout 0), W [D, G*H, I], R [D, G*H, H]
                layout = next((a_.i for a_ in node.attribute if a_.name == "layout"), 0)
                steps, batch = (x[1], x[0]) if layout else (x[0], x[1])
                total += 2 * steps * batch * w[0] * w[1] * (w[2] + r[2])
    return total


# -- engines ---------------------------------------------------------------------
def ours_threads_supported() -> bool:
    from onnx_mlir_py import ExecutionSession
    try:
        return "num_threads" in inspect.signature(ExecutionSession.__init__).parameters
    except (TypeError, ValueError):
        return False


def ours_session(path: str, threads: int | None):
    from onnx_mlir_py import ExecutionSession
    if threads is not None and ours_threads_supported():
        return ExecutionSession(path, num_threads=threads)
    return ExecutionSession(path)


def ort_session(path: str, threads: int):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def ort_level_spread(path: str, feeds: dict) -> float:
    """Max abs difference between onnxruntime's ORT_ENABLE_ALL and
    ORT_DISABLE_ALL outputs (1 thread): how far its own int8 paths disagree."""
    import onnxruntime as ort
    outs = []
    for level in (ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
                  ort.GraphOptimizationLevel.ORT_DISABLE_ALL):
        so = ort.SessionOptions()
        so.intra_op_num_threads, so.graph_optimization_level = 1, level
        outs.append(ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
                    .run(None, feeds))
    return max(float(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64)).max())
               for a, b in zip(*outs))


def check_outputs(ours: list[np.ndarray], ref: list[np.ndarray], rtol=1e-3, atol=1e-4
                  ) -> tuple[bool, float]:
    """(all close, max abs error)."""
    if len(ours) != len(ref):
        return False, float("inf")
    ok, err = True, 0.0
    for a, b in zip(ours, ref):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False, float("inf")
        d = np.abs(a.astype(np.float64) - b.astype(np.float64))
        err = max(err, float(d.max()) if d.size else 0.0)
        ok = ok and bool(np.allclose(a, b, rtol=rtol, atol=atol))
    return ok, err


def time_interleaved(run_a, run_b, warmup: int, min_reps: int, max_reps: int,
                     budget_s: float, settle_s: float = 0.0, block_s: float = 0.02
                     ) -> tuple[list[float], list[float]]:
    """Alternate A and B in blocks (order flipped every round so neither
    always runs second), after ``warmup`` runs of each; stop after
    ``max_reps`` runs of each or when ``budget_s`` of run time is spent and
    ``min_reps`` runs are done.

    A block is as many back-to-back runs of one engine as fit in ``block_s``
    (at least one). ``settle_s``: a pause before each block, not timed, so the
    engine starts on idle cores. It matters with several threads:
    onnxruntime's pool threads keep spinning for tens of milliseconds after a
    run (measured here: a 2-thread 1024^3 matmul of ours ran 1.5-1.9x slower
    right after an onnxruntime run, and unaffected after 50-100 ms).
    After a pause the first run of the block is a warm-up, not timed, for
    both engines: the run that follows 0.1 s of idle cores is slower for
    reasons of the machine, not the engine (measured here on MobileNetV2 at 2
    threads: +3.4 ms for onnxruntime, +5 ms for ours, against 5.4 / 11.4 ms),
    and with ~2 runs per block it would be half of the samples."""
    t0 = time.perf_counter()
    run_a()
    run_b()
    first = time.perf_counter() - t0
    if first * (warmup + min_reps) > 4 * budget_s:  # slow model: fewer, still >= 3
        warmup, min_reps = 0, max(3, min(min_reps, int(2 * budget_s / first)))
    for _ in range(max(0, warmup - 1)):
        run_a()
        run_b()
    per_run = max(first / 2, 1e-6)
    block = max(1, min(int(block_s / per_run), max_reps // max(1, min_reps)))
    ta, tb = [], []
    spent = 0.0
    i = 0
    while len(ta) < max_reps:
        pair = ((run_a, ta), (run_b, tb)) if i % 2 == 0 else ((run_b, tb), (run_a, ta))
        for fn, acc in pair:
            if settle_s:
                time.sleep(settle_s)
                fn()                      # warm-up after the pause, not timed
            for _ in range(block):
                t0 = time.perf_counter()
                fn()
                dt = time.perf_counter() - t0
                acc.append(dt)
                spent += dt
        i += 1
        if min(len(ta), len(tb)) >= min_reps and spent >= budget_s:
            break
    return ta, tb


def time_engines(run_ours, run_ort, threads: int, cfg: dict) -> dict:
    """Ours against onnxruntime in alternating blocks (:func:`time_interleaved`;
    with several threads each block starts after a 0.1 s pause, so the other
    engine's pool threads have gone idle): medians, ratio, runs, spreads."""
    t_ours, t_ort = time_interleaved(run_ours, run_ort, settle_s=0.1 if threads > 1 else 0.0,
                                     **cfg)
    ours_ms, ort_ms = median_ms(t_ours), median_ms(t_ort)
    return {"ours_ms": ours_ms, "ort_ms": ort_ms, "ratio": ours_ms / ort_ms,
            "reps": len(t_ours), "ours_spread_pct": spread_pct(t_ours),
            "ort_spread_pct": spread_pct(t_ort)}


def process_cpu_s() -> float:
    """CPU seconds used so far by every thread of this process (user + system)."""
    import resource
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def idle_cpu_s(run, wait_s: float = 1.0) -> float:
    """CPU seconds the process burns in the ``wait_s`` after one ``run()``
    while this thread sleeps: what an engine's pool threads cost between
    requests (spinning, waiting for the next run). The whole process is
    counted, so the other engine must have been idle for ``wait_s`` already
    (measure the two engines one after the other, as ``idle_cpu_pair``)."""
    run()
    c0 = process_cpu_s()
    time.sleep(wait_s)
    return process_cpu_s() - c0


def idle_cpu_pair(run_ours, run_ort, wait_s: float = 1.0) -> dict:
    """``idle_cpu_s`` of onnxruntime then of ours, after ``wait_s`` of rest:
    each window starts when the other engine has been idle for ``wait_s``."""
    time.sleep(wait_s)
    ort_s = idle_cpu_s(run_ort, wait_s)
    return {"ours_idle_cpu_s": idle_cpu_s(run_ours, wait_s), "ort_idle_cpu_s": ort_s}


def median_ms(ts: list[float]) -> float:
    return statistics.median(ts) * 1e3


def spread_pct(ts: list[float]) -> float | None:
    """Interquartile range / median in percent: how disturbed the runs were."""
    if len(ts) < 4:
        return None
    q = statistics.quantiles(ts, n=4)
    return 100 * (q[2] - q[0]) / statistics.median(ts)


def write_result(out_dir: str, stem: str, result: dict, md: str) -> tuple[str, str]:
    """``<out_dir>/<stem>.json`` (the result) and ``<stem>.md`` (the table); their paths."""
    import json
    os.makedirs(out_dir, exist_ok=True)
    paths = os.path.join(out_dir, f"{stem}.json"), os.path.join(out_dir, f"{stem}.md")
    with open(paths[0], "w") as f:
        json.dump(result, f, indent=1)
    with open(paths[1], "w") as f:
        f.write(md)
    return paths


# -- numpy single-thread GFLOPS ----------------------------------------------------
_NUMPY_SNIPPET = """
import time, statistics, numpy as np
n = {n}
a = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
b = np.random.default_rng(1).standard_normal((n, n)).astype(np.float32)
a @ b
ts = []
for _ in range({reps}):
    t0 = time.perf_counter(); a @ b; ts.append(time.perf_counter() - t0)
print(2 * n ** 3 / statistics.median(ts) / 1e9)
"""


def numpy_gflops_1t(n: int = 1024, reps: int = 10) -> tuple[float, str]:
    """numpy matmul GFLOPS on one thread: threadpoolctl in this process if
    installed, else a child process with OPENBLAS_NUM_THREADS=1."""
    code = _NUMPY_SNIPPET.format(n=n, reps=reps)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
                   MKL_NUM_THREADS="1")
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True).stdout
        return float(out.strip().splitlines()[-1]), "child process, OPENBLAS_NUM_THREADS=1"
    with threadpool_limits(limits=1):
        ns: dict = {}
        import contextlib
        import io
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(code, ns)
        return float(buf.getvalue().strip().splitlines()[-1]), "threadpoolctl limits=1"
