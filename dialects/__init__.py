"""Dialect definitions (generated ONNX dialect and its op rules)."""
