"""Where a tensor's buffer will come from once bufferized: followed back
through views, slices and the destinations of the ops that write into it
to the op that allocates it (or a block argument).

Used by the tensor-level outlining before bufferization: a function
argument has the identity layout, so a value passed to one (or returned
from one) that is a slice or a view of a larger buffer would be copied.
:mod:`.kernel_functions` keeps a loop inline when its destination is a
slice (:func:`is_slice`); :mod:`.bufferize_chunks` cuts only where nothing
leaving a chunk is a view or a buffer from before it (:func:`origin`).
"""
from __future__ import annotations

import mlir.ir as ir

from onnx_mlir_py.codegen.parallel_for import defining_op

# ops whose result is a new buffer
ALLOCATES = ("tensor.empty", "bufferization.alloc_tensor", "tensor.pad",
             "tensor.from_elements", "tensor.generate", "tensor.splat", "tensor.concat")
SLICES = ("tensor.extract_slice",)
# ops whose result is another view of their first operand's buffer
VIEWS = ("tensor.expand_shape", "tensor.collapse_shape", "tensor.cast", "tensor.reshape",
         "tensor.bitcast")
# destination-style ops outside linalg: result -> operand index of its buffer
_DEST_OPERAND = {"tensor.insert_slice": 1, "vector.transfer_write": 1,
                 "tensor.parallel_insert_slice": 1, "tensor.scatter": 2,
                 "linalg.pack": 1, "linalg.unpack": 1}


def destination(op: ir.Operation, v: ir.Value) -> ir.Value | None:
    """The operand whose buffer ``op``'s result ``v`` is (loops, linalg ops,
    insert-like ops), or None."""
    i = ir.OpResult(v).result_number
    name = op.name
    if name == "scf.forall":
        return list(op.opview.outputs)[i]
    if name == "scf.for":
        return list(op.opview.initArgs)[i]
    if name in _DEST_OPERAND:
        return op.operands[_DEST_OPERAND[name]]
    if name.startswith("linalg.") and hasattr(op.opview, "outputs"):
        outs = list(op.opview.outputs)
        return outs[i] if i < len(outs) else None
    return None


class Origin:
    """Where a tensor's buffer comes from: ``root`` (an allocating op's
    result, a block argument, or None when it cannot be told), and whether
    a slice or another view lies on the way."""
    __slots__ = ("root", "sliced", "viewed")

    def __init__(self):
        self.root, self.sliced, self.viewed = None, False, False


def origin(v: ir.Value, callees: dict | None = None, depth: int = 0) -> Origin:
    """The :class:`Origin` of ``v``. ``callees`` (name -> ``func.func``):
    a call's result is followed into the callee's return (one level deep);
    without it, a call counts as allocating nothing that can be told."""
    o = Origin()
    for _ in range(100_000):
        d = defining_op(v)
        if d is None:
            o.root = v                   # a block argument
            return o
        name = d.name
        if name in SLICES or name in VIEWS:
            o.sliced |= name in SLICES
            o.viewed = True
            v = d.operands[0]
            continue
        if name in ALLOCATES:
            o.root = v
            return o
        if name == "func.call" and depth == 0 and callees:
            callee = callees.get(d.opview.callee.value)
            if callee is None:
                return o
            block = callee.regions[0].blocks[0]
            ret = list(block.operations)[-1]
            inner = origin(ret.operands[ir.OpResult(v).result_number], None, 1)
            o.sliced |= inner.sliced
            o.viewed |= inner.viewed
            if inner.root is None:
                return o
            if defining_op(inner.root) is not None:
                o.root = v               # the callee allocates it
                return o
            args = list(block.arguments)
            if inner.root not in args:
                return o
            v = d.operands[args.index(inner.root)]
            continue
        dest = destination(d, v)
        if dest is None:
            return o                     # a constant, an scf.if, ...: not followed
        v = dest
    return o


def is_slice(v: ir.Value) -> bool:
    """Whether ``v``'s buffer will be (a view of) a slice of a larger one."""
    return origin(v).sliced
