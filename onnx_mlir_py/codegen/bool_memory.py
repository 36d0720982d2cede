"""Work around i1 memory accesses aborting ``finalize-memref-to-llvm``.

In this MLIR 22 build, lowering ``memref.load``/``memref.store`` on a
``memref<...xi1>`` hits ``Assertion `integralElementType.getWidth() >= 8'``
(MemRefToLLVM.cpp) and aborts the process. Booleans are stored one per byte
anyway (as ONNX/numpy ``bool``), so every such access is rewritten to go
through a byte view::

    %v = memref.load %m[%i] : memref<4xi1>
  ->
    %b = builtin.unrealized_conversion_cast %m : memref<4xi1> to memref<4xi8>
    %w = memref.load %b[%i] : memref<4xi8>
    %v = arith.trunci %w : i8 to i1

(``extui`` + i8 store for stores). Vectorized code (-O3) gets the same
treatment for ``vector.load/store`` and ``vector.transfer_read/write`` of i1
vectors: LLVM lays out ``<N x i1>`` in memory bit-packed, not one byte per
element, so an i1 vector access would read/write the wrong bytes. Both memref types lower to the same LLVM
descriptor (opaque pointers), so ``reconcile-unrealized-casts`` removes the
casts. Run after ``lower-affine`` and before ``finalize-memref-to-llvm``.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, builtin, memref, vector

from onnx_mlir_py.ir_util import walk_ops

# The rewritten accesses and the operand holding their memref. Vectorized
# code (-O3): an LLVM <N x i1> load/store is bit-packed, so i1 vectors must
# also go through the byte view.
_MEMREF_OPERAND = {"memref.load": 0, "memref.store": 1, "vector.load": 0, "vector.store": 1,
                   "vector.transfer_read": 0, "vector.transfer_write": 1}


def _byte_view(value: ir.Value) -> ir.Value:
    mt = value.type
    i8 = ir.IntegerType.get_signless(8)
    bt = ir.MemRefType.get(mt.shape, i8, layout=mt.layout, memory_space=mt.memory_space)
    return builtin.UnrealizedConversionCastOp([bt], [value]).result


# the op names whose accesses this rewrites (a caller's walk: see rewrite_bool_memory_accesses)
BOOL_MEMORY_OPS = tuple(_MEMREF_OPERAND)


def _is_i1_memref(t: ir.Type, i1: ir.Type) -> bool:
    # types are uniqued: == compares pointers (str() printed each type)
    return isinstance(t, ir.MemRefType) and t.element_type == i1


def _attrs(op) -> dict:
    named = [op.attributes[i] for i in range(len(op.attributes))]
    return {a.name: a.attr for a in named}


def _rewrite_transfer_read(op, i8) -> None:
    """transfer_read(base, indices..., padding, [mask]) of i1 -> of i8, then trunci."""
    ops = list(op.operands)
    vt = op.results[0].type
    n_idx = op.operands[0].type.rank             # one index per memref dim
    ops[0] = _byte_view(ops[0])
    ops[1 + n_idx] = arith.ExtUIOp(i8, ops[1 + n_idx]).result
    wide = ir.Operation.create("vector.transfer_read", results=[ir.VectorType.get(vt.shape, i8)],
                               operands=ops, attributes=_attrs(op)).results[0]
    op.results[0].replace_all_uses_with(arith.TruncIOp(vt, wide).result)


def rewrite_bool_memory_accesses(module: ir.Module, ops: list | None = None) -> int:
    """Rewrite i1 ``memref.load``/``memref.store`` (and ``vector.load``/
    ``vector.store`` of i1 vectors) in place; returns how many. ``ops``: the
    module's ops of :data:`BOOL_MEMORY_OPS`, found by the caller's walk
    (which may also list ops of other names); None walks the module."""
    # a walk by name (no Python predicate per op visited), then the type test
    if ops is None:
        ops = walk_ops(module, _MEMREF_OPERAND)
    with module.context:
        i1 = ir.IntegerType.get_signless(1)
        found = [op for op in ops if (k := _MEMREF_OPERAND.get(op.name)) is not None
                 and _is_i1_memref(op.operands[k].type, i1)]
        i8 = ir.IntegerType.get_signless(8)
        for op in found:
            with ir.InsertionPoint(op), op.location:
                if op.name == "memref.load":
                    view = _byte_view(op.operands[0])
                    wide = memref.LoadOp(view, list(op.operands[1:])).result
                    narrow = arith.TruncIOp(i1, wide).result
                    op.results[0].replace_all_uses_with(narrow)
                elif op.name == "vector.load":
                    vt = op.results[0].type
                    view = _byte_view(op.operands[0])
                    wide = vector.LoadOp(ir.VectorType.get(vt.shape, i8), view,
                                         list(op.operands[1:])).result
                    narrow = arith.TruncIOp(vt, wide).result
                    op.results[0].replace_all_uses_with(narrow)
                elif op.name == "vector.transfer_read":
                    _rewrite_transfer_read(op, i8)
                elif op.name == "vector.transfer_write":
                    ops = list(op.operands)
                    vt = ops[0].type
                    ops[0] = arith.ExtUIOp(ir.VectorType.get(vt.shape, i8), ops[0]).result
                    ops[1] = _byte_view(ops[1])
                    ir.Operation.create("vector.transfer_write", results=[], operands=ops,
                                        attributes=_attrs(op))
                elif op.name == "vector.store":
                    vt = op.operands[0].type
                    wide = arith.ExtUIOp(ir.VectorType.get(vt.shape, i8), op.operands[0]).result
                    view = _byte_view(op.operands[1])
                    vector.StoreOp(wide, view, list(op.operands[2:]))
                else:
                    wide = arith.ExtUIOp(i8, op.operands[0]).result
                    view = _byte_view(op.operands[1])
                    memref.StoreOp(wide, view, list(op.operands[2:]))
            op.erase()
    return len(found)
