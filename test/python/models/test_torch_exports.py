"""Models exported by torch's own exporters, compiled once, run at three shapes.

Each small plain-torch model of ``onnx_mlir_py.testing.torch_models`` is
exported with the legacy exporter (``dynamic_axes``) and the dynamo exporter
(``dynamic_shapes``) ONCE, by data/export_torch_models.py, into the committed
files data/{case}.{legacy,dynamo}.onnx (so these tests need no torch); each
is compiled ONCE at -O3 (two also at -O0), then run at three different
run-time shapes and compared with onnxruntime on the same .onnx file: output
shapes, dtypes and values (rtol/atol 1e-4).

:func:`test_script_reproduces_committed_files` (marker ``export``: CI's
export step, with the ``[export]`` extra; deselected when torch is absent)
re-runs the script and checks that it still writes those files' graphs.

``XFAIL`` lists the cases that fail today with the exception type they raise
and its exact message; they are strict xfails, so a fixed case shows up as an
XPASS failure (remove its row), and a case that starts failing differently
(another exception type, e.g. wrong numbers instead of a refusal) fails.
"""
from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter

import numpy as np
import onnx
import pytest

from onnx_mlir_py.errors import CompileError, ShapeInferenceError, VerificationError  # noqa: F401
from onnx_mlir_py.runtime.errors import ModelRunError, RuntimeInputError  # noqa: F401
from onnx_mlir_py.testing.check import assert_match, reference
from onnx_mlir_py.testing.isolated import (CompilerCrash, ModelCrash,  # noqa: F401
                                           compile_isolated, run_isolated)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "data"))
import export_torch_models as X  # noqa: E402

RTOL = ATOL = 1e-4

# (case, exporter, opt level) -> (exception type, the exact one-line error of today).
# (The dynamo exporter declares the RNN outputs [batch, 8, ...], the export-time
# sequence length; the run-time shape wins over such declarations, as in
# onnxruntime: test/python/test_declared_output_types.py.)
XFAIL: dict[tuple[str, str, int], tuple[type, str]] = {}

EXPORTERS = ("legacy", "dynamo")
MANIFEST = X.manifest()
CASES = [(name, exporter, 3) for name in MANIFEST for exporter in EXPORTERS]
CASES += [("bert_encoder", "legacy", 0), ("mobilenetv3", "dynamo", 0)]


def _param(case):
    marks = []
    if case in XFAIL:
        exc, msg = XFAIL[case]
        marks.append(pytest.mark.xfail(strict=True, raises=exc, reason=msg))
    return pytest.param(*case, id=f"{case[0]}-{case[1]}-O{case[2]}", marks=marks)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    d = tmp_path_factory.mktemp("torch_exports")
    cache: dict = {}

    def get(name, exporter, opt):
        key = (name, exporter, opt)
        path = X.path(f"{name}.{exporter}")
        if key not in cache:
            try:
                cache[key] = compile_isolated(path, os.fspath(d / f"{name}.{exporter}.O{opt}.so"),
                                              opt)
            except Exception as e:          # the same error for each later request
                cache[key] = e
        if isinstance(cache[key], Exception):
            raise cache[key]
        return path, cache[key]
    return get


@pytest.mark.parametrize("name,exporter,opt", [_param(c) for c in CASES])
def test_torch_export_matches_onnxruntime(name, exporter, opt, compiled):
    path, so = compiled(name, exporter, opt)
    model = onnx.load(path)
    case = MANIFEST[name]
    feeds = [X.case_feeds(case, dims, seed=i + 1) for i, dims in enumerate(case["run_dims"])]
    # one child process runs the three shapes (a model that corrupts memory
    # fails this test only)
    outputs = run_isolated(so, [[f[v.name] for v in model.graph.input] for f in feeds])
    shapes = set()
    for dims, f, got in zip(case["run_dims"], feeds, outputs):
        expected = reference(model, f, engine="onnxruntime")
        try:
            assert_match(got, expected, RTOL, ATOL)
        except AssertionError as e:
            raise AssertionError(f"at {dims}: {str(e).strip()}") from None
        shapes.add(tuple(tuple(e.shape) for e in expected))
    assert len(shapes) == len(case["run_dims"]), f"run shapes not distinct: {shapes}"


def test_cases_cover_the_issue():
    """Every architecture of issue 11 is here, each dynamic (in its file, not
    only in the manifest) and at 3 shapes."""
    assert set(MANIFEST) == {"resnet_cnn", "resnet_cnn_hw", "mobilenetv3", "bert_encoder",
                             "gpt_decoder", "vit", "lstm", "bigru", "text_cnn"}
    for name, case in MANIFEST.items():
        assert len(case["run_dims"]) == 3 and case["example"] not in case["run_dims"], name
        assert all("0" in i["dynamic"] for i in case["inputs"].values()), name
        for exporter in EXPORTERS:
            declared = {i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim]
                        for i in onnx.load(X.path(f"{name}.{exporter}")).graph.input}
            for inp, spec in case["inputs"].items():
                for axis in spec["dynamic"]:
                    assert isinstance(declared[inp][int(axis)], str), (name, exporter, declared)


def test_committed_files_are_small():
    """The committed exports stay a few KB each (they live in git)."""
    sizes = {f: os.path.getsize(os.path.join(X.HERE, f)) for f in os.listdir(X.HERE)
             if f.endswith(".onnx")}
    assert max(sizes.values()) < 100_000 and sum(sizes.values()) < 1_000_000, sizes


def test_script_without_torch_says_so_in_one_line(tmp_path):
    """The export script where torch cannot be imported: one line naming the
    extra, exit 1, nothing written."""
    code = ("import sys; sys.modules['torch'] = None; "
            f"sys.path.insert(0, {X.HERE!r}); import export_torch_models as X; "
            f"sys.exit(X.main(['--out', {str(tmp_path)!r}]))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and r.stdout == "", (r.stdout, r.stderr)
    assert r.stderr.count("\n") == 1 and "needs the [export] extra" in r.stderr, r.stderr
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------- the export step

def graph_summary(m: onnx.ModelProto) -> dict:
    """What must stay the same when the script runs again: op types with
    their counts, the inputs / outputs (names, element types, dims), the
    initializers' types and shapes (not their names or order)."""
    def values(vs):
        return [(v.name, v.type.tensor_type.elem_type,
                 [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]) for v in vs]
    return {"opset": sorted((o.domain, o.version) for o in m.opset_import),
            "ops": Counter(f"{n.domain}:{n.op_type}" for n in m.graph.node),
            "inputs": values(m.graph.input), "outputs": values(m.graph.output),
            "initializers": sorted((t.data_type, tuple(t.dims)) for t in m.graph.initializer)}


@pytest.mark.export
def test_script_reproduces_committed_files(tmp_path):
    """data/export_torch_models.py run again (torch installed: the [export]
    extra) writes the committed files: the same file names and manifest, and
    for each model the same :func:`graph_summary` and the same outputs from
    onnxruntime on the same inputs (rtol/atol 1e-5). The bytes are not
    compared: another torch version may name nodes and order initializers
    differently. A failure means torch's exporters changed: if on purpose,
    regenerate with ``python test/python/models/data/export_torch_models.py``."""
    import onnxruntime as ort
    r = subprocess.run([sys.executable, X.__file__, "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stderr[-3000:]
    committed = sorted(f for f in os.listdir(X.HERE) if f.endswith((".onnx", ".json")))
    assert sorted(os.listdir(tmp_path)) == committed
    assert X.manifest(os.fspath(tmp_path)) == MANIFEST
    for f in committed:
        if not f.endswith(".onnx"):
            continue
        name = f[:-len(".onnx")]
        old, new = X.path(name), X.path(name, os.fspath(tmp_path))
        assert graph_summary(onnx.load(new)) == graph_summary(onnx.load(old)), f
        feeds = X.example_feeds(name)
        outs = [ort.InferenceSession(p, providers=["CPUExecutionProvider"]).run(None, feeds)
                for p in (old, new)]
        for o, n in zip(*outs):
            np.testing.assert_allclose(n, o, rtol=1e-5, atol=1e-5, err_msg=f)
