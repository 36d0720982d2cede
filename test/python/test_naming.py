import re

from onnx_mlir_py.dialects.onnx.naming import snake_op_name, value_name
from onnx_mlir_py.dialects.onnx.schema import spec_table


def test_examples():
    assert snake_op_name("BatchNormalization") == "batch_normalization"
    assert snake_op_name("MatMulInteger") == "mat_mul_integer"
    assert snake_op_name("IsNaN") == "is_nan"
    assert snake_op_name("LRN") == "lrn"
    assert snake_op_name("QLinearConv") == "q_linear_conv"
    assert value_name("X") == "x"
    assert value_name("outputs___") == "outputs"


def test_mapping_is_injective_and_lowercase():
    names = [s.mlir_name for s in spec_table().specs]
    assert len(names) == len(set(names))
    for n in names:
        assert re.fullmatch(r"[a-z_]+\.[a-z0-9_]+", n), n
