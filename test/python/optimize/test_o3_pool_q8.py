"""-O3 max pools on 8-bit tensors (passes/optimize/pool_q8.py): the MaxPool
that fuse-qdq-maxpool leaves on a QDQ model's 8-bit tensor (DequantizeLinear
-> MaxPool -> QuantizeLinear of one grid) runs the row kernel with 8-bit
ends instead of linalg's scalar loop nest.

The kernel's f32 maxima of widened bytes are exact, so every output must
equal onnxruntime's (the QDQ model; its optimized session) and our -O0
build bit for bit: uint8 (an ``arith.maxui`` generic) and int8 (the named
pool on i8), zero points at and away from the type's minimum, inputs over
the whole range and all at the minimum (the padding must not win), windows
with and without padding, strides, dilations, ceil_mode, a dynamic batch
run at 1 and 3 images, and a pool big enough for channel blocks at 2
threads."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnx_mlir_py
from onnx_mlir_py.isa import host_has
from onnx_mlir_py.passes.optimize import pool_q8
from onnx_mlir_py.runtime import ExecutionSession


AVX512 = host_has("avx512f")     # the byte kernel's 64-byte vectors (else the row kernel)


def _chain(dtype, zp, shape, kernel=(3, 3), strides=(2, 2), pads=(1, 1, 1, 1), **attrs):
    """x (8-bit) -> DequantizeLinear -> MaxPool -> QuantizeLinear (same scale and zero point)."""
    et = T.UINT8 if dtype == np.uint8 else T.INT8
    inits = [nh.from_array(np.array(0.05, np.float32), "s"), nh.from_array(np.array(zp, dtype), "z")]
    nodes = [h.make_node("DequantizeLinear", ["x", "s", "z"], ["xd"]),
             h.make_node("MaxPool", ["xd"], ["p"], kernel_shape=list(kernel),
                         strides=list(strides), pads=list(pads), **attrs),
             h.make_node("QuantizeLinear", ["p", "s", "z"], ["y"])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", et, shape)],
                     [h.make_tensor_value_info("y", et, None)], initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _inputs(dtype, shape, seed=5):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    return [rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype),
            np.full(shape, info.min, dtype)]


def _o3(tmp_path, m, monkeypatch, threads=1, byte=None):
    """The -O3 session, asserting the 8-bit pool kernel took the pool (and,
    with ``byte`` True / False, that the byte kernel did / did not)."""
    taken, blocks = [], []
    rewrite, byte_fn = pool_q8._rewrite, pool_q8.byte_pool_function

    def spy(op):
        found = rewrite(op)
        if found is not None:
            taken.append(found[0])
        return found

    def byte_spy(name, cv, init, nb):
        blocks.append(nb)
        return byte_fn(name, cv, init, nb)
    monkeypatch.setattr(pool_q8, "_rewrite", spy)
    monkeypatch.setattr(pool_q8, "byte_pool_function", byte_spy)
    so = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m3.so", opt_level=3),
                          num_threads=threads)
    assert len(taken) == 1, taken
    if byte is not None:
        assert bool(blocks) == byte, blocks
    return so, taken[0] if byte is None else (taken[0], blocks)


@pytest.mark.parametrize("dtype, zp, kw", [
    (np.uint8, 0, {}),                                       # ResNet's stem pool
    (np.uint8, 131, {}),
    (np.int8, -128, {}),
    (np.int8, 3, {}),
    (np.uint8, 7, dict(kernel=(2, 2), strides=(2, 2), pads=(0, 0, 0, 0))),   # no pad
    (np.int8, 0, dict(kernel=(3, 2), strides=(1, 2), pads=(1, 0, 2, 1), dilations=[2, 1])),
    (np.uint8, 9, dict(kernel=(3, 3), strides=(2, 2), pads=(0, 0, 0, 0), ceil_mode=1)),
])
def test_8bit_maxpool_bit_exact(tmp_path, monkeypatch, dtype, zp, kw):
    shape = [1, 8, 21, 20]       # odd and even sides: the last window ends in the padding or not
    m = _chain(dtype, zp, shape, **kw)
    s3, _ = _o3(tmp_path, m, monkeypatch)
    s0 = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m0.so", opt_level=0))
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for x in _inputs(dtype, shape):
        want = ref.run(None, {"x": x})[0]
        got, o0 = s3.run([x])[0], s0.run([x])[0]
        assert got.dtype == want.dtype and np.array_equal(got, want)
        assert np.array_equal(o0, want)


@pytest.mark.parametrize("dtype, zp, shape, kw, byte", [
    (np.uint8, 0, [1, 8, 21, 20], {}, True),
    (np.int8, 3, [1, 8, 21, 20], {}, True),
    (np.uint8, 5, [1, 8, 21, 20], dict(strides=(1, 1)), True),
    (np.int8, -7, [1, 8, 21, 20], dict(kernel=(3, 2), strides=(1, 2), pads=(1, 0, 2, 1)), True),
    (np.uint8, 9, [1, 8, 21, 20], dict(pads=(0, 0, 0, 0), ceil_mode=1), True),
    (np.uint8, 1, [1, 4, 9, 128], {}, True),           # a 64-byte output row, 128-byte reads
    (np.uint8, 2, [1, 4, 9, 64], dict(strides=(1, 1)), True),   # 64 in, 64 out: no mask
    (np.int8, 0, [1, 4, 9, 129], {}, False),          # the input row past one 128-byte read
    (np.uint8, 0, [1, 4, 9, 70], dict(strides=(1, 1)), False),  # 70 outputs: past one vector
    (np.uint8, 0, [2, 3, 12, 13], dict(kernel=(5, 5), strides=(2, 1), pads=(2, 2, 2, 2)), True),
])
def test_8bit_maxpool_byte_kernel(tmp_path, monkeypatch, dtype, zp, shape, kw, byte):
    """The byte kernel (maxima of bytes, rows clamped into the input, phases
    and column shifts by shuffles) where it fits, the row kernel where a row
    is wider than its vectors: both equal to onnxruntime and -O0."""
    m = _chain(dtype, zp, shape, **kw)
    s3, _ = _o3(tmp_path, m, monkeypatch, byte=byte and AVX512)
    s0 = ExecutionSession(onnx_mlir_py.compile(m, tmp_path / "m0.so", opt_level=0))
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    info = np.iinfo(dtype)
    rng = np.random.default_rng(11)
    sparse = np.where(rng.random(shape) < 0.05, rng.integers(info.min, info.max, shape),
                      info.min).astype(dtype)     # mostly the minimum: single maxima move
    for x in _inputs(dtype, shape) + [sparse, np.full(shape, info.max, dtype)]:
        want = ref.run(None, {"x": x})[0]
        assert np.array_equal(s3.run([x])[0], want)
        assert np.array_equal(s0.run([x])[0], want)


def test_kernel_plan_names_the_byte_kernel():
    """The kernel plan's line: rows of 64 bytes (byte maxima) for the stem
    pool's shape, the row kernel's f32 lanes for rows wider than a vector."""
    import io
    from contextlib import redirect_stdout
    from onnx_mlir_py.compiler import run_pipeline
    from onnx_mlir_py.options import Options
    tiles = []
    for w in (112, 140):
        plans = []
        with redirect_stdout(io.StringIO()):
            run_pipeline(_chain(np.uint8, 0, [1, 8, 12, w]), Options(emit="EmitLib", opt_level=3),
                         None, print_ir=True, on_plan=plans.append)
        (entry,) = [x for x in plans[0].entries if x.kernel == "pool_q8"]
        tiles.append((entry.tile, "byte maxima" in entry.reason))
    assert tiles[0] == ("rows of 64 bytes", True) if AVX512 else not tiles[0][1]
    assert tiles[1][0].endswith("lanes") and not tiles[1][1]


def test_8bit_maxpool_dynamic_batch(tmp_path, monkeypatch):
    m = _chain(np.uint8, 0, ["N", 8, 21, 20])
    s3, cv = _o3(tmp_path, m, monkeypatch)
    assert cv.xs[0] is None
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for n in (1, 3):
        for x in _inputs(np.uint8, [n, 8, 21, 20], seed=n):
            got = s3.run([x])[0]
            assert got.shape[0] == n and np.array_equal(got, ref.run(None, {"x": x})[0])


def test_8bit_maxpool_threads(tmp_path, monkeypatch):
    """ResNet's stem pool shape: channel blocks of an scf.forall on 2 threads."""
    shape = [1, 64, 112, 112]
    m = _chain(np.uint8, 0, shape)
    s3, (_, blocks) = _o3(tmp_path, m, monkeypatch, threads=2, byte=AVX512)
    assert not AVX512 or blocks[0] > 1
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    for x in _inputs(np.uint8, shape):
        assert np.array_equal(s3.run([x])[0], ref.run(None, {"x": x})[0])
