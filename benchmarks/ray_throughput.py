"""Scoring throughput on a local Ray cluster: onnx-mlir-py's OnnxScorer
(onnx_mlir_py.integrations.ray: compiled once in the driver) against
onnxruntime in the same recipe (a map_batches actor class holding an
onnxruntime session), rows per second.

    pip install -e ".[ray,bench]"
    python benchmarks/ray_throughput.py                      # 2 workers
    python benchmarks/ray_throughput.py --rows 20000 --workers 2 --rounds 3

The model is an MLP 784-512-512-10 (ReLU, Softmax) with a dynamic batch,
seeded random weights. Each worker is one Ray actor of one CPU with one
thread per session (intra-op 1 for onnxruntime, num_threads 1 for ours), so
``--workers`` actors use that many cores. The dataset is materialized in the
object store first; each round scores it with each engine in turn
(alternating, ours first in even rounds) and times the whole
``map_batches(...).materialize()``, actor start included. The table (with
the machine line) goes to ``--out`` as ray_throughput.md / .json.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def mlp_model(seed: int = 0) -> bytes:
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(seed)
    dims, nodes, inits, cur = [784, 512, 512, 10], [], [], "x"
    for i in range(3):
        w = (rng.standard_normal((dims[i], dims[i + 1])) / np.sqrt(dims[i])).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"),
                  numpy_helper.from_array(np.zeros(dims[i + 1], np.float32), f"b{i}")]
        nodes += [helper.make_node("MatMul", [cur, f"w{i}"], [f"m{i}"]),
                  helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"])]
        cur = f"a{i}"
        if i < 2:
            nodes.append(helper.make_node("Relu", [cur], [f"r{i}"]))
            cur = f"r{i}"
    nodes.append(helper.make_node("Softmax", [cur], ["y"], axis=1))
    g = helper.make_graph(nodes, "mlp",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 784])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])],
                          inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)],
                             ir_version=8).SerializeToString()


class OrtScorer:
    """The same recipe with onnxruntime: one session per actor."""

    def __init__(self, model: bytes):
        import onnxruntime
        so = onnxruntime.SessionOptions()
        so.intra_op_num_threads = 1
        self.sess = onnxruntime.InferenceSession(model, so, providers=["CPUExecutionProvider"])

    def __call__(self, batch: dict) -> dict:
        batch["y"] = self.sess.run(None, {"x": batch["data"]})[0]
        return batch


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    args = ap.parse_args(argv)
    try:
        import ray
    except ImportError:
        print("error: needs the [ray] extra: pip install -e '.[ray]'", file=sys.stderr)
        return 1
    from machine import machine_line
    from onnx_mlir_py.integrations.ray import OnnxScorer, compile_for_ray
    model = mlp_model()
    tmp = tempfile.mkdtemp(prefix="ray")
    os.environ.setdefault("ONNX_MLIR_PY_NUM_THREADS", "1")
    ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False, _temp_dir=tmp)
    try:
        t0 = time.perf_counter()
        ref = compile_for_ray(model)
        compile_s = time.perf_counter() - t0
        x = np.random.default_rng(1).standard_normal((args.rows, 784)).astype(np.float32)
        # blocks for every worker (from_numpy makes one block)
        ds = ray.data.from_numpy(x).repartition(args.workers * 8).materialize()
        env = {"env_vars": {"ONNX_MLIR_PY_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}}
        engines = {
            "onnx-mlir-py": lambda: ds.map_batches(
                OnnxScorer, fn_constructor_kwargs={"model": ref, "columns": {"x": "data"}},
                batch_size=args.batch, batch_format="numpy", concurrency=args.workers,
                num_cpus=1, runtime_env=env),
            "onnxruntime": lambda: ds.map_batches(
                OrtScorer, fn_constructor_kwargs={"model": model}, batch_size=args.batch,
                batch_format="numpy", concurrency=args.workers, num_cpus=1, runtime_env=env),
        }
        times: dict[str, list[float]] = {k: [] for k in engines}
        for r in range(args.rounds):
            order = list(engines) if r % 2 == 0 else list(reversed(engines))
            for name in order:
                t0 = time.perf_counter()
                out = engines[name]().materialize()
                times[name].append(time.perf_counter() - t0)
                assert out.count() == args.rows
    finally:
        ray.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
    line = machine_line()
    rows = {k: args.rows / float(np.median(v)) for k, v in times.items()}
    md = [line, "",
          f"Ray Data map_batches, {args.workers} workers (1 CPU, 1 thread each), MLP 784-512-512-10, "
          f"{args.rows} rows, batch {args.batch}, median of {args.rounds} alternating rounds "
          f"(actor start included); our compile in the driver: {compile_s:.1f} s, once "
          f"(a compile cache hit if the model was compiled before).", "",
          "| engine | rows/s | seconds (median) |", "| --- | ---: | ---: |"]
    md += [f"| {k} | {rows[k]:,.0f} | {np.median(times[k]):.2f} |" for k in engines]
    md.append(f"\nours / onnxruntime throughput: {rows['onnx-mlir-py'] / rows['onnxruntime']:.2f}")
    text = "\n".join(md) + "\n"
    print(text)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "ray_throughput.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, "ray_throughput.json"), "w") as f:
        json.dump({"machine": line, "args": vars(args), "seconds": times,
                   "rows_per_s": rows, "compile_s": compile_s}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
