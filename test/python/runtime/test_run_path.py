"""ExecutionSession.run's lean path (omRunInto: one library call per run for
outputs of static shape, the call's constant arrays made once per session;
omRunPlan for inputs of the signature's static shapes: those arrays in one
record, the addresses in one array)
against onnxruntime: static and dynamic inputs (several run-time shapes),
inputs numpy must copy or that are read-only, several outputs of different
dtypes, outputs fresh per call (never aliased), 1 and 2 threads equal,
concurrent runs on one session, and the errors: a bad input, a failed
run-time check of the model code, an output that is not what the caller
expects (omRunInto refuses it)."""
from __future__ import annotations

import ctypes
import threading

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.runtime.errors import RuntimeInputError

RNG = np.random.default_rng(7)


def _model(nodes, inputs, outputs, inits=()):
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def _cnn():
    """Conv, Relu, MaxPool, MatMul: a small static CNN; two outputs (the
    logits and their ArgMax, int64)."""
    w = nh.from_array(RNG.standard_normal((8, 1, 3, 3)).astype(np.float32), "w")
    fc = nh.from_array(RNG.standard_normal((8 * 7 * 7, 10)).astype(np.float32) * 0.1, "fc")
    shp = nh.from_array(np.array([1, -1], np.int64), "shp")
    return _model([h.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                   h.make_node("Relu", ["c"], ["r"]),
                   h.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
                   h.make_node("Reshape", ["p", "shp"], ["f"]),
                   h.make_node("MatMul", ["f", "fc"], ["y"]),
                   h.make_node("ArgMax", ["y"], ["k"], axis=1, keepdims=0)],
                  [h.make_tensor_value_info("x", T.FLOAT, [1, 1, 14, 14])],
                  [h.make_tensor_value_info("y", T.FLOAT, [1, 10]),
                   h.make_tensor_value_info("k", T.INT64, [1])], [w, fc, shp])


def _dyn_in():
    """A dynamic input, outputs of static shape: a column mean and a bool."""
    return _model([h.make_node("ReduceMean", ["x"], ["m"], axes=[0], keepdims=0),
                   h.make_node("Greater", ["m", "z"], ["g"])],
                  [h.make_tensor_value_info("x", T.FLOAT, ["n", 6])],
                  [h.make_tensor_value_info("m", T.FLOAT, [6]),
                   h.make_tensor_value_info("g", T.BOOL, [6])],
                  [nh.from_array(np.zeros(6, np.float32), "z")])


def _dyn_out():
    """Outputs of dynamic shape: the per-call path (omRunArrays)."""
    return _model([h.make_node("Relu", ["x"], ["y"])],
                  [h.make_tensor_value_info("x", T.FLOAT, [2, "n"])],
                  [h.make_tensor_value_info("y", T.FLOAT, [2, "n"])])


def _reshape_check():
    """Reshape of a dynamic input to [-1, 4]: an element count not a multiple
    of 4 fails the model's run-time check."""
    return _model([h.make_node("Reshape", ["x", "s"], ["y"])],
                  [h.make_tensor_value_info("x", T.FLOAT, ["n"])],
                  [h.make_tensor_value_info("y", T.FLOAT, [2, 4])],
                  [nh.from_array(np.array([2, 4], np.int64), "s")])


def _matmul():
    """A matmul big enough for -O3 to split over the thread pool."""
    b = nh.from_array(RNG.standard_normal((256, 256)).astype(np.float32), "b")
    return _model([h.make_node("MatMul", ["a", "b"], ["y"])],
                  [h.make_tensor_value_info("a", T.FLOAT, [256, 256])],
                  [h.make_tensor_value_info("y", T.FLOAT, [256, 256])], [b])


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    d = tmp_path_factory.mktemp("run_path")
    out = {}
    for name, fn, opt in (("cnn3", _cnn, 3), ("cnn0", _cnn, 0), ("dyn_in", _dyn_in, 3),
                          ("dyn_out", _dyn_out, 3), ("reshape", _reshape_check, 0),
                          ("matmul", _matmul, 3)):
        m = fn()
        out[name] = (str(onnx_mlir_py.compile(m, d / f"{name}.so", opt_level=opt)),
                     ort.InferenceSession(m.SerializeToString(),
                                          providers=["CPUExecutionProvider"]))
    return out


def _same(ours, ref, exact=False):
    assert len(ours) == len(ref)
    for a, b in zip(ours, ref):
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
        if exact or a.dtype.kind in "biu":
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.quick
@pytest.mark.parametrize("name", ["cnn3", "cnn0"])
def test_static_model_lean_and_fresh_outputs(libs, name):
    so, ref = libs[name]
    s = ExecutionSession(so)
    assert s._lean is not None               # the library has omRunInto
    x = RNG.standard_normal((1, 1, 14, 14)).astype(np.float32)
    o1 = s.run([x])
    _same(o1, ref.run(None, {"x": x}))
    keep = [a.copy() for a in o1]
    x2 = RNG.standard_normal((1, 1, 14, 14)).astype(np.float32)
    o2 = s.run([x2])
    _same(o2, ref.run(None, {"x": x2}))
    for a, b, k in zip(o1, o2, keep):        # not aliased between calls
        assert not np.shares_memory(a, b)
        assert a.flags.owndata and a.flags.writeable and a.flags.c_contiguous
        np.testing.assert_array_equal(a, k)  # the second run left the first's outputs alone
        a[...] = 0
    _same(o2, ref.run(None, {"x": x2}))      # writing the first's outputs left the second's alone


@pytest.mark.quick
def test_inputs_numpy_must_copy_or_read_only(libs):
    so, ref = libs["cnn3"]
    s = ExecutionSession(so)
    base = RNG.standard_normal((1, 1, 14, 28)).astype(np.float32)
    want = ref.run(None, {"x": np.ascontiguousarray(base[..., ::2])})
    ro = np.frombuffer(np.ascontiguousarray(base[..., ::2]).tobytes(), np.float32)
    ro = ro.reshape(1, 1, 14, 14)
    assert not ro.flags.writeable
    odd = np.lib.stride_tricks.as_strided(np.ascontiguousarray(base[..., ::2]),
                                          strides=(7, 3, 56, 4))   # odd strides on dims of 1
    assert odd.flags.c_contiguous
    for x in (base[..., ::2], np.asfortranarray(base[..., ::2]), ro, odd):
        _same(s.run([x]), want)
    _same(s.run((base[..., ::2].copy(),)), want)                  # a tuple


def test_dynamic_input_static_outputs(libs):
    so, ref = libs["dyn_in"]
    s = ExecutionSession(so)
    assert s._lean is not None
    for n in (1, 3, 17, 64):
        x = RNG.standard_normal((n, 6)).astype(np.float32)
        _same(s.run([x]), ref.run(None, {"x": x}))


def test_dynamic_outputs_take_the_per_call_path(libs):
    so, ref = libs["dyn_out"]
    s = ExecutionSession(so)
    assert s._lean is None
    for n in (0, 1, 5, 33):
        x = RNG.standard_normal((2, n)).astype(np.float32)
        o = s.run([x])
        _same(o, ref.run(None, {"x": x}), exact=True)
        assert o[0].flags.owndata


def test_errors(libs):
    s = ExecutionSession(libs["cnn3"][0])
    with pytest.raises(RuntimeInputError, match="expected dtype float32"):
        s.run([np.zeros((1, 1, 14, 14), np.float64)])
    with pytest.raises(RuntimeInputError, match="dimension 2: expected 14, got 13"):
        s.run([np.zeros((1, 1, 13, 14), np.float32)])
    so, ref = libs["reshape"]
    r = ExecutionSession(so)
    assert r._lean is not None
    with pytest.raises(RuntimeInputError):                    # the model's own check
        r.run([np.zeros(7, np.float32)])
    x = np.arange(8, dtype=np.float32)
    _same(r.run([x]), ref.run(None, {"x": x}), exact=True)   # and the session still works


def test_run_into_refuses_an_unexpected_output(libs):
    """omRunInto checks each output's dtype, rank and dims against what the
    caller says before copying: -1 and a message, never a write past the
    caller's buffer."""
    from onnx_mlir_py.runtime.session import _metadata
    s = ExecutionSession(libs["cnn3"][0])
    fn, entry, m, PtrM, o_ranks, o_shapes, o_codes, _ = s._lean
    x = RNG.standard_normal((1, 1, 14, 14)).astype(np.float32)
    n, ranks, shapes, codes, PtrN = _metadata([x])
    bufs = [np.empty(64, np.float64), np.empty(64, np.float64)]
    ptrs = PtrM(*[b.ctypes.data for b in bufs])
    I64, I32 = ctypes.c_int64, ctypes.c_int32
    for bad_shapes, bad_codes in (((I64 * 3)(1, 11, 1), o_codes),   # dims
                                  (o_shapes, (I32 * 2)(11, 7)),      # dtype
                                  ):
        rc = fn(entry, n, PtrN(x.ctypes.data), ranks, shapes, codes, m, ptrs, o_ranks,
                bad_shapes, bad_codes)
        assert rc == -1
        assert "not of the expected type and shape" in s._error()
    rc = fn(entry, n, PtrN(x.ctypes.data), ranks, shapes, codes, I64(1), ptrs, o_ranks,
            o_shapes, o_codes)
    assert rc == -1 and "returned 2 outputs, expected 1" in s._error()
    _same(s.run([x]), libs["cnn3"][1].run(None, {"x": x}))


def test_static_inputs_take_one_plan_call(libs, monkeypatch):
    """Arrays of the signature's dtype, static shape and C strides go
    straight to omRunPlan (no other check); an array numpy must copy gets
    the full check first, then the same call."""
    s = ExecutionSession(libs["cnn3"][0])
    assert s._plan is not None
    calls = []
    run_plan = s._run_plan
    monkeypatch.setattr(s, "_run_plan", lambda xs: calls.append(1) or run_plan(xs))
    base = RNG.standard_normal((1, 1, 14, 28)).astype(np.float32)
    for x in (np.ascontiguousarray(base[..., ::2]), base[..., ::2]):
        _same(s.run([x]), libs["cnn3"][1].run(None, {"x": np.ascontiguousarray(x)}))
    assert len(calls) == 2
    assert ExecutionSession(libs["dyn_in"][0])._plan is None    # a dynamic input dim


def test_run_plan_refuses_an_unexpected_output(libs):
    """omRunPlan is omRunInto's check: a record whose output dims are not the
    model's is -1 and a message, never a write past the caller's buffer; a
    NULL record or address array is refused."""
    from onnx_mlir_py.runtime.session import _RunPlan
    s = ExecutionSession(libs["cnn3"][0])
    fn, plan, Ptrs, _, rec = s._plan
    x = RNG.standard_normal((1, 1, 14, 14)).astype(np.float32)
    bufs = [np.empty(64, np.float64), np.empty(64, np.float64)]
    ptrs = Ptrs(x.ctypes.data, *[b.ctypes.data for b in bufs])
    bad = _RunPlan(rec.entry, rec.n, rec.ranks, rec.shapes, rec.dtypes, rec.m, rec.out_ranks,
                   (ctypes.c_int64 * 3)(1, 11, 1), rec.out_dtypes)
    assert fn(ctypes.byref(bad), ptrs) == -1
    assert "not of the expected type and shape" in s._error()
    for args in ((None, ptrs), (plan, None)):
        assert fn(*args) == -1 and "NULL plan" in s._error()
    assert fn(plan, ptrs) == 0
    _same([np.frombuffer(bufs[0], np.float32, 10).reshape(1, 10),
           np.frombuffer(bufs[1], np.int64, 1)], libs["cnn3"][1].run(None, {"x": x}))


def test_library_checks_when_the_python_check_is_bypassed(libs, monkeypatch):
    """Arrays that are not what the signature says reach omRunInto with
    their own count, ranks, dims and codes (not the session's), so the
    library refuses them: a regression, the lean path had passed the
    signature's dims for a smaller array."""
    from onnx_mlir_py.runtime.errors import ModelRunError
    s = ExecutionSession(libs["cnn3"][0])
    monkeypatch.setattr(s, "_check", lambda xs: xs)
    for bad, msg in (([np.zeros((1, 1, 13, 14), np.float32)], r"dimension 2: expected shape"),
                     ([np.zeros((1, 1, 14, 14), np.float64)], "expected element type 1, got 11"),
                     ([np.zeros((1, 14, 14), np.float32)], "expected rank 4, got 3"),
                     ([], r"expected 1 input\(s\), got 0")):
        with pytest.raises(ModelRunError, match=msg):
            s.run(bad)
    x = RNG.standard_normal((1, 1, 14, 14)).astype(np.float32)
    _same(s.run([x]), libs["cnn3"][1].run(None, {"x": x}))


def test_threads_1_and_2_equal(libs):
    so, ref = libs["matmul"]
    s = ExecutionSession(so)
    assert s.multithreaded
    tasks = s._lib.omGetPoolTaskCount
    tasks.restype = ctypes.c_int64
    a = RNG.standard_normal((256, 256)).astype(np.float32)
    s.set_num_threads(1)
    one = s.run([a])
    s.set_num_threads(2)
    t0 = tasks()
    two = s.run([a])
    assert tasks() > t0                     # the matmul was split over the pool
    _same(one, two, exact=True)
    _same(two, ref.run(None, {"a": a}))


@pytest.mark.parametrize("name", ["dyn_in", "cnn3"])
def test_concurrent_runs_on_one_session(libs, name):
    so, ref = libs[name]
    s = ExecutionSession(so)
    xs = [RNG.standard_normal((n, 6) if name == "dyn_in" else (1, 1, 14, 14))
          .astype(np.float32) for n in (2, 5, 9, 30)]
    want = [s.run([x]) for x in xs]         # each thread's runs: the same bits
    for x, w in zip(xs, want):
        _same(w, ref.run(None, {"x": x}))
    errors = []

    def work(k):
        try:
            for _ in range(200):
                _same(s.run([xs[k]]), want[k], exact=True)
        except Exception as e:       # noqa: BLE001 - reported below
            errors.append(e)
    ts = [threading.Thread(target=work, args=(k,)) for k in range(len(xs))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors[0]


def test_inference_session_feed_fast_path(tmp_path):
    """InferenceSession.run's common case (a dict of exactly the inputs,
    arrays of their dtype and static shape) skips the per-input checks; any
    other feed still gets them (and their onnxruntime-style errors)."""
    from onnx_mlir_py.inference import InvalidArgument
    from onnx_mlir_py.inference.ort_value import OrtValue
    m = _cnn()
    s = onnx_mlir_py.InferenceSession(m.SerializeToString(), cache_dir=str(tmp_path))
    assert s._feed_fast is not None
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    x = RNG.standard_normal((1, 1, 14, 28)).astype(np.float32)
    c = np.ascontiguousarray(x[..., ::2])
    want = ref.run(None, {"x": c})
    for feed in ({"x": c}, {"x": x[..., ::2]}, {"x": c.tolist()},
                 {"x": OrtValue.ortvalue_from_numpy(c)}):
        _same(s.run(None, feed), want)
    _same(s.run(["k"], {"x": c}), want[1:])
    with pytest.raises(InvalidArgument, match=r"Required inputs \(\['x'\]\) are missing"):
        s.run(None, {"y": c})
    with pytest.raises(InvalidArgument, match="Invalid input name: y"):
        s.run(None, {"x": c, "y": c})
    with pytest.raises(InvalidArgument, match="Unexpected input data type"):
        s.run(None, {"x": c.astype(np.float64)})
    with pytest.raises(InvalidArgument, match="Got invalid dimensions"):
        s.run(None, {"x": np.zeros((1, 1, 14, 13), np.float32)})


@pytest.mark.parametrize("opt", [0, 3])
def test_outputs_of_every_numeric_type(tmp_path, opt):
    """omRunInto checks each output's type code against the signature's:
    Casts to 12 numeric types (bfloat16 too) come back as onnx.reference
    computes them, none refused."""
    from onnx.reference import ReferenceEvaluator
    types = [T.UINT8, T.INT8, T.INT16, T.UINT16, T.INT32, T.UINT32, T.INT64, T.UINT64,
             T.FLOAT16, T.DOUBLE, T.BOOL, T.BFLOAT16]
    m = _model([h.make_node("Cast", ["x"], [f"y{t}"], to=t) for t in types],
               [h.make_tensor_value_info("x", T.FLOAT, [2, 3])],
               [h.make_tensor_value_info(f"y{t}", t, [2, 3]) for t in types])
    s = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "casts.so", opt_level=opt))
    assert s._lean is not None
    x = np.array([[0, 1.5, 2.7], [3, 100.2, 7]], np.float32)
    for a, b in zip(s.run([x]), ReferenceEvaluator(m).run(None, {"x": x})):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a.astype(np.float64), b.astype(np.float64))


def test_large_dynamic_outputs_are_adopted_not_copied(libs):
    """An output of dynamic shape of at least ADOPT_MIN_BYTES is the
    library's own buffer, taken over (omTensorListRelease) and freed with the
    last array over it: values as onnxruntime's, writable, fresh per run,
    alive after its session and the parent array are gone; a smaller one is
    copied into an array of its own."""
    import gc

    from onnx_mlir_py.runtime.session import ADOPT_MIN_BYTES, _Adopted
    so, ref = libs["dyn_out"]
    s = ExecutionSession(so)
    edge = ADOPT_MIN_BYTES // 8                 # [2, edge] float32: exactly the bound
    for n, adopted in ((edge - 1, False), (edge, True), (3 * edge + 5, True)):
        x = RNG.standard_normal((2, n)).astype(np.float32)
        o1, o2 = s.run([x])[0], s.run([-x])[0]
        _same([o1], ref.run(None, {"x": x}), exact=True)
        _same([o2], ref.run(None, {"x": -x}), exact=True)
        assert isinstance(o1.base, _Adopted) == adopted and o1.flags.owndata != adopted
        assert o1.flags.writeable and o1.flags.c_contiguous
        assert not np.shares_memory(o1, o2)
        o1[...] = 7
        _same([o2], ref.run(None, {"x": -x}), exact=True)
    view = s.run([x])[0][1, ::2]
    del s
    gc.collect()
    np.testing.assert_array_equal(view, ref.run(None, {"x": x})[0][1, ::2])
