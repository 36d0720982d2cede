"""The lowering emit levels of the CLI and ``onnx_mlir_py.compile``:
every level writes its artifact, the library runs and agrees with
onnxruntime, and failures are one-line errors."""
import json
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from onnx_mlir_py.errors import CompileError, UnsupportedOpsError
from onnx_mlir_py.timings import Timings
from test_cli import EXAMPLE, assert_one_line_error, cli


def _mnist_input():
    m = onnx.load(str(EXAMPLE))
    dims = [d.dim_value for d in m.graph.input[0].type.tensor_type.shape.dim]
    return m.graph.input[0].name, np.random.default_rng(0).random(dims, np.float32)


@pytest.mark.quick
def test_emit_lib_is_the_default_and_matches_onnxruntime(tmp_path):
    model = tmp_path / "mnist.onnx"
    model.write_bytes(EXAMPLE.read_bytes())
    r = cli(model, "-v")
    assert r.returncode == 0, r.stderr
    assert "codegen: link" in r.stderr          # -v reports the codegen phases
    so = tmp_path / "mnist.so"
    assert so.exists()
    name, x = _mnist_input()
    got = onnx_mlir_py.ExecutionSession(str(so)).run([x])[0]
    want = ort.InferenceSession(str(model)).run(None, {name: x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("flag,suffix,marker", [
    ("--EmitMLIR", ".onnx.mlir", "linalg."),
    ("--EmitLLVMIR", ".ll", "define "),
    ("--EmitObj", ".o", None),
])
def test_emit_levels_write_their_artifact(tmp_path, flag, suffix, marker):
    r = cli(EXAMPLE, flag, "-O0", "-o", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    out = tmp_path / ("out" + suffix)
    data = out.read_bytes()
    if marker:
        assert marker.encode() in data
        assert b'"onnx.' not in data          # no ONNX-dialect op is left
    else:
        assert data[:4] == b"\x7fELF"


def test_emit_mlir_printir_has_no_onnx_ops():
    r = cli(EXAMPLE, "--EmitMLIR", "--printIR")
    assert r.returncode == 0, r.stderr
    assert "linalg." in r.stdout and '"onnx.' not in r.stdout


def _model_with(nodes, inputs, outputs):
    g = h.make_graph(nodes, "g", inputs, outputs)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 10
    return m


@pytest.mark.quick
def test_compile_api_modelproto_and_shape_information(tmp_path):
    m = _model_with([h.make_node("Relu", ["x"], ["y"], name="r")],
                    [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                    [h.make_tensor_value_info("y", T.FLOAT, [2, 3])])
    so = onnx_mlir_py.compile(m, tmp_path / "relu.so", shape_information="0:-1x3")
    s = onnx_mlir_py.ExecutionSession(so)
    assert json.loads(s.input_signature()) == [{"type": "f32", "dims": [-1, 3], "name": "x"}]
    assert json.loads(s.output_signature())[0]["dims"] == [-1, 3]
    x = np.array([[-1, 2, -3], [4, -5, 6], [0, 1, -1]], np.float32)
    np.testing.assert_array_equal(s.run([x])[0], np.maximum(x, 0))


def test_compile_api_needs_output_for_modelproto():
    m = onnx.load(str(EXAMPLE))
    with pytest.raises(CompileError, match="'output' is required"):
        onnx_mlir_py.compile(m)


def test_compile_api_rejects_bad_options(tmp_path):
    with pytest.raises(CompileError, match="opt_level"):
        onnx_mlir_py.compile(str(EXAMPLE), tmp_path / "x.so", opt_level=7)
    with pytest.raises(CompileError, match="emit"):
        onnx_mlir_py.compile(str(EXAMPLE), tmp_path / "x.so", emit="EmitFoo")
    with pytest.raises(CompileError, match="timings"):
        onnx_mlir_py.compile(str(EXAMPLE), tmp_path / "x.so", timings={})


@pytest.mark.parametrize("opt_level,emit", [(3, "EmitLib"), (0, "EmitObj")])
def test_timings_follow_the_pipeline(tmp_path, monkeypatch, opt_level, emit):
    """One Timings object sees every stage, in pipeline order: the -O3 tensor
    stage runs between lowering and codegen, the -O3 kernels go through the
    kernel cache (empty here: compiled with the rest of the module, in one
    phase), and each emit level stops the pipeline after its
    stage."""
    from onnx_mlir_py.codegen import kernel_cache
    monkeypatch.setenv(kernel_cache.ENV, str(tmp_path / "kernels"))
    t = Timings()
    onnx_mlir_py.compile(str(EXAMPLE), tmp_path / "x", opt_level=opt_level, emit=emit, timings=t)
    stages = ["import", "expand-functions", "verify-mlir", "verify-onnx", "shape-inference",
              "canonicalize-onnx", "sequence-to-tensors"]
    stages += ["optimize-onnx"] if opt_level >= 2 else []
    stages += ["lower-to-linalg"] + (["optimize (tensor -O3)"] if opt_level == 3 else [])
    stages += ["codegen: mlir"]
    if emit == "EmitLib" and opt_level == 3:
        # the misses compile with the rest of the module, in this process
        # (one compile_parts call, 2963fc0)
        assert kernel_cache.LAST.units > 0 and kernel_cache.LAST.misses > 0
        stages += ["codegen: kernel cache", "codegen: translate", "codegen: opt + llc"]
    else:
        stages += ["codegen: translate", "codegen: opt", "codegen: llc"]
    stages += ["codegen: link"] if emit == "EmitLib" else []
    assert list(t) == stages
    assert all(s >= 0 for s in t.values())


def _unlowerable_model():
    """Two nodes of an op with no lowering (SVMRegressor) beside a lowerable one."""
    def svm(name, out):
        return h.make_node("SVMRegressor", ["s"], [out], name=name, domain="ai.onnx.ml",
                           coefficients=[1.0], support_vectors=[1.0], n_supports=1, rho=[0.0])
    nodes = [h.make_node("Relu", ["x"], ["a"], name="ok"), svm("dec1", "t"), svm("dec2", "u")]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [2]),
                                  h.make_tensor_value_info("s", T.FLOAT, [4, 1])],
                     [h.make_tensor_value_info("a", T.FLOAT, [2]),
                      h.make_tensor_value_info("t", T.FLOAT, None),
                      h.make_tensor_value_info("u", T.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 20), h.make_opsetid("ai.onnx.ml", 1)])
    m.ir_version = 10
    return m


def test_unsupported_lowering_reported_all_at_once(tmp_path):
    path = tmp_path / "s.onnx"
    onnx.save(_unlowerable_model(), str(path))
    assert_one_line_error(cli(path), "SVMRegressor", "'dec1'", "'dec2'")
    with pytest.raises(UnsupportedOpsError) as e:
        onnx_mlir_py.compile(str(path), tmp_path / "s.so")
    assert [n for _, n in e.value.nodes] == ["dec1", "dec2"]
    assert not (tmp_path / "s.so").exists()


@pytest.mark.quick
def test_runtime_main_runs_and_compares_with_onnxruntime(tmp_path):
    so = onnx_mlir_py.compile(str(EXAMPLE), tmp_path / "m.so")
    r = subprocess.run([sys.executable, "-m", "onnx_mlir_py.runtime", so, "--reference",
                        str(EXAMPLE)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "probs: float32[1, 10]" in r.stdout and "(ok)" in r.stdout


def test_runtime_main_missing_library_is_one_line_error(tmp_path):
    r = subprocess.run([sys.executable, "-m", "onnx_mlir_py.runtime", str(tmp_path / "no.so")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith("error: ")


def _and_model(mask):
    from onnx import numpy_helper as nh
    g = h.make_graph([h.make_node("And", ["x", "b"], ["y"], name="and0")], "g",
                     [h.make_tensor_value_info("x", T.BOOL, [len(mask)])],
                     [h.make_tensor_value_info("y", T.BOOL, [len(mask)])],
                     [nh.from_array(np.array(mask, bool), "b")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def test_recompiling_to_the_same_path_runs_the_new_model(tmp_path):
    # dlopen caches libraries by path; bool initializers of any length are
    # bit-packed constants
    so = tmp_path / "same.so"
    for mask in ([True], [True, False, True, True, False], [False] * 4 + [True] * 5):
        s = onnx_mlir_py.ExecutionSession(onnx_mlir_py.compile(_and_model(mask), so, opt_level=0))
        x = np.ones(len(mask), bool)
        np.testing.assert_array_equal(s.run([x])[0], np.array(mask))


_NO_CONTEXT_LEFT = r"""
import gc, os, sys
import mlir.ir as ir
import onnx_mlir_py
out = sys.argv[1]
for i in range(2):
    onnx_mlir_py.compile(sys.argv[2], f"{out}/m{i}.so", opt_level=int(sys.argv[3]))
    gc.collect()
    print(ir.Context._get_live_count())
"""


@pytest.mark.parametrize("opt_level", [0, 3])
def test_a_compile_leaves_no_mlir_context_alive(tmp_path, opt_level):
    """After a compile, its MLIR context is freed with everything it holds
    (the module, every weight): the in-process LLVM's diagnostic handler
    held itself through a binding object the garbage collector cannot see,
    and each compile kept its context (ResNet-50: +226 MB a compile; a
    pytest worker reached 13 GB and was killed)."""
    counts = subprocess.run([sys.executable, "-c", _NO_CONTEXT_LEFT, str(tmp_path), EXAMPLE,
                             str(opt_level)], capture_output=True, text=True,
                            check=True).stdout.split()
    assert counts == ["0", "0"]
