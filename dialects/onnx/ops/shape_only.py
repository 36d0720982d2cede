"""Ops that are verified and typed (--EmitONNXIR) but have no lowering yet:
none today (ImageDecoder, the last one, moved to image_decoder.py). An op
that gets a lowering moves to its family's file.
"""
from __future__ import annotations

