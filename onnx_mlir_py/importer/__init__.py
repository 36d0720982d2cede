"""ONNX ModelProto -> MLIR module in the ONNX dialect.

    from onnx_mlir_py.importer import import_model
    module = import_model("model.onnx")      # or a ModelProto
"""
from onnx_mlir_py.importer.importer import import_model  # noqa: F401
