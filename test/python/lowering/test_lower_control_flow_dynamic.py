"""If / Loop / Scan whose shapes are known only at run time, compiled once
and compared with onnxruntime at several shapes: If branches yielding
different static shapes of one rank (merged into dynamic dims, both branches
taken), Loop-carried values that grow across iterations, scan outputs with
dynamic per-iteration dims (and a run-time error where the iterations
disagree, as onnxruntime's), and clear errors where a rank is unknowable."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from onnx_mlir_py.errors import CompileError, OnnxMlirError
from onnx_mlir_py.runtime import RuntimeInputError

from dynamic_util import session, vi, vi_model

F = T.FLOAT


def _compare(model, sess, feeds):
    want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    got = sess.run([feeds[i.name] for i in model.graph.input])
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def _branch(name, node):
    return h.make_graph([node], name, [], [vi(node.output[0], None)])


def test_if_branches_of_different_static_shapes(tmp_path):
    """then: Concat(x, x) [2n, 3]; else: Neg(x) [n, 3]: the result is [?, 3]."""
    m = vi_model([h.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
                h.make_node("Greater", ["s", "zero"], ["c"]),
                h.make_node("If", ["c"], ["y"], name="if",
                            then_branch=_branch("t", h.make_node("Concat", ["x", "x"], ["t"],
                                                                 axis=0)),
                            else_branch=_branch("e", h.make_node("Neg", ["x"], ["e"])))],
               [vi("x", ["n", 3]), vi("zero", [])], [vi("y", None)])
    sess = session(m, tmp_path)
    for n in (2, 5):
        for sign in (1, -1):       # both branches
            x = sign * np.arange(1, 3 * n + 1, dtype=np.float32).reshape(n, 3)
            _compare(m, sess, {"x": x, "zero": np.array(0, np.float32)})


def test_if_branches_of_different_ranks_are_a_clear_error(tmp_path):
    m = vi_model([h.make_node("If", ["c"], ["y0"], name="the_if",
                            then_branch=_branch("t", h.make_node("Neg", ["x"], ["t"])),
                            else_branch=_branch("e", h.make_node("ReduceSum", ["x"], ["e"],
                                                                 keepdims=0))),
                h.make_node("Relu", ["y0"], ["y"])],
               [vi("x", [2, 3]), vi("c", [], T.BOOL)], [vi("y", None)])
    with pytest.raises(CompileError, match=r"node 'the_if' \(If\).*then_branch yields "
                                           r"tensor<2x3xf32> and else_branch tensor<f32>"):
        onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=0)
    # an If of unknowable rank inside the graph: refused by its own lowering
    m.graph.node[1].op_type = "Shape"
    m.graph.output[0].type.tensor_type.elem_type = T.INT64
    with pytest.raises(OnnxMlirError, match=r"node 'the_if' \(If\): output #0 is "
                                            r"tensor<2x3xf32> in then_branch and tensor<f32>"):
        onnx_mlir_py.compile(m, tmp_path / "m2.so", opt_level=0)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_if_scalar_or_one_element_into_broadcasts(tmp_path, opt_level):
    """then: a scalar, else: a [1] (AffineGrid's function body, step_d: test_
    affine_grid_3d_align_corners_expanded was refused): used only by a Mul with
    a rank-1 tensor and as CastLike's type, the rank cannot show, so the result
    is [1] and the scalar branch gets the unit dim. Both branches, 2 run-time
    lengths, vs onnxruntime; the same If as a graph output stays refused."""
    ifn = h.make_node("If", ["c"], ["s"], name="the_if",
                      then_branch=_branch("t", h.make_node("Identity", ["k"], ["t"])),
                      else_branch=_branch("e", h.make_node("Div", ["two", "d"], ["e"])))
    tail = [h.make_node("CastLike", ["x", "s"], ["xs"]), h.make_node("Mul", ["xs", "s"], ["y"])]
    ins = [vi("x", ["n"]), vi("c", [], T.BOOL), vi("k", []), vi("two", []), vi("d", [1])]
    m = vi_model([ifn] + tail, ins, [vi("y", None)])
    sess = session(m, tmp_path, opt_level)
    for n in (3, 6):
        for c in (True, False):
            _compare(m, sess, {"x": np.arange(n, dtype=np.float32), "c": np.array(c),
                               "k": np.array(0.5, np.float32), "two": np.array(2, np.float32),
                               "d": np.array([4], np.float32)})
    out = vi_model([ifn], ins[1:], [vi("s", None)])
    with pytest.raises(OnnxMlirError, match=r"node 'the_if' \(If\).*then_branch yields "
                                            r"tensor<f32> and else_branch tensor<1xf32>"):
        onnx_mlir_py.compile(out, tmp_path / "out.so", opt_level=0)


def _growing_loop(scan_of: str):
    """s <- Concat(s, x) (grows by x's rows every iteration); scan output:
    ``scan_of`` ('xi' = x * i, of one dynamic shape; 's_out' = the growing s)."""
    body = h.make_graph(
        [h.make_node("Concat", ["s_in", "x"], ["s_out"], axis=0),
         h.make_node("Identity", ["c_in"], ["c_out"]),
         h.make_node("Cast", ["i"], ["fi"], to=F),
         h.make_node("Mul", ["x", "fi"], ["xi"]),
         h.make_node("Identity", [scan_of], ["scan"])],
        "body", [vi("i", [], T.INT64), vi("c_in", [], T.BOOL), vi("s_in", None)],
        [vi("c_out", [], T.BOOL), vi("s_out", None), vi("scan", None)])
    return vi_model([h.make_node("Loop", ["M", "", "s0"], ["s", "scans"], body=body,
                               name="the_loop")],
                  [vi("M", [], T.INT64), vi("s0", ["k", 3]), vi("x", ["n", 3])],
                  [vi("s", None), vi("scans", None)])


def _loop_feeds(trips, k, n):
    return {"M": np.array(trips, np.int64),
            "s0": np.ones((k, 3), np.float32),
            "x": np.arange(3 * n, dtype=np.float32).reshape(n, 3)}


@pytest.mark.parametrize("opt_level", [0, 3])
def test_loop_carried_value_that_grows_and_dynamic_scan_output(tmp_path, opt_level):
    m = _growing_loop("xi")
    sess = session(m, tmp_path, opt_level)
    for trips, k, n in ((1, 1, 2), (3, 2, 4), (4, 0, 1)):
        _compare(m, sess, _loop_feeds(trips, k, n))


def test_loop_carried_type_is_dynamic_in_the_body(tmp_path):
    """The carried s starts [1, 3] and doubles every iteration; the body
    declares it [1, 3] -> [2, 3] (the first iteration's shapes). The body
    must not be compiled for those: its Shape must not fold to [2, 3].
    (onnxruntime folds it so and reports [2, 3] every iteration, and
    onnx.reference fails on this Loop: the expected values are written out.)"""
    body = h.make_graph(
        [h.make_node("Concat", ["s_in", "s_in"], ["s_out"], axis=0),
         h.make_node("Identity", ["c_in"], ["c_out"]),
         h.make_node("Shape", ["s_out"], ["shp"])],
        "body", [vi("i", [], T.INT64), vi("c_in", [], T.BOOL), vi("s_in", [1, 3])],
        [vi("c_out", [], T.BOOL), vi("s_out", [2, 3]), vi("shp", [2], T.INT64)])
    m = vi_model([h.make_node("Loop", ["M", "", "s0"], ["s", "shapes"], body=body)],
               [vi("M", [], T.INT64), vi("s0", [1, 3])],
               [vi("s", None), vi("shapes", None, T.INT64)])
    sess = session(m, tmp_path)
    s0 = np.arange(3, dtype=np.float32).reshape(1, 3)
    for trips in (1, 3):
        s, shapes = sess.run([np.array(trips, np.int64), s0])
        np.testing.assert_array_equal(s, np.tile(s0, (2 ** trips, 1)))
        assert shapes.tolist() == [[2 ** (j + 1), 3] for j in range(trips)]


def test_scan_output_whose_iterations_differ_is_a_run_time_error(tmp_path):
    m = _growing_loop("s_out")
    sess = session(m, tmp_path)
    _compare(m, sess, _loop_feeds(1, 1, 2))        # one iteration: fine
    feeds = _loop_feeds(3, 2, 4)
    with pytest.raises(Exception, match="Inconsistent shape"):
        ort.InferenceSession(m.SerializeToString()).run(None, feeds)
    with pytest.raises(RuntimeInputError, match=r"node 'the_loop' \(Loop\): scan output #0: "
                                                r"an iteration yields dim 0 = 10, but the "
                                                r"output has 6 there"):
        sess.run(list(feeds.values()))


@pytest.mark.parametrize("out_axis", [0, 1])
def test_scan_with_dynamic_per_iteration_dims(tmp_path, out_axis):
    """Scan over x [T, n, 3] (T, n dynamic): state += x_t; scan output 2 * x_t
    of shape [n, 3] stacked along ``out_axis``."""
    body = h.make_graph(
        [h.make_node("ReduceSum", ["x_t", "ax"], ["r"], keepdims=0),
         h.make_node("Add", ["acc_in", "r"], ["acc_out"]),
         h.make_node("Add", ["x_t", "x_t"], ["y_t"])],
        "body", [vi("acc_in", [3]), vi("x_t", ["n", 3])],
        [vi("acc_out", [3]), vi("y_t", ["n", 3])])
    ax = onnx.numpy_helper.from_array(np.array([0], np.int64), "ax")
    body.initializer.append(ax)
    m = vi_model([h.make_node("Scan", ["acc0", "x"], ["acc", "ys"], body=body, num_scan_inputs=1,
                            scan_output_axes=[out_axis])],
               [vi("acc0", [3]), vi("x", ["T", "n", 3])], [vi("acc", [3]), vi("ys", None)])
    sess = session(m, tmp_path)
    rng = np.random.default_rng(0)
    for t, n in ((2, 3), (4, 1)):
        _compare(m, sess, {"acc0": rng.standard_normal(3).astype(np.float32),
                           "x": rng.standard_normal((t, n, 3)).astype(np.float32)})


@pytest.mark.parametrize("opt_level", [0, 3])
def test_loop_scan_output_of_unsigned_elements_with_a_dynamic_dim(tmp_path, opt_level):
    """A uint8 loop-carried value of a dynamic dim, also the scan output
    (fuzz case s3120-2): the scan buffer made at the first iteration took
    the body value's ONNX element type (ui8), not the accumulator's (i8),
    and the compile failed with "'tensor.cast' op ... cast incompatible"."""
    body = h.make_graph(
        [h.make_node("Identity", ["c_in"], ["c_out"]),
         h.make_node("Cast", ["i"], ["iu"], to=T.UINT8),
         h.make_node("Add", ["v_in", "iu"], ["v_out"]),
         h.make_node("Identity", ["v_out"], ["scan"])],
        "body", [vi("i", [], T.INT64), vi("c_in", [], T.BOOL), vi("v_in", None, T.UINT8)],
        [vi("c_out", [], T.BOOL), vi("v_out", None, T.UINT8), vi("scan", None, T.UINT8)])
    m = vi_model([h.make_node("Flatten", ["x"], ["f"], axis=0),
                  h.make_node("Loop", ["M", "", "f"], ["v", "scans"], body=body, name="loop")],
                 [vi("M", [], T.INT64), vi("x", [2, "n", 3], T.UINT8)],
                 [vi("v", None, T.UINT8), vi("scans", None, T.UINT8)])
    sess = session(m, tmp_path, opt_level)
    for trips, n in ((3, 1), (2, 4), (1, 0)):
        x = (np.arange(6 * n) % 250).astype(np.uint8).reshape(2, n, 3)
        _compare(m, sess, {"M": np.array(trips, np.int64), "x": x})


def _scan8_model(with_lens: bool, directions=(0, 1)):
    """Scan v8 over x, w [B, T, 3] (B, T dynamic), state acc [B, 3]: acc +=
    x_t * w_t; scan outputs acc and x_t - w_t (w read in reverse with
    directions [0, 1])."""
    body = h.make_graph(
        [h.make_node("Mul", ["x_t", "w_t"], ["p"]),
         h.make_node("Add", ["acc_in", "p"], ["acc_out"]),
         h.make_node("Identity", ["acc_out"], ["y_t"]),
         h.make_node("Sub", ["x_t", "w_t"], ["d_t"])],
        "body", [vi("acc_in", [3]), vi("x_t", [3]), vi("w_t", [3])],
        [vi("acc_out", [3]), vi("y_t", [3]), vi("d_t", [3])])
    ins = [vi("acc0", ["B", 3]), vi("x", ["B", "T", 3]), vi("w", ["B", "T", 3])]
    if with_lens:
        ins = [vi("lens", ["B"], T.INT64)] + ins
    node = h.make_node("Scan", ["lens" if with_lens else "", "acc0", "x", "w"],
                       ["acc", "ys", "ds"], body=body, num_scan_inputs=2,
                       directions=list(directions), name="scan8")
    return vi_model([node], ins, [vi("acc", None), vi("ys", None), vi("ds", None)], opset=8)


def _scan8_feeds(rng, b, t, lens=None):
    f = {"acc0": rng.standard_normal((b, 3)).astype(np.float32),
         "x": rng.standard_normal((b, t, 3)).astype(np.float32),
         "w": rng.standard_normal((b, t, 3)).astype(np.float32)}
    return f if lens is None else {"lens": np.array(lens, np.int64), **f}


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("directions", [(0, 1), (1, 0)])
def test_scan_v8_batch_dynamic(tmp_path, directions, opt_level):
    """Scan v8 (leading batch dim, no sequence_lens): compiled once, 2 shapes
    vs onnxruntime."""
    m = _scan8_model(False, directions)
    sess = session(m, tmp_path, opt_level)
    rng = np.random.default_rng(8)
    for b, t in ((2, 4), (3, 1)):
        _compare(m, sess, _scan8_feeds(rng, b, t))


@pytest.mark.parametrize("opt_level", [0, 3])
def test_scan_v8_sequence_lens(tmp_path, opt_level):
    """sequence_lens: row b runs lens[b] steps (reverse inputs within them);
    the scan outputs' later slots are zeros, as onnxruntime."""
    m = _scan8_model(True)
    sess = session(m, tmp_path, opt_level)
    rng = np.random.default_rng(9)
    for b, t, lens in ((3, 4, [4, 2, 1]), (2, 5, [1, 5])):
        _compare(m, sess, _scan8_feeds(rng, b, t, lens))


def test_scan_v8_sequence_lens_out_of_range(tmp_path):
    m = _scan8_model(True)
    sess = session(m, tmp_path)
    feeds = _scan8_feeds(np.random.default_rng(1), 2, 3, [1, 4])
    with pytest.raises(RuntimeInputError, match=r"node 'scan8' \(Scan\): sequence_lens\[1\] = 4 "
                                                r"is outside \[0, the sequence length 3\]"):
        sess.run([feeds[i.name] for i in m.graph.input])
