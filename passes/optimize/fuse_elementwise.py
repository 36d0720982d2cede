"""Elementwise producer/consumer fusion: chains of elementwise
``linalg.generic`` ops (a bias add then a ReLU, the ops of a GELU, a
LayerNorm's scale and shift) become one generic, so the vectorize step emits
one loop that reads and writes memory once instead of one loop per op.

This is MLIR's own ``linalg-fuse-elementwise-ops``: a producer is fused into
its consumer when the producer has a single use (a value used twice is
computed once, not recomputed). It runs after the conv/matmul rewrites (their
matchers look for a separate bias add after the kernel, see ``conv.py`` and
``depthwise.py``) and after the kernels are tiled, so it only meets the
elementwise code around them.

Measured (1 thread, CPU time against onnxruntime): MobileNetV2 1.73x ->
1.53x, the BERT-base layer 1.14x -> 1.09x, the encoder layer 1.15x -> 1.10x.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.passmanager import PassManager

PIPELINE = "builtin.module(func.func(linalg-fuse-elementwise-ops), canonicalize, cse)"


def fuse_elementwise(module: ir.Module) -> None:
    """Fuse elementwise linalg producers into their consumers, in place."""
    PassManager.parse(PIPELINE, module.context).run(module.operation)
