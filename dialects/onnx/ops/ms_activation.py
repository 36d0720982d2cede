"""com.microsoft activations: Gelu, BiasGelu, FastGelu, QuickGelu, BiasAdd."""
from __future__ import annotations
