"""TensorScatter (opset 24) vs onnx.reference: linear and circular, with and
without write_indices, axis -2 and another axis, 3-D and 4-D caches, f32 and
f16, dynamic batch and dynamic sequence length at two shapes each, -O0 and
-O3; in mode linear a write past the cache (or a negative write index) fails
naming the node."""
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession, RuntimeInputError

NP = {T.FLOAT: np.float32, T.FLOAT16: np.float16}


def _model(cache_shape, upd_shape, elem, mode, axis, with_wi, w_dim=None):
    ins = ["c", "u"] + (["w"] if with_wi else [])
    attrs = {"mode": mode} if mode is not None else {}
    if axis is not None:
        attrs["axis"] = axis
    node = h.make_node("TensorScatter", ins, ["y"], name="ts", **attrs)
    vis = [h.make_tensor_value_info("c", elem, cache_shape),
           h.make_tensor_value_info("u", elem, upd_shape)]
    if with_wi:
        vis.append(h.make_tensor_value_info("w", T.INT64, [w_dim or cache_shape[0]]))
    g = h.make_graph([node], "g", vis, [h.make_tensor_value_info("y", elem, cache_shape)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 24)])
    m.ir_version = 10
    return m


def _feeds(rng, cshape, ushape, dt, with_wi, mode, ax):
    c = rng.standard_normal(cshape).astype(dt)
    u = rng.standard_normal(ushape).astype(dt)
    feeds = {"c": c, "u": u}
    if with_wi:
        room = cshape[ax] - ushape[ax]
        if mode == "circular":   # wrap around, negative and past-the-end indices
            w = rng.integers(-2 * cshape[ax], 2 * cshape[ax], cshape[0])
        else:                    # both ends of the allowed range
            w = rng.integers(0, room + 1, cshape[0])
            w[0], w[-1] = room, 0
        feeds["w"] = w.astype(np.int64)
    return feeds


def _run(tmp_path, m, shapes, dt, with_wi, mode, ax, opt_level):
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=opt_level))
    ref = ReferenceEvaluator(m)
    rng = np.random.default_rng(0)
    for cshape, ushape in shapes:
        feeds = _feeds(rng, cshape, ushape, dt, with_wi, mode, ax)
        (got,) = sess.run(list(feeds.values()))
        (want,) = ref.run(None, feeds)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert not np.array_equal(want, feeds["c"])   # the update landed somewhere
        np.testing.assert_array_equal(got, want)
    return sess


CASES = [  # cache, update (static), axis attr (None: default -2), normalized axis
    ((2, 3, 6, 4), (2, 3, 2, 4), None, 2),   # [batch, heads, max_seq, head_dim]
    ((2, 3, 6, 4), (2, 3, 6, 4), -2, 2),     # update fills the cache
    ((3, 5, 4), (3, 2, 4), None, 1),         # [batch, max_seq, hidden]
    ((3, 5, 4), (3, 1, 4), 1, 1),
    ((2, 3, 4, 7), (2, 3, 4, 3), -1, 3),     # sequence axis last
    ((2, 5, 3, 4), (2, 2, 3, 4), 1, 1),      # [batch, max_seq, heads, head_dim]
]


@pytest.mark.parametrize("cshape, ushape, axis, ax", CASES)
@pytest.mark.parametrize("mode", [None, "linear", "circular"])
@pytest.mark.parametrize("with_wi", [True, False])
@pytest.mark.parametrize("elem", [T.FLOAT, T.FLOAT16])
def test_static(tmp_path, cshape, ushape, axis, ax, mode, with_wi, elem):
    m = _model(cshape, ushape, elem, mode, axis, with_wi)
    _run(tmp_path, m, [(cshape, ushape)], NP[elem], with_wi, mode, ax, 0)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("mode", ["linear", "circular"])
@pytest.mark.parametrize("elem", [T.FLOAT, T.FLOAT16])
def test_dynamic_batch_and_seq(tmp_path, opt_level, mode, elem):
    """4-D cache, dynamic batch and update length, two run-time shapes."""
    m = _model(["b", 2, 8, 4], ["b", 2, "s", 4], elem, mode, -2, True, w_dim="nb")
    sess = _run(tmp_path, m, [((3, 2, 8, 4), (3, 2, 1, 4)), ((1, 2, 8, 4), (1, 2, 5, 4))],
                NP[elem], True, mode, 2, opt_level)
    dt = NP[elem]
    c, u = np.zeros((2, 2, 8, 4), dt), np.ones((2, 2, 9, 4), dt)
    with pytest.raises(RuntimeInputError, match=r"node 'ts' \(TensorScatter\): update's "
                                                r"sequence length 9 \(axis 2\) exceeds"):
        sess.run([c, u, np.zeros(2, np.int64)])
    with pytest.raises(RuntimeInputError, match="write_indices dim 0 is 3 but past_cache"):
        sess.run([c, u[:, :, :2], np.zeros(3, np.int64)])


@pytest.mark.parametrize("opt_level", [0, 3])
def test_dynamic_3d_no_write_indices(tmp_path, opt_level):
    m = _model(["b", 6, 3], ["b", "s", 3], T.FLOAT, "linear", 1, False)
    _run(tmp_path, m, [((2, 6, 3), (2, 4, 3)), ((5, 6, 3), (5, 6, 3))], np.float32, False,
         "linear", 1, opt_level)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_linear_out_of_range(tmp_path, opt_level):
    """A write past max_seq or a negative write index: an error naming the
    node, never a write out of bounds."""
    m = _model(["b", 2, 8, 4], ["b", 2, "s", 4], T.FLOAT, "linear", -2, True)
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=opt_level))
    c, u = np.zeros((2, 2, 8, 4), np.float32), np.ones((2, 2, 3, 4), np.float32)
    (got,) = sess.run([c, u, np.array([5, 0], np.int64)])   # 5 + 3 == 8: the last fit
    assert got[0, :, 5:].all() and not got[0, :, :5].any() and got[1, :, :3].all()
    for w, bad in [([6, 0], 6), ([0, -1], -1), ([2, 100], 100)]:
        with pytest.raises(RuntimeInputError,
                           match=rf"node 'ts' \(TensorScatter\): write index {bad} is out of "
                                 r"range \[0, 5\]"):
            sess.run([c, u, np.array(w, np.int64)])
    # the same indices are fine in circular mode (they wrap)
    mc = _model(["b", 2, 8, 4], ["b", 2, "s", 4], T.FLOAT, "circular", -2, True)
    sc = ExecutionSession(onnx_mlir_py.compile(mc, tmp_path / "c.so", opt_level=opt_level))
    feeds = {"c": c, "u": u, "w": np.array([6, -1], np.int64)}
    np.testing.assert_array_equal(sc.run(list(feeds.values()))[0],
                                  ReferenceEvaluator(mc).run(None, feeds)[0])
