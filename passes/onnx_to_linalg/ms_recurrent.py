"""com.microsoft DynamicQuantizeLSTM."""
from __future__ import annotations
