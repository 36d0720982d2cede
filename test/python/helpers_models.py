"""Small ONNX models for importer and CLI tests."""
import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh


def gemm_model(trans_b=1, opset=17):
    w = nh.from_array(np.ones((4, 3), np.float32), "w")
    node = h.make_node("Gemm", ["x", "w"], ["y"], name="fc", transB=trans_b)
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
                     [h.make_tensor_value_info("y", T.FLOAT, [2, 4])], [w])
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


def save(model, path):
    onnx.save(model, str(path))
    return str(path)
