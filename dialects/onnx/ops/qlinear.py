"""com.microsoft QLinear ops: QLinearAdd, QLinearMul, QLinearGlobalAveragePool, QLinearAveragePool, QLinearConcat, QLinearSigmoid, QLinearLeakyRelu, QLinearSoftmax."""
from __future__ import annotations
