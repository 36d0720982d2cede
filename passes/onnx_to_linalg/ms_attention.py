"""com.microsoft attention: Attention, MultiHeadAttention, GroupQueryAttention."""
from __future__ import annotations
