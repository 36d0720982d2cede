"""Threaded packed contractions whose outer block loop alone would split
unevenly (kernel_plan.forall_takes_both: fewer than 16 iterations, not a
multiple of 4) run a forall over both block loops. Each form of the kernel
schedule (matmul.kernel_schedule) against onnxruntime at 1, 2 and 3 threads
(each of the five is one forall of 35 or 48 iterations, 5 x 7 and 3 x 16;
before, of 5 or 3):

- plain: a 1x1 conv 576 -> 160 at 7x7 (5 filter blocks), a MatMul
  128x256 @ 256x96 (3 column blocks);
- fused epilogue, cache groups: 160 -> 960 + Relu (30 filter blocks in 5
  groups);
- fused epilogue, no groups: 960 -> 160 + Clip;
- cache groups, no epilogue: 160 -> 960 + bias only."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from onnx_mlir_py.runtime import ExecutionSession
from test_o3_numerics import compile_with_ort, pool_task_count

R = np.random.default_rng(27)


def _w(*shape, scale=1.0):
    return (R.standard_normal(shape) * scale / np.sqrt(np.prod(shape[1:]))).astype(np.float32)


def _model():
    inits, nodes = [], []

    def conv(x, cin, cout, out, act=None):
        inits.extend([nh.from_array(_w(cout, cin, 1, 1), f"{out}_w"),
                      nh.from_array(R.standard_normal(cout).astype(np.float32) * 0.1, f"{out}_b")])
        pre = f"{out}_pre" if act else out
        nodes.append(h.make_node("Conv", [x, f"{out}_w", f"{out}_b"], [pre], name=out))
        if act == "clip":
            inits.extend([nh.from_array(np.array(0, np.float32), f"{out}_lo"),
                          nh.from_array(np.array(6, np.float32), f"{out}_hi")])
            nodes.append(h.make_node("Clip", [pre, f"{out}_lo", f"{out}_hi"], [out]))
        elif act == "relu":
            nodes.append(h.make_node("Relu", [pre], [out]))
    conv("x", 576, 160, "c1")                 # plain, P = 5
    conv("c1", 160, 960, "c2", "relu")        # epilogue + groups
    conv("c2", 960, 160, "c3", "clip")        # epilogue, no groups
    conv("c3", 160, 960, "c4")                # groups, no epilogue
    inits.append(nh.from_array(_w(256, 96), "mw"))
    nodes.append(h.make_node("MatMul", ["y", "mw"], ["m"]))
    g = h.make_graph(nodes, "balanced",
                     [h.make_tensor_value_info("x", T.FLOAT, [1, 576, 7, 7]),
                      h.make_tensor_value_info("y", T.FLOAT, [128, 256])],
                     [h.make_tensor_value_info("c4", T.FLOAT, [1, 960, 7, 7]),
                      h.make_tensor_value_info("m", T.FLOAT, [128, 96])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_balanced_forall_matches_onnxruntime(tmp_path, threads):
    so, ort_sess = compile_with_ort(tmp_path, _model())
    x = R.standard_normal((1, 576, 7, 7)).astype(np.float32)
    y = R.standard_normal((128, 256)).astype(np.float32)
    want = ort_sess.run(None, {"x": x, "y": y})
    sess = ExecutionSession(so, num_threads=threads)
    tasks = pool_task_count(so)
    before = tasks()
    for _ in range(3):
        got = sess.run([x, y])
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)
    assert (tasks() > before) == (threads > 1)
