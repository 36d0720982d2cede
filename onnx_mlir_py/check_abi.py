"""The run-time check contract between lower-to-linalg, codegen and the C
runtime: ``LoweringContext.require`` emits calls of ``CHECK_FN`` (defined in
runtime/c/om_runtime.c) with a message id and up to ``CHECK_VALUES`` values,
and lists the messages in the module attribute ``CHECKS_ATTR``, which codegen
(signature.py) turns into the entry wrapper's message table.
``NO_CHECKS_ATTR`` on the module (compile(runtime_checks=False),
--no-runtime-checks) makes ``require`` emit nothing.
"""
CHECK_FN = "om_check_failed"
CHECK_VALUES = 4
CHECKS_ATTR = "onnx_mlir_py.checks"
# UNSAFE: bad inputs then read out of bounds
NO_CHECKS_ATTR = "onnx_mlir_py.no_runtime_checks"
