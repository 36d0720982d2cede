"""com.microsoft EmbedLayerNormalization."""
from __future__ import annotations
