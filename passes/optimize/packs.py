"""Compile-time relayout of constants, and lowering of the remaining packs.

``fold_constant_relayouts``: a ``linalg.pack`` / ``linalg.transpose`` /
``linalg.broadcast`` / ``tensor.collapse_shape`` / ``tensor.expand_shape`` whose source is a
constant (weights), or a static ``tensor.extract_slice`` of one, is evaluated with numpy and replaced by a new constant,
so packed weights cost nothing at run time. ``dense_resource`` constants
(the importer's raw initializers) are read from the module's resource
section.

``PACK_LOWERING``: schedule (against ``%func``) that lowers every remaining
``linalg.pack`` / ``linalg.unpack`` (activations) to pad + reshape +
transpose / transpose + reshape + slice, which bufferize.
"""
from __future__ import annotations

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.dialects.onnx.opview import owner_op
from onnx_mlir_py.ir_util import walk_ops

_NP_FLOAT = ((ir.F32Type, np.float32), (ir.F64Type, np.float64), (ir.F16Type, np.float16))
_NP_INT = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}


def _np_dtype(et: ir.Type):
    """The numpy dtype of a float or signless integer element type, else None."""
    for cls, dt in _NP_FLOAT:
        if isinstance(et, cls):
            return dt
    if isinstance(et, ir.IntegerType) and et.is_signless:
        return _NP_INT.get(et.width)
    return None


def _lower_each(kind: str, results: str) -> str:
    """Schedule text: ``transform.structured.lower_<kind>`` on every
    ``linalg.<kind>`` of ``%func`` (``results``: the op types it yields)."""
    op = f'!transform.op<"linalg.{kind}">'
    return f"""
    %{kind}s = transform.structured.match ops{{["linalg.{kind}"]}} in %func
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %{kind}s : !transform.any_op {{
    ^bb0(%{kind}_h: !transform.any_op):
      %{kind}_op = transform.cast %{kind}_h : !transform.any_op to {op}
      transform.structured.lower_{kind} %{kind}_op : ({op})
        -> ({results})
    }}"""


PACK_LOWERING = _lower_each(
    "pack", '!transform.op<"tensor.pad">, !transform.op<"tensor.expand_shape">, '
            '!transform.op<"linalg.transpose">') + _lower_each(
    "unpack", '!transform.op<"tensor.empty">, !transform.op<"linalg.transpose">, '
              '!transform.op<"tensor.collapse_shape">, !transform.op<"tensor.extract_slice">') + "\n"


def _ints(attr) -> list[int]:
    return [int(x) for x in ir.DenseI64ArrayAttr(attr)] if attr is not None else []


def _opt_attr(op, name):
    return op.attributes[name] if name in op.attributes else None


def numpy_pack(src: np.ndarray, inner_dims_pos, inner_tiles, outer_dims_perm, pad_value,
               lazy: bool = False) -> np.ndarray:
    """numpy model of ``linalg.pack`` (static tiles); ``lazy``: a view where
    numpy can give one (not copied)."""
    r = src.ndim
    widths = [(0, 0)] * r
    for d, t in zip(inner_dims_pos, inner_tiles):
        widths[d] = (0, (-src.shape[d]) % t)
    a = np.pad(src, widths, constant_values=pad_value) if any(w[1] for w in widths) else src
    shape, outer_ax, inner_ax = [], {}, {}
    for d in range(r):
        outer_ax[d] = len(shape)
        if d in inner_dims_pos:
            t = inner_tiles[inner_dims_pos.index(d)]
            shape += [a.shape[d] // t, t]
            inner_ax[d] = len(shape) - 1
        else:
            shape.append(a.shape[d])
    perm = outer_dims_perm or list(range(r))
    axes = [outer_ax[p] for p in perm] + [inner_ax[d] for d in inner_dims_pos]
    y = a.reshape(shape).transpose(axes)
    return y if lazy else np.ascontiguousarray(y)


# square tiles of a blocked 2-D transpose (elements a side)
_TILE = 64


def transpose(x: np.ndarray, perm) -> np.ndarray:
    """``x.transpose(perm)``, contiguous. A large 2-D one is copied in
    _TILE x _TILE tiles: numpy's strided copy of the whole transposed view
    misses the cache on one side (a conv's 2048x1024 f32 weights: 11 -> 6 ms
    CPU; ResNet-50's 1x1 convs transpose all theirs)."""
    v = x.transpose(perm)
    if x.ndim != 2 or list(perm) != [1, 0] or min(x.shape) < 2 * _TILE:
        return np.ascontiguousarray(v)
    out = np.empty(v.shape, v.dtype)
    rows, cols = v.shape
    for i in range(0, rows, _TILE):
        for j in range(0, cols, _TILE):
            out[i:i + _TILE, j:j + _TILE] = v[i:i + _TILE, j:j + _TILE]
    return out


def _uniform(y: np.ndarray) -> bool:
    """Whether every element of ``y`` equals its first (NaN never does);
    a few elements first, so a varying tensor is told without a pass over
    all of it (a full comparison allocated a mask of every weight)."""
    flat = y.reshape(-1)
    first = flat[0]
    if not (flat[-1] == first and (flat[:64] == first).all()):
        return False
    return bool((flat == first).all())


def _const_value(op: ir.Operation, blobs, purpose: str | None = None) -> np.ndarray | None:
    """The value of the static constant ``op`` as numpy, else None.
    ``purpose``: what a weight's values are read for, told to the -O3 stage
    cache's recorder (``value_reads``: "fold", a test kind; None: a read it
    cannot redo, so that compile's stage is not cached)."""
    if op.name != "arith.constant":
        return None
    t = op.results[0].type
    if not isinstance(t, ir.RankedTensorType) or not t.has_static_shape:
        return None
    dt = _np_dtype(t.element_type)
    if dt is None:
        return None
    attr = op.attributes["value"]
    if isinstance(attr, ir.DenseElementsAttr):
        if attr.is_splat:
            return np.full(t.shape, np.array(attr.get_splat_value().value, dt), dt)
        return np.array(attr).astype(dt, copy=False).reshape(t.shape)
    from onnx_mlir_py.ir_resources import (resource_blobs as _resource_blobs,
                                           resource_name as _resource_name)
    name = _resource_name(attr)
    if name is None:
        return None
    from onnx_mlir_py.passes.optimize import value_reads
    rec = value_reads.active()
    if rec is not None:
        rec.read(name, purpose)
    if name not in blobs:
        with value_reads.explained():
            blobs.update(_resource_blobs([op], views=True))
    data = blobs.get(name)
    if data is None or len(data) != int(np.prod(t.shape)) * np.dtype(dt).itemsize:
        return None
    return np.frombuffer(data, dt).reshape(t.shape)


def _pad_step(op: ir.Operation) -> tuple | None:
    """A static-width ``tensor.pad`` whose body yields a constant."""
    low, high = _ints(op.attributes["static_low"]), _ints(op.attributes["static_high"])
    if len(op.operands) != 1 or any(v < 0 for v in low + high):
        return None                        # dynamic widths
    body = op.regions[0].blocks[0]
    yld = body.operations[len(body.operations) - 1]
    if len(yld.operands) != 1:
        return None
    owner = owner_op(yld.operands[0])
    if owner is None or owner.name != "arith.constant":
        return None
    a = owner.attributes["value"]
    if not isinstance(a, (ir.FloatAttr, ir.IntegerAttr)):
        return None
    pad = ir.FloatAttr(a).value if isinstance(a, ir.FloatAttr) else ir.IntegerAttr(a).value
    return ("pad", low, high, pad)


def fold_step(op: ir.Operation) -> tuple | None:
    """The relayout ``op`` as a step of plain values (a tuple of ints,
    lists and a pad scalar, which :func:`apply_step` evaluates and JSON
    keeps: the stage cache's recipes), else None (it does not fold)."""
    if op.name == "linalg.pack":
        tiles = _ints(op.attributes["static_inner_tiles"])
        if any(t < 0 for t in tiles):
            return None
        pad = 0
        pv = op.opview.padding_value
        if pv is not None:                 # must be a constant to fold
            owner = owner_op(pv)
            if owner is None or owner.name != "arith.constant":
                return None
            a = owner.attributes["value"]
            pad = ir.FloatAttr(a).value if isinstance(a, ir.FloatAttr) else ir.IntegerAttr(a).value
        return ("pack", _ints(op.attributes["inner_dims_pos"]), tiles,
                _ints(_opt_attr(op, "outer_dims_perm")), pad)
    if op.name == "linalg.transpose":
        return ("transpose", _ints(op.attributes["permutation"]))
    if op.name == "tensor.pad":
        return _pad_step(op)
    if op.name in ("tensor.collapse_shape", "tensor.expand_shape"):
        return ("reshape", list(op.results[0].type.shape))
    if op.name == "linalg.broadcast":
        return ("broadcast", list(op.results[0].type.shape), _ints(op.attributes["dimensions"]))
    return None


def apply_step(step, x: np.ndarray, lazy: bool = False) -> np.ndarray:
    """The value of the relayout ``step`` (:func:`fold_step`, or a static
    slice: ``("slice", offsets, sizes, strides, shape)``) of ``x``
    (``lazy``: a view where numpy can, for the next step of a chain)."""
    kind = step[0]
    if kind == "pack":
        return numpy_pack(x, list(step[1]), list(step[2]), list(step[3]), step[4], lazy)
    if kind == "transpose":
        return x.transpose(step[1]) if lazy else transpose(x, step[1])
    if kind == "pad":
        return np.pad(x, list(zip(step[1], step[2])), constant_values=step[3])
    if kind == "reshape":
        return x.reshape(step[1])
    if kind == "broadcast":
        out, dims = list(step[1]), step[2]
        kept = [k for k in range(len(out)) if k not in dims]
        shaped = x.reshape([out[k] if k in kept else 1 for k in range(len(out))])
        y = np.broadcast_to(shaped, out)
        return y if lazy else np.ascontiguousarray(y)
    if kind == "slice":
        idx = tuple(slice(o, o + n * st, st) for o, n, st in zip(step[1], step[2], step[3]))
        return np.ascontiguousarray(x[idx]).reshape(step[4])
    raise ValueError(f"unknown relayout step {kind!r}")


def _fold(op: ir.Operation, x: np.ndarray, lazy: bool = False) -> np.ndarray | None:
    """``op``'s value for the source value ``x`` (``lazy``: a view where
    numpy can, for the next relayout of a chain), else None."""
    step = fold_step(op)
    return None if step is None else apply_step(step, x, lazy)


def _slice_step(op: ir.Operation) -> tuple | None:
    """A static ``tensor.extract_slice`` as a step (:func:`apply_step`), else None."""
    if op.name != "tensor.extract_slice" or len(op.operands) != 1:
        return None                        # dynamic offsets/sizes/strides
    rt = op.results[0].type
    if not rt.has_static_shape:
        return None
    offs, sizes, strides = (_ints(op.attributes[k]) for k in
                            ("static_offsets", "static_sizes", "static_strides"))
    return ("slice", offs, sizes, strides, list(rt.shape))


def _slice_value(op: ir.Operation, blobs) -> np.ndarray | None:
    """A static ``tensor.extract_slice`` of a constant (a direction's weights
    W[d] of a recurrent op), as numpy; else None."""
    step = _slice_step(op)
    src = None if step is None else owner_op(op.operands[0])
    x = None if src is None else _const_value(src, blobs, "fold")
    return None if x is None else apply_step(step, x)


def _source_value(op: ir.Operation, blobs) -> np.ndarray | None:
    """The value of a relayout's source op: a constant, or a static slice of one."""
    x = _const_value(op, blobs, "fold")
    return _slice_value(op, blobs) if x is None else x


def _weight_source(op: ir.Operation) -> tuple[str, list] | None:
    """(the weight's resource name, steps) when the relayout source ``op``
    is a weight (a ``dense_resource`` constant) or a static slice of one:
    the start of a recipe (``value_reads``); else None."""
    from onnx_mlir_py.ir_resources import resource_name
    steps = []
    if op.name == "tensor.extract_slice":
        step = _slice_step(op)
        op = owner_op(op.operands[0]) if step is not None else None
        if op is None:
            return None
        steps.append(step)
    if op.name != "arith.constant":
        return None
    name = resource_name(op.attributes["value"])
    return None if name is None else (name, steps)


FOLDABLE = ("linalg.pack", "linalg.transpose", "linalg.broadcast", "tensor.collapse_shape",
            "tensor.expand_shape", "tensor.pad")


# folded values of at least this many bytes become ``dense_resource``s
RESOURCE_MIN_BYTES = 4096


def _folded_attr(y: np.ndarray, rt: ir.RankedTensorType, weight: bool = False) -> ir.Attribute:
    """The folded value ``y`` as a constant of type ``rt``. A large one is a
    ``dense_resource`` over ``y`` itself (``ir_resources.resource_attr``: not
    copied, and read back from the array by codegen) instead of a
    ``DenseElementsAttr``, which copies and hashes all of it (a decode
    step's packed weights: hundreds of MB); a uniform one stays a splat.
    ``weight``: ``y`` comes from a weight (a recipe of the -O3 stage cache,
    ``value_reads``): a resource at any size, so that its values are never
    in the module's text."""
    bits = getattr(rt.element_type, "width", 0)
    if (y.nbytes < RESOURCE_MIN_BYTES and not weight) or bits != 8 * y.itemsize \
            or y.dtype == np.bool_ or _uniform(y):
        return ir.DenseElementsAttr.get(y, type=rt)
    from onnx_mlir_py.ir_resources import resource_attr
    return resource_attr(y, "__om_folded", rt)


def _feeds_relayout(op: ir.Operation) -> bool:
    """Whether ``op``'s one result has exactly one use, by a relayout
    (FOLDABLE) that takes it as its source: its folded value may then be
    folded on without becoming a constant first."""
    uses = iter(op.results[0].uses)
    first = next(uses, None)
    if first is None or next(uses, None) is not None or first.operand_number != 0:
        return False
    return first.owner.name in FOLDABLE


def _materialize(op: ir.Operation, y: np.ndarray, rec=None, source=None) -> None:
    """Replace the relayout ``op`` by a constant of its folded value ``y``
    (``source``: the weight it comes from and the steps, told to the stage
    cache's recorder ``rec`` as a recipe)."""
    rt = op.results[0].type
    weight = rec is not None and source is not None
    with ir.InsertionPoint(op), op.location:
        attr = _folded_attr(np.ascontiguousarray(y), rt, weight)
        new = ir.Operation.create("arith.constant", results=[rt], attributes={"value": attr})
    op.results[0].replace_all_uses_with(new.results[0])
    op.erase()
    if rec is not None and source is not None:
        from onnx_mlir_py.ir_resources import resource_name
        rec.recipe(source[0], source[1], resource_name(attr), str(rt))


def _folded_value(op: ir.Operation, blobs, pending) -> tuple[np.ndarray, bool] | None:
    """The folded value of the relayout ``op`` (its source: a constant, a
    static slice of one, or a value in ``pending``) and whether it feeds
    the next relayout of a chain (then a view where numpy can), else None."""
    if len(op.results) != 1:
        return None
    rt = op.results[0].type
    if not isinstance(rt, ir.RankedTensorType) or not rt.has_static_shape:
        return None
    src = owner_op(op.operands[0])
    if src is None:
        return None
    x = pending.get(src)
    if x is None:
        x = _source_value(src, blobs)
    if x is None:
        return None
    chained = _feeds_relayout(op)      # (asked only of the ops that may fold)
    y = _fold(op, x, chained)
    return None if y is None else (y, chained)


def fold_constant_relayouts(module: ir.Module) -> int:
    """Fold relayouts of constants (chains fold too). Returns the count.

    A chain (a weight's collapse_shape -> transpose -> pack) folds in numpy
    from end to end: a folded value whose only use is the next relayout's
    source stays an array (a view where numpy can: the pack of a transpose
    copies the weights once, not twice) and becomes a constant only where
    the chain ends, so the chain's inner values are never copied into
    constants that the next canonicalize erases (#29: ResNet-50's 100 MB
    of conv weights were transposed then packed, each a full copy)."""
    from onnx_mlir_py.passes.optimize.value_reads import active
    rec = active()                  # the stage cache's recorder: each weight's recipe
    sources: dict[ir.Operation, tuple] = {}     # (recording) pending -> (weight, steps)
    blobs: dict[str, bytes] = {}
    pending: dict[ir.Operation, np.ndarray] = {}   # folded, not yet constants
    dead: list[ir.Operation] = []   # folded into their user's value (erased after it)
    count = 0
    # one pre-order walk: a producer folds before its users, so chains fold
    for op in walk_ops(module.operation, FOLDABLE):
        src = owner_op(op.operands[0]) if len(op.operands) else None
        folded = _folded_value(op, blobs, pending)
        if folded is not None:
            y, chained = folded
            source = None
            if rec is not None:
                base = sources.pop(src, None) if src in pending else _weight_source(src)
                source = None if base is None else (base[0], base[1] + [fold_step(op)])
            if chained:
                pending[op] = y
                if source is not None:
                    sources[op] = source
            else:
                _materialize(op, y, rec, source)
            count += 1
        if src is not None and src in pending:      # op is its one use
            y_src = pending.pop(src)
            if folded is None:                      # the chain ends before op
                _materialize(src, y_src, rec, sources.pop(src, None))
            else:
                dead.append(src)
    for op, y in pending.items():    # (not reached: a user is always walked after)
        _materialize(op, y, rec, sources.get(op))
    for op in reversed(dead):        # each one's user is gone
        op.erase()
    return count
