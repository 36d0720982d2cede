"""CLI behaviour: emit levels, options, and one-line errors with exit 1."""
import subprocess
import sys
from pathlib import Path

import onnx
from onnx import TensorProto as T
from onnx import helper as h

from helpers_models import gemm_model, save

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mnist_small.onnx"


def cli(*args):
    return subprocess.run([sys.executable, "-m", "onnx_mlir_py.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def assert_one_line_error(r, *needles):
    assert r.returncode == 1, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert "Traceback" not in r.stderr
    for n in needles:
        assert n in lines[0], lines[0]


def test_emit_onnx_basic_writes_file_next_to_model(tmp_path):
    m = save(gemm_model(), tmp_path / "gemm.onnx")
    r = cli(m, "--EmitONNXBasic")
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "gemm.onnx.mlir").read_text()
    assert '"onnx.gemm"' in text and 'loc(' not in text.split("\n")[0]


def test_emit_onnx_ir_static_and_printir(tmp_path):
    r = cli(EXAMPLE, "--EmitONNXIR", "--printIR", "-v")
    assert r.returncode == 0, r.stderr
    assert "-> tensor<1x10xf32>" in r.stdout
    assert "!onnx.unknown" not in r.stdout and "tensor<*x" not in r.stdout
    assert "shape-inference" in r.stderr  # -v timing


def test_output_base_option(tmp_path):
    r = cli(EXAMPLE, "--EmitONNXIR", "-o", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out.onnx.mlir").exists()


def test_shape_information_makes_dims_dynamic(tmp_path):
    m = save(gemm_model(), tmp_path / "gemm.onnx")
    r = cli(m, "--EmitONNXIR", "--printIR", "--shapeInformation=0:-1x3")
    assert r.returncode == 0, r.stderr
    assert "tensor<?x3xf32>" in r.stdout


def test_truncated_file(tmp_path):
    data = EXAMPLE.read_bytes()
    bad = tmp_path / "trunc.onnx"
    bad.write_bytes(data[:len(data) // 3])
    assert_one_line_error(cli(bad, "--EmitONNXIR"), "trunc.onnx", "truncated")


def test_missing_file(tmp_path):
    assert_one_line_error(cli(tmp_path / "nope.onnx", "--EmitONNXIR"), "no such file")


def test_unknown_ops_reported_all_at_once(tmp_path):
    nodes = [h.make_node("FooOp", ["x"], ["a"], name="foo1"),
             h.make_node("Relu", ["a"], ["b"], name="relu"),
             h.make_node("BarOp", ["b"], ["y"], name="bar1")]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [2])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2])])
    m = save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), tmp_path / "u.onnx")
    assert_one_line_error(cli(m, "--EmitONNXIR"), "2 unsupported", "FooOp", "'foo1'",
                          "BarOp", "'bar1'")


def test_wrong_operand_count(tmp_path):
    node = h.make_node("Relu", ["x", "x"], ["y"], name="relu_bad")
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, [2])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2])])
    m = save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), tmp_path / "c.onnx")
    assert_one_line_error(cli(m, "--EmitONNXIR"), "'relu_bad'", "Relu", "2 inputs")


def test_wrong_attribute_type(tmp_path):
    model = gemm_model()
    model.graph.node[0].attribute[0].CopyFrom(h.make_attribute("transB", 1.0))
    m = save(model, tmp_path / "a.onnx")
    assert_one_line_error(cli(m, "--EmitONNXIR"), "'fc'", "Gemm", "transB", "must be int")


def test_missing_required_attribute(tmp_path):
    node = h.make_node("Cast", ["x"], ["y"], name="cast0")
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, [2])],
                     [h.make_tensor_value_info("y", T.INT64, [2])])
    m = save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), tmp_path / "r.onnx")
    assert_one_line_error(cli(m, "--EmitONNXIR"), "'cast0'", "missing required attribute 'to'")


def test_list_ops():
    r = cli("--list-ops")
    assert r.returncode == 0
    assert any(line.startswith("Add ") for line in r.stdout.splitlines())
