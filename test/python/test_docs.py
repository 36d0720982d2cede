from onnx_mlir_py import ops_doc


def test_ops_md_is_up_to_date():
    assert ops_doc.DOC.read_text() == ops_doc.render(), "run: python -m onnx_mlir_py.ops_doc"


def test_supported_onnx_ops_md_is_up_to_date():
    from onnx_mlir_py.backend import supported_ops
    assert supported_ops.DOC.read_text() == supported_ops.render(), \
        "run: python -m onnx_mlir_py.ops_doc --supported"


def test_rules_are_attributed_to_the_file_that_registers_them():
    """A table-driven lowering (a shared wrapper around a table entry) is
    attributed to its table's file, not to the wrapper's (elementwise.py)."""
    from onnx_mlir_py.registry import source_of
    assert source_of("lower", "", "Sin", 7).endswith("passes/onnx_to_linalg/unary.py")
    assert source_of("lower", "", "Add", 14).endswith("passes/onnx_to_linalg/elementwise.py")
    assert source_of("lower", "", "Abs", 1).endswith("passes/onnx_to_linalg/unary.py")
    assert source_of("shape", "", "Conv", 11).endswith("dialects/onnx/ops/conv.py")
    assert source_of("lower", "", "Conv", 99) == "?"
