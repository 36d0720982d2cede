"""Run-time checks in the compiled code (LoweringContext.require): inputs the
model cannot take fail with an error naming the node, from Python and from a
C caller, instead of reading out of bounds (a silently wrong answer before)."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from onnx_mlir_py.codegen.cwrapper import RUNTIME_DIR
from onnx_mlir_py.codegen.tools import tool
from onnx_mlir_py.runtime import ExecutionSession, RuntimeInputError

from onnx_models import graph_model
from test_c_example import EXAMPLE, _parse_outputs


def _add_model(y_dim="m"):
    """z = x + y, x: [n, 4], y: [m, 4] (the issue's reproducer had [n, 4]
    twice: that is now caught by the entry point, test_runtime_dim_checks.py;
    with different names only the Add ties the dims)."""
    return graph_model(h.make_node("Add", ["x", "y"], ["z"], name="add0"),
                       [("x", T.FLOAT, ["n", 4]), ("y", T.FLOAT, [y_dim, 4])], ["z"])


@pytest.mark.parametrize("opt_level", [0, 3])
def test_broadcast_mismatch_is_an_error(tmp_path, opt_level):
    sess = ExecutionSession(onnx_mlir_py.compile(_add_model(), tmp_path / "add.so",
                                                 opt_level=opt_level))
    rng = np.random.default_rng(0)
    for a, b in [((3, 4), (3, 4)), ((1, 4), (5, 4)), ((5, 4), (1, 4)), ((7, 4), (7, 4))]:
        x, y = rng.random(a, np.float32), rng.random(b, np.float32)
        np.testing.assert_allclose(sess.run([x, y])[0], x + y, rtol=1e-6)
    for a, b in [((3, 4), (5, 4)), ((5, 4), (3, 4)), ((2, 4), (0, 4))]:
        with pytest.raises(RuntimeInputError, match=r"node 'add0' \(Add\).*broadcast"):
            sess.run([np.ones(a, np.float32), np.ones(b, np.float32)])
    # the session stays usable after a failed check
    x = rng.random((2, 4), np.float32)
    np.testing.assert_allclose(sess.run([x, x])[0], x + x, rtol=1e-6)


@pytest.mark.quick
def test_broadcast_mismatch_from_c(tmp_path):
    exe = tmp_path / "run_model"
    subprocess.run([tool("gcc"), "-O2", "-Wall", "-Werror", "-o", str(exe), str(EXAMPLE),
                    f"-I{RUNTIME_DIR}", "-ldl"], check=True)
    so = onnx_mlir_py.compile(_add_model(), tmp_path / "add.so", opt_level=3)
    ok = subprocess.run([str(exe), so, ":3x4", ":3x4"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    (z,) = _parse_outputs(ok.stdout)
    a = (0.01 * np.arange(12, dtype=np.float32)).reshape(3, 4)
    np.testing.assert_allclose(z, a + a, rtol=1e-6)
    bad = subprocess.run([str(exe), so, ":3x4", ":5x4"], capture_output=True, text=True)
    assert bad.returncode == 1, (bad.returncode, bad.stdout, bad.stderr)
    assert "node 'add0' (Add)" in bad.stderr and "not broadcast-compatible" in bad.stderr \
        and "its dim 0 is 5, the other inputs need 3 (or 1)" in bad.stderr, bad.stderr


@pytest.mark.quick
def test_same_dim_param_is_checked_at_the_entry(tmp_path):
    """The issue's reproducer as reported: both inputs [n, 4]."""
    sess = ExecutionSession(onnx_mlir_py.compile(_add_model("n"), tmp_path / "add.so"))
    x = np.ones((3, 4), np.float32)
    np.testing.assert_allclose(sess.run([x, x])[0], x + x)
    with pytest.raises(RuntimeInputError, match=r"input 1 \('y'\) dim 0 \('n'\) is 5 but "
                       r"input 0 \('x'\) has 3"):
        sess.run([x, np.ones((5, 4), np.float32)])
