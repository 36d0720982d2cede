"""SkipLayerNormalization, SkipSimplifiedLayerNormalization (com.microsoft) and SimplifiedLayerNormalization (onnxruntime's, default domain)."""
from __future__ import annotations
