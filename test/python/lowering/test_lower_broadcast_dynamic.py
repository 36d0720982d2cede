"""Dynamic dims that turn out to be 1 at run time broadcast like numpy
(they used to be read out of bounds: a silently wrong answer)."""
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession


def _model(node, inputs):
    g = h.make_graph([node], "g", [h.make_tensor_value_info(n, T.FLOAT, s) for n, s in inputs],
                     [h.make_tensor_value_info("y", T.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


CASES = {
    # Add: either side's dynamic dim may be the 1 that broadcasts
    "add": (h.make_node("Add", ["a", "b"], ["y"]), [("a", ["n", 3]), ("b", ["m", 3])],
            [((4, 3), (1, 3)), ((1, 3), (4, 3)), ((4, 3), (4, 3)), ((1, 3), (1, 3))]),
    # found by the fuzzer: a run-time 0 against a 1 broadcasts to 0 (numpy); the
    # result dim was the max of the two, and the check then refused the 0
    "max_empty": (h.make_node("Max", ["a", "b"], ["y"]), [("a", ["n", 3]), ("b", ["m", 3])],
                  [((0, 3), (1, 3)), ((1, 3), (0, 3)), ((2, 3), (1, 3))]),
    "matmul_empty_batch": (h.make_node("MatMul", ["a", "b"], ["y"]),
                           [("a", ["p", 2, 3]), ("b", ["q", 3, 2])],
                           [((0, 2, 3), (1, 3, 2)), ((1, 2, 3), (0, 3, 2))]),
    # Gemm's C with unknown dims, given as a (1, N) row or a full (M, N)
    "gemm": (h.make_node("Gemm", ["a", "b", "c"], ["y"], alpha=0.5),
             [("a", ["m", "k"]), ("b", ["k", "n"]), ("c", ["p", "q"])],
             [((3, 5), (5, 4), (1, 4)), ((3, 5), (5, 4), (3, 4)), ((3, 5), (5, 4), (3, 1))]),
}


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("case", sorted(CASES))
def test_dynamic_dims_broadcast_at_run_time(tmp_path, case, opt_level):
    node, inputs, shape_sets = CASES[case]
    m = _model(node, inputs)
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "bc.so", opt_level=opt_level))
    rng = np.random.default_rng(0)
    for shapes in shape_sets:
        arrays = [rng.random(s, np.float32) - 0.5 for s in shapes]
        want = ReferenceEvaluator(m).run(None, dict(zip([n for n, _ in inputs], arrays)))[0]
        got = sess.run(arrays)[0]
        assert got.shape == want.shape, shapes
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=str(shapes))


def test_rank4_broadcast_in_several_dims_at_once(tmp_path):
    """Every dim dynamic, several of them 1 at run time in one input: one
    run-time branch per input (a chain of one branch per dim made
    bufferization exponentially slow at -O3: minutes for rank 4)."""
    import time
    node = h.make_node("Mul", ["a", "b"], ["y"])
    m = _model(node, [("a", ["a0", "a1", "a2", "a3"]), ("b", ["b0", "b1", "b2", "b3"])])
    t = time.perf_counter()
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "bc.so", opt_level=3))
    assert time.perf_counter() - t < 120
    rng = np.random.default_rng(0)
    for sa, sb in [((2, 1, 3, 1), (1, 4, 1, 5)), ((1, 1, 1, 1), (2, 3, 4, 5)),
                   ((2, 3, 4, 5), (2, 3, 4, 5)), ((2, 3, 1, 5), (1, 3, 4, 1))]:
        a, b = rng.random(sa, np.float32), rng.random(sb, np.float32)
        np.testing.assert_allclose(sess.run([a, b])[0], a * b, rtol=1e-6, err_msg=str((sa, sb)))
