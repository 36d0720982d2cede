"""The generated dialect is complete, loadable and not stale."""
import onnx
import onnx.defs

from onnx_mlir_py.dialects.onnx import irdl_gen
import pytest

from onnx_mlir_py.dialects.onnx.naming import (DOMAIN_TO_DIALECT, ORT_DEFAULT_DOMAIN_OPS,
                                               ORT_DOMAINS)
from onnx_mlir_py.dialects.onnx.schema import IRDL_FILE, SPECS_JSON, spec_table


def test_pinned_onnx_is_installed():
    # The stale check below is only meaningful against the pinned schemas.
    assert onnx.__version__ == irdl_gen.PINNED_ONNX_VERSION


def _checked_in_ort_specs():
    return [s for s in spec_table().specs
            if s.domain in ORT_DOMAINS or (s.domain == "" and s.op_type in ORT_DEFAULT_DOMAIN_OPS)]


def test_generated_files_are_not_stale():
    # With another onnxruntime installed (the test extra does not pin it), the
    # onnx part is regenerated and the checked-in contrib specs are reused.
    same_ort = irdl_gen.ort_version() == irdl_gen.PINNED_ORT_VERSION
    irdl, js = irdl_gen.generate(None if same_ort else _checked_in_ort_specs())
    assert IRDL_FILE.read_text() == irdl, "run: python -m onnx_mlir_py.dialects.onnx.irdl_gen"
    assert SPECS_JSON.read_text() == js, "run: python -m onnx_mlir_py.dialects.onnx.irdl_gen"


def test_every_schema_version_has_an_op():
    table = spec_table()
    schemas = [s for s in onnx.defs.get_all_schemas_with_history()
               if (s.domain or "") in DOMAIN_TO_DIALECT]
    assert len(table.specs) == len(schemas) + len(_checked_in_ort_specs())
    for s in schemas:
        assert table.resolve(s.domain, s.name, s.since_version).since_version == s.since_version


def test_contrib_domain_is_generated_from_onnxruntime():
    t = spec_table()
    assert t.resolve("com.microsoft", "QLinearAdd", 1).mlir_name == "com_microsoft.q_linear_add"
    assert t.resolve("com.microsoft", "MatMulNBits", 1).mlir_name == "com_microsoft.mat_mul_n_bits"
    assert t.resolve("", "SimplifiedLayerNormalization", 17).mlir_name == \
        "onnx.simplified_layer_normalization"
    # contrib ops of the same name as an ONNX op stay in their own dialect
    assert t.resolve("com.microsoft", "DequantizeLinear", 1).mlir_name == \
        "com_microsoft.dequantize_linear"
    assert t.resolve("", "DequantizeLinear", 21).mlir_name.startswith("onnx.dequantize_linear")
    spec = t.resolve("com.microsoft", "QLinearLeakyRelu", 1)
    assert spec.attributes["alpha"].default == pytest.approx(0.01)
    assert [v.option for v in t.resolve("com.microsoft", "QLinearAdd", 1).inputs].count(
        "optional") == 3        # the three zero points may be omitted
    if irdl_gen.ort_version() == irdl_gen.PINNED_ORT_VERSION:
        from onnxruntime.capi.onnxruntime_pybind11_state import get_all_operator_schema
        names = {s.name for s in get_all_operator_schema() if s.domain == "com.microsoft"}
        assert names == {s.op_type for s in t.specs if s.domain == "com.microsoft"}


def test_newest_version_keeps_plain_name():
    t = spec_table()
    assert t.resolve("", "BatchNormalization", 99).mlir_name == "onnx.batch_normalization"
    assert t.resolve("", "Softmax", 12).mlir_name == "onnx.softmax_v11"
    assert t.resolve("ai.onnx.ml", "LabelEncoder", 99).mlir_name.startswith("onnx_ml.label_encoder")


def test_dispatch_takes_highest_version_not_above_opset():
    t = spec_table()
    assert t.resolve("", "Conv", 17).since_version == 11
    assert t.resolve("", "Relu", 13).since_version == 13
    assert t.resolve("", "Relu", 12).since_version == 6
    assert t.resolve("", "Gelu", 19) is None  # Gelu appears in opset 20


def test_dialect_loads_and_verifies_an_op():
    import mlir.ir as ir
    from onnx_mlir_py.context import make_context
    with make_context():
        m = ir.Module.parse('''
        func.func @f(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
          %0 = "onnx.gemm"(%a, %a) {alpha = 1.0 : f32, beta = 1.0 : f32, transA = 0 : si64,
                                    transB = 1 : si64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
          return %0 : tensor<2x3xf32>
        }''')
        assert m.operation.verify()
