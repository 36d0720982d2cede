"""``onnx-mlir-py verify``: compare the compiled model with a reference
(onnxruntime or onnx.reference), optionally value by value to find the
first node that computes a wrong result.

    from onnx_mlir_py.verify import verify
    r = verify("model.onnx", every_value=True)
    r.ok, r.mismatch.lines

Modules: ``inputs`` (random or given inputs), ``compare`` (tolerances and
errors), ``values`` (every value as an output, the first differing node),
``run`` (compile, run, compare), ``cli`` (the command).
"""
from onnx_mlir_py.verify.run import VerifyResult, verify  # noqa: F401
