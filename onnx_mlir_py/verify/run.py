"""Compile a model, run it and a reference on the same inputs, compare.

    result = verify("model.onnx", ref="onnxruntime", every_value=True)
    result.ok, result.diffs, result.mismatch

The reference is onnxruntime or ``onnx.reference`` (its evaluator with the
fuzzer's fixes for its known bugs, ``testing/fuzz/reference_fixes.py``).

    result = verify_precision("model.onnx", precision="bf16")
    result.stats["y"].rel_l2

compiles the model twice, in f32 and in ``precision`` (``--precision bf16``),
runs both on the same inputs and measures the error of the second against
the first (:func:`.compare.error_stats`): no tolerance, a report.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field

import numpy as np
import onnx

from onnx_mlir_py.errors import OnnxMlirError
from onnx_mlir_py.importer.model import load_model, real_inputs
from onnx_mlir_py.importer.validate import validate_model
from onnx_mlir_py.options import DEFAULT_OPT_LEVEL
from onnx_mlir_py.timings import Timings
from onnx_mlir_py.verify.compare import Diff, ErrorStats, compare, error_stats
from onnx_mlir_py.verify.inputs import load_inputs, random_inputs
from onnx_mlir_py.verify.values import Mismatch, expose_values, first_mismatch

REFERENCES = ("onnxruntime", "reference")


class ReferenceError_(OnnxMlirError):
    """The reference could not run the model."""


@dataclass
class VerifyResult:
    model: onnx.ModelProto          # the model run (with --every-value: every value exposed)
    inputs: dict[str, np.ndarray]
    outputs: list[str]              # the model's own outputs
    names: list[str]                # every value compared, in order
    ours: dict[str, np.ndarray]
    ref: dict[str, np.ndarray]
    diffs: dict[str, Diff] = field(default_factory=dict)
    mismatch: Mismatch | None = None

    @property
    def ok(self) -> bool:
        return all(d.ok for d in self.diffs.values())


def _run_ours(model: onnx.ModelProto, inputs: dict, opt_level: int, timings,
              precision: str = "fp32") -> list:
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    with tempfile.TemporaryDirectory(prefix="omp-verify-") as d:
        so = onnx_mlir_py.compile(model, output=os.path.join(d, "model.so"),
                                  opt_level=opt_level, timings=timings, precision=precision)
        with timings.phase("run: compiled" if precision == "fp32" else
                           f"run: compiled ({precision})"):
            sess = ExecutionSession(so)
            return sess.run([inputs[vi.name] for vi in real_inputs(model.graph)])


def _run_reference(model: onnx.ModelProto, src, inputs: dict, ref: str) -> list:
    try:
        if ref == "reference":
            from onnx_mlir_py.testing.fuzz.oracle import reference_evaluator
            return [np.asarray(x) for x in reference_evaluator(model).run(None, inputs)]
        import onnxruntime as ort
        sess = ort.InferenceSession(src if src is not None else model.SerializeToString(),
                                    providers=["CPUExecutionProvider"])
        return sess.run(None, inputs)
    except Exception as e:
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        hint = "; try --ref reference" if ref == "onnxruntime" else ""
        raise ReferenceError_(f"the reference ({ref}) cannot run the model: {msg}{hint}") \
            from None


def _model_and_inputs(model, inputs, shapes, dim: int, seed: int):
    """(the validated ModelProto, its source path or None, the inputs)."""
    src = os.fspath(model) if isinstance(model, (str, os.PathLike)) else None
    proto = validate_model(load_model(model))        # sorted in topological order
    if isinstance(inputs, (str, os.PathLike)):
        inputs = load_inputs(os.fspath(inputs), proto)
    elif inputs is None:
        inputs = random_inputs(proto, shapes, dim, seed)
    return proto, src, inputs


@dataclass
class PrecisionResult:
    precision: str
    inputs: dict[str, np.ndarray]
    outputs: list[str]
    ours: dict[str, np.ndarray]     # the ``precision`` build's
    fp32: dict[str, np.ndarray]     # the f32 build's
    stats: dict[str, ErrorStats]


def verify_precision(model, inputs=None, *, precision: str = "bf16", shapes: dict | None = None,
                     dim: int = 1, seed: int = 0, opt_level: int = DEFAULT_OPT_LEVEL,
                     timings=None) -> PrecisionResult:
    """Compile ``model`` in f32 and in ``precision``, run both on the same
    ``inputs`` (as :func:`verify` takes them) and measure the error of the
    second against the first, per output."""
    from onnx_mlir_py.options import Options
    Options(precision=precision)                     # a bad name: one line
    proto, _src, inputs = _model_and_inputs(model, inputs, shapes, dim, seed)
    names = [o.name for o in proto.graph.output]
    timings = Timings() if timings is None else timings
    low = dict(zip(names, _run_ours(proto, inputs, opt_level, timings, precision)))
    fp32 = dict(zip(names, _run_ours(proto, inputs, opt_level, timings)))
    return PrecisionResult(precision, inputs, names, low, fp32,
                           {n: error_stats(low[n], fp32[n]) for n in names})


def verify(model, inputs=None, *, shapes: dict | None = None, dim: int = 1, seed: int = 0,
           ref: str = "onnxruntime", rtol: float = 1e-3, atol: float = 1e-4,
           opt_level: int = DEFAULT_OPT_LEVEL, every_value: bool = False,
           timings=None) -> VerifyResult:
    """``model``: a path or ModelProto. ``inputs``: None (random, see
    :mod:`.inputs`), a dict of arrays, or a path (a folder of ``input_*.pb``,
    an ``.npz``). ``ref``: ``"onnxruntime"`` or ``"reference"``."""
    if ref not in REFERENCES:
        raise OnnxMlirError(f"ref must be one of {', '.join(REFERENCES)}, got {ref!r}")
    proto, src, inputs = _model_and_inputs(model, inputs, shapes, dim, seed)
    outputs = [o.name for o in proto.graph.output]
    run_model, names = (expose_values(proto) if every_value else (proto, outputs))
    timings = Timings() if timings is None else timings
    ours = dict(zip(names, _run_ours(run_model, inputs, opt_level, timings)))
    with timings.phase(f"run: {ref}"):
        ref_out = dict(zip(names, _run_reference(run_model, src if run_model is proto else None,
                                                 inputs, ref)))
    diffs = {n: compare(ours[n], ref_out[n], rtol, atol) for n in names}
    result = VerifyResult(run_model, inputs, outputs, names, ours, ref_out, diffs)
    if every_value:
        result.mismatch = first_mismatch(run_model, inputs, ours, diffs)
    return result
