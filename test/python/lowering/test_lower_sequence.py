"""Sequence and Optional values at run time (passes/onnx_to_linalg/sequence.py,
runtime/c/om_seq.c): compiled once with dynamic dims, compared with
onnx.reference / onnxruntime at several run-time shapes and lengths;
positions out of range fail naming the node; sequences and optionals cross
the Python API as lists and None; no memory is leaked across runs."""
import ctypes

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from onnx_mlir_py.runtime import RuntimeInputError

from dynamic_util import session, vi, vi_model

F = T.FLOAT


def _seq_t(elem=F, shape=None):
    return h.make_sequence_type_proto(h.make_tensor_type_proto(elem, shape))


def _model(nodes, inputs, outputs, opset=18):
    return vi_model(nodes, inputs, outputs, opset)


def _same(got, want):
    if want is None:
        assert got is None
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w)
    else:
        want = np.asarray(want)
        assert got.shape == want.shape and got.dtype == want.dtype, (got, want)
        np.testing.assert_array_equal(got, want)


def _check(model, sess, feeds, engine="reference"):
    if engine == "reference":
        want = ReferenceEvaluator(model).run(None, feeds)
    else:
        want = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    got = sess.run([feeds[i.name] for i in model.graph.input])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _same(g, w)


def _ops_model():
    nodes = [h.make_node("SequenceConstruct", ["x", "y"], ["s"]),
             h.make_node("SequenceInsert", ["s", "x", "p"], ["s2"]),
             h.make_node("SequenceAt", ["s2", "q"], ["a"], name="at"),
             h.make_node("SequenceLength", ["s2"], ["n"]),
             h.make_node("ConcatFromSequence", ["s2"], ["c"], axis=0),
             h.make_node("ConcatFromSequence", ["s"], ["c2"], axis=-1, new_axis=1),
             h.make_node("SequenceErase", ["s2", "q"], ["s3"], name="erase")]
    return _model(nodes, [vi("x", ["n", 3]), vi("y", ["m", 3]), vi("p", [], T.INT64),
                          vi("q", [], T.INT32)],
                  [vi("a", None), vi("n", None, T.INT64), vi("c", None),
                   h.make_value_info("c2", h.make_tensor_type_proto(F, None)),
                   h.make_value_info("s3", _seq_t())])


@pytest.mark.parametrize("opt_level", [0, 3])
def test_sequence_ops_match_reference(tmp_path, opt_level):
    m = _ops_model()
    sess = session(m, tmp_path, opt_level)
    rng = np.random.default_rng(0)
    for (n, k), p, q in [((2, 2), 1, -1), ((4, 4), 0, 2), ((1, 1), -2, 0)]:
        feeds = {"x": rng.random((n, 3), np.float32), "y": rng.random((k, 3), np.float32),
                 "p": np.array(p, np.int64), "q": np.array(q, np.int32)}
        _check(m, sess, feeds)


@pytest.mark.parametrize("new_axis, axis", [(0, 0), (0, -1), (1, 0), (1, -1)])
def test_concat_from_sequence_at_run_time(tmp_path, new_axis, axis):
    """A sequence input of run-time length; elements that disagree off the
    axis are a run-time error naming the node, not garbage."""
    m = _model([h.make_node("ConcatFromSequence", ["s"], ["c"], axis=axis, new_axis=new_axis,
                            name="cat")],
               [h.make_value_info("s", _seq_t(F, ["a", "b"]))], [vi("c", None)])
    sess = session(m, tmp_path)
    rng = np.random.default_rng(3)
    for shapes in ([(2, 3)], [(2, 3), (2, 3), (2, 3)]):
        _check(m, sess, {"s": [rng.random(sh, np.float32) for sh in shapes]}, "onnxruntime")
    if not new_axis:
        _check(m, sess, {"s": [rng.random(sh, np.float32) for sh in
                               ([(1, 3), (4, 3)] if axis == 0 else [(2, 1), (2, 5)])]},
               "onnxruntime")
    bad = [np.zeros((2, 3), np.float32), np.zeros((3, 4), np.float32)]
    with pytest.raises(RuntimeInputError, match=r"node 'cat' \(ConcatFromSequence\): element 1 "
                                                r"has \d along dim \d, element 0 has \d"):
        sess.run([bad])
    with pytest.raises(RuntimeInputError, match=r"node 'cat' .*the sequence is empty"):
        sess.run([[]])


@pytest.mark.parametrize("q, node", [(3, "at"), (-4, "at")])
def test_position_out_of_range_names_the_node(tmp_path, q, node):
    m = _ops_model()
    sess = session(m, tmp_path)
    x = np.ones((2, 3), np.float32)
    with pytest.raises(RuntimeInputError, match=rf"node '{node}' \(SequenceAt\): position "
                                                rf"{q} is out of range \[-3, 2\]"):
        sess.run([x, x, np.array(0, np.int64), np.array(q, np.int32)])


def test_insert_position_out_of_range(tmp_path):
    m = _model([h.make_node("SequenceInsert", ["s", "x", "p"], ["o"], name="ins")],
               [h.make_value_info("s", _seq_t(F, ["n"])), vi("x", ["n"]),
                vi("p", [], T.INT64)], [h.make_value_info("o", _seq_t(F, ["n"]))])
    sess = session(m, tmp_path)
    s = [np.arange(3, dtype=np.float32), np.arange(3, dtype=np.float32) + 5]
    x = np.full(3, 9, np.float32)
    # at the end (position n) is allowed; onnx.reference inserts at the front
    # there ((pos + n) % n), onnxruntime at the end, as the spec says
    _check(m, sess, {"s": s, "x": x, "p": np.array(2, np.int64)}, "onnxruntime")
    _same(sess.run([s, x, np.array(2, np.int64)]), [s + [x]])
    _check(m, sess, {"s": s, "x": x, "p": np.array(-2, np.int64)}, "onnxruntime")
    _same(sess.run([[], x, np.array(0, np.int64)]), [[x]])
    with pytest.raises(RuntimeInputError, match=r"node 'ins' \(SequenceInsert\): position 3 "
                                                r"is out of range \[-2, 2\]"):
        sess.run([s, x, np.array(3, np.int64)])


def test_erase_from_empty_sequence_fails(tmp_path):
    m = _model([h.make_node("SequenceErase", ["s"], ["o"], name="er")],
               [h.make_value_info("s", _seq_t(F, [2]))],
               [h.make_value_info("o", _seq_t(F, [2]))])
    sess = session(m, tmp_path)
    _check(m, sess, {"s": [np.ones(2, np.float32), np.zeros(2, np.float32)]})
    with pytest.raises(RuntimeInputError, match=r"node 'er' \(SequenceErase\): the sequence "
                                                r"is empty"):
        sess.run([[]])


def test_sequence_input_elements_are_checked(tmp_path):
    m = _model([h.make_node("SequenceLength", ["s"], ["n"])],
               [h.make_value_info("s", _seq_t(F, ["a", 2]))], [vi("n", [], T.INT64)])
    sess = session(m, tmp_path)
    assert '"kind": "seq"' in sess.input_signature()
    _check(m, sess, {"s": [np.ones((1, 2), np.float32), np.ones((4, 2), np.float32)]})
    with pytest.raises(RuntimeInputError, match=r"element 1: dimension 1: expected 2, got 3"):
        sess.run([[np.ones((1, 2), np.float32), np.ones((1, 3), np.float32)]])
    with pytest.raises(RuntimeInputError, match="expected a list of numpy arrays"):
        sess.run([np.ones((1, 2), np.float32)])


@pytest.mark.parametrize("split, keepdims", [(None, 1), (None, 0), ("scalar", 1), ("list", 1)])
def test_split_to_sequence(tmp_path, split, keepdims):
    ins = [vi("x", ["n", 4])]
    names = ["x"]
    if split == "scalar":
        ins.append(vi("sp", [], T.INT64))
        names.append("sp")
    elif split == "list":
        ins.append(vi("sp", [2], T.INT64))
        names.append("sp")
    nodes = [h.make_node("SplitToSequence", names, ["s"], axis=0, keepdims=keepdims),
             h.make_node("SequenceLength", ["s"], ["n"])]
    m = _model(nodes, ins, [h.make_value_info("s", _seq_t(F, None)),
                            vi("n", [], T.INT64)])
    sess = session(m, tmp_path)
    rng = np.random.default_rng(1)
    for rows in (3, 5):
        feeds = {"x": rng.random((rows, 4), np.float32)}
        if split == "scalar":
            feeds["sp"] = np.array(2, np.int64)        # uneven: the last piece is shorter
        elif split == "list":
            feeds["sp"] = np.array([1, rows - 1], np.int64)
        _check(m, sess, feeds, "onnxruntime")
    if split == "list":
        with pytest.raises(RuntimeInputError, match="split sizes add up to 4, the axis has 3"):
            sess.run([rng.random((3, 4), np.float32), np.array([1, 3], np.int64)])


def test_optional_values(tmp_path):
    opt_t = h.make_optional_type_proto(h.make_tensor_type_proto(F, ["n"]))
    nodes = [h.make_node("OptionalHasElement", ["o"], ["has"]),
             h.make_node("Optional", ["x"], ["o2"]),
             h.make_node("OptionalGetElement", ["o2"], ["x2"]),
             h.make_node("Optional", [], ["none"], type=h.make_tensor_type_proto(F, ["n"])),
             h.make_node("OptionalHasElement", ["none"], ["has_none"])]
    m = _model(nodes, [h.make_value_info("o", opt_t), vi("x", ["n"])],
               [vi("has", [], T.BOOL), vi("x2", ["n"]), vi("has_none", [], T.BOOL),
                h.make_value_info("o2", opt_t)])
    sess = session(m, tmp_path)
    x = np.arange(4, dtype=np.float32)
    for o in (None, np.ones(2, np.float32)):
        got = sess.run([o, x])
        _same(got, [np.array(o is not None), x, np.array(False), x])


def test_optional_get_element_of_empty_fails(tmp_path):
    opt_t = h.make_optional_type_proto(h.make_tensor_type_proto(F, [2]))
    m = _model([h.make_node("OptionalGetElement", ["o"], ["y"], name="get")],
               [h.make_value_info("o", opt_t)], [vi("y", [2])])
    sess = session(m, tmp_path)
    _same(sess.run([np.ones(2, np.float32)]), [np.ones(2, np.float32)])
    with pytest.raises(RuntimeInputError, match=r"node 'get' \(OptionalGetElement\): the "
                                                r"optional is empty"):
        sess.run([None])


def test_loop_carrying_a_sequence(tmp_path):
    """A Loop appends x * i to a sequence each iteration: trip counts 0, 1, 4."""
    body = h.make_graph(
        [h.make_node("Cast", ["i"], ["fi"], to=F),
         h.make_node("Mul", ["x", "fi"], ["xi"]),
         h.make_node("SequenceInsert", ["s_in", "xi"], ["s_out"]),
         h.make_node("Identity", ["cond"], ["c_out"])],
        "body", [vi("i", [], T.INT64), vi("cond", [], T.BOOL),
                 h.make_value_info("s_in", _seq_t(F, ["n"]))],
        [vi("c_out", [], T.BOOL), h.make_value_info("s_out", _seq_t(F, ["n"]))])
    nodes = [h.make_node("SequenceEmpty", [], ["s0"], dtype=F),
             h.make_node("Loop", ["M", "", "s0"], ["s"], body=body),
             h.make_node("SequenceLength", ["s"], ["len"])]
    m = _model(nodes, [vi("M", [], T.INT64), vi("x", ["n"])],
               [h.make_value_info("s", _seq_t(F, ["n"])), vi("len", [], T.INT64)])
    sess = session(m, tmp_path)
    for trips, n in [(0, 3), (1, 2), (4, 5)]:
        _check(m, sess, {"M": np.array(trips, np.int64),
                         "x": np.arange(n, dtype=np.float32)}, "onnxruntime")


def _in_use_bytes() -> int:
    class MallInfo2(ctypes.Structure):
        _fields_ = [(n, ctypes.c_size_t) for n in
                    ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                     "uordblks", "fordblks", "keepcost")]
    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = MallInfo2
    info = libc.mallinfo2()
    return info.uordblks + info.hblkhd


def test_runs_free_every_element(tmp_path):
    """Every element record and buffer of a run is freed (once: glibc aborts on
    a double free), also when a check fails half-way: 300 runs of 1 MB
    sequences leave the heap where it was."""
    m = _ops_model()
    sess = session(m, tmp_path)
    x = np.ones((20000, 3), np.float32)
    good = [x, x, np.array(0, np.int64), np.array(1, np.int32)]
    bad = [x, x, np.array(0, np.int64), np.array(9, np.int32)]
    for _ in range(5):
        sess.run(good)
    before = _in_use_bytes()
    for k in range(300):
        if k % 3:
            sess.run(good)
        else:
            with pytest.raises(RuntimeInputError):
                sess.run(bad)
    assert _in_use_bytes() - before < 2 << 20


# -- the compile-time fast path (passes/sequence_to_tensors.py) ----------------------
def _torch_split_model(opset):
    """torch.onnx.export's chunk/unbind pattern: SplitToSequence with constant
    sizes (and without, keepdims=0) read back by constant positions."""
    from onnx import numpy_helper
    nodes = [h.make_node("SplitToSequence", ["x", "sp"], ["s"], axis=1),
             h.make_node("SequenceAt", ["s", "i0"], ["a"]),
             h.make_node("SequenceAt", ["s", "i1"], ["b"]),
             h.make_node("Add", ["a", "b"], ["y"]),
             h.make_node("SequenceLength", ["s"], ["n"]),
             h.make_node("SplitToSequence", ["x"], ["s2"], axis=1, keepdims=0),
             h.make_node("ConcatFromSequence", ["s2"], ["c"], axis=0, new_axis=1)]
    inits = [numpy_helper.from_array(np.array([1, 3], np.int64), "sp"),
             numpy_helper.from_array(np.array(0, np.int64), "i0"),
             numpy_helper.from_array(np.array(-1, np.int64), "i1")]
    m = h.make_model(h.make_graph(nodes, "g", [vi("x", ["n", 4])],
                                  [vi("y", None), vi("n", None, T.INT64), vi("c", None)],
                                  initializer=inits),
                     opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("opset", [11, 13, 18])
def test_static_sequences_become_tensors(tmp_path, opset):
    """No run-time sequence is left (no om_seq_* call), and the numbers and
    shapes (SequenceLength is 0-d) match onnxruntime at two batch sizes."""
    m = _torch_split_model(opset)
    path = tmp_path / "m.onnx"
    path.write_bytes(m.SerializeToString())
    mlir = onnx_mlir_py.compile(str(path), tmp_path / "m.mlir", emit="EmitMLIR", opt_level=0)
    text = open(mlir).read()
    assert "om_seq" not in text and "llvm.ptr" not in text
    sess = session(m, tmp_path)
    rng = np.random.default_rng(2)
    for n in (1, 3):
        _check(m, sess, {"x": rng.random((n, 4), np.float32)}, "onnxruntime")


def test_sequence_map_one_sequence(tmp_path):
    """SequenceMap through its function body (a Loop over the elements). With
    no additional inputs the node was written with an empty trailing input,
    which onnx's inliner refused (an internal error)."""
    body = h.make_graph([h.make_node("Shape", ["x"], ["y"])], "body",
                        [vi("x", ["a", "b"])], [vi("y", [2], T.INT64)])
    m = _model([h.make_node("SequenceMap", ["s"], ["shapes"], body=body)],
               [h.make_value_info("s", _seq_t(F, ["a", "b"]))],
               [h.make_value_info("shapes", _seq_t(T.INT64, [2]))])
    sess = session(m, tmp_path)
    rng = np.random.default_rng(4)
    for shapes in ([(1, 2)], [(3, 1), (2, 5), (4, 4)]):
        _check(m, sess, {"s": [rng.random(sh, np.float32) for sh in shapes]}, "onnxruntime")
    _same(sess.run([[]]), [[]])


def test_optional_sequence(tmp_path):
    """optional(seq): None or a list in and out; has / get element."""
    opt_t = h.make_optional_type_proto(_seq_t(F, ["n"]))
    nodes = [h.make_node("OptionalHasElement", ["o"], ["has"]),
             h.make_node("Identity", ["o"], ["o2"]),
             h.make_node("Optional", ["s"], ["o3"]),
             h.make_node("OptionalGetElement", ["o3"], ["s3"]),
             h.make_node("SequenceLength", ["s3"], ["n3"])]
    m = _model(nodes, [h.make_value_info("o", opt_t), h.make_value_info("s", _seq_t(F, ["n"]))],
               [vi("has", [], T.BOOL), h.make_value_info("o2", opt_t),
                vi("n3", [], T.INT64)])
    sess = session(m, tmp_path)
    assert '"kind": "opt_seq"' in sess.input_signature()
    a, b = np.ones(2, np.float32), np.zeros(3, np.float32)
    _same(sess.run([None, [a]]), [np.array(False), None, np.array(1)])
    _same(sess.run([[a, b], []]), [np.array(True), [a, b], np.array(0)])


@pytest.mark.parametrize("dtype", [np.bool_, np.uint8, np.int64, np.float16])
def test_element_types(tmp_path, dtype):
    """Elements of 1, 2 and 8 bytes (bool as one byte) in and out, and read by SequenceAt."""
    from onnx import helper as oh
    et = oh.np_dtype_to_tensor_dtype(np.dtype(dtype))
    m = _model([h.make_node("SequenceInsert", ["s", "x"], ["o"]),
                h.make_node("SequenceAt", ["o", "i"], ["a"])],
               [h.make_value_info("s", _seq_t(et, ["n", 2])), vi("x", ["n", 2], et),
                vi("i", [], T.INT64)],
               [h.make_value_info("o", _seq_t(et, ["n", 2])), vi("a", ["n", 2], et)])
    sess = session(m, tmp_path)
    rng = np.random.default_rng(5)
    s = [(rng.random((3, 2)) * 100).astype(dtype) for _ in range(2)]
    x = (rng.random((3, 2)) * 100).astype(dtype)
    for i in (0, 2, -2):
        _same(sess.run([s, x, np.array(i, np.int64)]), [s + [x], (s + [x])[i]])


def test_inference_session_sequences():
    """onnxruntime's API over the compiled model: lists in and out."""
    from onnx_mlir_py.inference import InferenceSession
    m = _model([h.make_node("SequenceInsert", ["s", "x"], ["o"])],
               [h.make_value_info("s", _seq_t(F, ["n"])), vi("x", ["n"])],
               [h.make_value_info("o", _seq_t(F, ["n"]))])
    sess = InferenceSession(m.SerializeToString())
    assert sess.get_inputs()[0].type == "seq(tensor(float))"
    a, x = np.ones(2, np.float32), np.arange(2, dtype=np.float32)
    (got,) = sess.run(None, {"s": [a], "x": x})
    _same(got, [a, x])


def test_element_of_another_rank_fails(tmp_path):
    """A sequence of any rank read as rank 1: an element of rank 2 is a run-time
    error naming the node (its dims would be garbage)."""
    m = _model([h.make_node("SequenceAt", ["s", "i"], ["a"], name="at"),
                h.make_node("ConcatFromSequence", ["s"], ["c"], axis=0, name="cat")],
               [h.make_value_info("s", _seq_t(F, None)), vi("i", [], T.INT64)],
               [vi("a", ["n"]), vi("c", ["m"])])
    sess = session(m, tmp_path)
    ok = [np.ones(2, np.float32), np.zeros(3, np.float32)]
    _same(sess.run([ok, np.array(1, np.int64)]), [ok[1], np.concatenate(ok)])
    with pytest.raises(RuntimeInputError, match=r"node 'at' \(SequenceAt\): element 1 has "
                                                r"rank 2, expected 1"):
        sess.run([[ok[0], np.ones((2, 2), np.float32)], np.array(1, np.int64)])


def test_position_of_one_element(tmp_path):
    """A position of shape [?] (onnxruntime takes one element) is checked to
    have one element at run time; an empty one is an error, not a stray read."""
    m = _model([h.make_node("SequenceAt", ["s", "i"], ["a"], name="at")],
               [h.make_value_info("s", _seq_t(F, [2])), vi("i", ["k"], T.INT64)],
               [vi("a", [2])])
    sess = session(m, tmp_path)
    s = [np.ones(2, np.float32), np.zeros(2, np.float32)]
    _same(sess.run([s, np.array([1], np.int64)]), [s[1]])
    with pytest.raises(RuntimeInputError, match=r"node 'at' \(SequenceAt\): position has 0 "
                                                r"elements, expected 1"):
        sess.run([s, np.zeros(0, np.int64)])


def test_runtime_cli_with_sequences(tmp_path):
    """python -m onnx_mlir_py.runtime: random sequence inputs, outputs printed
    and compared with onnxruntime element by element."""
    from onnx_mlir_py.runtime.__main__ import main
    m = _model([h.make_node("SequenceInsert", ["s", "x"], ["o"])],
               [h.make_value_info("s", _seq_t(F, ["n"])), vi("x", ["n"])],
               [h.make_value_info("o", _seq_t(F, ["n"]))])
    path = tmp_path / "m.onnx"
    path.write_bytes(m.SerializeToString())
    so = onnx_mlir_py.compile(str(path), tmp_path / "m.so", opt_level=0)
    assert main([so, "--reference", str(path), "--dim", "3"]) == 0


def test_appends_to_a_shared_array_do_not_alias(tmp_path):
    """Records share element arrays (an append at the end of the longest one
    is in place): appending twice to one sequence, or after erasing the
    last element, must leave every other sequence as it was."""
    seq = _seq_t(F, [2])
    m = _model([h.make_node("SequenceInsert", ["s", "a"], ["s1"]),
                h.make_node("SequenceInsert", ["s", "b"], ["s2"]),
                h.make_node("SequenceErase", ["s1"], ["s3"]),
                h.make_node("SequenceInsert", ["s3", "b"], ["s4"]),
                h.make_node("SequenceInsert", ["s1", "b"], ["s5"])],
               [h.make_value_info("s", seq), vi("a", [2]), vi("b", [2])],
               [h.make_value_info(n, seq) for n in ("s1", "s2", "s3", "s4", "s5")])
    sess = session(m, tmp_path)
    a, b = np.full(2, 1, np.float32), np.full(2, 2, np.float32)
    for s in ([], [np.zeros(2, np.float32)], [np.zeros(2, np.float32)] * 5):
        _same(sess.run([s, a, b]), [s + [a], s + [b], s, s + [b], s + [a, b]])


def test_loop_building_a_sequence_then_concat(tmp_path):
    """SequenceEmpty -> Loop appending [n] tensors -> ConcatFromSequence: the
    empty start does not make the elements' rank unknown (it has none)."""
    body = h.make_graph(
        [h.make_node("Cast", ["i"], ["fi"], to=F), h.make_node("Mul", ["x", "fi"], ["xi"]),
         h.make_node("SequenceInsert", ["s_in", "xi"], ["s_out"]),
         h.make_node("Identity", ["cond"], ["c_out"])],
        "body", [vi("i", [], T.INT64), vi("cond", [], T.BOOL),
                 h.make_value_info("s_in", _seq_t(F, ["n"]))],
        [vi("c_out", [], T.BOOL), h.make_value_info("s_out", _seq_t(F, ["n"]))])
    m = _model([h.make_node("SequenceEmpty", [], ["s0"], dtype=F),
                h.make_node("Loop", ["M", "", "s0"], ["s"], body=body),
                h.make_node("ConcatFromSequence", ["s"], ["cat"], axis=0, new_axis=1)],
               [vi("M", [], T.INT64), vi("x", ["n"])], [vi("cat", None)])
    sess = session(m, tmp_path, 3)
    for trips, n in [(1, 2), (5, 3)]:
        _check(m, sess, {"M": np.array(trips, np.int64), "x": np.arange(n, dtype=np.float32)},
               "onnxruntime")


def test_if_empty_or_built_sequence(tmp_path):
    """If yielding SequenceEmpty in one branch and a sequence of [n] tensors in
    the other: the result keeps rank 1, so ConcatFromSequence lowers."""
    then = h.make_graph([h.make_node("SequenceConstruct", ["x", "x"], ["t"])], "then", [],
                        [h.make_value_info("t", _seq_t(F, ["n"]))])
    other = h.make_graph([h.make_node("SequenceEmpty", [], ["e"], dtype=F)], "else", [],
                         [h.make_value_info("e", _seq_t(F, None))])
    m = _model([h.make_node("If", ["c"], ["s"], then_branch=then, else_branch=other),
                h.make_node("SequenceInsert", ["s", "x"], ["s2"]),
                h.make_node("ConcatFromSequence", ["s2"], ["cat"], axis=0)],
               [vi("c", [], T.BOOL), vi("x", ["n"])], [vi("cat", None)])
    sess = session(m, tmp_path)
    for c, n in [(True, 2), (False, 3)]:
        _check(m, sess, {"c": np.array(c), "x": np.arange(n, dtype=np.float32)}, "onnxruntime")
