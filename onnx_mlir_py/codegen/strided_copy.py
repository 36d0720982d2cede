"""Strided ``memref.copy`` -> ``linalg.copy`` (then loops).

``finalize-memref-to-llvm`` lowers a copy between non-contiguous memrefs
(e.g. the subview a ``tensor.insert_slice`` bufferizes into) to a call to
``memrefCopy`` from libmlir_c_runner_utils, which a self-contained .so does
not link. As a ``linalg.copy`` the copy becomes plain loops instead.
Contiguous copies are left alone (they become ``llvm.memcpy``), also
through a strided layout (a subview that is one contiguous run). Run after
bufferization, before ``convert-linalg-to-loops``.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import linalg

from onnx_mlir_py.ir_util import walk_ops


def _contiguous(t: ir.MemRefType) -> bool:
    """A static memref whose elements are one contiguous run (upstream's
    isStaticShapeAndContiguousRowMajor: unit strides inside, size-1 dims
    outside), e.g. a batch-1 Concat part's subview: finalize-memref-to-llvm
    copies it with llvm.memcpy (as loops: an 8-lane gather/scatter, YOLO's
    /Concat 0.44 ms)."""
    if not t.has_static_shape:
        return False
    strides, _offset = t.get_strides_and_offset()
    run, d = 1, t.rank - 1
    while d >= 0 and strides[d] == run:
        run *= t.shape[d]
        d -= 1
    while d >= 0 and t.shape[d] == 1:
        d -= 1
    return d < 0


def _strided(t: ir.Type) -> bool:
    if not isinstance(t, ir.MemRefType) or _contiguous(t):
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
