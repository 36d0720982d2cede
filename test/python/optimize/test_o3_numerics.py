"""-O3 numerics: models compiled through ``onnx_mlir_py.compile(opt_level=3)``
(packed matmul kernel, im2col convs, vectorized elementwise code) and run
with ``ExecutionSession``, compared with ``onnx.reference.ReferenceEvaluator``.

Compiling at -O3 costs seconds (opt/llc on the unrolled kernels), so each
test builds one model holding many independent cases, one output each."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession

R = np.random.default_rng(7)
N = h.make_node


def rand(*shape):
    return R.standard_normal(shape).astype(np.float32)


class Cases:
    """Accumulates independent subgraphs (inputs, weights, nodes, outputs)."""

    def __init__(self):
        self.nodes, self.inputs, self.inits, self.outputs, self.feeds = [], [], [], [], {}

    def input(self, name, shape, value=None):
        self.inputs.append(h.make_tensor_value_info(name, T.FLOAT, shape))
        if value is not None:
            self.feeds[name] = value

    def weight(self, name, value):
        self.inits.append(nh.from_array(value, name))

    def conv(self, i, bias, relu, **attrs):
        """Output ``y<i>``: Conv(``x<i>``, ``w<i>``[, ``b<i>``]) with ``attrs``,
        then a Relu when ``relu``."""
        out = f"y{i}"
        self.nodes.append(N("Conv", [f"x{i}", f"w{i}"] + ([f"b{i}"] if bias else []),
                            [out + "_c" if relu else out], **attrs))
        if relu:
            self.nodes.append(N("Relu", [out + "_c"], [out]))
        self.outputs.append(out)

    def model(self):
        g = h.make_graph(self.nodes, "g", self.inputs,
                         [h.make_tensor_value_info(o, T.FLOAT, None) for o in self.outputs],
                         self.inits)
        return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def compile_o3(tmp_path, m):
    return ExecutionSession(onnx_mlir_py.compile(m, output=tmp_path / "m.so", opt_level=3))


def compile_with_ort(tmp_path, m, stem="m"):
    """``m`` saved as ``<stem>.onnx`` and compiled at -O3: (the library's
    path, an onnxruntime session on the same file)."""
    import onnx
    import onnxruntime as ort
    path = tmp_path / f"{stem}.onnx"
    onnx.save(m, path)
    so = onnx_mlir_py.compile(str(path), output=tmp_path / f"{stem}.so", opt_level=3)
    return so, ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])


def pool_task_count(so):
    """The library's ``omGetPoolTaskCount`` (tasks its thread pool has run)."""
    import ctypes
    tasks = ctypes.CDLL(str(so)).omGetPoolTaskCount
    tasks.restype = ctypes.c_int64
    return tasks


def check(tmp_path, c: Cases, rtol=1e-4, atol=1e-4):
    m = c.model()
    sess = compile_o3(tmp_path, m)
    feeds = [c.feeds[s.name] for s in sess.input_specs]
    got = sess.run(feeds)
    want = ReferenceEvaluator(m).run(None, c.feeds)
    for name, g, w in zip(c.outputs, got, want):
        assert g.shape == w.shape, name
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=name)


def test_matmul_family(tmp_path):
    c = Cases()
    for i, (m, k, n) in enumerate([(16, 32, 64), (5, 13, 7), (33, 65, 17), (1, 100, 300)]):
        c.input(f"a{i}", [m, k], rand(m, k))
        c.input(f"b{i}", [k, n], rand(k, n))
        c.nodes.append(N("MatMul", [f"a{i}", f"b{i}"], [f"mm{i}"]))
        c.outputs.append(f"mm{i}")
    # constant weights (packed at compile time, dense_resource initializer)
    c.input("x", [24, 40], rand(24, 40))
    c.weight("w", rand(40, 70))
    c.nodes.append(N("MatMul", ["x", "w"], ["const_w"]))
    # batch matmul, equal batches (kernel) and broadcast batches (generic)
    c.input("ba", [3, 9, 20], rand(3, 9, 20))
    c.input("bb", [3, 20, 33], rand(3, 20, 33))
    c.nodes.append(N("MatMul", ["ba", "bb"], ["batch"]))
    c.input("ca", [2, 1, 4, 5], rand(2, 1, 4, 5))
    c.input("cb", [3, 5, 6], rand(3, 5, 6))
    c.nodes.append(N("MatMul", ["ca", "cb"], ["bcast"]))
    # N-D x 2-D
    c.input("nd", [2, 7, 40], rand(2, 7, 40))
    c.nodes.append(N("MatMul", ["nd", "w"], ["nd_2d"]))
    # Gemm transB, alpha/beta, bias + ReLU epilogue
    c.input("g", [10, 30], rand(10, 30))
    c.weight("gw", rand(50, 30))
    c.weight("gc", rand(50))
    c.nodes += [N("Gemm", ["g", "gw", "gc"], ["gemm_raw"], transB=1, alpha=0.5, beta=2.0),
                N("Relu", ["gemm_raw"], ["gemm"])]
    c.outputs += ["const_w", "batch", "bcast", "nd_2d", "gemm"]
    check(tmp_path, c)


def test_matmul_small_m(tmp_path):
    """M below the 8-row block: an M x (more columns) register tile
    (matmul.small_m_tile), with B computed or constant (packed at compile
    time), N below, at and above the widened tile; and a batch matmul."""
    c = Cases()
    for m in range(1, 8):
        for j, (k, n) in enumerate([(9, 5), (40, 37), (64, 300)]):
            c.input(f"sa{m}_{j}", [m, k], rand(m, k))
            c.input(f"sb{m}_{j}", [k, n], rand(k, n))
            c.weight(f"sw{m}_{j}", rand(k, n))
            c.nodes += [N("MatMul", [f"sa{m}_{j}", f"sb{m}_{j}"], [f"s{m}_{j}"]),
                        N("MatMul", [f"sa{m}_{j}", f"sw{m}_{j}"], [f"sc{m}_{j}"])]
            c.outputs += [f"s{m}_{j}", f"sc{m}_{j}"]
    c.input("sba", [3, 2, 20], rand(3, 2, 20))
    c.input("sbb", [3, 20, 70], rand(3, 20, 70))
    c.nodes.append(N("MatMul", ["sba", "sbb"], ["sbatch"]))
    c.outputs.append("sbatch")
    check(tmp_path, c)


CONVS = [
    ((1, 8, 12, 12), (16, 8, 3, 3), dict(pads=[1, 1, 1, 1])),
    ((2, 8, 11, 13), (6, 8, 3, 3), dict(pads=[1, 0, 2, 1], strides=[2, 1])),
    ((1, 8, 11, 13), (6, 4, 3, 3), dict(group=2, dilations=[2, 1])),
    ((3, 6, 7, 7), (6, 1, 3, 3), dict(group=6, pads=[1, 1, 1, 1])),      # depthwise
    ((1, 16, 9, 9), (32, 16, 1, 1), dict()),
    ((1, 16, 9, 9), (32, 16, 1, 1), dict(strides=[2, 2])),
    ((1, 3, 15, 15), (8, 3, 7, 7), dict(strides=[2, 2], pads=[3, 3, 3, 3])),
    ((1, 4, 9, 9), (4, 4, 3, 3), dict(auto_pad="SAME_UPPER", strides=[2, 2])),
]


def test_conv_family(tmp_path):
    c = Cases()
    for i, (xs, ws, attrs) in enumerate(CONVS):
        c.input(f"x{i}", list(xs), rand(*xs))
        c.weight(f"w{i}", rand(*ws) * 0.2)
        c.weight(f"b{i}", rand(ws[0]))
        c.nodes.append(N("Conv", [f"x{i}", f"w{i}", f"b{i}"], [f"conv{i}"], **attrs))
        c.outputs.append(f"conv{i}")
    check(tmp_path, c)


def test_fused_epilogues_and_elementwise(tmp_path):
    c = Cases()
    # conv + bias -> ReLU -> residual Add -> Clip (elementwise consumers of the kernel)
    c.input("x", [1, 8, 10, 10], rand(1, 8, 10, 10))
    c.weight("w", rand(8, 8, 3, 3) * 0.2)
    c.weight("b", rand(8))
    c.weight("lo", np.array(-0.5, np.float32))
    c.weight("hi", np.array(1.5, np.float32))
    c.nodes += [N("Conv", ["x", "w", "b"], ["cv"], pads=[1, 1, 1, 1]), N("Relu", ["cv"], ["r"]),
                N("Add", ["r", "x"], ["s"]), N("Clip", ["s", "lo", "hi"], ["epilogue"])]
    # softmax and a row reduction (vectorized reductions), long rows (masked tails)
    c.input("sm", [6, 300], rand(6, 300))
    c.nodes.append(N("Softmax", ["sm"], ["softmax"], axis=-1))
    c.inits.append(nh.from_array(np.array([1], np.int64), "ax"))
    c.nodes.append(N("ReduceSum", ["sm", "ax"], ["rsum"], keepdims=0))
    c.input("t", [3, 1000], rand(3, 1000))
    c.input("u", [1000], rand(1000))
    c.nodes += [N("Tanh", ["t"], ["th"]), N("Mul", ["th", "u"], ["long_rows"])]
    c.outputs += ["epilogue", "softmax", "rsum", "long_rows"]
    check(tmp_path, c)


def test_dynamic_batch(tmp_path):
    """Dynamic batch: the upstream block-packing path for the matmul, and the
    conv left to loops; several batch sizes through one library."""
    c = Cases()
    c.input("a", ["N", 24])
    c.weight("mw", rand(24, 40))
    c.input("x", ["N", 4, 8, 8])
    c.weight("cw", rand(8, 4, 3, 3))
    c.nodes += [N("MatMul", ["a", "mw"], ["mm"]), N("Conv", ["x", "cw"], ["cv"], pads=[1, 1, 1, 1])]
    c.outputs += ["mm", "cv"]
    m = c.model()
    sess = compile_o3(tmp_path, m)
    ref = ReferenceEvaluator(m)
    for n in (1, 5, 17):
        feeds = {"a": rand(n, 24), "x": rand(n, 4, 8, 8)}
        for g, w in zip(sess.run([feeds["a"], feeds["x"]]), ref.run(None, feeds)):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.quick
def test_o0_and_o3_agree(tmp_path, level):
    """The same small MLP at -O0 (plain loops) and -O3 matches the reference."""
    c = Cases()
    c.input("x", [4, 64], rand(4, 64))
    c.weight("w1", rand(64, 48))
    c.weight("w2", rand(48, 10))
    c.nodes += [N("MatMul", ["x", "w1"], ["h"]), N("Relu", ["h"], ["hr"]),
                N("MatMul", ["hr", "w2"], ["y"])]
    c.outputs.append("y")
    m = c.model()
    sess = ExecutionSession(onnx_mlir_py.compile(m, output=tmp_path / "m.so", opt_level=level))
    np.testing.assert_allclose(sess.run([c.feeds["x"]])[0],
                               ReferenceEvaluator(m).run(None, c.feeds)[0], rtol=1e-4, atol=1e-4)


def test_threads(tmp_path):
    """-O3 kernels are multi-threaded (scf.forall -> async runtime in the .so);
    the thread count is set at run time and does not change the results."""
    c = Cases()
    c.input("a", [192, 128], rand(192, 128))     # >= 2^21 multiply-adds: threaded
    c.weight("w", rand(128, 96))
    c.input("x", [2, 8, 12, 12], rand(2, 8, 12, 12))
    c.weight("cw", rand(16, 8, 3, 3))
    c.nodes += [N("MatMul", ["a", "w"], ["mm"]), N("Conv", ["x", "cw"], ["cv"], pads=[1, 1, 1, 1])]
    c.outputs += ["mm", "cv"]
    m = c.model()
    so = onnx_mlir_py.compile(m, output=tmp_path / "m.so", opt_level=3)
    want = ReferenceEvaluator(m).run(None, c.feeds)
    sess = ExecutionSession(so, num_threads=2)
    assert sess.multithreaded and sess.num_threads == 2
    for n in (2, 1, 3):
        sess.set_num_threads(n)
        assert sess.num_threads == n
        for g, w in zip(sess.run([c.feeds["a"], c.feeds["x"]]), want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


@pytest.mark.quick
def test_threads_split_work(tmp_path):
    """With 2 threads a kernel's parallel loop is split into chunks that the
    pool's threads run (async-parallel-for, used before om_parallel_for, once
    kept every loop in one task with its default minimum task size)."""
    import ctypes
    c = Cases()
    c.input("a", [256, 128], rand(256, 128))
    w = rand(128, 128)
    c.weight("w", w)
    c.nodes += [N("MatMul", ["a", "w"], ["mm"])]
    c.outputs += ["mm"]
    m = c.model()
    so = onnx_mlir_py.compile(m, output=tmp_path / "m.so", opt_level=3)
    sess = ExecutionSession(so, num_threads=2)
    count = ctypes.CDLL(str(so)).omGetPoolTaskCount
    count.restype = ctypes.c_int64
    before = count()
    np.testing.assert_allclose(sess.run([c.feeds["a"]])[0], c.feeds["a"] @ w,
                               rtol=1e-4, atol=1e-4)
    assert count() - before >= 2


def test_conv_threads(tmp_path):
    """Convs large enough for the multi-threaded im2col (a forall over
    channels) and kernel (a forall over column blocks), stride 1 and 2,
    batch 2, at 1 and 2 threads."""
    c = Cases()
    c.input("x", [2, 16, 30, 30], rand(2, 16, 30, 30))
    c.weight("w1", rand(24, 16, 3, 3) * 0.2)
    c.weight("w2", rand(8, 16, 5, 5) * 0.2)
    c.nodes += [N("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
                N("Conv", ["x", "w2"], ["c2"], strides=[2, 2], pads=[2, 1, 2, 1])]
    c.outputs += ["c1", "c2"]
    m = c.model()
    so = onnx_mlir_py.compile(m, output=tmp_path / "m.so", opt_level=3)
    want = ReferenceEvaluator(m).run(None, c.feeds)
    sess = ExecutionSession(so)
    assert sess.multithreaded
    for n in (1, 2):
        sess.set_num_threads(n)
        for g, w in zip(sess.run([c.feeds["x"]]), want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


def test_matmul_cache_blocks_choice():
    """matmul.cache_blocks: K cut into slabs when rows are outermost and
    packed B is larger than STREAMED_B_BYTES (matmul1024: 4 MiB of B), not
    when B fits; with few row blocks the column blocks are the groups;
    column blocks grouped when their panels fit together."""
    from onnx_mlir_py.passes.optimize import matmul as mm
    # loop sizes: P, Q, KO, mb, nb, kb
    assert mm.cache_blocks([128, 32, 128, 8, 32, 8], True) == (0, 8, 32)     # 1024^3
    assert mm.cache_blocks([128, 8, 32, 8, 32, 8], True) is None             # B of 256 KiB
    assert mm.cache_blocks([None, 32, 128, 8, 32, 8], True) == (0, 8, 32)    # dynamic M
    assert mm.cache_blocks([35, 17, 75, 8, 32, 8], True) == (0, 8, 38)       # 2 slabs
    assert mm.cache_blocks([25, 17, 75, 8, 32, 8], True) == (1, 2, 38)       # few row blocks:
    assert mm.cache_blocks([8, 24, 384, 8, 32, 8], True) == (1, 3, 32)       # column groups
    assert mm.cache_blocks([32, 5, 12, 8, 32, 8], False) == (0, 8, 12)       # K = 96
    assert mm.cache_blocks([32, 5, 600, 8, 32, 8], False) is None            # panels of 600 KiB
    assert mm.cache_blocks([32, 5, 1, 8, 32, 8], True) is None               # one k block


def test_matmul_cache_blocked_schedules(tmp_path, caplog):
    """The grouped / K-slab schedules of matmul.cache_blocks apply (no
    schedule logged as not applied) and give the reference's numbers, with
    partial groups and slabs, at 1 and 2 threads: rows outermost with B of
    1.3 MiB and A of 562 KiB (30 row blocks in groups of 7, K = 600 in slabs
    of 38 + 37 k blocks); 25 row blocks with B of 1.4 MiB (the 10 column
    blocks the groups, K = 1100 in 4 slabs); columns outermost (32 column
    blocks in groups of 8)."""
    import logging
    c = Cases()
    c.input("a", [240, 600], rand(240, 600))
    c.weight("w", rand(600, 520) * 0.1)
    c.input("s", [40, 96], rand(40, 96))
    c.weight("sw", rand(96, 1010))
    c.input("f", [200, 1100], rand(200, 1100))
    c.weight("fw", rand(1100, 300) * 0.1)
    c.nodes += [N("MatMul", ["a", "w"], ["rows"]), N("MatMul", ["s", "sw"], ["cols"]),
                N("MatMul", ["f", "fw"], ["few"])]
    c.outputs += ["rows", "cols", "few"]
    m = c.model()
    with caplog.at_level(logging.DEBUG, logger="onnx_mlir_py.optimize"):
        so = onnx_mlir_py.compile(m, output=tmp_path / "m.so", opt_level=3)
    assert not [r for r in caplog.records if "not applied" in r.getMessage()]
    want = ReferenceEvaluator(m).run(None, c.feeds)
    for t in (1, 2):
        sess = ExecutionSession(so, num_threads=t)
        got = sess.run([c.feeds[i.name] for i in sess.input_specs])
        for name, g, w in zip(c.outputs, got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-3, err_msg=f"{name}, {t} threads")


@pytest.mark.parametrize("m,k,n,split", [
    (2, 256, 1024, True),      # 524K MACs, 1 MiB of B: memory-bound, split
    (64, 100, 98, False),      # 627K MACs in 90 KB: on the calling thread
    (96, 128, 96, True),       # 1.2M MACs in 135 KB (>= 2^20; 2^21 before): split
    (128, 128, 128, True),     # 2^21 MACs: split
])
def test_threads_for_memory_bound_kernels(tmp_path, m, k, n, split):
    """matmul.threaded_kernel: a kernel under THREAD_MIN_MACS is split across
    the pool when its operands take THREAD_MIN_BYTES (a recurrent step's
    H x R^T), not when they are small (MNIST's conv); checked through the
    pool's task count at 2 threads, with the numbers."""
    import ctypes
    from onnx_mlir_py.passes.optimize import matmul as mm
    assert mm.threaded_kernel(m * k * n, 4 * (m * k + k * n + m * n)) == split
    c = Cases()
    c.input("a", [m, k], rand(m, k))
    w = rand(k, n)
    c.weight("w", w)
    c.nodes += [N("MatMul", ["a", "w"], ["mm"])]
    c.outputs += ["mm"]
    so = onnx_mlir_py.compile(c.model(), output=tmp_path / "m.so", opt_level=3)
    sess = ExecutionSession(so, num_threads=2)
    # a library with no parallel loop has no pool (and no task count)
    count = getattr(ctypes.CDLL(str(so)), "omGetPoolTaskCount", None)
    assert (count is not None) == split == sess.multithreaded
    if split:
        count.restype = ctypes.c_int64
    before = count() if split else 0
    np.testing.assert_allclose(sess.run([c.feeds["a"]])[0], c.feeds["a"] @ w,
                               rtol=1e-4, atol=1e-4)
    if split:
        assert count() - before >= 2
