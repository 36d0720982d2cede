"""Gather / GatherElements / GatherND / Scatter* / TopK / NonZero / Compress lowering
vs onnx.reference (ExecutionEngine; bool inputs through the full compiler)."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import helper

from bool_check import DTYPES, check, random_array
from engine import run_model
from lowering_util import make_model
from onnx import TensorProto
from onnx.reference import ReferenceEvaluator
from onnx_mlir_py.testing.check import check_compiled

R = np.random.default_rng(7)
N = helper.make_node


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def ints(lo, hi, shape, dt=np.int64):
    return R.integers(lo, hi, shape).astype(dt)


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("axis", [0, 1, -2])  # (the reference mishandles axis=-1)
def test_gather_elements(opset, axis):
    x = f32(4, 5)
    n = x.shape[axis]
    idx = ints(-n, n, (3, 5) if axis in (0, -2) else (4, 3))
    check([N("GatherElements", ["x", "i"], ["y"], axis=axis)], {"x": x, "i": idx}, ["y"],
          opset=opset)


def test_gather_elements_int32_dynamic():
    x = ints(-50, 50, (6, 3, 4), np.int32)
    idx = ints(0, 4, (6, 3, 2), np.int32)
    check([N("GatherElements", ["x", "i"], ["y"], axis=2)], {"x": x, "i": idx}, ["y"],
          dyn_inputs=("x", "i"))


@pytest.mark.parametrize("opset,bd,ds,ishape", [
    (11, 0, (3, 4), (2, 2)), (11, 0, (3, 4, 2), (2, 1)), (12, 0, (3, 4), (5, 1, 2)),
    (13, 1, (2, 3, 4), (2, 1)), (13, 1, (2, 3, 4), (2, 2, 2)), (13, 2, (2, 3, 4), (2, 3, 1))])
def test_gather_nd(opset, bd, ds, ishape):
    x = f32(*ds)
    k = ishape[-1]
    idx = np.stack([ints(-ds[bd + j], ds[bd + j], ishape[:-1]) for j in range(k)], -1)
    attrs = {"batch_dims": bd} if opset >= 12 else {}
    check([N("GatherND", ["x", "i"], ["y"], **attrs)], {"x": x, "i": idx}, ["y"], opset=opset)


def _se_inputs(dt):
    x = (R.standard_normal((3, 4)) * 10).astype(dt)
    idx = np.array([[0, 2, 2, 1], [1, 1, -1, 0]], np.int64)  # duplicates on axis 0
    upd = (R.standard_normal((2, 4)) * 10).astype(dt)
    return x, idx, upd


@pytest.mark.parametrize("red", ["none", "add", "mul", "max", "min"])
@pytest.mark.parametrize("dt", [np.float32, np.int64, np.int32])
def test_scatter_elements_reductions(red, dt):
    x, idx, upd = _se_inputs(dt)
    if red == "none":  # duplicates are undefined without a reduction
        idx = np.array([[0, 2, 1, 1], [1, 1, -1, 0]], np.int64)
    opset = 16 if red in ("none", "add", "mul") else 18
    check([N("ScatterElements", ["x", "i", "u"], ["y"], axis=0, reduction=red)],
          {"x": x, "i": idx, "u": upd}, ["y"], opset=opset)


@pytest.mark.parametrize("opset", [11, 13])
def test_scatter_elements_axis1(opset):
    x = f32(3, 5)
    idx = np.array([[1, 3], [0, -1], [4, 2]], np.int32)
    check([N("ScatterElements", ["x", "i", "u"], ["y"], axis=1)],
          {"x": x, "i": idx, "u": f32(3, 2)}, ["y"], opset=opset)


@pytest.mark.parametrize("opset", [9, 11])
def test_scatter_old(opset):
    # the reference has no Scatter: compare with ScatterElements (same semantics)
    feeds = {"x": f32(3, 3), "i": np.array([[1, 0, 2], [0, -1, 1]], np.int64), "u": f32(2, 3)}
    m = make_model([N("Scatter", ["x", "i", "u"], ["y"], axis=1)], feeds, ["y"], opset=opset)
    ref = make_model([N("ScatterElements", ["x", "i", "u"], ["y"], axis=1)], feeds, ["y"],
                     opset=11)
    (expected,) = ReferenceEvaluator(ref).run(None, feeds)
    (got,) = run_model(m, feeds, [expected])
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("red", ["none", "add", "mul", "max", "min"])
def test_scatter_nd(red):
    x = f32(4, 3, 2)
    idx = np.array([[0, 1], [-1, 2], [0, 1]], np.int64) if red != "none" else \
        np.array([[0, 1], [-1, 2], [2, 0]], np.int64)
    upd = f32(3, 2)
    opset = 16 if red in ("none", "add", "mul") else 18
    check([N("ScatterND", ["x", "i", "u"], ["y"], reduction=red)],
          {"x": x, "i": idx, "u": upd}, ["y"], opset=opset)


@pytest.mark.parametrize("opset", [11, 13])
def test_scatter_nd_slices_dynamic(opset):
    x = f32(5, 3)
    idx = np.array([[[3]], [[0]]], np.int64)  # (2, 1, 1): whole rows
    check([N("ScatterND", ["x", "i", "u"], ["y"])], {"x": x, "i": idx, "u": f32(2, 1, 3)},
          ["y"], opset=opset, dyn_inputs=("x",))


@pytest.mark.parametrize("largest", [1, 0])
@pytest.mark.parametrize("axis", [1, 0, -1])
def test_topk_ties(largest, axis):
    x = R.integers(0, 4, (5, 6)).astype(np.float32)  # many ties
    k = np.array([3], np.int64)
    check([N("TopK", ["x", "k"], ["v", "i"], axis=axis, largest=largest, sorted=1)],
          {"x": x}, ["v", "i"], inits=[("k", k)], opset=11)


@pytest.mark.parametrize("dt", [np.int32, np.int64, np.uint8])
def test_topk_ints(dt):
    x = R.integers(0, 200, (2, 3, 7)).astype(dt)
    check([N("TopK", ["x", "k"], ["v", "i"], axis=2)], {"x": x}, ["v", "i"],
          inits=[("k", np.array([4], np.int64))], opset=11)


@pytest.mark.parametrize("opset", [10, 24])
def test_topk_k_runtime_input(opset):
    x = f32(3, 8)
    check([N("TopK", ["x", "k"], ["v", "i"], axis=1)], {"x": x, "k": np.array([5], np.int64)},
          ["v", "i"], opset=opset)


def test_topk_v1_attribute():
    x = f32(4, 6)
    check([N("TopK", ["x"], ["v", "i"], axis=0, k=2)], {"x": x}, ["v", "i"], opset=9)


@pytest.mark.parametrize("opset", [9, 13])
def test_nonzero(opset):
    x = R.integers(-1, 2, (3, 4, 2)).astype(np.float32)
    check([N("NonZero", ["x"], ["y"])], {"x": x}, ["y"], opset=opset)


def test_nonzero_int_dynamic():
    x = R.integers(-1, 2, (5, 3)).astype(np.int32)
    check([N("NonZero", ["x"], ["y"])], {"x": x}, ["y"], dyn_inputs=("x",))


def test_nonzero_bool():
    x = R.random((4, 3)) > 0.5
    check([N("NonZero", ["x"], ["y"])], {"x": x}, ["y"])


def _compress_case(axis):
    x = f32(4, 5)
    c = np.array([True, False, True, True] if axis in (0, None) else [0, 1, 1], np.bool_)
    attrs = {} if axis is None else {"axis": axis}
    return [N("Compress", ["x", "c"], ["y"], **attrs)], {"x": x, "c": c}


@pytest.mark.parametrize("axis,opset", [(None, 11), (0, 11), (-1, 11), (1, 28)])
def test_compress(axis, opset):
    nodes, feeds = _compress_case(axis)
    check(nodes, feeds, ["y"], opset=opset)


@pytest.mark.parametrize("axis", [None, 1])
def test_compress_v9(axis):
    # onnx infers no output type for Compress-9 and the dialect has no shape
    # rule for it yet: declare the output type in the model
    nodes, feeds = _compress_case(axis)
    m = make_model(nodes, feeds, ["y"], opset=9)
    m.graph.output[0].CopyFrom(helper.make_tensor_value_info(
        "y", TensorProto.FLOAT, ["n"] if axis is None else [4, "n"]))
    check_compiled(m, feeds)


# -- every input dim dynamic, the last dim of indices too: the index depth
# follows from the result rank (GatherND) or the ranks (ScatterND) and is
# checked at run time -------------------------------------------------------
def _sym(name, rank):
    return [f"{name}{k}" for k in range(rank)]


def _nd_model(op, ranks, out_rank=None, **attrs):
    from dynamic_util import model
    from onnx import TensorProto as T
    names = ["x", "i", "u"][:len(ranks)]
    ins = [(n, T.INT64 if n == "i" else T.FLOAT, _sym(n, r)) for n, r in zip(names, ranks)]
    out = ("y", T.FLOAT, None if out_rank is None else _sym("y", out_rank))
    return model([N(op, names, ["y"], name="nd", **attrs)], ins, [out], opset=18)


def test_gather_nd_dynamic_depth(tmp_path):
    from dynamic_util import check_rejects, check_shapes
    m = _nd_model("GatherND", [3, 2], out_rank=2)       # depth 2: y = i[:-1] + x[2:]
    rng = np.random.default_rng(1)
    feeds = []
    for xs, n in [((3, 4, 5), 2), ((2, 6, 3), 4)]:
        idx = np.stack([rng.integers(-d, d, n) for d in xs[:2]], axis=1)
        feeds.append({"x": rng.standard_normal(xs).astype(np.float32), "i": idx})
    check_shapes(tmp_path, m, feeds)
    bad = dict(feeds[0], i=np.zeros((2, 1), np.int64))  # depth 1, not 2
    check_rejects(tmp_path, m, [bad], r"node 'nd' \(GatherND\): the last dim of indices is 1")


def test_gather_nd_dynamic_depth_batch_dims(tmp_path):
    from dynamic_util import check_rejects, check_shapes
    m = _nd_model("GatherND", [3, 3], out_rank=3, batch_dims=1)   # depth 1
    rng = np.random.default_rng(2)
    feeds = [{"x": rng.standard_normal((b, d, 4)).astype(np.float32),
              "i": rng.integers(0, d, (b, n, 1))} for b, d, n in [(2, 3, 2), (3, 5, 4)]]
    check_shapes(tmp_path, m, feeds)
    check_rejects(tmp_path, m, [dict(feeds[0], i=np.zeros((3, 2, 1), np.int64))],
                  r"node 'nd' \(GatherND\): batch dim 0 differs")


def test_gather_nd_unknowable_rank_is_refused(tmp_path):
    import onnx_mlir_py
    from onnx_mlir_py.errors import OnnxMlirError
    with pytest.raises(OnnxMlirError, match=r"node 'nd' \(GatherND\): the rank of result #0 .* is not known at compile time"):
        onnx_mlir_py.compile(_nd_model("GatherND", [3, 2]), tmp_path / "m.so")


@pytest.mark.parametrize("reduction", ["none", "add"])
def test_scatter_nd_dynamic_depth(tmp_path, reduction):
    from dynamic_util import check_rejects, check_shapes
    m = _nd_model("ScatterND", [3, 2, 2], reduction=reduction)   # depth 3 - 2 + 2 - 1 = 2
    rng = np.random.default_rng(3)
    feeds = []
    for xs, n in [((4, 3, 2), 3), ((2, 5, 6), 2)]:
        idx = np.stack([rng.permutation(d)[:n] % d for d in xs[:2]], axis=1)
        if reduction == "none":   # distinct rows: the result does not depend on order
            idx[:, 0] = rng.permutation(max(xs[0], n))[:n] % xs[0]
            idx = np.unique(idx, axis=0)
        feeds.append({"x": rng.standard_normal(xs).astype(np.float32), "i": idx,
                      "u": rng.standard_normal((len(idx), xs[2])).astype(np.float32)})
    check_shapes(tmp_path, m, feeds)
    f = feeds[0]
    check_rejects(tmp_path, m, [dict(f, i=np.zeros((len(f["i"]), 3), np.int64)),
                                dict(f, u=np.zeros((len(f["i"]), 5), np.float32))],
                  r"node 'nd' \(ScatterND\): (the last dim of indices is 3|updates dim 1 is 5)")


@pytest.mark.parametrize("largest", [1, 0])
def test_topk_nan_ranks_above_inf(tmp_path, largest):
    """Found next to the fuzzer's ArgMax/Hardmax NaN cases: NaN compared false
    with everything, so the ranks were no permutation (a value 3 for NaN, or
    index 0 twice). onnxruntime and onnx.reference put NaN above +inf. 2 run-time
    shapes."""
    from dynamic_util import check_shapes, model
    m = model([N("TopK", ["x", "k"], ["v", "i"], axis=1, largest=largest)],
              [("x", TensorProto.FLOAT, ["n", 6])],
              [("v", TensorProto.FLOAT, None), ("i", TensorProto.INT64, None)], opset=11,
              inits=[helper.make_tensor("k", TensorProto.INT64, [1], [4])])
    nan, inf = np.nan, np.inf
    x = np.array([[1, nan, 3, inf, nan, -inf], [nan, nan, nan, 1, 2, 2],
                  [-inf, inf, 0, nan, -inf, 5], [nan] * 6], np.float32)
    check_shapes(tmp_path, m, [{"x": x}, {"x": x[:2]}], engine="onnxruntime")


def arr(shape, dt):
    return random_array(R, shape, dt)


GATHERS = [((5, 4), (3,), 0), ((5, 4), (2, 3), 1), ((3, 4, 5), (), -1), ((3, 4, 5), (2, 2), -2)]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("k", range(len(GATHERS)))
def test_gather(dt, k):
    ds, ishape, axis = GATHERS[k]
    n = ds[axis]
    x = arr(ds, dt)
    idx = R.integers(-n, n, ishape).astype(np.int64)
    check([N("Gather", ["x", "i"], ["y"], axis=axis)], {"x": x, "i": idx}, ["y"])


@pytest.mark.parametrize("opset", [1, 11])
def test_gather_old_int32_indices(opset):
    x = arr((4, 3), np.float32)
    idx = np.array([[3, 0], [1, 1]], np.int32)
    check([N("Gather", ["x", "i"], ["y"], axis=0)], {"x": x, "i": idx}, ["y"], opset=opset)


def test_gather_dynamic_batch():
    x = arr((6, 4), np.float32)
    idx = np.array([0, -1, 2], np.int64)
    check([N("Gather", ["x", "i"], ["y"], axis=1)], {"x": x, "i": idx}, ["y"],
          dyn_inputs=("x",))


@pytest.mark.parametrize("opt", [0, 3])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32])
def test_gather_from_unsigned_initializer(tmp_path, opt, dtype):
    """A uint8 embedding table (quantize_dynamic of a BERT) read by Gather:
    the unsigned dense_resource constant failed bufferization (`tensor.bitcast
    ... ui8 -> i8` not bufferized); ids of a dynamic length, two lengths."""
    import onnx
    from onnx import numpy_helper

    import onnx_mlir_py
    table = R.integers(0, np.iinfo(dtype).max, (128, 128), endpoint=True).astype(dtype)
    g = helper.make_graph(
        [N("Gather", ["W", "ids"], ["y"], axis=0)], "gather_u",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["n"])],
        [helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(np.dtype(dtype)),
                                       ["n", 128])],
        [numpy_helper.from_array(table, "W")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    sess = onnx_mlir_py.ExecutionSession(
        onnx_mlir_py.compile(m, output=tmp_path / "g.so", opt_level=opt))
    for n in (5, 17):
        ids = ints(-128, 128, (n,))
        got = sess.run([ids])[0]
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, table[ids])
