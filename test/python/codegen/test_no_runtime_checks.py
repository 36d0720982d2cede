"""``compile(runtime_checks=False)`` / ``--no-runtime-checks`` (UNSAFE, for
measuring what the checks cost: benchmarks/checks.py): the compiled code has
no run-time checks left (no om_check_failed call, no message table) and gives
the same answers on valid inputs; the default keeps them."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from onnx_mlir_py.cli import main
from onnx_mlir_py.runtime import ExecutionSession, RuntimeInputError


def _model():
    """A Gather (index check), an Add of two dynamic dims (broadcast check)
    and an Expand to a shape from data (allocation check)."""
    g = h.make_graph([h.make_node("Gather", ["x", "i"], ["g"], name="gat", axis=0),
                      h.make_node("Add", ["g", "z"], ["a"], name="add"),
                      h.make_node("Expand", ["a", "s"], ["y"], name="exp")], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, ["n", 3]),
                      h.make_tensor_value_info("i", T.INT64, ["k"]),
                      h.make_tensor_value_info("z", T.FLOAT, ["m", 3]),
                      h.make_tensor_value_info("s", T.INT64, [2])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _feeds(idx):
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    return [x, np.array(idx, np.int64), np.ones((2, 3), np.float32), np.array([2, 3])]


@pytest.mark.parametrize("opt_level", [0, 3])
def test_checks_left_out(tmp_path, opt_level):
    m = _model()
    on = open(onnx_mlir_py.compile(m, tmp_path / "on.mlir", emit="EmitLLVMIR",
                                   opt_level=opt_level)).read()
    off = open(onnx_mlir_py.compile(m, tmp_path / "off.mlir", emit="EmitLLVMIR",
                                    opt_level=opt_level, runtime_checks=False)).read()
    assert "om_check_failed" in on
    assert "om_check_failed" not in off
    so_on = onnx_mlir_py.compile(m, tmp_path / "on.so", opt_level=opt_level)
    so_off = onnx_mlir_py.compile(m, tmp_path / "off.so", opt_level=opt_level,
                                  runtime_checks=False)
    s_on, s_off = ExecutionSession(so_on), ExecutionSession(so_off)
    want = (np.arange(12, dtype=np.float32).reshape(4, 3)[[3, 0]] + 1)
    for s in (s_on, s_off):
        np.testing.assert_array_equal(s.run(_feeds([3, -4]))[0], want)
    with pytest.raises(RuntimeInputError, match=r"node 'gat' \(Gather\): index 4"):
        s_on.run(_feeds([4, 0]))
    # (s_off is not run on the bad input: it would read past x)


def test_cli_option(tmp_path):
    import onnx
    path = tmp_path / "m.onnx"
    onnx.save(_model(), path)
    assert main([str(path), "--EmitMLIR", "-o", str(tmp_path / "on")]) == 0
    assert main([str(path), "--EmitMLIR", "--no-runtime-checks", "-o",
                 str(tmp_path / "off")]) == 0
    on = (tmp_path / "on.onnx.mlir").read_text()
    off = (tmp_path / "off.onnx.mlir").read_text()
    assert "call @om_check_failed" in on and "call @om_check_failed" not in off
