"""The -O3 kernel plan (passes/optimize/kernel_plan.py): which kernel, tile and
threads each conv / depthwise conv / pool / matmul gets, printed one line per
op (``--print-kernel-plan``, ``-v``), and the model built from it."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnx_mlir_py
from onnx_mlir_py.compiler import run_pipeline
from onnx_mlir_py.isa import is_x86_host
from onnx_mlir_py.options import Options
from onnx_mlir_py.runtime import ExecutionSession

x86 = pytest.mark.skipif(not is_x86_host(), reason="x86-64 ISA levels")

# node -> the kernel the plan must give it
EXPECTED = {"stem": "conv_direct", "conv3x3": "conv_im2col", "depthwise": "depthwise_rows",
            "pool": "pool_rows", "fc": "packed_matmul"}


def _model() -> onnx.ModelProto:
    """A 3-channel stem conv, a 3x3 conv, a depthwise conv, a max pool, a matmul."""
    r = np.random.default_rng(0)
    init = [nh.from_array((r.standard_normal(s) * 0.1).astype(np.float32), n) for n, s in
            [("w_stem", (16, 3, 3, 3)), ("w_conv", (16, 16, 3, 3)), ("w_dw", (16, 1, 3, 3)),
             ("w_fc", (16 * 16 * 16, 10))]]
    init.append(nh.from_array(np.array([1, -1], np.int64), "shape"))
    nodes = [h.make_node("Conv", ["x", "w_stem"], ["a"], name="stem", pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["a"], ["b"], name="relu"),
             h.make_node("Conv", ["b", "w_conv"], ["c"], name="conv3x3", pads=[1, 1, 1, 1]),
             h.make_node("Conv", ["c", "w_dw"], ["d"], name="depthwise", pads=[1, 1, 1, 1],
                         group=16),
             h.make_node("MaxPool", ["d"], ["e"], name="pool", kernel_shape=[2, 2],
                         strides=[2, 2]),
             h.make_node("Reshape", ["e", "shape"], ["f"], name="flatten"),
             h.make_node("MatMul", ["f", "w_fc"], ["y"], name="fc")]
    g = h.make_graph(nodes, "plan", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 32, 32])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 10])], init)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def _plan(tmp_path, march: str):
    plans = []
    run_pipeline(_model(), Options(emit="EmitLLVMIR", opt_level=3, march=march),
                 str(tmp_path / "m.ll"), on_plan=plans.append)
    assert len(plans) == 1
    return plans[0]


@x86
@pytest.mark.parametrize("march, tile", [("x86-64-v4", "8x32, k 8"), ("x86-64-v3", "6x16, k 8")])
def test_plan_gives_each_op_its_kernel(tmp_path, march, tile):
    plan = _plan(tmp_path, march)
    got = {e.node: e for e in plan.entries}
    assert {n: e.kernel for n, e in got.items()} == EXPECTED
    assert got["conv3x3"].tile == tile              # the register tile follows the target
    assert got["stem"].tile == ("8 filters x 3 vectors" if march == "x86-64-v4"
                                else "4 filters x 2 vectors")
    assert got["conv3x3"].threaded and not got["pool"].threaded   # 2.4M MACs / 16K
    lines = plan.lines()
    assert lines[0].startswith(f"kernel plan for {march}") and len(lines) == 2 + len(EXPECTED)
    for e in plan.entries:
        assert e.reason and e.node in e.line() and e.kernel in e.line()


@x86
@pytest.mark.quick
def test_planned_model_matches_onnxruntime(tmp_path):
    model = _model()
    so = onnx_mlir_py.compile(model, output=tmp_path / "m.so", opt_level=3, march="x86-64-v4")
    x = np.random.default_rng(1).standard_normal((1, 3, 32, 32)).astype(np.float32)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    for n in (1, 2):
        got = ExecutionSession(so, num_threads=n).run([x])[0]
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=f"threads={n}")


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "onnx_mlir_py.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=600)


@x86
def test_cli_print_kernel_plan(tmp_path):
    path = tmp_path / "plan.onnx"
    onnx.save(_model(), path)
    r = _cli(path, "--print-kernel-plan", "--EmitLLVMIR", "--march", "x86-64-v4", "-q")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert lines[0].startswith("kernel plan for x86-64-v4")
    from onnx_mlir_py.passes.optimize.kernel_plan import KERNELS
    names = [k for impls in KERNELS.values() for k, _ in impls] + ["linalg"]
    rows = {ln.split()[0]: [k for k in names if f" {k} " in ln] for ln in lines[2:]}
    assert rows == {n: [k] for n, k in EXPECTED.items()}
    assert (tmp_path / "plan.ll").exists()


@x86
def test_cli_verbose_prints_target_and_plan(tmp_path):
    path = tmp_path / "plan.onnx"
    onnx.save(_model(), path)
    r = _cli(path, "-v", "--EmitLLVMIR", "--march", "x86-64-v3")
    assert r.returncode == 0, r.stderr
    assert "[onnx-mlir-py] target: x86-64-v3" in r.stderr
    assert "[onnx-mlir-py] kernel plan for x86-64-v3" in r.stderr
    assert all(n in r.stderr for n in EXPECTED)
    assert r.stdout == ""


def test_cli_print_kernel_plan_without_o3(tmp_path):
    path = tmp_path / "plan.onnx"
    onnx.save(_model(), path)
    r = _cli(path, "--print-kernel-plan", "--EmitMLIR", "-q")
    assert r.returncode == 0, r.stderr
    assert "no kernel plan" in r.stderr and r.stdout == ""
