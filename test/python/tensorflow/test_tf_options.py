"""The ONNX options on TensorFlow inputs: -O3 (the kernels of
passes/optimize) and --shapeInformation (by input index, on the converted
model)."""
from __future__ import annotations

import json

import numpy as np
import pytest
from tf_skip import requires_tf

pytestmark = requires_tf


@pytest.mark.parametrize("name,fmt", [("cnn", "saved_model"), ("lstm", "keras")])
def test_o3_matches_tensorflow(zoo, tmp_path, name, fmt):
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    saved = zoo[name]
    sess = ExecutionSession(onnx_mlir_py.compile(saved.paths[fmt], tmp_path / "m.so",
                                                 opt_level=3))
    for batch in (1, 4):
        xs = saved.inputs(batch, seed=7)
        np.testing.assert_allclose(sess.run(xs)[0], saved.reference(xs), rtol=1e-4, atol=1e-5)


def test_shape_information_fixes_the_batch(zoo, tmp_path):
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession, RuntimeInputError
    saved = zoo["two"]
    so = onnx_mlir_py.compile(saved.paths["h5"], tmp_path / "m.so", opt_level=0,
                              shape_information="0:3x4,1:3x3")
    sess = ExecutionSession(so)
    assert [s["dims"] for s in json.loads(sess.input_signature())] == [[3, 4], [3, 3]]
    xs = saved.inputs(3)
    np.testing.assert_allclose(sess.run(xs)[0], saved.reference(xs), rtol=1e-4, atol=1e-5)
    with pytest.raises(RuntimeInputError, match="'a'"):
        sess.run(saved.inputs(2))
