"""MaxPool / AveragePool / LpPool / Global*Pool with dynamic batch and
spatial dims: each model compiled once, compared with onnxruntime at
several run-time shapes (auto_pad SAME over odd sizes, ceil_mode with and
without the v22 last-window rule, strides, dilations, count_include_pad)."""
from __future__ import annotations

import os

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import onnx_mlir_py
from onnx_mlir_py.errors import OnnxMlirError
from onnx_mlir_py.runtime import ExecutionSession

from test_lower_conv_family import UINT8, FLOAT, compile_once, run_dynamic
from test_lower_conv_family import _dyn_model as dyn_model

N = helper.make_node
R = np.random.default_rng(11)


def f32(*s):
    return R.standard_normal(s).astype(np.float32)


X2 = ["N", 3, "H", "W"]
SHAPES2 = [(1, 3, 7, 9), (2, 3, 6, 5), (1, 3, 4, 4)]

CASES = {
    "max_same_upper": ("MaxPool", 19, dict(kernel_shape=[3, 2], strides=[2, 2],
                                          auto_pad="SAME_UPPER")),
    "max_same_lower_dil": ("MaxPool", 19, dict(kernel_shape=[2, 3], strides=[1, 2],
                                              auto_pad="SAME_LOWER")),
    "max_separable": ("MaxPool", 19, dict(kernel_shape=[3, 4], pads=[1, 2, 0, 1])),  # 1x4, 3x1
    "max_ceil_v12": ("MaxPool", 12, dict(kernel_shape=[3, 2], strides=[2, 2], ceil_mode=1,
                                        dilations=[1, 2])),
    "max_ceil_v22_drop": ("MaxPool", 22, dict(kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1,
                                             pads=[1, 1, 1, 1])),
    "avg_pads_exclude": ("AveragePool", 19, dict(kernel_shape=[3, 3], pads=[1, 2, 2, 1],
                                                strides=[2, 1])),
    "avg_pads_include": ("AveragePool", 19, dict(kernel_shape=[3, 2], pads=[1, 0, 1, 1],
                                                count_include_pad=1, strides=[2, 2])),
    "avg_same_lower": ("AveragePool", 19, dict(kernel_shape=[3, 3], strides=[2, 2],
                                              auto_pad="SAME_LOWER")),
    "avg_ceil_dil_exclude": ("AveragePool", 19, dict(kernel_shape=[2, 2], strides=[2, 3],
                                                    ceil_mode=1, dilations=[2, 1],
                                                    pads=[0, 1, 1, 0])),
    "avg_ceil_include_v22": ("AveragePool", 22, dict(kernel_shape=[3, 3], strides=[2, 2],
                                                    ceil_mode=1, count_include_pad=1,
                                                    pads=[1, 1, 1, 1])),
    "lp_same_upper": ("LpPool", 18, dict(kernel_shape=[2, 3], strides=[2, 1], p=3,
                                        auto_pad="SAME_UPPER")),
}


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("case", sorted(CASES))
def test_pool_dynamic_2d(tmp_path, case, opt_level):
    op, opset, kw = CASES[case]
    m = dyn_model([N(op, ["x"], ["y"], **kw)], [("x", FLOAT, X2)], opset=opset)
    run_dynamic(tmp_path, m, [{"x": f32(*s)} for s in SHAPES2], opt_level, rtol=1e-5,
                atol=1e-5)


@pytest.mark.parametrize("op,kw,x,shapes", [
    ("MaxPool", dict(kernel_shape=[3], strides=[2], auto_pad="SAME_UPPER"), ["N", 2, "L"],
     [(1, 2, 9), (3, 2, 4)]),
    ("AveragePool", dict(kernel_shape=[2], pads=[1, 1], strides=[3], ceil_mode=1),
     ["N", 2, "L"], [(1, 2, 10), (2, 2, 5)]),
    ("AveragePool", dict(kernel_shape=[2, 2, 3], pads=[0, 1, 1, 1, 0, 1], strides=[1, 2, 2]),
     ["N", 2, "D", "H", "W"], [(1, 2, 3, 5, 6), (2, 2, 4, 4, 3)]),
    ("MaxPool", dict(kernel_shape=[2, 2, 2], dilations=[1, 2, 1], ceil_mode=1,
                     strides=[2, 2, 2]), ["N", 2, "D", "H", "W"], [(1, 2, 5, 6, 4), (1, 2, 4, 5, 7)]),
    ("LpPool", dict(kernel_shape=[3], p=2, pads=[1, 1]), ["N", 2, "L"], [(1, 2, 6), (2, 2, 3)]),
])
def test_pool_dynamic_nd(tmp_path, op, kw, x, shapes):
    m = dyn_model([N(op, ["x"], ["y"], **kw)], [("x", FLOAT, x)], opset=19)
    run_dynamic(tmp_path, m, [{"x": f32(*s)} for s in shapes], 0, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
def test_global_pool_dynamic(tmp_path, op):
    m = dyn_model([N(op, ["x"], ["y"])], [("x", FLOAT, ["N", "C", "H", "W"])])
    run_dynamic(tmp_path, m, [{"x": f32(*s)} for s in [(1, 3, 5, 7), (2, 4, 1, 3)]], 0,
                rtol=1e-5, atol=1e-6)


def test_max_pool_uint8_dynamic(tmp_path):
    m = dyn_model([N("MaxPool", ["x"], ["y"], kernel_shape=[2, 2], auto_pad="SAME_UPPER",
                     strides=[2, 2])], [("x", UINT8, ["N", 1, "H", "W"])], out_type=UINT8)
    feeds = [{"x": R.integers(0, 255, s).astype(np.uint8)} for s in [(1, 1, 5, 4), (2, 1, 3, 3)]]
    run_dynamic(tmp_path, m, feeds, 0, rtol=0, atol=0)


def test_pool_input_smaller_than_kernel_is_an_error(tmp_path):
    from onnx_mlir_py.runtime import RuntimeInputError
    m = dyn_model([N("MaxPool", ["x"], ["y"], name="mp0", kernel_shape=[3, 3])],
                  [("x", FLOAT, ["N", 1, "H", "W"])])
    sess = compile_once(tmp_path, m, 0)
    assert sess.run([f32(1, 1, 4, 3)])[0].shape == (1, 1, 2, 1)
    with pytest.raises(RuntimeInputError, match=r"node 'mp0' \(MaxPool\): spatial axis 1: "
                       r"padded input size 2 is smaller than the effective kernel size 3"):
        sess.run([f32(1, 1, 4, 2)])


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("op,opset,extra", [("MaxPool", 12, {}), ("AveragePool", 19, {}),
                                             ("LpPool", 18, {"p": 3})])
def test_ceil_mode_last_window_static(op, opset, extra, opt_level):
    """Fuzzer case s2000-79: before v22 onnx.shape_inference keeps ceil_mode's
    last window that starts past the input (width 4, stride 2 -> 3), while
    the spec, onnxruntime and onnx.reference drop it (-> 2). The compiler
    refused the model; the downstream Relu got onnx's wrong type too."""
    from onnx import TensorProto
    from onnx_mlir_py.testing.check import assert_match, reference, run_compiled
    for w in (4, 6):
        g = helper.make_graph(
            [N(op, ["x"], ["y"], kernel_shape=[1, 1], strides=[3, 2], ceil_mode=1, **extra),
             N("Relu", ["y"], ["z"])], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 1, 1, w])],
            [helper.make_tensor_value_info("z", TensorProto.FLOAT, None)])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
        feeds = {"x": f32(2, 1, 1, w)}
        got = run_compiled(m, feeds, opt_level)
        assert got[0].shape == (2, 1, 1, w // 2)
        assert_match(got, reference(m, feeds, "onnxruntime"))


def _ort(m, x):
    from onnx_mlir_py.testing.check import reference
    return reference(m, {"x": x}, "onnxruntime")[0]


NAN_CASES = {   # op, attrs, declared dims, two run-time shapes
    "max2d": ("MaxPool", dict(kernel_shape=[3, 2], pads=[1, 0, 1, 1]), ["N", 2, "H", "W"],
              [(1, 2, 5, 4), (2, 2, 6, 7)]),
    "max2d_strided": ("MaxPool", dict(kernel_shape=[2, 2], strides=[2, 1], dilations=[1, 2],
                                      pads=[0, 1, 1, 1]), ["N", 2, "H", "W"],
                      [(1, 2, 5, 4), (2, 2, 6, 7)]),
    "max2d_kernel": ("MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
                     ["N", 16, 14, 14], [(1, 16, 14, 14), (2, 16, 14, 14)]),  # -O3 row kernel
    # stride 1: a 1x5 then a 5x1 pool (YOLO's SPPF; -O3 row kernel for both)
    "max2d_separable": ("MaxPool", dict(kernel_shape=[5, 5], pads=[2, 2, 2, 2]),
                        ["N", 16, 20, 20], [(1, 16, 20, 20), (2, 16, 20, 20)]),
    "max1d": ("MaxPool", dict(kernel_shape=[3], strides=[2]), ["N", 2, "L"],
              [(1, 2, 9), (3, 2, 4)]),
    "global": ("GlobalMaxPool", {}, ["N", 3, "H", "W"], [(1, 3, 4, 4), (2, 3, 2, 5)]),
    "reduce": ("ReduceMax", dict(axes=[2], keepdims=0), ["N", 2, "L"], [(2, 2, 5), (1, 2, 9)]),
}


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("case", sorted(NAN_CASES))
def test_max_pool_nan_propagates(tmp_path, case, opt_level):
    """A NaN in a window gives NaN (the spec leaves it open; onnxruntime's answer
    depends on where the NaN sits: fuzz s3-14, s3-37, see fuzz/oracle.py
    NAN_SEMANTICS), -O0 and -O3 alike. Expected from onnxruntime: its result
    with the NaN as -inf, NaN where its pooling of the NaN mask is 1."""
    op, kw, dims, shapes = NAN_CASES[case]
    m = dyn_model([N(op, ["x"], ["y"], **kw)], [("x", FLOAT, dims)], opset=17)
    sess = compile_once(tmp_path, m, opt_level)
    for s in shapes:
        x = f32(*s)
        x.flat[R.choice(x.size // 2, max(2, x.size // 8), replace=False)] = np.nan
        x.flat[0] = -np.inf
        nan = np.isnan(x)
        want = _ort(m, np.where(nan, -np.inf, x).astype(np.float32))
        want = np.where(_ort(m, nan.astype(np.float32)) > 0, np.nan, want)
        assert 0 < np.isnan(want).sum() < want.size
        np.testing.assert_array_equal(sess.run([x])[0], want)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_average_pool_window_with_no_input_cell(opt_level):
    """Fuzz s2002-91: with dilations a window can step over every input cell
    (W = 1, kernel 2, dilation 2, pads 1/1: taps on both pads). With
    count_include_pad = 0 it counts no cell: onnxruntime gives 0, we gave
    0 / 0 = NaN."""
    from onnx import TensorProto
    from onnx_mlir_py.testing.check import assert_match, reference, run_compiled
    g = helper.make_graph(
        [N("AveragePool", ["x"], ["y"], kernel_shape=[3, 2], dilations=[1, 2],
           pads=[1, 1, 0, 1])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2, 2, 1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    feeds = {"x": f32(2, 2, 2, 1)}
    got = run_compiled(m, feeds, opt_level)
    assert not np.isnan(got[0]).any()
    assert_match(got, reference(m, feeds, "onnxruntime"))


# -- ceil_mode windows larger than the padded input ----------------------------
# Pools with ceil_mode whose window is larger than the padded input (#29, #31
# class 4): transformers' EfficientNet pooler is ``AvgPool2d(hidden_dim,
# ceil_mode=True)`` over a small map. ONNX's output size is
# ceil((in + pads - ke) / s) + 1 = 1 and onnxruntime runs it; we refused it
# ("padded input size 4 is smaller than the effective kernel size 640").
# Static axes cut the kernel to the padded input (no 640 x 640 pad per
# channel); dilated or dynamic axes get the end padding. Compared with
# onnxruntime at -O0 and -O3; a window that leaves no output is still refused
# in one line.


def _pool_model(op, x_shape, **attrs):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    g = helper.make_graph([helper.make_node(op, ["x"], ["y"], name="pool", **attrs)], "p",
                          [x], [y])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)], ir_version=9)


OVERSIZED = [
    # the EfficientNet pooler's form: kernel = stride = 640 over 4x4 (and 7x5)
    ("AveragePool", dict(kernel_shape=[640, 640], strides=[640, 640])),
    ("AveragePool", dict(kernel_shape=[9, 9], strides=[9, 9], count_include_pad=1,
                         pads=[1, 0, 1, 2])),
    ("AveragePool", dict(kernel_shape=[9, 3], strides=[9, 2], pads=[1, 1, 1, 1])),
    ("MaxPool", dict(kernel_shape=[640, 640], strides=[640, 640])),
    ("MaxPool", dict(kernel_shape=[6, 6], strides=[5, 5], pads=[1, 1, 0, 0])),
    # dilated: the end padding, not a cut kernel
    ("MaxPool", dict(kernel_shape=[4, 4], strides=[7, 7], dilations=[2, 2])),
]


@pytest.mark.parametrize("opt_level", [0, 3])
# a dynamic axis pads to the whole window: the 640 x 640 windows are the static form's
@pytest.mark.parametrize("case,dynamic", [(c, d) for c in range(len(OVERSIZED))
                                          for d in (False, True)
                                          if not (d and max(OVERSIZED[c][1]["kernel_shape"]) > 64)])
def test_window_larger_than_input(tmp_path, case, opt_level, dynamic):
    op, attrs = OVERSIZED[case]
    shapes = [(1, 8, 4, 4), (2, 3, 7, 5)]
    model = _pool_model(op, [None, None, "H", "W"] if dynamic else list(shapes[0]),
                        ceil_mode=1, **attrs)
    so = onnx_mlir_py.compile(model, output=os.path.join(tmp_path, "m.so"), opt_level=opt_level)
    sess = ExecutionSession(so)
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for shape in (shapes if dynamic else shapes[:1]):
        x = np.random.default_rng(sum(shape)).standard_normal(shape).astype(np.float32)
        want = ref.run(None, {"x": x})[0]
        got = sess.run([x])[0]
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_static_window_is_cut_not_padded(tmp_path):
    """The 640 x 640 window over 4x4 reads a 4x4 window of the input: no
    pad of 640 x 640 per channel in the lowered IR."""
    model = _pool_model("AveragePool", [1, 8, 4, 4], ceil_mode=1, kernel_shape=[640, 640],
                  strides=[640, 640])
    text = open(onnx_mlir_py.compile(model, output=os.path.join(tmp_path, "m.mlir"),
                                     emit="EmitMLIR", opt_level=0)).read()
    assert "tensor<4x4xf32>" in text                     # the window: the input's 4x4
    assert "640x" not in text and "x640" not in text, \
        [ln for ln in text.splitlines() if "640x" in ln or "x640" in ln][:3]


@pytest.mark.parametrize("ceil_mode,kernel,strides", [(1, 10, 3), (0, 5, 5)])
def test_window_with_no_output_is_refused(tmp_path, ceil_mode, kernel, strides):
    """4 + 3 <= 10 (ceil_mode) and 4 < 5 (floor) leave no output: refused in one line."""
    model = _pool_model("MaxPool", [1, 2, 4, 4], ceil_mode=ceil_mode, kernel_shape=[kernel, kernel],
                  strides=[strides, strides])
    with pytest.raises(OnnxMlirError) as ei:
        onnx_mlir_py.compile(model, output=os.path.join(tmp_path, "m.so"), opt_level=0)
    msg = str(ei.value)
    assert "\n" not in msg and "'pool'" in msg and "smaller than the effective kernel" in msg


# -- MaxUnpool ---------------------------------------------------------------------
# X's elements written at their flat indices (into the inferred shape
# [N, C, (in - 1) * s + k - pads...], whose leading corner the output_shape
# result is), zeros elsewhere; compared with onnx.reference (onnxruntime
# indexes the output_shape result instead, which the ONNX node tests refute).

def _unpool_model(x_dims, et, attrs, out_shape=None, opset=22, runtime_shape=False):
    ins = [helper.make_tensor_value_info("x", et, x_dims),
           helper.make_tensor_value_info("i", TensorProto.INT64, x_dims)]
    inits, names = [], ["x", "i"]
    if out_shape is not None:
        names.append("s")
        if runtime_shape:
            ins.append(helper.make_tensor_value_info("s", TensorProto.INT64, [len(x_dims)]))
        else:
            inits.append(helper.make_tensor("s", TensorProto.INT64, [len(out_shape)],
                                            list(out_shape)))
    g = helper.make_graph([N("MaxUnpool", names, ["y"], name="unpool0", **attrs)], "u", ins,
                          [helper.make_tensor_value_info("y", et, None)], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], ir_version=9)


def _unpool_feeds(shape, dtype, total, seed):
    """Random X and flat indices in [0, total), with duplicates (the later
    element of X wins, as in onnx.reference)."""
    r = np.random.default_rng(seed)
    x = (r.standard_normal(shape) * 4 + 1).astype(dtype)   # no zeros (missing writes show)
    i = r.integers(0, total, shape).astype(np.int64)
    i.reshape(-1)[-1] = i.reshape(-1)[0]                    # a duplicate index at least
    return {"x": x, "i": i}


def _ref(m, feeds):
    from onnx.reference import ReferenceEvaluator
    return ReferenceEvaluator(m).run(None, feeds)[0]


UNPOOL_CASES = {   # x shape, attrs, output_shape, opset
    "2d": ((2, 3, 2, 3), dict(kernel_shape=[2, 2], strides=[2, 2]), None, 22),
    "2d_output_shape": ((1, 2, 2, 2), dict(kernel_shape=[2, 2], strides=[2, 2]),
                        (1, 2, 5, 6), 22),
    "2d_pads_strides": ((2, 2, 3, 4), dict(kernel_shape=[3, 2], strides=[2, 3],
                                           pads=[1, 0, 0, 1]), None, 11),
    "2d_pads_output_shape_v9": ((1, 3, 3, 3), dict(kernel_shape=[3, 3], strides=[1, 2],
                                                   pads=[1, 1, 1, 0]), (2, 4, 6, 7), 9),
    "3d": ((1, 2, 2, 3, 2), dict(kernel_shape=[2, 2, 3], strides=[2, 1, 2],
                                 pads=[0, 1, 1, 1, 0, 0]), None, 22),
    "1d_output_shape": ((2, 1, 4), dict(kernel_shape=[2], strides=[2]), (2, 1, 9), 22),
}


def _inferred(shape, attrs):
    n = len(shape) - 2
    k, s = attrs["kernel_shape"], attrs.get("strides", [1] * n)
    p = attrs.get("pads", [0] * 2 * n)
    return list(shape[:2]) + [(shape[2 + i] - 1) * s[i] + k[i] - p[i] - p[n + i]
                              for i in range(n)]


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("case", sorted(UNPOOL_CASES))
def test_max_unpool(tmp_path, case, opt_level):
    shape, attrs, out_shape, opset = UNPOOL_CASES[case]
    m = _unpool_model(list(shape), TensorProto.FLOAT, attrs, out_shape, opset)
    feeds = _unpool_feeds(shape, np.float32, int(np.prod(_inferred(shape, attrs))), 1)
    got = compile_once(tmp_path, m, opt_level).run([feeds["x"], feeds["i"]])[0]
    want = _ref(m, feeds)
    assert got.shape == want.shape == tuple(out_shape or _inferred(shape, attrs))
    np.testing.assert_array_equal(got, want)
    assert np.count_nonzero(got) == len(np.unique(feeds["i"]))


@pytest.mark.parametrize("et,dtype", [(TensorProto.DOUBLE, np.float64),
                                      (TensorProto.FLOAT16, np.float16)])
def test_max_unpool_float_types(tmp_path, et, dtype):
    shape, attrs = (1, 2, 3, 2), dict(kernel_shape=[2, 2], strides=[2, 2], pads=[1, 0, 0, 1])
    m = _unpool_model(list(shape), et, attrs, (1, 2, 5, 4))
    feeds = _unpool_feeds(shape, dtype, int(np.prod(_inferred(shape, attrs))), 2)
    got = compile_once(tmp_path, m).run([feeds["x"], feeds["i"]])[0]
    want = _ref(m, feeds)
    assert got.dtype == want.dtype == dtype
    np.testing.assert_array_equal(got, want)


def test_max_unpool_integer_input_is_refused(tmp_path):
    """X is a float tensor (T1 of the schema, as onnxruntime): an int32 X is
    refused at compile time in one line naming the node."""
    m = _unpool_model([1, 1, 2, 2], TensorProto.INT32, dict(kernel_shape=[2, 2]))
    with pytest.raises(OnnxMlirError) as ei:
        onnx_mlir_py.compile(m, output=os.path.join(tmp_path, "m.so"), opt_level=0)
    msg = str(ei.value)
    assert "\n" not in msg and "'unpool0'" in msg and "tensor(int32)" in msg


@pytest.mark.parametrize("runtime_shape", [False, True])
def test_max_unpool_dynamic_batch(tmp_path, runtime_shape):
    """Compiled once, run at batch 1 and 3 (output_shape a constant with a
    dynamic batch is not expressible: here the run-time input gives it)."""
    attrs = dict(kernel_shape=[2, 3], strides=[2, 2], pads=[0, 1, 1, 0])
    m = _unpool_model(["N", 2, 3, 2], TensorProto.FLOAT, attrs,
                      (0, 0, 0, 0) if runtime_shape else None, runtime_shape=runtime_shape)
    sess = compile_once(tmp_path, m, 0)
    for n in (1, 3):
        shape = (n, 2, 3, 2)
        inf = _inferred(shape, attrs)
        feeds = _unpool_feeds(shape, np.float32, int(np.prod(inf)), n)
        args = [feeds["x"], feeds["i"]]
        if runtime_shape:
            feeds["s"] = np.array([n, 3] + [d + 1 for d in inf[2:]], np.int64)
            args.append(feeds["s"])
        got = sess.run(args)[0]
        want = _ref(m, feeds)
        assert got.shape == want.shape and got.shape[0] == n
        np.testing.assert_array_equal(got, want)


def test_max_unpool_bad_values_are_run_time_errors(tmp_path):
    """An index past the inferred output (or negative) and an output_shape
    smaller than the inferred shape fail the call naming the node; nothing
    is written out of bounds."""
    from onnx_mlir_py.runtime import RuntimeInputError
    attrs = dict(kernel_shape=[2, 2], strides=[2, 2])
    m = _unpool_model(["N", 1, 2, 2], TensorProto.FLOAT, attrs, (0, 0, 0, 0),
                      runtime_shape=True)
    sess = compile_once(tmp_path, m, 0)
    x = f32(2, 1, 2, 2)
    ok = np.arange(8, dtype=np.int64).reshape(2, 1, 2, 2) * 4     # total 2*1*4*4 = 32
    shape = np.array([2, 1, 4, 4], np.int64)
    np.testing.assert_array_equal(sess.run([x, ok, shape])[0],
                                  _ref(m, {"x": x, "i": ok, "s": shape}))
    for bad, value in ((32, 32), (-1, -1)):
        i = ok.copy()
        i[1, 0, 1, 0] = bad
        with pytest.raises(RuntimeInputError, match=rf"node 'unpool0' \(MaxUnpool\): index "
                           rf"{value} is out of range \[0, 31\]"):
            sess.run([x, i, shape])
    with pytest.raises(RuntimeInputError, match=r"node 'unpool0' \(MaxUnpool\): "
                       r"output_shape\[3\] = 3 is smaller than the inferred size 4"):
        sess.run([x, ok, np.array([2, 1, 4, 3], np.int64)])
    # the session still works after the errors
    np.testing.assert_array_equal(sess.run([x, ok, shape])[0],
                                  _ref(m, {"x": x, "i": ok, "s": shape}))


def test_max_unpool_constant_index_out_of_range_is_a_compile_error(tmp_path):
    attrs = dict(kernel_shape=[2, 2], strides=[2, 2])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 1, 2])
    i = helper.make_tensor("i", TensorProto.INT64, [1, 1, 1, 2], [3, 8])
    g = helper.make_graph([N("MaxUnpool", ["x", "i"], ["y"], name="unpool0", **attrs)], "u",
                          [x], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [i])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 22)], ir_version=9)
    with pytest.raises(OnnxMlirError, match=r"'unpool0'.*index 8 is out of range \[0, 7\]"):
        onnx_mlir_py.compile(m, output=os.path.join(tmp_path, "m.so"), opt_level=0)


@pytest.mark.parametrize("i_shape,attrs,match", [
    ([1, 1, 2, 3], dict(kernel_shape=[2, 2]), r"input 'I' has shape \[1x1x2x3\]: expected "
     r"the shape of input 'X' \[1x1x2x2\]"),
    ([1, 1, 2, 2], dict(kernel_shape=[1, 1], pads=[2, 0, 1, 0]),
     r"spatial axis 0: the inferred output size -1 is negative"),
    ([1, 1, 2, 2], dict(kernel_shape=[2]), r"attribute 'kernel_shape' has 1 values, expected 2"),
])
def test_max_unpool_invalid_is_refused(tmp_path, i_shape, attrs, match):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 2, 2])
    i = helper.make_tensor_value_info("i", TensorProto.INT64, i_shape)
    g = helper.make_graph([N("MaxUnpool", ["x", "i"], ["y"], name="unpool0", **attrs)], "u",
                          [x, i], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 22)], ir_version=9)
    with pytest.raises(OnnxMlirError, match=r"'unpool0' \(MaxUnpool\): " + match):
        onnx_mlir_py.compile(m, output=os.path.join(tmp_path, "m.so"), opt_level=0)


ARGMAX_CASES = {   # attrs, declared dims, run-time shapes
    "2d_pads": (dict(kernel_shape=[3, 2], pads=[1, 0, 1, 1]), ["N", 2, "H", "W"],
                [(1, 2, 5, 4), (2, 2, 6, 7)]),
    "2d_strided_dilated": (dict(kernel_shape=[2, 2], strides=[2, 1], dilations=[1, 2],
                                pads=[0, 1, 1, 1]), ["N", 2, "H", "W"], [(1, 2, 5, 6), (2, 2, 6, 7)]),
    "2d_ceil": (dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1), ["N", 3, "H", "W"],
                [(1, 3, 8, 8), (2, 3, 7, 10)]),
    "2d_col_major": (dict(kernel_shape=[2, 3], strides=[1, 2], storage_order=1),
                     ["N", 2, "H", "W"], [(1, 2, 5, 7), (3, 2, 4, 4)]),
    "2d_same": (dict(kernel_shape=[3, 3], auto_pad="SAME_UPPER", strides=[2, 2]),
                ["N", 2, "H", "W"], [(1, 2, 5, 5), (2, 2, 6, 9)]),
    "1d": (dict(kernel_shape=[3], strides=[2], pads=[1, 1]), ["N", 2, "L"], [(1, 2, 9), (3, 2, 4)]),
    "3d": (dict(kernel_shape=[2, 2, 2], strides=[1, 2, 2]), ["N", 2, "D", 4, 6],
           [(1, 2, 3, 4, 6), (2, 2, 4, 4, 6)]),
}


def _argmax_graph(attrs, dims, et=TensorProto.FLOAT, opset=12):
    g = helper.make_graph([N("MaxPool", ["x"], ["y", "i"], **attrs)], "argmax",
                          [helper.make_tensor_value_info("x", et, dims)],
                          [helper.make_tensor_value_info("y", et, None),
                           helper.make_tensor_value_info("i", TensorProto.INT64, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("case", sorted(ARGMAX_CASES))
def test_max_pool_indices_match_onnxruntime(tmp_path, case, opt_level):
    """MaxPool's Indices output (flat indices into X, row- or column-major
    spatial dims): values and indices as onnxruntime, dynamic dims at two
    shapes; ties (values from a few integers) resolve to the first element
    of the window."""
    attrs, dims, shapes = ARGMAX_CASES[case]
    m = _argmax_graph(attrs, dims)
    sess = compile_once(tmp_path, m, opt_level)
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for k, s in enumerate(shapes):
        x = f32(*s) if k == 0 else R.integers(-2, 3, s).astype(np.float32)   # ties
        y, i = sess.run([x])
        wy, wi = ref.run(None, {"x": x})
        np.testing.assert_array_equal(y, wy)
        np.testing.assert_array_equal(i, wi)
        assert i.dtype == np.int64
        flat = x.transpose(0, 1, 3, 2) if "col_major" in case else x   # spatial order
        np.testing.assert_array_equal(flat.reshape(-1)[i.reshape(-1)], y.reshape(-1))


@pytest.mark.parametrize("opt_level", [0, 3])
def test_max_pool_indices_nan_and_minus_inf(tmp_path, opt_level):
    """A window holding a NaN: Y is NaN as without the Indices output, and
    the index is the first NaN's; a window of -inf (padded at its start)
    gives its first element inside the image, never a padding position."""
    attrs = dict(kernel_shape=[2, 2], pads=[1, 1, 0, 0])
    m, m_y = _argmax_graph(attrs, [1, 1, 3, 3]), _pool_model("MaxPool", [1, 1, 3, 3], **attrs)
    x = np.array([[[[-np.inf, -np.inf, 1.0], [-np.inf, np.nan, 2.0], [3.0, np.nan, 0.5]]]],
                 np.float32)
    y, i = compile_once(tmp_path, m, opt_level).run([x])
    y_only = compile_once(tmp_path / "y", m_y, opt_level).run([x])[0]
    np.testing.assert_array_equal(y, y_only)                 # NaN where Y alone has NaN
    # windows (row-major, top-left at (r-1, c-1)): (0,0) only x[0,0] = -inf -> index 0;
    # (1,1) covers x[0,0], x[0,1], x[1,0], x[1,1] = NaN -> index 4
    assert i[0, 0, 0, 0] == 0 and np.isneginf(y[0, 0, 0, 0])
    assert i[0, 0, 1, 1] == 4 and np.isnan(y[0, 0, 1, 1])
    assert i[0, 0, 2, 2] == 4 and i[0, 0, 2, 1] == 4 and i[0, 0, 0, 2] == 2 and i[0, 0, 2, 0] == 6


@pytest.mark.parametrize("opt_level", [0, 3])
def test_max_pool_indices_feed_max_unpool(tmp_path, opt_level):
    """MaxPool (with Indices) then MaxUnpool, as SegNet-style decoders: every
    max lands back at its position, the rest is 0 (against onnxruntime)."""
    g = helper.make_graph(
        [N("MaxPool", ["x"], ["y", "i"], kernel_shape=[2, 2], strides=[2, 2]),
         N("MaxUnpool", ["y", "i"], ["u"], kernel_shape=[2, 2], strides=[2, 2])], "segnet",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 8, 8])],
        [helper.make_tensor_value_info("u", TensorProto.FLOAT, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 12)])
    m.ir_version = 8
    sess = compile_once(tmp_path, m, opt_level)
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for n in (1, 2):
        x = f32(n, 3, 8, 8)
        u = sess.run([x])[0]
        np.testing.assert_array_equal(u, ref.run(None, {"x": x})[0])
        assert (u != 0).sum() == n * 3 * 16


@pytest.mark.parametrize("op_type", ["LpPool", "GlobalLpPool"])
def test_lp_pool_f16_sums_in_f32(op_type, tmp_path):
    """f16 |x|^p overflows from |x| = 41 at p = 3 (fuzz s2811-7: inf where
    onnx.reference gives 45.1): the sum is taken in f32 and rounded once.
    Oracle: the formula in f64 (onnxruntime has no f16 LpPool; onnx.reference
    has no GlobalLpPool and overflows itself on some inputs)."""
    attrs = dict(p=3) if op_type == "GlobalLpPool" else dict(kernel_shape=[3], strides=[3], p=3)
    node = helper.make_node(op_type, ["x"], ["y"], **attrs)
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT16,
                                                                      [1, 4, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT16, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    x = (np.random.default_rng(0).random((1, 4, 6)) * 40 + 30).astype(np.float16)
    cube = np.abs(x.astype(np.float64)) ** 3
    sums = cube.sum(axis=2, keepdims=True) if op_type == "GlobalLpPool" else \
        cube.reshape(1, 4, 2, 3).sum(axis=3)
    want = (sums ** (1 / 3)).astype(np.float16)
    for level in (0, 3):
        got = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / f"m{level}.so",
                                                    opt_level=level)).run([x])[0]
        assert np.isfinite(got).all()
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2e-3)
