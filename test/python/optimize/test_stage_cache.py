"""The -O3 stage cache (passes/optimize/stage_cache.py, #29): the stage's
output reused for a model of the same structure with other weights.

What can go wrong, and what each test checks:
- a hit that keeps the first model's weights, or packs the new ones
  wrongly, gives wrong numbers: every hit runs against onnxruntime on its
  own weights, and its LLVM IR equals the cold compile's of the same model
  (at two run-time shapes when a dim is dynamic);
- a decision the stage took on the first weights' values (a weight all
  finite, a packed weight uniform) must not be taken for weights where it
  differs: the entry is not used, the stage runs;
- a damaged entry: one warning, the stage run, a good entry stored again;
- a read of a weight's bytes the cache cannot redo (the int8 packing, any
  unexplained read) must store nothing;
"""
from __future__ import annotations

import warnings

import numpy as np
import onnx.helper as h
import onnx.numpy_helper as nh
import pytest
from onnx import TensorProto as T

import onnx_mlir_py
from onnx_mlir_py.errors import CacheEntryWarning
from onnx_mlir_py.passes.optimize import stage_cache
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.testing.check import assert_match, reference


def _net(seed=0, batch=1, hw=12, edit=None, cin=8, c0=16):
    """Conv 3x3 (bias) + ReLU -> Conv 1x1 (bias) + ReLU -> global average pool
    -> Gemm (bias): the structure fixed, the weights from ``seed``;
    ``edit(name, array)`` may change a weight."""
    rng = np.random.default_rng(seed)
    w = {"w0": rng.standard_normal((c0, cin, 3, 3)) * 0.2, "b0": rng.standard_normal(c0),
         "w1": rng.standard_normal((32, c0, 1, 1)) * 0.2, "b1": rng.standard_normal(32),
         "wf": rng.standard_normal((24, 32)) * 0.2, "bf": rng.standard_normal(24)}
    w = {k: v.astype(np.float32) for k, v in w.items()}
    if edit is not None:
        for k in w:
            w[k] = edit(k, w[k])
    nodes = [h.make_node("Conv", ["x", "w0", "b0"], ["c0"], pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["c0"], ["r0"]),
             h.make_node("Conv", ["r0", "w1", "b1"], ["c1"]),
             h.make_node("Relu", ["c1"], ["r1"]),
             h.make_node("GlobalAveragePool", ["r1"], ["p"]),
             h.make_node("Flatten", ["p"], ["f"]),
             h.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1)]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, [batch, cin, hw, hw])],
                     [h.make_tensor_value_info("y", T.FLOAT, [batch, 24])],
                     [nh.from_array(v, k) for k, v in w.items()])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def _feeds(batch=1, hw=12, cin=8):
    return {"x": np.random.default_rng(7).standard_normal((batch, cin, hw, hw))
            .astype(np.float32)}


@pytest.fixture
def cache(tmp_path, monkeypatch):
    d = tmp_path / "o3"
    monkeypatch.setenv("ONNX_MLIR_PY_STAGE_CACHE", str(d))
    return d


def _compile(model, path, emit="EmitLib", **kw):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = onnx_mlir_py.compile(model, output=str(path), opt_level=3, emit=emit, **kw)
    return out, stage_cache.LAST, [x for x in w if issubclass(x.category, CacheEntryWarning)]


def _check(so, model, feeds):
    got = ExecutionSession(so).run(list(feeds.values()))
    assert_match(got, reference(model, feeds, "onnxruntime"), rtol=1e-4, atol=1e-4)
    return got


def _entries(d):
    return sorted(d.rglob("*.o3"))


def test_other_weights_take_the_entry(cache, tmp_path, monkeypatch):
    a, b = _net(0), _net(1)
    so_a, st, warns = _compile(a, tmp_path / "a.so")
    assert st.stored and not st.hit and not warns, vars(st)
    _check(so_a, a, _feeds())
    so_b, st, warns = _compile(b, tmp_path / "b.so")
    assert st.hit and not warns, vars(st)
    got = _check(so_b, b, _feeds())
    # and the code is the cold compile's: LLVM IR of b via the entry vs b alone
    ll_hit, st, _ = _compile(b, tmp_path / "b_hit.ll", "EmitLLVMIR")
    assert st.hit
    monkeypatch.setenv("ONNX_MLIR_PY_STAGE_CACHE", str(tmp_path / "fresh"))
    ll_cold, st, _ = _compile(b, tmp_path / "b_cold.ll", "EmitLLVMIR")
    assert not st.hit and st.stored
    assert open(ll_hit).read() == open(ll_cold).read()
    so_cold, _, _ = _compile(b, tmp_path / "b_cold.so")
    np.testing.assert_array_equal(got[0], ExecutionSession(so_cold).run(
        list(_feeds().values()))[0])


def test_dynamic_batch_at_two_shapes(cache, tmp_path):
    a, b = _net(0, batch="N"), _net(2, batch="N")
    _compile(a, tmp_path / "a.so")
    so, st, _ = _compile(b, tmp_path / "b.so")
    assert st.hit, vars(st)
    for n in (1, 3):
        _check(so, b, _feeds(n))


def test_a_test_that_differs_runs_the_stage(cache, tmp_path):
    """The direct conv skips the zero pad's taps only for finite weights
    (conv_direct.finite_constant): an inf in the second model's weights
    must not take the first's entry. (A 3x3 conv of 32 channels at 14x14
    is a direct conv for znver4's plan: the CPU is named so that the plan
    is the same on any build machine.)"""
    import json
    a = _net(0, hw=14, cin=32, c0=32)
    _compile(a, tmp_path / "a.so", mcpu="znver4")
    entry = _entries(cache)[0].read_bytes()
    events = json.loads(entry[:entry.index(b"\0")])["events"]
    assert any(e.get("test") == "finite" for e in events), events

    def inf(name, v):
        if name.startswith("w"):
            v = v.copy()
            v.flat[3] = np.inf
        return v
    b = _net(1, hw=14, cin=32, c0=32, edit=inf)
    so, st, _ = _compile(b, tmp_path / "b.so", mcpu="znver4")
    assert not st.hit and st.miss and "finite" in st.miss, vars(st)
    _check(so, b, _feeds(hw=14, cin=32))
    _, st, _ = _compile(_net(2, hw=14, cin=32, c0=32), tmp_path / "c.so", mcpu="znver4")
    assert st.hit, vars(st)


def test_a_uniform_packed_weight_runs_the_stage(cache, tmp_path, monkeypatch):
    """A packed weight that is uniform for the new weights would be a splat
    (packs._folded_attr), not the recorded resource. (A uniform initializer
    is a splat from the import on, so a model of one has another key; a
    slice of a weight can still be uniform: simulated here.)"""
    from onnx_mlir_py.passes.optimize import packs
    _compile(_net(0), tmp_path / "a.so")
    b = _net(1)
    monkeypatch.setattr(packs, "_uniform", lambda y: True)
    so, st, _ = _compile(b, tmp_path / "b.so")
    assert not st.hit and st.miss and "uniform" in st.miss, vars(st)
    monkeypatch.undo()
    _check(so, b, _feeds())
    b2 = _net(1, edit=lambda n, v: np.full_like(v, 0.25) if n in ("w0", "w1", "wf") else v)
    so, st, _ = _compile(b2, tmp_path / "b2.so")
    assert not st.hit, vars(st)
    _check(so, b2, _feeds())


def test_damaged_entry(cache, tmp_path):
    a = _net(0)
    _compile(a, tmp_path / "a.so")
    (path,) = _entries(cache)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    so, st, warns = _compile(_net(1), tmp_path / "b.so")
    assert not st.hit and len(warns) == 1 and "o3" in str(warns[0].message), \
        [str(w.message) for w in warns]
    _check(so, _net(1), _feeds())
    assert st.stored and _entries(cache) == [path]
    _, st, warns = _compile(_net(2), tmp_path / "c.so")
    assert st.hit and not warns


def test_quantized_model_is_not_stored(cache, tmp_path):
    """An int8 weight: its packing for the int8 kernels reads the bytes in
    ways the cache does not record."""
    rng = np.random.default_rng(0)
    b = nh.from_array(rng.integers(-128, 128, (64, 48)).astype(np.int8), "B")
    g = h.make_graph([h.make_node("MatMulInteger", ["a", "B"], ["c"])], "g",
                     [h.make_tensor_value_info("a", T.UINT8, [8, 64])],
                     [h.make_tensor_value_info("c", T.INT32, [8, 48])], [b])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    so, st, _ = _compile(m, tmp_path / "q.so")
    assert not st.stored and st.refused == "a quantized model", vars(st)
    assert _entries(cache) == []
    _check(so, m, {"a": rng.integers(0, 256, (8, 64)).astype(np.uint8)})


def test_an_unexplained_read_refuses(tmp_path):
    """Any read of a weight's bytes that does not say what it is for (a new
    pass reading weights) stores nothing."""
    import mlir.ir as ir

    from onnx_mlir_py.ir_resources import resource_attr, resource_blobs
    from onnx_mlir_py.passes.optimize.packs import _const_value
    from onnx_mlir_py.passes.optimize.value_reads import Recorder, recording
    with ir.Context(), ir.Location.unknown():
        t = ir.RankedTensorType.get([64], ir.F32Type.get())
        arr = np.arange(64, dtype=np.float32)
        m = ir.Module.create()
        with ir.InsertionPoint(m.body):
            op = ir.Operation.create("arith.constant", results=[t],
                                     attributes={"value": resource_attr(arr, "w", t)})
        from onnx_mlir_py.ir_resources import resource_name
        name = resource_name(op.attributes["value"])
        for read in (lambda: _const_value(op, {}), lambda: resource_blobs([op])):
            rec = Recorder({name: 0})
            with recording(rec):
                read()
            assert rec.refused and "reads" in rec.refused, rec.refused
        rec = Recorder({name: 0})
        with recording(rec):
            np.testing.assert_array_equal(_const_value(op, {}, purpose="fold"), arr)
        assert rec.refused is None
