"""The generated ONNX dialects and their op rules."""
