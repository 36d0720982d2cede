"""io_binding / run_with_iobinding against onnxruntime's: inputs bound as
arrays, raw buffers and OrtValues; outputs written IN PLACE into the
caller's buffers (at two shapes of a model with dynamic dims), unbound
outputs, and onnxruntime's errors for a binding the model cannot fill."""
import numpy as np
import onnxruntime
import pytest

import onnx_mlir_py as ort
from onnx_mlir_py.runtime import ExecutionSession
from _models import add_model, multi_io


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def multi(cache):
    data = multi_io().SerializeToString()
    return (ort.InferenceSession(data, cache_dir=cache),
            onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"]))


@pytest.fixture(scope="module")
def add(cache):
    data = add_model(["N", 3]).SerializeToString()
    return (ort.InferenceSession(data, cache_dir=cache),
            onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"]))


def _feeds(n, s):
    rng = np.random.default_rng(n + s)
    return {"x": rng.standard_normal((n, s, 8)).astype(np.float32),
            "mask": (rng.random((n, s)) > 0.3).astype(np.float32),
            "ids": rng.integers(0, 4, n).astype(np.int64)}


def _bound_run(lib, sess, feed, n, s):
    """pooled into a pre-allocated buffer (bind_output with its address),
    probs into an OrtValue, best unbound; x by address, mask by OrtValue."""
    b = sess.io_binding()
    x = feed["x"]
    b.bind_input("x", "cpu", 0, np.float32, list(x.shape), x.ctypes.data)
    b.bind_ortvalue_input("mask", lib.OrtValue.ortvalue_from_numpy(feed["mask"]))
    b.bind_cpu_input("ids", feed["ids"])
    pooled = np.full((n, 4), np.nan, np.float32)
    probs = lib.OrtValue.ortvalue_from_shape_and_type([n, s, 4], np.float32)
    b.bind_output("pooled", "cpu", 0, np.float32, [n, 4], pooled.ctypes.data)
    b.bind_ortvalue_output("probs", probs)
    b.bind_output("best")
    b.synchronize_inputs()
    sess.run_with_iobinding(b)
    b.synchronize_outputs()
    return b, pooled, probs


@pytest.mark.parametrize("n,s", [(2, 5), (4, 3)])
def test_outputs_are_written_into_the_callers_buffers(multi, n, s, monkeypatch):
    ours, theirs = multi
    feed = _feeds(n, s)
    into = []
    real = ExecutionSession.run_into
    monkeypatch.setattr(ExecutionSession, "run_into",
                        lambda self, *a: into.append(1) or real(self, *a))
    b, pooled, probs = _bound_run(ort, ours, feed, n, s)
    assert into == [1]                  # straight from the library's buffer: no extra array
    wb, w_pooled, w_probs = _bound_run(onnxruntime, theirs, feed, n, s)
    np.testing.assert_allclose(pooled, w_pooled, rtol=1e-5, atol=1e-6)      # in place
    np.testing.assert_allclose(probs.numpy(), w_probs.numpy(), rtol=1e-5, atol=1e-6)
    got, want = b.get_outputs(), wb.get_outputs()
    assert [(g.shape(), g.data_type()) for g in got] == [(w.shape(), w.data_type()) for w in want]
    assert got[0].data_ptr() == pooled.ctypes.data and got[1].data_ptr() == probs.data_ptr()
    np.testing.assert_array_equal(got[2].numpy(), want[2].numpy())        # best (argmax)
    copies = b.copy_outputs_to_cpu()
    assert not np.shares_memory(copies[0], pooled)
    for c, w in zip(copies, wb.copy_outputs_to_cpu()):
        np.testing.assert_allclose(c, w, rtol=1e-5, atol=1e-6)


def test_a_bound_input_array_is_read_at_each_run(add):
    """As in onnxruntime: a C-contiguous array is used in place (later
    writes are seen), another is copied when bound."""
    results = []
    for sess in add:
        b = sess.io_binding()
        x, y = np.ones((2, 3), np.float32), np.asfortranarray(np.ones((2, 3), np.float32))
        b.bind_cpu_input("x", x)
        b.bind_cpu_input("y", y)
        b.bind_output("z")
        sess.run_with_iobinding(b)
        first = b.get_outputs()[0].numpy().copy()
        x[:] = 5
        y[:] = 100                      # copied when bound: not seen
        sess.run_with_iobinding(b)
        results.append((first, b.get_outputs()[0].numpy().copy()))
    for got, want in zip(*results):
        np.testing.assert_array_equal(got, want)
    assert results[0][1][0, 0] == 6


def test_unbound_outputs_are_fresh_each_run(add):
    """Deliberately unlike onnxruntime (which reuses the first run's buffer):
    a new shape runs, and an OrtValue taken earlier keeps its values."""
    ours, _ = add
    b = ours.io_binding()
    b.bind_output("z")
    firsts = []
    for n in (2, 4):
        b.bind_cpu_input("x", np.full((n, 3), n, np.float32))
        b.bind_cpu_input("y", np.ones((n, 3), np.float32))
        ours.run_with_iobinding(b)
        firsts.append(b.get_outputs()[0])
    assert firsts[0].shape() == [2, 3] and firsts[1].shape() == [4, 3]
    assert firsts[0].numpy()[0, 0] == 3 and firsts[1].numpy()[0, 0] == 5


def _messages(sessions, bind) -> list[str]:
    out = []
    for lib, sess in zip((ort, onnxruntime), sessions):
        b = sess.io_binding()
        b.bind_cpu_input("x", np.ones((2, 3), np.float32))
        b.bind_cpu_input("y", np.ones((2, 3), np.float32))
        with pytest.raises(RuntimeError) as e:
            bind(b)
            sess.run_with_iobinding(b)
        out.append(str(e.value))
    return out


@pytest.mark.parametrize("case", ["type", "rank", "shape", "no_output", "unknown_output",
                                  "unknown_input", "type_by_code"])
def test_a_binding_the_model_cannot_fill_is_onnxruntimes_error(add, case):
    buf = np.full(12, -3.0)
    binds = {
        "type": lambda b: b.bind_output("z", "cpu", 0, np.float64, [2, 3], buf.ctypes.data),
        "type_by_code": lambda b: b.bind_output("z", "cpu", 0, 11, [2, 3], buf.ctypes.data),
        "rank": lambda b: b.bind_output("z", "cpu", 0, np.float32, [6], buf.ctypes.data),
        "shape": lambda b: b.bind_output("z", "cpu", 0, np.float32, [3, 3], buf.ctypes.data),
        "no_output": lambda b: None,
        "unknown_output": lambda b: b.bind_output("nope"),
        "unknown_input": lambda b: b.bind_cpu_input("nope", np.ones(2, np.float32)),
    }
    ours, theirs = _messages(add, binds[case])
    assert "\n" not in ours
    if case == "shape":     # onnxruntime's names the node; the rest is the same
        assert "has shape {3,3} but the computed output shape for this run is {2,3}" in theirs
        assert ours == ("Error in execution: The output OrtValue provided for output 'z' has "
                        "shape {3,3} but the computed output shape for this run is {2,3}.")
    else:
        assert ours == theirs
    assert (buf == -3.0).all()          # a refused buffer is not written


def test_binding_rules(add, cache):
    ours, _ = add
    b = ours.io_binding()
    with pytest.raises(ValueError, match="`element_type` and `shape` are to be provided"):
        b.bind_output("z", "cpu", 0, None, None, 1234)
    with pytest.raises(RuntimeError, match="Unable to create OrtValue"):
        b.bind_cpu_input("x", [[1.0, 2.0, 3.0]])
    with pytest.raises(RuntimeError, match="CPU only"):
        b.bind_output("z", "cuda", 0)
    assert b.get_outputs() == [] and b.copy_outputs_to_cpu() == []
    other = ort.InferenceSession(add_model(["N", 3]).SerializeToString(), cache_dir=cache)
    with pytest.raises(ValueError, match="IOBinding must be used with the session"):
        other.run_with_iobinding(b)
    # a missing input: onnxruntime's RuntimeError ("Error in execution: ..."), naming it
    b.bind_cpu_input("x", np.ones((2, 3), np.float32))
    b.bind_output("z")
    with pytest.raises(ort.Fail, match=r"Error in execution: Required inputs \(\['y'\]\)"):
        ours.run_with_iobinding(b)
    b.bind_cpu_input("y", np.ones((2, 3), np.float32))
    ours.run_with_iobinding(b)
    b.clear_binding_outputs()
    with pytest.raises(RuntimeError, match="At least one output should be requested"):
        ours.run_with_iobinding(b)
    b.bind_output("z")
    b.clear_binding_inputs()
    with pytest.raises(RuntimeError, match="missing"):
        ours.run_with_iobinding(b)


def test_without_run_into_the_output_is_copied_into_the_buffer(multi, monkeypatch):
    """A library run_into cannot run (sequences, strings, ZipMap) copies the
    output into the bound buffer after the run: the same results."""
    ours, theirs = multi
    monkeypatch.setattr(ExecutionSession, "can_run_into", property(lambda self: False))
    monkeypatch.setattr(ExecutionSession, "run_into",
                        lambda *a: pytest.fail("run_into on a library that cannot"))
    feed = _feeds(3, 4)
    b, pooled, probs = _bound_run(ort, ours, feed, 3, 4)
    _, w_pooled, w_probs = _bound_run(onnxruntime, theirs, feed, 3, 4)
    np.testing.assert_allclose(pooled, w_pooled, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(probs.numpy(), w_probs.numpy(), rtol=1e-5, atol=1e-6)
    assert b.get_outputs()[0].data_ptr() == pooled.ctypes.data


def test_a_uint8_output_into_a_uint8_buffer(cache):
    """An unsigned output type: the buffer of the declared type is filled
    (had the library handed back a same-sized storage type, int8, the buffer
    would take it as the same bytes)."""
    from onnx import TensorProto as T
    from onnx import helper as h
    g = h.make_graph([h.make_node("Cast", ["x"], ["y"], to=T.UINT8)], "cast",
                     [h.make_tensor_value_info("x", T.FLOAT, ["N"])],
                     [h.make_tensor_value_info("y", T.UINT8, ["N"])])
    data = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8) \
        .SerializeToString()
    x = np.array([0, 7, 200, 255, 128], np.float32)
    outs = []
    for sess in (ort.InferenceSession(data, cache_dir=cache),
                 onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])):
        b = sess.io_binding()
        b.bind_cpu_input("x", x)
        buf = np.zeros(5, np.uint8)
        b.bind_output("y", "cpu", 0, np.uint8, [5], buf.ctypes.data)
        sess.run_with_iobinding(b)
        assert b.get_outputs()[0].data_type() == "tensor(uint8)"
        outs.append(buf)
    np.testing.assert_array_equal(outs[0], outs[1])


def test_a_sequence_output_is_refused_in_one_line(cache):
    """OrtValues here hold tensors only: an IOBinding of a sequence output,
    with or without a buffer, is one line naming it (run() returns it)."""
    from onnx import TensorProto as T
    from onnx import helper as h
    g = h.make_graph([h.make_node("SplitToSequence", ["x"], ["parts"], keepdims=0)], "split",
                     [h.make_tensor_value_info("x", T.FLOAT, [3])],
                     [h.make_tensor_sequence_value_info("parts", T.FLOAT, None)])
    sess = ort.InferenceSession(h.make_model(g, opset_imports=[h.make_opsetid("", 17)],
                                             ir_version=8).SerializeToString(), cache_dir=cache)
    x = np.arange(3, dtype=np.float32)
    assert [p.tolist() for p in sess.run(None, {"x": x})[0]] == [0, 1, 2]
    buf = np.zeros(3, np.float32)
    for bind in (lambda b: b.bind_output("parts"),
                 lambda b: b.bind_output("parts", "cpu", 0, np.float32, [3], buf.ctypes.data)):
        b = sess.io_binding()
        b.bind_cpu_input("x", x)
        bind(b)
        with pytest.raises(ort.Fail, match=r"^Error in execution: output parts is [^\n]*$"):
            sess.run_with_iobinding(b)
    with pytest.raises(ort.Fail, match="output parts is not a tensor"):
        sess.run_with_ort_values(None, {"x": ort.OrtValue.ortvalue_from_numpy(x)})
