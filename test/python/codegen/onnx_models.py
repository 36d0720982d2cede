"""The one builder of the small ONNX models of the run-time check tests."""
from __future__ import annotations

import onnx
from onnx import TensorProto as T
from onnx import helper as h


def graph_model(nodes, inputs, outputs=("y",), *, out_type=T.FLOAT, inits=(), opset=17):
    """A model (IR version 8, default domain at ``opset``) of ``nodes`` (a
    node or a list). ``inputs``: (name, element type, shape), a None dim is
    dynamic without a name; ``outputs``: names, of element type ``out_type``
    (T.UNDEFINED: left to inference) and unknown shape."""
    nodes = [nodes] if isinstance(nodes, onnx.NodeProto) else list(nodes)
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                     [h.make_tensor_value_info(o, out_type, None) for o in outputs],
                     initializer=list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m
