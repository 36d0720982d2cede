"""If / Loop lowered to scf, compiled to a .so and compared with
onnx.reference.ReferenceEvaluator."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from onnx_mlir_py.errors import OnnxMlirError
from onnx_mlir_py.runtime import ExecutionSession


def _model(nodes, inputs, outputs, opset=17):
    g = h.make_graph(nodes, "g", inputs, outputs)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def _reference(model, feeds, oracle):
    if oracle == "onnxruntime":   # ReferenceEvaluator cannot stack zero scan outputs
        import onnxruntime as ort
        return ort.InferenceSession(model.SerializeToString(),
                                    providers=["CPUExecutionProvider"]).run(None, feeds)
    return ReferenceEvaluator(model).run(None, feeds)


def _check(model, feeds, tmp_path, name="m", oracle="reference"):
    want = _reference(model, feeds, oracle)
    sess = ExecutionSession(onnx_mlir_py.compile(model, tmp_path / f"{name}.so", opt_level=0))
    got = sess.run([feeds[i.name] for i in model.graph.input])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def _if_model():
    then_g = h.make_graph([h.make_node("Mul", ["x", "x"], ["t"])], "then_g", [],
                          [h.make_tensor_value_info("t", T.FLOAT, [2, 3])])
    else_g = h.make_graph([h.make_node("Neg", ["x"], ["e0"]),
                           h.make_node("Relu", ["e0"], ["e"])], "else_g", [],
                          [h.make_tensor_value_info("e", T.FLOAT, [2, 3])])
    return _model([h.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
                   h.make_node("Greater", ["s", "zero"], ["c"]),
                   h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
                  [h.make_tensor_value_info("x", T.FLOAT, [2, 3]),
                   h.make_tensor_value_info("zero", T.FLOAT, [])],
                  [h.make_tensor_value_info("y", T.FLOAT, [2, 3])])


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_if_takes_the_branch_of_a_runtime_condition(tmp_path, sign):
    x = sign * np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    _check(_if_model(), {"x": x, "zero": np.float32(0)}, tmp_path)


def _loop_body(with_scan: bool, stop_at: float | None):
    # state s <- s * 2 + i ; cond <- sum(s) < stop_at ; scan output: s
    nodes = [h.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
             h.make_node("Mul", ["s_in", "two"], ["s2"]),
             h.make_node("Add", ["s2", "fi"], ["s_out"])]
    outs = [h.make_tensor_value_info("c_out", T.BOOL, []),
            h.make_tensor_value_info("s_out", T.FLOAT, [3])]
    if stop_at is None:
        nodes.append(h.make_node("Identity", ["c_in"], ["c_out"]))
    else:
        nodes += [h.make_node("ReduceSum", ["s_out"], ["tot"], keepdims=0),
                  h.make_node("Less", ["tot", "limit"], ["c_out"])]
    if with_scan:
        nodes.append(h.make_node("Identity", ["s_out"], ["scan"]))
        outs.append(h.make_tensor_value_info("scan", T.FLOAT, [3]))
    return h.make_graph(nodes, "body", [h.make_tensor_value_info("i", T.INT64, []),
                                        h.make_tensor_value_info("c_in", T.BOOL, []),
                                        h.make_tensor_value_info("s_in", T.FLOAT, [3])], outs)


def _loop_model(with_scan=True, stop_at=None, with_m=True):
    consts = [h.make_node("Constant", [], ["two"], value=h.make_tensor("v", T.FLOAT, [], [2.0])),
              h.make_node("Constant", [], ["limit"],
                          value=h.make_tensor("l", T.FLOAT, [], [stop_at or 0.0]))]
    outs = [h.make_tensor_value_info("s_final", T.FLOAT, [3])]
    if with_scan:
        outs.append(h.make_tensor_value_info("scans", T.FLOAT, ["n", 3]))
    loop = h.make_node("Loop", ["m" if with_m else "", "c0", "s0"],
                       ["s_final"] + (["scans"] if with_scan else []),
                       body=_loop_body(with_scan, stop_at), name="loop0")
    ins = ([h.make_tensor_value_info("m", T.INT64, [])] if with_m else []) + \
        [h.make_tensor_value_info("c0", T.BOOL, []), h.make_tensor_value_info("s0", T.FLOAT, [3])]
    return _model(consts + [loop], ins, outs)


def _loop_feeds(m, c0=True, with_m=True):
    f = {"c0": np.array(c0), "s0": np.array([1, 0, -1], np.float32)}
    if with_m:
        f["m"] = np.array(m, np.int64)
    return f


@pytest.mark.parametrize("trips", [0, 1, 5])
def test_loop_with_trip_count_state_and_scan_output(tmp_path, trips):
    _check(_loop_model(), _loop_feeds(trips), tmp_path,
           oracle="onnxruntime" if trips == 0 else "reference")


def test_loop_stopped_early_by_its_condition_cuts_the_scan_output(tmp_path):
    _check(_loop_model(stop_at=40.0), _loop_feeds(10), tmp_path)


def test_loop_not_entered_when_the_initial_condition_is_false(tmp_path):
    _check(_loop_model(), _loop_feeds(4, c0=False), tmp_path, oracle="onnxruntime")


def test_loop_bounded_only_by_its_condition(tmp_path):
    _check(_loop_model(with_scan=False, stop_at=100.0, with_m=False),
           _loop_feeds(0, with_m=False), tmp_path)


def test_loop_scan_output_without_trip_count_is_a_clear_error(tmp_path):
    m = _loop_model(with_scan=True, stop_at=100.0, with_m=False)
    with pytest.raises(OnnxMlirError, match=r"node 'loop0' \(Loop\): scan outputs need the trip count"):
        onnx_mlir_py.compile(m, tmp_path / "x.so", opt_level=0)


@pytest.mark.quick
def test_if_nested_in_a_loop_body(tmp_path):
    # body: s_out = (i is even) ? s_in + 1 : s_in * 3
    then_g = h.make_graph([h.make_node("Add", ["s_in", "one"], ["a"])], "t", [],
                          [h.make_tensor_value_info("a", T.FLOAT, [3])])
    else_g = h.make_graph([h.make_node("Mul", ["s_in", "three"], ["b"])], "e", [],
                          [h.make_tensor_value_info("b", T.FLOAT, [3])])
    body = h.make_graph(
        [h.make_node("Mod", ["i", "two_i"], ["r"]),
         h.make_node("Equal", ["r", "zero_i"], ["even"]),
         h.make_node("If", ["even"], ["s_out"], then_branch=then_g, else_branch=else_g),
         h.make_node("Identity", ["c_in"], ["c_out"])],
        "body", [h.make_tensor_value_info("i", T.INT64, []),
                 h.make_tensor_value_info("c_in", T.BOOL, []),
                 h.make_tensor_value_info("s_in", T.FLOAT, [3])],
        [h.make_tensor_value_info("c_out", T.BOOL, []),
         h.make_tensor_value_info("s_out", T.FLOAT, [3])])
    c = [h.make_node("Constant", [], [n], value=h.make_tensor(n, t, [], [v]))
         for n, t, v in [("one", T.FLOAT, 1.0), ("three", T.FLOAT, 3.0),
                         ("two_i", T.INT64, 2), ("zero_i", T.INT64, 0)]]
    m = _model(c + [h.make_node("Loop", ["m", "c0", "s0"], ["s_final"], body=body)],
               [h.make_tensor_value_info("m", T.INT64, []),
                h.make_tensor_value_info("c0", T.BOOL, []),
                h.make_tensor_value_info("s0", T.FLOAT, [3])],
               [h.make_tensor_value_info("s_final", T.FLOAT, [3])])
    _check(m, _loop_feeds(5), tmp_path)


def _scan_model(in_axis=0, in_dir=0, out_axis=0, out_dir=0):
    # state acc <- acc + x_t * w_t ; scan outputs: acc and x_t - w_t
    body = h.make_graph(
        [h.make_node("Mul", ["x_t", "w_t"], ["p"]),
         h.make_node("Add", ["acc_in", "p"], ["acc_out"]),
         h.make_node("Identity", ["acc_out"], ["y_t"]),
         h.make_node("Sub", ["x_t", "w_t"], ["d_t"])],
        "body", [h.make_tensor_value_info("acc_in", T.FLOAT, [3]),
                 h.make_tensor_value_info("x_t", T.FLOAT, [3]),
                 h.make_tensor_value_info("w_t", T.FLOAT, [3])],
        [h.make_tensor_value_info("acc_out", T.FLOAT, [3]),
         h.make_tensor_value_info("y_t", T.FLOAT, [3]),
         h.make_tensor_value_info("d_t", T.FLOAT, [3])])
    xs = [4, 3] if in_axis == 0 else [3, 4]
    scan = h.make_node("Scan", ["acc0", "x", "w"], ["acc", "ys", "ds"], body=body,
                       num_scan_inputs=2, scan_input_axes=[in_axis, in_axis],
                       scan_input_directions=[in_dir, 0],
                       scan_output_axes=[out_axis, 0], scan_output_directions=[out_dir, 1])
    ys = [4, 3] if out_axis == 0 else [3, 4]
    return _model([scan], [h.make_tensor_value_info("acc0", T.FLOAT, [3]),
                           h.make_tensor_value_info("x", T.FLOAT, xs),
                           h.make_tensor_value_info("w", T.FLOAT, xs)],
                  [h.make_tensor_value_info("acc", T.FLOAT, [3]),
                   h.make_tensor_value_info("ys", T.FLOAT, ys),
                   h.make_tensor_value_info("ds", T.FLOAT, [4, 3])])


@pytest.mark.parametrize("in_axis,in_dir,out_axis,out_dir",
                         [(0, 0, 0, 0), (1, 1, 1, 0), (0, 1, 1, 1)])
def test_scan_axes_and_directions(tmp_path, in_axis, in_dir, out_axis, out_dir):
    rng = np.random.default_rng(1)
    xs = (4, 3) if in_axis == 0 else (3, 4)
    feeds = {"acc0": rng.standard_normal(3).astype(np.float32),
             "x": rng.standard_normal(xs).astype(np.float32),
             "w": rng.standard_normal(xs).astype(np.float32)}
    # ReferenceEvaluator only implements forward scans
    _check(_scan_model(in_axis, in_dir, out_axis, out_dir), feeds, tmp_path, oracle="onnxruntime")


@pytest.mark.parametrize("cond", [True, False])
def test_if_condition_of_shape_1(tmp_path, cond):
    """Found by the fuzzer: a condition of shape [1] (one element, as the
    spec allows) was extracted with no index ('tensor.extract' op incorrect
    number of indices)."""
    then_g = h.make_graph([h.make_node("Neg", ["x"], ["t"])], "then_g", [],
                          [h.make_tensor_value_info("t", T.FLOAT, None)])
    else_g = h.make_graph([h.make_node("Sin", ["x"], ["e"])], "else_g", [],
                          [h.make_tensor_value_info("e", T.FLOAT, None)])
    m = _model([h.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
               [h.make_tensor_value_info("c", T.BOOL, [1]),
                h.make_tensor_value_info("x", T.FLOAT, [1, 4])],
               [h.make_tensor_value_info("y", T.FLOAT, [1, 4])])
    _check(m, {"c": np.array([cond]), "x": np.arange(4, dtype=np.float32).reshape(1, 4)},
           tmp_path)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_loop_carrying_an_empty_tensor(opt_level):
    """Fuzzer case s2000-141: a Loop carrying a [0, 4] tensor with a scan
    output was refused by MLIR's slice verifier (static offset 0 into a
    size-0 dim)."""
    from onnx import TensorProto as TP, helper as h, numpy_helper
    from onnx_mlir_py.testing.check import assert_match, reference, run_compiled
    body = h.make_graph(
        [h.make_node("Identity", ["c"], ["c2"]), h.make_node("Abs", ["v"], ["v2"]),
         h.make_node("Identity", ["v2"], ["s"])], "body",
        [h.make_tensor_value_info("i", TP.INT64, []), h.make_tensor_value_info("c", TP.BOOL, []),
         h.make_tensor_value_info("v", TP.FLOAT, None)],
        [h.make_tensor_value_info("c2", TP.BOOL, []),
         h.make_tensor_value_info("v2", TP.FLOAT, None),
         h.make_tensor_value_info("s", TP.FLOAT, None)])
    for trips in (1, 3):
        g = h.make_graph([h.make_node("Loop", ["n", "", "x"], ["y", "ys"], body=body)], "g",
                         [h.make_tensor_value_info("x", TP.FLOAT, [0, 4])],
                         [h.make_tensor_value_info("y", TP.FLOAT, None),
                          h.make_tensor_value_info("ys", TP.FLOAT, None)],
                         initializer=[numpy_helper.from_array(np.array(trips, np.int64), "n")])
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
        feeds = {"x": np.zeros((0, 4), np.float32)}
        got = run_compiled(m, feeds, opt_level)
        assert got[1].shape == (trips, 0, 4)
        assert_match(got, reference(m, feeds, "onnxruntime"))
