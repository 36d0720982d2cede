"""Small ONNX models shared by the tests (importer, CLI, kernel functions and cache, convs)."""
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


def conv_model(x_shape, w_shape, elem, **attrs):
    """One Conv of inputs ``x`` and ``w`` (both graph inputs of type ``elem``)
    with ``attrs``, opset 17."""
    g = h.make_graph([h.make_node("Conv", ["x", "w"], ["y"], **attrs)], "g",
                     [h.make_tensor_value_info("x", elem, x_shape),
                      h.make_tensor_value_info("w", elem, w_shape)],
                     [h.make_tensor_value_info("y", elem, None)])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def conv_relu_stack(widths, cin, hw, seed=0, batch=1):
    """Conv (3x3, pad 1, bias) + ReLU layers of ``widths`` output channels over a
    ``[batch, cin, hw, hw]`` input (``batch`` may be a dim name). The kernels
    depend on the shapes only; ``seed`` picks the weights."""
    rng = np.random.default_rng(seed)
    nodes, inits, cur, cin0 = [], [], "x", cin
    for i, cout in enumerate(widths):
        inits.append(nh.from_array((rng.standard_normal((cout, cin, 3, 3)) * 0.2)
                                   .astype(np.float32), f"w{i}"))
        inits.append(nh.from_array(rng.standard_normal(cout).astype(np.float32), f"b{i}"))
        nodes += [h.make_node("Conv", [cur, f"w{i}", f"b{i}"], [f"c{i}"], pads=[1, 1, 1, 1]),
                  h.make_node("Relu", [f"c{i}"], [f"r{i}"])]
        cur, cin = f"r{i}", cout
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [batch, cin0, hw, hw])],
                     [h.make_tensor_value_info(cur, T.FLOAT, [batch, cin, hw, hw])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def save(model, path):
    onnx.save(model, str(path))
    return str(path)
