"""Which TensorFlow format a path is, from its name and folder layout alone
(no TensorFlow import: an ONNX compile never loads it)."""
from __future__ import annotations

import os

SAVED_MODEL = "SavedModel"
GRAPH_DEF = "frozen GraphDef"
KERAS = "Keras"
TFLITE = "TFLite"
FORMATS = (SAVED_MODEL, GRAPH_DEF, KERAS, TFLITE)

_SUFFIXES = {".pb": GRAPH_DEF, ".keras": KERAS, ".h5": KERAS, ".hdf5": KERAS,
             ".tflite": TFLITE}


def tf_format(path) -> str | None:
    """One of :data:`FORMATS`, or None for anything else (an ONNX model)."""
    if not isinstance(path, (str, os.PathLike)):
        return None
    p = os.fspath(path)
    if os.path.isdir(p):
        has = any(os.path.isfile(os.path.join(p, f)) for f in ("saved_model.pb",
                                                                 "saved_model.pbtxt"))
        return SAVED_MODEL if has else None
    return _SUFFIXES.get(os.path.splitext(p)[1].lower())


def output_base(path) -> str:
    """The default output base of a TensorFlow input: the path without its
    suffix (``model.pb`` -> ``model``), a SavedModel folder's own path
    (``export/`` -> ``export``, so ``export.so`` lands beside the folder)."""
    p = os.fspath(path).rstrip(os.sep) or os.sep
    if os.path.isdir(p):
        return p
    root, ext = os.path.splitext(p)
    return root if ext.lower() in _SUFFIXES else p
