"""Attribute names shared by the -O3 steps."""
PACKED_ATTR = "onnx_mlir_py.packed_contraction"
