"""com.microsoft RotaryEmbedding."""
from __future__ import annotations
