"""-O3 int8 matmuls on VNNI (passes/optimize/matmul_q8.py): MatMulInteger and
QLinearMatMul with constant s8 weights, u8 and s8 activations, with and
without a zero point, 2-D and 3-D A with dynamic dims run at several sizes
(full register tiles and single tail rows), K not a multiple of 4, N a
multiple of 16 but not of 32 and N not a multiple of 16 (zero columns), QGemm
(transposed B, float and 8-bit outputs), 1 and 2 threads; exact against onnxruntime
(MatMulInteger) and onnx.reference (QLinearMatMul). On a CPU with AVX-512
VNNI the library must use the kernel (it then records avx512vnni as
required); without VNNI (or with it hidden) it must not."""
from __future__ import annotations

import mlir.ir as ir
import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import onnx_mlir_py
from onnx_mlir_py.isa import HIDE_ENV, host_has
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.testing.check import reference

VNNI = host_has("avx512vnni") and host_has("avx512f")


def matmul_integer(k: int, n: int, signed_a: bool, zp: bool, rank3: bool, seed: int = 0):
    rng = np.random.default_rng(seed)
    inits = [nh.from_array(rng.integers(-128, 128, (k, n)).astype(np.int8), "B")]
    ins = ["a", "B"]
    if zp:
        inits.append(nh.from_array(np.array(-7 if signed_a else 131,
                                            np.int8 if signed_a else np.uint8), "za"))
        ins.append("za")
    shape = ["b", "s", k] if rank3 else ["m", k]
    g = h.make_graph([h.make_node("MatMulInteger", ins, ["c"])], "g",
                     [h.make_tensor_value_info("a", TP.INT8 if signed_a else TP.UINT8, shape)],
                     [h.make_tensor_value_info("c", TP.INT32, None)], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def qlinear_matmul(k: int, n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    inits = [nh.from_array(rng.integers(-128, 128, (k, n)).astype(np.int8), "B"),
             nh.from_array(np.array(0.02, np.float32), "sa"),
             nh.from_array(np.array(120, np.uint8), "za"),
             nh.from_array(np.array(0.01, np.float32), "sb"),
             nh.from_array(np.array(0, np.int8), "zb"),
             nh.from_array(np.array(3.0, np.float32), "sy"),
             nh.from_array(np.array(128, np.uint8), "zy")]
    g = h.make_graph([h.make_node("QLinearMatMul", ["a", "sa", "za", "B", "sb", "zb", "sy", "zy"],
                                  ["c"])], "g",
                     [h.make_tensor_value_info("a", TP.UINT8, ["m", k])],
                     [h.make_tensor_value_info("c", TP.UINT8, None)], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _feed(shape, signed: bool, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if signed:
        return rng.integers(-128, 128, shape).astype(np.int8)
    return rng.integers(0, 256, shape).astype(np.uint8)


def _session(m, tmp_path, threads=None) -> ExecutionSession:
    so = onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=3)
    return ExecutionSession(so) if threads is None else ExecutionSession(so, num_threads=threads)


def _uses_vnni(sess: ExecutionSession) -> bool:
    """An int8 kernel ran: VNNI's, or on a CPU with AMX-INT8 its AMX kernel
    (matmul_q8_amx.py: the matmuls and the im2col convs' matmuls)."""
    feats = (sess.target or {}).get("features", [])
    return "avx512vnni" in feats or "amx-int8" in feats


@pytest.mark.parametrize("signed_a,zp,rank3,k,n", [
    (False, True, False, 64, 64),       # u8 with a zero point
    (True, True, False, 64, 32),        # s8 with a zero point
    (False, False, True, 96, 48),       # 3-D A, N = 3 x 16 (16-column blocks)
    (True, False, False, 30, 32),       # K not a multiple of 4
])
def test_matmul_integer(tmp_path, signed_a, zp, rank3, k, n):
    m = matmul_integer(k, n, signed_a, zp, rank3)
    sess = _session(m, tmp_path)
    assert _uses_vnni(sess) == VNNI
    for rows in (1, 8, 13, 40):        # tail rows only, one tile, tile + tail
        shape = (2, rows, k) if rank3 else (rows, k)
        a = _feed(shape, signed_a, rows)
        got = sess.run([a])[0]
        want = reference(m, {"a": a}, "onnxruntime")[0]
        np.testing.assert_array_equal(got, want, err_msg=str(shape))


def test_matmul_integer_two_threads(tmp_path):
    m = matmul_integer(256, 256, False, True, False, seed=3)
    sess = _session(m, tmp_path, threads=2)
    for rows in (3, 64, 77):
        a = _feed((rows, 256), False, rows)
        np.testing.assert_array_equal(sess.run([a])[0],
                                      reference(m, {"a": a}, "onnxruntime")[0])


def test_qlinear_matmul(tmp_path):
    m = qlinear_matmul(128, 64)
    sess = _session(m, tmp_path)
    assert _uses_vnni(sess) == VNNI
    for rows in (5, 24):
        a = _feed((rows, 128), False, rows)
        np.testing.assert_array_equal(sess.run([a])[0], reference(m, {"a": a})[0])


def test_hidden_vnni_keeps_the_generic_matmul(tmp_path, monkeypatch):
    """With VNNI (and AMX-INT8, whose kernel would take it) hidden the -O3
    default target has none: no kernel, no requirement recorded, same results."""
    from onnx_mlir_py import target
    monkeypatch.setenv(HIDE_ENV, "avx512vnni amx_int8")
    target.resolve.cache_clear()
    try:
        m = matmul_integer(64, 32, False, True, False)
        sess = _session(m, tmp_path)
        assert not _uses_vnni(sess)
        a = _feed((9, 64), False, 1)
        np.testing.assert_array_equal(sess.run([a])[0], reference(m, {"a": a}, "onnxruntime")[0])
    finally:
        monkeypatch.delenv(HIDE_ENV)
        target.resolve.cache_clear()


@pytest.mark.parametrize("n", [24, 1000])
def test_n_not_a_multiple_of_16_gets_zero_columns(tmp_path, n):
    """N not a multiple of 16 (a 1000-class head): B gets zero columns up to
    whole vectors and the result is sliced back; exact."""
    m = matmul_integer(32, n, False, True, False)
    sess = _session(m, tmp_path)
    assert _uses_vnni(sess) == VNNI
    for rows in (1, 7, 13):
        a = _feed((rows, 32), False, rows)
        np.testing.assert_array_equal(sess.run([a])[0],
                                      reference(m, {"a": a}, "onnxruntime")[0])


@pytest.mark.parametrize("trans_b, quantized", [(1, False), (0, False), (1, True)])
def test_qgemm(tmp_path, trans_b, quantized):
    """onnxruntime's QGemm (QOperator models' Gemm; the QDQ Gemm rewrite's
    output): B transposed (transB=1, read through the lowering's
    linalg.transpose) or not, per-column scales, int32 C, float or 8-bit
    output, N = 1000: the int8 kernel, equal to onnxruntime."""
    import onnxruntime as ort
    rng = np.random.default_rng(4)
    k, n = 96, 1000
    w = rng.integers(-127, 128, (n, k) if trans_b else (k, n)).astype(np.int8)
    inits = [nh.from_array(np.array(0.05, np.float32), "as"),
             nh.from_array(np.array(7, np.uint8), "az"), nh.from_array(w, "W"),
             nh.from_array((rng.random(n) * 0.01 + 0.001).astype(np.float32), "bs"),
             nh.from_array(np.zeros(n, np.int8), "bz"),
             nh.from_array(rng.integers(-3000, 3000, n).astype(np.int32), "C")]
    ins = ["a", "as", "az", "W", "bs", "bz", "C"]
    if quantized:
        inits += [nh.from_array(np.array(0.3, np.float32), "ys"),
                  nh.from_array(np.array(128, np.uint8), "yz")]
        ins += ["ys", "yz"]
    g = h.make_graph([h.make_node("QGemm", ins, ["y"], domain="com.microsoft", transB=trans_b)],
                     "g", [h.make_tensor_value_info("a", TP.UINT8, ["m", k])],
                     [h.make_tensor_value_info("y", TP.UINT8 if quantized else TP.FLOAT, None)],
                     initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17), h.make_opsetid("com.microsoft", 1)])
    m.ir_version = 8
    sess = _session(m, tmp_path)
    assert _uses_vnni(sess) == VNNI
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for rows in (1, 9):
        a = _feed((rows, k), False, rows)
        np.testing.assert_array_equal(sess.run([a])[0], ref.run(None, {"a": a})[0])


def test_two_kernels_in_one_model(tmp_path):
    """Two int8 matmuls of different shapes (two kernel functions sharing the
    VNNI step): MatMulInteger -> DynamicQuantizeLinear -> MatMulInteger with a
    run-time zero point (the shape of a dynamically quantized model)."""
    rng = np.random.default_rng(5)
    b1 = rng.integers(-128, 128, (64, 32)).astype(np.int8)
    b2 = rng.integers(-128, 128, (32, 48)).astype(np.int8)
    g = h.make_graph([h.make_node("MatMulInteger", ["a", "B1"], ["c"]),
                      h.make_node("Cast", ["c"], ["cf"], to=TP.FLOAT),
                      h.make_node("DynamicQuantizeLinear", ["cf"], ["q", "s", "z"]),
                      h.make_node("MatMulInteger", ["q", "B2", "z"], ["y"])], "g",
                     [h.make_tensor_value_info("a", TP.UINT8, ["m", 64])],
                     [h.make_tensor_value_info("y", TP.INT32, None)],
                     initializer=[nh.from_array(b1, "B1"), nh.from_array(b2, "B2")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    sess = _session(m, tmp_path)
    assert _uses_vnni(sess) == VNNI
    for rows in (3, 20):
        a = _feed((rows, 64), False, rows)
        np.testing.assert_array_equal(sess.run([a])[0], reference(m, {"a": a}, "onnxruntime")[0])


def test_inference_session_uses_the_kernel(tmp_path, monkeypatch):
    """The onnxruntime drop-in compiles -O3 for the host by default: on a VNNI
    CPU its cache key names the extension and the library uses the kernel
    (it once compiled for the bare ISA level, without it)."""
    monkeypatch.setenv("ONNX_MLIR_PY_CACHE", str(tmp_path / "cache"))
    from onnx_mlir_py.inference.session import InferenceSession
    m = matmul_integer(64, 32, False, True, False)
    s = InferenceSession(m.SerializeToString())
    assert _uses_vnni(ExecutionSession(s.library_path)) == VNNI
    a = _feed((5, 64), False, 4)
    np.testing.assert_array_equal(s.run(None, {"a": a})[0], reference(m, {"a": a}, "onnxruntime")[0])


def test_inlined_kernel_ops_name_the_call_site():
    """The VNNI step inlines its kernels by moving their bodies (not MLIR's
    inliner over the whole model, #29) as the inliner did: no kernel
    function is left, the VNNI placeholder stays a function the kernels
    call (lower_dpbusd_calls' input), and every inlined op's location is
    ``callsite(... at the call's)``, which names the node (the allocation
    sites); both nodes' names, of two matmuls of one kernel shape."""
    from onnx_mlir_py.compiler import Options, import_onnx, lower
    from onnx_mlir_py.ir_util import loc_name, walk_ops
    from onnx_mlir_py.passes.optimize import optimize
    from onnx_mlir_py.passes.optimize.matmul_q8 import DPBUSD
    from onnx_mlir_py.target import target_for
    from onnx_mlir_py.timings import Timings
    rng = np.random.default_rng(2)
    g = h.make_graph([h.make_node("MatMulInteger", ["a", "B1"], ["c1"], name="mm_one"),
                      h.make_node("MatMulInteger", ["a", "B2"], ["c2"], name="mm_two")], "g",
                     [h.make_tensor_value_info("a", TP.UINT8, ["m", 64])],
                     [h.make_tensor_value_info("c1", TP.INT32, None),
                      h.make_tensor_value_info("c2", TP.INT32, None)],
                     initializer=[nh.from_array(rng.integers(-128, 128, (64, 32)).astype(np.int8), n)
                                  for n in ("B1", "B2")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    opts = Options(opt_level=3)
    mod = import_onnx(m, opts, Timings())
    with mod.context:
        lower(mod, opts, Timings())
        optimize(mod, target_for("znver4"), threads=False)     # VNNI, no AMX
        fns = {str(ir.StringAttr(f.operation.attributes["sym_name"]).value): f.operation
               for f in mod.body.operations if f.operation.name == "func.func"}
        assert not [n for n in fns if n.startswith("__om_q8_matmul_")]
        assert DPBUSD in fns
        main = [f for n, f in fns.items() if n != DPBUSD]
        calls = [o for f in main for o in walk_ops(f, "func.call")
                 if ir.FlatSymbolRefAttr(o.attributes["callee"]).value == DPBUSD]
        assert calls
        inlined = [o for f in main for o in walk_ops(f) if o.location.is_a_callsite()]
        assert len(inlined) > len(calls)
        assert {loc_name(o.location) for o in inlined} == {"mm_one", "mm_two"}
        assert {loc_name(c.location) for c in calls} == {"mm_one", "mm_two"}
