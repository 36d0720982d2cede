"""Session config entries (allow_spinning drives the pool's idle spin; other
keys warn once), the module-level logger severity, and
optimized_model_filepath writing ONNX for a ``.onnx`` path."""
import os
import threading
import time
import uuid
import warnings

import numpy as np
import onnx
import onnxruntime
import pytest

import onnx_mlir_py as ort
from onnx_mlir_py.errors import OnnxMlirWarning
from onnx_mlir_py.inference.config_entries import ConfigEntryWarning
from onnx_mlir_py.testing import models as zoo
from _models import multi_io


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return str(tmp_path_factory.mktemp("cache"))


def test_config_entries_as_onnxruntime_stores_them():
    msgs = []
    for lib in (ort, onnxruntime):
        so = lib.SessionOptions()
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        assert so.get_session_config_entry("session.intra_op.allow_spinning") == "0"
        with pytest.raises(RuntimeError) as e:
            so.get_session_config_entry("no.such.key")
        msgs.append(str(e.value))
        with pytest.raises(TypeError):
            so.add_session_config_entry("k", 1)
    assert msgs[0] == msgs[1]


def test_an_ignored_key_warns_once_and_an_honoured_one_not():
    key = f"session.test_only.{uuid.uuid4().hex}"
    so = ort.SessionOptions()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        so.add_session_config_entry(key, "1")
        so.add_session_config_entry(key, "2")
        so.add_session_config_entry("session.intra_op.allow_spinning", "1")
    mine = [w for w in seen if issubclass(w.category, ConfigEntryWarning)]
    assert len(mine) == 1 and key in str(mine[0].message) and "ignored" in str(mine[0].message)
    assert so.get_session_config_entry(key) == "2"


def _other_threads_cpu_ticks() -> int:
    """utime + stime (clock ticks) of this process's threads but the caller's."""
    me, total = threading.get_native_id(), 0
    for tid in os.listdir("/proc/self/task"):
        if int(tid) == me:
            continue
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue                    # a thread that ended
        total += int(fields[11]) + int(fields[12])
    return total


def _idle_ticks(sess, feed) -> int:
    sess.run(None, feed)
    t0 = _other_threads_cpu_ticks()
    time.sleep(0.5)
    return _other_threads_cpu_ticks() - t0


def test_allow_spinning_0_makes_the_idle_pool_sleep(cache):
    """The pool's workers spin 2 s after a run (set on the library: the
    control, the measurement sees a spinning worker); a session on the same
    library with allow_spinning=0 makes them sleep at once: no CPU in the
    half second after its run."""
    data = zoo.mlp(batch=8).SerializeToString()

    def session(spin=None):
        so = ort.SessionOptions()
        so.intra_op_num_threads = 2
        if spin is not None:
            so.add_session_config_entry("session.intra_op.allow_spinning", spin)
        return ort.InferenceSession(data, so, cache_dir=cache)
    first = session()
    assert first._sess.multithreaded
    x = first.get_inputs()[0]
    feed = {x.name: np.ones([8] + x.shape[1:], np.float32)}
    try:
        assert first._sess.set_spin_us(2_000_000)
        spinning = _idle_ticks(first, feed)
        quiet = _idle_ticks(session("0"), feed)
    finally:
        first._sess.set_spin_us(-1)
    print(f"idle pool CPU ticks in 0.5 s: 2 s spin {spinning}, allow_spinning=0 {quiet}")
    assert quiet <= 2 and spinning >= 5, (quiet, spinning)


def test_logger_severity_3_turns_our_warnings_off():
    key = f"session.test_only.{uuid.uuid4().hex}"
    import logging
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            ort.set_default_logger_severity(3)
            assert logging.getLogger("onnx_mlir_py").level == logging.ERROR
            ort.SessionOptions().add_session_config_entry(key + "a", "1")
            warnings.warn(OnnxMlirWarning("hidden"))
            ort.set_default_logger_severity(2)
            warnings.warn(OnnxMlirWarning("shown"))
            ort.SessionOptions().add_session_config_entry(key + "b", "1")
        texts = [str(w.message) for w in seen if issubclass(w.category, OnnxMlirWarning)]
        assert texts[0] == "shown" and key + "b" in texts[1] and len(texts) == 2
        ort.set_default_logger_verbosity(1)
    finally:
        ort.set_default_logger_severity(2)
    for bad, error in ((5, RuntimeError), (-1, RuntimeError), ("2", TypeError)):
        for lib in (ort, onnxruntime):
            with pytest.raises(error, match="Invalid logging severity" if error is RuntimeError
                               else None):
                lib.set_default_logger_severity(bad)
    with pytest.raises(TypeError):
        ort.set_default_logger_verbosity("1")


def test_optimized_model_filepath_onnx_gets_the_optimized_graph(tmp_path, cache):
    """The graph after the ONNX-level passes (c1 * c2 folded into one
    initializer), with the free-dimension override, as an ONNX model that
    onnxruntime runs with our results, at two values of the free dim."""
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh
    c1, c2 = np.arange(3, dtype=np.float32), np.full(3, -2, np.float32)
    g = h.make_graph([h.make_node("Mul", ["c1", "c2"], ["c"]),
                      h.make_node("Add", ["x", "c"], ["z"])], "folded",
                     [h.make_tensor_value_info("x", T.FLOAT, ["N", "S", 3])],
                     [h.make_tensor_value_info("z", T.FLOAT, ["N", "S", 3])],
                     [nh.from_array(c1, "c1"), nh.from_array(c2, "c2")])
    model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], ir_version=8,
                         model_version=4)
    so = ort.SessionOptions()
    so.optimized_model_filepath = str(tmp_path / "opt.onnx")
    so.add_free_dimension_override_by_name("N", 2)
    ours = ort.InferenceSession(model.SerializeToString(), so, cache_dir=cache)
    written = onnx.load(str(tmp_path / "opt.onnx"))
    onnx.checker.check_model(written)
    assert [n.op_type for n in written.graph.node] == ["Add"]      # Mul folded
    np.testing.assert_array_equal(nh.to_array(written.graph.initializer[0]), c1 * c2)
    x = written.graph.input[0].type.tensor_type.shape.dim
    assert (x[0].dim_value, x[1].dim_param) == (2, "S") and written.model_version == 4
    theirs = onnxruntime.InferenceSession(str(tmp_path / "opt.onnx"),
                                          providers=["CPUExecutionProvider"])
    for s in (1, 5):
        feed = {"x": np.random.default_rng(s).standard_normal((2, s, 3)).astype(np.float32)}
        np.testing.assert_array_equal(ours.run(None, feed)[0], theirs.run(None, feed)[0])


def test_optimized_model_filepath_onnx_falls_back_to_the_input_model(tmp_path, cache,
                                                                    monkeypatch):
    from onnx_mlir_py.inference import onnx_export
    monkeypatch.setattr(onnx_export, "export", lambda module: (None, "a test's reason"))
    so = ort.SessionOptions()
    so.optimized_model_filepath = str(tmp_path / "opt.onnx")
    with pytest.warns(OnnxMlirWarning, match="input model was written.*a test's reason"):
        ort.InferenceSession(multi_io().SerializeToString(), so, cache_dir=cache,
                             in_process=True)
    assert onnx.load(str(tmp_path / "opt.onnx")) == multi_io()
