"""``onnx-mlir-py verify``: exit status, inputs (random, --shape, input_*.pb,
.npz), both references, and --every-value naming the node of a planted bug."""
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from onnx_mlir_py import registry
from onnx_mlir_py.cli import main


def mlp(path, batch="n"):
    """x[n, 8] -> mm1 -> add1 -> relu -> mm2 -> tanh -> y; add1 -> sig -> z."""
    rng = np.random.default_rng(1)
    inits = [nh.from_array(rng.standard_normal((8, 16)).astype(np.float32), "w1"),
             nh.from_array(rng.standard_normal(16).astype(np.float32), "b1"),
             nh.from_array(rng.standard_normal((16, 4)).astype(np.float32), "w2")]
    nodes = [h.make_node("MatMul", ["x", "w1"], ["m1"], name="mm1"),
             h.make_node("Add", ["m1", "b1"], ["a1"], name="add1"),
             h.make_node("Relu", ["a1"], ["r1"], name="relu"),
             h.make_node("MatMul", ["r1", "w2"], ["m2"], name="mm2"),
             h.make_node("Tanh", ["m2"], ["y"], name="tanh"),
             h.make_node("Sigmoid", ["a1"], ["z"], name="sig")]
    g = h.make_graph(nodes, "mlp", [h.make_tensor_value_info("x", T.FLOAT, [batch, 8])],
                     [h.make_tensor_value_info("y", T.FLOAT, [batch, 4]),
                      h.make_tensor_value_info("z", T.FLOAT, [batch, 16])], inits)
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), str(path))
    return str(path)


@pytest.fixture
def model(tmp_path):
    return mlp(tmp_path / "mlp.onnx")


@pytest.fixture
def wrong_relu(monkeypatch):
    """Plant a wrong lowering: Relu v14 lowered as Abs (differs on negatives)."""
    registry.load_all_rules()
    monkeypatch.setitem(registry._RULES[("lower", "", "Relu")], 14,
                        registry.lookup("lower", "", "Abs", 13))


def verify(capsys, *args):
    rc = main(["verify", *map(str, args)])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("shape", ["x:3x8", "0:5x8"])
def test_matching_model_exits_0_at_two_shapes(model, capsys, shape):
    rc, out, err = verify(capsys, model, "-O0", "--shape", shape)
    assert rc == 0, out + err
    n = shape.split(":")[1].split("x")[0]
    assert f"input 'x': float32[{n}, 8]" in out
    assert f"output 'y': float32[{n}, 4] ok" in out and f"output 'z': float32[{n}, 16] ok" in out
    assert "PASS: 2 of 2 outputs match" in out


def test_planted_wrong_lowering_exits_1(model, capsys, wrong_relu):
    rc, out, err = verify(capsys, model, "-O0", "--dim", "4")
    assert rc == 1, out + err
    assert "output 'y': float32[4, 4] DIFFERS" in out
    assert "output 'z': float32[4, 16] ok" in out        # z does not read the Relu
    assert "FAIL: 1 of 2 outputs match" in out


@pytest.mark.parametrize("opt", ["-O0", "-O3"])
def test_every_value_names_the_planted_node(model, capsys, wrong_relu, opt):
    rc, out, err = verify(capsys, model, opt, "--every-value", "--shape", "x:4x8")
    assert rc == 1, out + err
    lines = out.splitlines()
    at = lines.index("first mismatch: node #2 'relu' (Relu)")
    assert lines[at + 1].startswith("  output 'r1': float32[4, 16] DIFFERS: max abs err ")
    assert lines[at + 2].startswith("  input #0 'a1': float32[4, 16] from node #1 'add1' "
                                    "(Add) matches: max abs err ")
    # every value after it that reads it differs too; the ones before match
    assert "every value: 6 compared, 3 differ" in out     # r1, m2, y


def test_every_value_without_bug_exits_0(model, capsys):
    rc, out, err = verify(capsys, model, "-O0", "--every-value", "-v")
    assert rc == 0, out + err
    for v in ("m1", "a1", "r1", "m2"):
        assert f"value '{v}': float32[1, " in out
    assert "every value: 6 compared, 0 differ" in out and "first mismatch" not in out


def test_inputs_from_pb_folder_and_npz_and_onnx_reference(model, tmp_path, capsys):
    x = np.linspace(-2, 2, 6 * 8, dtype=np.float32).reshape(6, 8)
    d = tmp_path / "test_data_set_0"
    d.mkdir()
    (d / "input_0.pb").write_bytes(nh.from_array(x, "x").SerializeToString())
    rc, out, err = verify(capsys, model, "-O0", "--inputs", d, "--ref", "reference")
    assert rc == 0, out + err
    assert "input 'x': float32[6, 8]" in out and "reference reference" in out
    np.savez(tmp_path / "in.npz", x=x[:2])
    rc, out, err = verify(capsys, model, "-O0", "--inputs", tmp_path / "in.npz")
    assert rc == 0, out + err
    assert "input 'x': float32[2, 8]" in out


@pytest.mark.parametrize("args, needle", [
    (["--shape", "x:3x9"], "--shape: input 'x' dim 1 is 8 in the model, got 9"),
    (["--shape", "q:3x8"], "--shape: no input 'q'"),
    (["--inputs", "NPZ"], "lacks input 'x'"),
    (["--inputs", "nowhere"], "no such file or folder 'nowhere'"),
])
def test_bad_inputs_one_line_error_exit_1(model, tmp_path, capsys, args, needle):
    np.savez(tmp_path / "other.npz", w=np.zeros(3))
    args = [str(tmp_path / "other.npz") if a == "NPZ" else a for a in args]
    rc, out, err = verify(capsys, model, "-O0", *args)
    assert rc == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], err


def test_command_line_entry_point(model):
    r = subprocess.run([sys.executable, "-m", "onnx_mlir_py.cli", "verify", model, "-O0",
                        "--shape", "x:2x8"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASS: 2 of 2 outputs match" in r.stdout
