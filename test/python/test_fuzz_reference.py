"""The fuzz oracle's onnx.reference (its second opinion, and its reference
where onnxruntime has no kernel) around onnx 1.23's bugs
(onnx_mlir_py/testing/fuzz/reference_fixes.py): each fix against onnxruntime
or the spec."""
from __future__ import annotations

import numpy as np
import onnx
import pytest

from helpers_models import conv_model
from onnx_mlir_py.testing.fuzz.oracle import reference_runner


def test_reference_runs_a_loop_without_cond():
    """onnx.reference (the fallback oracle, here for a bool Where onnxruntime has
    no kernel for) runs a Loop whose ``cond`` input is absent zero times; the
    oracle rewrites it to a constant true and agrees with onnxruntime (s1-45)."""
    from onnx import TensorProto as TP, helper as h
    body = h.make_graph(
        [h.make_node("Identity", ["c"], ["c2"]), h.make_node("Mul", ["v", "x"], ["t"]),
         h.make_node("Add", ["t", "x"], ["v2"])], "body",
        [h.make_tensor_value_info("i", TP.INT64, []), h.make_tensor_value_info("c", TP.BOOL, []),
         h.make_tensor_value_info("v", TP.FLOAT, None)],
        [h.make_tensor_value_info("c2", TP.BOOL, []),
         h.make_tensor_value_info("v2", TP.FLOAT, None)])
    nodes = [h.make_node("Loop", ["n", "", "x"], ["y"], body=body),
             h.make_node("Where", ["b", "b", "b"], ["w"])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [1, 4]),
                                  h.make_tensor_value_info("b", TP.BOOL, [2])],
                     [h.make_tensor_value_info("y", TP.FLOAT, None),
                      h.make_tensor_value_info("w", TP.BOOL, None)],
                     initializer=[onnx.numpy_helper.from_array(np.array(3, np.int64), "n")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    x = np.array([[0.5, 1.0, 2.0, -1.0]], np.float32)
    engine, ref = reference_runner(m)
    assert engine == "onnx.reference"
    want = x
    for _ in range(3):
        want = want * x + x
    np.testing.assert_allclose(ref({"x": x, "b": np.array([True, False])})[0], want)


@pytest.mark.parametrize("trips", [0, 1, 3])
def test_reference_loop_scan_outputs_stack_like_onnxruntime(trips):
    """onnx.reference stacks Loop scan outputs with np.vstack: per-iteration
    [1, 2] values gave (T, 2) instead of (T, 1, 2) (s2000-68, -231, -245), and
    zero iterations raised. The oracle's Loop agrees with onnxruntime."""
    from onnx import TensorProto as TP, helper as h
    from onnx_mlir_py.testing.fuzz.oracle import _ort_session, reference_outputs
    body = h.make_graph(
        [h.make_node("Identity", ["c"], ["c2"]), h.make_node("Cast", ["i"], ["ci"], to=TP.FLOAT),
         h.make_node("Add", ["v", "ci"], ["v2"]), h.make_node("Identity", ["v2"], ["s"])],
        "body",
        [h.make_tensor_value_info("i", TP.INT64, []), h.make_tensor_value_info("c", TP.BOOL, []),
         h.make_tensor_value_info("v", TP.FLOAT, None)],
        [h.make_tensor_value_info("c2", TP.BOOL, []),
         h.make_tensor_value_info("v2", TP.FLOAT, None),
         h.make_tensor_value_info("s", TP.FLOAT, [1, 2])])
    g = h.make_graph([h.make_node("Loop", ["n", "t", "x"], ["y", "ys"], body=body)], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [1, 2])],
                     [h.make_tensor_value_info("y", TP.FLOAT, None),
                      h.make_tensor_value_info("ys", TP.FLOAT, None)],
                     initializer=[onnx.numpy_helper.from_array(np.array(trips, np.int64), "n"),
                                  onnx.numpy_helper.from_array(np.array(True), "t")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    feeds = {"x": np.array([[-1.0, 4.0]], np.float32)}
    got = reference_outputs(m, feeds)
    want = _ort_session(m).run(None, feeds)
    assert [a.shape for a in got] == [a.shape for a in want] and got[1].shape[0] == trips
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_reference_global_max_pool_any_rank():
    """onnx.reference's GlobalMaxPool reduces the last two axes whatever the
    rank (s1-11: [3,2,3] gave (3,1)); the oracle's replacement keeps N, C."""
    from onnx import TensorProto as TP, helper as h
    from onnx_mlir_py.testing.fuzz.oracle import reference_outputs
    for shape in ([3, 2, 3], [2, 3, 4, 5], [2, 2, 3, 2, 2]):
        g = h.make_graph([h.make_node("GlobalMaxPool", ["x"], ["y"])], "g",
                         [h.make_tensor_value_info("x", TP.FLOAT, shape)],
                         [h.make_tensor_value_info("y", TP.FLOAT, None)])
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        y = reference_outputs(m, {"x": x})[0]
        np.testing.assert_array_equal(y, x.max(axis=tuple(range(2, len(shape))), keepdims=True))


@pytest.mark.parametrize("kw", [dict(kernel_shape=[1, 2]), dict(kernel_shape=[1, 2], strides=[1, 2]),
                                dict(kernel_shape=[1, 3], auto_pad="SAME_UPPER")])
def test_reference_max_pool_propagates_nan(kw):
    """The oracle's second opinion pools as the compiler does (NAN_SEMANTICS):
    NaN anywhere in a window gives NaN, on both of onnx.reference's MaxPool
    paths (its unit-stride one skipped it: s3-14, s3-37)."""
    from onnx import TensorProto as TP, helper as h
    from onnx_mlir_py.testing.fuzz.oracle import reference_outputs
    g = h.make_graph([h.make_node("MaxPool", ["x"], ["y"], **kw)], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [1, 1, 1, 6])],
                     [h.make_tensor_value_info("y", TP.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    x = np.array([1, np.nan, 2, 3, -np.inf, np.nan], np.float32).reshape(1, 1, 1, 6)
    k, s = kw["kernel_shape"][1], kw.get("strides", [1, 1])[1]
    xp = np.pad(x[0, 0, 0], int("auto_pad" in kw), constant_values=-np.inf)
    want = [xp[i:i + k].max() for i in range(0, len(xp) - k + 1, s)]   # numpy: NaN wins
    np.testing.assert_array_equal(reference_outputs(m, {"x": x})[0].ravel(), want)


@pytest.mark.parametrize("kw", [dict(kernel_shape=[1, 1]), dict(kernel_shape=[1, 2]),
                                dict(kernel_shape=[1, 2], pads=[0, 1, 0, 1])])
def test_reference_max_pool_of_minus_inf_is_minus_inf(kw):
    """onnxruntime's MaxPool of a window holding only -inf gives the lowest
    finite float (-3.4e38; PRelu then made -5.4e37 of it: s2000-869); the
    oracle's second opinion gives -inf, the maximum, as the compiler does."""
    from onnx import TensorProto as TP, helper as h
    from onnx_mlir_py.testing.fuzz.oracle import reference_outputs
    g = h.make_graph([h.make_node("MaxPool", ["x"], ["y"], **kw)], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [1, 1, 1, 5])],
                     [h.make_tensor_value_info("y", TP.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    x = np.array([-np.inf, -np.inf, 2, -np.inf, -1e30], np.float32).reshape(1, 1, 1, 5)
    k, p = kw["kernel_shape"][1], kw.get("pads", [0, 0, 0, 0])[1]
    xp = np.pad(x[0, 0, 0], p, constant_values=-np.inf)
    want = [xp[i:i + k].max() for i in range(len(xp) - k + 1)]
    np.testing.assert_array_equal(reference_outputs(m, {"x": x})[0].ravel(), want)


POOLS = [("AveragePool", 19, dict(kernel_shape=[1, 2], strides=[2, 1])),             # s2000-879
         ("MaxPool", 12, dict(kernel_shape=[1, 2], pads=[0, 1, 0, 1], ceil_mode=1)),   # s2000-314
         ("MaxPool", 12, dict(kernel_shape=[3, 3], strides=[3, 2], auto_pad="SAME_LOWER")),  # -647
         ("AveragePool", 19, dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                                  ceil_mode=1, count_include_pad=1)),
         ("LpPool", 18, dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1, p=3))]


@pytest.mark.parametrize("op,opset,kw", POOLS)
@pytest.mark.parametrize("engine_op", ["Identity", "Where"])
def test_reference_pools_like_onnxruntime_nan_propagates(op, opset, kw, engine_op):
    """The oracle's pools (its second opinion, and its reference when
    onnxruntime lacks a kernel for another op: a bool Where) are onnxruntime's
    on the NaN-free input, NaN where a window holds a NaN. onnx.reference's
    AveragePool averaged the rest (s2000-879: got NaN, 'expected' 0.365), and
    its ceil_mode (s2000-314) and SAME_LOWER (s2000-647) windows were wrong."""
    from onnx import TensorProto as TP, helper as h
    from onnx_mlir_py.testing.check import reference
    from onnx_mlir_py.testing.fuzz.oracle import reference_outputs
    side = h.make_node("Where", ["c", "c", "c"], ["d"]) if engine_op == "Where" else \
        h.make_node("Identity", ["c"], ["d"])
    g = h.make_graph([h.make_node(op, ["x"], ["y"], **kw), side], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [2, 2, 7, 5]),
                      h.make_tensor_value_info("c", TP.BOOL, [3])],
                     [h.make_tensor_value_info("y", TP.FLOAT, None),
                      h.make_tensor_value_info("d", TP.BOOL, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 2, 7, 5)).astype(np.float32)
    x.flat[rng.choice(x.size, 5, replace=False)] = np.nan
    feeds = {"x": x, "c": np.array([True, False, True])}
    nan = np.isnan(x)
    mono = h.make_model(h.make_graph([g.node[0]], "g", [g.input[0]], [g.output[0]]),
                        opset_imports=[h.make_opsetid("", opset)])
    clean = np.where(nan, -np.inf if op == "MaxPool" else 0, x).astype(np.float32)
    want = reference(mono, {"x": clean}, "onnxruntime")[0]
    hit = reference(mono, {"x": nan.astype(np.float32)}, "onnxruntime")[0] > 0
    want[hit] = np.nan
    assert 0 < hit.sum() < hit.size
    engine, run = reference_runner(m)
    assert engine == ("onnx.reference" if engine_op == "Where" else "onnxruntime")
    got = run(feeds)[0] if engine == "onnx.reference" else reference_outputs(m, feeds)[0]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("opset", [8, 13])
def test_reference_mean_broadcasts(opset):
    """onnx.reference's Mean added into a copy of its first input, which could
    not broadcast ([3] with [5, 5, 3] raised), so s2000-615 had no second
    opinion; the replacement matches onnxruntime."""
    from onnx import TensorProto as TP, helper as h
    from onnx_mlir_py.testing.check import reference
    from onnx_mlir_py.testing.fuzz.oracle import reference_outputs
    g = h.make_graph([h.make_node("Mean", ["a", "b", "a"], ["y"])], "g",
                     [h.make_tensor_value_info("a", TP.FLOAT, [3]),
                      h.make_tensor_value_info("b", TP.FLOAT, [5, 1, 3])],
                     [h.make_tensor_value_info("y", TP.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    rng = np.random.default_rng(2)
    feeds = {"a": rng.standard_normal(3).astype(np.float32),
             "b": rng.standard_normal((5, 1, 3)).astype(np.float32)}
    got = reference_outputs(m, feeds)[0]
    assert got.shape == (5, 1, 3)
    np.testing.assert_allclose(got, reference(m, feeds, "onnxruntime")[0], rtol=1e-6)


@pytest.mark.parametrize("opset,mode,pads", [(2, "constant", [1, -2, 0, 2]),
                                              (11, "edge", [-1, 2, 1, -3]),
                                              (11, "constant", [0, 3, 0, -7]),
                                              (19, "wrap", [0, -2, 1, 3]),
                                              (19, "reflect", [-1, -1, 0, 1])])
def test_reference_pad_negative_like_onnxruntime(opset, mode, pads):
    """Negative pads crop (after padding in mode constant: [0, 3, 0, -7] on 6
    columns gives 2 zero columns; before it otherwise); onnx.reference
    raised on them (numpy.pad), so s2000-198 had no second opinion."""
    from onnx import TensorProto as TP, helper as h, numpy_helper as nh
    from onnx_mlir_py.testing.check import reference
    from onnx_mlir_py.testing.fuzz.oracle import reference_outputs
    if opset == 2:
        node, inits = h.make_node("Pad", ["x"], ["y"], mode=mode, pads=pads, value=1.5), []
    else:
        node = h.make_node("Pad", ["x", "p"], ["y"], mode=mode)
        inits = [nh.from_array(np.array(pads, np.int64), "p")]
    g = h.make_graph([node], "g", [h.make_tensor_value_info("x", TP.FLOAT, [3, 6])],
                     [h.make_tensor_value_info("y", TP.FLOAT, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    x = np.arange(18, dtype=np.float32).reshape(3, 6)
    want = reference(m, {"x": x}, "onnxruntime")[0]
    np.testing.assert_array_equal(reference_outputs(m, {"x": x})[0], want)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_reference_arg_nan_like_onnxruntime(op):
    """The fallback oracle's ArgMax/ArgMin follow onnxruntime on NaN (and the
    compiler): numpy's first-NaN-wins is replaced (s1-61, an f64 graph that
    onnxruntime cannot run)."""
    from onnx import TensorProto as TP, helper as h
    from onnx_mlir_py.testing.check import reference
    from onnx_mlir_py.testing.fuzz.oracle import reference_outputs
    x = np.array([[np.nan, 1, 3, 3], [1, np.nan, 3, -np.inf], [2, 2, np.inf, np.nan]],
                 np.float32)
    for last in (0, 1):
        g = h.make_graph([h.make_node(op, ["x"], ["y"], axis=1, select_last_index=last)], "g",
                         [h.make_tensor_value_info("x", TP.FLOAT, [3, 4])],
                         [h.make_tensor_value_info("y", TP.INT64, None)])
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
        np.testing.assert_array_equal(reference_outputs(m, {"x": x})[0],
                                      reference(m, {"x": x}, "onnxruntime")[0])


def test_reference_prelu_at_zero():
    """onnx.reference's PRelu computes slope * x at x = 0 (0 * inf = NaN); the
    spec gives x there (s2-10)."""
    from onnx import TensorProto as TP, helper as h
    from onnx_mlir_py.testing.fuzz.oracle import reference_outputs
    g = h.make_graph([h.make_node("PRelu", ["x", "s"], ["y"])], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [4]),
                      h.make_tensor_value_info("s", TP.FLOAT, [4])],
                     [h.make_tensor_value_info("y", TP.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 16)])
    x = np.array([0.0, -0.0, -2.0, 3.0], np.float32)
    s = np.array([np.inf, -np.inf, 0.5, np.inf], np.float32)
    np.testing.assert_array_equal(reference_outputs(m, {"x": x, "s": s})[0], [0, 0, -1, 3])


@pytest.mark.parametrize("starts,ends,steps", [
    ([3, -2**62], [3, -5], [-2, -1]),       # s3-11: start below -dim, negative step
    ([0, 1], [3, 4], [1, 2]), ([-1, 5], [-4, -9], [-1, -2]), ([2, 3], [0, -1], [-1, -1])])
def test_reference_slice_clamps_like_the_spec(starts, ends, steps):
    """onnx.reference's Slice (numpy) gives nothing for a negative step and a
    start below -dim; the oracle's replacement agrees with onnxruntime."""
    from onnx import TensorProto as TP, helper as h
    from onnx_mlir_py.testing.check import reference
    from onnx_mlir_py.testing.fuzz.oracle import reference_outputs
    inits = [h.make_tensor(n, TP.INT64, [2], v)
             for n, v in (("s", starts), ("e", ends), ("a", [0, 1]), ("t", steps))]
    g = h.make_graph([h.make_node("Slice", ["x", "s", "e", "a", "t"], ["y"])], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [3, 4])],
                     [h.make_tensor_value_info("y", TP.FLOAT, None)], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(reference_outputs(m, {"x": x})[0],
                                  reference(m, {"x": x}, "onnxruntime")[0])


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax", "Hardmax"])
@pytest.mark.parametrize("opset,dtype", [(11, np.float32), (13, np.float16), (19, np.float32)])
def test_reference_softmax_family_like_onnxruntime(op, opset, dtype):
    """onnx.reference took LogSoftmax's log of an f16 softmax (s2000-1290:
    -17.84 after a bool Where came out -inf) and skipped the 2-D coercion
    before opset 13 (Softmax axis 1 of [2, 3, 4] off by 0.55); the
    replacement matches onnxruntime."""
    from onnx import helper as h
    from onnx_mlir_py.testing.check import reference
    from onnx_mlir_py.testing.fuzz.oracle import reference_outputs
    tp = h.np_dtype_to_tensor_dtype(np.dtype(dtype))
    g = h.make_graph([h.make_node(op, ["x"], ["y"], axis=1)], "g",
                     [h.make_tensor_value_info("x", tp, [2, 3, 4])],
                     [h.make_tensor_value_info("y", tp, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    x = (np.random.default_rng(3).standard_normal((2, 3, 4)) * 8).astype(dtype)
    x[0, :, 0] = [0, 17.84, 1]
    want = reference(m, {"x": x}, "onnxruntime")[0]
    got = reference_outputs(m, {"x": x})[0]
    assert got.dtype == want.dtype and np.isfinite(got).all()
    np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32),
                               rtol=2e-3 if dtype == np.float16 else 1e-5, atol=1e-6)


@pytest.mark.parametrize("opset,shape,axes,keepdims", [
    (13, [2, 0], None, 0), (18, [2, 0], None, 1), (18, [2, 0, 3], [1], 0),
    (13, [2, 3], [1], 1), (18, [4, 5], [-1], 0)])
def test_reference_reduce_mean_like_onnxruntime(opset, shape, axes, keepdims):
    """onnx.reference's integer ReduceMean over no element gave -2**63
    (numpy's NaN cast), onnxruntime 0 (s2000-1876); other means unchanged."""
    from onnx import TensorProto as TP, helper as h
    from onnx_mlir_py.testing.fuzz.oracle import _ort_session, reference_outputs
    ins = ["x"]
    inits = []
    kw = {"keepdims": keepdims}
    if axes is not None and opset >= 18:
        ins.append("a")
        inits.append(onnx.numpy_helper.from_array(np.array(axes, np.int64), "a"))
    elif axes is not None:
        kw["axes"] = axes
    g = h.make_graph([h.make_node("ReduceMean", ins, ["y"], **kw)], "g",
                     [h.make_tensor_value_info("x", TP.INT64, shape)],
                     [h.make_tensor_value_info("y", TP.INT64, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    feeds = {"x": np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) * 7 - 9}
    got, want = reference_outputs(m, feeds)[0], _ort_session(m).run(None, feeds)[0]
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("op,dt,opset,axes,keepdims", [
    ("ReduceLogSum", "INT32", 13, [1], 1), ("ReduceLogSum", "INT64", 18, [-1], 0),
    ("ReduceLogSum", "INT32", 18, None, 0), ("ReduceLogSumExp", "UINT32", 18, [1], 0),
    ("ReduceLogSumExp", "UINT64", 18, None, 1), ("ReduceLogSumExp", "FLOAT", 13, [1], 1)])
def test_reference_int_log_reductions_like_onnxruntime(op, dt, opset, axes, keepdims):
    """onnx.reference (1.23) refuses integer ReduceLogSum / ReduceLogSumExp;
    the fix computes in double, truncates and saturates as onnxruntime does
    (its int32/int64 LogSumExp kernel aside: each exp term truncated); sums of
    0 and below give the type's lowest value. Floats keep onnx.reference's."""
    from onnx import TensorProto as TP, helper as h
    from onnx_mlir_py.testing.fuzz.oracle import _ort_session, reference_outputs
    ins, inits, kw = ["x"], [], {"keepdims": keepdims}
    if axes is not None and opset >= 18:
        ins.append("a")
        inits.append(onnx.numpy_helper.from_array(np.array(axes, np.int64), "a"))
    elif axes is not None:
        kw["axes"] = axes
    et = getattr(TP, dt)
    g = h.make_graph([h.make_node(op, ins, ["y"], **kw)], "g",
                     [h.make_tensor_value_info("x", et, [3, 8])],
                     [h.make_tensor_value_info("y", et, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    nd = onnx.helper.tensor_dtype_to_np_dtype(et)
    x = np.array([[3, 3, 2, 2, 2, 2, 2, 2], [40, 0, 1, 39, 39, 2, 1, 0], [0] * 8])
    if op == "ReduceLogSum" and nd != np.uint32:
        x[2, 0] = -5                     # log of a negative sum
    feeds = {"x": x.astype(nd)}
    got, want = reference_outputs(m, feeds)[0], _ort_session(m).run(None, feeds)[0]
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_reference_softsign_of_a_scalar():
    """onnx.reference's Softsign raised on a 0-d input (np.divide into a numpy
    scalar), so s2000-143 (an integer ReduceLogSumExp where onnxruntime
    deviates, next to a scalar Softsign) had no second opinion."""
    from onnx import TensorProto as TP, helper as h
    from onnx_mlir_py.testing.fuzz.oracle import _ort_session, reference_outputs
    g = h.make_graph([h.make_node("Softsign", ["x"], ["y"])], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [])],
                     [h.make_tensor_value_info("y", TP.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    feeds = {"x": np.array(1.8041934, np.float32)}
    got, want = reference_outputs(m, feeds)[0], _ort_session(m).run(None, feeds)[0]
    assert got.shape == () and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_reference_dilated_conv_skips_the_holes():
    """onnx.reference dilates a Conv kernel with zero taps and convolves
    densely, so a NaN or inf under a hole made the output NaN (0 * NaN) though
    the spec's sum never reads it (s2670-80: grouped 1-D Conv, dilation 2,
    f64, which onnxruntime has no kernel for: 3 of 45 wrong booleans after
    GreaterOrEqual; s2643-15). The oracle's Conv reads only the taps: it
    agrees with onnxruntime (f32) and with the sum written out (f64)."""
    from onnx import TensorProto as TP
    from onnx_mlir_py.testing.fuzz.oracle import _ort_session, reference_outputs
    x = np.array([[[1.0, np.nan, 2.0, np.inf, 4.0], [3.0, -np.inf, 5.0, np.nan, 1.0]]])
    w = np.array([[[2.0, -1.0]], [[1.0, 1e300]]])
    attrs = dict(dilations=[2], group=2, pads=[1, 1])
    # group 0: y[o] = 2 x[o - 1] - x[o + 1]; group 1: y[o] = x[o - 1] + 1e300 x[o + 1]
    # (x[-1] = x[5] = 0); x[o] is under the hole: y[1] and y[3] never read a NaN or inf
    want = np.array([[[np.nan, 0.0, np.nan, 0.0, np.inf],
                      [-np.inf, 3.0 + 5e300, np.nan, 5.0 + 1e300, np.nan]]])
    got = reference_outputs(conv_model([1, 2, 5], [2, 1, 2], TP.DOUBLE, **attrs),
                            {"x": x, "w": w})[0]
    np.testing.assert_array_equal(got, want)
    w32 = np.array([[[2.0, -1.0]], [[1.0, 3.0]]], np.float32)
    m32 = conv_model([1, 2, 5], [2, 1, 2], TP.FLOAT, **attrs)
    feeds = {"x": x.astype(np.float32), "w": w32}
    np.testing.assert_array_equal(reference_outputs(m32, feeds)[0],
                                  _ort_session(m32).run(None, feeds)[0])


def test_reference_conv_agrees_with_onnxruntime():
    """The oracle's Conv (``reference_conv``) against onnxruntime on finite
    f32 inputs: 1-3 spatial axes, groups, strides, dilations, pads, auto_pad."""
    from onnx import TensorProto as TP
    from onnx_mlir_py.testing.fuzz.oracle import _ort_session, reference_outputs
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(60):
        nsp, g = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        k, d, s = ([int(v) for v in rng.integers(1, hi, nsp)] for hi in (4, 3, 3))
        auto_pad = str(rng.choice(["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]))
        attrs = dict(dilations=d, strides=s, group=g, auto_pad=auto_pad)
        if auto_pad == "NOTSET":
            attrs["pads"] = [int(v) for v in rng.integers(0, 3, 2 * nsp)]
        sp = [(kk - 1) * dd + 1 + int(rng.integers(0, 4)) for kk, dd in zip(k, d)]
        x = rng.standard_normal([2, 2 * g] + sp).astype(np.float32)
        w = rng.standard_normal([g, 2] + k).astype(np.float32)
        m = conv_model(list(x.shape), list(w.shape), TP.FLOAT, **attrs)
        try:
            want = _ort_session(m).run(None, {"x": x, "w": w})[0]
        except Exception:  # noqa: BLE001 - onnxruntime refuses (SAME_* with stride > kernel)
            continue
        got = reference_outputs(m, {"x": x, "w": w})[0]
        assert got.shape == want.shape, attrs
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, err_msg=str(attrs))
        checked += 1
    assert checked >= 25   # 32 with this seed


@pytest.mark.parametrize("opset", [13, 17, 19, 21])
@pytest.mark.parametrize("qtype,zero", [("uint8", 3), ("int8", 3), ("int8", -4)])
def test_reference_quantize_dequantize_agree_with_onnxruntime(opset, qtype, zero):
    """onnx.reference (1.23) has no QuantizeLinear / DequantizeLinear before
    opset 19, so a model with them had no second opinion (s3700-5:
    onnxruntime's MaxPool skipping a NaN counted as a mismatch), and its
    opset-19 QuantizeLinear gives +inf the lowest value, and NaN the highest
    with a negative zero point (s2812-1: rint(NaN) as int32 is INT_MIN, plus
    -4 wraps to INT_MAX - 3). The oracle's agree with onnxruntime, NaN and
    +-inf included."""
    from onnx import TensorProto as TP, helper as h, numpy_helper as nh
    from onnx_mlir_py.testing.fuzz.oracle import _ort_session, reference_outputs
    npt = np.dtype(qtype)
    qt = TP.UINT8 if qtype == "uint8" else TP.INT8
    x = np.array([np.nan, np.inf, -np.inf, 1e30, -1e30, 1e-30, 2.5, -3.7, 300, -300, 3.4e38],
                 np.float32)
    g = h.make_graph([h.make_node("QuantizeLinear", ["x", "s", "z"], ["y"]),
                      h.make_node("DequantizeLinear", ["y", "s", "z"], ["d"])], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [11])],
                     [h.make_tensor_value_info("y", qt, None),
                      h.make_tensor_value_info("d", TP.FLOAT, None)],
                     [nh.from_array(np.array(0.5, np.float32), "s"),
                      nh.from_array(np.array(zero, npt), "z")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    want = _ort_session(m).run(None, {"x": x})
    got = reference_outputs(m, {"x": x})
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
