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

(``extui`` + i8 store for stores). Both memref types lower to the same LLVM
descriptor (opaque pointers), so ``reconcile-unrealized-casts`` removes the
casts. Run after ``lower-affine`` and before ``finalize-memref-to-llvm``.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, builtin, memref


def _byte_view(value: ir.Value) -> ir.Value:
    mt = value.type
    i8 = ir.IntegerType.get_signless(8)
    bt = ir.MemRefType.get(mt.shape, i8, layout=mt.layout, memory_space=mt.memory_space)
    return builtin.UnrealizedConversionCastOp([bt], [value]).result


def _is_i1_memref(t: ir.Type) -> bool:
    return isinstance(t, ir.MemRefType) and str(t.element_type) == "i1"


def rewrite_bool_memory_accesses(module: ir.Module) -> int:
    """Rewrite i1 ``memref.load``/``memref.store`` in place; returns how many."""
    found: list[ir.Operation] = []

    def visit(op):
        name = op.name
        if name == "memref.load" and _is_i1_memref(op.operands[0].type):
            found.append(op)
        elif name == "memref.store" and _is_i1_memref(op.operands[1].type):
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    with module.context:
        i1 = ir.IntegerType.get_signless(1)
        i8 = ir.IntegerType.get_signless(8)
        for op in found:
            with ir.InsertionPoint(op), op.location:
                if op.name == "memref.load":
                    view = _byte_view(op.operands[0])
                    wide = memref.LoadOp(view, list(op.operands[1:])).result
                    narrow = arith.TruncIOp(i1, wide).result
                    op.results[0].replace_all_uses_with(narrow)
                else:
                    wide = arith.ExtUIOp(i8, op.operands[0]).result
                    view = _byte_view(op.operands[1])
                    memref.StoreOp(wide, view, list(op.operands[2:]))
            op.erase()
    return len(found)
