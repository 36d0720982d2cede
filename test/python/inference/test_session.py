"""onnx_mlir_py.InferenceSession: onnxruntime's errors (naming the input),
session options, providers, metadata (the compile cache: test_session_cache.py)."""
import numpy as np
import onnxruntime
import pytest

import onnx_mlir_py as ort
from onnx_mlir_py.runtime.errors import RuntimeInputError
from _models import add_model, multi_io


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def dyn(cache):
    """(our session, onnxruntime's) on relu(x + y), x and y [N, 3]."""
    data = add_model(["N", 3]).SerializeToString()
    return (ort.InferenceSession(data, cache_dir=cache),
            onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"]))


def _feed(n=2):
    rng = np.random.default_rng(0)
    return {k: rng.standard_normal((n, 3)).astype(np.float32) for k in ("x", "y")}


def _ort_message(sess, *args) -> str:
    """onnxruntime's message for the same call, without its status prefix."""
    with pytest.raises(Exception) as e:
        sess.run(*args)
    return str(e.value).split(" : ")[-1]


@pytest.mark.parametrize("case", ["unknown_input", "missing_input", "rank", "dims",
                                  "unknown_output"])
def test_errors_are_onnxruntimes_and_name_the_input(dyn, case):
    ours, theirs = dyn
    feed = _feed()
    args, named = {
        "unknown_input": ((None, {**feed, "q": feed["x"]}), "q"),
        "missing_input": ((None, {"x": feed["x"]}), "'y'"),
        "rank": ((None, {**feed, "x": feed["x"][None]}), "input: x"),
        "dims": ((None, {**feed, "y": np.ones((2, 4), np.float32)}), "input: y"),
        "unknown_output": ((["nope"], feed), "nope"),
    }[case]
    with pytest.raises(ort.InvalidArgument) as e:
        ours.run(*args)
    assert isinstance(e.value, ValueError) and isinstance(e.value, RuntimeInputError)
    assert named in str(e.value)
    assert str(e.value).startswith(_ort_message(theirs, *args))


def test_wrong_dtype_names_the_input_and_both_types(dyn):
    ours, _ = dyn
    with pytest.raises(ort.InvalidArgument, match=r"input: x\. Actual: \(tensor\(double\)\) , "
                                                  r"expected: \(tensor\(float\)\)"):
        ours.run(None, {**_feed(), "x": np.ones((2, 3))})


def test_results_match_onnxruntime_at_two_batch_sizes_and_input_forms(dyn):
    ours, theirs = dyn
    for n in (1, 5):
        feed = _feed(n)
        np.testing.assert_allclose(ours.run(None, feed)[0], theirs.run(None, feed)[0],
                                   rtol=1e-6)
    feed = _feed(3)
    want = theirs.run(["z"], feed)[0]
    as_list = {"x": feed["x"].tolist(), "y": feed["y"]}            # lists take the input type
    strided = {"x": np.asfortranarray(feed["x"]), "y": feed["y"]}  # not C-contiguous
    for f in (as_list, strided):
        np.testing.assert_allclose(ours.run(["z"], f)[0], want, rtol=1e-6)


@pytest.mark.quick
def test_a_failed_runtime_check_is_fail_naming_the_node(cache):
    m = add_model(["N"])
    m.graph.input[1].type.tensor_type.shape.dim[0].dim_param = "M"
    sess = ort.InferenceSession(m.SerializeToString(), cache_dir=cache)
    with pytest.raises(ort.Fail, match=r"node 'Add:t' \(Add\).*broadcast"):
        sess.run(None, {"x": np.ones(3, np.float32), "y": np.ones(4, np.float32)})
    out = sess.run(None, {"x": np.ones(3, np.float32), "y": np.ones(1, np.float32)})[0]
    np.testing.assert_array_equal(out, np.full(3, 2, np.float32))


@pytest.mark.quick
def test_queries_match_onnxruntime(cache):
    data = multi_io().SerializeToString()
    ours = ort.InferenceSession(data, cache_dir=cache)
    theirs = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
    for a, b in ((ours.get_inputs(), theirs.get_inputs()),
                 (ours.get_outputs(), theirs.get_outputs())):
        assert [(x.name, x.shape, x.type) for x in a] == [(x.name, x.shape, x.type) for x in b]
    for k in ("producer_name", "graph_name", "domain", "description", "graph_description",
              "version", "custom_metadata_map"):
        assert getattr(ours.get_modelmeta(), k) == getattr(theirs.get_modelmeta(), k), k
    assert ours.get_providers() == ["CPUExecutionProvider"] == ort.get_available_providers()
    assert ours.get_provider_options() == {"CPUExecutionProvider": {}}


def test_unknown_provider_warns_and_runs_on_cpu(cache):
    with pytest.warns(UserWarning, match="CUDAExecutionProvider"):
        s = ort.InferenceSession(add_model().SerializeToString(), cache_dir=cache,
                                 providers=[("CUDAExecutionProvider", {}), "CPUExecutionProvider"])
    assert s.get_providers() == ["CPUExecutionProvider"]


def test_bad_model_and_argument_errors(tmp_path, cache):
    with pytest.raises(ort.NoSuchFile):
        ort.InferenceSession(str(tmp_path / "missing.onnx"))
    with pytest.raises(ort.InvalidProtobuf):
        ort.InferenceSession(b"\xff\xffnot a model", cache_dir=cache)
    with pytest.raises(TypeError, match="bogus"):
        ort.InferenceSession(add_model().SerializeToString(), bogus=1)
    so = ort.SessionOptions()
    with pytest.raises(AttributeError):
        so.intra_op_num_thread = 2          # misspelt: refused, as onnxruntime does


def test_graph_optimization_level_is_the_opt_level(cache):
    data = add_model(["N", 3]).SerializeToString()
    paths = {}
    for level, opt in ((ort.GraphOptimizationLevel.ORT_DISABLE_ALL, 0),
                       (ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED, 2),
                       (ort.GraphOptimizationLevel.ORT_ENABLE_ALL, 3)):
        so = ort.SessionOptions()
        so.graph_optimization_level = level
        assert so.opt_level == opt
        s = ort.InferenceSession(data, so, cache_dir=cache)
        paths[opt] = s.library_path
        feed = _feed()
        np.testing.assert_allclose(s.run(None, feed)[0],
                                   np.maximum(feed["x"] + feed["y"], 0), rtol=1e-6)
    assert len(set(paths.values())) == 3            # one cache entry per level
    assert str(ort.GraphOptimizationLevel.ORT_ENABLE_ALL) == \
        str(onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL)


def test_optimized_model_filepath_writes_the_onnx_ir(tmp_path, cache):
    so = ort.SessionOptions()
    so.optimized_model_filepath = str(tmp_path / "opt.onnx.mlir")
    ort.InferenceSession(add_model().SerializeToString(), so, cache_dir=cache)
    text = (tmp_path / "opt.onnx.mlir").read_text()
    assert '"onnx.add"' in text and "func.func @main_graph" in text


@pytest.mark.quick
def test_intra_op_num_threads_sets_the_kernel_threads(cache):
    from onnx_mlir_py.testing import models as zoo
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    s = ort.InferenceSession(zoo.mlp(batch=8).SerializeToString(), so, cache_dir=cache)
    assert s._sess.multithreaded and s._sess.num_threads == 2


def test_dir_lists_onnxruntimes_names():
    """``dir(ort)`` (tab completion) shows the lazily loaded names."""
    import onnx_mlir_py
    names = dir(onnx_mlir_py)
    for n in ("InferenceSession", "SessionOptions", "get_available_providers",
              "ExecutionSession", "compile"):
        assert n in names and getattr(onnx_mlir_py, n) is not None
