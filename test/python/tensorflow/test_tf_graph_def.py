"""A frozen GraphDef with a dynamic batch, compiled by the command line with
tf2onnx's --inputs/--outputs, run at two batch sizes against TensorFlow."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from tf_skip import requires_tf

pytestmark = requires_tf


@pytest.fixture(scope="module")
def frozen(zoo, tmp_path_factory):
    from tf_models import frozen_function
    saved = zoo["two"]
    fn = frozen_function(saved.model, batch=None)
    path = tmp_path_factory.mktemp("frozen") / "two.pb"
    path.write_bytes(fn.graph.as_graph_def().SerializeToString())
    outputs = [t.name for t in fn.outputs]
    return saved, str(path), outputs


def test_frozen_graph_dynamic_batch(frozen, tmp_path):
    from onnx_mlir_py.runtime import ExecutionSession
    saved, pb, outputs = frozen
    out = tmp_path / "two"
    r = subprocess.run([sys.executable, "-m", "onnx_mlir_py.cli", pb, "-O0", "-o", str(out),
                        "--inputs", "a:0[-1,4],b:0[-1,3]", "--outputs", ",".join(outputs)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "" and r.stdout == ""        # TensorFlow's log noise hidden
    sess = ExecutionSession(str(out) + ".so")
    sig = json.loads(sess.input_signature())
    assert [(s["name"], s["dims"]) for s in sig] == [("a", [-1, 4]), ("b", [-1, 3])]
    assert json.loads(sess.output_signature())[0]["name"] == outputs[0].removesuffix(":0")
    for batch in (1, 5):
        xs = saved.inputs(batch, seed=batch)
        (got,) = sess.run(xs)
        np.testing.assert_allclose(got, saved.reference(xs), rtol=1e-4, atol=1e-5)


def test_frozen_graph_needs_tensor_names(frozen, tmp_path):
    import onnx_mlir_py
    from onnx_mlir_py.frontends.tensorflow.errors import TensorFlowError
    _, pb, outputs = frozen
    with pytest.raises(TensorFlowError, match=r"give its input and output tensors with "
                                              r"--inputs NAME:0\[,\.\.\.\] --outputs"):
        onnx_mlir_py.compile(pb, tmp_path / "x.so", inputs="a:0,b:0")
    with pytest.raises(TensorFlowError, match=r"has no node for tensor\(s\) 'nope:0'"):
        onnx_mlir_py.compile(pb, tmp_path / "x.so", inputs="a:0,nope:0", outputs=outputs)
    with pytest.raises(TensorFlowError, match="--signature is for SavedModel folders"):
        onnx_mlir_py.compile(pb, tmp_path / "x.so", signature="serving_default")
