"""com.microsoft quantized matmuls: QGemm, DynamicQuantizeMatMul, MatMulIntegerToFloat, MatMulNBits."""
from __future__ import annotations
