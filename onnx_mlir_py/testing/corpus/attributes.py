"""Hostile attributes (and constant operands that act as attributes): zero or
negative strides, negative pads, axes out of range, kernels larger than the
input, group not dividing the channels, dilations 0, perm not a permutation,
Split sizes not summing, Reshape with two -1, ... Each must be refused at
compile time with a one-line error naming the node ('bad')."""
from __future__ import annotations

import numpy as np
from onnx import helper as h

from onnx_mlir_py.testing.corpus.case import F, I64, Case, Run, fx, node_case

X4 = [("x", F, [1, 2, 6, 6])]
W = {"w": fx(4, 2, 3, 3)}


def _i(v):
    return np.asarray(v, np.int64)


def _conv():
    c = "conv"
    yield "strides_zero", "Conv", X4, {"strides": [0, 1]}, W
    yield "strides_negative", "Conv", X4, {"strides": [-1, 1]}, W
    yield "strides_wrong_length", "Conv", X4, {"strides": [1, 1, 1]}, W
    yield "pads_negative", "Conv", X4, {"pads": [-1, 0, 0, 0]}, W
    yield "pads_wrong_length", "Conv", X4, {"pads": [1, 1]}, W
    yield "dilations_zero", "Conv", X4, {"dilations": [0, 1]}, W
    yield "dilations_negative", "Conv", X4, {"dilations": [1, -2]}, W
    yield "kernel_larger_than_input", "Conv", X4, {}, {"w": fx(4, 2, 7, 7)}
    yield "dilated_kernel_larger", "Conv", X4, {"dilations": [3, 3]}, W
    yield "kernel_shape_mismatch", "Conv", X4, {"kernel_shape": [2, 2]}, W
    yield "group_not_dividing", "Conv", [("x", F, [1, 3, 6, 6])], {"group": 2}, \
        {"w": fx(4, 1, 3, 3)}
    yield "group_zero", "Conv", X4, {"group": 0}, W
    yield "group_negative", "Conv", X4, {"group": -1}, W
    yield "group_channels_mismatch", "Conv", X4, {"group": 2}, W
    yield "weight_channels_mismatch", "Conv", X4, {}, {"w": fx(4, 3, 3, 3)}
    yield "weight_rank_3", "Conv", X4, {}, {"w": fx(4, 2, 3)}
    yield "bias_wrong_length", "Conv", X4, {}, {"w": W["w"], "b": fx(3)}
    yield "auto_pad_bogus", "Conv", X4, {"auto_pad": "SIDEWAYS"}, W
    yield "input_rank_2", "Conv", [("x", F, [2, 6])], {}, {"w": fx(4, 2)}
    yield "ConvTranspose/strides_zero", "ConvTranspose", X4, {"strides": [0, 1]}, \
        {"w": fx(2, 4, 3, 3)}
    yield "ConvTranspose/group_not_dividing", "ConvTranspose", [("x", F, [1, 3, 4, 4])], \
        {"group": 2}, {"w": fx(3, 2, 3, 3)}
    yield "ConvTranspose/output_padding_too_big", "ConvTranspose", X4, \
        {"strides": [2, 2], "output_padding": [3, 3]}, {"w": fx(2, 4, 3, 3)}
    yield "ConvTranspose/dilations_zero", "ConvTranspose", X4, {"dilations": [0, 0]}, \
        {"w": fx(2, 4, 3, 3)}
    del c


def _pool():
    for op in ("MaxPool", "AveragePool", "LpPool"):
        yield f"{op}/kernel_missing", op, X4, {}, {}
        yield f"{op}/kernel_larger_than_input", op, X4, {"kernel_shape": [7, 7]}, {}
        yield f"{op}/strides_zero", op, X4, {"kernel_shape": [2, 2], "strides": [0, 0]}, {}
        yield f"{op}/pads_negative", op, X4, {"kernel_shape": [2, 2], "pads": [0, 0, -1, 0]}, {}
        yield f"{op}/kernel_zero", op, X4, {"kernel_shape": [0, 2]}, {}
        yield f"{op}/kernel_wrong_rank", op, X4, {"kernel_shape": [2, 2, 2]}, {}
    yield "MaxPool/dilations_zero", "MaxPool", X4, {"kernel_shape": [2, 2], "dilations": [0, 1]}, {}
    yield "MaxPool/storage_order_2", "MaxPool", X4, {"kernel_shape": [2, 2],
                                                      "storage_order": 2}, {}
    yield "MaxPool/pads_not_smaller_than_kernel", "MaxPool", X4, \
        {"kernel_shape": [2, 2], "pads": [2, 2, 2, 2]}, {}
    yield "AveragePool/auto_pad_bogus", "AveragePool", X4, \
        {"kernel_shape": [2, 2], "auto_pad": "BOGUS"}, {}
    yield "LpPool/p_zero", "LpPool", X4, {"kernel_shape": [2, 2], "p": 0}, {}
    yield "GlobalAveragePool/rank_1", "GlobalAveragePool", [("x", F, [5])], {}, {}


def _layout():
    x3 = [("x", F, [2, 3, 4])]
    yield "Transpose/perm_duplicate", "Transpose", x3, {"perm": [0, 0, 1]}, {}
    yield "Transpose/perm_out_of_range", "Transpose", x3, {"perm": [0, 1, 3]}, {}
    yield "Transpose/perm_negative", "Transpose", x3, {"perm": [0, -1, 1]}, {}
    yield "Transpose/perm_too_short", "Transpose", x3, {"perm": [1, 0]}, {}
    yield "Transpose/perm_too_long", "Transpose", x3, {"perm": [0, 1, 2, 3]}, {}
    yield "Gather/axis_out_of_range", "Gather", x3, {"axis": 3}, {"i": _i([0])}
    yield "Gather/axis_negative_out_of_range", "Gather", x3, {"axis": -4}, {"i": _i([0])}
    yield "Gather/constant_index_out_of_range", "Gather", x3, {"axis": 1}, {"i": _i([3])}
    yield "Gather/constant_index_too_negative", "Gather", x3, {"axis": 2}, {"i": _i([-5])}
    yield "Gather/float_indices", "Gather", x3, {"axis": 0}, {"i": np.array([0.0], np.float32)}
    yield "GatherElements/axis_out_of_range", "GatherElements", x3, {"axis": 5}, \
        {"i": np.zeros((2, 3, 4), np.int64)}
    yield "GatherElements/rank_mismatch", "GatherElements", x3, {"axis": 0}, \
        {"i": np.zeros((2, 3), np.int64)}
    yield "GatherND/batch_dims_too_big", "GatherND", x3, {"batch_dims": 3}, \
        {"i": np.zeros((2, 1), np.int64)}
    yield "GatherND/index_tuple_too_long", "GatherND", x3, {}, {"i": np.zeros((1, 4), np.int64)}
    yield "Concat/axis_out_of_range", "Concat", [("x", F, [2, 3]), ("z", F, [2, 3])], \
        {"axis": 2}, {}
    yield "Concat/axis_missing", "Concat", [("x", F, [2, 3]), ("z", F, [2, 3])], {}, {}
    yield "Concat/rank_mismatch", "Concat", [("x", F, [2, 3]), ("z", F, [2, 3, 1])], \
        {"axis": 0}, {}
    yield "Concat/dim_mismatch", "Concat", [("x", F, [2, 3]), ("z", F, [2, 4])], {"axis": 0}, {}
    yield "Concat/dtype_mismatch", "Concat", [("x", F, [2, 3]), ("z", I64, [2, 3])], \
        {"axis": 0}, {}
    yield "Flatten/axis_out_of_range", "Flatten", x3, {"axis": 4}, {}
    yield "Softmax/axis_out_of_range", "Softmax", x3, {"axis": 3}, {}
    yield "LogSoftmax/axis_too_negative", "LogSoftmax", x3, {"axis": -4}, {}
    yield "ArgMax/axis_out_of_range", "ArgMax", x3, {"axis": 3}, {}
    yield "CumSum/axis_out_of_range", "CumSum", x3, {}, {"a": _i(7)}
    yield "ReduceSum/axis_out_of_range", "ReduceSum", x3, {}, {"a": _i([3])}
    yield "ReduceSum/axes_duplicate", "ReduceSum", x3, {}, {"a": _i([1, 1])}
    yield "ReduceMean/axes_attr_out_of_range", "ReduceMean", x3, {"axes": [-4]}, {}
    yield "Squeeze/axis_not_one", "Squeeze", x3, {}, {"a": _i([1])}
    yield "Squeeze/axis_out_of_range", "Squeeze", x3, {}, {"a": _i([3])}
    yield "Unsqueeze/axes_duplicate", "Unsqueeze", x3, {}, {"a": _i([0, 0])}
    yield "Unsqueeze/axis_out_of_range", "Unsqueeze", x3, {}, {"a": _i([5])}
    yield "DepthToSpace/blocksize_zero", "DepthToSpace", X4, {"blocksize": 0}, {}
    yield "DepthToSpace/blocksize_not_dividing", "DepthToSpace", X4, {"blocksize": 2}, {}
    yield "SpaceToDepth/blocksize_not_dividing", "SpaceToDepth", X4, {"blocksize": 4}, {}
    yield "SpaceToDepth/blocksize_negative", "SpaceToDepth", X4, {"blocksize": -2}, {}
    yield "Cast/to_bogus", "Cast", x3, {"to": 999}, {}
    yield "Cast/to_undefined", "Cast", x3, {"to": 0}, {}
    yield "Tile/repeats_negative", "Tile", x3, {}, {"r": _i([1, -1, 1])}
    yield "Tile/repeats_wrong_length", "Tile", x3, {}, {"r": _i([1, 2])}
    yield "TopK/k_negative", "TopK", x3, {"axis": 2}, {"k": _i([-1])}, {"n_out": 2}
    yield "TopK/k_larger_than_axis", "TopK", x3, {"axis": 2}, {"k": _i([5])}, {"n_out": 2}
    yield "OneHot/axis_out_of_range", "OneHot", [("x", I64, [3])], {"axis": 3}, \
        {"d": _i(4), "v": np.array([0, 1], np.float32)}
    yield "Trilu/k_not_scalar", "Trilu", x3, {}, {"k": _i([1, 2])}
    yield "LayerNormalization/axis_out_of_range", "LayerNormalization", x3, {"axis": 3}, \
        {"s": fx(4)}


def _split_reshape():
    x3 = [("x", F, [2, 6, 4])]
    yield "Split/sizes_not_summing", "Split", x3, {"axis": 1}, {"s": _i([2, 2])}, {"n_out": 2}
    yield "Split/sizes_negative", "Split", x3, {"axis": 1}, {"s": _i([8, -2])}, {"n_out": 2}
    yield "Split/sizes_count_mismatch", "Split", x3, {"axis": 1}, {"s": _i([2, 2, 2])}, \
        {"n_out": 2}
    yield "Split/axis_out_of_range", "Split", x3, {"axis": 3}, {}, {"n_out": 2}
    yield "Split/num_outputs_zero", "Split", x3, {"axis": 1, "num_outputs": 0}, {}, \
        {"n_out": 1, "opset": 18}
    yield "Split/num_outputs_mismatch", "Split", x3, {"axis": 1, "num_outputs": 3}, {}, \
        {"n_out": 2, "opset": 18}
    yield "Split/num_outputs_and_split", "Split", x3, {"axis": 1, "num_outputs": 2}, \
        {"s": _i([3, 3])}, {"n_out": 2, "opset": 18}
    yield "Reshape/two_minus_one", "Reshape", x3, {}, {"s": _i([-1, -1])}
    yield "Reshape/count_mismatch", "Reshape", x3, {}, {"s": _i([5, 10])}
    yield "Reshape/negative_dim", "Reshape", x3, {}, {"s": _i([-2, 24])}
    yield "Reshape/zero_out_of_rank", "Reshape", x3, {}, {"s": _i([1, 1, 1, 0, 48])}
    yield "Reshape/allowzero_with_minus_one", "Reshape", x3, {"allowzero": 1}, \
        {"s": _i([0, -1])}, {"opset": 14}
    yield "Reshape/shape_rank_2", "Reshape", x3, {}, {"s": _i([[4, 12]])}
    yield "Slice/step_zero", "Slice", x3, {}, {"st": _i([0]), "en": _i([1]), "ax": _i([0]),
                                               "sp": _i([0])}
    yield "Slice/axis_out_of_range", "Slice", x3, {}, {"st": _i([0]), "en": _i([1]),
                                                       "ax": _i([3])}
    yield "Slice/axes_duplicate", "Slice", x3, {}, {"st": _i([0, 0]), "en": _i([1, 1]),
                                                    "ax": _i([1, 1])}
    yield "Slice/starts_ends_length_mismatch", "Slice", x3, {}, {"st": _i([0, 0]),
                                                                  "en": _i([1])}
    yield "Expand/incompatible_shape", "Expand", x3, {}, {"s": _i([3, 6, 4])}
    yield "Expand/negative_dim", "Expand", x3, {}, {"s": _i([2, -6, 4])}
    yield "Pad/pads_wrong_length", "Pad", x3, {}, {"p": _i([1, 1])}
    yield "Pad/mode_bogus", "Pad", x3, {"mode": "mirror"}, {"p": _i([0, 0, 0, 0, 0, 0])}
    yield "Pad/negative_beyond_size", "Pad", x3, {}, {"p": _i([-3, 0, 0, 0, 0, 0])}
    yield "Resize/scales_zero", "Resize", X4, {}, {"r": np.zeros(0, np.float32),
                                                   "sc": np.array([1, 1, 0, 2], np.float32)}
    yield "Resize/scales_negative", "Resize", X4, {}, {"r": np.zeros(0, np.float32),
                                                       "sc": np.array([1, 1, -2, 2], np.float32)}
    yield "Resize/scales_wrong_length", "Resize", X4, {}, {"r": np.zeros(0, np.float32),
                                                           "sc": np.array([2, 2], np.float32)}
    yield "Resize/sizes_negative", "Resize", X4, {}, \
        {"r": np.zeros(0, np.float32), "sc": np.zeros(0, np.float32), "sz": _i([1, 2, -3, 3])}
    yield "Resize/mode_bogus", "Resize", X4, {"mode": "bicubic"}, \
        {"r": np.zeros(0, np.float32), "sc": np.array([1, 1, 2, 2], np.float32)}
    yield "Resize/coordinate_mode_bogus", "Resize", X4, \
        {"coordinate_transformation_mode": "sideways"}, \
        {"r": np.zeros(0, np.float32), "sc": np.array([1, 1, 2, 2], np.float32)}
    yield "Resize/scales_and_sizes", "Resize", X4, {}, \
        {"r": np.zeros(0, np.float32), "sc": np.array([1, 1, 2, 2], np.float32),
         "sz": _i([1, 2, 12, 12])}


def _matmul_norm():
    yield "MatMul/inner_mismatch", "MatMul", [("x", F, [2, 3]), ("z", F, [4, 5])], {}, {}
    yield "MatMul/batch_mismatch", "MatMul", [("x", F, [2, 2, 3]), ("z", F, [3, 3, 5])], {}, {}
    yield "Gemm/inner_mismatch", "Gemm", [("x", F, [2, 3])], {}, {"w": fx(4, 5)}
    yield "Gemm/bias_not_broadcastable", "Gemm", [("x", F, [2, 3])], {}, {"w": fx(3, 5),
                                                                          "c": fx(3)}
    yield "Gemm/rank_3", "Gemm", [("x", F, [2, 3, 1])], {}, {"w": fx(3, 5)}
    yield "Add/broadcast_mismatch", "Add", [("x", F, [2, 3]), ("z", F, [4])], {}, {}
    yield "Add/dtype_mismatch", "Add", [("x", F, [2, 3]), ("z", I64, [2, 3])], {}, {}
    yield "Where/broadcast_mismatch", "Where", [("c", 9, [2]), ("x", F, [3]), ("z", F, [3])], \
        {}, {}
    yield "BatchNormalization/scale_wrong_length", "BatchNormalization", X4, {}, \
        {"s": fx(3), "b": fx(2), "m": fx(2), "v": np.ones(2, np.float32)}
    yield "InstanceNormalization/scale_wrong_length", "InstanceNormalization", X4, {}, \
        {"s": fx(5), "b": fx(2)}
    yield "LRN/size_zero", "LRN", X4, {"size": 0}, {}
    yield "LRN/size_missing", "LRN", X4, {}, {}
    yield "Einsum/bogus_equation", "Einsum", [("x", F, [2, 3])], {"equation": "ij,->k"}, {}
    yield "Einsum/operand_count_mismatch", "Einsum", [("x", F, [2, 3]), ("z", F, [3, 4])], \
        {"equation": "ij->ij"}, {}
    yield "Einsum/rank_mismatch", "Einsum", [("x", F, [2, 3])], {"equation": "ijk->i"}, {}
    yield "Clip/min_not_scalar", "Clip", [("x", F, [2, 3])], {}, {"lo": fx(2)}
    yield "GRU/hidden_size_mismatch", "GRU", [("x", F, [2, 1, 3])], {"hidden_size": 5}, \
        {"w": fx(1, 12, 3), "r": fx(1, 12, 4)}
    yield "LSTM/direction_bogus", "LSTM", [("x", F, [2, 1, 3])], \
        {"hidden_size": 2, "direction": "sideways"}, {"w": fx(1, 8, 3), "r": fx(1, 8, 2)}
    yield "RNN/activation_bogus", "RNN", [("x", F, [2, 1, 3])], \
        {"hidden_size": 2, "activations": ["Swish"]}, {"w": fx(1, 2, 3), "r": fx(1, 2, 2)}
    yield "Conv/attribute_wrong_type", "Conv", X4, {"strides": 1.5}, W
    yield "Transpose/perm_wrong_type", "Transpose", [("x", F, [2, 3])], {"perm": "10"}, {}
    yield "Softmax/unknown_attribute", "Softmax", [("x", F, [2, 3])], {"axes": [1]}, {}


def _more():
    x3 = [("x", F, [2, 3, 4])]
    yield "ScatterElements/constant_index_out_of_range", "ScatterElements", x3, {"axis": 1}, \
        {"i": np.full((2, 3, 4), 3, np.int64), "u": fx(2, 3, 4)}
    yield "ScatterND/constant_index_out_of_range", "ScatterND", x3, {}, \
        {"i": _i([[2]]), "u": fx(1, 3, 4)}
    yield "ScatterND/updates_shape_mismatch", "ScatterND", x3, {}, \
        {"i": _i([[1]]), "u": fx(1, 3, 5)}
    yield "Compress/axis_out_of_range", "Compress", x3, {"axis": 3}, \
        {"c": np.array([True, False])}
    yield "ReverseSequence/batch_axis_equals_time_axis", "ReverseSequence", x3, \
        {"batch_axis": 1, "time_axis": 1}, {"l": _i([1, 1, 1])}
    yield "GridSample/mode_bogus", "GridSample", X4, {"mode": "spline"}, \
        {"g": fx(1, 3, 3, 2)}, {"opset": 16}
    yield "Dropout/ratio_above_one", "Dropout", x3, {}, \
        {"r": np.array(1.5, np.float32), "t": np.array(True)}
    # truthy flags other than 1: onnxruntime reads them as 1 (a result) or refuses
    yield "Gemm/transA_2", "Gemm", [("x", F, [3, 2])], {"transA": 2}, {"w": fx(3, 5)}, \
        {"expect": "clean", "runs": [Run([fx(3, 2)])]}
    yield "Conv1d/kernel_larger_than_input", "Conv", [("x", F, [1, 2, 4])], {}, \
        {"w": fx(3, 2, 5)}
    yield "Conv3d/strides_zero", "Conv", [("x", F, [1, 1, 4, 4, 4])], {"strides": [1, 0, 1]}, \
        {"w": fx(1, 1, 2, 2, 2)}
    yield "MaxUnpool/kernel_missing", "MaxUnpool", X4, {}, {"i": np.zeros((1, 2, 6, 6), np.int64)}
    yield "ArgMin/keepdims_2", "ArgMin", x3, {"axis": 0, "keepdims": 2}, {}
    yield "CumSum/exclusive_2", "CumSum", x3, {"exclusive": 2}, {"a": _i(0)}
    yield "CumSum/reverse_negative", "CumSum", x3, {"reverse": -1}, {"a": _i(0)}
    yield "ReduceSum/keepdims_2", "ReduceSum", x3, {"keepdims": 2}, {"a": _i([1])}
    yield "Hardmax/axis_out_of_range", "Hardmax", x3, {"axis": 5}, {}
    yield "LpNormalization/p_3", "LpNormalization", x3, {"p": 3}, {}
    yield "MeanVarianceNormalization/axes_out_of_range", "MeanVarianceNormalization", x3, \
        {"axes": [0, 7]}, {}
    yield "Shape/start_end_clamped", "Shape", x3, {"start": 5, "end": -9}, {}, \
        {"out_dtype": I64, "expect": "ok", "opset": 15, "runs": [Run([fx(2, 3, 4)])]}
    yield "EyeLike/dtype_bogus", "EyeLike", [("x", F, [3, 3])], {"dtype": 77}, {}
    yield "RandomNormalLike/dtype_bogus", "RandomNormalLike", x3, {"dtype": 77}, {}
    # lowered directly (no longer expanded into its function body): its verifier names it
    yield "Bernoulli/dtype_bogus", "Bernoulli", x3, {"dtype": 42}, {}, \
        {"match": r"'bad' \(Bernoulli\): attribute 'dtype' \(42\)"}
    yield "ConstantOfShape/value_two_elements", "ConstantOfShape", [], \
        {"value": h.make_tensor("v", 1, [2], [1.0, 2.0])}, {"s": _i([2, 3])}
    yield "ConstantOfShape/negative_constant_shape", "ConstantOfShape", [], {}, {"s": _i([2, -3])}
    yield "Range/delta_zero_constant", "Range", [], {}, \
        {"a": np.array(0, np.float32), "b": np.array(5, np.float32),
         "d": np.array(0, np.float32)}
    yield "Unique/axis_out_of_range", "Unique", x3, {"axis": 4}, {}, {"n_out": 4}
    yield "Col2Im/block_shape_wrong_length", "Col2Im", [("x", F, [1, 4, 9])], {}, \
        {"s": _i([4, 4]), "b": _i([2, 2, 2])}, {"opset": 18}
    yield "DFT/axis_out_of_range", "DFT", [("x", F, [1, 8, 1])], {"axis": 5}, {}


def cases() -> list[Case]:
    out = []
    for gen in (_conv, _pool, _layout, _split_reshape, _matmul_norm, _more):
        for name, op, inputs, attrs, inits, *extra in gen():
            kw = dict(extra[0]) if extra else {}
            full = name if "/" in name else f"{op}/{name}"
            out.append(node_case(f"attr/{full}", "attributes", op, inputs, attrs, inits, **kw))
    # an attribute whose value is a graph where a tensor is expected, and the reverse
    g = h.make_graph([], "sub", [], [])
    out.append(node_case("attr/Transpose/perm_is_graph", "attributes", "Transpose",
                         [("x", F, [2, 3])], {"perm": g}))
    return out
