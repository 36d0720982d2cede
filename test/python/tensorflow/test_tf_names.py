"""The frontend's parts that need no TensorFlow: format detection, output
names, --inputs/--outputs parsing, ':0' stripping."""
from __future__ import annotations

import onnx
import pytest
from onnx import TensorProto, helper

from onnx_mlir_py.frontends.tensorflow import detect
from onnx_mlir_py.frontends.tensorflow.errors import TensorFlowError
from onnx_mlir_py.frontends.tensorflow.names import strip_port_zero
from onnx_mlir_py.frontends.tensorflow.specs import parse_names


def test_detect_formats(tmp_path):
    sm = tmp_path / "export"
    sm.mkdir()
    assert detect.tf_format(sm) is None                 # a folder without saved_model.pb
    (sm / "saved_model.pb").write_bytes(b"")
    assert detect.tf_format(sm) == detect.SAVED_MODEL
    assert detect.tf_format(str(sm) + "/") == detect.SAVED_MODEL
    for name, fmt in [("f.pb", detect.GRAPH_DEF), ("m.keras", detect.KERAS),
                      ("m.H5", detect.KERAS), ("m.tflite", detect.TFLITE), ("m.onnx", None)]:
        assert detect.tf_format(tmp_path / name) == fmt, name
    assert detect.tf_format(onnx.ModelProto()) is None
    assert detect.output_base(str(sm) + "/") == str(sm)
    assert detect.output_base("a/m.tflite") == "a/m"


def test_default_output_names(tmp_path):
    from onnx_mlir_py.compiler import default_output
    assert default_output("net.pb") == "net.so"
    assert default_output("net.keras", "EmitONNX") == "net.onnx"
    assert default_output("net.h5", "EmitONNXIR") == "net.onnx.mlir"
    assert default_output("net.onnx") == "net.so"


def test_parse_names():
    assert parse_names("x:0[-1,28,28,1],y", "--inputs") == (
        ["x:0", "y:0"], {"x:0": [None, 28, 28, 1]})
    assert parse_names("a/b:1,c:0[]", "--inputs") == (["a/b:1", "c:0"], {"c:0": []})
    assert parse_names(["x:0"], "--outputs") == (["x:0"], None)
    for bad in ("x:0[a]", "x:0,,y:0", "x:0[1,"):
        with pytest.raises(TensorFlowError, match="--inputs: cannot read"):
            parse_names(bad, "--inputs")


def test_strip_port_zero_renames_everywhere():
    body = helper.make_graph([helper.make_node("Add", ["v", "x:0"], ["w"])], "body", [],
                             [helper.make_tensor_value_info("w", TensorProto.FLOAT, [2])])
    g = helper.make_graph(
        [helper.make_node("Relu", ["x:0"], ["v"]),
         helper.make_node("If", ["c:0"], ["out:0"], then_branch=body, else_branch=body),
         helper.make_node("Neg", ["out:0"], ["y:1"])],
        "g", [helper.make_tensor_value_info("x:0", TensorProto.FLOAT, [2]),
              helper.make_tensor_value_info("c:0", TensorProto.BOOL, []),
              helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("out:0", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("y:1", TensorProto.FLOAT, [2])])
    m = helper.make_model(g)
    assert strip_port_zero(m) == {"x:0": "x", "out:0": "out"}    # 'c' is taken: c:0 stays
    assert [i.name for i in m.graph.input] == ["x", "c:0", "c"]
    assert [o.name for o in m.graph.output] == ["out", "y:1"]
    assert list(m.graph.node[0].input) == ["x"]
    assert list(m.graph.node[2].input) == ["out"]
    assert list(m.graph.node[1].attribute[0].g.node[0].input) == ["v", "x"]


def test_tensorflow_is_loaded_only_for_tensorflow_inputs(tmp_path):
    """The frontend's detection loads neither onnx, MLIR nor TensorFlow
    (InferenceSession starts on a cached model without them); compiling an
    ONNX model never imports TensorFlow."""
    from tf_process import EXAMPLE, run_code
    code = ("import sys, onnx_mlir_py.frontends.tensorflow.detect as d\n"
            "print([m in sys.modules for m in ('onnx', 'mlir', 'tensorflow')])\n"
            "import onnx_mlir_py\n"
            f"onnx_mlir_py.compile({EXAMPLE!r}, {str(tmp_path / 'm.mlir')!r}, "
            "emit='EmitONNXIR')\n"
            "print('tensorflow' in sys.modules, 'tf2onnx' in sys.modules)\n")
    r = run_code(code, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n")[:2] == ["[False, False, False]", "False False"]
