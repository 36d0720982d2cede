"""Without the [tf] extra, a TensorFlow input fails with one line saying how
to install it; TensorFlow-only options on an ONNX model are refused. These
tests run in the core run (no TensorFlow needed)."""
from __future__ import annotations

import os

import pytest

from onnx_mlir_py.errors import CompileError
from onnx_mlir_py.frontends.tensorflow import errors as tf_errors
from onnx_mlir_py.frontends.tensorflow.errors import EXTRA_NEEDED, TensorFlowError

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples",
                       "mnist_small.onnx")


@pytest.fixture
def no_extra(monkeypatch):
    monkeypatch.setattr(tf_errors, "missing_packages", lambda: ["tensorflow", "tf2onnx"])


def test_compile_says_how_to_install(no_extra, tmp_path):
    import onnx_mlir_py
    pb = tmp_path / "frozen.pb"
    pb.write_bytes(b"\x00")
    with pytest.raises(TensorFlowError) as e:
        onnx_mlir_py.compile(pb, opt_level=0)
    assert str(e.value).startswith(EXTRA_NEEDED)
    assert "frozen GraphDef" in str(e.value) and "\n" not in str(e.value)


def test_cli_says_how_to_install(no_extra, tmp_path, capsys):
    from onnx_mlir_py.cli import main
    sm = tmp_path / "export"
    sm.mkdir()
    (sm / "saved_model.pb").write_bytes(b"")
    assert main([str(sm), "--EmitONNX"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {EXTRA_NEEDED} ('{sm}' is a SavedModel model; "
                   f"not installed: tensorflow, tf2onnx)"]
    assert not (tmp_path / "export.onnx").exists()


def test_tf_options_refused_for_onnx(tmp_path):
    import onnx_mlir_py
    with pytest.raises(CompileError, match="--signature: for TensorFlow inputs only"):
        onnx_mlir_py.compile(EXAMPLE, tmp_path / "m.so", signature="serving_default")
    with pytest.raises(CompileError, match="--EmitONNX writes the ONNX model converted"):
        onnx_mlir_py.compile(EXAMPLE, tmp_path / "m.onnx", emit="EmitONNX")


def test_emit_onnx_option_listed():
    from onnx_mlir_py.cli import build_parser
    assert build_parser().parse_args(["m.pb", "--EmitONNX"]).emit == "EmitONNX"
    args = build_parser().parse_args(["m.pb", "--inputs", "x:0[-1,4]", "--outputs", "y:0"])
    assert (args.inputs, args.outputs) == ("x:0[-1,4]", "y:0")
