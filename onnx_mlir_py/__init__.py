"""onnx-mlir-py: an ONNX compiler on the MLIR Python bindings."""
__version__ = "0.1.0"
