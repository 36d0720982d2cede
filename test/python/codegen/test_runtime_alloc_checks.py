"""Allocations sized by the inputs' values fail the call instead of the
process: a size that overflows (Expand to [2**31, 2**31]: 2**64 bytes wrap
to a tiny buffer) is a run-time check of the lowering (LoweringContext.empty),
a malloc that fails (ConstantOfShape [1e5, 1e5, 1e5]: 4e15 bytes) returns
NULL through the C runtime's _mlir_memref_to_llvm_alloc (OM_ERROR_ALLOC).
Both were SIGSEGV. The session still works afterwards."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession, ModelRunError, RuntimeInputError

from onnx_models import graph_model as _model


@pytest.mark.parametrize("opt_level", [0, 3])
def test_expand_size_overflow(tmp_path, opt_level):
    m = _model(h.make_node("Expand", ["x", "s"], ["y"], name="exp"),
               [("x", T.FLOAT, [1, 1]), ("s", T.INT64, [2])])
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=opt_level))
    x = np.full((1, 1), 2.5, np.float32)
    np.testing.assert_array_equal(sess.run([x, np.array([2, 3])])[0], np.full((2, 3), 2.5))
    with pytest.raises(RuntimeInputError, match=r"node 'exp' \(Expand\): a result of shape "
                       r"\[2147483648, 2147483648\] cannot be allocated"):
        sess.run([x, np.array([2 ** 31, 2 ** 31])])
    np.testing.assert_array_equal(sess.run([x, np.array([3, 1])])[0], np.full((3, 1), 2.5))


@pytest.mark.parametrize("opt_level", [0, 3])
def test_constant_of_shape_out_of_memory(tmp_path, opt_level):
    m = _model(h.make_node("ConstantOfShape", ["s"], ["y"], name="cos",
                           value=h.make_tensor("v", T.FLOAT, [1], [1.5])),
               [("s", T.INT64, [3])])
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=opt_level))
    assert sess.run([np.array([2, 3, 1])])[0].shape == (2, 3, 1)
    with pytest.raises(ModelRunError, match=r"node 'cos' \(ConstantOfShape\): out of memory: "
                       r"the model could not allocate 4000000000000\d+ bytes"):
        sess.run([np.array([100000, 100000, 100000])])
    np.testing.assert_array_equal(sess.run([np.array([1, 2, 2])])[0], np.full((1, 2, 2), 1.5))


def test_out_of_memory_names_the_node_from_c(tmp_path):
    """The C API (examples/c/run_model.c): the same errors, naming the node,
    exit status 1. Expand to [2**20, 2**20] (4 TiB) passes the size check and
    fails in malloc; to [2**31, 2**31] it overflows."""
    import subprocess
    from test_c_example import _build_example
    exe = _build_example(tmp_path)
    nodes = [h.make_node("ConstantOfShape", ["s"], ["c"], name="cos",
                         value=h.make_tensor("v", T.FLOAT, [1], [1.5])),
             h.make_node("Expand", ["x", "t"], ["y"], name="exp")]
    m = _model(nodes, [("s", T.INT64, [3]), ("x", T.FLOAT, [1, 1]), ("t", T.INT64, [2])],
               outputs=("c", "y"))
    so = onnx_mlir_py.compile(m, tmp_path / "m.so")
    np.ones(1, np.float32).tofile(tmp_path / "x.bin")

    def run(s, t):
        for name, v in (("s", s), ("t", t)):
            np.array(v, np.int64).tofile(tmp_path / f"{name}.bin")
        return subprocess.run([exe, so, f"{tmp_path / 's.bin'}:3", f"{tmp_path / 'x.bin'}:1x1",
                               f"{tmp_path / 't.bin'}:2"], capture_output=True, text=True)
    assert run([2, 1, 1], [3, 1]).returncode == 0
    for s, t, want in [([10 ** 5] * 3, [1, 1], "node 'cos' (ConstantOfShape): out of memory: "
                        "the model could not allocate 4000000000000"),
                       ([1, 1, 1], [2 ** 20, 2 ** 20], "node 'exp' (Expand): out of memory: "
                        "the model could not allocate 43980465111"),
                       ([1, 1, 1], [2 ** 31, 2 ** 31], "node 'exp' (Expand): a result of shape "
                        "[2147483648, 2147483648] cannot be allocated")]:
        p = run(s, t)
        assert p.returncode == 1 and want in p.stderr, (p.returncode, p.stderr)
