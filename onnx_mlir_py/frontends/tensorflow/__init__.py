"""TensorFlow models in: SavedModel folders, frozen GraphDef ``.pb``,
``.keras`` / ``.h5`` and ``.tflite``, converted to ONNX by tf2onnx in this
process, then compiled like any ONNX model (see docs/tensorflow.md).

    from onnx_mlir_py.frontends.tensorflow import TfOptions, load
    model = load("export/", TfOptions(signature="serving_default"))  # onnx.ModelProto

TensorFlow and tf2onnx (the ``[tf]`` extra) are imported only here, only for
a TensorFlow input: compiling an ONNX model never loads them. Importing this
package (``detect``) loads neither onnx nor MLIR (InferenceSession's fast
start on a cached model).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from onnx_mlir_py.frontends.tensorflow.detect import output_base, tf_format  # noqa: F401
from onnx_mlir_py.frontends.tensorflow.errors import EXTRA_NEEDED, TensorFlowError  # noqa: F401


@dataclass(frozen=True)
class TfOptions:
    """``signature``: the SavedModel signature (default ``serving_default``).
    ``inputs`` / ``outputs``: a frozen GraphDef's tensors, tf2onnx's form
    ``"x:0[1,28,28,1],y:0"`` (a ``-1`` dim is dynamic) or a list of such items.
    ``verbose``: let TensorFlow's and tf2onnx's logs through."""
    signature: str | None = None
    inputs: str | list | None = None
    outputs: str | list | None = None
    verbose: bool = False


def load(path, opts: TfOptions | None = None, *, lowering: bool = True,
         timings=None) -> "onnx.ModelProto":  # noqa: F821
    """The ONNX model of a TensorFlow model, graph inputs/outputs named after
    the TF tensors without ``:0``. Raises ``UnsupportedOpsError`` listing every
    node that cannot be converted (or, with ``lowering``, compiled), and
    ``TensorFlowError`` when the extra is missing or tf2onnx fails."""
    from onnx_mlir_py.frontends.tensorflow.errors import require_extra
    from onnx_mlir_py.frontends.tensorflow.names import strip_port_zero
    from onnx_mlir_py.frontends.tensorflow.quiet import quiet
    from onnx_mlir_py.frontends.tensorflow.sweep import sweep
    opts = opts or TfOptions()
    path = os.fspath(path)
    fmt = tf_format(path)
    if fmt is None:
        raise TensorFlowError(f"'{path}' is not a TensorFlow model (a SavedModel folder, "
                              f".pb, .keras, .h5 or .tflite file)")
    require_extra(path, fmt)
    with _phase(timings, "convert (tf2onnx)"), quiet(opts.verbose):
        from onnx_mlir_py.frontends.tensorflow.convert import convert
        model, failed = convert(path, fmt, signature=opts.signature, inputs=opts.inputs,
                                outputs=opts.outputs, verbose=opts.verbose)
    strip_port_zero(model)
    sweep(model, failed, path, lowering)
    return model


def _phase(timings, name):
    import contextlib
    return contextlib.nullcontext() if timings is None else timings.phase(name)
