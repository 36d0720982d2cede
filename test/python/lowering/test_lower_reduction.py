"""Reduce*, ArgMax/ArgMin, CumSum lowering vs onnx.reference."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from bool_check import check

R = np.random.default_rng(4)
N = helper.make_node
OPS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
       "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]
INT_OPS = ["ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
           "ReduceSumSquare"]


def data(op, dt, shape=(3, 4, 5)):
    if dt in (np.int32, np.int64):
        return R.integers(-4, 5, shape).astype(dt)
    x = R.standard_normal(shape).astype(dt)
    if op in ("ReduceLogSum", "ReduceProd"):
        x = np.abs(x) + 0.5
    return x


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("axes,keep", [([1], 1), ([0, -1], 0), (None, 1), (None, 0)])
def test_reduce_axes_input_opset18(op, axes, keep):
    x = data(op, np.float32)
    ins, inits = ["x"], []
    if axes is not None:
        ins.append("a")
        inits.append(("a", np.array(axes, np.int64)))
    opset = 18 if op != "ReduceSum" else 13
    check([N(op, ins, ["y"], keepdims=keep)], {"x": x}, ["y"], inits=inits, opset=opset,
          rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("opset", [11, 13])
def test_reduce_axes_attribute(op, opset):
    x = data(op, np.float64)
    if op == "ReduceSum" and opset == 13:
        opset = 11
    check([N(op, ["x"], ["y"], axes=[0, 2], keepdims=1)], {"x": x}, ["y"], opset=opset)


# (the reference promotes int32 ReduceSumSquare to int64, so that pair is left out)
@pytest.mark.parametrize("op,dt", [(o, d) for o in INT_OPS for d in (np.int32, np.int64)
                                   if (o, d) != ("ReduceSumSquare", np.int32)])
def test_reduce_int(op, dt):
    x = data(op, dt)
    check([N(op, ["x"], ["y"], axes=[1], keepdims=0)], {"x": x}, ["y"],
          opset=11 if op == "ReduceSum" else 13)


def test_reduce_noop_with_empty_axes():
    x = data("ReduceSum", np.float32)
    check([N("ReduceSum", ["x", "a"], ["y"], noop_with_empty_axes=1)], {"x": x}, ["y"],
          inits=[("a", np.array([], np.int64))], opset=13)
    check([N("ReduceMax", ["x"], ["y"], noop_with_empty_axes=1)], {"x": x}, ["y"], opset=18)


@pytest.mark.parametrize("op", ["ReduceMax", "ReduceMin"])
def test_reduce_bool_opset20(op):
    x = R.random((3, 4)) > 0.3
    check([N(op, ["x", "a"], ["y"], keepdims=0)], {"x": x}, ["y"],
          inits=[("a", np.array([1], np.int64))], opset=20)


@pytest.mark.parametrize("op", ["ReduceMean", "ReduceSum", "ReduceLogSumExp"])
def test_reduce_dynamic_batch(op):
    x = data(op, np.float32, (4, 6, 2))
    check([N(op, ["x"], ["y"], axes=[0, 1], keepdims=1)], {"x": x}, ["y"], opset=11,
          dyn_inputs=("x",), rtol=1e-4)
    check([N(op, ["x"], ["y"], axes=[1], keepdims=0)], {"x": x}, ["y"], opset=11,
          dyn_inputs=("x",), rtol=1e-4)


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("axis,keep,last", [(0, 1, 0), (-1, 0, 0), (1, 1, 1), (2, 0, 1)])
def test_arg(op, dt, axis, keep, last):
    x = R.integers(-2, 3, (3, 4, 5)).astype(dt)  # many ties
    check([N(op, ["x"], ["y"], axis=axis, keepdims=keep, select_last_index=last)], {"x": x},
          ["y"])


@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("opset", [1, 11])
def test_arg_old(op, opset):
    x = R.standard_normal((3, 4)).astype(np.float32)
    check([N(op, ["x"], ["y"], axis=1)], {"x": x}, ["y"], opset=opset)


def test_argmax_dynamic_batch():
    x = R.standard_normal((5, 7)).astype(np.float32)
    check([N("ArgMax", ["x"], ["y"], axis=1, keepdims=0)], {"x": x}, ["y"],
          dyn_inputs=("x",))


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("excl,rev", [(0, 0), (1, 0), (0, 1), (1, 1)])
@pytest.mark.parametrize("axis", [1, -1])
def test_cumsum(dt, excl, rev, axis):
    x = (R.standard_normal((2, 5, 3)) * 5).astype(dt)
    check([N("CumSum", ["x", "a"], ["y"], exclusive=excl, reverse=rev)], {"x": x}, ["y"],
          inits=[("a", np.array(axis, np.int64))], rtol=1e-5, atol=1e-5)


def test_cumsum_opset11_int32_axis_dynamic():
    x = R.standard_normal((4, 6)).astype(np.float32)
    check([N("CumSum", ["x", "a"], ["y"])], {"x": x}, ["y"], opset=11,
          inits=[("a", np.array(0, np.int32))], dyn_inputs=("x",), rtol=1e-5, atol=1e-5)


def test_reduce_noop_keeps_elementwise_steps(tmp_path):
    """noop_with_empty_axes=1 and no axes: only the reduction is the identity;
    ReduceLogSum is log(x), ReduceSumSquare x*x, ReduceL1 |x|, ReduceL2 sqrt(x*x)
    (the spec, onnxruntime, onnx.reference; fuzz s1-1, s1-61 got x)."""
    from onnx import TensorProto
    from dynamic_util import check_shapes, model
    nodes = [N(op, ["x"], [f"y{i}"], noop_with_empty_axes=1) for i, op in enumerate(OPS)]
    m = model(nodes, [("x", TensorProto.DOUBLE, ["N", 3])],
              [(f"y{i}", TensorProto.DOUBLE, None) for i in range(len(OPS))], opset=18)
    x = np.array([[-2.0, 0.5, 1e200], [np.inf, -np.inf, 0.0], [3.0, -0.25, np.nan]])
    with np.errstate(all="ignore"):
        check_shapes(tmp_path, m, [{"x": x}, {"x": x[:2]}, {"x": R.standard_normal((5, 3))}],
                     rtol=1e-12, atol=0, engine="onnxruntime")


def _nan_rows(dt, n):
    """Rows with NaN / +-inf first, in the middle, last, and all-NaN (n rows of 5)."""
    nan, inf = np.nan, np.inf
    fixed = np.array([[nan, 1, 3, 2, 0], [1, nan, 3, 3, 0], [3, 1, 0, 0, nan], [nan, nan, 1, 1, 0],
                      [inf, nan, 1, inf, 0], [-inf, nan, 1, -inf, 0], [nan] * 5,
                      [1, -inf, nan, -inf, 1]])
    x = np.concatenate([fixed, R.integers(-2, 3, (n, 5))]).astype(dt)
    m = R.random(x.shape)
    x[m < 0.2] = np.nan
    x[(m > 0.9)] = np.inf
    return x[:n]


@pytest.mark.parametrize("dt,et", [(np.float16, 10), (np.float32, 1), (np.float64, 11)])
def test_arg_nan_like_onnxruntime(tmp_path, dt, et):
    """Found by the fuzzer (s1-38): NaN handling of ArgMax/ArgMin is onnxruntime's
    (a scan from the first element: a NaN wins only in first place); we skipped
    a leading NaN. 2 run-time shapes."""
    from dynamic_util import check_shapes, model
    nodes = [N(op, ["x"], [f"{op}{last}"], axis=1, keepdims=0, select_last_index=last)
             for op in ("ArgMax", "ArgMin") for last in (0, 1)]
    m = model(nodes, [("x", et, ["n", 5])], [(n.output[0], 7, None) for n in nodes], opset=13)
    check_shapes(tmp_path, m, [{"x": _nan_rows(dt, 8)}, {"x": _nan_rows(dt, 30)}],
                 engine="onnxruntime")


@pytest.mark.parametrize("dt,et", [(np.uint8, 2), (np.uint32, 12)])
def test_reduce_and_arg_unsigned(tmp_path, dt, et):
    """Found by the fuzzer (s2-82): unsigned ReduceMin/Max used signed compares
    and a signed identity (uint8 ReduceMin gave 255 for 5); ArgMax/ArgMin,
    ReduceL1 (|x| of a large unsigned) and ReduceMean likewise. 2 run-time shapes."""
    from dynamic_util import check_shapes, model
    big = [("ReduceMax", {}), ("ReduceMin", {}), ("ArgMax", {"axis": 1}),
           ("ArgMin", {"axis": 1})]
    small = [("ReduceL1", {}), ("ReduceMean", {}), ("ReduceSum", {})] if dt != np.uint8 else []
    nodes, outs = [], []
    for i, (op, a) in enumerate(big + small):
        src = "x" if i < len(big) else "s"
        ins = [src] if op.startswith("Arg") else [src, "ax"]
        nodes.append(N(op, ins, [f"y{i}"], keepdims=0, **a))
        outs.append((f"y{i}", 7 if op.startswith("Arg") else et, None))
    m = model(nodes, [("x", et, ["n", 5]), ("s", et, ["n", 5])], outs, opset=18,
              inits=[helper.make_tensor("ax", 7, [1], [1])])
    hi = np.iinfo(dt).max

    def feeds(n):
        return {"x": R.integers(0, hi, (n, 5), endpoint=True).astype(dt),
                "s": R.integers(0, 40, (n, 5)).astype(dt)}
    check_shapes(tmp_path, m, [feeds(3), feeds(6)])


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean", "ReduceProd", "ReduceL2",
                                "ReduceLogSum"])
@pytest.mark.parametrize("runtime_axes", [False, True])
def test_reduce_f16_accumulates_in_f32(tmp_path, op, runtime_axes, opt_level):
    """f16 sums and products accumulate in f32, as onnxruntime does (fuzz
    s2000-575: a ReduceProd whose f16 partial products overflowed gave inf
    for 7280; a ReduceSum of 60000, 10000, -60000 gave inf). Compared with
    onnxruntime at two run-time shapes; axes constant or a graph input (that
    path, with a dynamic dim, crashed resolve_dims whatever the type)."""
    import onnx_mlir_py
    from onnx import TensorProto as T, numpy_helper as nh
    from onnx_mlir_py.runtime import ExecutionSession
    from onnx_mlir_py.testing.check import reference
    inputs = [helper.make_tensor_value_info("x", T.FLOAT16, ["n", 6])]
    inits = []
    if runtime_axes:
        inputs.append(helper.make_tensor_value_info("a", T.INT64, [1]))
    else:
        inits.append(nh.from_array(np.array([1], np.int64), "a"))
    g = helper.make_graph([N(op, ["x", "a"], ["y"], keepdims=0)], "g", inputs,
                          [helper.make_tensor_value_info("y", T.FLOAT16, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=opt_level))
    row = {"ReduceProd": [300, 300, 0.001, 0.01, 2, 0.5],
           "ReduceL2": [200, 300, 100, 5, 1, 2],
           "ReduceLogSum": [60000, 10000, 1, 5, 2, 3]}.get(op, [60000, 10000, -60000, 5, 1, 2])
    for n in (1, 3):
        x = np.array([row] * n, np.float16)
        feeds = {"x": x, "a": np.array([1], np.int64)}
        want = reference(m, {k: feeds[k] for k in [i.name for i in m.graph.input]},
                         "onnxruntime")[0]
        assert np.isfinite(want).all()
        got = sess.run([feeds[i.name] for i in m.graph.input])[0]
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2e-3)


def _int_rows(dt, n):
    """Rows of 5 integers that overflow a sum of squares or a sum in ``dt``
    (L2 2^31 saturates to the int32 max), sum to 0 or below (log: the type's
    lowest value in onnxruntime), or are small, then random ones."""
    big = 50000 if dt == np.int32 else 3037000500   # squares past the type's max
    lo = np.iinfo(dt).min
    fixed = [[big, big, 1, 0, -big], [lo, 0, 0, 0, 0], [3, -3, 0, 0, 0], [-7, 1, 2, 0, 0],
             [np.iinfo(dt).max] * 5, [1, 2, 3, 4, 5]]
    return np.concatenate([fixed, R.integers(-40, 40, (n, 5))]).astype(dt)[:n]


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("dt,et", [(np.int32, 6), (np.int64, 7)])
@pytest.mark.parametrize("runtime_axes", [False, True])
def test_reduce_l2_logsum_int_like_onnxruntime(tmp_path, dt, et, runtime_axes, opt_level):
    """Integer ReduceL2 / ReduceLogSum were refused (the fuzzer's only
    refusals, s2000). onnxruntime (1.32) computes them in double: no wrap of a
    sum of squares past 2^31, truncation toward zero, saturation, log of a sum
    <= 0 the type's lowest value; onnx.reference wraps the squares instead.
    Compared with onnxruntime at two run-time shapes, constant or run-time axes,
    and the no-axes (noop_with_empty_axes) elementwise form."""
    from dynamic_util import check_shapes, model
    ax = [helper.make_tensor("a", 7, [1], [1])] if not runtime_axes else []
    ins = [("x", et, ["n", 5])] + ([("a", 7, [1])] if runtime_axes else [])
    nodes = [N(op, ["x", "a"], [f"y{i}"], keepdims=i) for i, op in
             enumerate(["ReduceL2", "ReduceLogSum"])]
    nodes += [N(op, ["x"], [f"z{i}"], noop_with_empty_axes=1) for i, op in
              enumerate(["ReduceL2", "ReduceLogSum", "ReduceLogSumExp"])]
    outs = [(n.output[0], et, None) for n in nodes]
    m = model(nodes, ins, outs, opset=18, inits=ax)
    feeds = [{"x": _int_rows(dt, n), **({"a": np.array([1])} if runtime_axes else {})}
             for n in (6, 11)]
    with np.errstate(all="ignore"):
        check_shapes(tmp_path, m, feeds, opt_level=opt_level, engine="onnxruntime")


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("dt,et", [(np.int32, 6), (np.int64, 7), (np.uint32, 12),
                                   (np.uint64, 13)])
def test_reduce_logsumexp_int(tmp_path, dt, et, opt_level):
    """Integer ReduceLogSumExp is the opset-18 function body's: log(sum(exp(x)))
    in double (max-shifted here, so large values do not overflow), truncated
    toward zero. That is onnxruntime's uint32/uint64 kernel, compared with here;
    its int32/int64 kernel truncates each exp(x - max) term to an integer
    (only the maxima count: [3, 3, 2, 2, 2, 2, 2, 2] gives 3, not 4), so the
    signed types are compared with onnxruntime running that function body.
    Two run-time shapes, keepdims 0 and 1, one and all axes."""
    from onnx import TensorProto as T
    from dynamic_util import model
    from onnx_mlir_py.runtime import ExecutionSession
    from onnx_mlir_py.testing.check import reference
    import onnx_mlir_py
    ax = helper.make_tensor("a", 7, [1], [1])
    nodes = [N("ReduceLogSumExp", ["x", "a"], ["y0"], keepdims=0),
             N("ReduceLogSumExp", ["x"], ["y1"], keepdims=1)]
    m = model(nodes, [("x", et, ["n", 8])], [("y0", et, None), ("y1", et, None)], opset=18,
              inits=[ax])
    if dt in (np.uint32, np.uint64):
        ref = m
    else:   # the function body, on onnxruntime
        body = [N("Cast", ["x"], ["d"], to=T.DOUBLE),
                N("ReduceLogSumExp", ["d", "a"], ["e0"], keepdims=0),
                N("ReduceLogSumExp", ["d"], ["e1"], keepdims=1),
                N("Cast", ["e0"], ["y0"], to=et), N("Cast", ["e1"], ["y1"], to=et)]
        ref = model(body, [("x", et, ["n", 8])], [("y0", et, None), ("y1", et, None)],
                    opset=18, inits=[ax])
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=opt_level))
    off = 0 if dt in (np.uint32, np.uint64) else -20
    for n in (2, 5):
        x = np.concatenate([[[3, 3, 2, 2, 2, 2, 2, 2], [40, 0, 1, 39, 39, 2, 1, 0]],
                            R.integers(0, 12, (n, 8)) + off]).astype(dt)[:n]
        want = reference(ref, {"x": x}, "onnxruntime")
        got = sess.run([x])
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w, err_msg=str(x.shape))
    assert got[0][0] == 4  # 3 + log(2 + 6 / e) = 4.44
