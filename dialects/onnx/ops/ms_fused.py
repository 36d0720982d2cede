"""com.microsoft fused ops: FusedMatMul, FusedConv."""
from __future__ import annotations
