"""Dropout lowering: inference vs onnx.reference; training (run-time
training_mode and ratio) by its deterministic cases vs onnx.reference and
the statistics of the random ones."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from bool_check import check

R = np.random.default_rng(5)
N = helper.make_node


@pytest.mark.parametrize("opset", [10, 12, 13, 22])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_dropout_inference_with_mask(opset, dt):
    x = R.standard_normal((3, 4)).astype(dt)
    nodes = [N("Dropout", ["x"], ["y", "mask"]), N("Identity", ["mask"], ["m"])]
    check(nodes, {"x": x}, ["y", "m"], opset=opset, compiled=True)


def test_dropout_opset7():
    # (v7's mask has the input type; the reference returns a bool mask, so only y)
    x = R.standard_normal((3, 4)).astype(np.float32)
    check([N("Dropout", ["x"], ["y"], ratio=0.2), N("Relu", ["y"], ["z"])], {"x": x}, ["z"],
          opset=7)


def test_dropout_training_mode_false_constant():
    x = R.standard_normal((3, 4)).astype(np.float32)
    inits = [("r", np.array(0.3, np.float32)), ("t", np.array(False))]
    check([N("Dropout", ["x", "r", "t"], ["y"])], {"x": x}, ["y"], inits=inits, opset=13)


def _train_model(ratio_input=True, mask=True, seed=None):
    from dynamic_util import model
    from onnx import TensorProto as T
    kw = {} if seed is None else {"seed": seed}
    ins = [("x", T.FLOAT, ["n", "m"]), ("r", T.FLOAT, []), ("t", T.BOOL, [])]
    node = N("Dropout", ["x", "r" if ratio_input else "", "t"], ["y", "mask"] if mask else ["y"],
             name="drop", **kw)
    outs = [("y", T.FLOAT, None)] + ([("mask", T.BOOL, None)] if mask else [])
    return model([node], ins if ratio_input else [ins[0], ins[2]], outs, opset=13)


def _session(m, tmp_path, opt_level=0):
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    return ExecutionSession(onnx_mlir_py.compile(m, tmp_path / f"m{opt_level}.so",
                                                 opt_level=opt_level))


@pytest.mark.parametrize("opt_level", [0, 3])
def test_training_mode_at_run_time_zero_ratio_and_false(tmp_path, opt_level):
    """training_mode known only at run time (was refused): ratio 0 or
    training false give y = x and an all-true mask (onnx.reference), at two
    shapes."""
    from dynamic_util import check_shapes
    m = _train_model()
    feeds = [{"x": R.standard_normal(s).astype(np.float32), "r": np.array(r, np.float32),
              "t": np.array(t)} for s, r, t in (((3, 4), 0.0, True), ((5, 2), 0.4, False),
                                               ((1, 7), 0.0, False))]
    check_shapes(tmp_path, m, feeds, opt_level)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_training_keeps_the_ratio_and_scales(tmp_path, opt_level):
    """ratio 0.3 in training: about 70 % kept (10^5 draws: within 1 %), kept
    values x / 0.7, dropped ones 0, the mask says which; seeded: the same
    draws run after run, another seed other draws."""
    m = _train_model(seed=3)
    sess = _session(m, tmp_path, opt_level)
    x = R.standard_normal((200, 500)).astype(np.float32) + 5
    y, mask = sess.run([x, np.array(0.3, np.float32), np.array(True)])
    assert abs(mask.mean() - 0.7) < 0.01
    np.testing.assert_allclose(y[mask], x[mask] / np.float32(0.7), rtol=1e-6)
    assert not y[~mask].any()
    y2, mask2 = sess.run([x, np.array(0.3, np.float32), np.array(True)])
    assert (mask2 == mask).all() and (y2 == y).all()
    other = _session(_train_model(seed=4), tmp_path / "o")
    assert (other.run([x, np.array(0.3, np.float32), np.array(True)])[1] != mask).any()


def test_training_default_ratio_constant_training_mode(tmp_path):
    """training_mode a constant true, no ratio input: ratio 0.5."""
    from dynamic_util import model
    from onnx import TensorProto as T
    from onnx import numpy_helper as nh
    m = model([N("Dropout", ["x", "", "t"], ["y"], name="drop")], [("x", T.FLOAT, [100, 100])],
              [("y", T.FLOAT, None)], opset=13, inits=[nh.from_array(np.array(True), "t")])
    x = np.ones((100, 100), np.float32)
    (y,) = _session(m, tmp_path).run([x])
    assert set(np.unique(y).tolist()) == {0.0, 2.0} and abs((y == 2).mean() - 0.5) < 0.03


def test_training_ratio_out_of_range_at_run_time(tmp_path):
    from onnx_mlir_py.runtime import RuntimeInputError
    sess = _session(_train_model(mask=False), tmp_path)
    with pytest.raises(RuntimeInputError, match=r"node 'drop' \(Dropout\): ratio must be in "
                                                r"\[0, 1\)"):
        sess.run([np.ones((2, 2), np.float32), np.array(1.0, np.float32), np.array(True)])
