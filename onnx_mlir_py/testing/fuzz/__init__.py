"""A differential fuzzer: random valid ONNX graphs, compiled at -O0 and -O3
and compared with onnxruntime (``onnx.reference`` where onnxruntime has no
kernel); failures are reduced to small reproducers.

    python -m onnx_mlir_py.testing.fuzz --seed 1 --count 100 --opt 0 3 --out DIR

Modules: ``graph`` (the builder: values with sizes per run-time shape),
``ops/`` (one op spec per op group, a registry keyed by name), ``generator``
(seeded graph growth + onnx.checker), ``inputs`` (runs with edge values),
``oracle`` (reference + tolerance policy), ``runner`` (isolated compile/run,
classification), ``reducer`` (ddmin over node groups), ``cli``.
"""
