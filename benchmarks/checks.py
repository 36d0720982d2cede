"""What the run-time checks of the compiled code cost: each benchmark model
compiled at -O3 with the checks (the default) and without them
(``runtime_checks=False``, UNSAFE), timed against each other:

    python benchmarks/checks.py [--models resnet18_dyn,...] [--threads 1] [--quick]

Per model, in a worker process of its own: both libraries must give the same
outputs (bit for bit: the checks change no arithmetic); then runs alternate in
blocks between the two (``harness.time_interleaved``, the pairing run.py
uses for the engines), median of N. Prints checked ms, unchecked ms, their
ratio (goal: below 1.03) and how many checks the library has
(``om_check_count``); a model whose two libraries are byte-identical (no
check at all) is not timed. Besides the models of run.py (the static ones have
few checks: their dims are known), two index-heavy ones: ``embedding_dyn``
(Gather rows of a [32000, 256] table by [N, S] ids) and ``gather_elements``
(GatherElements of one float per index, [512, 512], the worst case: the
index check reads each index once more).
"""
from __future__ import annotations

import argparse
import ctypes
import filecmp
import os
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402
import worker  # noqa: E402

QUICK = dict(warmup=1, min_reps=3, max_reps=5, budget_s=0.2)
FULL = dict(warmup=3, min_reps=20, max_reps=3000, budget_s=6.0)
INDEX_MODELS = ("embedding_dyn", "gather_elements")
DEFAULT = harness.ALL_MODELS + list(INDEX_MODELS)


def _index_model(name: str):
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper
    rng = np.random.default_rng(0)
    if name == "embedding_dyn":
        table = numpy_helper.from_array(rng.standard_normal((32000, 256)).astype(np.float32), "E")
        # [N, S] ids -> [N, S, 256]
        nodes = [h.make_node("Gather", ["E", "input"], ["output"], name="embed", axis=0)]
        ins = [h.make_tensor_value_info("input", T.INT64, ["N", "S"])]
        inits = [table]
    else:
        nodes = [h.make_node("GatherElements", ["x", "input"], ["output"], name="ge", axis=1)]
        ins = [h.make_tensor_value_info("x", T.FLOAT, [512, 512]),
               h.make_tensor_value_info("input", T.INT64, [512, 512])]
        inits = []
    g = h.make_graph(nodes, name, ins, [h.make_tensor_value_info("output", T.FLOAT, None)],
                     inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 10
    return onnx.shape_inference.infer_shapes(m)


def _feeds(name: str, model) -> dict:
    rng = np.random.default_rng(1)
    if name == "embedding_dyn":
        return {"input": rng.integers(-32000, 32000, (16, 128))}
    if name == "gather_elements":
        return {"x": rng.standard_normal((512, 512)).astype(np.float32),
                "input": rng.integers(-512, 512, (512, 512))}
    twin = harness.static_twin(name)
    return harness.random_feeds(twin if twin is not None else model)


def check_count(so: str) -> int:
    return ctypes.c_int64.in_dll(ctypes.CDLL(so), "om_check_count").value


def _work(name: str, threads: list[int], quick: bool, res: dict) -> None:
    import onnx

    import onnx_mlir_py
    model = _index_model(name) if name in INDEX_MODELS else harness.build(name)
    feeds = _feeds(name, model)
    args = [feeds[i.name] for i in model.graph.input if i.name in feeds]
    tmp = tempfile.mkdtemp(prefix=f"checks_{name}_")
    try:
        path = os.path.join(tmp, f"{name}.onnx")
        onnx.save(model, path)
        so_on = onnx_mlir_py.compile(path, os.path.join(tmp, "on.so"), opt_level=3)
        so_off = onnx_mlir_py.compile(path, os.path.join(tmp, "off.so"), opt_level=3,
                                      runtime_checks=False)
        res["checks"], res["checks_off"] = check_count(so_on), check_count(so_off)
        res["identical"] = filecmp.cmp(so_on, so_off, shallow=False)
        res["status"] = "ok"
        if res["identical"]:            # no check at all: nothing to time
            return
        cfg = QUICK if quick else FULL
        res["timings"] = {}
        for t in threads:
            on, off = harness.ours_session(so_on, t), harness.ours_session(so_off, t)
            for a, b in zip(on.run(args), off.run(args)):
                if not np.array_equal(a, b, equal_nan=True):
                    res["status"] = "mismatch"
                    return
            t_on, t_off = harness.time_interleaved(lambda: on.run(args), lambda: off.run(args),
                                                   settle_s=0.1 if t > 1 else 0.0, **cfg)
            ms_on, ms_off = harness.median_ms(t_on), harness.median_ms(t_off)
            res["timings"][str(t)] = {"on_ms": ms_on, "off_ms": ms_off, "ratio": ms_on / ms_off,
                                      "reps": len(t_on), "on_spread_pct": harness.spread_pct(t_on),
                                      "off_spread_pct": harness.spread_pct(t_off)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", help=f"comma list (default: {','.join(DEFAULT)})")
    ap.add_argument("--out", help="write the rows as JSON here")
    args = worker.parse(ap, argv, threads="1")
    threads = args.threads
    if args.worker:
        worker.serve(args.worker, args.result,
                     lambda res: _work(args.worker, threads, args.quick, res))
        return 0
    names = [m.strip() for m in (args.models or ",".join(DEFAULT)).split(",") if m.strip()]
    print(f"{os.cpu_count()} cpus, load {os.getloadavg()[0]:.2f}")
    print(f"{'model':<16} {'thr':>3} {'checks':>6} {'checked ms':>11} {'unchecked ms':>12} "
          f"{'ratio':>7}")
    rows, worst = [], 0.0
    for name in names:
        r = worker.run(__file__, name, args.worker_args, args.timeout)
        rows.append(r)
        if r["status"] != "ok":
            print(f"{name:<16} {'':>3} {r['status']}: {r.get('error', '')}", flush=True)
            continue
        if r["identical"]:
            print(f"{name:<16} {'':>3} {r['checks']:>6}   (no check: the two libraries are "
                  f"byte-identical)", flush=True)
            continue
        for t in threads:
            tm = r["timings"][str(t)]
            worst = max(worst, tm["ratio"])
            print(f"{name:<16} {t:>3} {r['checks']:>6} {tm['on_ms']:>11.3f} {tm['off_ms']:>12.3f} "
                  f"{tm['ratio']:>7.3f}", flush=True)
    print(f"largest checked/unchecked ratio: {worst:.3f} (goal < 1.03)")
    worker.write_json(args.out, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
