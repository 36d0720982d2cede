"""lower-to-linalg driver: the up-front sweep, signatures, no ONNX left."""
from __future__ import annotations

import mlir.ir as ir
import pytest

from onnx_mlir_py.context import make_context
from onnx_mlir_py.errors import UnsupportedOpsError
from onnx_mlir_py.passes.onnx_to_linalg import lower_to_linalg
from onnx_mlir_py.passes.onnx_to_linalg.builder import to_signless

UNSUPPORTED = """
func.func @f(%x: tensor<3x3xf32>, %b: tensor<10xui8>, %r: tensor<1x2x4x4xf32>, %q: tensor<3x2x1x1xf32>, %k: tensor<1x2x4x4xf32>) -> (tensor<1x2x1x1xf32>, tensor<3x3xf32>, tensor<3x1xf32>) {
  %0 = "onnx.global_lp_pool_v1"(%r) {p = 2.0 : f32} : (tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32> loc("d1")
  %1 = "onnx.relu"(%x) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %2 = "onnx_ml.svm_regressor"(%x) {coefficients = array<f32: 1.0, 1.0, 1.0>, kernel_type = "LINEAR", n_supports = 1 : si64, one_class = 0 : si64, post_transform = "NONE", rho = array<f32: 0.0>, support_vectors = array<f32: 1.0, 1.0, 1.0>} : (tensor<3x3xf32>) -> tensor<3x1xf32> loc("s1")
  %3 = "onnx.global_lp_pool_v1"(%r) {p = 2.0 : f32} : (tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32> loc("d2")
  return %0, %1, %2 : tensor<1x2x1x1xf32>, tensor<3x3xf32>, tensor<3x1xf32>
}
"""


def _parse(text):
    ctx = make_context()
    with ctx, ir.Location.unknown():
        return ir.Module.parse(text)


def test_sweep_lists_all_and_changes_nothing():
    m = _parse(UNSUPPORTED)
    before = str(m)
    with pytest.raises(UnsupportedOpsError) as e:
        lower_to_linalg(m)
    assert sorted(e.value.nodes) == [("GlobalLpPool (v1)", "d1"), ("GlobalLpPool (v1)", "d2"), ("ai.onnx.ml.SVMRegressor", "s1")]
    assert str(m) == before


def test_signature_signless_and_dtype():
    m = _parse("""
func.func @main_graph(%x: tensor<2xui8> {onnx.name = "x"}, %y: tensor<?x2xf32> {onnx.name = "y"})
    -> (tensor<2xui8> {onnx.name = "out"}, tensor<?x2xf32> {onnx.name = "o2"}) {
  %0 = "onnx.add"(%x, %x) : (tensor<2xui8>, tensor<2xui8>) -> tensor<2xui8>
  %1 = "onnx.identity"(%y) : (tensor<?x2xf32>) -> tensor<?x2xf32>
  return %0, %1 : tensor<2xui8>, tensor<?x2xf32>
}""")
    lower_to_linalg(m)
    text = str(m)
    assert m.operation.verify()
    assert '"onnx.' not in text and "ui8" not in text
    assert ('%arg0: tensor<2xi8> {onnx.dtype = "uint8", onnx.name = "x"}' in text)
    assert '(tensor<2xi8> {onnx.dtype = "uint8", onnx.name = "out"}' in text
    assert '{onnx.name = "o2"}' in text and "onnx.dtype = \"float\"" not in text


def test_to_signless():
    with make_context(), ir.Location.unknown():
        assert str(to_signless(ir.Type.parse("tensor<?x3xui16>"))) == "tensor<?x3xi16>"
        assert str(to_signless(ir.Type.parse("si32"))) == "i32"
        assert str(to_signless(ir.Type.parse("tensor<2xf32>"))) == "tensor<2xf32>"
