"""Zoo models (onnx_mlir_py.testing.models) compiled at -O3, run through
ExecutionSession and compared with onnxruntime (rtol 1e-3, atol 1e-4).

These compile whole networks: expect minutes, not seconds. ResNet-18,
MobileNetV2 and the BERT layer (dynamic batch) also run through
examples/c/run_model.c; MobileNetV3-Small runs with a dynamic batch (1
and 3). ONNX_MLIR_PY_E2E_OPT=<n> forces one opt level for every model.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

import onnx_mlir_py
from onnx_mlir_py.codegen.cwrapper import RUNTIME_DIR
from onnx_mlir_py.codegen.tools import tool
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.testing import models as M
from onnx_mlir_py.testing.check import reference

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "c" / "run_model.c"
RTOL, ATOL = 1e-3, 1e-4
FORCED_OPT = os.environ.get("ONNX_MLIR_PY_E2E_OPT")
CNN_OPT = 3

# name -> (builder, batch sizes to run (None = the model's static batch), opt level)
CASES = {
    "mnist_cnn": (lambda: M.mnist_cnn(), [None], 3),
    "mlp": (lambda: M.mlp(batch=64), [None], 3),
    "resnet18": (lambda: M.resnet18(batch=1), [None], CNN_OPT),
    "mobilenetv2": (lambda: M.mobilenetv2(batch=1), [None], CNN_OPT),
    "mobilenetv3": (lambda: M.mobilenetv3(batch="N"), [1, 3], CNN_OPT),
    "encoder_layer": (lambda: M.encoder_layer(d=256, heads=4, seq=128, batch="N"), [1, 3], 3),
    "bert_layer": (lambda: M.bert_layer(seq=128, batch="N"), [1, 2], 3),
}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    cache = {}
    d = tmp_path_factory.mktemp("zoo")

    def get(name):
        if name not in cache:
            model = CASES[name][0]()
            opt = int(FORCED_OPT) if FORCED_OPT else CASES[name][2]
            so = onnx_mlir_py.compile(model, output=str(d / f"{name}.so"), opt_level=opt)
            cache[name] = (model, so)
        return cache[name]
    return get


@pytest.mark.parametrize("name", list(CASES))
def test_model_matches_onnxruntime(name, compiled):
    model, so = compiled(name)
    sess = ExecutionSession(so)
    for batch in CASES[name][1]:
        feeds = M.random_inputs(model, batch=batch or 1, seed=batch or 0)
        got = sess.run([feeds[i.name] for i in model.graph.input])
        exp = reference(model, feeds, "onnxruntime")
        assert len(got) == len(exp)
        for g, e in zip(got, exp):
            assert g.shape == e.shape and g.dtype == e.dtype
            np.testing.assert_allclose(g, e, rtol=RTOL, atol=ATOL,
                                       err_msg=f"{name} batch={batch}")


# The C example (dlopen, no Python) sets dynamic dims to 2.
@pytest.mark.parametrize("name,batch", [("resnet18", 1), ("mobilenetv2", 1), ("bert_layer", 2)])
def test_through_c_example(compiled, tmp_path, name, batch):
    model, so = compiled(name)
    exe = tmp_path / "run_model"
    subprocess.run([tool("gcc"), "-O2", "-Wall", "-Werror", "-o", str(exe), str(EXAMPLE),
                    f"-I{RUNTIME_DIR}", "-ldl"], check=True)
    feeds = M.random_inputs(model, batch=batch, seed=5)
    x = feeds["input"]
    f = tmp_path / "input.bin"
    x.tofile(f)
    p = subprocess.run([str(exe), so, str(f)], capture_output=True, text=True, check=True)
    vals, shape = [], None
    for line in p.stdout.splitlines():
        if line.startswith("output ") and "shape=[" in line:
            shape = [int(v) for v in line.split("shape=[")[1].split("]")[0].split(",") if v]
        elif shape is not None:
            vals.append(float(line))
    (exp,) = reference(model, feeds, "onnxruntime")
    assert shape == list(exp.shape)
    c_out = np.array(vals, np.float32).reshape(shape)
    np.testing.assert_allclose(c_out, exp, rtol=RTOL, atol=ATOL)
