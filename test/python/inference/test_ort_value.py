"""OrtValue and run_with_ort_values against onnxruntime's: memory shared with
the numpy array, the queries, the errors, and runs at two batch sizes."""
import gc

import numpy as np
import onnxruntime
import pytest

import onnx_mlir_py as ort
from _models import add_model, multi_io


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("cache"))


@pytest.mark.parametrize("lib", [ort, onnxruntime], ids=["ours", "onnxruntime"])
def test_from_numpy_shares_the_arrays_memory(lib):
    """The behaviour checked on both: same buffer, writes seen both ways, a
    reference kept; a non-contiguous array is copied once."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    v = lib.OrtValue.ortvalue_from_numpy(a)
    assert v.data_ptr() == a.ctypes.data
    a[0, 0] = 100
    assert v.numpy()[0, 0] == 100
    v.numpy()[1, 2] = -1
    assert a[1, 2] == -1
    assert v._numpy_obj is a
    del a
    gc.collect()
    assert v.numpy()[0, 0] == 100                       # still alive through the value
    f = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    vf = lib.OrtValue.ortvalue_from_numpy(f)
    assert vf.data_ptr() != f.ctypes.data
    np.testing.assert_array_equal(vf.numpy(), f)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32, np.uint8,
                                   np.int8, np.bool_, np.float16, np.uint16])
def test_queries_match_onnxruntime(dtype):
    a = np.zeros((3, 0, 2) if dtype == np.int8 else (3, 2), dtype)
    ours, theirs = ort.OrtValue.ortvalue_from_numpy(a), onnxruntime.OrtValue.ortvalue_from_numpy(a)
    for q in ("shape", "data_type", "element_type", "device_name", "is_tensor", "has_value",
              "tensor_size_in_bytes", "is_sparse_tensor", "is_tensor_sequence"):
        assert getattr(ours, q)() == getattr(theirs, q)(), q
    assert ours.numpy().dtype == theirs.numpy().dtype
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


@pytest.mark.parametrize("shape,element_type", [([2, 3], np.float32), ((4,), 7), ([], 11),
                                                 ([2, 0], np.dtype("uint8"))])
def test_from_shape_and_type_matches_onnxruntime(shape, element_type):
    ours = ort.OrtValue.ortvalue_from_shape_and_type(shape, element_type)
    theirs = onnxruntime.OrtValue.ortvalue_from_shape_and_type(shape, element_type)
    assert (ours.shape(), ours.data_type(), ours.element_type()) == \
        (theirs.shape(), theirs.data_type(), theirs.element_type())
    n = ours.numpy()
    if n.size:
        n.reshape(-1)[0] = 1                            # numpy() is the value's memory
        assert ours.numpy().reshape(-1)[0] == 1


@pytest.mark.parametrize("call", [
    lambda lib: lib.OrtValue.ortvalue_from_numpy(np.array(["a", "bc"])),
    lambda lib: lib.OrtValue.ortvalue_from_numpy([1.0, 2.0]),
    lambda lib: lib.OrtValue.ortvalue_from_shape_and_type([2], np.str_),
    lambda lib: lib.OrtValue.ortvalue_from_numpy(np.ones(2, np.float32), "cuda", 0),
    lambda lib: lib.OrtValue.ortvalue_from_numpy(np.ones(2, np.float32), "tpu", 0),
    lambda lib: lib.OrtValue.ortvalue_from_shape_and_type([2, -1], np.float32),
], ids=["strings", "list", "string_type", "cuda", "unknown_device", "negative_dim"])
def test_errors_are_onnxruntimes_in_one_line(call):
    with pytest.raises(Exception) as theirs:
        call(onnxruntime)
    with pytest.raises(Exception) as ours:
        call(ort)
    assert isinstance(ours.value, type(theirs.value))   # RuntimeError / Exception alike
    assert "\n" not in str(ours.value)
    if "non-string" in str(theirs.value) or "Unsupported device" in str(theirs.value):
        assert str(ours.value) == str(theirs.value)


def test_update_inplace_and_repr():
    v = ort.OrtValue.ortvalue_from_shape_and_type([2, 2], np.int64)
    ptr = v.data_ptr()
    v.update_inplace(np.arange(4).reshape(2, 2))
    assert v.data_ptr() == ptr and v.numpy().tolist() == [[0, 1], [2, 3]]
    with pytest.raises(ValueError, match="shape"):
        v.update_inplace(np.arange(3))
    assert "tensor(int64)" in repr(v)


def _feeds(n, s):
    rng = np.random.default_rng(n)
    return {"x": rng.standard_normal((n, s, 8)).astype(np.float32),
            "mask": (rng.random((n, s)) > 0.3).astype(np.float32),
            "ids": rng.integers(0, 4, n).astype(np.int64)}


@pytest.mark.quick
def test_run_with_ort_values_matches_onnxruntime_at_two_shapes(cache):
    data = multi_io().SerializeToString()
    ours = ort.InferenceSession(data, cache_dir=cache)
    theirs = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
    for n, s in ((2, 5), (4, 3)):
        feed = _feeds(n, s)
        for names in (None, ["probs", "best"]):
            got = ours.run_with_ort_values(
                names, {k: ort.OrtValue.ortvalue_from_numpy(a) for k, a in feed.items()})
            want = theirs.run_with_ort_values(
                names, {k: onnxruntime.OrtValue.ortvalue_from_numpy(a) for k, a in feed.items()})
            assert [type(g).__name__ for g in got] == ["OrtValue"] * len(want)
            for g, w in zip(got, want):
                assert (g.shape(), g.data_type()) == (w.shape(), w.data_type())
                np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)
        # run() takes OrtValues too (onnxruntime's run does)
        np.testing.assert_allclose(
            ours.run(["pooled"], {k: ort.OrtValue.ortvalue_from_numpy(a)
                                  for k, a in feed.items()})[0],
            theirs.run(["pooled"], feed)[0], rtol=1e-5, atol=1e-6)


def test_run_with_ort_values_errors(cache):
    data = add_model(["N", 3]).SerializeToString()
    ours = ort.InferenceSession(data, cache_dir=cache)
    theirs = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
    vx = ort.OrtValue.ortvalue_from_numpy(np.ones((2, 3), np.float32))
    with pytest.raises(ValueError) as e:
        ours.run_with_ort_values(None, {"x": vx})
    with pytest.raises(ValueError) as w:
        theirs.run_with_ort_values(None, {"x": onnxruntime.OrtValue.ortvalue_from_numpy(
            np.ones((2, 3), np.float32))})
    assert str(e.value) == str(w.value)                 # Required inputs (['y']) are missing
    with pytest.raises(ort.InvalidArgument, match="Invalid input y: .*OrtValue.*ndarray"):
        ours.run_with_ort_values(None, {"x": vx, "y": np.ones((2, 3), np.float32)})
    bad = ort.OrtValue.ortvalue_from_numpy(np.ones((2, 4), np.float32))
    with pytest.raises(ort.InvalidArgument, match="invalid dimensions for input: x"):
        ours.run_with_ort_values(None, {"x": bad, "y": vx})


def test_a_scalar_output_stays_a_scalar(cache):
    """A 0-d output is a 0-d OrtValue (from run_with_ort_values and an
    unbound IOBinding output), as onnxruntime gives it."""
    from onnx import TensorProto as T
    from onnx import helper as h
    g = h.make_graph([h.make_node("ReduceSum", ["x"], ["s"], keepdims=0)], "sum",
                     [h.make_tensor_value_info("x", T.FLOAT, ["N"])],
                     [h.make_tensor_value_info("s", T.FLOAT, [])])
    data = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8) \
        .SerializeToString()
    x = np.arange(5, dtype=np.float32)
    got = []
    for lib, sess in ((ort, ort.InferenceSession(data, cache_dir=cache)),
                      (onnxruntime, onnxruntime.InferenceSession(
                          data, providers=["CPUExecutionProvider"]))):
        v = sess.run_with_ort_values(None, {"x": lib.OrtValue.ortvalue_from_numpy(x)})[0]
        b = sess.io_binding()
        b.bind_cpu_input("x", x)
        b.bind_output("s")
        sess.run_with_iobinding(b)
        got.append([(o.shape(), o.numpy().shape, float(o.numpy()))
                    for o in (v, b.get_outputs()[0])])
    assert got[0] == got[1] and got[0][0][0] == []
