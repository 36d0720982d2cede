"""The command line on TensorFlow inputs: --EmitONNX writes the converted
model; TensorFlow's log noise only with -v; a wrong --signature is one line."""
from __future__ import annotations

import subprocess
import sys

import pytest
from tf_skip import requires_tf

pytestmark = requires_tf


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "onnx_mlir_py.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=600)


def test_emit_onnx_quiet(zoo, tmp_path):
    import onnx
    r = _cli(zoo["ctl"].paths["saved_model"], "--EmitONNX", "-o", tmp_path / "ctl")
    assert r.returncode == 0 and r.stderr == "" and r.stdout == "", r.stderr
    m = onnx.load(tmp_path / "ctl.onnx")
    onnx.checker.check_model(m)
    ops = {n.op_type for n in m.graph.node}
    assert {"If", "Loop"} <= ops, ops                 # tf.cond, tf.while_loop
    assert [i.name for i in m.graph.input] == ["x"]


def test_verbose_shows_tensorflow_logs(zoo, tmp_path):
    r = _cli(zoo["cnn"].paths["tflite"], "--EmitONNX", "-v", "-o", tmp_path / "cnn")
    assert r.returncode == 0, r.stderr
    assert "convert (tf2onnx)" in r.stderr              # the phase timing
    assert "tf2onnx" in r.stderr.replace("convert (tf2onnx)", "") or \
        "tensorflow" in r.stderr.lower()


def test_unknown_signature(zoo, tmp_path):
    r = _cli(zoo["cnn"].paths["saved_model"], "--signature", "nope", "-o", tmp_path / "x")
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [
        f"error: SavedModel '{zoo['cnn'].paths['saved_model']}' has no signature 'nope' "
        f"(it has: serve, serving_default; choose with --signature)"]


@pytest.mark.parametrize("fmt", ["h5"])
def test_emit_onnx_ir_prints(zoo, fmt):
    r = _cli(zoo["two"].paths[fmt], "--EmitONNXIR", "--printIR")
    assert r.returncode == 0, r.stderr
    assert "func.func @main_graph" in r.stdout and "%a" not in r.stderr
