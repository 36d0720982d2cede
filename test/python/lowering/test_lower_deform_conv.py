"""DeformConv vs onnx.reference: groups, offset groups, mask, bias, pads,
strides, dilations, offsets that move samples outside X (zeros), f32 and
f64, dynamic batch and spatial dims run at two shapes, -O0 and -O3; 1-D as
the first row of the 2-D op on a zero-padded X; offset / mask channel
mismatches (compile-time and run-time errors naming the node)."""
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from onnx_mlir_py.errors import VerificationError
from onnx_mlir_py.runtime import ExecutionSession, RuntimeInputError

ONNX_TYPE = {np.float32: T.FLOAT, np.float64: T.DOUBLE}
# (C, M, kernel, group, offset_group, pads, strides, dilations, mask, bias)
CASES = [
    (2, 3, (3, 3), 1, 1, [1, 1, 1, 1], [1, 1], [1, 1], False, False),
    (4, 6, (3, 2), 2, 2, [0, 1, 2, 0], [2, 1], [1, 2], True, True),
    (4, 4, (2, 2), 4, 1, [1, 0, 0, 1], [1, 2], [2, 1], True, False),
    (6, 4, (1, 3), 1, 3, [0, 0, 0, 0], [1, 1], [1, 1], False, True),
]


def _out(size, k, pb, pe, s, d):
    return (size + pb + pe - ((k - 1) * d + 1)) // s + 1


def _model(case, dtype, opset=22, dynamic=False, spatial=(7, 6)):
    c, m, k, g, og, pads, strides, dil, mask, bias = case
    et = ONNX_TYPE[dtype]
    n_, h_, w_ = ("N", "H", "W") if dynamic else (2, *spatial)
    oh, ow = ("OH", "OW") if dynamic else [
        _out(spatial[i], k[i], pads[i], pads[i + 2], strides[i], dil[i]) for i in range(2)]
    ins = [h.make_tensor_value_info("x", et, [n_, c, h_, w_]),
           h.make_tensor_value_info("w", et, [m, c // g, *k]),
           h.make_tensor_value_info("off", et, [n_, og * k[0] * k[1] * 2, oh, ow])]
    names = ["x", "w", "off", "", ""]
    if bias:
        ins.append(h.make_tensor_value_info("b", et, [m]))
        names[3] = "b"
    if mask:
        # own dim names: the mask's size is checked by the op, not the signature
        mh, mw = ("MH", "MW") if dynamic else (oh, ow)
        ins.append(h.make_tensor_value_info("mask", et, [n_, og * k[0] * k[1], mh, mw]))
        names[4] = "mask"
    while names[-1] == "":
        names.pop()
    node = h.make_node("DeformConv", names, ["y"], name="dc", group=g, offset_group=og,
                       pads=pads, strides=strides, dilations=dil, kernel_shape=list(k))
    mdl = h.make_model(h.make_graph([node], "g", ins, [h.make_tensor_value_info("y", et, None)]),
                       opset_imports=[h.make_opsetid("", opset)])
    mdl.ir_version = 10
    return mdl


def _feeds(case, dtype, n, hw, seed):
    c, m, k, g, og, pads, strides, dil, mask, bias = case
    rng = np.random.default_rng(seed)
    oh, ow = [_out(hw[i], k[i], pads[i], pads[i + 2], strides[i], dil[i]) for i in range(2)]
    feeds = {"x": rng.standard_normal((n, c, *hw)).astype(dtype),
             "w": rng.standard_normal((m, c // g, *k)).astype(dtype),
             # up to +-2.5 pixels: some samples fall between pixels, some outside X
             "off": (rng.uniform(-2.5, 2.5, (n, og * k[0] * k[1] * 2, oh, ow))).astype(dtype)}
    if bias:
        feeds["b"] = rng.standard_normal(m).astype(dtype)
    if mask:
        feeds["mask"] = rng.uniform(0, 1, (n, og * k[0] * k[1], oh, ow)).astype(dtype)
    return feeds


def _check(got, want, dtype):
    # onnx.reference rounds the sample coordinates to f32 (GridSample's
    # _gs_denormalize_coordinates) even for f64 X: f64 agrees to ~1e-6 only
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-5, atol=2e-6)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, **tol)
    assert np.count_nonzero(got) > got.size // 2


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("opt", [0, 3])
def test_deform_conv_dynamic_dims_vs_reference(tmp_path, case, opt):
    """Batch and spatial dims dynamic, run at two shapes."""
    mdl = _model(CASES[case], np.float32, dynamic=True)
    sess = ExecutionSession(onnx_mlir_py.compile(mdl, tmp_path / "m.so", opt_level=opt))
    names = [i.name for i in mdl.graph.input]
    for seed, (n, hw) in enumerate([(2, (7, 6)), (1, (5, 9))]):
        feeds = _feeds(CASES[case], np.float32, n, hw, seed)
        (want,) = ReferenceEvaluator(mdl).run(None, feeds)
        (got,) = sess.run([feeds[k] for k in names])
        _check(got, want, np.float32)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("opset", [19, 22])
def test_deform_conv_static_vs_reference(tmp_path, dtype, opset):
    case = CASES[1]
    mdl = _model(case, dtype, opset)
    sess = ExecutionSession(onnx_mlir_py.compile(mdl, tmp_path / "m.so", opt_level=3))
    feeds = _feeds(case, dtype, 2, (7, 6), 0)
    (want,) = ReferenceEvaluator(mdl).run(None, feeds)
    (got,) = sess.run([feeds[i.name] for i in mdl.graph.input])
    _check(got, want, dtype)


def test_deform_conv_1d_is_the_2d_first_row(tmp_path):
    """1-D: onnx.reference has no 1-D DeformConv; it is the first output row of
    the 2-D op on X with a zero second row (height offsets 0, kernel height 1)."""
    rng = np.random.default_rng(3)
    n, c, m, L, k = 2, 4, 6, 9, 3
    x = rng.standard_normal((n, c, L)).astype(np.float32)
    w = rng.standard_normal((m, c // 2, k)).astype(np.float32)
    lo = L + 2 - (k - 1) * 2 - 1 + 1          # pads 1/1, dilation 2, stride 1
    off = rng.uniform(-2, 2, (n, 2 * k, lo)).astype(np.float32)
    node = h.make_node("DeformConv", ["x", "w", "off"], ["y"], name="dc1", group=2,
                       offset_group=2, pads=[1, 1], dilations=[2])
    mdl = h.make_model(h.make_graph([node], "g", [
        h.make_tensor_value_info("x", T.FLOAT, ["N", c, "L"]),
        h.make_tensor_value_info("w", T.FLOAT, [m, c // 2, k]),
        h.make_tensor_value_info("off", T.FLOAT, ["N", 2 * k, "O"])],
        [h.make_tensor_value_info("y", T.FLOAT, None)]), opset_imports=[h.make_opsetid("", 22)])
    mdl.ir_version = 10
    (got,) = ExecutionSession(onnx_mlir_py.compile(mdl, tmp_path / "m.so")).run([x, w, off])
    node2 = h.make_node("DeformConv", ["x", "w", "off"], ["y"], group=2, offset_group=2,
                        pads=[0, 1, 0, 1], dilations=[1, 2])
    ref = h.make_model(h.make_graph([node2], "g", [
        h.make_tensor_value_info(v, T.FLOAT, None) for v in ("x", "w", "off")],
        [h.make_tensor_value_info("y", T.FLOAT, None)]), opset_imports=[h.make_opsetid("", 22)])
    x2 = np.stack([x, np.zeros_like(x)], axis=2)
    off2 = np.zeros((n, 2, k, 2, 2, lo), np.float32)          # [N, og, kh=1, kw, 2, oh, ow]
    off2[:, :, :, 1, 0, :] = off.reshape(n, 2, k, lo)
    (want,) = ReferenceEvaluator(ref).run(None, {"x": x2, "w": w[:, :, None, :],
                                                 "off": off2.reshape(n, 2 * k * 2, 2, lo)})
    _check(got, want[:, :, 0, :], np.float32)


def test_offset_channels_mismatch_at_compile_time(tmp_path):
    mdl = _model(CASES[1], np.float32)
    mdl.graph.input[2].type.tensor_type.shape.dim[1].dim_value = 10
    with pytest.raises(VerificationError, match=r"'dc'.*'offset' dim 1 is 10: expected "
                                                r"offset_group \* prod\(kernel\) \* 2 = 24"):
        onnx_mlir_py.compile(mdl, tmp_path / "m.so")


def test_mask_size_mismatch_at_run_time(tmp_path):
    mdl = _model(CASES[2], np.float32, dynamic=True)
    sess = ExecutionSession(onnx_mlir_py.compile(mdl, tmp_path / "m.so"))
    feeds = _feeds(CASES[2], np.float32, 2, (7, 6), 0)
    feeds["mask"] = feeds["mask"][:, :, :-1]
    with pytest.raises(RuntimeInputError, match=r"'dc'.*'mask' dim 2 is \d+: expected the "
                                                r"output size"):
        sess.run([feeds[i.name] for i in mdl.graph.input])
