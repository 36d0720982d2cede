"""Einsum lowered to one linalg.generic, against onnx.reference: matmuls,
diagonals, traces, ``...`` broadcasting, implicit output, three inputs,
integer and f16 inputs; every case compiled once with dynamic dims and run
at two run-time shapes, plus the run-time check of a label size mismatch."""
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from dynamic_util import check_rejects, check_shapes, model

R = np.random.default_rng(0)


def _x(dtype, s):
    if np.dtype(dtype).kind == "i":
        return R.integers(-4, 5, s).astype(dtype)
    return R.standard_normal(s).astype(dtype)


# equation, dynamic dims of each input, two run-time shape sets
CASES = {
    "matmul": ("ij,jk->ik", [["i", "j"], ["j", "k"]], [[(2, 3), (3, 4)], [(5, 1), (1, 2)]]),
    "batch_matmul": ("bij,bjk->bik", [["b", "i", "j"], ["b", "j", "k"]],
                     [[(2, 3, 4), (2, 4, 5)], [(1, 2, 2), (1, 2, 3)]]),
    "implicit": ("ij,jk", [["i", "j"], ["j", "k"]], [[(2, 3), (3, 4)], [(4, 2), (2, 1)]]),
    "implicit_transpose": ("ji", [["a", "b"]], [[(3, 4)], [(2, 5)]]),
    "trace": ("ii", [["n", "n"]], [[(3, 3)], [(5, 5)]]),
    "diagonal": ("...ii->...i", [["b", "n", "n"]], [[(3, 4, 4)], [(1, 2, 2)]]),
    "outer": ("i,j->ij", [["i"], ["j"]], [[(3,), (4,)], [(1,), (2,)]]),
    "inner": ("i,i", [["i"], ["i"]], [[(5,), (5,)], [(2,), (2,)]]),
    "sum_all": ("ijk->", [["a", "b", "c"]], [[(2, 3, 4)], [(1, 5, 2)]]),
    "three_inputs": ("ij,jk,kl->il", [["i", "j"], ["j", "k"], ["k", "l"]],
                     [[(2, 3), (3, 4), (4, 2)], [(1, 2), (2, 2), (2, 3)]]),
    # '...' broadcasting, a run-time 1 against a larger dim both ways
    "ellipsis_bcast": ("...ij,...jk->...ik", [["a", "b", "i", "j"], ["c", "j", "k"]],
                       [[(2, 1, 3, 4), (5, 4, 2)], [(1, 3, 2, 2), (1, 2, 3)]]),
    "ellipsis_static1": ("...j,...j->...", [[1, "a", "j"], ["b", "c", "j"]],
                         [[(1, 3, 4), (2, 3, 4)], [(1, 1, 2), (3, 2, 2)]]),
    "label_bcast": ("ij,ij->i", [["i", "j"], ["i", "j2"]], [[(2, 1), (2, 3)], [(3, 4), (3, 4)]]),
}


def _check_case(tmp_path, case, opt_level):
    """CASES[case] compiled once at ``opt_level``, run at each of its shape sets."""
    eq, dims, shape_sets = CASES[case]
    names = [f"x{i}" for i in range(len(dims))]
    m = model([h.make_node("Einsum", names, ["y"], equation=eq)],
              [(n, T.FLOAT, d) for n, d in zip(names, dims)], opset=12)
    feeds = [{n: _x(np.float32, s) for n, s in zip(names, shapes)} for shapes in shape_sets]
    check_shapes(tmp_path, m, feeds, opt_level=opt_level, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", sorted(CASES))
def test_einsum_dynamic(tmp_path, case):
    _check_case(tmp_path, case, opt_level=0)


@pytest.mark.parametrize("elem,dtype,tol", [(T.INT32, np.int32, 0), (T.INT64, np.int64, 0),
                                            (T.DOUBLE, np.float64, 1e-12),
                                            (T.FLOAT16, np.float16, 2e-3)])
def test_einsum_types(tmp_path, elem, dtype, tol):
    m = model([h.make_node("Einsum", ["a", "b"], ["y"], equation="bij,bjk->bik")],
              [("a", elem, ["b", "i", 16]), ("b", elem, ["b", 16, "k"])], opset=12)
    feeds = [{"a": _x(dtype, (2, 3, 16)), "b": _x(dtype, (2, 16, 4))},
             {"a": _x(dtype, (1, 1, 16)), "b": _x(dtype, (1, 16, 2))}]
    check_shapes(tmp_path, m, feeds, rtol=tol, atol=tol)


def test_einsum_f16_accumulates_in_f32(tmp_path):
    """[60000, 10000] . [1, 1] - 60000: an f16 accumulator overflows to inf."""
    m = model([h.make_node("Einsum", ["a", "b"], ["y"], equation="i,i")],
              [("a", T.FLOAT16, [3]), ("b", T.FLOAT16, [3])], opset=12)
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so"))
    a = np.array([60000, 10000, -60000], np.float16)
    (y,) = sess.run([a, np.ones(3, np.float16)])
    assert y.dtype == np.float16 and float(y) == 10000.0


def test_einsum_size_mismatch_is_an_error(tmp_path):
    m = model([h.make_node("Einsum", ["a", "b"], ["y"], equation="ij,jk->ik", name="es")],
              [("a", T.FLOAT, ["i", "j"]), ("b", T.FLOAT, ["j2", "k"])], opset=12)
    check_rejects(tmp_path, m, [{"a": _x(np.float32, (2, 3)), "b": _x(np.float32, (4, 2))}],
                  match=r"es.*label 'j' has size 3 in one input and 4 in input 1")


@pytest.mark.parametrize("case", ["batch_matmul", "diagonal", "ellipsis_bcast"])
def test_einsum_dynamic_O3(tmp_path, case):
    _check_case(tmp_path, case, opt_level=3)
