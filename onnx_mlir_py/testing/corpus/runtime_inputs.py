"""Hostile run-time inputs: out-of-range indices, huge or overflowing
allocations, dims that disagree between inputs sharing a dim_param, wrong
dtypes, ranks, counts and kinds of inputs. Each case compiles; its first run
is valid and must match onnxruntime, the hostile ones must raise
RuntimeInputError (or ModelRunError for memory exhaustion) from Python, never
a signal — and the session stays usable (a valid run follows)."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto as T
from onnx import helper as h

from onnx_mlir_py.testing.corpus.case import F, I32, I64, Case, Run, fx, model

BIG = 2 ** 40
RIE, MRE, ANY = "RuntimeInputError", "ModelRunError", "OnnxMlirError"
OOM = r"'bad'|out of memory"   # a failed malloc does not know the node


def _i(v, dt=np.int64):
    return np.asarray(v, dt)


def _case(name, op, inputs, good, bad, attrs=None, inits=None, out_dtype=F, n_out=1,
          opset=17, opt_level=0, error=RIE, match=r"'bad'", extra_good=(), order=None):
    """A one-node model ('bad'); ``good``: inputs of a valid run, ``bad``: a
    list of hostile input lists (each must raise ``error``)."""
    inits = dict(inits or {})
    names = order if order is not None else [n for n, *_ in inputs] + list(inits)
    node = h.make_node(op, names, [f"y{i}" for i in range(n_out)], name="bad", **(attrs or {}))
    dts = out_dtype if isinstance(out_dtype, (list, tuple)) else [out_dtype] * n_out
    m = model([node], inputs, [(f"y{i}", dt, None) for i, dt in enumerate(dts)], inits,
              opset=opset)
    runs = [Run(good)] + [Run(b, error, match) for b in bad] + [Run(g) for g in extra_good] \
        + [Run(good)]
    return Case(f"runtime/{name}", "runtime", m.SerializeToString(), expect="ok", runs=runs,
                opt_level=opt_level)


def _indices():
    x = fx(4, 3)
    dyn = [("x", F, ["a", "b"]), ("i", I64, ["k"])]
    for o in (0, 3):
        yield _case(f"Gather/axis0_O{o}", "Gather", dyn, [x, _i([0, -1, 3])],
                    [[x, _i([4])], [x, _i([-5])], [x, _i([1, BIG])], [x, _i([-BIG])]],
                    {"axis": 0}, opt_level=o)
    yield _case("Gather/axis1_int32", "Gather", [("x", F, ["a", "b"]), ("i", I32, ["k"])],
                [x, _i([2, -3], np.int32)], [[x, _i([3], np.int32)],
                                             [x, _i([-2 ** 31], np.int32)]], {"axis": 1})
    yield _case("GatherElements/oob", "GatherElements", [("x", F, [4, 3]), ("i", I64, [2, 3])],
                [x, _i([[0, 1, 3], [-1, -4, 2]])], [[x, _i([[0, 1, 4], [0, 0, 0]])],
                                                    [x, _i([[0, 0, 0], [0, -BIG, 0]])]],
                {"axis": 0})
    yield _case("GatherND/oob", "GatherND", [("x", F, [4, 3]), ("i", I64, ["k", 2])],
                [x, _i([[0, 0], [3, 2], [-1, -3]])], [[x, _i([[4, 0]])], [x, _i([[0, 3]])],
                                                      [x, _i([[BIG, 0]])]])
    u = fx(2, 3, seed=3)
    yield _case("ScatterElements/oob", "ScatterElements",
                [("x", F, [4, 3]), ("i", I64, [2, 3]), ("u", F, [2, 3])],
                [x, _i([[0, 1, 2], [3, 2, 1]]), u], [[x, _i([[0, 1, 2], [4, 0, 0]]), u],
                                                     [x, _i([[-5, 0, 0], [0, 0, 0]]), u]],
                {"axis": 0})
    yield _case("ScatterND/oob", "ScatterND", [("x", F, [4, 3]), ("i", I64, ["k", 1]),
                                               ("u", F, ["k", 3])],
                [x, _i([[1], [3]]), u], [[x, _i([[1], [4]]), u], [x, _i([[BIG], [0]]), u]])
    yield _case("OneHot/index_out_of_range_gives_off_row", "OneHot",
                [("i", I64, ["n"]), ("d", I64, [])], [_i([0, 2]), _i(3)],
                [], inits={"v": np.array([0, 1], np.float32)},
                extra_good=[[_i([5, -7, 1]), _i(3)]])
    yield _case("OneHot/depth_negative", "OneHot", [("i", I64, ["n"]), ("d", I64, [])],
                [_i([0, 2]), _i(3)], [[_i([0]), _i(-2)], [_i([0]), _i(BIG)]],
                inits={"v": np.array([0, 1], np.float32)}, error=ANY, match=OOM)


def _allocations():
    s3 = [("s", I64, [3])]
    yield _case("ConstantOfShape/huge", "ConstantOfShape", s3, [_i([2, 3, 1])],
                [[_i([100000, 100000, 100000])]], error=MRE, match=OOM)
    yield _case("ConstantOfShape/overflow", "ConstantOfShape", s3, [_i([2, 3, 1])],
                [[_i([2 ** 31, 2 ** 31, 2 ** 31])], [_i([2 ** 62, 4, 1])]], error=ANY)
    yield _case("ConstantOfShape/negative", "ConstantOfShape", s3, [_i([2, 3, 1])],
                [[_i([2, -3, 1])]])
    x11 = [("x", F, [1, 1]), ("s", I64, [2])]
    one = np.full((1, 1), 2.5, np.float32)
    for o in (0, 3):
        yield _case(f"Expand/overflow_O{o}", "Expand", x11, [one, _i([2, 3])],
                    [[one, _i([2 ** 31, 2 ** 31])], [one, _i([2 ** 62, 2 ** 62])]],
                    opt_level=o)
    yield _case("Expand/negative", "Expand", x11, [one, _i([2, 3])], [[one, _i([-2, 3])]])
    yield _case("Expand/incompatible", "Expand", [("x", F, [2, 3]), ("s", I64, [2])],
                [fx(2, 3), _i([2, 3])], [[fx(2, 3), _i([4, 3])]])
    yield _case("Tile/huge", "Tile", [("x", F, [2, 3]), ("r", I64, [2])],
                [fx(2, 3), _i([2, 1])], [[fx(2, 3), _i([2 ** 40, 2 ** 40])],
                                         [fx(2, 3), _i([-1, 1])]], error=ANY)
    yield _case("Range/huge", "Range", [("a", F, []), ("b", F, []), ("d", F, [])],
                [_i(0, np.float32), _i(5, np.float32), _i(1, np.float32)],
                [[_i(0, np.float32), _i(1e18, np.float32), _i(1, np.float32)]],
                error=ANY, match=OOM)
    yield _case("Range/delta_zero", "Range", [("a", I64, []), ("b", I64, []), ("d", I64, [])],
                [_i(0), _i(5), _i(2)], [[_i(0), _i(5), _i(0)]], out_dtype=I64, error=ANY)
    yield _case("Pad/huge", "Pad", [("x", F, [2, 3]), ("p", I64, [4])],
                [fx(2, 3), _i([1, 0, 0, 2])], [[fx(2, 3), _i([2 ** 40, 0, 2 ** 40, 0])],
                                               [fx(2, 3), _i([-3, 0, 0, 0])]], error=ANY, match=OOM)
    yield _case("Reshape/runtime_two_minus_one", "Reshape", [("x", F, [2, 6]), ("s", I64, [2])],
                [fx(2, 6), _i([3, -1])], [[fx(2, 6), _i([-1, -1])], [fx(2, 6), _i([5, 5])],
                                          [fx(2, 6), _i([-2, -6])]])
    yield _case("Slice/runtime_step_zero", "Slice", [("x", F, [4, 3]), ("st", I64, [1]),
                                                     ("en", I64, [1]), ("ax", I64, [1]),
                                                     ("sp", I64, [1])],
                [fx(4, 3), _i([0]), _i([3]), _i([0]), _i([2])],
                [[fx(4, 3), _i([0]), _i([3]), _i([0]), _i([0])],
                 [fx(4, 3), _i([0]), _i([3]), _i([5]), _i([1])]])
    yield _case("Split/runtime_sizes_not_summing", "Split", [("x", F, [6, 2]), ("s", I64, [2])],
                [fx(6, 2), _i([2, 4])], [[fx(6, 2), _i([2, 2])], [fx(6, 2), _i([8, -2])]],
                n_out=2)
    yield _case("TopK/runtime_k_too_big", "TopK", [("x", F, [2, 5]), ("k", I64, [1])],
                [fx(2, 5), _i([3])], [[fx(2, 5), _i([6])], [fx(2, 5), _i([-1])]], n_out=2,
                out_dtype=[F, I64],
                error=ANY)
    yield _case("Resize/runtime_sizes_huge", "Resize", [("x", F, [1, 1, 2, 2]), ("sz", I64, [4])],
                [fx(1, 1, 2, 2), _i([1, 1, 4, 4])],
                [[fx(1, 1, 2, 2), _i([1, 1, 2 ** 40, 2 ** 40])],
                 [fx(1, 1, 2, 2), _i([1, 1, -4, 4])]], error=ANY, order=["x", "", "", "sz"])


def _signatures():
    add = [("x", F, ["n", 4]), ("z", F, ["n", 4])]
    good = [fx(3, 4), fx(3, 4, seed=1)]
    for o in (0, 3):
        yield _case(f"Add/dim_param_mismatch_O{o}", "Add", add, good,
                    [[fx(3, 4), fx(5, 4)], [fx(5, 4), fx(3, 4)]], opt_level=o,
                    match=r"'?z'?|input")
    yield _case("MatMul/inner_dim_mismatch", "MatMul", [("x", F, ["m", "k"]), ("z", F, ["k2", 2])],
                [fx(3, 4), fx(4, 2)], [[fx(3, 4), fx(5, 2)]])
    yield _case("Concat/dim_mismatch", "Concat", [("x", F, ["a", "b"]), ("z", F, ["c", "d"])],
                [fx(2, 3), fx(4, 3)], [[fx(2, 3), fx(2, 4)]], {"axis": 0})
    yield _case("Conv/input_smaller_than_kernel", "Conv", [("x", F, [1, 1, "h", "w"])],
                [fx(1, 1, 5, 5)], [[fx(1, 1, 2, 5)]], inits={"w": fx(1, 1, 3, 3)})
    yield _case("MaxPool/input_smaller_than_kernel", "MaxPool", [("x", F, [1, 1, "h", "w"])],
                [fx(1, 1, 5, 5)], [[fx(1, 1, 2, 2)]], {"kernel_shape": [3, 3]})
    sig = [("x", F, [2, 3])]
    g = [fx(2, 3)]
    wrong = [[fx(2, 3).astype(np.float64)], [fx(2, 3).astype(np.int32)], [fx(3, 2)],
             [fx(2, 3, 1)], [fx(6)], [np.float32(1.0)], [], [fx(2, 3), fx(2, 3)],
             [None], [[[1.0, 2.0, 3.0]] * 2], [np.array([["a"] * 3] * 2)],
             [np.zeros((2, 3), dtype=object)]]
    yield _case("Relu/wrong_inputs", "Relu", sig, g, wrong, match=r"input|expected")
    yield _case("Relu/strided_and_fortran_inputs", "Relu", [("x", F, ["a", "b"])], g, [],
                extra_good=[[fx(4, 6)[::2, ::2]], [np.asfortranarray(fx(3, 5))],
                            [fx(0, 3)], [fx(3, 0)]])
    yield _case("Add/empty_and_special_values", "Add", [("x", F, ["n", 3]), ("z", F, [1, 3])],
                g[:1] + [fx(1, 3)], [],
                extra_good=[[fx(0, 3), fx(1, 3)],
                            [np.array([[np.inf, -np.inf, np.nan]], np.float32),
                             np.array([[-np.inf, np.inf, 1e38]], np.float32)]])
    for o in (0, 3):
        yield _case(f"Div/int32_by_zero_O{o}", "Div", [("x", I32, ["n"]), ("z", I32, ["n"])],
                    [_i([6, 7, -8], np.int32), _i([2, 3, 4], np.int32)],
                    [[_i([6, 7, -8], np.int32), _i([2, 0, 4], np.int32)]],
                    out_dtype=I32, match=r"'bad'.*division by zero", opt_level=o)
    c = _case("Div/int32_min_by_minus_one", "Div", [("x", I32, [3]), ("z", I32, [3])],
              [_i([6, 7, -8], np.int32), _i([2, 3, 4], np.int32)], [], out_dtype=I32)
    # onnxruntime traps (SIGFPE) here; two's complement wraps, as numpy
    c.runs.insert(1, Run([_i([-2 ** 31, 7, -8], np.int32), _i([-1, -1, 3], np.int32)],
                         expected=[_i([-2 ** 31, -7, -2], np.int32)]))
    yield c
    yield _case("Mod/int64_by_zero", "Mod", [("x", I64, [3]), ("z", I64, [3])],
                [_i([6, 7, -8]), _i([4, 3, 5])], [[_i([6, 7, -8]), _i([0, 3, 5])]],
                out_dtype=I64, match=r"'bad'.*division by zero")
    yield _case("Mod/int32_fmod_by_zero", "Mod", [("x", I32, ["n"]), ("z", I32, [])],
                [_i([6, 7, -8], np.int32), _i(5, np.int32)],
                [[_i([6, 7, -8], np.int32), _i(0, np.int32)]], {"fmod": 1},
                out_dtype=I32, match=r"'bad'.*division by zero")
    yield _case("Div/uint8_by_zero", "Div", [("x", T.UINT8, [3]), ("z", T.UINT8, [3])],
                [_i([6, 7, 200], np.uint8), _i([2, 3, 255], np.uint8)],
                [[_i([6, 7, 8], np.uint8), _i([2, 3, 0], np.uint8)]],
                out_dtype=T.UINT8, match=r"'bad'.*division by zero")


def cases() -> list[Case]:
    return [c for gen in (_indices, _allocations, _signatures) for c in gen()]
