"""Constant nodes folded in shape inference (passes/fold_constants._fold_constant):
a dense ``value`` is taken as it is, without onnx.reference (issue #29: the
importer's initializers are Constants, each evaluated as a model before);
the other forms are still evaluated. Compared with onnxruntime."""
import subprocess
import sys
import textwrap

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from onnx_mlir_py.testing.check import check_compiled


def _model(const_node, n=6):
    g = helper.make_graph(
        [const_node, helper.make_node("Add", ["x", "c"], ["y"])], "fold_constant",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, n])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def test_dense_value_constant_matches_onnxruntime():
    c = np.arange(6, dtype=np.float32) * 0.5 - 1.0
    m = _model(helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(c, "c")))
    x = np.random.default_rng(0).standard_normal((2, 6)).astype(np.float32)
    check_compiled(m, {"x": x}, opt_level=3, engine="onnxruntime")


def test_value_float_constant_matches_onnxruntime():
    m = _model(helper.make_node("Constant", [], ["c"], value_float=2.5))
    x = np.random.default_rng(1).standard_normal((2, 6)).astype(np.float32)
    check_compiled(m, {"x": x}, opt_level=0, engine="onnxruntime")


def test_large_initializers_do_not_load_onnx_reference(tmp_path):
    """A model whose only constants are initializers (a CNN) compiles
    without importing onnx.reference (0.1-0.25 s of a cold compile)."""
    w = np.random.default_rng(2).standard_normal((300, 300)).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"])], "mm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 300])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 300])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(w[:2, :2].copy(), "small")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    path = tmp_path / "mm.onnx"
    path.write_bytes(m.SerializeToString())
    code = textwrap.dedent(f"""
        import sys
        from onnx_mlir_py.cli import main
        rc = main([{str(path)!r}, "--EmitONNXIR", "-o", {str(tmp_path / 'out')!r}])
        print(rc, "onnx.reference" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, timeout=300)
    assert out.stdout.split()[-2:] == ["0", "False"], out.stdout + out.stderr
