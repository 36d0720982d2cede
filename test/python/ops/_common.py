import numpy as np
from onnx import TensorProto as TP, helper, numpy_helper

from helpers import make_model

F = TP.FLOAT


def i64(name, vals):
    return numpy_helper.from_array(np.array(vals, dtype=np.int64), name)


def f32(name, vals):
    return numpy_helper.from_array(np.array(vals, dtype=np.float32), name)


def one(op, x_shape, opset, inits=(), inputs=None, outputs=("y",), elem=F, **attrs):
    names = inputs if inputs is not None else ["x"] + [t.name for t in inits]
    node = helper.make_node(op, names, list(outputs), name="n", **attrs)
    return make_model([node], [("x", elem, x_shape)], list(outputs), opset, inits)
