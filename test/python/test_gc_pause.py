"""gc_pause.fewer_collections: the compile's collector thresholds, and the
caller's put back (#29)."""
import gc
import os
import threading

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import onnx_mlir_py
from onnx_mlir_py.gc_pause import THRESHOLD0, fewer_collections


@pytest.fixture(autouse=True)
def _keep_thresholds():
    saved = gc.get_threshold()
    yield
    gc.set_threshold(*saved)


def test_raised_inside_and_restored():
    gc.set_threshold(700, 11, 12)
    with fewer_collections():
        assert gc.get_threshold() == (THRESHOLD0, 11, 12)
        with fewer_collections():           # nested: one pause
            assert gc.get_threshold() == (THRESHOLD0, 11, 12)
        assert gc.get_threshold() == (THRESHOLD0, 11, 12)
    assert gc.get_threshold() == (700, 11, 12)


def test_restored_after_an_error():
    gc.set_threshold(500, 10, 10)
    try:
        with fewer_collections():
            raise ValueError("x")
    except ValueError:
        pass
    assert gc.get_threshold() == (500, 10, 10)


def test_callers_larger_threshold_and_disabled_collector_left():
    gc.set_threshold(50000, 10, 10)
    with fewer_collections():
        assert gc.get_threshold() == (50000, 10, 10)
    assert gc.get_threshold() == (50000, 10, 10)
    gc.set_threshold(0, 10, 10)             # threshold 0: automatic collection off
    with fewer_collections():
        assert gc.get_threshold()[0] == 0
    assert gc.get_threshold()[0] == 0


def test_threshold_the_program_sets_meanwhile_stays():
    gc.set_threshold(700, 10, 10)
    with fewer_collections():
        gc.set_threshold(1234, 10, 10)
    assert gc.get_threshold() == (1234, 10, 10)


def test_concurrent_pauses_end_with_the_last():
    gc.set_threshold(700, 10, 10)
    inside, release = threading.Event(), threading.Event()

    def other():
        with fewer_collections():
            inside.set()
            release.wait(10)

    t = threading.Thread(target=other)
    t.start()
    assert inside.wait(10)
    with fewer_collections():
        pass
    assert gc.get_threshold()[0] == THRESHOLD0      # the other thread's pause goes on
    release.set()
    t.join(10)
    assert gc.get_threshold() == (700, 10, 10)


def test_compile_runs_with_fewer_collections_and_restores(tmp_path):
    gc.set_threshold(700, 10, 10)
    seen = []
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    model = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                                                [x], [y]),
                              opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    from onnx_mlir_py.timings import Timings

    class Listen:
        def enter(self, name):
            seen.append(gc.get_threshold()[0])

        def leave(self, name):
            pass
    tm = Timings()
    tm.listener = Listen()
    so = onnx_mlir_py.compile(str(path), output=str(tmp_path / "m.so"), opt_level=0,
                              timings=tm)
    assert seen and all(t == THRESHOLD0 for t in seen)
    assert gc.get_threshold() == (700, 10, 10)
    sess = onnx_mlir_py.ExecutionSession(so)
    a = np.array([[-1, 2, -3], [4, -5, 6]], np.float32)
    np.testing.assert_array_equal(sess.run([a])[0], np.maximum(a, 0))
    assert os.path.exists(so)
