"""Test/benchmark helpers: a zoo of ONNX models built with onnx.helper
(``onnx_mlir_py.testing.models``)."""
