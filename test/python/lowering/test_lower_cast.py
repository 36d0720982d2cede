"""Cast / CastLike to and from bf16, float8 (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ,
E8M0), float4 E2M1 and int4/uint4/int2/uint2, compiled and compared bit for
bit with onnx.reference (ml_dtypes): every f16 value, f32 specials and random
f32 bit patterns; every pattern of each small type back to f32/f16/int8."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP, helper
from onnx.reference import ReferenceEvaluator

from onnx_mlir_py.testing.check import run_compiled

SMALL = [TP.FLOAT8E4M3FN, TP.FLOAT8E4M3FNUZ, TP.FLOAT8E5M2, TP.FLOAT8E5M2FNUZ, TP.FLOAT8E8M0,
         TP.FLOAT4E2M1, TP.BFLOAT16, TP.INT4, TP.UINT4, TP.INT2, TP.UINT2]
F8 = SMALL[:4]
INTS = (TP.INT4, TP.UINT4, TP.INT2, TP.UINT2)


def _model(nodes, inputs, outputs, opset=25):
    g = helper.make_graph(nodes, "g", inputs, outputs)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def assert_same_bits(got: np.ndarray, want: np.ndarray, what: str):
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype)
    if want.dtype.kind in "iub" or want.dtype in (ml_dtypes.int4, ml_dtypes.uint4,
                                                 ml_dtypes.int2, ml_dtypes.uint2):
        np.testing.assert_array_equal(got.astype(np.int64), want.astype(np.int64), what)
        return
    gn, wn = np.isnan(got.astype(np.float32)), np.isnan(want.astype(np.float32))
    bad = (gn != wn) | (~wn & (_bits(got) != _bits(want)))
    idx = np.nonzero(bad)[0][:5]
    assert not bad.any(), f"{what}: {bad.sum()} differ, e.g. at {idx}: got bits " \
        f"{_bits(got)[idx]}, expected {_bits(want)[idx]}"


def _in_int_range(x: np.ndarray, t: int) -> np.ndarray:
    """Where ``x`` casts to the integer type ``t`` inside its range (the spec
    leaves a fixed-point cast out of range undefined: we wrap, ml_dtypes
    0.7 gives 0)."""
    info = ml_dtypes.iinfo(helper.tensor_dtype_to_np_dtype(t))
    with np.errstate(invalid="ignore"):
        tr = np.trunc(x.astype(np.float64))
    return np.isfinite(tr) & (tr >= info.min) & (tr <= info.max)


def _float_inputs(src: int) -> np.ndarray:
    f16 = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    if src == TP.FLOAT16:
        return f16
    rng = np.random.default_rng(0)
    rand = rng.integers(0, 2 ** 32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([f16.astype(np.float32), rand,
                           np.array([np.inf, -np.inf, np.nan, -0.0, 3e38, 448, 464, 465,
                                     57344, 61440, 240, 248], np.float32)])


@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("src", [TP.FLOAT, TP.FLOAT16])
def test_cast_to_small_types_bit_exact(src, saturate):
    x = _float_inputs(src)
    dsts = SMALL if saturate else F8
    outs, nodes, feeds = [], [], {}
    for k, d in enumerate(dsts):
        name = f"x{k}"
        v = x
        if d in INTS:          # out of range float -> int is undefined (the spec): in range
            v = x[_in_int_range(x, d)]
        if d == TP.FLOAT8E8M0:  # negative -> e8m0 is undefined
            v = x[~(x < 0)]
        feeds[name] = v
        nodes.append(helper.make_node("Cast", [name], [f"y{k}"], to=d, saturate=saturate))
        outs.append(helper.make_tensor_value_info(f"y{k}", d, [len(v)]))
    ins = [helper.make_tensor_value_info(n, src, [len(v)]) for n, v in feeds.items()]
    m = _model(nodes, ins, outs)
    got = run_compiled(m, feeds)
    want = ReferenceEvaluator(m).run(None, feeds)
    for d, g, w in zip(dsts, got, want):
        assert_same_bits(g, np.asarray(w), onnx.helper.tensor_dtype_to_string(d))


def _all_patterns(t: int) -> np.ndarray:
    dt = helper.tensor_dtype_to_np_dtype(t)
    n = {TP.BFLOAT16: 65536, TP.INT2: 4, TP.UINT2: 4, TP.INT4: 16, TP.UINT4: 16,
         TP.FLOAT4E2M1: 16}.get(t, 256)
    raw = np.arange(n, dtype=np.uint32).astype(np.uint16 if n > 256 else np.uint8)
    return raw.view(dt)


@pytest.mark.parametrize("dst", [TP.FLOAT, TP.FLOAT16, TP.DOUBLE, TP.INT8, TP.BOOL,
                                 TP.FLOAT8E4M3FN, TP.BFLOAT16])
def test_cast_from_small_types_bit_exact(dst):
    nodes, ins, outs, feeds = [], [], [], {}
    srcs = [s for s in SMALL if s != dst]
    for k, s in enumerate(srcs):
        v = _all_patterns(s)
        if dst == TP.INT8 and s not in INTS:   # float -> int out of range is undefined
            f = v.astype(np.float32)
            v = v[np.isfinite(f) & (np.abs(f) < 100)]
        feeds[f"x{k}"] = v
        ins.append(helper.make_tensor_value_info(f"x{k}", s, [len(v)]))
        nodes.append(helper.make_node("Cast", [f"x{k}"], [f"y{k}"], to=dst))
        outs.append(helper.make_tensor_value_info(f"y{k}", dst, [len(v)]))
    m = _model(nodes, ins, outs)
    got = run_compiled(m, feeds)
    want = ReferenceEvaluator(m).run(None, feeds)
    for s, g, w in zip(srcs, got, want):
        assert_same_bits(g, np.asarray(w), f"{helper.tensor_dtype_to_string(s)} -> "
                                           f"{helper.tensor_dtype_to_string(dst)}")


@pytest.mark.parametrize("round_mode", ["up", "down", "nearest"])
@pytest.mark.parametrize("saturate", [1, 0])
def test_cast_e8m0_round_modes(round_mode, saturate):
    rng = np.random.default_rng(1)
    x = np.concatenate([np.abs(rng.standard_normal(3000)).astype(np.float32) * 1e3,
                        rng.integers(0, 2 ** 31, 5000, dtype=np.uint64).astype(np.uint32)
                        .view(np.float32),
                        np.array([0, np.inf, np.nan, 3.4e38, 1e-45, 1.5, 3.0], np.float32)])
    m = _model([helper.make_node("Cast", ["x"], ["y"], to=TP.FLOAT8E8M0, saturate=saturate,
                                 round_mode=round_mode)],
               [helper.make_tensor_value_info("x", TP.FLOAT, [len(x)])],
               [helper.make_tensor_value_info("y", TP.FLOAT8E8M0, [len(x)])])
    assert_same_bits(run_compiled(m, {"x": x})[0],
                     np.asarray(ReferenceEvaluator(m).run(None, {"x": x})[0]), round_mode)


def test_small_type_initializers_and_data_movement():
    """Constants of the one-byte storage types (int4 packed two per byte in the
    proto, float8, int2 with zeros; small ones dense, large ones dense_resource),
    moved by Transpose, then cast."""
    rng = np.random.default_rng(2)
    vals = {TP.INT4: rng.integers(-8, 8, (40, 30)), TP.UINT2: rng.integers(0, 4, (3, 5)),
            TP.FLOAT8E5M2: rng.standard_normal((40, 30)) * 10,
            TP.FLOAT4E2M1: rng.standard_normal((3, 5)) * 3}
    nodes, outs, inits = [], [], []
    for k, (t, v) in enumerate(vals.items()):
        arr = np.asarray(v).astype(helper.tensor_dtype_to_np_dtype(t))
        inits.append(onnx.numpy_helper.from_array(arr, f"c{k}"))
        nodes += [helper.make_node("Transpose", [f"c{k}"], [f"t{k}"], perm=[1, 0]),
                  helper.make_node("Cast", [f"t{k}"], [f"y{k}"], to=TP.FLOAT)]
        outs.append(helper.make_tensor_value_info(f"y{k}", TP.FLOAT, arr.shape[::-1]))
    nodes.append(helper.make_node("Identity", ["x"], ["z"]))
    m = _model(nodes, [helper.make_tensor_value_info("x", TP.FLOAT8E4M3FNUZ, [4])],
               outs + [helper.make_tensor_value_info("z", TP.FLOAT8E4M3FNUZ, [4])])
    m.graph.initializer.extend(inits)
    x = np.array([0x80, 0x01, 0x7F, 0xFF], np.uint8).view(ml_dtypes.float8_e4m3fnuz)
    got = run_compiled(m, {"x": x})
    want = ReferenceEvaluator(m).run(None, {"x": x})
    for g, w in zip(got, want):
        assert_same_bits(g, np.asarray(w), "constant")


def test_storage_type_into_computing_op_is_refused():
    """An op that would compute on the i8 bits of a float8 value fails naming it."""
    from onnx_mlir_py.errors import OnnxMlirError
    m = _model([helper.make_node("IsNaN", ["x"], ["y"])],
               [helper.make_tensor_value_info("x", TP.FLOAT8E4M3FN, [4])],
               [helper.make_tensor_value_info("y", TP.BOOL, [4])])
    with pytest.raises(OnnxMlirError, match=r"IsNaN.*f8E4M3FN is not supported"):
        run_compiled(m, {"x": np.zeros(4, ml_dtypes.float8_e4m3fn)})


@pytest.mark.parametrize("opt_level", [0, 3])
def test_bf16_arithmetic_and_selects(opt_level):
    """bf16 ops compute in f32; at -O0 they round once per op (bit-exact with
    ml_dtypes); at -O3 ops fused into one kernel round once at its end (the
    emulation keeps f32 in between: within an ulp per op). The vectorized
    selects make LLVM call __truncsfbf2, which the runtime provides."""
    rng = np.random.default_rng(3)
    a = (rng.standard_normal(1000) * 50).astype(ml_dtypes.bfloat16)
    b = (rng.standard_normal(1000) * 50).astype(ml_dtypes.bfloat16)
    c = rng.standard_normal(1000) > 0
    t = TP.BFLOAT16
    m = _model([helper.make_node("Add", ["a", "b"], ["s"]),
                helper.make_node("Mul", ["s", "a"], ["p"]),
                helper.make_node("Where", ["c", "p", "b"], ["y"]),
                helper.make_node("Max", ["y", "a"], ["z"])],
               [helper.make_tensor_value_info("a", t, [1000]),
                helper.make_tensor_value_info("b", t, [1000]),
                helper.make_tensor_value_info("c", TP.BOOL, [1000])],
               [helper.make_tensor_value_info("y", t, [1000]),
                helper.make_tensor_value_info("z", t, [1000])], opset=21)
    feeds = {"a": a, "b": b, "c": c}
    got = run_compiled(m, feeds, opt_level=opt_level)
    for g, w in zip(got, ReferenceEvaluator(m).run(None, feeds)):
        if opt_level == 0:
            assert_same_bits(g, np.asarray(w), "bf16")
        else:
            np.testing.assert_allclose(g.astype(np.float32), np.asarray(w).astype(np.float32),
                                       rtol=2 ** -7, atol=0)


@pytest.mark.parametrize("src,dst,values", [
    (TP.FLOAT, TP.INT32, np.array([1.5, -0.0, np.inf, np.nan, 3e-41])),
    (TP.INT64, TP.DOUBLE, np.array([1, -1, 2 ** 62, -2 ** 63])),
    (TP.UINT16, TP.INT16, np.array([0, 1, 0x7FFF, 0x8000, 0xFFFF])),
    (TP.FLOAT16, TP.UINT16, np.array([1.0, -2.5, 65504, -np.inf])),
    (TP.BOOL, TP.UINT8, np.array([True, False, True, True, False])),
    (TP.DOUBLE, TP.UINT64, np.array([1.0, -0.0, np.nan, -np.inf, 5e-324])),
])
def test_bitcast_dynamic(tmp_path, src, dst, values):
    """BitCast (v26) vs onnx.reference: the same bits (NaN, inf, -0, denormals,
    sign bits), a dynamic dim at two run-time lengths."""
    from dynamic_util import check_shapes, model
    dt = helper.tensor_dtype_to_np_dtype(src)
    m = model([helper.make_node("BitCast", ["x"], ["y"], to=dst)], [("x", src, ["n"])], opset=26)
    feeds = [{"x": values.astype(dt)}, {"x": values[:2].astype(dt)}]
    check_shapes(tmp_path, m, feeds, rtol=0, atol=0)


# -- strings <-> numbers (onnxruntime's Cast kernel; onnx.reference prints with
# numpy's str() instead: '1.0', 'nan', 'True', so it is compared only where the
# two agree) -----------------------------------------------------------------
STRING_FLOATS = np.array([0.1, 1 / 3, 1e10, 1e-10, -0.0, np.nan, np.inf, -np.inf, 123456789.0,
                          1.0, 3.4028235e38, 1e-45, 100.0, 1e16, 2 ** 24, -2.5e-7], np.float32)
STRING_NUMBERS = ["0.1", "1e-5", "1E8", "NaN", "nan", "inf", "-INF", "+INF", "+inf", "Infinity",
                  "  12", " 1.5", "3.14", "0x10", "16777217", "1e39", "-1e39", "1e-46", "-0",
                  "100.5", "12abc", "1.5x", "300", "-129", "0", "2", "0.5", "65504", "70000",
                  "1e-8", "-7"]
# stoll / stoull take no inf / nan
STRING_INTS = [t for t in STRING_NUMBERS if not any(c in t.lower() for c in "in")]
with np.errstate(over="ignore"):
    STRING_HALFS = STRING_FLOATS.astype(np.float16)


def _string_model(src, dst, dims, name="cast"):
    from dynamic_util import model
    return model([helper.make_node("Cast", ["x"], ["y"], to=dst, name=name)],
                 [("x", src, dims)], [("y", dst, None)], opset=21)


def _check_ort(tmp_path, m, xs, bits=False):
    import onnxruntime as ort
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so"))
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for x in xs:
        got, want = sess.run([x])[0], ref.run(None, {"x": x})[0]
        assert got.shape == want.shape, x.shape
        if bits:                     # float8: onnxruntime returns the bytes as uint8
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
        elif want.dtype == object:
            assert got.tolist() == want.tolist()
        else:
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(_bits(got), _bits(want))


@pytest.mark.parametrize("src,values", [
    (TP.FLOAT, STRING_FLOATS), (TP.DOUBLE, STRING_FLOATS.astype(np.float64) * 1.0000001),
    (TP.FLOAT16, STRING_HALFS),
    (TP.INT64, np.array([1, -5, 2 ** 62, -2 ** 63, 0], np.int64)),
    (TP.UINT64, np.array([0, 2 ** 64 - 1, 7], np.uint64)),
    (TP.INT8, np.array([-128, 127, 0], np.int8)),
    (TP.UINT8, np.array([255, 1, 0], np.uint8)), (TP.INT32, np.array([-2 ** 31, 5, 9], np.int32)),
    (TP.BOOL, np.array([True, False, True]))])
def test_cast_numbers_to_string(tmp_path, src, values):
    """'%.8g' / 'NaN' / 'INF' / '-INF' / decimal, at 2 run-time sizes and empty."""
    _check_ort(tmp_path, _string_model(src, TP.STRING, ["n"]), [values, values[1:3], values[:0]])


@pytest.mark.parametrize("src", [TP.BFLOAT16, TP.FLOAT8E4M3FN, TP.INT4])
def test_small_types_to_string(tmp_path, src):
    """Types onnxruntime's Python API cannot feed: as its kernel, via float
    ('%.8g') or the integer value."""
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    dt = helper.tensor_dtype_to_np_dtype(src)
    x = np.array([0.1, -3, 7, 1 / 3, 0], np.float32).astype(dt)
    got = ExecutionSession(onnx_mlir_py.compile(_string_model(src, TP.STRING, ["n"]),
                                                tmp_path / "m.so")).run([x])[0]
    want = [str(int(v)) if src == TP.INT4 else "%.8g" % float(v) for v in x.astype(np.float32)]
    assert got.tolist() == want


@pytest.mark.parametrize("dst", [TP.FLOAT, TP.DOUBLE, TP.FLOAT16, TP.INT8, TP.UINT8, TP.INT16,
                                 TP.UINT16, TP.INT32, TP.UINT32, TP.INT64, TP.UINT64, TP.BOOL,
                                 TP.FLOAT8E4M3FN])
def test_cast_string_to_numbers(tmp_path, dst):
    """std::stod / stoll / stoull then narrowed (wrapping ints, rounding
    floats via f32), [n, m] dynamic at 2 shapes and empty."""
    floats = dst in (TP.FLOAT, TP.DOUBLE, TP.FLOAT16, TP.FLOAT8E4M3FN)
    x = np.array((STRING_NUMBERS + ["1"] if floats else STRING_INTS)[:24], object).reshape(4, 6)
    _check_ort(tmp_path, _string_model(TP.STRING, dst, ["n", "m"]), [x, x[1:3, 2:7], x[:0]],
               bits=dst == TP.FLOAT8E4M3FN)


def test_cast_string_to_int4(tmp_path):
    """std::stoi, then the low 4 bits (onnxruntime's int4 caster)."""
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    x = np.array(["7", "8", "-9", "300", " 2", "-2147483648"], object)
    got = ExecutionSession(onnx_mlir_py.compile(_string_model(TP.STRING, TP.INT4, ["n"]),
                                                tmp_path / "m.so")).run([x])[0]
    assert got.astype(np.int64).tolist() == [7, -8, 7, -4, 2, 0]


def test_cast_strings_agree_with_reference_on_plain_literals(tmp_path):
    """Where onnx.reference and onnxruntime agree (whole numeric literals,
    integers to text, CastLike both ways, string to string): the same answer
    as both, at 2 run-time sizes."""
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    from onnx_mlir_py.testing.check import reference
    from dynamic_util import model
    m = model([helper.make_node("Cast", ["s"], ["f"], to=TP.DOUBLE),
               helper.make_node("Cast", ["s"], ["g"], to=TP.FLOAT),
               helper.make_node("Cast", ["i"], ["t"], to=TP.STRING),
               helper.make_node("CastLike", ["i", "s"], ["u"]),
               helper.make_node("CastLike", ["s", "like"], ["v"]),
               helper.make_node("Cast", ["s"], ["w"], to=TP.STRING)],
              [("s", TP.STRING, ["n"]), ("i", TP.INT64, ["k"]), ("like", TP.FLOAT, [1])],
              [("f", TP.DOUBLE, None), ("g", TP.FLOAT, None), ("t", TP.STRING, None),
               ("u", TP.STRING, None), ("v", TP.FLOAT, None), ("w", TP.STRING, None)], opset=21)
    sess = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m.so"))
    s = np.array(["1.5", "-2e3", "0.1", "7", "1e-3", " 42", "-0.0"], object)
    i = np.array([3, -2 ** 63, 0, 12345678901], np.int64)
    like = np.ones(1, np.float32)
    for feeds in ({"s": s, "i": i, "like": like}, {"s": s[:2], "i": i[:0], "like": like}):
        got = sess.run([feeds["s"], feeds["i"], like])
        for engine in ("reference", "onnxruntime"):
            for g, w in zip(got, reference(m, feeds, engine)):
                w = np.asarray(w)
                if w.dtype.kind in "OU":
                    assert g.dtype == object and g.tolist() == w.astype(object).tolist(), engine
                else:
                    assert g.dtype == w.dtype, engine
                    np.testing.assert_array_equal(_bits(g), _bits(w), engine)


@pytest.mark.parametrize("dst,text,code", [
    (TP.FLOAT, "hello", 0), (TP.FLOAT, "", 0), (TP.DOUBLE, "1e400", 1), (TP.FLOAT, "é1", 0),
    (TP.INT64, "99999999999999999999", 1), (TP.INT32, "abc", 0), (TP.BOOL, "true", 0),
    (TP.UINT8, "--1", 0), (TP.INT4, "3000000000", 1)])
def test_cast_string_not_a_number_fails_the_call(tmp_path, dst, text, code):
    """Where std::stod / stoll / stoull / stoi throw (onnxruntime fails the
    run), the call fails naming the node; the same session then still works."""
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession, RuntimeInputError
    sess = ExecutionSession(onnx_mlir_py.compile(_string_model(TP.STRING, dst, ["n"], "cst"),
                                                 tmp_path / "m.so"))
    with pytest.raises(RuntimeInputError, match=f"cst.*not a number.*code {code}"):
        sess.run([np.array(["1", text], object)])
    assert sess.run([np.array(["1"], object)])[0].astype(np.float64).tolist() == [1.0]


@pytest.mark.parametrize("t", [TP.FLOAT4E2M1, TP.FLOAT8E4M3FN, TP.INT4, TP.UINT2])
def test_castlike_empty_small_type_constant(t):
    # an empty 'like' constant of a one-byte storage type prints as dense<>: it was
    # an internal error (float('')) in constant mode of test_castlike_*_to_FLOAT4E2M1
    like = np.zeros((0,), helper.tensor_dtype_to_np_dtype(t))
    m = _model([helper.make_node("CastLike", ["x", "like"], ["y"])],
               [helper.make_tensor_value_info("x", TP.FLOAT16, [3, 5])],
               [helper.make_tensor_value_info("y", t, [3, 5])])
    m.graph.initializer.append(onnx.numpy_helper.from_array(like, "like"))
    x = (np.random.default_rng(3).standard_normal((3, 5)) * 2).astype(np.float16)
    if t in INTS:           # in range (out of range is undefined: see _in_int_range)
        info = ml_dtypes.iinfo(helper.tensor_dtype_to_np_dtype(t))
        x = np.clip(x, info.min, info.max).astype(np.float16)
    got = run_compiled(m, {"x": x})
    want = ReferenceEvaluator(m).run(None, {"x": x})
    assert_same_bits(got[0], np.asarray(want[0]), "castlike")
