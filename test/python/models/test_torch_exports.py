"""Models exported by torch's own exporters, compiled once, run at three shapes.

Each small plain-torch model of ``onnx_mlir_py.testing.torch_models`` is
exported with the legacy exporter (``dynamic_axes``) and the dynamo exporter
(``dynamic_shapes``), compiled ONCE at -O3 (two also at -O0), then run at
three different run-time shapes and compared with onnxruntime on the same
.onnx file: output shapes, dtypes and values (rtol/atol 1e-4).

``XFAIL`` lists the cases that fail today with the exception type they raise
and its exact message; they are strict xfails, so a fixed case shows up as an
XPASS failure (remove its row), and a case that starts failing differently
(another exception type, e.g. wrong numbers instead of a refusal) fails.
"""
from __future__ import annotations

import os

import onnx
import pytest

from onnx_mlir_py.errors import CompileError, ShapeInferenceError, VerificationError  # noqa: F401
from onnx_mlir_py.runtime.errors import ModelRunError, RuntimeInputError  # noqa: F401
from onnx_mlir_py.testing import torch_models as T
from onnx_mlir_py.testing.check import assert_match, reference
from onnx_mlir_py.testing.isolated import (CompilerCrash, ModelCrash,  # noqa: F401
                                           compile_isolated, run_isolated)

RTOL = ATOL = 1e-4

# (case, exporter, opt level) -> (exception type, the exact one-line error of today).
# (The dynamo exporter declares the RNN outputs [batch, 8, ...], the export-time
# sequence length; the run-time shape wins over such declarations, as in
# onnxruntime: test/python/test_declared_output_types.py.)
XFAIL: dict[tuple[str, str, int], tuple[type, str]] = {}

CASES = [(name, exporter, 3) for name in T.CASES for exporter in T.EXPORTERS]
CASES += [("bert_encoder", "legacy", 0), ("mobilenetv3", "dynamo", 0)]


def _param(case):
    marks = []
    if case in XFAIL:
        exc, msg = XFAIL[case]
        marks.append(pytest.mark.xfail(strict=True, raises=exc, reason=msg))
    return pytest.param(*case, id=f"{case[0]}-{case[1]}-O{case[2]}", marks=marks)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    d = tmp_path_factory.mktemp("torch_exports")
    cache: dict = {}

    def get(name, exporter):
        key = (name, exporter)
        if key not in cache:
            cache[key] = T.export(name, exporter, d / f"{name}.{exporter}.onnx")
        return cache[key]
    return get


@pytest.fixture(scope="module")
def compiled(exported):
    cache: dict = {}

    def get(name, exporter, opt):
        key = (name, exporter, opt)
        if key not in cache:
            path = os.fspath(exported(name, exporter))
            try:
                cache[key] = compile_isolated(path, path[:-len(".onnx")] + f".O{opt}.so", opt)
            except Exception as e:          # the same error for each later request
                cache[key] = e
        if isinstance(cache[key], Exception):
            raise cache[key]
        return exported(name, exporter), cache[key]
    return get


@pytest.mark.parametrize("name,exporter,opt", [_param(c) for c in CASES])
def test_torch_export_matches_onnxruntime(name, exporter, opt, compiled):
    path, so = compiled(name, exporter, opt)
    model = onnx.load(path)
    case = T.CASES[name]
    feeds = [T.example_inputs(name, dims, seed=i + 1) for i, dims in enumerate(case.run_dims)]
    # one child process runs the three shapes (a model that corrupts memory
    # fails this test only)
    outputs = run_isolated(so, [[f[v.name] for v in model.graph.input] for f in feeds])
    shapes = set()
    for dims, f, got in zip(case.run_dims, feeds, outputs):
        expected = reference(model, f, engine="onnxruntime")
        try:
            assert_match(got, expected, RTOL, ATOL)
        except AssertionError as e:
            raise AssertionError(f"at {dims}: {str(e).strip()}") from None
        shapes.add(tuple(tuple(e.shape) for e in expected))
    assert len(shapes) == len(case.run_dims), f"run shapes not distinct: {shapes}"


def test_cases_cover_the_issue():
    """Every architecture of issue 11 is here, each dynamic and at 3 shapes."""
    assert set(T.CASES) == {"resnet_cnn", "resnet_cnn_hw", "mobilenetv3", "bert_encoder",
                            "gpt_decoder", "vit", "lstm", "bigru", "text_cnn"}
    for name, case in T.CASES.items():
        assert len(case.run_dims) == 3 and case.example not in case.run_dims, name
        assert all(0 in axes for axes in case.dynamic.values()), name
