"""The im2col written in the packed kernel's B layout (passes/optimize/im2col_packed.py).

Stride-1 convs of one image write their im2col matrix as column panels
``[M/nb, K/kb, kb, nb]``; the matmul's own packing of that matrix must fold
away, and the numbers must match onnx.reference wherever an output row
crosses a panel boundary, at panel-boundary remainders, with dilations, with
zero-padded rows and columns, and with the im2col split across threads.
"""
from __future__ import annotations

import numpy as np
import onnx.helper as h
import pytest
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.passes.optimize.im2col_packed import max_pieces, row_pieces
from test_o3_numerics import N, Cases, rand


def test_row_pieces():
    """An output row cut where it crosses a panel boundary; the pieces cover
    the row once, each inside one panel."""
    for ow in (1, 7, 14, 28, 32, 40, 56, 100):
        for r in range(40):
            pieces = row_pieces(r, ow, 32)
            assert sum(n for _, n, _, _ in pieces) == ow
            assert [o for o, _, _, _ in pieces] == list(np.cumsum([0] + [n for _, n, _, _ in pieces])[:-1])
            for o, n, q, j in pieces:
                assert (r * ow + o) == q * 32 + j and j + n <= 32
            assert len(pieces) <= max_pieces(ow, 32)
    assert max_pieces(56, 32) == 3 and max_pieces(28, 32) == 2 and max_pieces(32, 32) == 1
    assert max_pieces(7, 32) == 2 and max_pieces(64, 32) == 2


# (x shape, w shape, attrs): OW of 40 (rows of up to 3 pieces), 32 (whole
# panels), 7 (several rows per panel, M = 49 padded to 64); K of 45 (padded
# to 48 rows); dilation 2; 12 filters (A padded to whole row blocks); 1x1
# convs whose input is packed (M = 196, padded to 224, K = 20 to 24; and 128
# filters over whole column blocks, see conv.pack_one_by_one); a 1xK kernel
# on a long row
CONVS = [
    ((1, 5, 12, 40), (16, 5, 3, 3), dict(pads=[1, 1, 1, 1])),
    ((1, 8, 34, 34), (8, 8, 3, 3), dict()),
    ((1, 6, 11, 11), (12, 6, 5, 5), dict(pads=[1, 1, 1, 1])),
    ((1, 4, 20, 20), (8, 4, 3, 3), dict(dilations=[2, 2], pads=[2, 2, 2, 2])),
    ((1, 20, 14, 14), (24, 20, 1, 1), dict()),
    ((1, 16, 8, 8), (128, 16, 1, 1), dict()),
    ((1, 3, 1, 300), (8, 3, 1, 7), dict(pads=[0, 3, 0, 3])),
]


def _model(convs, bias=True):
    c = Cases()
    for i, (xs, ws, attrs) in enumerate(convs):
        c.input(f"x{i}", list(xs), rand(*xs))
        c.weight(f"w{i}", rand(*ws) * 0.2)
        if bias:
            c.weight(f"b{i}", rand(ws[0]))
        c.conv(i, bias, relu=i % 2 == 0, **attrs)
    return c


def test_packed_im2col_numerics(tmp_path):
    c = _model(CONVS)
    m = c.model()
    sess = ExecutionSession(onnx_mlir_py.compile(m, output=tmp_path / "m.so", opt_level=3))
    got = sess.run([c.feeds[f"x{i}"] for i in range(len(CONVS))])
    want = ReferenceEvaluator(m).run(None, c.feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


def test_packed_im2col_threads_and_dynamic_batch(tmp_path):
    """The im2col's forall over channels (K x M of 144 x 900 and more), at 1
    and 2 threads; a dynamic batch runs the one-image kernel per image."""
    c = Cases()
    c.input("x", [1, 16, 30, 30], rand(1, 16, 30, 30))
    c.weight("w", rand(24, 16, 3, 3) * 0.2)
    c.input("xd", ["N", 16, 20, 20])
    c.weight("wd", rand(16, 16, 3, 3) * 0.2)
    c.weight("bd", rand(16))
    c.nodes += [N("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1]),
                N("Conv", ["xd", "wd", "bd"], ["yd"], pads=[1, 1, 1, 1])]
    c.outputs += ["y", "yd"]
    m = c.model()
    sess = ExecutionSession(onnx_mlir_py.compile(m, output=tmp_path / "m.so", opt_level=3))
    assert sess.multithreaded
    ref = ReferenceEvaluator(m)
    for n in (1, 2):
        sess.set_num_threads(n)
        for batch in (3, 1):
            feeds = {"x": c.feeds["x"], "xd": rand(batch, 16, 20, 20)}
            for g, w in zip(sess.run([feeds["x"], feeds["xd"]]), ref.run(None, feeds)):
                np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("xs, ws, attrs", CONVS[:6])
def test_packing_folds_away(tmp_path, xs, ws, attrs):
    """After the conv rewrite and the matmul packing, the packed kernel reads
    the im2col panels directly: no linalg.pack / unpack is left to copy them."""
    import mlir.ir as ir
    from onnx_mlir_py.context import make_context
    from onnx_mlir_py.passes.optimize import _canonicalize, convs_to_matmul, pack_matmuls
    from onnx_mlir_py.target import target_for
    c = _model([(xs, ws, attrs)], bias=False)
    path = onnx_mlir_py.compile(c.model(), output=tmp_path / "m.mlir", emit="EmitMLIR")
    target = target_for("x86-64-v4")
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(open(path).read())
        assert convs_to_matmul(module, False, (target.matmul_tile[2], target.matmul_tile[1])) == 1
        assert "linalg.unpack" in str(module)
        pack_matmuls(module, target)
        _canonicalize(module)
        text = str(module)
    assert "linalg.unpack" not in text and "linalg.pack " not in text
    assert "linalg.generic" in text         # the packed contraction
