"""Gemm, MatMul, MatMulInteger, Einsum: our shape inference against onnx's,
and verifier errors."""
import pytest
from onnx import TensorProto as TP, helper

from helpers import infer_and_compare, make_model, our_output_types
from onnx_mlir_py.errors import VerificationError

pytestmark = pytest.mark.quick   # the quick tier (README, Tests)


F = TP.FLOAT


def model(op, ins, opset, **attrs):
    node = helper.make_node(op, [n for n, _, _ in ins], ["y"], name="g", **attrs)
    return make_model([node], ins, ["y"], opset)


@pytest.mark.parametrize("opset", [7, 9, 11, 13, 25])
@pytest.mark.parametrize("a,b,c,attrs,want", [
    ([3, 4], [4, 5], [3, 5], {}, [3, 5]),
    ([4, 3], [4, 5], [5], dict(transA=1), [3, 5]),
    ([3, 4], [5, 4], [1, 5], dict(transB=1, alpha=2.0), [3, 5]),
    ([4, 3], [5, 4], [], dict(transA=1, transB=1), [3, 5]),
    (["M", 4], [4, 5], [5], {}, [None, 5]),
])
def test_gemm(opset, a, b, c, attrs, want):
    ins = [("a", F, a), ("b", F, b), ("c", F, c)]
    assert infer_and_compare(model("Gemm", ins, opset, **attrs))[0][1] == want


def test_gemm_without_c():
    ins = [("a", F, [2, 3]), ("b", F, [3, 7])]
    assert infer_and_compare(model("Gemm", ins, 13))[0][1] == [2, 7]


@pytest.mark.parametrize("opset", [7, 9, 13, 25])
@pytest.mark.parametrize("a,b,want", [
    ([3, 4], [4, 5], [3, 5]),
    ([4], [4, 5], [5]),
    ([3, 4], [4], [3]),
    ([4], [4], []),
    ([2, 1, 3, 4], [5, 4, 6], [2, 5, 3, 6]),
    (["B", 3, 4], [4, 6], [None, 3, 6]),
    ([7, 3, 4], [4], [7, 3]),
])
def test_matmul(opset, a, b, want):
    assert infer_and_compare(model("MatMul", [("a", F, a), ("b", F, b)], opset))[0][1] == want


@pytest.mark.parametrize("zp", [False, True])
@pytest.mark.parametrize("a,b,want", [([3, 4], [4, 5], [3, 5]), ([2, 3, 4], [4, 5], [2, 3, 5]),
                                      ([4], [4, 5], [5])])
def test_matmul_integer(a, b, want, zp):
    ins = [("a", TP.UINT8, a), ("b", TP.INT8, b)]
    if zp:
        ins += [("az", TP.UINT8, []), ("bz", TP.INT8, [b[-1]])]
    assert infer_and_compare(model("MatMulInteger", ins, 10)) == [("i32", want)]


@pytest.mark.parametrize("eq,shapes,want", [
    ("ij,jk->ik", [[2, 3], [3, 4]], [2, 4]),
    ("ij,jk", [[2, 3], [3, 4]], [2, 4]),
    ("bij,bjk->bik", [[5, 2, 3], [5, 3, 4]], [5, 2, 4]),
    ("ii->i", [[3, 3]], [3]),
    ("ij->", [[3, 4]], []),
    ("...ij,...jk->...ik", [[7, 2, 3], [7, 3, 4]], [7, 2, 4]),
    ("ji", [[3, 4]], [4, 3]),
    ("i,j->ij", [["N"], [4]], [None, 4]),
])
def test_einsum(eq, shapes, want):
    ins = [(f"x{i}", F, s) for i, s in enumerate(shapes)]
    assert infer_and_compare(model("Einsum", ins, 12, equation=eq))[0][1] == want


@pytest.mark.parametrize("op,ins,attrs,msg", [
    ("Gemm", [("a", F, [3, 4]), ("b", F, [5, 6])], {},
     r"inner dimensions differ: A \[3x4\] \(transA=0\) has K = 4, B \[5x6\] \(transB=0\) has K = 5"),
    ("Gemm", [("a", F, [3, 4, 1]), ("b", F, [4, 6])], {}, r"expected rank 2, got rank 3"),
    ("Gemm", [("a", F, [3, 4]), ("b", F, [4, 6]), ("c", F, [2, 6])], {},
     r"not unidirectionally broadcastable to \[M, N\] = \[3x6\]"),
    ("MatMul", [("a", F, [2, 3, 4]), ("b", F, [3, 4, 5])], {}, r"not broadcast-compatible"),
    ("MatMul", [("a", F, [3, 4]), ("b", F, [3, 5])], {}, r"has K = 4, B \[3x5\] has K = 3"),
    ("Einsum", [("a", F, [2, 3]), ("b", F, [4, 5])], dict(equation="ij,jk->ik"),
     r"label 'j' has size 3 in one input and 4 in input 1"),
    ("Einsum", [("a", F, [2, 3])], dict(equation="ijk->i"), r"expects rank 3"),
])
def test_invalid(op, ins, attrs, msg):
    with pytest.raises(VerificationError, match=r"node 'g' \(" + op + r"\): .*" + msg):
        our_output_types(model(op, ins, 13, **attrs))
