import pytest
from helpers import infer_and_compare
from _common import i64, one

CASES = [  # starts, ends, axes, steps
    ([1], [3], [0], None), ([0, 1], [-1, 100], None, None), ([-3], [-1], [1], None),
    ([5], [-100], [0], [-1]), ([0], [10], [1], [3]), ([2], [1], [0], None),
    ([9223372036854775807], [-9223372036854775807], [0], [-2]),
]


@pytest.mark.parametrize("opset", [10, 11, 13])
@pytest.mark.parametrize("starts,ends,axes,steps", CASES)
def test_slice(opset, starts, ends, axes, steps):
    inits = [i64("s", starts), i64("e", ends)]
    if axes is not None or steps is not None:
        inits.append(i64("a", axes if axes is not None else list(range(len(starts)))))
    if steps is not None:
        inits.append(i64("st", steps))
    infer_and_compare(one("Slice", [6, 7], opset, inits))


@pytest.mark.parametrize("starts,ends,axes", [([1], [3], [0]), ([0, 1], [-1, 100], None)])
def test_slice_v1(starts, ends, axes):
    kw = {"starts": starts, "ends": ends}
    if axes is not None:
        kw["axes"] = axes
    infer_and_compare(one("Slice", [6, 7], 7, **kw))


def test_slice_dynamic_dim():
    infer_and_compare(one("Slice", ["N", 7], 13, [i64("s", [1]), i64("e", [3]),
                                                   i64("a", [1])]))


FOLD_CASES = [  # data shape, starts, ends, axes, steps
    ([3], [-10], [-4], [0], [-1]),                          # start below -dim, step < 0
    ([3, 1, 4], [0, -2 ** 62, 0], [-1, -2, -2], [0, 2, 1], [-1, -1, 1]),   # fuzz s3112-137
    ([3, 4], [-2 ** 62, 5], [-2 ** 62, -100], [0, 1], [-1, -2]),
    ([3, 4], [1, -1], [3, -5], [0, 1], [1, -1]),
    ([3, 4], [-7, 0], [2 ** 62, 3], [-2, -1], [2, 1]),
]


@pytest.mark.parametrize("shape,starts,ends,axes,steps", FOLD_CASES)
def test_constant_slice_folds_as_the_spec_clamps(shape, starts, ends, axes, steps):
    """A Slice of a constant is folded at compile time. onnx.reference (numpy
    slicing) gave nothing for a negative step and a start below -dim, which
    the spec clamps to 0: a folded ReduceSum of [1, 2, 3][-10:-4:-1] was 0,
    not 1. Folded (data a constant) and not (data an input) vs onnxruntime."""
    import numpy as np
    from onnx import TensorProto as T
    from onnx import helper as h
    from onnx import numpy_helper as nh

    from onnx_mlir_py.testing.check import assert_match, reference, run_compiled
    data = np.arange(1, 1 + int(np.prod(shape)), dtype=np.float32).reshape(shape)
    params = [nh.from_array(np.array(v, np.int64), n)
              for n, v in (("s", starts), ("e", ends), ("a", axes), ("st", steps))]
    nodes = [h.make_node("Slice", ["x", "s", "e", "a", "st"], ["y"]),
             h.make_node("ReduceSum", ["y"], ["r"], keepdims=0),
             h.make_node("Add", ["y", "z"], ["o1"]), h.make_node("Add", ["r", "z"], ["o2"])]
    outs = [h.make_tensor_value_info(o, T.FLOAT, None) for o in ("o1", "o2")]
    z = h.make_tensor_value_info("z", T.FLOAT, [1])
    feeds = {"z": np.array([0.5], np.float32)}
    for const in (True, False):
        if const:
            g = h.make_graph(nodes, "g", [z], outs, params + [nh.from_array(data, "x")])
            f = feeds
        else:
            g = h.make_graph(nodes, "g", [z, h.make_tensor_value_info("x", T.FLOAT, shape)],
                             outs, params)
            f = dict(feeds, x=data)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
        got = run_compiled(m, f, 0)
        want = reference(m, f, "onnxruntime")
        assert [a.shape for a in got] == [b.shape for b in want], (const, got, want)
        assert_match(got, want)
