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
