"""Free-dimension overrides (by name and by denotation) against onnxruntime:
the reported inputs/outputs, results at two values of the dim left free,
the refusal of other values of the fixed one, the compile cache (one
library per override, the path index hit), and the option errors."""
import os
import time

import numpy as np
import onnx
import onnxruntime
import pytest

import onnx_mlir_py as ort
from onnx_mlir_py.inference import path_index
from _models import add_model, multi_io


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("cache"))


def _denoted():
    m = multi_io()
    for i in (0, 1):                    # x and mask: dim 0 is the batch
        m.graph.input[i].type.tensor_type.shape.dim[0].denotation = "DATA_BATCH"
    return m


def _pair(model, cache, override):
    """(ours, onnxruntime's) sessions with ``override(options)`` applied."""
    so, tso = ort.SessionOptions(), onnxruntime.SessionOptions()
    override(so)
    override(tso)
    data = model.SerializeToString()
    return (ort.InferenceSession(data, so, cache_dir=cache),
            onnxruntime.InferenceSession(data, tso, providers=["CPUExecutionProvider"]))


def _args(args):
    return [(a.name, a.shape, a.type) for a in args]


@pytest.mark.parametrize("how", ["name", "denotation"])
def test_overrides_match_onnxruntime(cache, how):
    model, n = (multi_io(), 2) if how == "name" else (_denoted(), 3)
    override = (lambda so: so.add_free_dimension_override_by_name("N", n)) if how == "name" \
        else (lambda so: so.add_free_dimension_override_by_denotation("data_batch", n))
    ours, theirs = _pair(model, cache, override)
    assert _args(ours.get_inputs()) == _args(theirs.get_inputs())
    assert _args(ours.get_outputs()) == _args(theirs.get_outputs())
    assert ours.get_inputs()[0].shape == [n, "S", 8]
    for s in (3, 6):                     # S stays dynamic
        rng = np.random.default_rng(s)
        feed = {"x": rng.standard_normal((n, s, 8)).astype(np.float32),
                "mask": np.ones((n, s), np.float32),
                "ids": rng.integers(0, 4, n).astype(np.int64)}
        for g, w in zip(ours.run(None, feed), theirs.run(None, feed)):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    feed = {"x": np.ones((n + 1, 3, 8), np.float32), "mask": np.ones((n + 1, 3), np.float32),
            "ids": np.zeros(n + 1, np.int64)}
    with pytest.raises(ort.InvalidArgument) as e:
        ours.run(None, feed)
    with pytest.raises(Exception) as w:
        theirs.run(None, feed)
    assert str(w.value).endswith(str(e.value))      # Got invalid dimensions for input: x ...


def test_an_unnamed_dim_with_a_denotation(cache):
    m = add_model([None, 3])
    for vi in m.graph.input:
        vi.type.tensor_type.shape.dim[0].denotation = "DATA_BATCH"
    ours, theirs = _pair(m, cache,
                         lambda so: so.add_free_dimension_override_by_denotation("DATA_BATCH", 5))
    assert _args(ours.get_inputs()) == _args(theirs.get_inputs())
    assert _args(ours.get_outputs()) == _args(theirs.get_outputs())
    x = np.arange(15, dtype=np.float32).reshape(5, 3) - 7
    np.testing.assert_array_equal(ours.run(None, {"x": x, "y": x})[0],
                                  theirs.run(None, {"x": x, "y": x})[0])


def test_each_override_is_its_own_library_and_a_file_hits_the_index(tmp_path, cache,
                                                                     monkeypatch):
    path = str(tmp_path / "m.onnx")
    onnx.save(multi_io(), path)
    st = os.stat(path)      # old enough to be indexed
    time.sleep(max(0.0, path_index.SETTLE_S + 0.1 - (time.time() - st.st_ctime)))

    def session(**dims):
        so = ort.SessionOptions()
        for k, v in dims.items():
            so.add_free_dimension_override_by_name(k, v)
        return ort.InferenceSession(path, so, cache_dir=cache)

    libs = {k: session(**d).library_path for k, d in
            (("none", {}), ("N2", {"N": 2}), ("N3", {"N": 3}), ("Q7", {"Q": 7}))}
    assert len({libs["none"], libs["N2"], libs["N3"]}) == 3
    assert libs["Q7"] == libs["none"]   # an override naming no dim: the same library
    from onnx_mlir_py.backend import compile as bcompile
    from onnx_mlir_py.inference import compiled
    monkeypatch.setattr(bcompile, "compile_cached",
                        lambda *a, **k: pytest.fail("compiled again on a cache hit"))
    monkeypatch.setattr(compiled, "read_model",
                        lambda *a: pytest.fail("read the model file (index not used)"))
    again = session(N=3)
    assert again.library_path == libs["N3"] and again.get_inputs()[0].shape == [3, "S", 8]


@pytest.mark.parametrize("call,error,match", [
    (lambda so: so.add_free_dimension_override_by_name("N", "2"), TypeError, "must be an int"),
    (lambda so: so.add_free_dimension_override_by_name("N", 0), ValueError, ">= 1"),
    (lambda so: so.add_free_dimension_override_by_denotation(3, 2), TypeError, "must be a str"),
])
def test_bad_override_values(call, error, match):
    with pytest.raises(error, match=match):
        call(ort.SessionOptions())


@pytest.mark.parametrize("overrides,match", [
    ({"denotation": ("DATA_BATCH", 2), "name": ("N", 3)}, "Conflicting free dimension overrides"),
    ({"denotation": ("DATA_BATCH", 2)}, "fixed dimension size 8 which does not equal"),
])
def test_conflicting_overrides_are_onnxruntimes_invalid_argument(cache, overrides, match):
    m = _denoted()
    if "name" not in overrides:         # a static dim with the denotation
        m.graph.input[0].type.tensor_type.shape.dim[2].denotation = "DATA_BATCH"

    def override(so):
        if "denotation" in overrides:
            so.add_free_dimension_override_by_denotation(*overrides["denotation"])
        if "name" in overrides:
            so.add_free_dimension_override_by_name(*overrides["name"])
    so, tso = ort.SessionOptions(), onnxruntime.SessionOptions()
    override(so)
    override(tso)
    with pytest.raises(Exception, match="free dimension override"):
        onnxruntime.InferenceSession(m.SerializeToString(), tso,
                                     providers=["CPUExecutionProvider"])
    with pytest.raises(ort.InvalidArgument, match=match):
        ort.InferenceSession(m.SerializeToString(), so, cache_dir=cache)
