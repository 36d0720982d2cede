"""Byte-level damage of real (small) models: truncation at many offsets and
single-bit flips at seeded positions. A damaged file must be refused with a
one-line error, or, when it still parses, compile to a model whose results
match onnxruntime's (or be refused cleanly)."""
from __future__ import annotations

import numpy as np
from onnx import helper as h

from onnx_mlir_py.testing.corpus.case import F, I64, Case, Run, fx, model


def _cnn():
    nodes = [h.make_node("Conv", ["x", "w", "b"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             h.make_node("Relu", ["c"], ["r"], name="relu"),
             h.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2],
                         strides=[2, 2]),
             h.make_node("Flatten", ["p"], ["f"], name="flat"),
             h.make_node("Gemm", ["f", "gw", "gb"], ["y"], name="fc", transB=1)]
    inits = {"w": fx(2, 1, 3, 3, seed=1), "b": fx(2, seed=2), "gw": fx(3, 32, seed=3),
             "gb": fx(3, seed=4)}
    return model(nodes, [("x", F, [1, 1, 8, 8])], [("y", F, [1, 3])], inits), [fx(1, 1, 8, 8)]


def _mlp():
    nodes = [h.make_node("MatMul", ["x", "w1"], ["a"], name="mm1"),
             h.make_node("Add", ["a", "b1"], ["ab"], name="add1"),
             h.make_node("Tanh", ["ab"], ["t"], name="tanh"),
             h.make_node("MatMul", ["t", "w2"], ["m2"], name="mm2"),
             h.make_node("Softmax", ["m2"], ["y"], name="sm", axis=-1)]
    inits = {"w1": fx(4, 6, seed=5), "b1": fx(6, seed=6), "w2": fx(6, 3, seed=7)}
    return model(nodes, [("x", F, ["n", 4])], [("y", F, ["n", 3])], inits), [fx(5, 4, seed=8)]


def _shapes():
    """A value-dependent shape sub-graph: Shape -> Gather -> Concat -> Reshape."""
    nodes = [h.make_node("Shape", ["x"], ["s"], name="shape"),
             h.make_node("Gather", ["s", "i0"], ["d0"], name="gather", axis=0),
             h.make_node("Concat", ["d0", "m1"], ["ns"], name="concat", axis=0),
             h.make_node("Reshape", ["x", "ns"], ["r"], name="reshape"),
             h.make_node("Transpose", ["r"], ["t"], name="transpose", perm=[1, 0]),
             h.make_node("Slice", ["t", "st", "en"], ["y"], name="slice")]
    inits = {"i0": np.array([0], np.int64), "m1": np.array([-1], np.int64),
             "st": np.array([1], np.int64), "en": np.array([5], np.int64)}
    return (model(nodes, [("x", F, ["b", 3, 4])], [("y", F, [None, "b"])], inits),
            [fx(2, 3, 4, seed=9)])


def _where():
    nodes = [h.make_node("Greater", ["x", "z"], ["g"], name="gt"),
             h.make_node("Where", ["g", "x", "z"], ["w"], name="where"),
             h.make_node("ReduceSum", ["w", "ax"], ["s"], name="rsum", keepdims=1),
             h.make_node("Cast", ["s"], ["y"], name="cast", to=I64)]
    inits = {"z": np.zeros((1, 4), np.float32), "ax": np.array([1], np.int64)}
    return model(nodes, [("x", F, [3, 4])], [("y", I64, [3, 1])], inits), \
        [fx(3, 4, seed=10) * 10]


BASES = {"cnn": _cnn, "mlp": _mlp, "shapes": _shapes, "where": _where}


def cases() -> list[Case]:
    out = []
    for base, make in BASES.items():
        m, inputs = make()
        data = m.SerializeToString()
        n = len(data)
        cuts = sorted({0, 1, 2, 3, 7, 16, n // 8, n // 4, n // 3, n // 2, 2 * n // 3,
                       3 * n // 4, 7 * n // 8, n - 16, n - 3, n - 1} - {n})
        for k in cuts:
            out.append(Case(f"damage/{base}/truncate_{k}_of_{n}", "damage", data[:k],
                            expect="clean", runs=[Run(inputs)]))
        rng = np.random.default_rng(len(out) + n)
        for bit in sorted(rng.choice(n * 8, 14, replace=False)):
            b = bytearray(data)
            b[bit // 8] ^= 1 << (bit % 8)
            out.append(Case(f"damage/{base}/bitflip_{bit // 8}.{bit % 8}", "damage", bytes(b),
                            expect="clean", runs=[Run(inputs)]))
    out.append(Case("damage/empty_file", "damage", b"", match="model"))
    out.append(Case("damage/not_protobuf", "damage", b"\x89PNG\r\n\x1a\n" + bytes(64),
                    match="model"))
    out.append(Case("damage/text_file", "damage", b"ir_version: 8\ngraph { }\n",
                    match="model"))
    return out
