"""TensorFlow model -> ``onnx.ModelProto`` through tf2onnx's Python API, in process.

Every format goes through the tf2onnx call that works for it today:

- SavedModel: ``tf_loader.from_saved_model`` (one signature, ``serving_default``
  unless told) then the converter core, as tf2onnx's own command line does;
- frozen GraphDef ``.pb``: ``convert.from_graph_def`` with the user's
  ``--inputs name:0[shape]`` / ``--outputs name:0``;
- ``.keras`` / ``.h5``: ``keras.models.load_model``, then ``convert.from_function``
  on a ``tf.function`` with the model's input signature
  (``convert.from_keras`` fails on Keras 3 ``Sequential`` models);
- ``.tflite``: ``convert.from_tflite``.

tf2onnx converts what it can and leaves the nodes it cannot map in the graph
(``continue_on_error``); :class:`FailedNodes` collects the ones whose handler
raised, from tf2onnx's log, and :mod:`sweep` reports them with every other
node we cannot compile.
"""
from __future__ import annotations

import logging
import os

import onnx

from onnx_mlir_py.frontends.tensorflow import detect
from onnx_mlir_py.frontends.tensorflow.errors import TensorFlowError, one_line
from onnx_mlir_py.frontends.tensorflow.specs import parse_names

# ONNX opset asked of tf2onnx (its newest; our dialect has every version)
OPSET = 18


class FailedNodes(logging.Handler):
    """tf2onnx's ``Failed to convert node 'name'`` errors: {node name: reason}."""

    def __init__(self):
        super().__init__(logging.ERROR)
        self.failed: dict[str, str] = {}

    def emit(self, record):
        if str(record.msg).startswith("Failed to convert node") and record.args:
            reason = one_line(record.exc_info[1]) if record.exc_info else "conversion failed"
            self.failed[str(record.args[0])] = reason


def convert(path: str, fmt: str, *, signature: str | None = None, inputs: str | None = None,
            outputs: str | None = None, verbose: bool = False
            ) -> tuple[onnx.ModelProto, dict[str, str]]:
    """(the ONNX model, {TF node name: why tf2onnx failed on it})."""
    log = logging.getLogger("tf2onnx")
    failed = FailedNodes()
    log.addHandler(failed)
    if not verbose:
        log.setLevel(logging.ERROR)
    try:
        import tensorflow as tf  # noqa: F401  (the extra is installed: errors.require_extra)
        model = _CONVERTERS[fmt](path, signature=signature, inputs=inputs, outputs=outputs)
    except TensorFlowError:
        raise
    except Exception as e:          # TF / tf2onnx / Keras: any of their exceptions
        raise TensorFlowError(f"cannot convert {fmt} model '{path}' to ONNX (tf2onnx): "
                              f"{one_line(e)}") from None
    finally:
        log.removeHandler(failed)
    return model, failed.failed


def _check_no_names(path, fmt, inputs, outputs):
    if inputs or outputs:
        raise TensorFlowError(f"--inputs/--outputs are for frozen GraphDef (.pb) models, "
                              f"'{path}' is a {fmt} model")


def _saved_model(path, *, signature, inputs, outputs):
    from tf2onnx import tf_loader
    from tf2onnx.convert import _convert_common
    sig = signature or "serving_default"
    _check_no_names(path, detect.SAVED_MODEL, inputs, outputs)
    import tensorflow as tf
    found = _signatures(path)
    if sig not in found:
        raise TensorFlowError(f"SavedModel '{path}' has no signature {sig!r} "
                              f"(it has: {', '.join(found) or 'none'}; choose with --signature)")
    graph_def, ins, outs, tables, renames = tf_loader.from_saved_model(
        path, None, None, signatures=[sig], return_initialized_tables=True,
        return_tensors_to_rename=True)
    with tf.device("/cpu:0"):
        model, _ = _convert_common(graph_def, name=os.path.basename(path.rstrip(os.sep)),
                                   continue_on_error=True, opset=OPSET, input_names=ins,
                                   output_names=outs, tensors_to_rename=renames,
                                   initialized_tables=tables)
    return model


def _signatures(path) -> list[str]:
    """The SavedModel's signature names, read from saved_model.pb (no loading)."""
    from tensorflow.core.protobuf import saved_model_pb2
    sm = saved_model_pb2.SavedModel()
    pb = os.path.join(path, "saved_model.pb")
    if not os.path.isfile(pb):
        return []
    with open(pb, "rb") as f:
        sm.ParseFromString(f.read())
    return sorted({k for mg in sm.meta_graphs for k in mg.signature_def
                   if not k.startswith("__")})


def _graph_def(path, *, signature, inputs, outputs):
    import tensorflow as tf
    from tf2onnx.convert import from_graph_def
    if signature:
        raise TensorFlowError(f"--signature is for SavedModel folders, '{path}' is a frozen "
                              f"GraphDef")
    if not inputs or not outputs:
        raise TensorFlowError(f"frozen GraphDef '{path}': give its input and output tensors "
                              f"with --inputs NAME:0[,...] --outputs NAME:0[,...] "
                              f"(inputs=... outputs=... from Python)")
    in_names, shapes = parse_names(inputs, "--inputs")
    out_names, out_shapes = parse_names(outputs, "--outputs")
    if out_shapes:
        raise TensorFlowError("--outputs takes tensor names only, no [shape]")
    gd = tf.compat.v1.GraphDef()
    with open(path, "rb") as f:
        gd.ParseFromString(f.read())
    known = {n.name for n in gd.node}
    missing = [t for t in in_names + out_names if t.rsplit(":", 1)[0] not in known]
    if missing:
        raise TensorFlowError(f"frozen GraphDef '{path}' has no node for tensor(s) "
                              f"{', '.join(repr(t) for t in missing)}")
    model, _ = from_graph_def(gd, name=os.path.basename(path), input_names=in_names,
                              output_names=out_names, opset=OPSET, shape_override=shapes)
    return model


def _keras(path, *, signature, inputs, outputs):
    import keras
    import tensorflow as tf
    from tf2onnx.convert import from_function
    if signature:
        raise TensorFlowError(f"--signature is for SavedModel folders, '{path}' is a Keras model")
    _check_no_names(path, detect.KERAS, inputs, outputs)
    try:
        m = keras.models.load_model(path, compile=False)
    except (TypeError, ValueError) as e:
        raise TensorFlowError(
            f"cannot load Keras model '{path}': {one_line(e)} (a model with custom layers: "
            f"compile it from Python, after importing the module that registers them with "
            f"keras.saving.register_keras_serializable)") from None
    spec = [tf.TensorSpec(i.shape, i.dtype, name=i.name) for i in m.inputs]

    def call(*xs):
        return m(list(xs) if len(xs) > 1 else xs[0], training=False)
    fn = tf.function(call, input_signature=spec)
    model, _ = from_function(fn, input_signature=spec, opset=OPSET)
    outs = list(getattr(m, "output_names", None) or
                ([m.layers[-1].name] if len(m.outputs) == 1 and m.layers else []))
    if len(outs) == len(model.graph.output) and len(set(outs)) == len(outs):
        from onnx_mlir_py.frontends.tensorflow.names import rename_values
        rename_values(model, {o.name: n for o, n in zip(model.graph.output, outs)})
    return model


def _tflite(path, *, signature, inputs, outputs):
    from tf2onnx.convert import from_tflite
    if signature:
        raise TensorFlowError(f"--signature is for SavedModel folders, '{path}' is a TFLite model")
    _check_no_names(path, detect.TFLITE, inputs, outputs)
    model, _ = from_tflite(path, opset=OPSET)
    return model


_CONVERTERS = {detect.SAVED_MODEL: _saved_model, detect.GRAPH_DEF: _graph_def,
               detect.KERAS: _keras, detect.TFLITE: _tflite}
