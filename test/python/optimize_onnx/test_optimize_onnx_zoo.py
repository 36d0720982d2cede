"""Small versions of the benchmark zoo (ResNet-18 at 32x32, an encoder layer
d=32, an MLP): the ONNX rewrites fire where the zoo has their patterns and
the -O2 library (rewrites without the -O3 kernel schedules) agrees with
onnxruntime."""
import numpy as np
import onnx
import pytest

import onnx_mlir_py
from onnx_mlir_py.importer import import_model
from onnx_mlir_py.passes.optimize_onnx import optimize_onnx
from onnx_mlir_py.passes.pipeline import to_onnx_ir

OPT = 2


def _zoo(name):
    from onnx_mlir_py.testing import models
    if name == "resnet18":
        return models.resnet18(size=32, num_classes=10), {"fold-bn-into-conv": 20}
    if name == "encoder_layer":
        return models.encoder_layer(d=32, heads=2, seq=8), {"fuse-matmul-bias": 6}
    return models.mlp(batch=4, sizes=(20, 16, 8)), {"pretranspose-gemm-weights": 2}


@pytest.mark.parametrize("name", ["resnet18", "encoder_layer", "mlp"])
def test_zoo_topologies_agree_with_onnxruntime_after_rewrites(name, tmp_path):
    """Whole small models: the rewrites fire where the zoo has the patterns
    and the -O2 library agrees with onnxruntime."""
    import onnxruntime as ort
    from onnx_mlir_py.testing.models import random_inputs
    model, expected = _zoo(name)
    module = import_model(model)
    to_onnx_ir(module)
    counts = optimize_onnx(module)
    for k, n in expected.items():
        assert counts[k] >= n, (k, counts)
    feeds = random_inputs(model)
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)
    so = onnx_mlir_py.compile(str(path), output=tmp_path / "m.so", opt_level=OPT)
    got = onnx_mlir_py.ExecutionSession(so).run(list(feeds.values()))
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-4)
