"""Strided ``memref.copy`` -> ``linalg.copy`` (then loops).

``finalize-memref-to-llvm`` lowers a copy between non-contiguous memrefs
(e.g. the subview a ``tensor.insert_slice`` bufferizes into) to a call to
``memrefCopy`` from libmlir_c_runner_utils, which a self-contained .so does
not link. As a ``linalg.copy`` the copy becomes plain loops instead.
Contiguous copies are left alone (they become ``llvm.memcpy``). Run after
bufferization, before ``convert-linalg-to-loops``.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import linalg

from onnx_mlir_py.ir_util import walk_ops


def _strided(t: ir.Type) -> bool:
    if not isinstance(t, ir.MemRefType):
        return False
    lay = t.layout
    if isinstance(lay, ir.AffineMapAttr):
        m = lay.value
        return m != ir.AffineMap.get_identity(m.n_dims)
    return True  # strided<...> layout


def strided_copies_to_linalg(module: ir.Module) -> int:
    with module.context:
        found = walk_ops(module, lambda o: o.name == "memref.copy" and (
            _strided(o.operands[0].type) or _strided(o.operands[1].type)))
        for o in found:
            with ir.InsertionPoint(o), o.location:
                linalg.copy(o.operands[0], outs=[o.operands[1]])
            o.erase()
    return len(found)
