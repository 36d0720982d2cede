from onnx_mlir_py import ops_doc


def test_ops_md_is_up_to_date():
    assert ops_doc.DOC.read_text() == ops_doc.render(), "run: python -m onnx_mlir_py.ops_doc"


def test_supported_onnx_ops_md_is_up_to_date():
    from onnx_mlir_py.backend import supported_ops
    assert supported_ops.DOC.read_text() == supported_ops.render(), \
        "run: python -m onnx_mlir_py.ops_doc --supported"
