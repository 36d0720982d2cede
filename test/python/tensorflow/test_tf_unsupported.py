"""Every node that stops a TensorFlow model, listed at once with its TF node
name before any compiling: TF ops tf2onnx cannot map (tf.scan's tensor
list, MatrixLogarithm), a failed conversion. MatrixDeterminant -> Det was
the example of an ONNX op without a lowering until Det got one: it is now
converted and lowered, so it is not listed."""
from __future__ import annotations

import pytest
from tf_skip import requires_tf

pytestmark = requires_tf


@pytest.fixture(scope="module")
def unsupported_sm(tmp_path_factory):
    import tensorflow as tf

    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 3, 3], tf.float32, name="x")])
        def __call__(self, x):
            return {"s": tf.scan(lambda a, b: a + b, x), "d": tf.linalg.det(x),
                    "l": tf.math.real(tf.raw_ops.MatrixLogarithm(input=tf.complex(x, 0.0)))}
    m = M()
    path = str(tmp_path_factory.mktemp("unsup") / "unsup_sm")
    tf.saved_model.save(m, path, signatures=m.__call__.get_concrete_function())
    return path


def test_all_unsupported_listed_at_once(unsupported_sm, tmp_path):
    import onnx_mlir_py
    from onnx_mlir_py.errors import UnsupportedOpsError
    with pytest.raises(UnsupportedOpsError) as e:
        onnx_mlir_py.compile(unsupported_sm, tmp_path / "m.so", opt_level=0)
    msg = str(e.value)
    assert "\n" not in msg and f"TensorFlow model '{unsupported_sm}'" in msg
    ops = {op.split(" ")[0]: node for op, node in e.value.nodes}
    assert ops["TensorListReserve"].endswith("scan/TensorArrayV2_1"), ops
    assert "MatrixLogarithm" in ops and "Complex" in ops
    assert "Det" not in ops                                  # converted and lowered
    assert "tf2onnx cannot convert it" in msg
    assert not (tmp_path / "m.so").exists()


def test_emit_onnx_lists_only_unconverted(unsupported_sm, tmp_path):
    """--EmitONNX does not lower: only the TF ops tf2onnx cannot map are listed."""
    import onnx_mlir_py
    from onnx_mlir_py.errors import UnsupportedOpsError
    with pytest.raises(UnsupportedOpsError) as e:
        onnx_mlir_py.compile(unsupported_sm, tmp_path / "m.onnx", emit="EmitONNX")
    assert "TensorListReserve" in str(e.value) and "Det" not in str(e.value)
