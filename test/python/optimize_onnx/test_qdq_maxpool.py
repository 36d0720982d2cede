"""fuse-qdq-maxpool (passes/optimize_onnx/quantize.py): DequantizeLinear ->
MaxPool -> QuantizeLinear of one scale and zero point (a QDQ CNN's stem
pool) becomes a MaxPool on the 8-bit tensor at -O2/-O3.

* uint8 and int8, 3x3 / stride 2 / pads 1 (windows at the border see the
  padding, which must be the type's minimum), zero points that put image
  values at the type's minimum: the rewrite happens (one MaxPool on an
  8-bit tensor, no DequantizeLinear left) and -O0 and -O3 equal
  onnxruntime bit for bit.
* Chains it must leave alone (a different output scale or zero point, a
  used Indices output, a negative scale, AveragePool): no 8-bit MaxPool, and
  the output still matches onnxruntime within one quantization step."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnx_mlir_py
from onnx_mlir_py.importer import import_model
from onnx_mlir_py.passes.optimize_onnx import optimize_onnx
from onnx_mlir_py.passes.optimize_onnx.ir_util import onnx_ops
from onnx_mlir_py.passes.pipeline import to_onnx_ir
from onnx_mlir_py.runtime import ExecutionSession

ort = pytest.importorskip("onnxruntime")
SHAPE = [1, 8, 21, 20]      # odd and even sides: the last window ends in the padding or not


def _chain(dtype, zp, scale=0.05, out_scale=None, out_zp=None, pool="MaxPool", indices=False):
    """x (8-bit) -> DQ(scale, zp) -> pool 3x3/2 pads 1 -> Q(out_scale, out_zp)."""
    et = T.UINT8 if dtype == np.uint8 else T.INT8
    out_scale = scale if out_scale is None else out_scale
    out_zp = zp if out_zp is None else out_zp
    inits = [nh.from_array(np.array(scale, np.float32), "s"), nh.from_array(np.array(zp, dtype), "z"),
             nh.from_array(np.array(out_scale, np.float32), "s2"),
             nh.from_array(np.array(out_zp, dtype), "z2")]
    outs = [h.make_tensor_value_info("y", et, None)]
    nodes = [h.make_node("DequantizeLinear", ["x", "s", "z"], ["xd"]),
             h.make_node(pool, ["xd"], ["p"] + (["i"] if indices else []), kernel_shape=[3, 3],
                         strides=[2, 2], pads=[1, 1, 1, 1]),
             h.make_node("QuantizeLinear", ["p", "s2", "z2"], ["y"])]
    if indices:
        outs.append(h.make_tensor_value_info("i", T.INT64, None))
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", et, SHAPE)], outs,
                     initializer=inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _int8_pools(m) -> int:
    """8-bit MaxPools and DequantizeLinears left after the ONNX rewrites (-O2/-O3)."""
    module = import_model(m)
    to_onnx_ir(module)
    with module.context:
        optimize_onnx(module)
        pools = [p for p in onnx_ops(module, "MaxPool")
                 if str(p.input(0).type.element_type) in ("i8", "ui8", "si8")]
        return len(pools), len(onnx_ops(module, "DequantizeLinear"))


def _runs(tmp_path, m, dtype):
    """(ours at -O0, ours at -O3, onnxruntime) for inputs that hit the type's ends."""
    sess = {lv: ExecutionSession(onnx_mlir_py.compile(m, tmp_path / f"m{lv}.so", opt_level=lv))
            for lv in (0, 3)}
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    info = np.iinfo(dtype)
    rng = np.random.default_rng(5)
    for x in (rng.integers(info.min, info.max, SHAPE, endpoint=True).astype(dtype),
              np.full(SHAPE, info.min, dtype)):     # all at the minimum: padding must not win
        yield [s.run([x])[0] for s in sess.values()], ref.run(None, {"x": x})[0]


@pytest.mark.parametrize("dtype, zp", [(np.uint8, 0), (np.uint8, 131), (np.int8, -128),
                                       (np.int8, 3)])
def test_chain_becomes_an_8bit_maxpool(tmp_path, dtype, zp):
    m = _chain(dtype, zp)
    assert _int8_pools(m) == (1, 0)
    for (o0, o3), ref in _runs(tmp_path, m, dtype):
        assert o3.dtype == ref.dtype == dtype
        np.testing.assert_array_equal(o0, ref)
        np.testing.assert_array_equal(o3, ref)


@pytest.mark.parametrize("case", ["out_scale", "out_zp", "indices", "negative_scale",
                                  "average"])
def test_chains_it_leaves_alone(tmp_path, case):
    dtype, zp, kw = np.uint8, 100, {}
    if case == "out_scale":
        kw = {"out_scale": 0.07}
    elif case == "out_zp":
        kw = {"out_zp": 90}
    elif case == "indices":
        kw = {"indices": True}
    elif case == "negative_scale":
        kw = {"scale": -0.05}
    else:
        kw = {"pool": "AveragePool"}
    m = _chain(dtype, zp, **kw)
    assert _int8_pools(m) == (0, 1)
    for (o0, o3), ref in _runs(tmp_path, m, dtype):
        for got in (o0, o3):
            d = np.abs(got.astype(int) - ref.astype(int))
            assert d.max() <= 1, f"{case}: {(d > 0).mean():.2%} off, by up to {d.max()}"
