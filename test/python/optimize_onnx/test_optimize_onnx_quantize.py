"""fold-constant-dequantize (passes/optimize_onnx/quantize.py): the
DequantizeLinear of a constant weight becomes an f32 constant at -O2/-O3.

* The folded value is bit-identical to the DequantizeLinear computed at run
  time (-O0 keeps it), per tensor, per axis and per block, with and without
  a zero point, for dense_resource weights (more than 1024 elements), and
  agrees with onnxruntime.
* A model quantized by onnxruntime.quantization (static QDQ, U8 activations,
  S8 per-channel weights) has no DequantizeLinear of a constant left, and
  its output agrees with onnxruntime's int8 run within one step of the
  output's quantization (the convs compute in f32 on the dequantized
  values; onnxruntime in integers: a value on a rounding edge may land one
  step apart, as it does between onnxruntime's own optimization levels)."""
from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnx_mlir_py
from onnx_mlir_py.importer import import_model
from onnx_mlir_py.passes.optimize_onnx import optimize_onnx
from onnx_mlir_py.passes.optimize_onnx.ir_util import onnx_ops
from onnx_mlir_py.passes.pipeline import to_onnx_ir

ort = pytest.importorskip("onnxruntime")
RNG = np.random.default_rng(7)


def _ints(dtype, shape):
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -100000), min(info.max, 100000)
    return RNG.integers(lo, hi, shape, endpoint=True).astype(dtype)


def _dq_model(name):
    """y = DequantizeLinear(W) + x with a constant W of 64 x 40 (a dense_resource)."""
    shape, opset, attrs = [64, 40], 13, {}
    if name == "per_tensor_u8":
        w, s, z = _ints(np.uint8, shape), np.float32(0.0123), np.uint8(131)
    elif name == "per_tensor_no_zp":
        w, s, z = _ints(np.int8, shape), np.float32(0.5), None
    elif name == "per_axis_s8":
        w, s, z = _ints(np.int8, shape), RNG.uniform(1e-3, 1e-1, 64).astype(np.float32), \
            _ints(np.int8, [64])
        attrs = {"axis": 0}
    elif name == "per_axis_last":
        w, s, z = _ints(np.uint8, shape), RNG.uniform(1e-3, 1e-1, 40).astype(np.float32), \
            _ints(np.uint8, [40])
        attrs = {"axis": -1}
    elif name == "per_axis_i32":
        w, s, z = _ints(np.int32, shape), RNG.uniform(1e-6, 1e-4, 40).astype(np.float32), None
        attrs = {"axis": 1}
    elif name == "blocked_s8":
        # opset 21: blocks of 16 along axis 1 (40 = 16 + 16 + 8: a short last block)
        opset = 21
        w, s, z = _ints(np.int8, shape), RNG.uniform(1e-3, 1e-1, [64, 3]).astype(np.float32), \
            _ints(np.int8, [64, 3])
        attrs = {"axis": 1, "block_size": 16}
    else:
        raise AssertionError(name)
    inits = [nh.from_array(np.asarray(w), "W"), nh.from_array(np.asarray(s), "s")]
    ins = ["W", "s"]
    if z is not None:
        inits.append(nh.from_array(np.asarray(z), "z"))
        ins.append("z")
    g = h.make_graph([h.make_node("DequantizeLinear", ins, ["d"], name="dq", **attrs),
                      h.make_node("Add", ["d", "x"], ["y"], name="add")], name,
                     [h.make_tensor_value_info("x", T.FLOAT, shape)],
                     [h.make_tensor_value_info("y", T.FLOAT, shape)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 10
    onnx.checker.check_model(m)
    return m


CASES = ["per_tensor_u8", "per_tensor_no_zp", "per_axis_s8", "per_axis_last", "per_axis_i32",
         "blocked_s8"]


@pytest.mark.parametrize("name", CASES)
def test_weight_dequantize_folds_bit_exact(name, tmp_path):
    model = _dq_model(name)
    module = import_model(model)
    to_onnx_ir(module)
    assert optimize_onnx(module)["fold-constant-dequantize"] == 1
    assert not onnx_ops(module, "DequantizeLinear")
    x = RNG.standard_normal([64, 40]).astype(np.float32)
    folded = onnx_mlir_py.ExecutionSession(
        onnx_mlir_py.compile(model, output=tmp_path / "o3.so", opt_level=3)).run([x])[0]
    at_run_time = onnx_mlir_py.ExecutionSession(
        onnx_mlir_py.compile(model, output=tmp_path / "o0.so", opt_level=0)).run([x])[0]
    np.testing.assert_array_equal(folded, at_run_time)
    want = ort.InferenceSession(model.SerializeToString(),
                                providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(folded, want, rtol=1e-6, atol=1e-6)


def test_dequantize_of_a_computed_value_is_left(tmp_path):
    """x computed at run time: nothing to fold, still right."""
    g = h.make_graph([h.make_node("Neg", ["q"], ["r"]),
                      h.make_node("DequantizeLinear", ["r", "s", "z"], ["y"])], "dq_rt",
                     [h.make_tensor_value_info("q", T.INT8, [3, 5])],
                     [h.make_tensor_value_info("y", T.FLOAT, [3, 5])],
                     [nh.from_array(np.float32(0.25), "s"), nh.from_array(np.int8(-3), "z")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 10
    module = import_model(m)
    to_onnx_ir(module)
    assert optimize_onnx(module)["fold-constant-dequantize"] == 0
    q = np.maximum(_ints(np.int8, [3, 5]), -127)       # -(-128) wraps in int8
    got = onnx_mlir_py.ExecutionSession(
        onnx_mlir_py.compile(m, output=tmp_path / "m.so", opt_level=3)).run([q])[0]
    np.testing.assert_array_equal(got, (-q.astype(np.float32) + 3) * 0.25)


def _small_cnn():
    """Conv-ReLU-Conv + skip - ReLU - global pool - Gemm, random weights."""
    def w(*s):
        return nh.from_array((RNG.standard_normal(s) * np.sqrt(2.0 / np.prod(s[1:])))
                             .astype(np.float32), f"w{len(s)}_{'x'.join(map(str, s))}")
    ws = [w(16, 3, 3, 3), w(16, 16, 3, 3), w(10, 16)]
    bs = [nh.from_array((0.1 * RNG.standard_normal(n)).astype(np.float32), f"b{n}_{i}")
          for i, n in enumerate((16, 16, 10))]
    nodes = [h.make_node("Conv", ["x", ws[0].name, bs[0].name], ["c1"], pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["c1"], ["r1"]),
             h.make_node("Conv", ["r1", ws[1].name, bs[1].name], ["c2"], pads=[1, 1, 1, 1]),
             h.make_node("Add", ["c2", "r1"], ["a"]),
             h.make_node("Relu", ["a"], ["r2"]),
             h.make_node("GlobalAveragePool", ["r2"], ["p"]),
             h.make_node("Flatten", ["p"], ["f"]),
             h.make_node("Gemm", ["f", ws[2].name, bs[2].name], ["y"], transB=1)]
    g = h.make_graph(nodes, "cnn", [h.make_tensor_value_info("x", T.FLOAT, [1, 3, 24, 24])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, 10])], ws + bs)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def test_qdq_model_folds_and_matches_onnxruntime(tmp_path):
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    fp32 = tmp_path / "cnn.onnx"
    onnx.save(_small_cnn(), fp32)
    inputs = [RNG.standard_normal([1, 3, 24, 24]).astype(np.float32) for _ in range(4)]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(inputs)

        def get_next(self):
            x = next(self.it, None)
            return None if x is None else {"x": x}
    qdq = tmp_path / "cnn_qdq.onnx"
    quantize_static(str(fp32), str(qdq), Reader(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8,
                    per_channel=True)
    model = onnx.load(qdq)
    assert sum(n.op_type == "DequantizeLinear" for n in model.graph.node) >= 6
    module = import_model(model)
    to_onnx_ir(module)
    optimize_onnx(module)
    left = [d for d in onnx_ops(module, "DequantizeLinear")
            if d.input(0).owner.name == "onnx.constant"]
    assert not left, "a DequantizeLinear of a constant was not folded"
    # the output's quantization step: the scale of the last DequantizeLinear
    inits = {i.name: nh.to_array(i) for i in model.graph.initializer}
    gemm_in = {o for m_ in model.graph.node if m_.op_type == "Gemm" for o in m_.input}
    last = [n for n in model.graph.node if n.op_type == "DequantizeLinear"
            and n.output[0] in gemm_in and n.input[0] not in inits]
    so = onnx_mlir_py.compile(str(qdq), output=tmp_path / "q.so", opt_level=3)
    sess = onnx_mlir_py.ExecutionSession(so)
    ref = ort.InferenceSession(str(qdq), providers=["CPUExecutionProvider"])
    steps = []
    for x in inputs + [RNG.standard_normal([1, 3, 24, 24]).astype(np.float32)]:
        got, want = sess.run([x])[0], ref.run(None, {"x": x})[0]
        assert got.shape == want.shape and np.all(np.isfinite(got))
        steps.append(np.abs(got - want))
    # the Gemm's output is f32 (not re-quantized): its inputs are one step of
    # the activation's scale apart at most; bound the difference by that step
    # times the Gemm's summed |weights| (16 inputs)
    assert last, "no DequantizeLinear feeds the Gemm"
    a_scale = float(inits[last[0].input[1]]) if last[0].input[1] in inits else None
    assert a_scale is not None
    wq = [n for n in model.graph.node if n.op_type == "DequantizeLinear"
          and n.output[0] in {m_.input[1] for m_ in model.graph.node if m_.op_type == "Gemm"}]
    wg = inits[wq[0].input[0]].astype(np.float32) * inits[wq[0].input[1]].reshape(-1, 1)
    bound = a_scale * np.abs(wg).sum(axis=1).max()
    worst = max(float(s.max()) for s in steps)
    assert worst <= bound, (worst, bound)
