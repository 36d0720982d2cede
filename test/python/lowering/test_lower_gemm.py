"""MatMul with dynamic dims: batch dims that are 1 at run time broadcast
(dynamic batch dims used to be assumed equal: collapsing and expanding
them aborted in expand-strided-metadata, and a run-time 1 read out of
bounds)."""
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from dynamic_util import check_shapes, model

R = np.random.default_rng(0)


def _f(*s):
    return R.standard_normal(s).astype(np.float32)


CASES = {
    # rank 4 x rank 4, every dim dynamic: batch dims broadcast either way
    "4d_4d": ([["a", "b", "m", "k"], ["c", "d", "k", "n"]],
              [((3, 1, 3, 4), (1, 2, 4, 2)), ((1, 2, 3, 4), (1, 2, 4, 5)),
               ((2, 3, 1, 4), (2, 1, 4, 3))]),
    # rank 3 x rank 3: one batch dim
    "3d_3d": ([["a", "m", "k"], ["c", "k", "n"]],
              [((1, 3, 4), (5, 4, 2)), ((5, 3, 4), (1, 4, 2)), ((2, 2, 3), (2, 3, 3))]),
    # rank 4 x rank 2: two dynamic leading dims collapsed into M
    "4d_2d": ([["a", "b", "m", "k"], ["k", "n"]],
              [((2, 3, 4, 5), (5, 2)), ((1, 1, 2, 3), (3, 4))]),
    # rank 2 x rank 4 and rank 1 operands (generic contraction)
    "2d_4d": ([["m", "k"], ["a", "b", "k", "n"]],
              [((3, 4), (2, 1, 4, 5)), ((1, 2), (1, 3, 2, 2))]),
    "1d_3d": ([["k"], ["a", "k", "n"]], [((4,), (2, 4, 3)), ((2,), (1, 2, 5))]),
    # found by the fuzzer: K (or the batch) static in one operand, dynamic in the
    # other; the -O3 kernel took its parameter types from A alone (func.call
    # operand type mismatch, an MLIRError)
    "static_k_dyn_b": ([[3, 4], ["k", "n"]], [((3, 4), (4, 2)), ((3, 4), (4, 7))]),
    "static_batch_dyn_b": ([[5, 2, "m"], ["s", "m", "m"]],
                           [((5, 2, 3), (5, 3, 3)), ((5, 2, 2), (1, 2, 2))]),
    # mixed: a static 1 against a dynamic batch dim
    "static1_dyn": ([[1, "b", "m", "k"], ["a", 1, "k", "n"]],
                    [((1, 3, 2, 4), (2, 1, 4, 3)), ((1, 1, 2, 4), (3, 1, 4, 2))]),
}


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.quick
def test_matmul_dynamic_broadcast(tmp_path, case, opt_level):
    dims, shape_sets = CASES[case]
    m = model([h.make_node("MatMul", ["a", "b"], ["y"])],
              [("a", T.FLOAT, dims[0]), ("b", T.FLOAT, dims[1])])
    check_shapes(tmp_path, m, [{"a": _f(*sa), "b": _f(*sb)} for sa, sb in shape_sets],
                 opt_level=opt_level, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_matmul_dynamic_mismatch_is_an_error(tmp_path, opt_level):
    from dynamic_util import check_rejects
    m = model([h.make_node("MatMul", ["a", "b"], ["y"], name="mm")],
              [("a", T.FLOAT, ["a", "b", "m", "k"]), ("b", T.FLOAT, ["c", "d", "k2", "n"])])
    check_rejects(tmp_path, m, [{"a": _f(3, 2, 3, 4), "b": _f(2, 2, 4, 3)},   # batch 3 vs 2
                                {"a": _f(1, 2, 3, 4), "b": _f(1, 3, 4, 3)},   # batch 2 vs 3
                                {"a": _f(1, 2, 3, 4), "b": _f(1, 2, 5, 3)}],  # K 4 vs 5
                  r"node 'mm' \(MatMul\).*(broadcast|inner dimensions)", opt_level)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("op,dims,attrs,shapes", [
    # found by the fuzzer: a contraction over K = 0 aborted -O3 (tiling a
    # 0-trip loop; 0-column subviews of its packing)
    ("Gemm", [[0, 5], ["n", 0]], dict(transA=1, transB=1), [((0, 5), (3, 0)), ((0, 5), (1, 0))]),
    ("MatMul", [["m", 0], [0, 4]], {}, [((2, 0), (0, 4)), ((5, 0), (0, 4))]),
    # fuzz s1-58: M = 0 (and a batch of 0) with dynamic K, N crashed -O3 (upstream
    # block-pack of an empty result, a 0-size slice)
    ("MatMul", [[0, "k"], ["k", "n"]], {}, [((0, 3), (3, 4)), ((0, 5), (5, 2))]),
    ("MatMul", [[2, 0, "k"], ["k", "n"]], {}, [((2, 0, 3), (3, 4)), ((2, 0, 1), (1, 2))]),
])
def test_contraction_with_an_empty_dim(tmp_path, op, dims, attrs, shapes, opt_level):
    m = model([h.make_node(op, ["a", "b"], ["y"], **attrs)],
              [("a", T.FLOAT, dims[0]), ("b", T.FLOAT, dims[1])])
    check_shapes(tmp_path, m, [{"a": _f(*sa), "b": _f(*sb)} for sa, sb in shapes],
                 opt_level=opt_level)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_matmul_dynamic_batch_dim_against_static(tmp_path, opt_level):
    """fuzz s1-12: A [5,?,?,2] x B [5,2,2,8]: A's dynamic batch dim (2, or 1
    broadcast) collapsed with B's static one failed to compile (expand_shape
    expected a static 10)."""
    m = model([h.make_node("MatMul", ["a", "b"], ["y"])],
              [("a", T.FLOAT, [5, "s", "m", 2]), ("b", T.FLOAT, [5, 2, 2, 8])])
    check_shapes(tmp_path, m, [{"a": _f(5, 2, 3, 2), "b": _f(5, 2, 2, 8)},
                               {"a": _f(5, 1, 4, 2), "b": _f(5, 2, 2, 8)}], opt_level=opt_level)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("sa,sb", [((2, 2, 5), (1, 5, 4)), ((5, 6, 3, 3), (1, 1, 3, 3))])
def test_matmul_static_batch_broadcast(tmp_path, opt_level, sa, sb):
    """fuzz s2-21, s2-33: a static batch dim 1 facing a larger one (the
    refinement for s1-12 cast it to the larger size: a compile error)."""
    m = model([h.make_node("MatMul", ["a", "b"], ["y"])],
              [("a", T.FLOAT, list(sa)), ("b", T.FLOAT, list(sb))])
    check_shapes(tmp_path, m, [{"a": _f(*sa), "b": _f(*sb)}], opt_level=opt_level)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_f16_accumulates_in_f32(tmp_path, opt_level):
    """f16 MatMul / Gemm summed in f16 (several ulp off numpy, which sums in
    f32: test_attention_4d_fp16 gave wrong numbers); now read as f32, summed
    in f32, rounded once. K = 512 (f16 sums lose ~1e-2 there); 2-D, batched
    and broadcast MatMul and Gemm, 2 run-time shapes, vs onnx.reference."""
    m = model([h.make_node("MatMul", ["a", "b"], ["y"]),
               h.make_node("MatMul", ["a4", "b4"], ["y4"]),
               h.make_node("MatMul", ["a4", "b"], ["y3"]),
               h.make_node("Gemm", ["a", "b", "c"], ["g"], alpha=0.5, beta=2.0, transB=0)],
              [("a", T.FLOAT16, ["m", 512]), ("b", T.FLOAT16, [512, 3]),
               ("a4", T.FLOAT16, ["p", 2, "m", 512]), ("b4", T.FLOAT16, ["p", 2, 512, 3]),
               ("c", T.FLOAT16, [3])],
              [(o, T.FLOAT16, None) for o in ("y", "y4", "y3", "g")], opset=13)
    rng = np.random.default_rng(7)

    def feeds(p, mm):
        f = lambda *s: rng.uniform(0.0, 1.0, s).astype(np.float16)  # noqa: E731
        return {"a": f(mm, 512), "b": f(512, 3), "a4": f(p, 2, mm, 512),
                "b4": f(p, 2, 512, 3), "c": f(3)}
    check_shapes(tmp_path, m, [feeds(1, 4), feeds(2, 3)], opt_level, rtol=2e-3, atol=0)
