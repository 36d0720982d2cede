"""Models of the InferenceSession tests (built with onnx.helper and
onnx_mlir_py.testing.models)."""
import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from onnx_mlir_py.testing import models as zoo


def multi_io() -> onnx.ModelProto:
    """Three inputs (x [N,S,8] float, mask [N,S] float, ids [N] int64) and
    three outputs (pooled [N,4] float, best [N] int64, probs [N,S,4] float),
    symbolic N and S."""
    rng = np.random.default_rng(1)
    inits = [nh.from_array(rng.standard_normal((8, 4)).astype(np.float32), "W"),
             nh.from_array(rng.standard_normal(4).astype(np.float32), "b"),
             nh.from_array(rng.standard_normal((4, 4)).astype(np.float32), "table"),
             nh.from_array(np.array([-1], np.int64), "last"),
             nh.from_array(np.array([1], np.int64), "seq_axis")]
    nodes = [h.make_node("MatMul", ["x", "W"], ["xw"]),
             h.make_node("Add", ["xw", "b"], ["hid"]),
             h.make_node("Unsqueeze", ["mask", "last"], ["mask3"]),
             h.make_node("Mul", ["hid", "mask3"], ["masked"]),
             h.make_node("ReduceSum", ["masked", "seq_axis"], ["summed"], keepdims=0),
             h.make_node("Gather", ["table", "ids"], ["emb"], axis=0),
             h.make_node("Add", ["summed", "emb"], ["pooled"]),
             h.make_node("ArgMax", ["pooled"], ["best"], axis=1, keepdims=0),
             h.make_node("Softmax", ["hid"], ["probs"], axis=-1)]
    g = h.make_graph(nodes, "multi_io",
                     [h.make_tensor_value_info("x", T.FLOAT, ["N", "S", 8]),
                      h.make_tensor_value_info("mask", T.FLOAT, ["N", "S"]),
                      h.make_tensor_value_info("ids", T.INT64, ["N"])],
                     [h.make_tensor_value_info("pooled", T.FLOAT, ["N", 4]),
                      h.make_tensor_value_info("best", T.INT64, ["N"]),
                      h.make_tensor_value_info("probs", T.FLOAT, ["N", "S", 4])],
                     inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8,
                     producer_name="test", model_version=3)
    h.set_model_props(m, {"purpose": "InferenceSession test"})
    onnx.checker.check_model(m)
    return m


def add_model(shape=(2, 3)) -> onnx.ModelProto:
    """z = relu(x + y) over float inputs of ``shape`` (strings: symbolic)."""
    g = h.make_graph([h.make_node("Add", ["x", "y"], ["t"]), h.make_node("Relu", ["t"], ["z"])],
                     "add", [h.make_tensor_value_info("x", T.FLOAT, list(shape)),
                             h.make_tensor_value_info("y", T.FLOAT, list(shape))],
                     [h.make_tensor_value_info("z", T.FLOAT, list(shape))])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


# name -> (model, dims settings: one run per setting, values of the symbolic dims)
def script_models() -> dict:
    return {
        "mnist_cnn": (zoo.mnist_cnn(), [{}]),
        "mlp_dynamic_batch": (zoo.mlp(batch="N"), [{"N": 3}, {"N": 8}]),
        "multi_io": (multi_io(), [{"N": 2, "S": 5}, {"N": 4, "S": 3}]),
        "encoder_dynamic": (zoo.with_symbolic_dims(zoo.encoder_layer(d=64, heads=4, seq=16,
                                                                     batch=2),
                                                   {0: "N", 1: "S"}),
                            [{"N": 1, "S": 7}, {"N": 2, "S": 16}]),
        "mobilenetv3_64": (zoo.mobilenetv3(size=64, num_classes=10), [{}]),
    }
