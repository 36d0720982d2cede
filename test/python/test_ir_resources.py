"""onnx_mlir_py.ir_resources: reading dense_resource bytes back. Resources
made by resource_attr are read from the arrays that hold them, per MLIR
context; anything else (a module parsed from text, another context reusing
a name) is read through the print. A wrong table entry would hand a kernel
another constant's weights, so each case checks the bytes."""
from __future__ import annotations

import numpy as np

import mlir.ir as ir
from mlir.dialects import arith

from onnx_mlir_py import ir_resources as R
from onnx_mlir_py.context import make_context


def _const(attr):
    return arith.ConstantOp(attr.type, attr).operation


def _blob_hex(data: bytes) -> str:
    return "0x04000000" + data.hex()


def test_made_resources_read_from_their_arrays_and_agree_with_the_print(monkeypatch):
    ctx = make_context()
    with ctx, ir.Location.unknown():
        t = ir.RankedTensorType.get([4], ir.F32Type.get())
        a = np.arange(4, dtype=np.float32)
        b = np.arange(4, dtype=np.float32) + 10
        ra, rb = R.resource_attr(a, "w", t), R.resource_attr(b, "w", t)   # clash: w, w_1
        ka, kb = R.resource_name(ra), R.resource_name(rb)
        assert ka != kb
        m = ir.Module.create()
        with ir.InsertionPoint(m.body):
            ops = [_const(ra), _const(rb)]
        got = R.resource_blobs(ops)
        assert got == {ka: a.tobytes(), kb: b.tobytes()}
        # views: the same bytes, read from the arrays themselves (not copies)
        views = R.resource_blobs(ops, views=True)
        assert {k: bytes(v) for k, v in views.items()} == got
        assert all(isinstance(v, memoryview) for v in views.values())
        assert np.shares_memory(np.frombuffer(views[ka], np.float32), a)
        # the same through the print (table bypassed)
        monkeypatch.setattr(R, "_remembered", lambda op, out, views=False: False)
        assert R.resource_blobs(ops) == got
        assert R.resource_blobs(ops, views=True) == got


def test_another_context_reusing_a_name_gets_its_own_bytes():
    ctx1 = make_context()
    with ctx1, ir.Location.unknown():
        t = ir.RankedTensorType.get([4], ir.F32Type.get())
        mine = np.full(4, 7.0, np.float32)
        key = R.resource_name(R.resource_attr(mine, "shared_w", t))
    other = np.full(4, -3.0, np.float32)
    src = (f"func.func @f() -> tensor<4xf32> {{\n"
           f"  %c = arith.constant dense_resource<{key}> : tensor<4xf32>\n"
           f"  return %c : tensor<4xf32>\n}}\n"
           f"{{-#\n  dialect_resources: {{ builtin: {{ {key}: \"{_blob_hex(other.tobytes())}\" }} }}\n#-}}")
    ctx2 = make_context()
    with ctx2, ir.Location.unknown():
        m = ir.Module.parse(src)
        op = m.body.operations[0].regions[0].blocks[0].operations[0].operation
        assert R.resource_name(op.attributes["value"]) == key
        assert R.resource_blobs([op]) == {key: other.tobytes()}     # not ctx1's array
    with ctx1:
        assert len(R._known[ctx1][0]) >= 1      # ctx1's entry still there, still its own
        assert R._known[ctx1][0][key] is mine
