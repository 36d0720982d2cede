"""onnxruntime's API on a TensorFlow model: InferenceSession takes a
SavedModel folder (and the other formats) and names inputs as TF does."""
from __future__ import annotations

import numpy as np
import pytest
from tf_skip import requires_tf

pytestmark = requires_tf


@pytest.mark.parametrize("fmt", ["saved_model", "keras"])
def test_inference_session_on_tf_model(zoo, tmp_path, fmt):
    import onnx_mlir_py as ort
    saved = zoo["two"]
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(saved.paths[fmt], opts, cache_dir=str(tmp_path))
    assert [i.name for i in sess.get_inputs()] == ["a", "b"]
    assert sess.get_inputs()[0].shape[1:] == [4]
    for batch in (1, 4):
        xs = saved.inputs(batch, seed=batch)
        (got,) = sess.run(None, {"a": xs[0], "b": xs[1]})
        np.testing.assert_allclose(got, saved.reference(xs), rtol=1e-4, atol=1e-5)


def test_inference_session_signature_only_for_tf(tmp_path):
    import onnx_mlir_py as ort
    with pytest.raises(TypeError, match="'signature' is for a TensorFlow SavedModel"):
        ort.InferenceSession("examples/mnist_small.onnx", signature="serving_default",
                             cache_dir=str(tmp_path))
