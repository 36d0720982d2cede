"""Unit tests of onnx_mlir_py.backend: results vs onnx.reference, output
dtypes, the compile cache, errors and crashes of the compiler child."""
import os
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py.backend as backend
from onnx_mlir_py.backend import compile as bcompile
from onnx_mlir_py.backend.isolate import ChildWorker
from onnx_mlir_py.errors import OnnxMlirError, UnsupportedOpsError


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ONNX_MLIR_PY_CACHE", str(tmp_path / "cache"))


def _model(nodes, inputs, outputs, name="m", opset=17):
    g = helper.make_graph(nodes, name, inputs, outputs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _add_model(name="add"):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3])
    return _model([helper.make_node("Add", ["x", "y"], ["t"]),
                   helper.make_node("Relu", ["t"], ["z"])], [x, y], [z], name)


def _inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal((2, 3)).astype(np.float32) for _ in range(2)]


def test_run_model_matches_reference_in_child_process():
    m = _add_model()
    x, y = _inputs()
    out = backend.run_model(m, [x, y])
    want = ReferenceEvaluator(m).run(None, {"x": x, "y": y})[0]
    np.testing.assert_allclose(out[0], want, rtol=1e-6)
    assert out["z"] is out[0]                      # outputs are also indexable by name
    assert backend.supports_device("CPU") and not backend.supports_device("CUDA")


def test_output_dtypes_are_the_onnx_ones():
    a = helper.make_tensor_value_info("a", TensorProto.UINT8, [4])
    b = helper.make_tensor_value_info("b", TensorProto.UINT8, [4])
    f = helper.make_tensor_value_info("f", TensorProto.FLOAT, [4])
    outs = [helper.make_tensor_value_info("s", TensorProto.UINT8, [4]),
            helper.make_tensor_value_info("e", TensorProto.BOOL, [4]),
            helper.make_tensor_value_info("h", TensorProto.FLOAT16, [4])]
    m = _model([helper.make_node("Add", ["a", "b"], ["s"]),
                helper.make_node("Equal", ["a", "b"], ["e"]),
                helper.make_node("Cast", ["f"], ["h"], to=TensorProto.FLOAT16)],
               [a, b, f], outs, "dtypes")
    feeds = {"a": np.array([1, 200, 3, 4], np.uint8), "b": np.array([1, 100, 0, 4], np.uint8),
             "f": np.array([0.5, -1.25, 3e4, 1e-3], np.float32)}
    got = backend.prepare(m, in_process=True).run(feeds)
    want = ReferenceEvaluator(m).run(None, feeds)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def test_run_node_builds_a_one_node_model():
    node = helper.make_node("Relu", ["x"], ["y"])
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    (y,) = backend.run_node(node, [x], in_process=True)
    np.testing.assert_array_equal(y, np.maximum(x, 0))


def test_cache_hit_does_not_compile_again(monkeypatch):
    m = _add_model("cached")
    rep1 = backend.prepare(m, in_process=True)
    assert os.path.isfile(rep1.library_path)
    assert rep1.library_path.startswith(os.environ["ONNX_MLIR_PY_CACHE"])

    def no_build(*a, **k):
        raise AssertionError("compiled again despite a cache entry")
    monkeypatch.setattr(bcompile, "build", no_build)
    rep2 = backend.prepare(m, in_process=True)
    assert rep2.library_path == rep1.library_path
    x, y = _inputs()
    np.testing.assert_array_equal(rep2.run([x, y])[0], np.maximum(x + y, 0))
    # Other options -> another entry (compiles: build is stubbed, so it raises).
    with pytest.raises(Exception, match="compiled again"):
        backend.prepare(m, in_process=True, opt_level=1)


def _unsupported_model():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    return _model([helper.make_node("Frobnicate", ["x"], ["y"], domain="com.example",
                                    name="frob1")], [x], [y], "bad")


def test_error_in_child_comes_back_as_the_same_one_line_error(monkeypatch):
    m = _unsupported_model()
    m.opset_import.append(helper.make_opsetid("com.example", 1))
    with pytest.raises(UnsupportedOpsError) as ei:
        backend.prepare(m)                          # isolated (the default)
    msg = str(ei.value)
    assert "\n" not in msg and "Frobnicate" in msg
    # The error is cached: the second prepare fails the same way without compiling.
    monkeypatch.setattr(bcompile, "build", lambda *a: pytest.fail("compiled again"))
    with pytest.raises(UnsupportedOpsError, match="Frobnicate"):
        backend.prepare(m)


def _abort(*args):
    os.abort()


def _sleep(*args):
    time.sleep(30)


def _value(x):
    return x * 2


def test_child_worker_survives_abort_and_recovers():
    w = ChildWorker()
    try:
        status, why = w.call(_abort, ())
        assert status == "crash" and "SIGABRT" in why
        assert w.call(_value, (21,)) == ("ok", 42)   # a fresh child takes over
    finally:
        w.close()


def test_crashing_compile_raises_naming_the_model(monkeypatch):
    # The child imports this module to find _abort (pickled by reference).
    real_build = bcompile.build
    monkeypatch.setattr(bcompile, "build", _abort)
    with pytest.raises(backend.CompilerCrashError) as ei:
        backend.prepare(_add_model("crashy"))
    assert "'crashy'" in str(ei.value) and "SIGABRT" in str(ei.value)
    assert isinstance(ei.value, OnnxMlirError)
    monkeypatch.setattr(bcompile, "build", real_build)
    x, y = _inputs()                                 # this process and the backend still work
    np.testing.assert_array_equal(backend.run_model(_add_model("after"), [x, y])[0],
                                  np.maximum(x + y, 0))


def test_hung_compile_times_out(monkeypatch):
    monkeypatch.setattr(bcompile, "build", _sleep)
    t0 = time.monotonic()
    with pytest.raises(backend.CompileTimeoutError, match="'slow'"):
        backend.prepare(_add_model("slow"), timeout=2)
    assert time.monotonic() - t0 < 20


def test_inputs_are_checked_with_a_clear_error():
    rep = backend.prepare(_add_model("checked"), in_process=True)
    with pytest.raises(OnnxMlirError, match="input 1"):
        rep.run([np.zeros((2, 3), np.float32), np.zeros((2, 3), np.int64)])
    with pytest.raises(OnnxMlirError, match="missing input"):
        rep.run({"x": np.zeros((2, 3), np.float32)})
    assert isinstance(onnx.load_from_string(_add_model().SerializeToString()), onnx.ModelProto)


def test_cache_skips_results_of_edited_sources(tmp_path, monkeypatch):
    """A library or error compiled after the compiler's sources changed (an
    edit during a long run) is not stored under the fingerprint taken before
    the edit: it once served wrong numbers from the cache."""
    from onnx_mlir_py.backend import cache as cache_mod
    cache_mod.compiler_fingerprint()
    c = cache_mod.CompileCache(tmp_path)
    built = c.temp_library("ab" * 20)
    built.write_bytes(b"\x7fELF stands for a library")     # (checked as one on lookup)
    assert cache_mod.sources_unchanged()
    monkeypatch.setattr(cache_mod, "_sources_stamp", (-1, -1))   # as if edited since
    assert not cache_mod.sources_unchanged()
    assert c.store_library("ab" * 20, built) == built
    c.store_error("cd" * 20, {"type": "CompileError", "message": "m"})
    assert c.lookup("ab" * 20) is None and c.lookup("cd" * 20) is None
    monkeypatch.undo()
    assert c.store_library("ab" * 20, built) == c.library_path("ab" * 20)
    assert c.lookup("ab" * 20) == c.library_path("ab" * 20)


def test_build_keeps_an_uncached_library_loadable(tmp_path, monkeypatch):
    """Sources edited mid-run: the library is not cached, but the path build()
    returns must still exist (it used to be deleted: 'model library not found')."""
    from onnx_mlir_py.backend import cache as cache_mod
    from onnx_mlir_py.backend.compile import build
    monkeypatch.setattr(cache_mod, "sources_unchanged", lambda: False)
    path = build(_add_model().SerializeToString(), {}, "ef" * 20, str(tmp_path))
    assert os.path.exists(path)
    assert cache_mod.CompileCache(tmp_path).lookup("ef" * 20) is None
