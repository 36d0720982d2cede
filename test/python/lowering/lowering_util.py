"""Build one-node / small ONNX models and compare lowered numerics with
onnx.reference.ReferenceEvaluator."""
from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from engine import run_model

NP2ONNX = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64,
           np.dtype(np.int32): TensorProto.INT32, np.dtype(np.bool_): TensorProto.BOOL,
           np.dtype(np.uint8): TensorProto.UINT8, np.dtype(np.float64): TensorProto.DOUBLE}


def make_model(nodes, feeds: dict, outputs: list, inits=(), opset=17, dyn_inputs=()):
    """outputs: names (types left to onnx shape inference) ; dyn_inputs: input
    names whose dim 0 is declared dynamic ('N')."""
    ins = []
    for name, a in feeds.items():
        shape = list(a.shape)
        if name in dyn_inputs:
            shape[0] = "N"
        ins.append(helper.make_tensor_value_info(name, NP2ONNX[a.dtype], shape))
    outs = [helper.make_tensor_value_info(o, TensorProto.UNDEFINED, None) for o in outputs]
    g = helper.make_graph(nodes, "g", ins, outs,
                          initializer=[onnx.numpy_helper.from_array(v, k) for k, v in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10
    m = onnx.shape_inference.infer_shapes(m)
    # give graph outputs the inferred types
    vi = {v.name: v for v in m.graph.value_info}
    for o in m.graph.output:
        if o.name in vi:
            o.CopyFrom(vi[o.name])
    if dyn_inputs:  # the dynamic batch dim must stay dynamic in outputs too
        for o in m.graph.output:
            dims = o.type.tensor_type.shape.dim
            if len(dims):
                dims[0].dim_param = "N"
    return m


def check(nodes, feeds: dict, outputs: list, inits=(), opset=17, rtol=1e-5, atol=1e-5,
          dyn_inputs=()):
    m = make_model(nodes, feeds, outputs, inits, opset, dyn_inputs)
    expected = ReferenceEvaluator(m).run(None, feeds)
    expected = [np.asarray(e) for e in expected]
    got = run_model(m, feeds, expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape and g.dtype == e.dtype, (g.shape, g.dtype, e.shape, e.dtype)
        if e.dtype.kind == "f":
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(g, e)
    return m
