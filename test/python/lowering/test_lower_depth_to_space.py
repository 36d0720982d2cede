"""DepthToSpace / SpaceToDepth (DCR, CRD), OneHot, EyeLike."""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from lowering_util import check
from node_suite import run_case

N = helper.make_node
R = np.random.default_rng(4)

NODE_TESTS = ["test_depthtospace_crd_mode_example", "test_depthtospace_example",
              "test_spacetodepth", "test_spacetodepth_crd_mode_example",
              "test_onehot_negative_indices", "test_onehot_with_negative_axis",
              "test_onehot_without_axis", "test_eyelike_populate_off_main_diagonal",
              "test_eyelike_with_dtype"]


@pytest.mark.parametrize("name", NODE_TESTS)
def test_node(name):
    run_case(name)


@pytest.mark.parametrize("mode", ["DCR", "CRD"])
def test_depth_space_round_trip_dynamic_batch(mode):
    x = R.standard_normal((2, 8, 3, 2)).astype(np.float32)
    check([N("DepthToSpace", ["x"], ["y"], blocksize=2, mode=mode),
           N("SpaceToDepth", ["y"], ["z"], blocksize=2)], {"x": x}, ["y", "z"],
          dyn_inputs=("x",), opset=13)


def test_one_hot_axis0_int_values_and_eye_like_k():
    idx = np.array([[0, 2], [-1, 5]], np.int64)
    inits = [("d", np.array(4, np.int64)), ("v", np.array([-1, 7], np.int32))]
    check([N("OneHot", ["i", "d", "v"], ["y"], axis=0),
           N("EyeLike", ["e"], ["z"], k=-1, dtype=TensorProto.INT32)],
          {"i": idx, "e": np.zeros((3, 5), np.float32)}, ["y", "z"], inits=inits, opset=11)


@pytest.mark.parametrize("opt_level", [0, 3])
@pytest.mark.parametrize("op,mode", [("DepthToSpace", "DCR"), ("DepthToSpace", "CRD"),
                                     ("SpaceToDepth", None)])
def test_space_depth_all_dims_dynamic(tmp_path, op, mode, opt_level):
    """Every dim dynamic (channels too): compiled once, 3 shapes vs onnxruntime;
    a size the block does not divide is an error from the compiled code."""
    from dynamic_util import check_rejects, check_shapes, model
    kw = {"mode": mode} if mode else {}
    m = model([N(op, ["x"], ["y"], name="sd", blocksize=2, **kw)],
              [("x", TensorProto.FLOAT, ["N", "C", "H", "W"])], [("y", TensorProto.FLOAT, None)])
    if op == "DepthToSpace":
        shapes, bad = [(1, 4, 2, 3), (2, 8, 3, 1), (1, 12, 1, 2)], (1, 6, 2, 2)
    else:
        shapes, bad = [(1, 1, 2, 4), (2, 3, 4, 2), (1, 2, 6, 6)], (1, 2, 3, 4)
    feeds = [{"x": R.standard_normal(s).astype(np.float32)} for s in shapes]
    check_shapes(tmp_path, m, feeds, opt_level, engine="onnxruntime")
    check_rejects(tmp_path, m, [{"x": np.zeros(bad, np.float32)}],
                  r"node 'sd' \(" + op + r"\): (channel dim 6|height 3) is not divisible")
