"""-O3 kernels with dynamic dims: a dynamic batch around the static per-image
conv / depthwise kernels (batch_loop.py), elementwise ops and row reductions
over dynamic outer and innermost dims (peeled, masked tail), matmuls with a
dynamic M. Each model is compiled once and run at several shapes (batch 1, a
batch no tile divides, a larger one; rows shorter than a vector, not a
multiple of it, longer than a chunk), against onnx.reference."""
from __future__ import annotations

import numpy as np
import pytest
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession
from test_o3_numerics import N, Cases, compile_with_ort, rand

SHAPES = [(1, 5), (3, 37), (10, 130)]     # (batch, sequence)


def run_shapes(tmp_path, c: Cases, make_feeds, threads=(1,), shapes=SHAPES):
    m = c.model()
    so = onnx_mlir_py.compile(m, output=tmp_path / "m.so", opt_level=3)
    ref = ReferenceEvaluator(m)
    for t in threads:
        sess = ExecutionSession(so, num_threads=t)
        for n, s in shapes:
            feeds = make_feeds(n, s)
            got = sess.run([feeds[spec.name] for spec in sess.input_specs])
            want = ref.run(None, feeds)
            for name, g, w in zip(c.outputs, got, want):
                assert g.shape == w.shape, (name, n, s)
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4,
                                           err_msg=f"{name} at batch {n}, seq {s}, {t} threads")


def test_convs_dynamic_batch(tmp_path):
    """im2col convs (bias broadcast into the result slice when the columns
    fill whole blocks, else the padded path), grouped, and depthwise with a
    fused pad, bias and Clip, all with a dynamic batch."""
    c = Cases()
    c.input("x", ["N", 4, 9, 9])
    c.input("y", ["N", 8, 8, 8])
    lo, hi = np.array(0, np.float32), np.array(6, np.float32)
    c.weight("lo", lo)
    c.weight("hi", hi)
    for name, shape in [("w3", (8, 4, 3, 3)), ("w1", (16, 8, 1, 1)), ("wg", (8, 4, 3, 3)),
                        ("wd", (8, 1, 3, 3))]:
        c.weight(name, rand(*shape))
    for name, n in [("b3", 8), ("b1", 16), ("bd", 8)]:
        c.weight(name, rand(n))
    c.nodes += [
        N("Conv", ["x", "w3", "b3"], ["c3"], pads=[1, 1, 1, 1], strides=[2, 2]),
        N("Relu", ["c3"], ["relu3"]),
        N("Conv", ["y", "w1", "b1"], ["c1"]),
        N("Clip", ["c1", "lo", "hi"], ["clip1"]),
        N("Conv", ["y", "wg"], ["grouped"], pads=[1, 1, 1, 1], group=2),
        N("Conv", ["y", "wd", "bd"], ["cd"], pads=[1, 1, 1, 1], group=8),
        N("Clip", ["cd", "lo", "hi"], ["dw"]),
        N("Conv", ["y", "wd"], ["dw_s2"], pads=[1, 1, 1, 1], strides=[2, 2], group=8),
    ]
    c.outputs += ["relu3", "clip1", "grouped", "dw", "dw_s2"]
    run_shapes(tmp_path, c, lambda n, s: {"x": rand(n, 4, 9, 9), "y": rand(n, 8, 8, 8)},
               threads=(1, 2))


def test_grouped_padded_conv_dynamic_channels(tmp_path):
    """Fuzz s4201-15 (and -16, a dynamic H): a grouped conv over a padded
    input whose channels, H and W are dynamic. With upstream's
    ``resolve-ranked-shaped-type-result-dims`` (the first form of
    ``optimize.resolve_dims``), elementwise fusion moved the group split's
    ``expand_shape`` above the pad, before the size it uses (invalid IR, an
    internal error)."""
    c = Cases()
    c.input("x", [5, "C", "H", "W"])
    c.weight("w", rand(2, 3, 1, 3))
    c.weight("b", rand(2))
    c.nodes += [N("Conv", ["x", "w", "b"], ["y"], group=2, kernel_shape=[1, 3],
                  pads=[0, 2, 0, 2], strides=[2, 2])]
    c.outputs += ["y"]
    run_shapes(tmp_path, c, lambda n, s: {"x": rand(5, 6, 3 + n, 4 + s % 7)},
               shapes=[(1, 5), (4, 9)])


def test_elementwise_and_rows_dynamic(tmp_path):
    """Dynamic outer dims with a static row (bias add), dynamic rows
    (peeled main loop + masked tail), row reductions over a dynamic length
    (Softmax, ReduceMax), and a matmul with a dynamic M."""
    c = Cases()
    c.input("h", ["N", "S", 16])
    c.input("r", [3, "S"])
    c.input("t", ["N", "S"])
    c.input("a", ["N", 24])
    c.weight("bias", rand(16))
    c.weight("mw", rand(24, 40))
    c.nodes += [
        N("Add", ["h", "bias"], ["add"]),
        N("Exp", ["r"], ["exp"]),
        N("Tanh", ["t"], ["tanh"]),
        N("Softmax", ["t"], ["softmax"], axis=-1),
        N("ReduceMax", ["t"], ["rmax"], axes=[-1], keepdims=1),
        N("MatMul", ["a", "mw"], ["mm"]),
    ]
    c.outputs += ["add", "exp", "tanh", "softmax", "rmax", "mm"]
    run_shapes(tmp_path, c, lambda n, s: {"h": rand(n, s, 16), "r": rand(3, s), "t": rand(n, s),
                                          "a": rand(n, 24)})


def test_dynamic_row_lengths_around_the_chunk(tmp_path):
    """Dynamic rows shorter than a vector, exactly one chunk (4 vectors of
    8 or 16 lanes) long, one longer, several chunks long: the peeled main
    loop runs 0, 1 or more times, the masked remainder 0 or 1 time."""
    c = Cases()
    c.input("t", [2, "S"])
    c.weight("ax", np.array([-1], np.int64))
    c.nodes.append(N("Neg", ["t"], ["neg"]))
    c.nodes.append(N("ReduceSum", ["t", "ax"], ["rsum"], keepdims=0))
    c.outputs += ["neg", "rsum"]
    run_shapes(tmp_path, c, lambda n, s: {"t": rand(2, s)},
               shapes=[(2, s) for s in (1, 7, 32, 33, 64, 65, 200)])


def test_matmuls_dynamic_batch_and_sequence(tmp_path):
    """The dynamic packed kernel (matmul_dyn_text.py): whole row blocks in
    place, the M % mb remainder rows padded to one block under an scf.if
    (sequence lengths that leave 0, some or most rows of a block), weights
    packed at compile time with whole or padded column blocks and a K that
    is or is not a multiple of kb, computed B viewed in blocks (attention
    Q K^T with dynamic M and N, A V with a dynamic K), 1 and 2 threads."""
    c = Cases()
    c.input("x", ["N", "S", 24])
    c.input("q", ["N", 2, "S", 8])
    c.input("k", ["N", 2, 8, "S"])
    c.input("p", ["N", 2, "S", "S"])
    c.input("v", ["N", 2, "S", 32])
    c.input("v2", ["N", 2, "S", 16])
    c.input("x13", ["S", 13])
    c.input("r", ["N", 7])
    c.input("cols", [7, "S"])
    for name, shape in [("w40", (24, 40)), ("w64", (24, 64)), ("w13", (13, 32))]:
        c.weight(name, rand(*shape))
    c.nodes += [
        N("MatMul", ["x", "w40"], ["lin40"]),
        N("MatMul", ["x", "w64"], ["lin64"]),
        N("MatMul", ["x13", "w13"], ["lin13"]),
        N("MatMul", ["q", "k"], ["qk"]),
        N("MatMul", ["p", "v"], ["av"]),
        N("MatMul", ["p", "v2"], ["av16"]),
        N("MatMul", ["r", "cols"], ["rc"]),
    ]
    c.outputs += ["lin40", "lin64", "lin13", "qk", "av", "av16", "rc"]
    run_shapes(tmp_path, c, lambda n, s: {
        "x": rand(n, s, 24), "q": rand(n, 2, s, 8), "k": rand(n, 2, 8, s),
        "p": rand(n, 2, s, s), "v": rand(n, 2, s, 32), "v2": rand(n, 2, s, 16),
        "x13": rand(s, 13), "r": rand(n, 7), "cols": rand(7, s)},
        threads=(1, 2), shapes=[(1, 1), (1, 5), (3, 37), (2, 48), (10, 130)])


def test_matmul_dynamic_remainder_blocks(tmp_path):
    """Remainder rows (M % 8) of the dynamic kernel padded to 2 or 4 rows
    when they fit and C has whole column blocks (N = 64, a batched N = 32),
    to 8 otherwise (N = 40: C padded); every remainder 0..7, 1 and 2 threads."""
    c = Cases()
    c.input("x", ["S", 24])
    c.input("bx", [3, "S", 24])
    c.weight("w64", rand(24, 64))
    c.weight("w40", rand(24, 40))
    c.input("bb", [3, 24, 32])
    c.nodes += [N("MatMul", ["x", "w64"], ["r64"]), N("MatMul", ["x", "w40"], ["r40"]),
                N("MatMul", ["bx", "bb"], ["rb"])]
    c.outputs += ["r64", "r40", "rb"]
    bb = rand(3, 24, 32)
    run_shapes(tmp_path, c, lambda n, s: {"x": rand(s, 24), "bx": rand(3, s, 24), "bb": bb},
               threads=(1, 2), shapes=[(1, s) for s in (1, 2, 3, 4, 5, 7, 8, 10, 12, 13, 15)])


def test_matmul_broadcasts_only_batch_dims(tmp_path):
    """A MatMul with every dim dynamic broadcasts only its batch dims at run
    time (one branch per operand, covering both batch dims): its matrix dims
    are the result's own dims. They used to get branches too once a batch
    dim was broadcast (the dims were compared with the broadcast value, not
    the operand), and a chain of one branch per dim made bufferization
    exponentially slow (a BERT layer took minutes)."""
    c = Cases()
    c.input("a", ["B", "H", "M", "K"])
    c.input("b", ["B", "H", "K", "N"])
    c.nodes.append(N("MatMul", ["a", "b"], ["c"]))
    c.outputs.append("c")
    out = onnx_mlir_py.compile(c.model(), output=tmp_path / "m.mlir", emit="EmitMLIR")
    text = open(out).read()
    assert text.count("scf.yield %arg0") + text.count("scf.yield %arg1") == 2
    assert len([ln for ln in text.splitlines() if "= scf.if" in ln]) == 2


def test_elementwise_threads_decided_at_run_time(tmp_path):
    """A GELU and a Softmax over [batch, sequence, 512]: their work is only
    known at run time, so each runs under an scf.if on it (dynamic_threads.py):
    few rows stay on the calling thread, 10 x 130 rows take the scf.forall
    over the dynamic batch and sequence dims (run-time bounds), at 1 and 2
    threads."""
    c = Cases()
    c.input("x", ["N", "S", 512])
    for name, v in [("s2", 2 ** 0.5), ("one", 1.0), ("half", 0.5)]:
        c.weight(name, np.array(v, np.float32))
    c.nodes += [
        N("Div", ["x", "s2"], ["d"]), N("Erf", ["d"], ["e"]), N("Add", ["e", "one"], ["a"]),
        N("Mul", ["x", "a"], ["m"]), N("Mul", ["m", "half"], ["gelu"]),
        N("Softmax", ["x"], ["softmax"], axis=-1),
    ]
    c.outputs += ["gelu", "softmax"]
    run_shapes(tmp_path, c, lambda n, s: {"x": rand(n, s, 512)}, threads=(1, 2),
               shapes=[(1, 1), (1, 5), (3, 37), (10, 130)])


def test_integer_division_dynamic_rows(tmp_path):
    """Integer Mod/Div over dynamic rows at -O3 stay scalar: a masked tail
    divided its masked-off lanes by their padding 0 (SIGFPE,
    test_mod_broadcast [dynamic])."""
    from onnx import TensorProto as T
    from onnx import helper as h
    g = h.make_graph([h.make_node("Mod", ["x", "y"], ["m"]), h.make_node("Div", ["x", "y"], ["d"])],
                     "g", [h.make_tensor_value_info("x", T.INT32, ["a", "b", "c"]),
                           h.make_tensor_value_info("y", T.INT32, ["e"])],
                     [h.make_tensor_value_info(o, T.INT32, None) for o in "md"])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    sess = ExecutionSession(onnx_mlir_py.compile(m, output=tmp_path / "m.so", opt_level=3))
    rng = np.random.default_rng(0)
    for xs, n in [((3, 2, 5), 1), ((2, 3, 37), 37), ((1, 2, 130), 1)]:
        x = rng.integers(-50, 50, xs).astype(np.int32)
        y = rng.integers(1, 9, n).astype(np.int32)
        want = ReferenceEvaluator(m).run(None, {"x": x, "y": y})
        for got, w in zip(sess.run([x, y]), want):
            np.testing.assert_array_equal(got, w, err_msg=str(xs))


@pytest.mark.parametrize("op,fill", [("ReduceMax", -np.inf), ("ReduceMin", np.inf),
                                     ("ReduceSum", 0.0)])
def test_reduction_over_dynamic_row_ignores_padding(tmp_path, op, fill):
    """A row reduction over a dynamic length at -O3: ReduceMax of a row of -inf
    gave -1e-45 (a masked tail combined its padding lanes), which made the
    fully-masked attention rows NaN instead of 0."""
    from onnx import TensorProto as TP
    from onnx import helper as hh
    from onnx import numpy_helper as nh

    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    g = hh.make_graph([hh.make_node(op, ["x", "ax"], ["y"], keepdims=1)], "g",
                      [hh.make_tensor_value_info("x", TP.FLOAT, ["a", "b"])],
                      [hh.make_tensor_value_info("y", TP.FLOAT, None)],
                      [nh.from_array(np.array([-1], np.int64), "ax")])
    m = hh.make_model(g, opset_imports=[hh.make_opsetid("", 18)], ir_version=8)
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "r.so", opt_level=3))
    for n in (1, 3, 8, 31, 32, 33, 37, 64, 65, 67):
        x = np.full((3, n), fill, np.float32)
        x[1] = -5.0
        x[2, n // 2] = 7.0
        want = {"ReduceMax": x.max, "ReduceMin": x.min, "ReduceSum": x.sum}[op](
            axis=-1, keepdims=True)
        np.testing.assert_array_equal(sess.run([x])[0], want, err_msg=f"n={n}")


def test_softmax_layernorm_rows_of_dynamic_length(tmp_path):
    """Softmax, LogSoftmax and LayerNormalization over rows of a dynamic
    length (whole vector chunks, then a scalar remainder: lengths below one
    chunk, one chunk -1/+1, several chunks and odd), rows of -inf with one
    finite value, against onnxruntime."""
    pytest.importorskip("onnxruntime")
    import onnx
    c = Cases()
    c.input("x", ["N", "S"])
    c.input("y", ["B", 3, "S"])
    c.nodes += [N("Softmax", ["x"], ["sm"], axis=-1), N("LogSoftmax", ["x"], ["lsm"], axis=-1),
                N("LayerNormalization", ["y", "g", "b"], ["ln"], axis=-1, epsilon=1e-5),
                N("ReduceMax", ["x", "ax"], ["mx"], keepdims=1)]
    c.outputs += ["sm", "lsm", "ln", "mx"]
    m = c.model()
    m.opset_import[0].version = 18
    g_b = [onnx.helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, ["S"]) for n in "gb"]
    m.graph.input.extend(g_b)
    m.graph.initializer.append(onnx.numpy_helper.from_array(np.array([-1], np.int64), "ax"))
    m.ir_version = 8
    so, ref = compile_with_ort(tmp_path, m)
    sess = ExecutionSession(so)
    for s in (1, 2, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 67):
        x = rand(4, s) * 4
        x[1] = -np.inf
        x[1, s // 2] = 3.0
        x[2, : s // 2] = -np.inf
        feeds = {"x": x, "y": rand(2, 3, s) * 3 + 1, "g": rand(s), "b": rand(s)}
        got = sess.run([feeds[spec.name] for spec in sess.input_specs])
        for name, gv, w in zip(c.outputs, got, ref.run(None, feeds)):
            np.testing.assert_allclose(gv, w, rtol=1e-5, atol=1e-5, err_msg=f"{name}, S={s}")


def test_matmul_cache_blocks_dynamic_rows(tmp_path):
    """matmul.cache_blocks with a dynamic M: rows outermost (K = 1100, a
    packed B of 1.1 MiB) in groups of 8 row blocks over a run-time block
    count, K in 4 slabs; columns outermost (K = 600) in groups of 4 column
    blocks; row counts that leave a partial group, a remainder block, or
    only the remainder; 1 and 2 threads."""
    c = Cases()
    c.input("x", ["S", 1100])
    c.input("y", ["S", 600])
    c.weight("w", rand(1100, 256) * 0.1)
    c.weight("v", rand(600, 520) * 0.1)
    c.nodes += [N("MatMul", ["x", "w"], ["rows"]), N("MatMul", ["y", "v"], ["cols"])]
    c.outputs += ["rows", "cols"]
    run_shapes(tmp_path, c, lambda n, s: {"x": rand(s, 1100), "y": rand(s, 600)},
               threads=(1, 2), shapes=[(1, s) for s in (1, 7, 64, 70, 203)])


def test_elementwise_rows_of_dynamic_planes(tmp_path):
    """Elementwise ops over [N, C, H, W] with run-time H and W run over one
    row of H*W elements (collapse_rows.py): a SiLU, a squeeze-excitation gate
    ([N, C, 1, 1], collapsed with the row), an [H, W] plane broadcast over
    N and C; a bias over W alone and a per-row [N, C, H, 1] scale keep their
    loops. Planes of 1x1, shorter than a vector, just over one chunk (a
    whole chunk plus a masked remainder), and several chunks, and a batch of
    0 (the forall's run-time tile size is at least 1: fuzz s2903-8 divided by
    0); at 1 and 2 threads (2 x 24 x 40 x 40 is enough work for a tile size of
    1, a row per iteration)."""
    c = Cases()
    c.input("x", ["N", 24, "H", "W"])
    c.input("p", ["H", "W"])
    c.input("wb", ["W"])
    c.input("hs", ["N", 24, "H", 1])
    c.nodes += [
        N("Sigmoid", ["x"], ["sg"]), N("Mul", ["x", "sg"], ["silu"]),
        N("ReduceMean", ["silu"], ["pool"], axes=[2, 3], keepdims=1),
        N("Sigmoid", ["pool"], ["gate"]), N("Mul", ["silu", "gate"], ["se"]),
        N("Add", ["x", "p"], ["plane"]),
        N("Add", ["x", "wb"], ["wbias"]),
        N("Mul", ["x", "hs"], ["hscale"]),
    ]
    c.outputs += ["se", "plane", "wbias", "hscale"]

    def feeds(n, hw):
        h, w = hw
        return {"x": rand(n, 24, h, w), "p": rand(h, w), "wb": rand(w), "hs": rand(n, 24, h, 1)}
    run_shapes(tmp_path, c, feeds, threads=(1, 2),
               shapes=[(1, (1, 1)), (2, (7, 7)), (1, (5, 13)), (3, (9, 8)), (2, (40, 40)),
                       (0, (3, 5))])


def test_elementwise_rows_of_static_planes_dynamic_batch(tmp_path):
    """A dynamic batch over 7x7 and 5x9 maps: rows shorter than a chunk take
    H in (rows of 49 / 45, collapse_rows.py); a 4 x 100 map keeps its rows
    of 100. SiLU, a squeeze-excitation gate, an [H, W] plane; batch 0, 1, 3;
    1 and 2 threads."""
    c = Cases()
    for name, (hh, ww) in [("a", (7, 7)), ("b", (5, 9)), ("l", (4, 100))]:
        c.input(name, ["N", 16, hh, ww])
        c.input(f"p{name}", [hh, ww])
        c.nodes += [
            N("Sigmoid", [name], [f"sg{name}"]), N("Mul", [name, f"sg{name}"], [f"silu{name}"]),
            N("ReduceMean", [f"silu{name}"], [f"pool{name}"], axes=[2, 3], keepdims=1),
            N("Sigmoid", [f"pool{name}"], [f"gate{name}"]),
            N("Mul", [f"silu{name}", f"gate{name}"], [f"se{name}"]),
            N("Add", [name, f"p{name}"], [f"plane{name}"]),
        ]
        c.outputs += [f"se{name}", f"plane{name}"]

    def feeds(n, _):
        return {k: rand(*s) for k, s in [("a", (n, 16, 7, 7)), ("b", (n, 16, 5, 9)),
                                         ("l", (n, 16, 4, 100)), ("pa", (7, 7)), ("pb", (5, 9)),
                                         ("pl", (4, 100))]}
    run_shapes(tmp_path, c, feeds, threads=(1, 2), shapes=[(1, 0), (3, 0), (0, 0)])
