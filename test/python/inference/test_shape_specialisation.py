"""Shapes specialised where a model needs them (#31 item 1).

torch traces ``if x.shape[-1] == 1: x = x.squeeze(-1)`` into Shape ->
Gather(-1) -> Equal(1) -> If, whose branches yield ranks 2 and 3: the
generic compile cannot lower it (``NeedsInputShapesError``). An
InferenceSession compiles the model for each run's input shapes (where the
condition folds), compared here with onnxruntime at two values of each
dynamic dim; the libraries are cached per input signature. With static
shapes the If folds at compile time; the CLI and ``compile()`` say how to
pass the shapes.
"""
import re
import subprocess
import sys
import warnings

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py as ort
from onnx_mlir_py.errors import CompileError, NeedsInputShapesError, ShapesSpecialisedWarning

CPU = ["CPUExecutionProvider"]


def squeeze_if(cond_from_input: bool = False) -> onnx.ModelProto:
    """y = relu(x.squeeze(-1) if x.shape[-1] == 1 else x), x [B, 128, T];
    ``cond_from_input``: the condition is a bool input ``c`` instead (no
    input shape decides it)."""
    then_g = h.make_graph([h.make_node("Squeeze", ["x", "ax"], ["sq"])], "then", [],
                          [h.make_tensor_value_info("sq", T.FLOAT, None)])
    else_g = h.make_graph([h.make_node("Identity", ["x"], ["id"])], "else", [],
                          [h.make_tensor_value_info("id", T.FLOAT, None)])
    inputs = [h.make_tensor_value_info("x", T.FLOAT, ["B", 128, "T"])]
    nodes = [h.make_node("Shape", ["x"], ["s"]),
             h.make_node("Gather", ["s", "m1"], ["last"], axis=0),
             h.make_node("Equal", ["last", "one"], ["c"])]
    if cond_from_input:
        inputs.append(h.make_tensor_value_info("c", T.BOOL, []))
        nodes = []
    nodes += [h.make_node("If", ["c"], ["r"], then_branch=then_g, else_branch=else_g),
              h.make_node("Relu", ["r"], ["y"])]
    g = h.make_graph(nodes, "squeeze_if", inputs, [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [h.make_tensor("m1", T.INT64, [], [-1]),
                      h.make_tensor("one", T.INT64, [], [1]),
                      h.make_tensor("ax", T.INT64, [1], [-1])])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("cache"))


def _x(b: int, t: int) -> np.ndarray:
    return np.random.default_rng(10 * b + t).standard_normal((b, 128, t)).astype(np.float32)


def _notes(record) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, ShapesSpecialisedWarning)]


def _same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_each_input_signature_runs_its_own_cached_library(cache, monkeypatch):
    data = squeeze_if().SerializeToString()
    ref = onnxruntime.InferenceSession(data, providers=CPU)
    libs = {}
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        sess = ort.InferenceSession(data, cache_dir=cache)
        assert sess.library_path == ""         # nothing compiled before a run
        for b, t in ((2, 1), (2, 5), (3, 1), (3, 5), (2, 1), (2, 5)):
            _same(sess.run(None, {"x": _x(b, t)})[0], ref.run(None, {"x": _x(b, t)})[0])
            libs.setdefault((b, t), set()).add(sess.library_path)
    notes = _notes(rec)
    assert len(notes) == 4, notes               # one per input signature
    assert "model 'squeeze_if': compiled for input shapes x [3, 128, 5]: the generic compile " \
        "needs them because node 'If:r' (If)" in notes[3]
    assert all(len(p) == 1 for p in libs.values()) and \
        len({p for ps in libs.values() for p in ps}) == 4
    # the library of [2, 128, 1] never runs other shapes: it checks its input dims
    from onnx_mlir_py.runtime import ExecutionSession
    from onnx_mlir_py.runtime.errors import RuntimeInputError
    with pytest.raises(RuntimeInputError, match=r"expected 1, got 5"):
        ExecutionSession(next(iter(libs[(2, 1)]))).run([_x(2, 5)])
    with pytest.raises(ort.InvalidArgument, match="Invalid rank for input: x"):
        sess.run(None, {"x": np.ones((2, 128), np.float32)})
    # a second session with the same shapes loads the cached libraries
    from onnx_mlir_py.backend import compile as bcompile
    monkeypatch.setattr(bcompile, "compile_cached",
                        lambda *a, **k: pytest.fail("compiled again on a cache hit"))
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        again = ort.InferenceSession(data, cache_dir=cache)
        for b, t in ((3, 5), (2, 1), (3, 5)):
            _same(again.run(None, {"x": _x(b, t)})[0], ref.run(None, {"x": _x(b, t)})[0])
            assert again.library_path in libs[(b, t)]
    assert len(_notes(rec)) == 2                # the note: once per session and signature


def test_a_condition_no_input_shape_decides_is_refused_in_one_line(cache):
    """The specialised compile cannot fold a condition read from an input:
    its refusal is the run's error (one line naming the node)."""
    sess = ort.InferenceSession(squeeze_if(cond_from_input=True).SerializeToString(),
                                cache_dir=cache)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(NeedsInputShapesError) as e:
            sess.run(None, {"x": _x(2, 1), "c": np.array(True)})
    assert "node 'If:r' (If)" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("shape", [[2, 128, 1], [-1, 128, 1], [2, 128, 7], [-1, 128, 7]])
def test_static_shapes_fold_the_if(tmp_path, shape):
    """Shape -> Gather(-1) -> Equal folds when dim -1 is static (the others
    may stay dynamic); the branch not taken is dropped unverified (a Squeeze
    of a dim 7)."""
    path = str(tmp_path / "m.onnx")
    onnx.save(squeeze_if(), path)
    ir_path = ort.compile(path, str(tmp_path / "m.onnx.mlir"), emit="EmitONNXIR", opt_level=3,
                          shape_information={0: shape})
    text = open(ir_path).read()
    assert "onnx.if" not in text and ("onnx.squeeze" in text) == (shape[-1] == 1)


def test_the_folded_library_matches_onnxruntime(tmp_path):
    """-O3 library of a dynamic batch and T = 1: no If left in its MLIR,
    results as onnxruntime's (of the dynamic model) at two batch sizes."""
    path = str(tmp_path / "m.onnx")
    onnx.save(squeeze_if(), path)
    mlir = open(ort.compile(path, str(tmp_path / "m.mlir"), emit="EmitMLIR", opt_level=3,
                            shape_information={0: [-1, 128, 1]})).read()
    assert not re.search(r"= scf\.if", mlir) and "onnx.if" not in mlir   # (checks: no results)
    so = ort.compile(path, str(tmp_path / "m.so"), opt_level=3, shape_information="0:-1x128x1")
    from onnx_mlir_py.runtime import ExecutionSession
    lib = ExecutionSession(so)
    ref = onnxruntime.InferenceSession(path, providers=CPU)
    for b in (1, 4):
        _same(lib.run([_x(b, 1)])[0], ref.run(None, {"x": _x(b, 1)})[0])


def test_cli_and_compile_say_how_to_pass_the_shapes(tmp_path):
    path = str(tmp_path / "m.onnx")
    onnx.save(squeeze_if(), path)
    p = subprocess.run([sys.executable, "-m", "onnx_mlir_py.cli", path], capture_output=True,
                       text=True, timeout=300)
    lines = p.stderr.strip().splitlines()
    assert p.returncode == 1 and len(lines) == 1, p.stderr
    assert lines[0].startswith("error: node 'If:r' (If): the rank of result #0") and \
        "pass them with --shapeInformation INDEX:D1xD2x...[,INDEX:...], e.g. " \
        "--shapeInformation 0:1x128x1 (the dynamic dims B of 'x', T of 'x' set to the sizes " \
        "of a run)" in lines[0], lines[0]
    assert not (tmp_path / "m.so").exists()
    with pytest.raises(NeedsInputShapesError,
                       match=r"shape_information=\{0: \[1, 128, 1\]\}") as e:
        ort.compile(path, str(tmp_path / "m.so"))
    assert isinstance(e.value, CompileError) and "\n" not in str(e.value)
    p = subprocess.run([sys.executable, "-m", "onnx_mlir_py.cli", path, "--shapeInformation",
                        "0:1x128x1", "-o", str(tmp_path / "fixed")], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "fixed.so").exists()


def _affine_grid_expanded() -> onnx.ModelProto:
    """AffineGrid's function body (the ``*_expanded`` node tests), every dim
    dynamic: the grid's rank is ``size``'s length."""
    from onnx.backend.test.case.node import function_testcase_helper
    node = h.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=1)
    types = [h.make_tensor_type_proto(T.FLOAT, ["N", "A", "B"]),
             h.make_tensor_type_proto(T.INT64, ["R"])]
    (nodes, opsets), = function_testcase_helper(node, types, "ag", [h.make_opsetid("", 20)])[0]
    g = h.make_graph(nodes, "affine_grid_expanded",
                     [h.make_value_info("theta", types[0]), h.make_value_info("size", types[1])],
                     [h.make_tensor_value_info("grid", T.FLOAT, None)])
    return h.make_model(g, opset_imports=opsets)


def test_affine_grid_expansion_at_two_ranks(cache):
    """The other refusal concrete shapes remove: AffineGrid's expansion, whose
    If on ``Size(size) == 4`` yields grids of rank 4 or 5; against
    onnx.reference's AffineGrid at a 2-D and a 3-D size."""
    from onnx.reference import ReferenceEvaluator
    model = _affine_grid_expanded()
    ref = ReferenceEvaluator(h.make_model(h.make_graph(
        [h.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=1)], "ag",
        [h.make_tensor_value_info("theta", T.FLOAT, None),
         h.make_tensor_value_info("size", T.INT64, None)],
        [h.make_tensor_value_info("grid", T.FLOAT, None)]),
        opset_imports=[h.make_opsetid("", 20)]))
    sess = ort.InferenceSession(model.SerializeToString(), cache_dir=cache)
    rng = np.random.default_rng(3)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        for size in ([2, 1, 5, 6], [2, 1, 4, 5, 3]):
            r = len(size) - 2
            feed = {"theta": rng.standard_normal((2, r, r + 1)).astype(np.float32),
                    "size": np.array(size, np.int64)}
            got = sess.run(None, feed)[0]
            want = ref.run(None, feed)[0]
            assert got.shape == (2, *size[2:], r)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert len(_notes(rec)) == 2


def _torch_export(path: str) -> None:
    """The torch module with the squeeze ``if``, exported by the TorchScript
    exporter (dynamo=False) with dynamic axes: a scripted function keeps the
    ``if`` as an If (a traced one would bake in the export shape's branch)."""
    import torch

    @torch.jit.script
    def maybe_squeeze(x: torch.Tensor) -> torch.Tensor:
        if x.shape[-1] == 1:
            x = x.squeeze(-1)
        return x

    class Model(torch.nn.Module):
        def forward(self, x):
            return maybe_squeeze(x * 2.0)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Model(), (torch.randn(2, 128, 1),), path, dynamo=False,
                          input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "B", 2: "T"}}, opset_version=17)


@pytest.mark.export
def test_a_torch_export_with_the_squeeze_if(tmp_path, cache):
    pytest.importorskip("torch", reason="torch is not installed (the exporter of this test)")
    path = str(tmp_path / "torch_squeeze.onnx")
    _torch_export(path)
    assert any(n.op_type == "If" for n in onnx.load(path).graph.node)
    ref = onnxruntime.InferenceSession(path, providers=CPU)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        sess = ort.InferenceSession(path, cache_dir=cache)
        for b, t in ((2, 1), (2, 5), (3, 1)):
            _same(sess.run(None, {"x": _x(b, t)})[0], ref.run(None, {"x": _x(b, t)})[0])
    assert len(_notes(rec)) == 3
