"""The -O3 canonicalizations' options (#29; passes/optimize/__init__.py's
CANONICALIZE / CANONICALIZE_ONCE, fuse_elementwise's, the kernel inliner's
INLINE_CANONICALIZE): without region simplification, and the last ones for
one round of the greedy driver, they make the same IR as upstream's default
canonicalize (region simplification, up to 10 rounds) on a model with a
direct stem conv, a max pool, an im2col conv, a Gemm, a softmax and an
elementwise GELU chain. If an MLIR update makes a second round find more,
this fails: the round limit must then go (the IR would stay correct, only
less simplified). Also: no schedule tag is left in the IR."""
from __future__ import annotations

import numpy as np
import onnx.helper as h
import onnx.numpy_helper as nh
from onnx import TensorProto as T

import mlir.ir as ir

from onnx_mlir_py.importer import import_model
from onnx_mlir_py.passes.onnx_to_linalg import lower_to_linalg
from onnx_mlir_py.passes.pipeline import to_onnx_ir
from onnx_mlir_py.target import target_for


def _model():
    rng = np.random.default_rng(0)

    def w(name, *shape):
        return nh.from_array((rng.standard_normal(shape) * 0.2).astype(np.float32), name)
    nodes = [h.make_node("Conv", ["x", "w0", "b0"], ["c0"], pads=[1, 1, 1, 1], strides=[2, 2]),
             h.make_node("Relu", ["c0"], ["r0"]),
             h.make_node("MaxPool", ["r0"], ["p0"], kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1]),
             h.make_node("Conv", ["p0", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["c1"], ["r1"]),
             h.make_node("GlobalAveragePool", ["r1"], ["g"]),
             h.make_node("Flatten", ["g"], ["f"]),
             h.make_node("Gemm", ["f", "wf", "bf"], ["y0"], transB=1),
             # GELU (erf form) then softmax
             h.make_node("Div", ["y0", "sq2"], ["d"]),
             h.make_node("Erf", ["d"], ["e"]),
             h.make_node("Add", ["e", "one"], ["e1"]),
             h.make_node("Mul", ["y0", "e1"], ["m"]),
             h.make_node("Mul", ["m", "half"], ["gelu"]),
             h.make_node("Softmax", ["gelu"], ["y"], axis=-1)]
    inits = [w("w0", 16, 3, 3, 3), w("b0", 16), w("w1", 32, 16, 3, 3), w("b1", 32),
             w("wf", 40, 32), w("bf", 40),
             nh.from_array(np.array(np.sqrt(2.0), np.float32), "sq2"),
             nh.from_array(np.array(1.0, np.float32), "one"),
             nh.from_array(np.array(0.5, np.float32), "half")]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 32, 32])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 40])], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def _optimized() -> str:
    from onnx_mlir_py.passes.optimize import optimize
    module = import_model(_model())
    to_onnx_ir(module)
    lower_to_linalg(module)
    with module.context, ir.Location.unknown():
        optimize(module, target_for("x86-64-v4"), threads=True)
    return str(module)


def test_same_ir_as_the_default_canonicalize(monkeypatch):
    import onnx_mlir_py.passes.optimize as o3
    from onnx_mlir_py.passes.optimize import kernel_inline
    from onnx_mlir_py.passes.optimize.schedule import TAG
    fast = _optimized()
    assert TAG not in fast
    monkeypatch.setattr(o3, "CANONICALIZE", "canonicalize")
    monkeypatch.setattr(o3, "CANONICALIZE_ONCE", "canonicalize")
    monkeypatch.setattr(kernel_inline, "INLINE_CANONICALIZE", "inline")
    assert _optimized() == fast
