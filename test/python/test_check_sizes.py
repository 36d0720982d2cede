"""passes/check_sizes.py at codegen leaves out the ops whose results the
vector dialect makes vectors or scalars (``_VECTOR_RESULTS``: most of an
-O3 module's ops; #29). What can go wrong: an op in that list that returns
a tensor or memref would no longer have its size checked. On the -O3
modules of a conv stack and a MatMul model (the ones codegen checks), every
op left out is checked to return no tensor or memref, and the ops visited
plus those left out are every op."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from helpers_models import conv_relu_stack

import mlir.ir as ir

import onnx_mlir_py
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.passes import check_sizes as cs


def _matmul_model():
    rng = np.random.default_rng(0)
    w = nh.from_array(rng.standard_normal((96, 80)).astype(np.float32), "w")
    g = h.make_graph([h.make_node("MatMul", ["x", "w"], ["m"]), h.make_node("Relu", ["m"], ["y"])],
                     "g", [h.make_tensor_value_info("x", TP.FLOAT, [24, 96])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [24, 80])], [w])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


@pytest.mark.parametrize("model", ["convs", "matmul"])
def test_the_ops_left_out_return_no_tensor_or_memref(tmp_path, monkeypatch, model):
    m = conv_relu_stack([16, 16, 32], 8, 12) if model == "convs" else _matmul_model()
    real = cs.check_sizes
    counts = []

    def spy(module):
        left_out = visited = total = 0
        with module.context:
            for f in module.body.operations:
                f = f.operation
                if f.name != "func.func" or not len(f.regions[0].blocks):
                    continue
                every = walk_ops(f)
                checked = cs._checked_ops(f)
                for op in every:
                    if op.name in cs._VECTOR_RESULTS:
                        left_out += 1
                        assert not any(isinstance(r.type, (ir.RankedTensorType, ir.MemRefType))
                                       for r in op.results), op
                assert [op.name for op in checked] == \
                    [op.name for op in every if op.name not in cs._VECTOR_RESULTS]
                visited += len(checked)
                total += len(every)
        counts.append((left_out, visited, total))
        return real(module)
    monkeypatch.setattr(cs, "check_sizes", spy)
    onnx_mlir_py.compile(m, output=str(tmp_path / "m.so"), opt_level=3)
    assert counts, "codegen did not check the sizes"
    left_out, visited, total = counts[-1]
    assert left_out > 0 and left_out + visited == total, counts   # -O3 kernels: vector ops
