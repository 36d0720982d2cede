"""The generated dialect is complete, loadable and not stale."""
import onnx
import onnx.defs

from onnx_mlir_py.dialects.onnx import irdl_gen
from onnx_mlir_py.dialects.onnx.naming import DOMAIN_TO_DIALECT
from onnx_mlir_py.dialects.onnx.schema import IRDL_FILE, SPECS_JSON, spec_table


def test_pinned_onnx_is_installed():
    # The stale check below is only meaningful against the pinned schemas.
    assert onnx.__version__ == irdl_gen.PINNED_ONNX_VERSION


def test_generated_files_are_not_stale():
    irdl, js = irdl_gen.generate()
    assert IRDL_FILE.read_text() == irdl, "run: python -m onnx_mlir_py.dialects.onnx.irdl_gen"
    assert SPECS_JSON.read_text() == js, "run: python -m onnx_mlir_py.dialects.onnx.irdl_gen"


def test_every_schema_version_has_an_op():
    table = spec_table()
    schemas = [s for s in onnx.defs.get_all_schemas_with_history()
               if (s.domain or "") in DOMAIN_TO_DIALECT]
    assert len(table.specs) == len(schemas)
    for s in schemas:
        assert table.resolve(s.domain, s.name, s.since_version).since_version == s.since_version


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
