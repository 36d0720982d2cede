"""-O3 convs whose elementwise ops (ReLU, Clip, HardSwish, a residual add)
run as the kernel's epilogue (passes/optimize/epilogue.py), against
onnxruntime at 1 and 2 threads, in each conv form: im2col with the input in
place (1x1), packed im2col (3x3), strided im2col, pixel rows (few pixels:
on the transposed blocks); and the cases that must not be fused: a conv
result also used elsewhere, a residual computed from the conv itself,
pixels not whole panels with a residual (SiLU: test_o3_conv_silu.py)."""
from __future__ import annotations

import os
import tempfile

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from onnx_mlir_py.testing.check import assert_match, reference

ACTS = {
    "relu": lambda x: [h.make_node("Relu", [x], ["y"])],
    "clip": lambda x: [h.make_node("Clip", [x, "lo", "hi"], ["y"])],
    "hardswish": lambda x: [h.make_node("HardSwish", [x], ["y"])],
    "silu": lambda x: [h.make_node("Sigmoid", [x], ["sg"]), h.make_node("Mul", [x, "sg"], ["y"])],
}


def conv_model(c: int, f: int, hw: int, k: int, act: str, residual: bool = False, stride: int = 1,
               extra_output: bool = False, self_residual: bool = False):
    rng = np.random.default_rng(c * 1000 + f + hw)
    inits = [nh.from_array((rng.standard_normal((f, c, k, k)) * 0.2).astype(np.float32), "W"),
             nh.from_array(rng.standard_normal(f).astype(np.float32), "B"),
             nh.from_array(np.array(-0.5, np.float32), "lo"),
             nh.from_array(np.array(1.5, np.float32), "hi")]
    nodes = [h.make_node("Conv", ["x", "W", "B"], ["c"], pads=[k // 2] * 4, strides=[stride] * 2)]
    cur = "c"
    if residual:
        nodes.append(h.make_node("Add", [cur, "r"], ["a"]))
        cur = "a"
    if self_residual:       # the "residual" is computed from the conv: never its epilogue's input
        nodes += [h.make_node("Transpose", ["c"], ["ct"], perm=[0, 1, 3, 2]),
                  h.make_node("Add", ["c", "ct"], ["a"])]
        cur = "a"
    nodes += ACTS[act](cur)
    oh = (hw + 2 * (k // 2) - k) // stride + 1
    ins = [h.make_tensor_value_info("x", TP.FLOAT, [1, c, hw, hw])]
    if residual:
        ins.append(h.make_tensor_value_info("r", TP.FLOAT, [1, f, oh, oh]))
    outs = [h.make_tensor_value_info("y", TP.FLOAT, [1, f, oh, oh])]
    if extra_output:
        outs.append(h.make_tensor_value_info("c", TP.FLOAT, [1, f, oh, oh]))
    m = h.make_model(h.make_graph(nodes, "g", ins, outs, inits),
                     opset_imports=[h.make_opsetid("", 17)])
    feeds = {"x": rng.standard_normal((1, c, hw, hw)).astype(np.float32)}
    if residual:
        feeds["r"] = rng.standard_normal((1, f, oh, oh)).astype(np.float32)
    return m, feeds


def _run(m, feeds, threads):
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    with tempfile.TemporaryDirectory() as d:
        so = onnx_mlir_py.compile(m, output=os.path.join(d, "m.so"), opt_level=3)
        sess = ExecutionSession(so, num_threads=threads)
        return sess.run([feeds[i.name] for i in m.graph.input])


CASES = [
    # (c, f, hw, k, act, residual, stride): the form each one takes
    (64, 64, 32, 1, "relu", True, 1),          # 1x1 in place, residual + ReLU
    (64, 64, 32, 1, "hardswish", False, 1),    # 1x1 in place
    (32, 64, 40, 3, "clip", False, 1),         # packed im2col (3x3 stride 1)
    (32, 32, 40, 3, "relu", True, 2),          # strided im2col, residual
    (128, 128, 28, 3, "relu", True, 1),        # pixel rows, residual
    (64, 128, 7, 1, "hardswish", True, 1),     # pixel rows in place, 49 pixels (a tail block)
    (16, 32, 20, 3, "relu", True, 1),          # 400 pixels: not whole panels, residual
    (64, 64, 32, 1, "silu", True, 1),          # residual + SiLU
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
@pytest.mark.parametrize("threads", [1, 2])
def test_conv_epilogue_matches_onnxruntime(case, threads):
    c, f, hw, k, act, res, stride = case
    m, feeds = conv_model(c, f, hw, k, act, res, stride)
    assert_match(_run(m, feeds, threads), reference(m, feeds, "onnxruntime"), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kw", [dict(extra_output=True), dict(self_residual=True)],
                         ids=["conv-also-an-output", "residual-from-the-conv"])
def test_not_an_epilogue(kw):
    m, feeds = conv_model(64, 64, 32, 1, "relu", **kw)
    assert_match(_run(m, feeds, 1), reference(m, feeds, "onnxruntime"), rtol=1e-4, atol=1e-4)


def _lowered(m):
    """The model at tensor level (linalg), before -O3."""
    from onnx_mlir_py.compiler import import_onnx, lower
    from onnx_mlir_py.options import Options
    from onnx_mlir_py.passes.pipeline import to_onnx_ir
    from onnx_mlir_py.timings import Timings
    opts, t = Options(opt_level=3), Timings()
    module = import_onnx(m, opts, t)
    to_onnx_ir(module, t)
    lower(module, opts, t)
    return module


def _chain_of(module):
    from onnx_mlir_py.ir_util import walk_ops
    from onnx_mlir_py.passes.optimize.epilogue import epilogue_chain
    from onnx_mlir_py.passes.optimize.kernel_fusion import bias_add_user
    conv = walk_ops(module.operation, "linalg.conv_2d_nchw_fchw")[0]
    fused = bias_add_user(conv.results[0])
    return epilogue_chain((fused[0] if fused else conv).results[0])


@pytest.mark.parametrize("act", ["relu", "hardswish", "clip"])
def test_chain_is_found(act):
    """The matcher takes the residual add and the activation (one tensor)."""
    m, _ = conv_model(64, 64, 32, 1, act, residual=True)
    module = _lowered(m)
    with module.context:
        epi = _chain_of(module)
        assert epi is not None and len(epi.tensors) == 1
        assert len(epi.generics) >= 1 and any(o[0] == "arith.addf" for o in epi.ops)


@pytest.mark.parametrize("kw", [dict(extra_output=True), dict(self_residual=True)],
                         ids=["conv-also-an-output", "residual-from-the-conv"])
def test_chain_refused(kw):
    m, _ = conv_model(64, 64, 32, 1, "relu", **kw)
    module = _lowered(m)
    with module.context:
        epi = _chain_of(module)
        # a value used outside the chain, or an input computed from the conv
        assert epi is None


def _late_residual_model():
    """A block's last conv, then the downsampled residual (exported after
    it, as torchvision's ResNet does), Add, ReLU: the chain reads a tensor
    computed after the first conv, so the downsample conv takes it."""
    rng = np.random.default_rng(5)
    inits = [nh.from_array((rng.standard_normal((32, 32, 3, 3)) * 0.1).astype(np.float32), "W"),
             nh.from_array((rng.standard_normal((32, 32, 1, 1)) * 0.2).astype(np.float32), "Wd"),
             nh.from_array(rng.standard_normal(32).astype(np.float32), "B"),
             nh.from_array(rng.standard_normal(32).astype(np.float32), "Bd")]
    nodes = [h.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1] * 4, name="conv"),
             h.make_node("Conv", ["x", "Wd", "Bd"], ["d"], name="down"),
             h.make_node("Add", ["c", "d"], ["a"], name="add"),
             h.make_node("Relu", ["a"], ["y"], name="relu")]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [1, 32, 14, 14])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [1, 32, 14, 14])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    return m, {"x": rng.standard_normal((1, 32, 14, 14)).astype(np.float32)}


@pytest.mark.parametrize("threads", [1, 2])
def test_late_residual(threads):
    m, feeds = _late_residual_model()
    assert_match(_run(m, feeds, threads), reference(m, feeds, "onnxruntime"), rtol=1e-4, atol=1e-4)


def test_profile_times_the_epilogue_as_the_convs(tmp_path):
    """--profile: the fused Add and ReLU are listed in a conv's event, none
    has its own (the kernel call stays where the conv was)."""
    import json

    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    m, feeds = _late_residual_model()
    so = onnx_mlir_py.compile(m, output=str(tmp_path / "m.so"), opt_level=3, profile=True)
    s = ExecutionSession(so)
    s.run([feeds["x"]])
    s.end_profiling(str(tmp_path / "p.json"))
    events = [e for e in json.loads((tmp_path / "p.json").read_text()) if e.get("cat") == "Node"]
    ops = {e["args"]["op_name"] for e in events}
    assert ops == {"Conv"}, ops
