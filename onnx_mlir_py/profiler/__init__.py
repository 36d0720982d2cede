"""The per-node profiler's tools: ``onnx-mlir-py profile`` (:mod:`.cli`)
and the trace summary (:mod:`.summary`). The profiling itself is compiled
into the model (``--profile``: ``passes/instrument.py``,
``runtime/c/om_profile.c``).
"""
from onnx_mlir_py.profiler.summary import Summary, summarize  # noqa: F401
