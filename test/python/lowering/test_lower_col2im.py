"""Col2Im against onnx.reference: 2-D and 3-D images, strides, dilations,
pads, image_shape/block_shape as run-time inputs and as constants, dynamic
dims at two run-time shapes; the run-time checks of a wrong column count and
of a wrong image_shape length."""
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h, numpy_helper

from dynamic_util import check_rejects, check_shapes, model

R = np.random.default_rng(0)


def _cols(n, c, image, block, d, s, p):
    r = len(image)
    nb = [(image[i] + p[i] + p[i + r] - (d[i] * (block[i] - 1) + 1)) // s[i] + 1
          for i in range(r)]
    return R.standard_normal((n, c * int(np.prod(block)), int(np.prod(nb)))).astype(np.float32)


CASES = {
    "plain": ([1, 1], [1, 1], [0, 0, 0, 0], [([5, 5], [1, 5]), ([4, 6], [2, 3])]),
    "strides": ([1, 1], [2, 2], [0, 0, 0, 0], [([5, 5], [3, 3]), ([6, 7], [2, 3])]),
    "dilations": ([1, 5], [1, 1], [0, 0, 0, 0], [([6, 6], [2, 2]), ([5, 7], [2, 2])]),
    "pads": ([1, 1], [1, 1], [0, 1, 0, 1], [([5, 5], [1, 5]), ([3, 4], [2, 2])]),
    "all": ([2, 1], [2, 3], [1, 0, 2, 1], [([7, 8], [2, 3]), ([6, 9], [3, 2])]),
    "3d": ([1, 1, 1], [1, 1, 1], [0] * 6, [([3, 4, 5], [1, 1, 5]), ([2, 3, 4], [2, 2, 1])]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_col2im_runtime_shapes(tmp_path, case):
    d, s, p, shapes = CASES[case]
    r = len(d)
    m = model([h.make_node("Col2Im", ["x", "i", "b"], ["y"], dilations=d, strides=s, pads=p)],
              [("x", T.FLOAT, ["n", "cb", "l"]), ("i", T.INT64, [r]), ("b", T.INT64, [r])],
              opset=18)
    feeds = [{"x": _cols(n, 2, img, blk, d, s, p), "i": np.array(img, np.int64),
              "b": np.array(blk, np.int64)} for n, (img, blk) in zip((1, 2), shapes)]
    check_shapes(tmp_path, m, feeds, rtol=1e-5, atol=1e-5)


def test_col2im_constant_shapes(tmp_path):
    inits = [numpy_helper.from_array(np.array([5, 6], np.int64), "i"),
             numpy_helper.from_array(np.array([2, 3], np.int64), "b")]
    m = model([h.make_node("Col2Im", ["x", "i", "b"], ["y"], strides=[1, 2])],
              [("x", T.DOUBLE, ["n", 12, 8])], opset=18, inits=inits)
    feeds = [{"x": R.standard_normal((n, 12, 8))} for n in (1, 3)]
    check_shapes(tmp_path, m, feeds, rtol=1e-12, atol=1e-12)


def test_col2im_wrong_column_count_is_an_error(tmp_path):
    m = model([h.make_node("Col2Im", ["x", "i", "b"], ["y"], name="c2i")],
              [("x", T.FLOAT, [1, 5, "l"]), ("i", T.INT64, [2]), ("b", T.INT64, [2])],
              opset=18, outputs=[("y", T.FLOAT, [None, None, None, None])])
    check_rejects(tmp_path, m, [{"x": np.zeros((1, 5, 4), np.float32),
                                 "i": np.array([5, 5], np.int64),
                                 "b": np.array([1, 5], np.int64)}],
                  match=r"c2i.*input dim 2 is 4: expected 5 block positions")
