"""The differential fuzzer (onnx_mlir_py.testing.fuzz): its generator makes
checker-valid, reproducible graphs, its reducer shrinks a planted bug, its
oracle's tolerance policy, and a small fixed budget of graphs compiled at -O0
and -O3 matches onnxruntime with no crash."""
from __future__ import annotations

import json

import numpy as np
import onnx
import pytest

from onnx_mlir_py.testing.fuzz import cli
from onnx_mlir_py.testing.fuzz.generator import check, generate
from onnx_mlir_py.testing.fuzz.inputs import make_runs
from onnx_mlir_py.testing.fuzz.oracle import compare, reference_runner
from onnx_mlir_py.testing.fuzz.reducer import reduce

TOL = {"rtol": 1e-3, "atol": 1e-4, "accumulates": True}


def test_generator_makes_valid_reproducible_graphs():
    ops, sizes = set(), []
    for i in range(60):
        case = generate(11, i, max_nodes=12)
        check(case.model)                       # onnx.checker full check, strict inference
        assert case.model.SerializeToString() == generate(11, i, 12).model.SerializeToString()
        ops |= set(case.ops())
        sizes.append(len(case.model.graph.node))
    assert min(sizes) >= 1 and max(sizes) >= 8
    # every family shows up in 60 graphs
    for op in ("MatMul", "Conv", "Reshape", "Gather", "Concat", "Cast", "If", "Loop", "Shape"):
        assert op in ops, op


def test_runs_cover_two_shapes_and_edge_values():
    case = next(c for c in (generate(3, i) for i in range(40))
                if any(isinstance(d.dim_param, str) and d.dim_param
                       for i in c.model.graph.input for d in i.type.tensor_type.shape.dim)
                and any(i.type.tensor_type.elem_type == onnx.TensorProto.FLOAT
                        for i in c.model.graph.input))
    runs = make_runs(case)
    labels = [r.label for r in runs]
    assert labels[:3] == ["b0-normal", "b1-normal", "b0-edge"]
    shapes = [tuple(a.shape for a in r.feeds.values()) for r in runs[:2]]
    assert shapes[0] != shapes[1]
    edge = np.concatenate([a.ravel() for a in runs[2].feeds.values() if a.dtype == np.float32])
    assert np.isnan(edge).any() or np.isinf(edge).any()


def test_reducer_shrinks_a_planted_bug():
    """A fake oracle that flags every graph containing Softmax: the reducer
    must end at the Softmax node alone, with inputs that still run."""
    case = next(c for c in (generate(5, i, max_nodes=14) for i in range(200))
                if "Softmax" in c.ops() and len(c.model.graph.node) >= 8)
    runs = make_runs(case)
    _, ref = reference_runner(case.model)
    runs = [r for r in runs if _runs(ref, r)]
    calls = []

    def fails(model, rs):
        calls.append(1)
        return any(n.op_type == "Softmax" for n in model.graph.node)
    m, rs = reduce(case.model, runs, fails)
    assert [n.op_type for n in m.graph.node] == ["Softmax"]
    check(m)
    _, ref2 = reference_runner(m)
    assert all(_runs(ref2, r) for r in rs)
    assert len(calls) < 60


def _runs(ref, run) -> bool:
    try:
        ref(run.feeds)
        return True
    except Exception:  # noqa: BLE001
        return False


def test_reference_erf_is_float32_precise():
    """onnx.reference computes Erf in float32 even for f64 inputs: with it as the
    oracle an f64 output after Erf / erf-Gelu gets the float32 tolerance."""
    from onnx import TensorProto as TP, helper as h
    from onnx_mlir_py.testing.fuzz.oracle import tolerance
    g = h.make_graph([h.make_node("Gelu", ["x"], ["y"]), h.make_node("Neg", ["x"], ["z"])], "g",
                     [h.make_tensor_value_info("x", TP.DOUBLE, [3])],
                     [h.make_tensor_value_info("y", TP.DOUBLE, [3]),
                      h.make_tensor_value_info("z", TP.DOUBLE, [3])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 20)])
    ref, ort = tolerance(m, "onnx.reference"), tolerance(m, "onnxruntime")
    assert ref["y"]["rtol"] > 1e-4 and ort["y"]["rtol"] < 1e-8
    assert ref["z"]["rtol"] == ort["z"]["rtol"] < 1e-8


@pytest.mark.parametrize("got,exp,edge,ok", [
    ([1.0, np.nan], [1.0 + 1e-5, np.nan], False, True),
    ([1.0, 2.0], [1.0, np.nan], False, False),               # NaN must stay NaN
    ([np.inf], [-np.inf], False, False),
    ([-np.inf], [-3.4028235e38], False, True),               # lowest() stands for -inf
    ([np.nan, 5.0], [np.inf, 5.0], True, True),               # edge run, accumulating chain
    ([np.nan, 5.0], [np.inf, 5.0], False, False),
    ([1.0, 1000.0], [1.05, 1000.0], False, True),              # atol scales with |output|
    ([1.0, 2.0], [1.5, 2.0], False, False),
])
def test_tolerance_policy(got, exp, edge, ok):
    why = compare(np.array(got, np.float32), np.array(exp, np.float32), TOL, edge)
    assert (why is None) == ok, why


def test_fixed_budget_matches_onnxruntime(tmp_path):
    """20 graphs at -O0 and -O3: 0 mismatches, 0 crashes (CI budget)."""
    rc = cli.main(["--seed", "2024", "--count", "20", "--max-nodes", "8", "--opt", "0", "3",
                   "--out", str(tmp_path), "--no-reduce", "-q"])
    recs = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    bad = [(r["case"], f) for r in recs for f in r.get("findings", [])
           if f["kind"] in ("mismatch", "crash", "wrong-error", "run-error", "timeout")]
    assert not bad, bad
    assert rc == 0
    compared = [r for r in recs if r.get("runs")]
    assert len(compared) >= 16, [r["status"] for r in recs]


def test_generator_slice_len_matches_onnxruntime():
    """The generator's Slice shape model (s2000-460: start -6, step -2 on an
    axis of 5 gave 0 elements, onnxruntime 1, so the next Concat was fed a
    shape the generator did not expect)."""
    import random
    import onnxruntime as ort
    from onnx import TensorProto as TP, helper as h
    from onnx_mlir_py.testing.fuzz.ops.shape import slice_len
    big = 2 ** 62
    rng = random.Random(7)
    g = h.make_graph([h.make_node("Slice", ["a", "s", "e", "ax", "st"], ["y"])], "g",
                     [h.make_tensor_value_info("a", TP.FLOAT, ["n"])] +
                     [h.make_tensor_value_info(n, TP.INT64, [1]) for n in ("s", "e", "ax", "st")],
                     [h.make_tensor_value_info("y", TP.FLOAT, None)])
    sess = ort.InferenceSession(h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
                                .SerializeToString(), providers=["CPUExecutionProvider"])
    assert slice_len(5, -6, -big, -2) == 1
    for _ in range(300):
        n = rng.randint(0, 5)
        start, end = (rng.choice([rng.randint(-8, 8), big, -big]) for _ in range(2))
        step = rng.choice([-3, -2, -1, 1, 2, 3])
        feeds = {"a": np.zeros(n, np.float32), "ax": np.array([0], np.int64),
                 **{k: np.array([v], np.int64) for k, v in (("s", start), ("e", end),
                                                            ("st", step))}}
        assert slice_len(n, start, end, step) == sess.run(None, feeds)[0].shape[0], \
            (n, start, end, step)


def test_second_opinion_counts_per_position():
    """A position matches if it matches onnxruntime or the second opinion
    (s2000-482: Ceil(Tanh(x)); tanh(-8.961194) = -0.99999997 rounds to
    -0.99999994 (ours, numpy), onnxruntime saturates to -1; tanh(-9.615808)
    = -0.99999999 rounds to -1 (ours, onnxruntime), numpy gives -0.99999994).
    A position matching neither still counts."""
    from onnx import TensorProto as TP, helper as h
    from onnx_mlir_py.testing.check import reference
    from onnx_mlir_py.testing.fuzz.oracle import reference_outputs, tolerance
    g = h.make_graph([h.make_node("Tanh", ["x"], ["t"]), h.make_node("Ceil", ["t"], ["y"])], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [3])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [3])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    feeds = {"x": np.array([-8.961194, -9.615808, 0.5], np.float32)}
    ort, ref = reference(m, feeds, "onnxruntime")[0], reference_outputs(m, feeds)[0]
    got = np.array([-0.0, -1.0, 1.0], np.float32)        # correctly rounded tanh, then ceil
    tol = tolerance(m)["y"]
    assert compare(got, ort, tol, False) and compare(got, ref, tol, False)
    assert compare(got, ort, tol, False, second=ref) is None
    assert compare(np.array([-0.0, -1.0, 0.0], np.float32), ort, tol, False, second=ref)


def _sum_then(first, second, feeds: dict, inits=()):
    from onnx import TensorProto as TP, helper as h
    out = TP.FLOAT if second.op_type == "HardSigmoid" else TP.BOOL
    g = h.make_graph([first, second], "g",
                     [h.make_tensor_value_info(k, TP.FLOAT, v.shape) for k, v in feeds.items()],
                     [h.make_tensor_value_info("y", out, None)], list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def _ill_conditioned(case):
    """(model, feeds, the one unstable position) of a minimal s2000-321 / -634."""
    from onnx import helper as h, numpy_helper as nh
    if case == "s2000-321":     # MatMul [1, 2, 6] x [6, 2], then >= 0.79
        a = np.array([[[0.71, -1.57, 1e30, 0.88, 0, 0.32], np.linspace(-1, 1, 6)]], np.float32)
        b = np.array([[np.inf, 1e30, -1e30, np.inf, 1.53, 1.52], np.linspace(2, -1, 6)],
                     np.float32).T
        m = _sum_then(h.make_node("MatMul", ["a", "b"], ["s"]),
                      h.make_node("GreaterOrEqual", ["s", "t"], ["y"]), {"a": a, "b": b},
                      [nh.from_array(np.array(0.79, np.float32), "t")])
        return m, {"a": a, "b": b}, (0, 0, 0)
    a = np.array([[127, 0], [-3, 1], [3, 2], [3, 0], [5, 1], [-5, 1]], np.float32)   # Aᵀ: [2, 6]
    b = np.array([[-2.76, 2.86, -1e30, 1e30, -0.0026, 0], np.linspace(-1, 1, 6)], np.float32)
    m = _sum_then(h.make_node("Gemm", ["a", "b"], ["s"], alpha=2.0, beta=0.0, transA=1, transB=1),
                  h.make_node("HardSigmoid", ["s"], ["y"], alpha=0.33, beta=0.3),
                  {"a": a, "b": b})
    return m, {"a": a, "b": b}, (0, 0)


@pytest.mark.parametrize("case", ["s2000-321", "s2000-634"])
def test_edge_runs_skip_positions_after_ill_conditioned_sums(case):
    """Edge runs: a position that depends on a sum whose terms dwarf it is
    decided by summation order and fma (s2000-321: inf + 1e30 * -1e30 is inf
    fused, NaN not, then >= 0.79; s2000-634: 127 * -2.76 - 3e30 + 3e30 is 0 or
    the rounding residue of 3e30, then HardSigmoid), so it is skipped there,
    and only there: every other position is still compared."""
    from onnx_mlir_py.testing.check import reference
    from onnx_mlir_py.testing.fuzz.oracle import tolerance, unstable_positions
    m, feeds, pos = _ill_conditioned(case)
    exp = reference(m, feeds, "onnxruntime")[0]
    skip = unstable_positions(m, feeds, "onnxruntime")["y"]
    assert skip[pos] and skip.sum() == 1, skip
    tol = tolerance(m)["y"]
    for i, ok in [(pos, True), (tuple(np.argwhere(~skip)[0]), False)]:
        got = exp.copy()
        got[i] = ~exp[i] if exp.dtype == bool else (0.5 if exp[i] != 0.5 else 1.0)
        assert (compare(got, exp, tol, True, skip) is None) == ok, (i, got, exp)
        assert compare(got, exp, tol, True) is not None


@pytest.mark.parametrize("op,x,want", [
    ("Floor", [3.0 * 2.0, 2.0 * 1.25, 1.0000001 * 5], [True, False, True]),
    ("Round", [2.5 * 1.0, 0.8 * 2.0, 3.0 * 1.0], [True, False, False])])
def test_rounding_of_computed_values_near_a_step_is_skipped(op, x, want):
    """s2000-350: Floor of an LpPool result, 5.9999995 or 6.0 by the last ulp,
    gave 5 or 6 (s2000-482: Ceil of Tanh). Floor/Ceil/Round of a computed
    value within the tolerance of a step (an integer; k + 1/2 for Round) is
    skipped; elsewhere, and of graph inputs, it stays compared."""
    from onnx import TensorProto as TP, helper as h, numpy_helper as nh
    from onnx_mlir_py.testing.fuzz.oracle import unstable_positions
    g = h.make_graph([h.make_node("Mul", ["x", "c"], ["p"]), h.make_node(op, ["p"], ["y"]),
                      h.make_node(op, ["x"], ["z"])], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [3])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [3]),
                      h.make_tensor_value_info("z", TP.FLOAT, [3])],
                     [nh.from_array(np.array(1.0, np.float32), "c")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    skip = unstable_positions(m, {"x": np.array(x, np.float32)}, "onnxruntime")
    assert skip["y"].tolist() == want and "z" not in skip


def test_generator_ceil_mode_last_window_valid_before_opset_22():
    """A ceil_mode window that would start in the end padding is dropped (the
    v22 spec, onnxruntime, the compiler), but onnx shape inference before
    opset 22 keeps it, so the checker rejected the generator's declared shape
    (s2000-1226: AveragePool W 2, k 3, pads 0/2, stride 3 at opset 21;
    s2000-1149: MaxPool W 3, k 1, stride 3 at opset 17, then a Concat). The
    generator leaves that case out before opset 22."""
    from onnx_mlir_py.testing.fuzz.ops.conv import _window_out
    assert _window_out(2, 3, 3, 1, 0, 2, True, opset=22) == 1
    with pytest.raises(ValueError):
        _window_out(2, 3, 3, 1, 0, 2, True, opset=21)
    assert _window_out(5, 3, 2, 1, 1, 1, True, opset=11) == 3     # no window dropped
    for i in (1149, 1226):
        check(generate(2000, i, 16).model)


def test_edge_runs_skip_periodic_functions_of_huge_computed_values():
    """s2000-1636: Tan of a Conv result -1.27e29 (the two answers one ulp apart)
    gave -0.73 at -O0 and 0.35 in onnxruntime: beyond about 1000 (f32), the
    rounding error of a computed argument decides Sin/Cos/Tan. Tan of a graph
    input is exact input data and stays compared, as do small arguments."""
    from onnx import TensorProto as TP, helper as h, numpy_helper as nh
    from onnx_mlir_py.testing.fuzz.oracle import unstable_positions
    g = h.make_graph([h.make_node("Mul", ["x", "c"], ["p"]), h.make_node("Tan", ["p"], ["y"]),
                      h.make_node("Transpose", ["x"], ["t"]), h.make_node("Sin", ["t"], ["z"])],
                     "g", [h.make_tensor_value_info("x", TP.FLOAT, [3])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [3]),
                      h.make_tensor_value_info("z", TP.FLOAT, [3])],
                     [nh.from_array(np.array(3.0, np.float32), "c")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    skip = unstable_positions(m, {"x": np.array([-4.2e28, 0.5, 20.0], np.float32)}, "onnxruntime")
    assert skip["y"].tolist() == [True, False, False] and "z" not in skip


def test_ops_of_sums_within_their_rounding_error_are_skipped():
    """s2705-30: Reciprocal of a Conv result 1.0196e-5 whose 10 terms bound
    its f32 rounding error by 3.1e-6 gave 97542 at -O0 and 98075 in
    onnxruntime (conv results 5.6e-8 apart). An elementwise op of a sum is
    unstable where moving the sum by its worst-case rounding error
    (``n * u * magnitude``) moves the op's result beyond the tolerance:
    1 / (1 - 1 + 1e-4) and (1 - 1 + 1e-4) >= 1e-4 are; 1 / 1.0001, 1.0001 >=
    0.5, and the same ops of graph inputs are compared."""
    from onnx import TensorProto as TP, helper as h, numpy_helper as nh
    from onnx_mlir_py.testing.fuzz.oracle import tolerance, unstable_positions
    a = np.array([[1.0, -1.0, 1e-4]], np.float32)
    b = np.array([[1, 2], [1, 1], [1, 1]], np.float32)
    t = np.array([np.float32(1e-4), 0.5], np.float32)
    g = h.make_graph([h.make_node("MatMul", ["a", "b"], ["s"]),
                      h.make_node("Relu", ["s"], ["r"]),          # carries the bound
                      h.make_node("Reciprocal", ["r"], ["y"]),
                      h.make_node("GreaterOrEqual", ["s", "t"], ["c"]),
                      h.make_node("Reciprocal", ["a"], ["z"])], "g",
                     [h.make_tensor_value_info("a", TP.FLOAT, [1, 3])],
                     [h.make_tensor_value_info(n, e, None)
                      for n, e in (("y", TP.FLOAT), ("c", TP.BOOL), ("z", TP.FLOAT))],
                     [nh.from_array(b, "b"), nh.from_array(t, "t")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    skip = unstable_positions(m, {"a": a}, "onnxruntime")
    assert skip["y"].tolist() == [[True, False]] and skip["c"].tolist() == [[True, False]]
    assert "z" not in skip
    exp = np.array([[1e4, 1 / 1.0001]], np.float32)
    tol = tolerance(m)["y"]
    for pos, ok in [((0, 0), True), ((0, 1), False)]:
        got = exp.copy()
        got[pos] = 3 * exp[pos] + 10
        assert (compare(got, exp, tol, False, skip["y"]) is None) == ok
        assert compare(got, exp, tol, False) is not None


def test_generator_quant_and_silu_specs():
    """The qdq, qdq_conv and silu specs make valid models: a QDQ conv group
    (DQ(Q(x)), an int8 per-channel weight and an int32 bias of scale sx * sw
    behind DequantizeLinear, Conv, Q -> DQ: -O3's int8 kernels on a VNNI
    CPU), fake quantization, and x * Sigmoid(x)."""
    seen = set()
    for i in range(12):
        m = check(generate(3500, i, 10, ops=["qdq_conv", "qdq", "silu"]).model)
        seen |= {n.op_type for n in m.graph.node}
    assert {"QuantizeLinear", "DequantizeLinear", "Conv", "Sigmoid", "Mul"} <= seen


def test_a_difference_only_at_unstable_positions_is_classified_unstable():
    """An output that differs from the reference only where conditioning
    says an ill-conditioned computation decides the value is an ``unstable``
    finding (not a bug, not a pass: s2705-30); a difference anywhere else in
    the same output is still a mismatch."""
    from onnx import TensorProto as TP, helper as h, numpy_helper as nh
    from onnx_mlir_py.testing.fuzz.inputs import Run
    from onnx_mlir_py.testing.fuzz.runner import Evaluator
    b = np.array([[1, 2], [1, 1], [1, 1]], np.float32)
    g = h.make_graph([h.make_node("MatMul", ["a", "b"], ["s"]),
                      h.make_node("Reciprocal", ["s"], ["y"])], "g",
                     [h.make_tensor_value_info("a", TP.FLOAT, [1, 3])],
                     [h.make_tensor_value_info("y", TP.FLOAT, None)], [nh.from_array(b, "b")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    run = Run(0, "normal", {"a": np.array([[1.0, -1.0, 1e-4]], np.float32)})
    exp = np.array([[1e4, 1 / 1.0001]], np.float32)
    ev = Evaluator(opts=(0,))
    try:
        for pos, kind in [((0, 0), "unstable"), ((0, 1), "mismatch")]:
            got = exp.copy()
            got[pos] = 3 * exp[pos] + 10
            ev.compile = lambda model, opt: ("ok", "lib.so")
            ev.worker.call = lambda fn, args, timeout, got=got: ("ok", [("ok", [got])])
            found = ev.evaluate(m, [run], ("onnxruntime", [(run, [exp])]))
            assert [f.kind for f in found] == [kind], found
    finally:
        ev.close()


def test_mod_of_computed_values_near_or_past_a_step_is_skipped():
    """s3605-30: fmod(1e30, Softmax(x)) at a quotient ~1e32 is decided by the
    divisor's last ulp (one ulp apart, -O3 gave 0.0078 where numpy,
    onnx.reference and -O0 give 0.0054, onnxruntime 0.0036). Mod of a computed
    dividend or divisor whose quotient lies within the tolerance of a nonzero
    integer (huge quotients always) is skipped; smaller quotients, quotients
    near 0 (no step there), and Mod of graph inputs stay compared."""
    from onnx import TensorProto as TP, helper as h, numpy_helper as nh
    from onnx_mlir_py.testing.fuzz.oracle import unstable_positions
    d = np.array([0.3, 1.0, 1.0, 0.25], np.float32)
    g = h.make_graph([h.make_node("Mul", ["x", "c"], ["p"]),
                      h.make_node("Mod", ["p", "d"], ["y"], fmod=1),
                      h.make_node("Softmax", ["s"], ["v"]),
                      h.make_node("Mod", ["x2", "v"], ["w"], fmod=1),
                      h.make_node("Mod", ["x", "d"], ["z"], fmod=1)], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [4]),
                      h.make_tensor_value_info("x2", TP.FLOAT, [4]),
                      h.make_tensor_value_info("s", TP.FLOAT, [4])],
                     [h.make_tensor_value_info(n, TP.FLOAT, [4]) for n in "ywz"],
                     [nh.from_array(np.array(1.0, np.float32), "c"), nh.from_array(d, "d")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    feeds = {"x": np.array([1e30, 2.5, 3.0, 0.1], np.float32),
             "x2": np.array([1e30, 2.5, 0.005, 0.1], np.float32),
             "s": np.array([-1.898658275604248, 2.989166259765625, -1.5019632577896118, 0.0],
                           np.float32)}
    skip = unstable_positions(m, feeds, "onnxruntime")
    # 1e30 / 0.3: huge; 2.5 / 1: half-way; 3.0 / 1: on a step; 0.1 / 0.25: below one
    assert skip["y"].tolist() == [True, False, True, False]
    # divisors 0.00705, 0.935, 0.0105, 0.0471: quotients 1.4e32, 2.7, 0.48, 2.1
    assert skip["w"].tolist() == [True, False, False, False]
    assert "z" not in skip


def test_s3605_30_classified_alike_at_both_levels():
    """s3605-30 (reduced: Mod(1e30, Softmax(x), fmod=1)): -O0 returned numpy's
    and onnx.reference's answer (softmax bits ...255 at position 2) and was an
    ``ort-deviation`` (onnxruntime's softmax is 1-2 ulps lower); -O3, its
    softmax one ulp higher at position 2 (0.0078 there), a ``mismatch``. The
    quotients are ~1e32, so every position is decided by the divisor's last
    ulp: both levels are ``unstable``."""
    from onnx import TensorProto as TP, helper as h
    from onnx_mlir_py.testing.fuzz.inputs import Run
    from onnx_mlir_py.testing.fuzz.runner import Evaluator
    g = h.make_graph([h.make_node("Softmax", ["in6"], ["v7"], axis=-1),
                      h.make_node("Mod", ["in8", "v7"], ["v12"], fmod=1)], "fuzz",
                     [h.make_tensor_value_info("in6", TP.FLOAT, [4]),
                      h.make_tensor_value_info("in8", TP.FLOAT, [])],
                     [h.make_tensor_value_info("v12", TP.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    run = Run(0, "edge", {
        "in6": np.array([-1.898658275604248, 2.989166259765625, -1.5019632577896118, 0.0],
                        np.float32),
        "in8": np.array(1e30, np.float32)})
    ort = np.array([0.0030165743082761765, 0.188323974609375, 0.0035766586661338806,
                    0.01678052544593811], np.float32)
    got = {"lib0.so": np.array([0.005084451753646135, 0.3859051465988159, 0.00540128443390131,
                        0.02124585583806038], np.float32)}
    got["lib3.so"] = got["lib0.so"].copy()
    got["lib3.so"][2] = np.float32(0.007808089256286621)      # softmax one ulp higher
    ev = Evaluator(opts=(0, 3))
    try:
        ev.compile = lambda model, opt: ("ok", f"lib{opt}.so")
        ev.worker.call = lambda fn, args, timeout: ("ok", [("ok", [got[args[0]]])])
        found = ev.evaluate(m, [run], ("onnxruntime", [(run, [ort])]))
        assert [(f.kind, f.opt) for f in found] == [("unstable", 0), ("unstable", 3)], found
    finally:
        ev.close()


def test_mismatch_names_positions_the_second_opinion_rejects_too(monkeypatch):
    """A mismatch kept after the second opinion is reported at a position that
    differs from onnxruntime *and* onnx.reference (s3605-30's -O3 finding named
    position 0, where it matched onnx.reference, so -O0's ort-deviation and
    -O3's mismatch read alike; the position neither accepted was 2)."""
    from onnx import TensorProto as TP, helper as h
    from onnx_mlir_py.testing.fuzz import runner
    from onnx_mlir_py.testing.fuzz.inputs import Run
    g = h.make_graph([h.make_node("Abs", ["x"], ["y"])], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [3])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [3])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    run = Run(0, "normal", {"x": np.array([1.0, 2.0, 3.0], np.float32)})
    ort = np.array([1.0, 2.0, 3.0], np.float32)
    monkeypatch.setattr(runner, "reference_outputs",
                        lambda model, feeds: [np.array([1.5, 2.0, 3.0], np.float32)])
    got = np.array([1.5, 2.0, 9.0], np.float32)       # 0: onnx.reference's; 2: nobody's
    ev = runner.Evaluator(opts=(0,))
    try:
        ev.compile = lambda model, opt: ("ok", "lib.so")
        ev.worker.call = lambda fn, args, timeout: ("ok", [("ok", [got])])
        found = ev.evaluate(m, [run], ("onnxruntime", [(run, [ort])]))
        assert [f.kind for f in found] == ["mismatch"], found
        assert "1 of 3 differ, first at (2,)" in found[0].detail, found[0].detail
    finally:
        ev.close()
