"""Keras GRU and SimpleRNN come out of tf2onnx as an ONNX Loop (not fused
GRU/RNN nodes) and compile as loops (docs/tensorflow.md, Limits)."""
from __future__ import annotations

import numpy as np
import pytest
from tf_skip import requires_tf

pytestmark = requires_tf


@pytest.mark.parametrize("layer", ["GRU", "SimpleRNN"])
def test_rnn_as_loop(tmp_path, layer):
    import keras
    import onnx
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    keras.utils.set_random_seed(1)
    m = keras.Sequential([keras.Input((5, 3), name="s"), getattr(keras.layers, layer)(4)])
    m.save(tmp_path / "rnn.keras")
    onnx_mlir_py.compile(tmp_path / "rnn.keras", tmp_path / "rnn.onnx", emit="EmitONNX")
    ops = {n.op_type for n in onnx.load(tmp_path / "rnn.onnx").graph.node}
    assert "Loop" in ops and not ops & {"GRU", "RNN"}, ops
    sess = ExecutionSession(onnx_mlir_py.compile(tmp_path / "rnn.keras", opt_level=0))
    for batch in (1, 3):
        x = np.random.default_rng(batch).standard_normal((batch, 5, 3)).astype(np.float32)
        np.testing.assert_allclose(sess.run([x])[0], np.asarray(m(x)), rtol=1e-4, atol=1e-5)
