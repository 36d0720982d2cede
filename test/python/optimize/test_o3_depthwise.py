"""-O3 depthwise convolutions (``passes/optimize/depthwise.py``, ``row_kernel.py``): the vector
row kernel with its fused zero pad, bias and elementwise epilogue, compared
with ``onnx.reference.ReferenceEvaluator`` at 1 and 2 threads.

Each test compiles one model holding many independent cases (one output
each): -O3 compiles cost seconds."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession

R = np.random.default_rng(11)
N = h.make_node


def rand(*shape, dtype=np.float32):
    return R.standard_normal(shape).astype(dtype)


class Model:
    def __init__(self):
        self.nodes, self.inputs, self.inits, self.outputs, self.feeds = [], [], [], [], {}

    def input(self, name, shape, value=None, elem=T.FLOAT):
        self.inputs.append(h.make_tensor_value_info(name, elem, shape))
        if value is not None:
            self.feeds[name] = value

    def weight(self, name, value):
        self.inits.append(nh.from_array(value, name))

    def build(self, elem=T.FLOAT):
        g = h.make_graph(self.nodes, "g", self.inputs,
                         [h.make_tensor_value_info(o, elem, None) for o in self.outputs],
                         self.inits)
        return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def depthwise(m: Model, tag, xs, k, bias=True, epilogue=None, **attrs):
    """A depthwise Conv (group = C) on input ``tag`` (one output)."""
    c = xs[1]
    m.input(f"x_{tag}", list(xs), rand(*xs))
    m.weight(f"w_{tag}", rand(c, 1, *k) * 0.3)
    ins = [f"x_{tag}", f"w_{tag}"]
    if bias:
        m.weight(f"b_{tag}", rand(c))
        ins.append(f"b_{tag}")
    out = f"dw_{tag}"
    conv = out if epilogue is None else f"{out}_conv"
    m.nodes.append(N("Conv", ins, [conv], group=c, kernel_shape=list(k), **attrs))
    if epilogue == "relu":
        m.nodes.append(N("Relu", [conv], [out]))
    elif epilogue == "clip":
        m.nodes.append(N("Clip", [conv, "lo", "hi"], [out]))
    elif epilogue == "shared":      # the conv result has two users: nothing fused
        m.nodes += [N("Relu", [conv], [f"{out}_r"]), N("Add", [conv, f"{out}_r"], [out])]
    m.outputs.append(out)


# (input shape, kernel, attrs): 3x3 and 5x5, strides 1, 2, 3 and (2, 1),
# dilation 2, symmetric / asymmetric / no pads, batch 2, odd sizes, rows
# long enough for the unrolled main loop (32 lanes) plus a tail
CASES = [
    ((1, 8, 7, 7), (3, 3), dict(pads=[1, 1, 1, 1])),
    ((1, 8, 15, 15), (3, 3), dict(pads=[1, 1, 1, 1], strides=[2, 2])),
    ((2, 6, 15, 15), (5, 5), dict(pads=[2, 2, 2, 2])),
    ((1, 6, 15, 15), (5, 5), dict(pads=[2, 2, 2, 2], strides=[2, 2])),
    ((2, 4, 15, 15), (3, 3), dict(pads=[2, 2, 2, 2], dilations=[2, 2])),
    ((1, 4, 15, 15), (3, 3), dict(pads=[0, 1, 2, 1], strides=[2, 2], dilations=[2, 2])),
    ((2, 5, 7, 7), (3, 3), dict(pads=[1, 0, 0, 1], strides=[2, 2])),
    ((1, 3, 9, 75), (3, 3), dict(pads=[1, 1, 1, 1])),
    ((1, 3, 9, 150), (3, 3), dict(pads=[1, 1, 1, 1], strides=[2, 2])),
    ((1, 4, 11, 37), (3, 3), dict(strides=[2, 2])),                      # no pad
    ((1, 4, 10, 81), (3, 3), dict(strides=[2, 2])),                      # no pad, main loop
    ((1, 4, 13, 50), (3, 3), dict(pads=[1, 1, 1, 1], strides=[3, 3])),
    ((1, 4, 12, 17), (3, 5), dict(pads=[1, 2, 1, 2], strides=[2, 1])),
    ((1, 4, 9, 9), (3, 3), dict(auto_pad="SAME_UPPER", strides=[2, 2])),
    ((1, 7, 1, 1), (3, 3), dict(pads=[1, 1, 1, 1])),
    # stride 2, rows split into even / odd columns (row_plan.split): 5x5,
    # left pads 0 and 2 (even), odd widths, a row past two vectors
    ((1, 3, 37, 37), (5, 5), dict(pads=[2, 2, 2, 2], strides=[2, 2])),
    ((1, 3, 20, 34), (3, 3), dict(pads=[0, 0, 1, 1], strides=[2, 2])),
    ((1, 3, 9, 35), (3, 3), dict(pads=[1, 2, 1, 0], strides=[2, 2])),
    ((1, 2, 8, 70), (5, 5), dict(pads=[1, 1, 2, 2], strides=[2, 2])),
]


def _run(tmp_path, m: Model, model=None, threads=(1, 2), rtol=1e-4, atol=1e-4):
    model = model or m.build()
    so = onnx_mlir_py.compile(model, output=tmp_path / "m.so", opt_level=3)
    want = ReferenceEvaluator(model).run(None, m.feeds)
    for n in threads:
        sess = ExecutionSession(so, num_threads=n)
        got = sess.run([m.feeds[s.name] for s in sess.input_specs])
        for name, g, w in zip(m.outputs, got, want):
            assert g.shape == w.shape, name
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"{name} threads={n}")


def test_depthwise_shapes(tmp_path):
    m = Model()
    for i, (xs, k, attrs) in enumerate(CASES):
        depthwise(m, i, xs, k, bias=i % 3 != 2, **attrs)
    _run(tmp_path, m)


# rows computed in groups (row_kernel.row_group: a loop of groups, then the
# rows left) and half-width vectors for rows that fit in one (lane_width):
# 14 rows in groups of 4, 7-wide rows at 8 lanes (stride 1 and 2), a stride
# of (2, 1) and row dilation 2 in a group, rows without a fused pad
GROUP_CASES = [
    ((1, 6, 14, 14), (5, 5), dict(pads=[2, 2, 2, 2])),
    ((1, 5, 7, 7), (5, 5), dict(pads=[2, 2, 2, 2])),
    ((2, 4, 14, 14), (5, 5), dict(pads=[2, 2, 2, 2], strides=[2, 2])),
    ((1, 4, 13, 6), (3, 3), dict(pads=[2, 1, 2, 1], strides=[2, 1], dilations=[2, 1])),
    ((1, 3, 30, 30), (3, 3), dict(pads=[1, 1, 1, 1])),
    ((2, 4, 11, 11), (3, 3), dict()),
    ((1, 4, 9, 9), (3, 3), dict(strides=[1, 1])),
    ((1, 4, 15, 15), (3, 3), dict(strides=[2, 2])),
    # stride-1 rows of 2-4 vectors in groups of 3 (shared_rows): 29 rows (2 left),
    # dilation 2, no top pad
    ((1, 3, 29, 40), (3, 3), dict(pads=[1, 1, 1, 1])),
    ((1, 2, 50, 56), (3, 3), dict(pads=[2, 2, 2, 2], dilations=[2, 2])),
    ((2, 2, 25, 60), (3, 3), dict(pads=[0, 1, 1, 1])),
]


def test_depthwise_row_groups(tmp_path):
    m = Model()
    for i, (xs, k, attrs) in enumerate(GROUP_CASES):
        depthwise(m, i, xs, k, bias=i % 2 == 0, **attrs)
    _run(tmp_path, m)


def test_row_group_and_lane_width():
    """Which widths and groups MobileNetV3's depthwise convs get (16 lanes)."""
    from onnx_mlir_py.passes.optimize.row_kernel import lane_width, row_group
    from onnx_mlir_py.passes.optimize.row_plan import Conv
    for hw, k, s, want in [(7, 5, 1, (8, 7)), (14, 5, 1, (16, 4)), (14, 5, 2, (8, 7)),
                           (28, 3, 1, (16, 3)), (56, 3, 2, (16, 2)), (112, 3, 2, (16, 1)),
                           (56, 3, 1, (16, 3)), (112, 3, 1, (16, 3)), (112, 5, 1, (16, 1)),
                           (28, 5, 1, (16, 2)), (14, 3, 1, (16, 4))]:
        o = (hw - 1) // s + 1
        cv = Conv((1, 8, hw, hw), (k // 2,) * 4, k, k, (1, 8, o, o), (s, s), (1, 1), "bias")
        vw = lane_width(cv, 16)
        assert (vw, row_group(cv, vw, 16)) == want, (hw, k, s)


def test_shared_rows_fit_the_registers():
    """Rows of whole 4-vector chunks share their input rows' reads
    (row_kernel.shared_rows): 3 rows of a 3x3 stride-1 conv with 32
    registers; 1 with 16 (AVX2: 12 accumulators and 9 weights do not fit),
    for 5x5 weights, stride 2, a 1-row window and pools."""
    from onnx_mlir_py.passes.optimize.row_kernel import shared_rows
    from onnx_mlir_py.passes.optimize.row_plan import Conv

    def conv(k, s, oh=100, combine="fma"):
        ow = 200 // s
        return Conv((1, 4, 200, 200), (1, 1, 1, 1), k, k, (1, 4, oh, ow), (s, s), (1, 1),
                    "bias", combine=combine)
    assert shared_rows(conv(3, 1), 16) == 3
    assert shared_rows(conv(3, 1, oh=2), 16) == 2
    assert shared_rows(conv(3, 1), 8) == 1
    assert shared_rows(conv(5, 1), 16) == 1
    assert shared_rows(conv(3, 2), 16) == 1
    assert shared_rows(conv(1, 1), 16) == 1
    assert shared_rows(conv(3, 1, combine="max"), 16) == 1
    assert shared_rows(conv(3, 1), 16, per_row=2) == 3      # a 28-wide row: 2 vectors
    assert shared_rows(conv(5, 1), 16, per_row=1) == 3      # 25 weights, 3 accumulators
    assert shared_rows(conv(5, 1), 16, per_row=2) == 1


# scratch planes of 32 KiB and more (row_kernel.INTERLEAVE_MIN_PLANE) are
# copied row by row, each input row just before the first output rows that
# read it (row_plane.rows_needed), with 3 output rows sharing their reads at
# stride 1 (shared_rows): row counts that are and are not a multiple of 3,
# stride 2, dilation, asymmetric pads, a pad above the window's reach (the
# first rows read only the border), 5x5, batch 2 and threads
LARGE_PLANE_CASES = [
    ((1, 3, 100, 100), (3, 3), dict(pads=[1, 1, 1, 1])),
    ((2, 2, 96, 97), (3, 3), dict(pads=[1, 1, 1, 1])),
    ((1, 2, 101, 101), (3, 3), dict(pads=[1, 1, 1, 1], strides=[2, 2])),
    ((1, 2, 90, 90), (3, 3), dict(pads=[2, 2, 2, 2], dilations=[2, 2])),
    ((1, 2, 91, 99), (3, 3), dict(pads=[0, 1, 2, 1])),
    ((1, 2, 90, 90), (3, 3), dict(pads=[4, 1, 4, 1], strides=[2, 2])),
    ((1, 2, 100, 100), (5, 5), dict(pads=[2, 2, 2, 2])),
    ((1, 2, 95, 120), (3, 3), dict(pads=[1, 2, 3, 0], strides=[2, 1])),
]


def test_depthwise_large_planes(tmp_path):
    from onnx_mlir_py.passes.optimize.row_kernel import INTERLEAVE_MIN_PLANE
    from onnx_mlir_py.passes.optimize.row_plan import Conv, geometry
    m = Model()
    m.weight("lo", np.array(0.0, np.float32))
    m.weight("hi", np.array(0.5, np.float32))
    for i, (xs, k, attrs) in enumerate(LARGE_PLANE_CASES):
        pt, pl, pb, pr = attrs["pads"]
        hp, limit = geometry(Conv(xs, (pt, pl, pb, pr), k[0], k[1], xs, (1, 1), (1, 1), "bias"),
                             16)
        assert hp * limit * 4 >= INTERLEAVE_MIN_PLANE, xs
        depthwise(m, i, xs, k, bias=i % 3 != 2, epilogue="clip" if i % 2 else None, **attrs)
    _run(tmp_path, m)


def test_depthwise_epilogues(tmp_path):
    """Bias + ReLU / Clip (fused into the kernel), a result used twice (not
    fused) and no bias at all."""
    m = Model()
    m.weight("lo", np.array(0.0, np.float32))
    m.weight("hi", np.array(0.5, np.float32))
    depthwise(m, "relu", (1, 8, 14, 14), (3, 3), epilogue="relu", pads=[1, 1, 1, 1])
    depthwise(m, "clip", (2, 8, 15, 15), (3, 3), epilogue="clip", pads=[1, 1, 1, 1], strides=[2, 2])
    depthwise(m, "clip_nobias", (1, 8, 28, 28), (3, 3), bias=False, epilogue="clip",
              pads=[1, 1, 1, 1])
    depthwise(m, "shared", (1, 6, 9, 9), (3, 3), epilogue="shared", pads=[1, 1, 1, 1])
    _run(tmp_path, m)


def test_depthwise_threaded(tmp_path):
    """Convs above the threading threshold (2^21 multiply-adds): the channel
    blocks run as pool tasks; 1, 2 and 3 threads give the reference result."""
    m = Model()
    m.weight("lo", np.array(0.0, np.float32))
    m.weight("hi", np.array(6.0, np.float32))
    depthwise(m, "s1", (1, 96, 56, 56), (3, 3), epilogue="clip", pads=[1, 1, 1, 1])
    depthwise(m, "s2", (1, 96, 112, 112), (3, 3), epilogue="clip", pads=[1, 1, 1, 1],
              strides=[2, 2])
    depthwise(m, "k5_batch", (2, 30, 41, 41), (5, 5), pads=[2, 2, 2, 2])
    depthwise(m, "w28", (2, 192, 28, 28), (3, 3), epilogue="clip", pads=[1, 1, 1, 1])
    _run(tmp_path, m, threads=(1, 2, 3))


def test_depthwise_not_rewritten_still_correct(tmp_path):
    """What the rewrite leaves alone still runs correctly at -O3: a dynamic
    batch (loops), and a depthwise conv in f64."""
    m = Model()
    m.input("x", ["N", 6, 9, 9])
    w = rand(6, 1, 3, 3)
    m.weight("w", w)
    m.nodes.append(N("Conv", ["x", "w"], ["y"], group=6, pads=[1, 1, 1, 1], strides=[2, 2]))
    m.outputs.append("y")
    model = m.build()
    so = onnx_mlir_py.compile(model, output=tmp_path / "dyn.so", opt_level=3)
    ref = ReferenceEvaluator(model)
    for n in (1, 3):
        x = rand(n, 6, 9, 9)
        for threads in (1, 2):
            got = ExecutionSession(so, num_threads=threads).run([x])[0]
            np.testing.assert_allclose(got, ref.run(None, {"x": x})[0], rtol=1e-4, atol=1e-4)

    d = Model()
    d.input("x", [1, 5, 11, 11], rand(1, 5, 11, 11, dtype=np.float64), elem=T.DOUBLE)
    d.weight("w", rand(5, 1, 3, 3, dtype=np.float64))
    d.weight("b", rand(5, dtype=np.float64))
    d.nodes.append(N("Conv", ["x", "w", "b"], ["y"], group=5, pads=[1, 1, 1, 1]))
    d.outputs.append("y")
    _run(tmp_path, d, model=d.build(T.DOUBLE), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("vw", [4, 8, 16])
def test_kernel_text_parses_for_every_vector_width(vw):
    """The kernel text for SSE, AVX2 and AVX-512 widths (the stride-2
    in-lane order only applies to 8 lanes) parses and verifies."""
    import mlir.ir as ir
    from onnx_mlir_py.context import make_context
    from onnx_mlir_py.passes.optimize.row_kernel import kernel_function
    from onnx_mlir_py.passes.optimize.row_plan import Conv
    cv = Conv((2, 6, 29, 70), (1, 1, 1, 1), 3, 3, (2, 6, 15, 35), (2, 2), (1, 1), "bias")
    with make_context():
        mod = ir.Module.parse("module {\n" + kernel_function("k", cv, vw, blocks=3) + "\n}")
        assert mod.operation.verify()


def test_row_plan_stores_stay_in_the_row():
    """Every output row is covered exactly once and no store passes its end
    (a whole-vector store past the row once clobbered the next channel block
    of another task), for every vector width, with and without a fused pad."""
    from onnx_mlir_py.passes.optimize.row_plan import UNROLL, Conv, row_plan
    for vw in (4, 8, 16):
        for ow in list(range(1, 70)) + [112, 150]:
            for s, pad, init in [(1, (1, 1, 1, 1), "bias"), (2, (1, 1, 1, 1), "scalar"),
                                 (2, (), "scalar"), (3, (0, 2, 1, 0), "out"), (1, (), "out")]:
                w = (ow - 1) * s + 3 - (pad[1] + pad[3] if pad else 0)
                cv = Conv((1, 2, 5, w), pad, 3, 3, (1, 2, 3, ow), (1, s), (1, 1), init)
                m, chunks = row_plan(cv, vw)
                stored = [(c * UNROLL * vw + u * vw, vw) for c in range(m) for u in range(UNROLL)]
                for pos, lanes, cnt, keep in chunks:
                    assert 0 < keep <= lanes
                    stored += [(pos + u * lanes, lanes if u < cnt - 1 else keep)
                               for u in range(cnt)]
                cols = [c for start, n in stored for c in range(start, start + n)]
                assert cols == list(range(ow)), (vw, ow, s, pad, init)


def copied(cv, vw: int, limit: int) -> list[int]:
    """Scratch columns a row's copy writes: [pl, pl + ceil(w / vw) * vw); a
    split row (row_plan.split): in each half, from index (pl + q) // 2 of
    half (pl + q) % 2, ceil(w / (2 vw)) vectors of the input's columns of
    parity q."""
    from onnx_mlir_py.passes.optimize.row_plan import split
    w, pl = cv.xs[3], cv.pad[1]
    if not split(cv):
        return list(range(pl, pl + -(-w // vw) * vw))
    half, out = limit // 2, []
    for q in (0, 1):
        first = (pl + q) % 2 * half + (pl + q) // 2
        out += range(first, first + -(-w // (2 * vw)) * vw)
    return out


def test_plane_border_and_copies_cover_the_plane():
    """Every cell of the scratch plane holds the pad value (row_plane.border,
    filled once per task) or a value of the channel's copy (rows [pt, pt+h),
    columns :func:`copied`): the kernel may read any cell.
    Widths below, at and above a vector, pads 0-3 on each side, strides 1-3,
    kernels 1-7, 4/8/16 lanes."""
    from onnx_mlir_py.passes.optimize.row_kernel import lane_width
    from onnx_mlir_py.passes.optimize.row_plan import Conv, geometry
    from onnx_mlir_py.passes.optimize.row_plane import border
    for tvw in (4, 8, 16):
        for w in (1, 3, 7, 8, 13, 16, 20, 33, 56):
            for k, s, pad in [(3, 1, (1, 1, 1, 1)), (3, 2, (1, 1, 1, 1)), (5, 1, (2, 2, 2, 2)),
                              (5, 2, (2, 2, 2, 2)), (3, 2, (0, 1, 2, 0)), (7, 3, (3, 0, 0, 3)),
                              (1, 1, (0, 2, 1, 0)), (3, 1, (0, 0, 2, 3))]:
                pt, pl, pb, pr = pad
                if w + pl + pr < k:
                    continue
                ow = (w + pl + pr - k) // s + 1
                oh = (5 + pt + pb - k) // s + 1
                for init in ("bias", "scalar"):
                    cv = Conv((1, 2, 5, w), pad, k, k, (1, 2, oh, ow), (s, s), (1, 1), init)
                    vw = lane_width(cv, tvw)
                    hp, limit = geometry(cv, vw)
                    lanes = min(vw, limit)
                    cells = {(r, c) for r in range(pt, pt + 5) for c in copied(cv, vw, limit)}
                    assert all(c < limit for _, c in cells), (tvw, w, k, s, pad)
                    for lo, hi, cols in border(cv, hp, limit, vw):
                        assert all(0 <= c and c + lanes <= limit for c in cols)
                        cells |= {(r, c) for r in range(lo, hi) for st in cols
                                  for c in range(st, st + lanes)}
                    assert cells == {(r, c) for r in range(hp) for c in range(limit)}, \
                        (tvw, w, k, s, pad, init)


def test_split_rows_hold_each_padded_column_where_its_taps_read_it():
    """A stride-2 row split into its even and odd padded columns
    (row_plan.split): the copy puts input column c at index (pl + c) // 2 of
    half (pl + c) % 2, which is where tap j of output column o (2 o + j = pl
    + c) reads it; every whole output vector's reads stay inside their half,
    and the plane is no wider than two halves."""
    from onnx_mlir_py.passes.optimize.row_kernel import lane_width
    from onnx_mlir_py.passes.optimize.row_plan import Conv, geometry, split
    for tvw in (4, 8, 16):
        for w in (1, 7, 14, 15, 17, 28, 33, 56, 112):
            for k, pad in [(3, (1, 1, 1, 1)), (5, (2, 2, 2, 2)), (3, (0, 0, 1, 1)),
                           (3, (1, 2, 1, 0))]:
                pt, pl, pb, pr = pad
                if w + pl + pr < k:
                    continue
                ow = (w + pl + pr - k) // 2 + 1
                cv = Conv((1, 2, 9, w), pad, k, k, (1, 2, 4, ow), (2, 2), (1, 1), "bias")
                assert split(cv) == (ow > 8)
                if not split(cv):
                    continue
                vw = lane_width(cv, tvw)
                half = geometry(cv, vw)[1] // 2
                where = {pl + c: ((pl + c) % 2, (pl + c) // 2) for c in range(w)}
                for o in range(-(-ow // vw) * vw):
                    for j in range(k):
                        if o < ow and 2 * o + j in where:
                            assert where[2 * o + j] == (j % 2, o + j // 2)
                    assert (o // vw * vw) + (k - 1) // 2 + vw <= half, (tvw, w, k, pad)
    assert not split(Conv((1, 2, 9, 9), (1, 1, 1, 1), 3, 3, (1, 2, 5, 5), (2, 2), (1, 1), "out"))
    assert not split(Conv((1, 2, 9, 9), (), 3, 3, (1, 2, 4, 4), (2, 2), (1, 1), "bias"))
    assert not split(Conv((1, 2, 9, 9), (1, 1, 1, 1), 3, 3, (1, 2, 9, 9), (1, 1), (1, 1), "bias"))
