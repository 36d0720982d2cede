"""-O3 max / average pools with dynamic H/W (passes/optimize/pool_dyn.py):
per-image vector rows, whole chunks then one masked chunk, strided reads
kept by shuffles, the output's fill as the start and AveragePool's division
(a unary user) fused. Compiled once, run at several batch/H/W (output
widths of 1, below, at and above a vector; a 2x2 image) at 1 and 2
threads, against onnxruntime."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession

POOLS = [  # output, op, attributes
    ("m3s2", "MaxPool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])),
    ("m2s1", "MaxPool", dict(kernel_shape=[2, 2])),
    ("m5s1", "MaxPool", dict(kernel_shape=[5, 5], pads=[2, 2, 2, 2])),
    ("m3d2", "MaxPool", dict(kernel_shape=[3, 3], dilations=[2, 2], pads=[2, 2, 2, 2])),
    ("a3s2", "AveragePool", dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                                 count_include_pad=1)),
    ("a2s2", "AveragePool", dict(kernel_shape=[2, 2], strides=[2, 2])),
]


def _model():
    nodes = [h.make_node(op, ["x"], [out], **attrs) for out, op, attrs in POOLS]
    nodes.append(h.make_node("Relu", ["m3s2"], ["relu"]))
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["N", 8, "H", "W"])],
                     [h.make_tensor_value_info(o, T.FLOAT, None)
                      for o in [p[0] for p in POOLS] + ["relu"]])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def _against_onnxruntime(m, tmp_path, shapes, seed: int, scale: float, tol: float,
                         **options) -> None:
    """``m`` compiled once (with ``options``), run at each input shape
    (standard normal times ``scale``) at 1 and 2 threads, every output
    against onnxruntime's."""
    so = onnx_mlir_py.compile(m, output=tmp_path / "m.so", opt_level=3, **options)
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(seed)
    for shape in shapes:
        x = (rng.standard_normal(shape) * scale).astype(np.float32)
        want = ref.run(None, {"x": x})
        for t in (1, 2):
            got = ExecutionSession(so, num_threads=t).run([x])
            for name, g, w in zip([o.name for o in m.graph.output], got, want):
                assert g.shape == w.shape, (name, shape)
                np.testing.assert_allclose(g, w, rtol=tol, atol=tol,
                                           err_msg=f"{name} at {shape}, {t} threads")


def test_dynamic_pools_against_onnxruntime(tmp_path):
    _against_onnxruntime(_model(), tmp_path, [(1, 8, 5, 7), (2, 8, 33, 40), (1, 8, 2, 2),
                                              (3, 8, 17, 100), (1, 8, 9, 34)], 7, 2.0, 1e-5)


def test_dynamic_pools_become_vector_rows(tmp_path):
    """Every pool is rewritten (none left for linalg's scalar loop nest) and
    the AveragePools' divisions are fused (no elementwise generic left but
    the Relu after the first max pool, which is its user too)."""
    import mlir.ir as ir

    from onnx_mlir_py.context import make_context
    from onnx_mlir_py.passes.optimize import dynamic_pools, resolve_dims
    from onnx_mlir_py.target import target_for
    path = onnx_mlir_py.compile(_model(), output=tmp_path / "m.mlir", emit="EmitMLIR")
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(open(path).read())
        resolve_dims(module)
        # m5s1 (5x5, stride 1) is lowered as two pools (1x5, then 5x1)
        assert dynamic_pools(module, target_for("x86-64-v4"), threads=True) == len(POOLS) + 1
        text = str(module)
        assert "linalg.pooling" not in text
        assert "scf.forall" in text
        assert "arith.divf" in text and "vector<16xf32>" in text


def test_dynamic_pool_of_no_channels(tmp_path):
    """A dynamic-width pool over 0 channels keeps the generic code (fuzz
    s2642-17: the kernel's [1, 0, 1, W] slices failed to verify, a compile
    crash); it runs and returns the empty result of onnx.reference (which
    onnxruntime refuses: only N may be 0), at two widths."""
    from onnx.reference import ReferenceEvaluator
    nodes = [h.make_node("AveragePool", ["x"], ["a"], kernel_shape=[3], pads=[1, 0],
                         count_include_pad=1),
             h.make_node("MaxPool", ["x"], ["m"], kernel_shape=[2])]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["N", 0, "W"])],
                     [h.make_tensor_value_info(o, T.FLOAT, None) for o in ("a", "m")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    so = onnx_mlir_py.compile(m, output=tmp_path / "m.so", opt_level=3)
    ref = ReferenceEvaluator(m)
    for shape in [(2, 0, 5), (1, 0, 9)]:
        x = np.zeros(shape, np.float32)
        for g_, w in zip(ExecutionSession(so).run([x]), ref.run(None, {"x": x})):
            assert g_.shape == w.shape, shape


# depthwise convs with dynamic H/W (passes/optimize/depthwise_dyn.py): output,
# kernel, attributes, bias, SiLU after
DEPTHWISE = [
    ("d3s1", 3, dict(pads=[1, 1, 1, 1]), True, True),
    ("d3s2", 3, dict(pads=[1, 1, 1, 1], strides=[2, 2]), True, True),
    ("d5s1", 5, dict(pads=[2, 2, 2, 2]), True, False),
    ("d5s2", 5, dict(pads=[2, 2, 2, 2], strides=[2, 2]), False, True),
    ("d3s2o", 3, dict(pads=[0, 1, 1, 0], strides=[2, 2]), True, False),   # odd left pad
    ("d3d2", 3, dict(pads=[2, 2, 2, 2], dilations=[2, 2]), True, True),
    ("d3h2", 3, dict(pads=[1, 1, 1, 1], strides=[2, 1]), False, False),  # rows stride 2 only
    ("d3np", 3, dict(), True, False),                                      # no pad
    ("d3s2d2", 3, dict(pads=[2, 2, 2, 2], strides=[2, 2], dilations=[2, 2]), True, True),  # strided reads
]
DW_C = 24


def _depthwise_model():
    from onnx import numpy_helper
    rng = np.random.default_rng(3)
    nodes, inits, outs = [], [], []
    for out, k, attrs, bias, silu in DEPTHWISE:
        w = numpy_helper.from_array(rng.standard_normal((DW_C, 1, k, k)).astype(np.float32),
                                    out + "_w")
        ins = ["x", w.name]
        inits.append(w)
        if bias:
            inits.append(numpy_helper.from_array(
                rng.standard_normal(DW_C).astype(np.float32), out + "_b"))
            ins.append(out + "_b")
        conv = out + "_c" if silu else out
        nodes.append(h.make_node("Conv", ins, [conv], group=DW_C, kernel_shape=[k, k], **attrs))
        if silu:
            nodes += [h.make_node("Sigmoid", [conv], [out + "_s"]),
                      h.make_node("Mul", [conv, out + "_s"], [out])]
        outs.append(out)
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", T.FLOAT, ["N", DW_C, "H", "W"])],
                     [h.make_tensor_value_info(o, T.FLOAT, None) for o in outs], inits)
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


@pytest.mark.parametrize("march", [None, "x86-64-v3"])
def test_dynamic_depthwise_against_onnxruntime(tmp_path, march):
    """Strides 1 and 2 (the split plane; an odd left pad; rows only), 3x3 and
    5x5, dilation, no pad, with and without a bias and a SiLU, at output
    widths below one vector, of 2-4 vectors (the narrow maps' row groups)
    and above 4 (whole chunks and a masked tail), heights below and above
    a row group, 1 and 2 threads; AVX-512 (16 lanes) and AVX2 (8)."""
    _against_onnxruntime(_depthwise_model(), tmp_path,
                         [(1, DW_C, 9, 17), (2, DW_C, 30, 41), (1, DW_C, 3, 3), (1, DW_C, 7, 7),
                          (1, DW_C, 13, 150), (1, DW_C, 64, 32)], 5, 1.0, 1e-4,
                         **({"march": march} if march else {}))


def test_dynamic_depthwise_fuses_its_pad(tmp_path):
    """The zero pads of the depthwise convs the row kernel takes are its
    scratch plane (one tensor.pad left: the strided-read kernel's, stride 2
    with dilation 2), the SiLUs fused (no generic left)."""
    import mlir.ir as ir

    from onnx_mlir_py.context import make_context
    from onnx_mlir_py.passes.optimize import dynamic_pools, resolve_dims
    from onnx_mlir_py.target import target_for
    path = onnx_mlir_py.compile(_depthwise_model(), output=tmp_path / "m.mlir", emit="EmitMLIR")
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(open(path).read())
        resolve_dims(module)
        assert dynamic_pools(module, target_for("x86-64-v4"), threads=True) == len(DEPTHWISE)
        text = str(module)
        assert "linalg.depthwise" not in text and "linalg.generic" not in text
        assert text.count("tensor.pad") == 1
