"""ReverseSequence vs onnxruntime: both axis orders, dynamic batch and time
dims at two shapes, lengths 0 and full; a length past the time axis or a
lengths count that is not the batch size fails naming the node."""
import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession, RuntimeInputError


def _model(batch_axis, time_axis):
    node = h.make_node("ReverseSequence", ["x", "lens"], ["y"], batch_axis=batch_axis,
                       time_axis=time_axis, name="rev")
    shape = ["t", "b", 3] if time_axis == 0 else ["b", "t", 3]
    m = h.make_model(h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, shape),
                                                h.make_tensor_value_info("lens", T.INT64, ["nb"])],
                                  [h.make_tensor_value_info("y", T.FLOAT, shape)]),
                     opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("batch_axis, time_axis", [(1, 0), (0, 1)])
@pytest.mark.parametrize("opt_level", [0, 3])
def test_reverse_sequence(tmp_path, batch_axis, time_axis, opt_level):
    m = _model(batch_axis, time_axis)
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=opt_level))
    ref = ort.InferenceSession(m.SerializeToString())
    rng = np.random.default_rng(0)
    for t, bs in [(4, 3), (6, 2)]:
        shape = (t, bs, 3) if time_axis == 0 else (bs, t, 3)
        x = rng.random(shape, np.float32)
        lens = rng.integers(1, t + 1, bs).astype(np.int64)
        lens[0] = t
        (got,) = sess.run([x, lens])
        (want,) = ref.run(None, {"x": x, "lens": lens})
        np.testing.assert_array_equal(got, want)
    with pytest.raises(RuntimeInputError, match=r"node 'rev' \(ReverseSequence\): sequence "
                                                r"length 5 is out of range \[0, 4\]"):
        sess.run([np.zeros((4, 2, 3) if time_axis == 0 else (2, 4, 3), np.float32),
                  np.array([1, 5], np.int64)])
    with pytest.raises(RuntimeInputError, match="sequence_lens dim 0 is 3 but input dim"):
        sess.run([np.zeros((4, 2, 3) if time_axis == 0 else (2, 4, 3), np.float32),
                  np.array([1, 1, 1], np.int64)])
