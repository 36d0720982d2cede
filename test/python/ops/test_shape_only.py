"""GridSample, AffineGrid, DeformConv, RoiAlign, MaxUnpool, DFT, Det,
EyeLike, Bernoulli, TensorScatter, BitCast, and the data-dependent sizes of
NonMaxSuppression / Compress / Unique against onnx."""
import numpy as np
import pytest
from onnx import TensorProto as TP, helper

from helpers import infer_and_compare, make_model, our_output_types
from onnx_mlir_py.errors import VerificationError
from _common import F, i64, one

pytestmark = pytest.mark.quick   # the quick tier (README, Tests)


@pytest.mark.parametrize("opset", [16, 20, 22])
def test_grid_sample(opset):
    node = helper.make_node("GridSample", ["x", "g"], ["y"], name="n")
    infer_and_compare(make_model([node], [("x", F, [2, 3, 8, 9]), ("g", F, [2, 5, 6, 2])],
                                 ["y"], opset))


def test_affine_grid():
    node = helper.make_node("AffineGrid", ["t", "s"], ["y"], name="n")
    infer_and_compare(make_model([node], [("t", F, [2, 2, 3])], ["y"], 20,
                                 [i64("s", [2, 3, 5, 6])]))


def test_deform_conv_and_roi_align():
    d = helper.make_node("DeformConv", ["x", "w", "off"], ["y"], name="d", pads=[1, 1, 1, 1])
    r = helper.make_node("RoiAlign", ["x", "rois", "bi"], ["z"], name="r",
                         output_height=3, output_width=4)
    ins = [("x", F, [1, 2, 6, 6]), ("w", F, [4, 2, 3, 3]), ("off", F, [1, 18, 6, 6]),
           ("rois", F, [7, 4]), ("bi", TP.INT64, [7])]
    infer_and_compare(make_model([d, r], ins, ["y", "z"], 22))


def test_max_unpool():
    node = helper.make_node("MaxUnpool", ["x", "i"], ["y"], name="n", kernel_shape=[2, 2],
                            strides=[2, 2])
    infer_and_compare(make_model([node], [("x", F, [1, 1, 2, 3]), ("i", TP.INT64, [1, 1, 2, 3])],
                                 ["y"], 22))


@pytest.mark.parametrize("opset,onesided,inverse,length", [
    (17, 0, 0, None), (17, 1, 0, None), (20, 0, 1, None), (20, 1, 0, 8), (20, 1, 1, None)])
def test_dft(opset, onesided, inverse, length):
    x = [1, 10, 6, 2] if inverse and onesided else [1, 10, 6, 1]
    inits, names = [], ["x", ""]
    if length is not None:
        inits.append(i64("len", length))
        names[1] = "len"
    kw = {"onesided": onesided, "inverse": inverse}
    if opset >= 20:
        inits.append(i64("axis", 1))
        names.append("axis")
    else:
        kw["axis"] = 1
    node = helper.make_node("DFT", names, ["y"], name="n", **kw)
    infer_and_compare(make_model([node], [("x", F, x)], ["y"], opset, inits))


def test_det_eyelike_bernoulli():
    infer_and_compare(one("Det", [3, 4, 4], 22))
    infer_and_compare(one("EyeLike", [4, 5], 22, dtype=TP.DOUBLE))
    infer_and_compare(one("Bernoulli", [10], 22))


def test_det_not_square_is_rejected():
    with pytest.raises(VerificationError, match="expected \\[\\*, M, M\\]"):
        our_output_types(one("Det", [3, 4, 5], 22))


def test_tensor_scatter_and_bitcast():
    node = helper.make_node("TensorScatter", ["past", "upd"], ["y"], name="n", axis=2)
    infer_and_compare(make_model([node], [("past", F, [2, 3, 8, 4]), ("upd", F, [2, 3, 1, 4])],
                                 ["y"], 24))
    infer_and_compare(one("BitCast", [2, 3], 26, to=TP.INT32))


def test_bitcast_width_mismatch_is_rejected():
    with pytest.raises(VerificationError, match="cannot bit-cast f32 \\(32 bits\\) to i64"):
        our_output_types(one("BitCast", [2, 3], 26, to=TP.INT64))


def test_data_dependent_sizes():
    # NonMaxSuppression, Compress, Unique: known rank and dims, the rest dynamic
    nms = helper.make_node("NonMaxSuppression", ["b", "s"], ["sel"], name="nms")
    infer_and_compare(make_model([nms], [("b", F, [1, 6, 4]), ("s", F, [1, 1, 6])], ["sel"], 11))
    c = helper.make_node("Compress", ["x", "c"], ["y"], name="c", axis=1)
    infer_and_compare(make_model([c], [("x", F, [3, 2]), ("c", TP.BOOL, [2])], ["y"], 11))
    u = helper.make_node("Unique", ["x"], ["y", "idx", "inv", "cnt"], name="u")
    m = make_model([u], [("x", F, [2, 3])], ["y", "idx", "inv", "cnt"], 11)
    # inverse_indices has one entry per element of X (onnx leaves it unknown)
    assert infer_and_compare(m, allow_more_static=True)[2][1] == [6]
    u = helper.make_node("Unique", ["x"], ["y", "idx", "inv"], name="u", axis=-1)
    m = make_model([u], [("x", F, [2, 5])], ["y", "idx", "inv"], 11)
    assert [s for _, s in our_output_types(m)] == [[2, None], [None], [5]]


def test_nms_dims_checked_at_compile_time():
    nms = helper.make_node("NonMaxSuppression", ["b", "s"], ["sel"], name="nms")
    for b, s, msg in (([1, 6, 4], [1, 1, 5], "6 boxes per batch but scores have 5"),
                      ([2, 6, 4], [1, 1, 6], "2 batches but scores have 1"),
                      ([1, 6, 5], [1, 1, 6], "4 coordinates, got 5")):
        with pytest.raises(VerificationError, match=msg):
            our_output_types(make_model([nms], [("b", F, b), ("s", F, s)], ["sel"], 11))


def test_stft():
    # onnx's shape inference ignores onesided (default 1) and says 16 bins; the
    # reference implementation (and the spec) give n_fft // 2 + 1 = 9
    from onnx.reference import ReferenceEvaluator
    node = helper.make_node("STFT", ["sig", "step", "", "len"], ["y"], name="n")
    m = make_model([node], [("sig", F, [1, 128, 1])], ["y"], 17,
                   [i64("step", 8), i64("len", 16)])
    want = ReferenceEvaluator(m).run(None, {"sig": np.ones((1, 128, 1), np.float32)})[0].shape
    assert our_output_types(m) == [("f32", list(want))]
