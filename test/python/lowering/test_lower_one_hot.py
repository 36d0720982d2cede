"""OneHot with every input dim dynamic: depth and values of unknown size
[?] (checked at run time: 1 and 2 elements) and a run-time depth. They used
to be refused ('values must have 2 elements')."""
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

from dynamic_util import check_rejects, check_shapes, model


def _m(axis):
    return model([h.make_node("OneHot", ["i", "d", "v"], ["y"], name="oh", axis=axis)],
                 [("i", T.INT64, ["a", "b"]), ("d", T.INT64, ["n"]), ("v", T.FLOAT, ["m"])],
                 [("y", T.FLOAT, None)], opset=11)


def _feeds(ishape, depth, seed):
    rng = np.random.default_rng(seed)
    return {"i": rng.integers(-depth, depth, ishape), "d": np.array([depth], np.int64),
            "v": np.array([-1.5, 2.5], np.float32)}


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot_dynamic(tmp_path, axis):
    # (onnx.reference takes only a 0-D depth)
    check_shapes(tmp_path, _m(axis), [_feeds((2, 3), 4, 0), _feeds((3, 1), 2, 1),
                                      _feeds((1, 5), 7, 2)], engine="onnxruntime")


def test_one_hot_dynamic_sizes_are_checked(tmp_path):
    f = _feeds((2, 3), 4, 0)
    check_rejects(tmp_path, _m(-1), [
        dict(f, v=np.array([0, 1, 2], np.float32)),
        dict(f, d=np.array([4, 4], np.int64)),
        dict(f, d=np.array([0], np.int64))],
        r"node 'oh' \(OneHot\): (values must have 2 elements|depth must have one element"
        r"|depth must be positive)")
