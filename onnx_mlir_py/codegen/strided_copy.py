"""Strided ``memref.copy`` -> ``linalg.copy`` (then loops).

``finalize-memref-to-llvm`` lowers a copy between non-contiguous memrefs
(e.g. the subview a ``tensor.insert_slice`` bufferizes into) to a call to
``memrefCopy`` from libmlir_c_runner_utils, which a self-contained .so does
not link. As a ``linalg.copy`` the copy becomes plain loops instead.
Contiguous copies are left alone (they become ``llvm.memcpy``), also
through a strided layout (a subview that is one contiguous run). A copy
whose inner dims are a static contiguous run in both memrefs (a KV-cache
Concat's 64-float rows) becomes loops over the outer dims around a
``memref.copy`` of one run (``llvm.memcpy``): LLVM left the linalg.copy's
row loop scalar. Run after bufferization, before ``convert-linalg-to-loops``.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, memref, scf

from onnx_mlir_py import ir_linalg as linalg
from onnx_mlir_py.ir_util import walk_ops


def _contiguous(t: ir.MemRefType) -> bool:
    """A static memref whose elements are one contiguous run (upstream's
    isStaticShapeAndContiguousRowMajor: unit strides inside, size-1 dims
    outside), e.g. a batch-1 Concat part's subview: finalize-memref-to-llvm
    copies it with llvm.memcpy (as loops: an 8-lane gather/scatter, YOLO's
    /Concat 0.44 ms)."""
    return t.has_static_shape and all(n == 1 for n in t.shape[:_inner_run(t)])


def _inner_run(t: ir.MemRefType) -> int:
    """The first dim of ``t``'s inner dims that are static and laid out as
    one contiguous run (unit innermost stride, each stride the run inside
    it); ``t.rank`` when the innermost dim is not."""
    strides, _offset = t.get_strides_and_offset()
    run, d = 1, t.rank - 1
    while d >= 0 and not t.is_dynamic_dim(d) and strides[d] == run:
        run *= t.shape[d]
        d -= 1
    return d + 1


def _strided(t: ir.Type) -> bool:
    if not isinstance(t, ir.MemRefType) or _contiguous(t):
        return False
    lay = t.layout
    if isinstance(lay, ir.AffineMapAttr):
        m = lay.value
        return m != ir.AffineMap.get_identity(m.n_dims)
    return True  # strided<...> layout


MIN_RUN_BYTES = 64     # shorter runs stay a linalg.copy (a memcpy call each is not worth it)


def _run_start(a: ir.MemRefType, b: ir.MemRefType) -> int | None:
    """The first dim of the inner dims that are one static contiguous run of at
    least MIN_RUN_BYTES in both memrefs (unit innermost stride, each stride
    the run inside it), or None."""
    if a.rank != b.rank or a.rank == 0 or a.element_type != b.element_type:
        return None
    bits = a.element_type.width if hasattr(a.element_type, "width") else 0
    if bits % 8 or not bits:
        return None
    # the run ends where either layout's does or the shapes differ (static vs
    # dynamic)
    k = max(_inner_run(a), _inner_run(b),
            max((d + 1 for d in range(a.rank) if a.shape[d] != b.shape[d]), default=0))
    run = 1
    for n in a.shape[k:]:
        run *= n
    if k == a.rank or run * bits // 8 < MIN_RUN_BYTES:
        return None
    return k


def _run_view(m: ir.Value, ivs: list, k: int) -> ir.Value:
    """The run at outer indices ``ivs`` (dims k.. whole, the outer dims 1)."""
    t = ir.MemRefType(m.type)
    strides, _ = t.get_strides_and_offset()
    dyn = ir.ShapedType.get_dynamic_stride_or_offset()
    shape = [1] * k + list(t.shape[k:])
    res = ir.MemRefType.get(shape, t.element_type,
                            layout=ir.StridedLayoutAttr.get(dyn, strides),
                            memory_space=t.memory_space)
    return memref.subview(m, list(ivs) + [0] * (t.rank - k), shape, [1] * t.rank,
                          result_type=res)


def _copy_runs(src: ir.Value, dst: ir.Value, k: int, ivs: list) -> None:
    """A copy of ``src`` to ``dst`` as loops over dims [len(ivs), k) around
    a memref.copy of one contiguous run each."""
    d = len(ivs)
    idx = ir.IndexType.get()
    if d == k:
        memref.copy(_run_view(src, ivs, k), _run_view(dst, ivs, k))
        return
    t = ir.MemRefType(src.type)
    if t.is_dynamic_dim(d):
        ub = memref.dim(src, arith.constant(idx, d))
    elif t.shape[d] == 1:
        return _copy_runs(src, dst, k, ivs + [arith.constant(idx, 0)])
    else:
        ub = arith.constant(idx, t.shape[d])
    loop = scf.ForOp(arith.constant(idx, 0), ub, arith.constant(idx, 1))
    with ir.InsertionPoint(loop.body):
        _copy_runs(src, dst, k, ivs + [loop.induction_variable])
        scf.YieldOp([])


def strided_copies_to_linalg(module: ir.Module) -> int:
    with module.context:
        # a walk by name (no Python predicate per op visited), then the test
        found = [o for o in walk_ops(module, "memref.copy")
                 if _strided(o.operands[0].type) or _strided(o.operands[1].type)]
        for o in found:
            k = _run_start(ir.MemRefType(o.operands[0].type), ir.MemRefType(o.operands[1].type))
            with ir.InsertionPoint(o), o.location:
                if k is None:
                    linalg.copy(o.operands[0], outs=[o.operands[1]])
                else:
                    _copy_runs(o.operands[0], o.operands[1], k, [])
            o.erase()
    return len(found)
