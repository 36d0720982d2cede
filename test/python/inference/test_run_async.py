"""run_async against onnxruntime's: the callback gets the outputs, the
user data and "" on another thread (two batch sizes), or [] and the error's
message; a missing input raises at the call."""
import threading

import numpy as np
import onnxruntime
import pytest

import onnx_mlir_py as ort
from _models import add_model


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    data = add_model(["N", 3]).SerializeToString()
    so = onnxruntime.SessionOptions()
    so.intra_op_num_threads = 2         # onnxruntime's run_async needs a pool thread
    return (ort.InferenceSession(data, cache_dir=str(tmp_path_factory.mktemp("cache"))),
            onnxruntime.InferenceSession(data, so, providers=["CPUExecutionProvider"]))


def _async(sess, names, feed, user_data):
    done, got = threading.Event(), {}

    def callback(outputs, data, err):
        got.update(outputs=outputs, data=data, err=err, thread=threading.current_thread())
        done.set()

    assert sess.run_async(names, feed, callback, user_data) is None
    assert done.wait(120), "the callback was not called"
    return got


@pytest.mark.parametrize("n", [1, 6])
def test_callback_gets_onnxruntimes_results_on_another_thread(sessions, n):
    rng = np.random.default_rng(n)
    feed = {k: rng.standard_normal((n, 3)).astype(np.float32) for k in ("x", "y")}
    token = object()
    got, want = (_async(s, None, feed, token) for s in sessions)
    for g in (got, want):
        assert g["err"] == "" and g["data"] is token
        assert g["thread"] is not threading.main_thread()
    assert len(got["outputs"]) == len(want["outputs"]) == 1
    np.testing.assert_allclose(got["outputs"][0], want["outputs"][0], rtol=1e-6)


@pytest.mark.parametrize("case", ["dims", "dtype", "output_name"])
def test_errors_go_to_the_callback_as_onnxruntimes(sessions, case):
    x = np.ones((2, 3), np.float32)
    names, feed = {"dims": (None, {"x": np.ones((2, 4), np.float32), "y": x}),
                   "dtype": (None, {"x": np.ones((2, 3)), "y": x}),
                   "output_name": (["nope"], {"x": x, "y": x})}[case]
    got, want = (_async(s, names, feed, 1) for s in sessions)
    assert got["outputs"] == want["outputs"] == []
    with pytest.raises(Exception) as e:             # what run() says (test_session.py)
        sessions[0].run(names, feed)
    assert got["err"] == str(e.value)
    phrase = {"dims": "invalid dimensions for input: x", "dtype": "Unexpected input data type",
              "output_name": "Invalid output name"}[case]
    assert phrase in got["err"] and phrase in want["err"], (got["err"], want["err"])


def test_a_missing_input_raises_at_the_call(sessions):
    messages = []
    for s in sessions:
        with pytest.raises(ValueError) as e:
            s.run_async(None, {"x": np.ones((2, 3), np.float32)}, lambda *a: None, None)
        messages.append(str(e.value))
    assert messages[0] == messages[1]


def test_concurrent_calls_each_get_their_own_results(sessions):
    ours, theirs = sessions
    feeds = [{k: np.full((n, 3), n - 4, np.float32) for k in ("x", "y")} for n in range(1, 9)]
    results, left = {}, threading.Semaphore(0)

    def callback(outputs, n, err):
        results[n] = (outputs, err)
        left.release()

    for n, feed in enumerate(feeds):
        ours.run_async(["z"], feed, callback, n)
    for _ in feeds:
        assert left.acquire(timeout=120)
    for n, feed in enumerate(feeds):
        outputs, err = results[n]
        assert err == ""
        np.testing.assert_array_equal(outputs[0], theirs.run(["z"], feed)[0])
