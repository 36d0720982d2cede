"""The per-node profiler: ``compile(profile=True)`` / ``--profile`` libraries
record every node's time; the trace is onnxruntime's profile format (checked
against a profile onnxruntime itself writes for the same model); a library
built without it has no profiling code; ``onnx-mlir-py profile`` reports."""
import json
import os
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnx_mlir_py
import onnx_mlir_py as ort
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.runtime.errors import ModelRunError
from onnx_mlir_py.target import resolve
from onnx_mlir_py.profiler import summary as tool

NODES = {"conv": "Conv", "relu": "Relu", "dw": "Conv", "clip": "Clip", "add": "Add",
         "relu2": "Relu", "flat": "Flatten", "fc": "MatMul"}


def small_cnn() -> onnx.ModelProto:
    """conv -> relu -> depthwise conv -> clip -> add (residual) -> relu ->
    flatten -> matmul: at -O3 the depthwise kernel takes its Clip, MLIR's
    elementwise fusion merges Add and Relu."""
    rng = np.random.default_rng(0)

    def w(name, *shape):
        return nh.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)
    inits = [w("W", 8, 3, 3, 3), w("B", 8), w("Wd", 8, 1, 3, 3), w("Bd", 8), w("Wf", 8 * 16 * 16, 10),
             nh.from_array(np.array(0, np.float32), "lo"), nh.from_array(np.array(6, np.float32), "hi")]
    nodes = [h.make_node("Conv", ["x", "W", "B"], ["c"], "conv", pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["c"], ["r"], "relu"),
             h.make_node("Conv", ["r", "Wd", "Bd"], ["d"], "dw", pads=[1, 1, 1, 1], group=8),
             h.make_node("Clip", ["d", "lo", "hi"], ["dc"], "clip"),
             h.make_node("Add", ["dc", "r"], ["s"], "add"),
             h.make_node("Relu", ["s"], ["s2"], "relu2"),
             h.make_node("Flatten", ["s2"], ["f"], "flat"),
             h.make_node("MatMul", ["f", "Wf"], ["y"], "fc")]
    g = h.make_graph(nodes, "small_cnn", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 16, 16])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 10])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


X = np.random.default_rng(1).standard_normal((1, 3, 16, 16)).astype(np.float32)


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    """{(opt_level, profile): path of the library}, and the model path."""
    root = tmp_path_factory.mktemp("prof")
    path = str(root / "small_cnn.onnx")
    onnx.save(small_cnn(), path)
    out = {}
    for lvl in (0, 3):
        for prof in (False, True):
            out[lvl, prof] = onnx_mlir_py.compile(path, str(root / f"m{lvl}{int(prof)}.so"),
                                                  opt_level=lvl, profile=prof)
    return out, path


def _trace(lib: str, runs: int, path) -> list[dict]:
    s = ExecutionSession(lib)
    s.reset_profile()
    outs = [s.run([X])[0] for _ in range(runs)]
    s.end_profiling(str(path))
    with open(path) as f:
        return json.load(f), outs


def _ort_profile(model_path, tmp_path, level) -> list[dict]:
    so = onnxruntime.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "ort")
    so.graph_optimization_level = level
    s = onnxruntime.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])
    ref = s.run(None, {"x": X})[0]
    with open(s.end_profiling()) as f:
        return json.load(f), ref


def check_schema(events: list[dict], runs: int) -> None:
    """The Chrome-trace / Perfetto JSON event schema in onnxruntime's flavour."""
    assert isinstance(events, list) and events
    keys = {"cat", "pid", "tid", "dur", "ts", "ph", "name", "args"}
    for e in events:
        assert set(e) == keys, e
        assert e["ph"] == "X" and e["cat"] in ("Node", "Session")
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        assert all(isinstance(e[k], (int, float)) and e[k] >= 0 for k in ("ts", "dur"))
        assert isinstance(e["name"], str) and isinstance(e["args"], dict)
        if e["cat"] == "Node":
            a = e["args"]
            assert e["name"].endswith("_kernel_time")
            assert isinstance(a["op_name"], str) and a["provider"] == "CPUExecutionProvider"
            assert a["node_index"].isdigit()
            assert all(isinstance(n, str) for n in a["fused_nodes"] + a["fused_op_names"])
    run_events = [e for e in events if e["cat"] == "Session"]
    assert [e["name"] for e in run_events] == ["model_run"] * runs
    for e in events:      # every node event lies inside one model_run of its thread
        if e["cat"] == "Node":
            assert any(r["tid"] == e["tid"] and r["ts"] <= e["ts"] and
                       e["ts"] + e["dur"] <= r["ts"] + r["dur"] + 1e-3 for r in run_events)


def _node_events(events):
    return {e["name"][:-len("_kernel_time")]: e["args"] for e in events if e["cat"] == "Node"}


def test_o0_trace_is_onnxruntimes_format(libs, tmp_path):
    built, model_path = libs
    ours, outs = _trace(built[0, True], 3, tmp_path / "t.json")
    check_schema(ours, 3)
    theirs, ref = _ort_profile(model_path, tmp_path, onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL)
    np.testing.assert_allclose(outs[0], ref, rtol=1e-4, atol=1e-4)
    their_nodes = [e for e in theirs if e["cat"] == "Node" and e["name"].endswith("_kernel_time")]
    assert {k for e in their_nodes for k in e} == {k for e in ours for k in e}
    assert {"op_name", "provider", "node_index"} <= set(their_nodes[0]["args"])
    # -O0 fuses nothing: each node is its own event, named and typed as onnxruntime does
    ort_ops = {e["name"][:-len("_kernel_time")]: e["args"]["op_name"] for e in their_nodes}
    mine = _node_events(ours)
    assert {n: a["op_name"] for n, a in mine.items()} == ort_ops == NODES
    assert all(a["fused_nodes"] == [] for a in mine.values())
    assert sum(e["name"] == "conv_kernel_time" for e in ours) == 3      # one per run


def test_o3_fused_kernels_are_recorded_once(libs, tmp_path):
    built, _ = libs
    ours, outs = _trace(built[3, True], 2, tmp_path / "t.json")
    check_schema(ours, 2)
    mine = _node_events(ours)
    # the depthwise kernel took the Clip; elementwise fusion merged Add + Relu
    assert mine["dw"]["fused_nodes"] == ["clip"] and mine["dw"]["fused_op_names"] == ["Clip"]
    assert mine["add"]["fused_nodes"] == ["relu2"]
    assert "clip" not in mine and "relu2" not in mine
    covered = [n for n, a in mine.items() for n in [n] + a["fused_nodes"]]
    assert len(covered) == len(set(covered)) and set(covered) <= set(NODES)
    assert {"conv", "dw", "clip", "add", "relu2", "fc"} <= set(covered)
    plain = ExecutionSession(built[3, False]).run([X])[0]
    np.testing.assert_array_equal(outs[0], plain)      # the hooks change nothing computed


def silu_dyn() -> onnx.ModelProto:
    """conv -> SiLU -> depthwise conv -> SiLU with run-time N, H, W: at -O3
    the dynamic kernels (conv_dyn, depthwise_dyn) take their SiLU chains."""
    rng = np.random.default_rng(2)

    def w(name, *shape):
        return nh.from_array((rng.standard_normal(shape) * 0.3).astype(np.float32), name)
    nodes = [h.make_node("Conv", ["x", "W", "B"], ["c"], "conv", pads=[1, 1, 1, 1]),
             h.make_node("Sigmoid", ["c"], ["sc"], "sig"),
             h.make_node("Mul", ["c", "sc"], ["y0"], "mul"),
             h.make_node("Conv", ["y0", "Wd"], ["d"], "dw", pads=[1, 1, 1, 1], group=8),
             h.make_node("Sigmoid", ["d"], ["sd"], "sig2"),
             h.make_node("Mul", ["d", "sd"], ["y"], "mul2")]
    g = h.make_graph(nodes, "silu_dyn",
                     [h.make_tensor_value_info("x", T.FLOAT, ["N", 3, "H", "W"])],
                     [h.make_tensor_value_info("y", T.FLOAT, ["N", 8, "H", "W"])],
                     [w("W", 8, 3, 3, 3), w("B", 8), w("Wd", 8, 1, 3, 3)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


def test_o3_dynamic_kernels_take_their_silu_in_the_convs_events(tmp_path):
    """A dynamic-H/W conv's (and depthwise conv's) fused SiLU is timed as the
    conv's event, the Sigmoid and Mul listed as fused into it (the call at
    the conv's place; the Sigmoid's and Mul's brackets left with only their
    run-time shape checks are dropped), at two run-time shapes."""
    path = str(tmp_path / "silu_dyn.onnx")
    onnx.save(silu_dyn(), path)
    lib = onnx_mlir_py.compile(path, str(tmp_path / "m.so"), opt_level=3, profile=True)
    ref = onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"])
    s = ExecutionSession(lib)
    for shape in [(1, 3, 9, 17), (2, 3, 30, 41)]:
        x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
        s.reset_profile()
        out = s.run([x])[0]
        s.end_profiling(str(tmp_path / "t.json"))
        with open(tmp_path / "t.json") as f:
            mine = _node_events(json.load(f))
        assert set(mine) == {"conv", "dw"}, mine
        assert mine["conv"]["fused_nodes"] == ["sig", "mul"]
        assert mine["dw"]["fused_nodes"] == ["sig2", "mul2"]
        np.testing.assert_allclose(out, ref.run(None, {"x": x})[0], rtol=1e-4, atol=1e-4)


def _symbols(lib: str) -> str:
    return subprocess.run(["nm", "-a", lib], capture_output=True, text=True, check=True).stdout


def test_no_profiling_code_without_profile(libs, tmp_path):
    built, _ = libs
    for lvl in (0, 3):
        with_hooks, without = _symbols(built[lvl, True]), _symbols(built[lvl, False])
        for sym in ("om_prof_begin", "om_prof_end", "om_prof_run_begin", "omProfileWrite"):
            assert sym in with_hooks
        assert "om_prof" not in without and "omProfile" not in without
    s = ExecutionSession(built[3, False])
    assert not s.profiling
    with pytest.raises(ModelRunError, match="not built with --profile"):
        s.end_profiling(str(tmp_path / "x.json"))


def test_trace_written_at_unload_for_c_programs(libs, tmp_path):
    """Without Python's end_profiling: ONNX_MLIR_PY_PROFILE_FILE names the
    file the library writes when it is unloaded (here: at process exit)."""
    built, _ = libs
    out = tmp_path / "c.json"
    code = ("import sys, numpy as np; from onnx_mlir_py.runtime import ExecutionSession; "
            "s = ExecutionSession(sys.argv[1]); x = np.zeros((1, 3, 16, 16), np.float32); "
            "[s.run([x]) for _ in range(2)]")
    subprocess.run([sys.executable, "-c", code, built[3, True]], check=True,
                   env={**os.environ, "ONNX_MLIR_PY_PROFILE_FILE": str(out)})
    with open(out) as f:
        check_schema(json.load(f), 2)


def test_inference_session_enable_profiling(libs, tmp_path):
    _, model_path = libs
    so = ort.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(tmp_path / "prof")
    sess = ort.InferenceSession(model_path, so, cache_dir=str(tmp_path / "cache"), in_process=True)
    y = sess.run(None, {"x": X})[0]
    sess.run(None, {"x": X})
    path = sess.end_profiling()
    assert os.path.basename(path).startswith("prof_") and path.endswith(".json")
    with open(path) as f:
        check_schema(json.load(f), 2)
    sess.run(None, {"x": X})
    with open(sess.end_profiling()) as f:        # a new file: the runs since the last one
        check_schema(json.load(f), 1)
    plain = ort.InferenceSession(model_path, cache_dir=str(tmp_path / "cache"), in_process=True)
    assert plain.end_profiling() == ""
    assert plain.library_path != sess.library_path
    np.testing.assert_array_equal(plain.run(None, {"x": X})[0], y)


def test_cli_profile_flag_and_profile_tool(libs, tmp_path, capsys, monkeypatch):
    _, model_path = libs
    from onnx_mlir_py.cli import main
    assert main([model_path, "--profile", "-O0", "-o", str(tmp_path / "cli")]) == 0
    assert ExecutionSession(str(tmp_path / "cli.so")).profiling
    monkeypatch.setenv("ONNX_MLIR_PY_CACHE", str(tmp_path / "cache"))
    trace, chart = tmp_path / "p.json", tmp_path / "p.png"
    assert main(["profile", model_path, "--runs", "3", "--threads", "1", "--trace", str(trace),
                 "--chart", str(chart)]) == 0
    out = capsys.readouterr().out
    assert "3 run(s)" in out and "per op type" in out and "outside it" in out
    assert "dw " in out and "clip" in out      # the depthwise conv with its fused Clip
    with open(trace) as f:
        check_schema(json.load(f), 4)           # 1 warm-up + 3 runs
    with open(chart, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    monkeypatch.setitem(sys.modules, "matplotlib", None)   # not installed
    os.unlink(chart)
    assert main(["profile", model_path, "--runs", "1", "--trace", str(trace),
                 "--chart", str(chart)]) == 0
    assert "matplotlib is not installed" in capsys.readouterr().out and not chart.exists()


def test_profile_tool_errors_are_one_line(tmp_path, capsys):
    from onnx_mlir_py.cli import main
    assert main(["profile", str(tmp_path / "missing.onnx")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: ") and "missing.onnx" in err[-1]
    assert main(["profile", str(tmp_path / "missing.onnx"), "--runs", "0"]) == 2


def test_summarize_groups_nodes_by_run():
    def ev(cat, name, ts, dur, op="Conv", fused=()):
        args = {"op_name": op, "fused_nodes": list(fused)} if cat == "Node" else {}
        return {"cat": cat, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "ph": "X",
                "name": name, "args": args}
    events = [ev("Node", "a_kernel_time", 1, 50), ev("Node", "b_kernel_time", 52, 40, "Relu"),
              ev("Session", "model_run", 0, 100),                       # warm-up
              ev("Node", "a_kernel_time", 201, 30), ev("Node", "b_kernel_time", 232, 10, "Relu",
                                                       ["c"]),
              ev("Session", "model_run", 200, 50),
              ev("Node", "a_kernel_time", 301, 50), ev("Node", "b_kernel_time", 352, 30, "Relu",
                                                       ["c"]),
              ev("Session", "model_run", 300, 90)]
    s = tool.summarize(events, skip=1)
    assert s.runs == 2 and s.run_us == 70
    assert [(n.name, n.op_type, n.us, n.fused) for n in s.nodes] == \
        [("a", "Conv", 40, []), ("b", "Relu", 20, ["c"])]
    assert s.by_op_type() == [("Conv", 1, 40), ("Relu", 1, 20)] and s.node_us == 60
    with pytest.raises(ValueError, match="3 model_run"):
        tool.summarize(events, skip=3)


def test_resnet18_convs_account_for_the_run(tmp_path):
    """Issue 14's measure: on ResNet-18 (-O3, BatchNormalization folded into
    the convs) the 20 convs' times add up to within 10% of the model call
    (median over runs: a run the shared machine preempted in a small node
    says nothing about the profiler)."""
    from onnx_mlir_py.testing.models import resnet18
    lib = onnx_mlir_py.compile(resnet18(), str(tmp_path / "r18.so"), opt_level=3, profile=True)
    s = ExecutionSession(lib)
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    for _ in range(8):
        s.run([x])
    s.end_profiling(str(tmp_path / "r18.json"))
    with open(tmp_path / "r18.json") as f:
        events = json.load(f)
    check_schema(events, 8)
    summary = tool.summarize(events, skip=1)
    assert sum(n.op_type == "Conv" for n in summary.nodes) == 20
    assert summary.node_us <= summary.run_us
    shares = []
    for run in (e for e in events if e["name"] == "model_run"):
        inside = [e for e in events if e["cat"] == "Node" and
                  run["ts"] <= e["ts"] <= run["ts"] + run["dur"]]
        shares.append(sum(e["dur"] for e in inside if e["args"]["op_name"] == "Conv") / run["dur"])
    print("conv share of each run:", [round(v, 3) for v in shares])
    assert len(shares) == 8 and float(np.median(shares[1:])) >= 0.9, shares


@pytest.mark.skipif(not resolve(host_default=True).avx512_bf16,
                    reason="--precision bf16 needs AVX512-BF16 or AMX-BF16 (this CPU has neither)")
def test_profile_tool_precision_bf16(libs, tmp_path, capsys, monkeypatch):
    """profile --precision bf16 times a bf16 build (its own library in the
    cache, beside the fp32 one), and says so in its header."""
    _, model_path = libs
    from onnx_mlir_py.cli import main
    cache = tmp_path / "cache"
    monkeypatch.setenv("ONNX_MLIR_PY_CACHE", str(cache))
    trace = str(tmp_path / "p.json")
    assert main(["profile", model_path, "--runs", "1", "--trace", trace, "--chart",
                 str(tmp_path / "p.png")]) == 0
    assert "--precision" not in capsys.readouterr().out
    libs_fp32 = set(cache.rglob("*.so"))
    assert main(["profile", model_path, "--runs", "1", "--precision", "bf16", "--trace", trace,
                 "--chart", str(tmp_path / "p.png")]) == 0
    assert ", --precision bf16, 1 thread(s)" in capsys.readouterr().out
    assert set(cache.rglob("*.so")) - libs_fp32, "the bf16 profile reused the fp32 library"
