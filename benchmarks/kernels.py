"""Conv kernel micro-benchmark: every distinct conv shape of ResNet-50 and
MobileNetV2 (batch 1, 224x224), each as a single-conv model, ours against
onnxruntime:

    python benchmarks/kernels.py [--models resnet50,mobilenetv2] [--filter '*_k3x3_*']
                                 [--threads 1,2] [--quick]

The shapes are read off the models run.py benchmarks (``harness.build``:
ResNet-50 exported from torch, MobileNetV2 from ``onnx_mlir_py.testing.models``)
by ONNX shape inference: per Conv node its input [C, H, W], weight, strides,
pads, group and dilations, counted per model. Each distinct shape becomes a
one-node model (Conv with bias, seeded random weights), compiled by
``onnx_mlir_py.compile(opt_level=3)`` in a worker process of its own (a crash
costs that row only), checked against onnxruntime on the same model, and
timed against it as run.py times models (``harness.time_engines``:
alternating blocks, each engine alone, median of N). GF/s is 2 x MACs over
the median time; % of peak is against ``machine.peak()`` (the GFLOPS per core
run.py prints) x threads. Per model and thread count a summary gives the
time-weighted % of peak of each kind of conv (all its shapes' FLOPs x count
over all their time x count): 1x1, 3x3 (dense), 3x3 depthwise, other.

``--cpu`` (1 thread only) times each engine by the CPU time of the calling
thread (``time.thread_time``; both engines run a 1-thread model on it), in
alternating blocks of CPU_BLOCK runs: on a loaded, shared machine a
preempted run keeps its CPU time, so the minimum and median are the
kernel's own (the table's ms are the medians, the json also has the minima).

Writes ``<out>/kernels.json`` and ``<out>/kernels.md``. ``--quick``: few
runs, and unless --filter is given only the first shape of each kind per
model.
"""
from __future__ import annotations

import argparse
import fnmatch
import os
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402
import machine  # noqa: E402
import worker  # noqa: E402
from run import FULL, QUICK  # noqa: E402  (the same timing as run.py's rows)

MODELS = ("resnet50", "mobilenetv2")
KINDS = ("1x1", "3x3", "3x3 dw", "other")


# -- conv shapes -------------------------------------------------------------------------
@dataclass(frozen=True)
class ConvShape:
    """One 2-D Conv at batch 1: input [cin, h, w], weight [cout, cin/group, kh, kw]."""
    cin: int
    h: int
    w: int
    cout: int
    kh: int
    kw: int
    sh: int = 1
    sw: int = 1
    pads: tuple[int, int, int, int] = (0, 0, 0, 0)   # top, left, bottom, right
    group: int = 1
    dh: int = 1
    dw: int = 1

    def key(self) -> str:
        """A name that round-trips (:meth:`from_key`): c64_h56_w56_o256_k1x1_s1x1_p0x0x0x0_g1_d1x1."""
        return (f"c{self.cin}_h{self.h}_w{self.w}_o{self.cout}_k{self.kh}x{self.kw}_"
                f"s{self.sh}x{self.sw}_p{'x'.join(map(str, self.pads))}_g{self.group}_"
                f"d{self.dh}x{self.dw}")

    @classmethod
    def from_key(cls, key: str) -> "ConvShape":
        m = re.fullmatch(r"c(\d+)_h(\d+)_w(\d+)_o(\d+)_k(\d+)x(\d+)_s(\d+)x(\d+)_"
                         r"p(\d+)x(\d+)x(\d+)x(\d+)_g(\d+)_d(\d+)x(\d+)", key)
        if not m:
            raise ValueError(f"conv shape {key!r}: expected the form "
                             "c64_h56_w56_o256_k1x1_s1x1_p0x0x0x0_g1_d1x1")
        v = [int(x) for x in m.groups()]
        return cls(*v[:8], pads=tuple(v[8:12]), group=v[12], dh=v[13], dw=v[14])

    def out_hw(self) -> tuple[int, int]:
        t, l, b, r = self.pads
        return ((self.h + t + b - self.dh * (self.kh - 1) - 1) // self.sh + 1,
                (self.w + l + r - self.dw * (self.kw - 1) - 1) // self.sw + 1)

    def flops(self) -> int:
        oh, ow = self.out_hw()
        return 2 * self.cout * oh * ow * (self.cin // self.group) * self.kh * self.kw

    def kind(self) -> str:
        if (self.kh, self.kw) == (1, 1) and self.group == 1:
            return "1x1"
        if (self.kh, self.kw) == (3, 3) and self.group == 1:
            return "3x3"
        if (self.kh, self.kw) == (3, 3) and self.group == self.cin == self.cout:
            return "3x3 dw"
        return "other"

    def label(self) -> str:
        """For the table: 64x56x56 -> 256, k1 s1 p0 (g / dilation when not 1)."""
        k = str(self.kh) if self.kh == self.kw else f"{self.kh}x{self.kw}"
        s = str(self.sh) if self.sh == self.sw else f"{self.sh}x{self.sw}"
        p = str(self.pads[0]) if len(set(self.pads)) == 1 else "x".join(map(str, self.pads))
        g = "" if self.group == 1 else (" dw" if self.group == self.cin == self.cout
                                        else f" g{self.group}")
        d = "" if (self.dh, self.dw) == (1, 1) else f" d{self.dh}x{self.dw}"
        return f"{self.cin}x{self.h}x{self.w} -> {self.cout}, k{k} s{s} p{p}{g}{d}"


def conv_shapes(model) -> Counter:
    """ConvShape -> number of Conv nodes of that shape in ``model`` (batch-1,
    2-D convs with static shapes; ValueError naming a node that is not)."""
    import onnx
    from onnx import helper
    g = onnx.shape_inference.infer_shapes(model).graph
    shapes = {vi.name: [d.dim_value if d.HasField("dim_value") else 0
                        for d in vi.type.tensor_type.shape.dim]
              for vi in list(g.input) + list(g.value_info)}
    shapes.update({i.name: list(i.dims) for i in g.initializer})
    out: Counter = Counter()
    for node in g.node:
        if node.op_type != "Conv":
            continue
        x, w = shapes.get(node.input[0]), shapes.get(node.input[1])
        a = {at.name: helper.get_attribute_value(at) for at in node.attribute}
        if (not x or not w or len(x) != 4 or x[0] != 1 or 0 in x
                or a.get("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET")):
            raise ValueError(f"Conv {node.name or node.output[0]!r}: expected a batch-1 2-D conv "
                             f"with static shapes and explicit pads, got input {x}, weight {w}")
        out[ConvShape(x[1], x[2], x[3], w[0], w[2], w[3], *a.get("strides", [1, 1]),
                      pads=tuple(a.get("pads", [0, 0, 0, 0])), group=a.get("group", 1),
                      dh=a.get("dilations", [1, 1])[0], dw=a.get("dilations", [1, 1])[1])] += 1
    return out


def model_shapes(name: str) -> Counter:
    """The conv shapes of benchmark model ``name`` (as run.py builds it);
    SystemExit with one line when its exporter is not installed."""
    try:
        model = harness.build(name)
    except ImportError as e:
        raise SystemExit(f"--models {name}: the model's exporter is not installed ({e}); "
                         "pip install -e '.[bench]'") from None
    return conv_shapes(model)


def conv_model(s: ConvShape, seed: int = 0):
    """One Conv with bias, input ``input`` [1, cin, h, w], output ``output``."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    from onnx_mlir_py.testing.models import IR_VERSION, OPSET
    rng = np.random.default_rng(seed)
    fan_in = s.cin // s.group * s.kh * s.kw
    w = (rng.standard_normal((s.cout, s.cin // s.group, s.kh, s.kw))
         * np.sqrt(2.0 / fan_in)).astype(np.float32)
    b = (0.1 * rng.standard_normal(s.cout)).astype(np.float32)
    node = helper.make_node("Conv", ["input", "W", "B"], ["output"], name="conv",
                            kernel_shape=[s.kh, s.kw], strides=[s.sh, s.sw], pads=list(s.pads),
                            group=s.group, dilations=[s.dh, s.dw])
    g = helper.make_graph([node], "conv",
                          [helper.make_tensor_value_info("input", TensorProto.FLOAT,
                                                         [1, s.cin, s.h, s.w])],
                          [helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                                         [1, s.cout, *s.out_hw()])],
                          [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = IR_VERSION
    onnx.checker.check_model(m)
    return m


# -- thread CPU timing (--cpu) -----------------------------------------------------------
CPU_BLOCK = 5           # runs of one engine back to back
CPU_REPS = {False: 60, True: 10}   # runs of each engine (--quick: True)


def time_cpu(run_ours, run_ort, reps: int) -> dict:
    """Thread CPU ms of each engine (1 thread: the run is on this thread),
    alternating blocks of CPU_BLOCK runs, the order flipped every round,
    after one warm-up run each: medians (the table's), minima, ratio."""
    import statistics
    run_ours()
    run_ort()
    ts: dict = {"ours": [], "ort": []}
    order = [("ours", run_ours), ("ort", run_ort)]
    while len(ts["ours"]) < reps:
        for name, run in order:
            for _ in range(CPU_BLOCK):
                t0 = time.thread_time()
                run()
                ts[name].append((time.thread_time() - t0) * 1e3)
        order.reverse()
    med = {k: statistics.median(v) for k, v in ts.items()}
    return {"ours_ms": med["ours"], "ort_ms": med["ort"], "ratio": med["ours"] / med["ort"],
            "ours_min_ms": min(ts["ours"]), "ort_min_ms": min(ts["ort"]),
            "min_ratio": min(ts["ours"]) / min(ts["ort"]), "reps": len(ts["ours"]),
            "clock": "thread_cpu"}


# -- worker: one shape, all thread counts ------------------------------------------------
def _work(key: str, threads: list[int], quick: bool, res: dict, cpu: bool = False) -> None:
    import onnx

    import onnx_mlir_py
    s = ConvShape.from_key(key)
    res["gflop"] = s.flops() / 1e9
    tmp = tempfile.mkdtemp(prefix="kernel_")
    try:
        path = os.path.join(tmp, "conv.onnx")
        model = conv_model(s)
        onnx.save(model, path)
        feeds = harness.random_feeds(model)
        args = list(feeds.values())
        t0 = time.perf_counter()
        try:
            so = onnx_mlir_py.compile(path, output=os.path.join(tmp, "conv.so"), opt_level=3)
        except Exception as e:  # noqa: BLE001 - reported in the row
            res["status"] = "compile-error"
            res["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            return
        finally:
            res["compile_s"] = time.perf_counter() - t0
        ok, res["max_abs_err"] = harness.check_outputs(
            harness.ours_session(so, threads[0]).run(args),
            harness.ort_session(path, threads[0]).run(None, feeds))
        if not ok:
            res["status"] = "mismatch"
            return
        cfg = QUICK if quick else FULL
        res["timings"] = {}
        for t in threads:
            s_ours, s_ort = harness.ours_session(so, t), harness.ort_session(path, t)
            if cpu:
                tm = time_cpu(lambda: s_ours.run(args), lambda: s_ort.run(None, feeds),
                              CPU_REPS[quick])
            else:
                tm = harness.time_engines(lambda: s_ours.run(args),
                                          lambda: s_ort.run(None, feeds), t, cfg)
            tm["ours_gflops"] = res["gflop"] / (tm["ours_ms"] / 1e3)
            tm["ort_gflops"] = res["gflop"] / (tm["ort_ms"] / 1e3)
            res["timings"][str(t)] = tm
            del s_ours, s_ort
        res["status"] = "ok"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# -- parent ------------------------------------------------------------------------------
def select(shapes: Counter, patterns: list[str] | None, quick: bool) -> list[tuple]:
    """(shape, count) in model order: those whose key matches a pattern; with
    no pattern, all of them (``quick``: the first of each kind)."""
    items = list(shapes.items())
    if patterns:
        return [(s, n) for s, n in items if any(fnmatch.fnmatchcase(s.key(), p)
                                                for p in patterns)]
    if quick:
        seen: set[str] = set()
        return [(s, n) for s, n in items if not (s.kind() in seen or seen.add(s.kind()))]
    return items


def summary(rows: list[dict], t: int, peak: float) -> dict:
    """Kind -> time-weighted % of peak (ours, onnxruntime) over the rows of one
    model at ``t`` threads: sum(count x GFLOP) / sum(count x seconds) / (peak x t)."""
    out = {}
    for kind in KINDS:
        ok = [r for r in rows if r["kind"] == kind and r["status"] == "ok"]
        if not ok:
            continue
        gf = sum(r["count"] * r["gflop"] for r in ok)
        pct = {e: _pct(gf / (sum(r["count"] * r["timings"][str(t)][f"{e}_ms"] for r in ok)
                             / 1e3), t, peak) for e in ("ours", "ort")}
        out[kind] = {"shapes": len(ok), "convs": sum(r["count"] for r in ok),
                     "of": sum(r["kind"] == kind for r in rows),
                     "ours_pct_peak": pct["ours"], "ort_pct_peak": pct["ort"]}
    return out


def _pct(gflops: float, t: int, peak: float) -> float:
    return 100 * gflops / (peak * t) if peak else float("nan")


TABLE_HEAD = ["| shape | threads | count | GFLOP | ours ms | ort ms | ratio | ours GF/s | "
              "ort GF/s | ours % peak | ort % peak |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]


def row_lines(r: dict, threads: list[int], peak: float) -> list[str]:
    """The table rows of one shape: one per thread count, or its failure."""
    if r["status"] != "ok":
        return [f"| {r['label']} | | {r['count']} | {r['gflop']:.4f} | "
                f"{r['status']}: {r.get('error', '')[:120]} | | | | | | |"]
    out = []
    for t in threads:
        tm = r["timings"][str(t)]
        out.append(f"| {r['label']} | {t} | {r['count']} | {r['gflop']:.4f} | "
                   f"{tm['ours_ms']:.3f} | {tm['ort_ms']:.3f} | {tm['ratio']:.2f} | "
                   f"{tm['ours_gflops']:.1f} | {tm['ort_gflops']:.1f} | "
                   f"{_pct(tm['ours_gflops'], t, peak):.1f} | "
                   f"{_pct(tm['ort_gflops'], t, peak):.1f} |")
    return out


def summary_lines(model: str, summ: dict) -> list[str]:
    """The per-kind summary table of one model (``summ``: threads -> kind -> row)."""
    lines = [f"{model}, time-weighted % of peak per kind of conv:", "",
             "| kind | threads | shapes | convs | ours % peak | ort % peak |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for t, kinds in summ.items():
        for kind, sm in kinds.items():
            missing = "" if sm["shapes"] == sm["of"] else f" (of {sm['of']})"
            lines.append(f"| **{kind}** | {t} | {sm['shapes']}{missing} | {sm['convs']} | "
                         f"**{sm['ours_pct_peak']:.1f}** | {sm['ort_pct_peak']:.1f} |")
    return lines


def model_head(model: str, picked: list[tuple]) -> list[str]:
    return [f"### {model}: {len(picked)} conv shape(s), {sum(n for _, n in picked)} convs", ""]


def markdown(result: dict) -> str:
    peak = result["peak"]["gflops_per_core"]
    lines = header_lines(result["env"], result["peak"])
    for model in result["models"]:
        rows = result["rows"][model]
        lines += model_head(model, [(None, r["count"]) for r in rows]) + TABLE_HEAD
        for r in rows:
            lines += row_lines(r, result["threads"], peak)
        lines += [""] + summary_lines(model, result["summary"][model]) + [""]
    return "\n".join(lines)


def header_lines(env: str, pk: dict) -> list[str]:
    return [f"Machine: {env}", "",
            f"Peak: {pk['how']} (benchmarks/machine.py); % peak is against the peak x threads.",
            ""]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=",".join(MODELS),
                    help=f"comma list of {', '.join(MODELS)}")
    ap.add_argument("--filter", help="comma list of shell patterns on the shape key, "
                                     "e.g. '*_k3x3_*,c64_*' (keys are printed with --list)")
    ap.add_argument("--list", action="store_true", help="print the shapes and keys, run nothing")
    ap.add_argument("--out", default=os.path.join(HERE, "results"), help="results directory")
    ap.add_argument("--cpu", action="store_true",
                    help="time by thread CPU time (1 thread; for A/B on a loaded machine)")
    args = worker.parse(ap, argv, threads="1")
    if args.cpu and args.threads != [1]:
        raise SystemExit("--cpu: thread CPU time measures 1-thread runs only (--threads 1)")
    if args.worker:
        worker.serve(args.worker, args.result,
                     lambda res: _work(args.worker, args.threads, args.quick, res, args.cpu))
        return 0
    if args.cpu:
        args.worker_args.append("--cpu")
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    for m in models:
        if m not in MODELS:
            raise SystemExit(f"--models: {m!r} is not one of {', '.join(MODELS)}")
    patterns = [p.strip() for p in args.filter.split(",") if p.strip()] if args.filter else None
    picks = {model: select(model_shapes(model), patterns, args.quick) for model in models}
    if not any(picks.values()):
        raise SystemExit(f"--filter: {args.filter!r} matches no conv shape of "
                         f"{', '.join(models)} (see --list)")
    import numpy
    import onnxruntime
    env = (f"{machine.machine_line()}; onnxruntime {onnxruntime.__version__}, "
           f"numpy {numpy.__version__}, load {os.getloadavg()[0]:.2f}"
           + ("; times: thread CPU medians" if args.cpu else ""))
    pk = machine.peak()
    peak = pk["gflops_per_core"]
    print("\n".join(header_lines(env, pk)), flush=True)
    result = {"timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
              "quick": args.quick, "threads": args.threads, "env": env, "peak": pk,
              "models": models, "rows": {}, "summary": {}}
    for model, picked in picks.items():
        print("\n".join(model_head(model, picked)), flush=True)
        if args.list:
            for s, n in picked:
                print(f"  {n:>2} x {s.label():<40} {s.key()}")
            print()
            continue
        print("\n".join(TABLE_HEAD), flush=True)
        rows = []
        for s, n in picked:
            r = worker.run(__file__, s.key(), args.worker_args, args.timeout)
            r.update(count=n, label=s.label(), kind=s.kind(), key=s.key(), gflop=s.flops() / 1e9)
            rows.append(r)
            print("\n".join(row_lines(r, args.threads, peak)), flush=True)
        result["rows"][model] = rows
        result["summary"][model] = {str(t): summary(rows, t, peak) for t in args.threads}
        print("\n" + "\n".join(summary_lines(model, result["summary"][model])) + "\n",
              flush=True)
    if args.list:
        return 0
    print("wrote {} and {}".format(*harness.write_result(args.out, "kernels", result,
                                                         markdown(result))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
