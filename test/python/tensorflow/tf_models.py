"""Tiny Keras models with random weights (seeded), each saved as a SavedModel,
``.keras``, ``.h5`` and ``.tflite``, with inputs and TensorFlow's outputs.

- ``cnn``: Conv2D + MaxPool + Dense + Softmax (Sequential)
- ``lstm``: LSTM + Dense (Sequential)
- ``ctl``: a layer with ``tf.cond`` and a ``tf.while_loop`` whose trip count
  depends on the input (functional)
- ``two``: a functional model with two inputs

The TFLite file is converted from a frozen concrete function at batch
:data:`TFLITE_BATCH` (the TFLite converter cannot lower an LSTM's tensor
list with a dynamic batch); the other formats keep the batch dynamic.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

TFLITE_BATCH = 2
FORMATS = ("saved_model", "keras", "h5", "tflite")


@keras.saving.register_keras_serializable(package="onnx_mlir_py_tests")
class CondLoop(keras.layers.Layer):
    """y = 2x if sum(x) > 0 else x - 1; then n times y = tanh(y) + 0.5, where
    n = 1 + (int(4 max|x|) mod 4)."""

    def call(self, x):
        y = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x - 1.0)
        n = tf.cast(tf.reduce_max(tf.abs(x)) * 4.0, tf.int32) % 4 + 1
        _, y = tf.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, tf.tanh(y) + 0.5),
                             [tf.constant(0), y])
        return y


def cnn():
    return keras.Sequential([keras.Input((8, 8, 3), name="img"),
                             keras.layers.Conv2D(4, 3, activation="relu"),
                             keras.layers.MaxPooling2D(), keras.layers.Flatten(),
                             keras.layers.Dense(5), keras.layers.Softmax()])


def lstm():
    return keras.Sequential([keras.Input((6, 4), name="seq"), keras.layers.LSTM(8),
                             keras.layers.Dense(3)])


def ctl():
    x = keras.Input((5,), name="x")
    return keras.Model(x, keras.layers.Dense(4)(CondLoop()(keras.layers.Dense(5)(x))))


def two():
    a, b = keras.Input((4,), name="a"), keras.Input((3,), name="b")
    h = keras.layers.Concatenate()([keras.layers.Dense(5, activation="tanh")(a), b])
    return keras.Model([a, b], keras.layers.Dense(2)(h))


MODELS = {"cnn": cnn, "lstm": lstm, "ctl": ctl, "two": two}


@dataclass
class Saved:
    model: object
    paths: dict = field(default_factory=dict)     # format -> path

    def inputs(self, batch: int, seed: int = 0) -> list[np.ndarray]:
        rng = np.random.default_rng(seed)
        return [rng.standard_normal((batch, *i.shape[1:])).astype(np.float32)
                for i in self.model.inputs]

    def reference(self, xs: list[np.ndarray]) -> np.ndarray:
        return np.asarray(self.model(xs if len(xs) > 1 else xs[0], training=False))


def frozen_function(model, batch=None):
    """The model's forward pass as a concrete function with its variables
    made constants (batch None = dynamic)."""
    from tensorflow.python.framework.convert_to_constants import \
        convert_variables_to_constants_v2
    spec = [tf.TensorSpec([batch, *i.shape[1:]], i.dtype, name=i.name) for i in model.inputs]
    fn = tf.function(lambda *xs: model(list(xs) if len(xs) > 1 else xs[0], training=False),
                     input_signature=spec)
    return convert_variables_to_constants_v2(fn.get_concrete_function())


def save_all(model, base: str) -> dict:
    paths = {"saved_model": base + "_sm", "keras": base + ".keras", "h5": base + ".h5",
             "tflite": base + ".tflite"}
    model.export(paths["saved_model"], verbose=False)
    model.save(paths["keras"])
    model.save(paths["h5"])
    conv = tf.lite.TFLiteConverter.from_concrete_functions(
        [frozen_function(model, TFLITE_BATCH)])
    with open(paths["tflite"], "wb") as f:
        f.write(conv.convert())
    return paths


def build_all(folder) -> dict[str, Saved]:
    keras.utils.set_random_seed(0)
    out = {}
    for name, make in MODELS.items():
        m = make()
        out[name] = Saved(m, save_all(m, os.path.join(str(folder), name)))
    return out
