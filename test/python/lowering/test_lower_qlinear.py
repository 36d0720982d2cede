"""com.microsoft QLinear ops (QLinearAdd, QLinearMul, QLinearGlobalAveragePool,
QLinearAveragePool, QLinearConcat, QLinearSigmoid, QLinearLeakyRelu,
QLinearSoftmax) against onnxruntime: the integer outputs must be equal.

Each model holds several nodes (one compile per opt level and type) and runs
at two batch sizes (dynamic dims). QLinearAdd / QLinearMul use scales whose
ratios (A/C and B/C, or A*B/C) are within a few ulps of simple fractions, so
that many results fall next to a .5 tie: a computation that rounds
differently from onnxruntime's kernel (an FMA more or less, another order, A
and B not swapped where onnxruntime's broadcaster swaps them) gives other
integers there.
"""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from onnx_mlir_py.errors import OnnxMlirError
from onnx_mlir_py.runtime import ExecutionSession

from dynamic_util import check_rejects, check_shapes, model

MS = "com.microsoft"
OPT = [0, 3]
W = 256     # QLinearAdd / QLinearMul row length
TYPES = {"u8": (np.uint8, T.UINT8), "s8": (np.int8, T.INT8)}


class Params:
    """Initializers for scales and zero points (random, seeded)."""

    def __init__(self, dt: str, seed: int):
        self.np_t, self.onnx_t = TYPES[dt]
        self.info = np.iinfo(self.np_t)
        self.rng = np.random.default_rng(seed)
        self.inits = []

    def scale(self, name: str, value: float | None = None) -> str:
        v = float(self.rng.uniform(0.005, 0.1)) if value is None else value
        self.inits.append(h.make_tensor(name, T.FLOAT, [], [np.float32(v)]))
        return name

    def zero_point(self, name: str, value: int | None = None) -> str:
        v = int(self.rng.integers(self.info.min, self.info.max + 1)) if value is None else value
        self.inits.append(h.make_tensor(name, self.onnx_t, [], [v]))
        return name

    def near_tie_scales(self, prefix: str) -> list[str]:
        """A, B and C scales with A/C and B/C a few ulps from 1/4, 1/2, 3/4 or 3/2."""
        sc = np.float32(self.rng.uniform(0.01, 0.1))
        out = []
        for k in ("a", "b"):
            ratio = self.rng.choice([0.25, 0.5, 0.75, 1.5])
            eps = self.rng.uniform(-1, 1) * 2.0 ** -int(self.rng.integers(20, 24))
            out.append(self.scale(f"{prefix}s{k}", float(sc * ratio * (1 + eps))))
        out.append(self.scale(f"{prefix}sc", float(sc)))
        return out

    def near_tie_mul_scales(self, prefix: str) -> list[str]:
        """A, B and C scales with A*B/C (as onnxruntime computes it in f32)
        one to three ulps from 1/4, 1/2, 3/4 or 3/2."""
        sa, sc = np.float32(self.rng.uniform(0.01, 0.1)), np.float32(self.rng.uniform(0.01, 0.1))
        ratio = np.float32(self.rng.choice([0.25, 0.5, 0.75, 1.5]))
        sb = np.float32(sc * ratio / sa)
        step = np.float32(np.inf if self.rng.integers(2) else -np.inf)
        while True:
            r = np.float32(np.float32(sa * sb) / sc)
            if r != ratio and abs(int(r.view(np.int32)) - int(ratio.view(np.int32))) <= 3:
                break
            sb = np.nextafter(sb, step)
        return [self.scale(f"{prefix}sa", float(sa)), self.scale(f"{prefix}sb", float(sb)),
                self.scale(f"{prefix}sc", float(sc))]

    def near_tie_pool_scales(self, prefix: str, cells: int) -> list[str]:
        """x and y scales with x_scale / (y_scale * cells) (MLAS's global pool
        multiplier, in f32) one to three ulps from 1/4 or 1/2."""
        sx = np.float32(self.rng.uniform(0.01, 0.1))
        ratio = np.float32(self.rng.choice([0.25, 0.5]))
        sy = np.float32(sx / (ratio * cells))
        step = np.float32(np.inf if self.rng.integers(2) else -np.inf)
        while True:
            r = np.float32(sx / np.float32(sy * np.float32(cells)))
            if r != ratio and abs(int(r.view(np.int32)) - int(ratio.view(np.int32))) <= 3:
                break
            sy = np.nextafter(sy, step)
        return [self.scale(f"{prefix}_sx", float(sx)), self.scale(f"{prefix}_sy", float(sy))]

    def data(self, shape, around: int | None = None) -> np.ndarray:
        """Random values, all of the type's or within 4 of ``around``."""
        lo, hi = (self.info.min, self.info.max + 1) if around is None else (around - 4,
                                                                              around + 5)
        return self.rng.integers(lo, hi, size=shape, dtype=self.np_t)


def _node(op: str, ins: list[str], out: str, **attrs):
    return h.make_node(op, ins, [out], domain=MS, name=out, **attrs)


def _trailing(ins: list[str]) -> list[str]:
    """``ins`` without its trailing absent inputs: onnxruntime's type
    inference of QLinearAdd / QLinearMul / QLinearAveragePool fails on an
    absent zero point given as "" (so only trailing ones can be left out),
    and its lookup-table ops (QLinearSigmoid...) abort on a missing trailing
    one (so those get "")."""
    while ins and ins[-1] == "":
        ins = ins[:-1]
    return ins


# -- QLinearAdd / QLinearMul -------------------------------------------------------

@pytest.mark.parametrize("opt_level", OPT)
@pytest.mark.parametrize("dt", ["u8", "s8"])
def test_add_mul(tmp_path, dt, opt_level):
    """Broadcasting (a trailing 1, a leading 1, a scalar, dims known only at
    run time: P and Q swap which of them onnxruntime takes as the per-span
    scalar between the two feeds), with and without C's zero point."""
    p = Params(dt, seed=11 if dt == "u8" else 12)
    et = p.onnx_t
    nodes, outs = [], []
    for op in ("QLinearAdd", "QLinearMul"):
        k = op[7:].lower()
        sa, sb, sc = p.near_tie_scales(k) if k == "add" else p.near_tie_mul_scales(k)
        za, zb, zc = p.zero_point(f"{k}za"), p.zero_point(f"{k}zb"), p.zero_point(f"{k}zc")
        for name, a, b, zps in ((f"{k}_col", "a", "b_col", True), (f"{k}_row", "a", "b_row", False),
                                (f"{k}_dyn", "p", "q", True), (f"{k}_scalar", "s", "a", True)):
            nodes.append(_node(op, _trailing([a, sa, za, b, sb, zb, sc, zc if zps else ""]), name))
            outs.append((name, et, None))
    m = model(nodes, [("a", et, ["N", 3, W]), ("b_col", et, [3, 1]), ("b_row", et, ["N", 1, W]),
                      ("p", et, ["P0", "P1"]), ("q", et, ["Q0", "Q1"]), ("s", et, [])],
              outputs=outs, inits=p.inits, ms_opset=1)
    feeds = []
    for n, (ps, qs) in ((2, ((8, 1), (8, W))), (5, ((8, W), (1, W)))):
        feeds.append({"a": p.data((n, 3, W)), "b_col": p.data((3, 1)), "b_row": p.data((n, 1, W)),
                      "p": p.data(ps), "q": p.data(qs), "s": p.data(())})
    check_shapes(tmp_path, m, feeds, opt_level=opt_level, engine="onnxruntime")


def test_absent_zero_points(tmp_path):
    """Zero points given as "" in the middle of the inputs (A's, B's, x's)
    are 0: onnxruntime's kernels read them so, but its type inference refuses
    such a node, so it runs the same node with explicit zero points of 0."""
    p = Params("u8", seed=41)
    et = p.onnx_t
    zero = h.make_tensor("zero", et, [], [0])

    def build(z):
        nodes = [_node("QLinearAdd", ["a", p.scale("sa"), z, "b", p.scale("sb"), z, p.scale("sc"),
                                      p.zero_point("zc")], "add"),
                 _node("QLinearMul", ["a", "sa", z, "b", "sb", z, "sc", "zc"], "mul"),
                 _node("QLinearAveragePool", ["x", p.scale("sx"), z, p.scale("sy"),
                                              p.zero_point("zy")], "pool", kernel_shape=[2, 2])]
        return model(nodes, [("a", et, ["N", 8]), ("b", et, [8]), ("x", et, ["N", 2, 4, 4])],
                     outputs=[(n.output[0], et, None) for n in nodes], inits=p.inits + [zero],
                     ms_opset=1)
    ours = ExecutionSession(onnx_mlir_py.compile(build(""), tmp_path / "m.so"))
    p.inits.clear()
    p.rng = np.random.default_rng(41)
    ort_model = build("zero")
    sess = ort.InferenceSession(ort_model.SerializeToString(), providers=["CPUExecutionProvider"])
    for n in (1, 3):
        feeds = {"a": p.data((n, 8)), "b": p.data(8), "x": p.data((n, 2, 4, 4))}
        for got, want in zip(ours.run([feeds["a"], feeds["b"], feeds["x"]]),
                             sess.run(None, feeds)):
            np.testing.assert_array_equal(got, want)


# -- pooling -------------------------------------------------------------------------

@pytest.mark.parametrize("opt_level", OPT)
@pytest.mark.parametrize("dt", ["u8", "s8"])
def test_pools(tmp_path, dt, opt_level):
    """QLinearGlobalAveragePool (NCHW and channels_last) and QLinearAveragePool:
    pads with and without count_include_pad, ceil_mode, SAME_UPPER with a
    kernel smaller than the stride (onnxruntime's negative pad), SAME_LOWER,
    channels_last, 1-D and 3-D, no y_zero_point, and a kernel covering the
    image: onnxruntime's integer global path, statically and (dynamic H, W)
    chosen at run time (their scales near ties: the integer path rounds
    otherwise than the float one)."""
    p = Params(dt, seed=21 if dt == "u8" else 22)
    et = p.onnx_t

    center = 10 if dt == "s8" else 130     # X's values are within 4 of it

    def q(name):
        cells = {"gap": 72, "gap_nhwc": 32, "whole": 72, "whole_dyn": 25}.get(name)
        if cells:       # the sums' multiplier near 1/4 or 1/2: many results near ties
            sx, sy = p.near_tie_pool_scales(name, cells)
            return [sx, p.zero_point(f"{name}_zx", center), sy, p.zero_point(f"{name}_zy")]
        return [p.scale(f"{name}_sx"), p.zero_point(f"{name}_zx"), p.scale(f"{name}_sy"),
                p.zero_point(f"{name}_zy")]
    specs = [  # (output, op, input, attrs, zero points)
        ("gap", "QLinearGlobalAveragePool", "x", {}, True),
        ("gap_nhwc", "QLinearGlobalAveragePool", "x", {"channels_last": 1}, True),
        ("pads", "QLinearAveragePool", "x",
         {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 0, 1, 2]}, True),
        ("ceil_incl", "QLinearAveragePool", "x",
         {"kernel_shape": [3, 2], "strides": [2, 3], "pads": [1, 1, 0, 1], "ceil_mode": 1,
          "count_include_pad": 1}, True),
        ("same_upper", "QLinearAveragePool", "x",
         {"kernel_shape": [1, 2], "strides": [3, 4], "auto_pad": "SAME_UPPER"}, False),
        ("same_lower", "QLinearAveragePool", "x",
         {"kernel_shape": [2, 3], "strides": [2, 1], "auto_pad": "SAME_LOWER"}, True),
        ("nhwc", "QLinearAveragePool", "x",
         {"kernel_shape": [2, 2], "strides": [1, 2], "pads": [0, 1, 1, 0], "channels_last": 1},
         True),
        ("whole", "QLinearAveragePool", "x", {"kernel_shape": [9, 8]}, True),
        ("whole_dyn", "QLinearAveragePool", "xd", {"kernel_shape": [5, 5]}, True),
        ("pool1d", "QLinearAveragePool", "x1",
         {"kernel_shape": [4], "strides": [2], "pads": [2, 1]}, True),
        ("pool3d", "QLinearAveragePool", "x3",
         {"kernel_shape": [2, 3, 2], "strides": [1, 2, 2], "pads": [1, 0, 1, 0, 1, 1],
          "count_include_pad": 1}, True),
    ]
    nodes, outs = [], []
    for name, op, x, attrs, zps in specs:
        sx, zx, sy, zy = q(name)
        nodes.append(_node(op, _trailing([x, sx, zx, sy, zy if zps else ""]), name, **attrs))
        outs.append((name, et, None))
    m = model(nodes, [("x", et, ["N", 4, 9, 8]), ("xd", et, ["N", 3, "H", "W"]),
                      ("x1", et, ["N", 3, 11]), ("x3", et, ["N", 2, 4, 5, 6])],
              outputs=outs, inits=p.inits, ms_opset=1)
    feeds = [{"x": p.data((n, 4, 9, 8), center), "xd": p.data((n, 3, hw, hw), center),
              "x1": p.data((n, 3, 11)), "x3": p.data((n, 2, 4, 5, 6))}
             for n, hw in ((2, 5), (3, 7))]
    check_shapes(tmp_path, m, feeds, opt_level=opt_level, engine="onnxruntime")


# -- QLinearConcat, the lookup-table activations, QLinearSoftmax ---------------------

@pytest.mark.parametrize("opt_level", OPT)
@pytest.mark.parametrize("dt", ["u8", "s8"])
def test_concat_activations_softmax(tmp_path, dt, opt_level):
    """QLinearConcat (three inputs along a dynamic axis, one of them with Y's
    scale and zero point: copied), QLinearSigmoid (every input value),
    QLinearLeakyRelu without zero points, QLinearSoftmax at opset 13 along
    the last and a middle axis (one without X's zero point, X's scale a
    graph input) and at opset 12 (rows coerced to 2-D), and rows whose
    results lie next to a .5 tie (``_near_tie_rows``)."""
    p = Params(dt, seed=31 if dt == "u8" else 32)
    et = p.onnx_t
    sy, zy = p.scale("cat_sy"), p.zero_point("cat_zy")
    cat_in = ["cat_sy", "cat_zy"]
    for j, x in enumerate(("c0", "c1")):
        cat_in += [x, p.scale(f"cat_s{j}"), p.zero_point(f"cat_z{j}")]
    cat_in += ["c2", sy, zy]
    nodes = [_node("QLinearConcat", cat_in, "cat", axis=1),
             _node("QLinearSigmoid", ["v", p.scale("sig_sx"), p.zero_point("sig_zx"),
                                      p.scale("sig_sy", 1 / 256), p.zero_point("sig_zy")], "sig"),
             _node("QLinearLeakyRelu", ["v", p.scale("lr_sx"), "", p.scale("lr_sy"), ""], "lrelu",
                   alpha=0.15),
             _node("QLinearSoftmax", ["x", p.scale("sm_sx"), p.zero_point("sm_zx"),
                                      p.scale("sm_sy", 1 / 256), p.zero_point("sm_zy")], "sm13",
                   opset=13, axis=-1),
             _node("QLinearSoftmax", ["x", "sxin", "", p.scale("smm_sy", 0.004),
                                      p.zero_point("smm_zy")], "sm13_mid", opset=13, axis=1),
             _node("QLinearSoftmax", ["x", p.scale("sm12_sx"), p.zero_point("sm12_zx"),
                                      p.scale("sm12_sy", 1 / 256), p.zero_point("sm12_zy")],
                   "sm12", opset=12, axis=1),
             _node("QLinearSoftmax", ["t", p.scale("tie_sx", 0.25), "",
                                      p.scale("tie_sy", 1 / 255.5),
                                      p.zero_point("tie_zy", int(p.info.min))], "sm_ties",
                   opset=13, axis=-1)]
    outs = [(n.output[0], et, None) for n in nodes]
    m = model(nodes, [("c0", et, ["N", 3, 4]), ("c1", et, ["N", "K", 4]), ("c2", et, ["N", 2, 4]),
                      ("v", et, ["N", 256]), ("x", et, ["N", 6, 35]), ("sxin", T.FLOAT, []),
                      ("t", et, ["R", 37])],
              outputs=outs, inits=p.inits, ms_opset=1)
    every = np.arange(p.info.min, p.info.max + 1).astype(p.np_t)
    feeds = []
    for n, k in ((1, 5), (3, 2)):
        feeds.append({"c0": p.data((n, 3, 4)), "c1": p.data((n, k, 4)), "c2": p.data((n, 2, 4)),
                      "v": np.stack([every] + [p.data(256) for _ in range(n - 1)]),
                      "x": p.data((n, 6, 35)), "sxin": np.array(0.04 * n, np.float32),
                      "t": _near_tie_rows(p, 40 * n)})
    check_shapes(tmp_path, m, feeds, opt_level=opt_level, engine="onnxruntime")


def _near_tie_rows(p: Params, rows: int) -> np.ndarray:
    """Softmax rows (x_scale 1/4, floor(1 / y_scale) = 255) with two maxima
    and 35 values 70 to 92 below them: each of those adds 2e-10 to 2e-8 of a
    maximum's exp to the sum, so the two maxima land within a few ulps of
    127.5, where the rounding of the sum (its order: the small terms are
    absorbed once a maximum is in) and of the division decide the integer."""
    top = int(p.info.max) - int(p.rng.integers(0, 20))
    x = top - p.rng.integers(70, 93, size=(rows, 37))
    for r in range(rows):
        x[r, p.rng.choice(37, 2, replace=False)] = top
    return x.astype(p.np_t)


# -- refusals --------------------------------------------------------------------------

def _gap_model(x_shape, scale_shape=(), sx=0.05, sy=0.05, channels_last=0):
    et = T.UINT8
    inits = [h.make_tensor("sy", T.FLOAT, [], [sy]), h.make_tensor("z", et, [], [3])]
    ins = [("x", et, x_shape)]
    if scale_shape is None:
        ins.append(("sx", T.FLOAT, ["S"]))
    else:
        n = int(np.prod(scale_shape))
        inits.append(h.make_tensor("sx", T.FLOAT, list(scale_shape), [sx] * n))
    n = _node("QLinearGlobalAveragePool", ["x", "sx", "z", "sy", "z"], "y",
              channels_last=channels_last)
    return model([n], ins, outputs=[("y", et, None)], inits=inits, ms_opset=1)


def test_refuses_per_channel_scale(tmp_path):
    with pytest.raises(OnnxMlirError, match=r"node 'y' \(QLinearGlobalAveragePool\): input "
                       r"'x_scale' has shape \[4\]: expected a scalar or a 1-D tensor of one "
                       r"element \(onnxruntime supports per-tensor quantization only\)"):
        onnx_mlir_py.compile(_gap_model([1, 4, 3, 3], (4,)), tmp_path / "m.so")


def test_refuses_channels_last_2(tmp_path):
    with pytest.raises(OnnxMlirError, match="attribute 'channels_last' = 2: expected 0 or 1"):
        onnx_mlir_py.compile(_gap_model([1, 4, 3, 3], channels_last=2), tmp_path / "m.so")


def test_refuses_four_spatial_axes(tmp_path):
    et = T.UINT8
    inits = [h.make_tensor("s", T.FLOAT, [], [0.1]), h.make_tensor("z", et, [], [0])]
    n = _node("QLinearAveragePool", ["x", "s", "z", "s", "z"], "y", kernel_shape=[2, 2, 2, 2])
    m = model([n], [("x", et, [1, 2, 3, 3, 3, 3])], outputs=[("y", et, None)], inits=inits,
              ms_opset=1)
    with pytest.raises(OnnxMlirError, match="4 spatial axes: onnxruntime's QLinearAveragePool "
                       "supports 1 to 3"):
        onnx_mlir_py.compile(m, tmp_path / "m.so")


def test_run_time_refusals(tmp_path):
    """A scale of dynamic length with 2 elements, and (as onnxruntime) an
    image whose x_scale / (y_scale * cells) is 256 or more."""
    m = _gap_model([1, 4, 3, 3], None)
    check_rejects(tmp_path, m, [{"x": np.zeros((1, 4, 3, 3), np.uint8),
                                 "sx": np.array([0.1, 0.2], np.float32)}],
                  match=r"node 'y' \(QLinearGlobalAveragePool\): input 'x_scale' has 2 "
                        r"elements: expected one")
    m = _gap_model(["N", 4, 3, 3], sx=1.0, sy=1.0 / 4096)
    x = np.zeros((2, 4, 3, 3), np.uint8)
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(Exception, match="out of computation range"):
        sess.run(None, {"x": x})
    (tmp_path / "range").mkdir()
    check_rejects(tmp_path / "range", m, [{"x": x}], match="parameter out of computation range")
