"""The four tiny models x the four TensorFlow formats: compiled at -O0,
run, and matched against TensorFlow's own outputs (rtol 1e-4)."""
from __future__ import annotations

import json

import numpy as np
import pytest
from tf_skip import requires_tf

pytestmark = requires_tf

RTOL, ATOL = 1e-4, 1e-5


@pytest.mark.parametrize("fmt", ["saved_model", "keras", "h5", "tflite"])
@pytest.mark.parametrize("name", ["cnn", "lstm", "ctl", "two"])
def test_format_matches_tensorflow(zoo, tmp_path, name, fmt):
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    from tf_models import TFLITE_BATCH
    saved = zoo[name]
    so = onnx_mlir_py.compile(saved.paths[fmt], tmp_path / f"{name}.so", opt_level=0)
    sess = ExecutionSession(so)
    names = [s["name"] for s in json.loads(sess.input_signature())]
    assert names == [i.name for i in saved.model.inputs]      # TF names, no ':0'
    # a dynamic batch at two sizes; the TFLite file was converted at batch 2
    batches = [TFLITE_BATCH] if fmt == "tflite" else [1, 3]
    for batch in batches:
        for seed in (0, 1):
            xs = saved.inputs(batch, seed)
            if name == "ctl" and seed == 1:       # the other tf.cond branch
                xs = [-x for x in xs]
            (got,) = sess.run(xs)
            want = saved.reference(xs)
            err = float(np.max(np.abs(got - want)))
            print(f"{name} {fmt} batch {batch} seed {seed}: max abs err {err:.3g}")
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
