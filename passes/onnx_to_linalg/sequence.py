"""Sequence and Optional values at run time.

A sequence or optional is an ``!llvm.ptr`` (``builder.to_signless``) to an
immutable record of the C runtime (``runtime/c/om_seq.c``): {len, elements},
an optional being a record of 0 or 1 elements. The ops are calls into it:

* a tensor goes in as its strided view (``bufferization.to_buffer`` +
  ``memref.extract_strided_metadata``: ``om_seq_arg`` / ``om_seq_arg_dim``)
  and is copied by ``om_seq_push`` / ``om_seq_insert``;
* a tensor comes out (SequenceAt, OptionalGetElement, ConcatFromSequence)
  by ``om_seq_dim`` and ``om_seq_read`` into a fresh ``memref.alloc``,
  wrapped by ``bufferization.to_tensor`` (restrict);
* positions are normalised and range-checked here (``b.require``: an error
  naming the node, never an out-of-bounds read).

Element records live until the end of the run (om_seq_run_end frees each
once). SequenceMap has no rule: expand-functions inlines its ONNX function
body (a Loop over the elements).
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, bufferization, func, memref, scf, tensor

from onnx_mlir_py.codegen.signature import ONNX_DTYPES
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.dialects.onnx.ops.common import norm_axis
from onnx_mlir_py.dialects.onnx.ops.control_flow import opt_elem, seq_elem
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import extract_slice, insert_slice
from onnx_mlir_py.registry import lowering

MAX_RANK = 64          # om_seq.c's OM_SEQ_MAX_RANK
_CODES = {sig: code for sig, code, _ in ONNX_DTYPES.values()}


def _ptr() -> ir.Type:
    return ir.Type.parse("!llvm.ptr")


def _i64() -> ir.Type:
    return ir.IntegerType.get_signless(64)


def _call(b: LoweringContext, name: str, args: list, result: ir.Type | None = None):
    """Call ``name`` of om_seq.c (declared once per module)."""
    decls = b.__dict__.setdefault("_om_seq_decls", set())
    if name not in decls:
        with ir.InsertionPoint.at_block_begin(b.module.body), ir.Location.unknown():
            func.FuncOp(name, ir.FunctionType.get([a.type for a in args],
                                                  [result] if result else []),
                        visibility="private")
        decls.add(name)
    c = func.CallOp([result] if result else [], ir.FlatSymbolRefAttr.get(name), args)
    return c.results[0] if result else None


def _c64(x: int) -> ir.Value:
    return arith.constant(_i64(), x)


def _to_i64(v: ir.Value) -> ir.Value:
    if v.type == _i64():
        return v
    if isinstance(v.type, ir.IndexType):
        return arith.index_cast(_i64(), v)
    return arith.extsi(_i64(), v)


def _index(v: ir.Value) -> ir.Value:
    return arith.index_cast(ir.IndexType.get(), v)


def _code(op: OnnxOp, et: ir.Type) -> int:
    s = str(et)
    s = "i" + s[2:] if s.startswith("si") else s
    if s not in _CODES:
        op.fail(f"element type {et} cannot be held in a sequence")
    return _CODES[s]


def _elem_tensor(op: OnnxOp, onnx_type: ir.Type) -> ir.Type:
    """The ONNX element tensor type of a sequence / optional type."""
    inner = seq_elem(onnx_type)
    if inner is None:
        inner = opt_elem(onnx_type)
    if inner is not None and seq_elem(inner) is not None:
        inner = seq_elem(inner)
    if inner is None or not isinstance(inner, ir.ShapedType):
        op.fail(f"unsupported sequence / optional type {onnx_type}")
    return inner


def _scalar(v: ir.Value) -> ir.Value:
    t = ir.RankedTensorType(v.type)
    zero = [arith.constant(ir.IndexType.get(), 0) for _ in range(t.rank)]
    return tensor.extract(v, zero)


# -- tensors in and out ------------------------------------------------------
def put(op: OnnxOp, b: LoweringContext, v: ir.Value, code: int) -> None:
    """Hand tensor ``v`` (any layout) to the runtime as the pending element."""
    t = ir.RankedTensorType(v.type)
    if t.rank > MAX_RANK:
        op.fail(f"a sequence element of rank {t.rank} (at most {MAX_RANK})")
    q = ", ".join(["?"] * t.rank)
    layout = ir.Attribute.parse(f"strided<[{q}], offset: ?>")
    mt = ir.MemRefType.get(list(t.shape), t.element_type, layout)
    m = bufferization.to_buffer(mt, v, read_only=True)
    meta = memref.ExtractStridedMetadataOp(m).results
    ptr = memref.extract_aligned_pointer_as_index(m)
    _call(b, "om_seq_arg", [_to_i64(ptr), _to_i64(meta[1]), _c64(t.rank), _c64(code)])
    for k in range(t.rank):
        _call(b, "om_seq_arg_dim", [_c64(k), _to_i64(meta[2 + k]),
                                    _to_i64(meta[2 + t.rank + k])])


def get(op: OnnxOp, b: LoweringContext, seq: ir.Value, pos: ir.Value,
        rt: ir.RankedTensorType) -> ir.Value:
    """Element ``pos`` (i64, checked) of ``seq`` as a fresh tensor of type ``rt``
    (its rank and static dims checked against the element's)."""
    _require_rank(op, b, seq, pos, rt.rank)
    dyn = []
    for k in range(rt.rank):
        d = _call(b, "om_seq_dim", [seq, pos, _c64(k)], _i64())
        if rt.is_dynamic_dim(k):
            dyn.append(_index(d))
        else:
            want = int(rt.shape[k])
            b.require(arith.cmpi(arith.CmpIPredicate.eq, d, _c64(want)),
                      f"node '{op.name}' ({op.op_type}): the element has {{0}} along dim "
                      f"{k}, but its type says {want}", d)
    m = memref.alloc(ir.MemRefType.get(list(rt.shape), rt.element_type), dyn, [])
    ptr = memref.extract_aligned_pointer_as_index(m)
    _call(b, "om_seq_read", [seq, pos, _to_i64(ptr)])
    return bufferization.to_tensor(rt, m, restrict=True, writable=True)


def _require_rank(op: OnnxOp, b: LoweringContext, seq: ir.Value, pos: ir.Value,
                  rank: int) -> None:
    r = _call(b, "om_seq_rank", [seq, pos], _i64())
    b.require(arith.cmpi(arith.CmpIPredicate.eq, r, _c64(rank)),
              f"node '{op.name}' ({op.op_type}): element {{0}} has rank {{1}}, expected {rank}",
              pos, r)


def position(op: OnnxOp, b: LoweringContext, n: ir.Value, pos: ir.Value | None,
             insert: bool = False) -> ir.Value:
    """The position input (default: the end) normalised to [0, n) ([0, n]
    for an insert) as i64; out of range fails the call naming the node."""
    if pos is None:
        p = n if insert else arith.subi(n, _c64(1))
        if not insert:
            b.require(arith.cmpi(arith.CmpIPredicate.sgt, n, _c64(0)),
                      f"node '{op.name}' ({op.op_type}): the sequence is empty")
        return p
    t = ir.RankedTensorType(pos.type)
    if t.rank == 1 and t.is_dynamic_dim(0):      # one element (as onnxruntime takes)
        d = tensor.dim(pos, arith.constant(ir.IndexType.get(), 0))
        b.require(arith.cmpi(arith.CmpIPredicate.eq, d, arith.constant(ir.IndexType.get(), 1)),
                  f"node '{op.name}' ({op.op_type}): position has {{0}} elements, expected 1",
                  d)
    raw = _to_i64(_scalar(pos))
    neg = arith.cmpi(arith.CmpIPredicate.slt, raw, _c64(0))
    p = arith.select(neg, arith.addi(raw, n), raw)
    hi = n if insert else arith.subi(n, _c64(1))
    ok = arith.andi(arith.cmpi(arith.CmpIPredicate.sge, p, _c64(0)),
                    arith.cmpi(arith.CmpIPredicate.sle, p, hi))
    b.require(ok, f"node '{op.name}' ({op.op_type}): position {{0}} is out of range "
                  f"[-{{1}}, {{2}}] for a sequence of length {{1}}", raw, n, hi)
    return p


# -- sequences -------------------------------------------------------------------
@lowering("SequenceEmpty", 11)
def _empty(op: OnnxOp, b: LoweringContext):
    return [_call(b, "om_seq_new", [_c64(0)], _ptr())]


@lowering("SequenceConstruct", 11)
def _construct(op: OnnxOp, b: LoweringContext):
    xs = op.variadic()
    code = _code(op, _elem_tensor(op, op.op.results[0].type).element_type)
    s = _call(b, "om_seq_new", [_c64(len(xs))], _ptr())
    for x in xs:
        put(op, b, x, code)
        _call(b, "om_seq_push", [s])
    return [s]


def _seq_position(op: OnnxOp, b: LoweringContext, k: int, insert: bool = False):
    """(the sequence input 0, its position input ``k`` checked by :func:`position`)."""
    s = op.input(0)
    n = _call(b, "om_seq_len", [s], _i64())
    return s, position(op, b, n, op.input(k), insert=insert)


@lowering("SequenceInsert", 11)
def _insert(op: OnnxOp, b: LoweringContext):
    code = _code(op, _elem_tensor(op, op.op.results[0].type).element_type)
    s, p = _seq_position(op, b, 2, insert=True)
    put(op, b, op.input(1), code)
    return [_call(b, "om_seq_insert", [s, p], _ptr())]


@lowering("SequenceErase", 11)
def _erase(op: OnnxOp, b: LoweringContext):
    s, p = _seq_position(op, b, 1)
    return [_call(b, "om_seq_erase", [s, p], _ptr())]


@lowering("SequenceAt", 11)
def _at(op: OnnxOp, b: LoweringContext):
    s, p = _seq_position(op, b, 1)
    return [get(op, b, s, p, b.result_type(op))]


@lowering("SequenceLength", 11)
def _length(op: OnnxOp, b: LoweringContext):
    n = _call(b, "om_seq_len", [op.input(0)], _i64())
    return [tensor.from_elements(ir.RankedTensorType.get([], _i64()), [n])]


@lowering("ConcatFromSequence", 11)
def _concat(op: OnnxOp, b: LoweringContext):
    s = op.input(0)
    rt = b.result_type(op)
    new_axis = bool(op.attrs.new_axis)
    r = rt.rank - (1 if new_axis else 0)
    a = norm_axis(op, op.attrs.axis, rt.rank)
    if not new_axis and a >= r:
        op.fail(f"axis {op.attrs.axis} is out of range for elements of rank {r}")
    n = _call(b, "om_seq_len", [s], _i64())
    b.require(arith.cmpi(arith.CmpIPredicate.sgt, n, _c64(0)),
              f"node '{op.name}' ({op.op_type}): the sequence is empty")
    zero = _c64(0)
    _require_rank(op, b, s, zero, r)
    first = [_call(b, "om_seq_dim", [s, zero, _c64(k)], _i64()) for k in range(r)]
    idx = ir.IndexType.get()
    c0, c1 = arith.constant(idx, 0), arith.constant(idx, 1)
    nn = _index(n)
    # the other dims of every element must equal element 0's; the total along the axis
    loop = scf.ForOp(c0, nn, c1, [zero])
    with ir.InsertionPoint(loop.body):
        i = _to_i64(loop.induction_variable)
        tot = loop.inner_iter_args[0]
        _require_rank(op, b, s, i, r)
        for k in range(r):
            d = _call(b, "om_seq_dim", [s, i, _c64(k)], _i64())
            if k == a and not new_axis:
                tot = arith.addi(tot, d)
                continue
            b.require(arith.cmpi(arith.CmpIPredicate.eq, d, first[k]),
                      f"node '{op.name}' ({op.op_type}): element {{0}} has {{1}} along dim "
                      f"{k}, element 0 has {{2}}", i, d, first[k])
        scf.YieldOp([tot])
    total = n if new_axis else loop.results[0]
    out_dims = list(first)
    if new_axis:
        out_dims.insert(a, total)
    else:
        out_dims[a] = total
    for k, d in enumerate(out_dims):       # dims the result type fixes
        if not rt.is_dynamic_dim(k):
            want = int(rt.shape[k])
            b.require(arith.cmpi(arith.CmpIPredicate.eq, d, _c64(want)),
                      f"node '{op.name}' ({op.op_type}): the result has {{0}} along dim {k}, "
                      f"but its type says {want}", d)
    et = rt.element_type
    out = b.cast_to(b.empty([_index(d) if rt.is_dynamic_dim(k) else int(rt.shape[k])
                             for k, d in enumerate(out_dims)], et), rt)
    dyn_t = ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size()] * r, et)
    fill = scf.ForOp(c0, nn, c1, [out, c0])
    with ir.InsertionPoint(fill.body):
        i = fill.induction_variable
        acc, off = fill.inner_iter_args
        e = get(op, b, s, _to_i64(i), dyn_t)
        sizes = [tensor.dim(e, arith.constant(idx, k)) for k in range(r)]
        if new_axis:
            offs = [0] * a + [i] + [0] * (r - a)
            ins_sizes = sizes[:a] + [1] + sizes[a:]
            nxt = off
        else:
            offs = [0] * a + [off] + [0] * (r - a - 1)
            ins_sizes = sizes
            nxt = arith.addi(off, sizes[a])
        scf.YieldOp([insert_slice(e, acc, offs, ins_sizes), nxt])
    return [fill.results[0]]


@lowering("SplitToSequence", 11, 24)
def _split(op: OnnxOp, b: LoweringContext):
    x, split = op.input(0), op.input(1)
    t = b.ranked(op, x)
    a = norm_axis(op, op.attrs.axis, t.rank)
    code = _code(op, _elem_tensor(op, op.op.results[0].type).element_type)
    idx = ir.IndexType.get()
    c0, c1 = arith.constant(idx, 0), arith.constant(idx, 1)
    n_a = b.as_index(b.dim(x, a))
    name = f"node '{op.name}' ({op.op_type})"
    if split is None:
        count, chunk = n_a, None
    elif ir.RankedTensorType(split.type).rank == 0:
        chunk = _index(_to_i64(_scalar(split)))
        b.require(arith.cmpi(arith.CmpIPredicate.sgt, chunk, c0),
                  f"{name}: split {{0}} must be positive", chunk)
        count = arith.ceildivsi(n_a, chunk)
    else:
        count = b.as_index(b.dim(split, 0))
        chunk = None
        # the sizes must be >= 0 and add up to the axis
        sum_loop = scf.ForOp(c0, count, c1, [c0])
        with ir.InsertionPoint(sum_loop.body):
            v = _index(_to_i64(tensor.extract(split, [sum_loop.induction_variable])))
            b.require(arith.cmpi(arith.CmpIPredicate.sge, v, c0),
                      f"{name}: split size {{0}} is negative", v)
            scf.YieldOp([arith.addi(sum_loop.inner_iter_args[0], v)])
        b.require(arith.cmpi(arith.CmpIPredicate.eq, sum_loop.results[0], n_a),
                  f"{name}: the split sizes add up to {{0}}, the axis has {{1}}",
                  sum_loop.results[0], n_a)
    s = _call(b, "om_seq_new", [_to_i64(count)], _ptr())
    loop = scf.ForOp(c0, count, c1, [c0])
    with ir.InsertionPoint(loop.body):
        i, off = loop.induction_variable, loop.inner_iter_args[0]
        if split is None:
            size = 1
        elif chunk is not None:
            size = arith.minsi(chunk, arith.subi(n_a, off))
        else:
            size = _index(_to_i64(tensor.extract(split, [i])))
        offs = [0] * t.rank
        offs[a] = off
        sizes = list(b.dims(x))
        sizes[a] = size
        piece = extract_slice(b, x, offs, sizes)
        if split is None and not op.attrs.keepdims:
            keep = [k for k in range(t.rank) if k != a]
            piece = tensor.collapse_shape(
                ir.RankedTensorType.get([piece.type.shape[k] for k in keep],
                                        t.element_type), piece,
                _reassoc(t.rank, a))
        put(op, b, piece, code)
        _call(b, "om_seq_push", [s])
        scf.YieldOp([arith.addi(off, b.as_index(size))])
    return [s]


def _reassoc(rank: int, drop: int) -> ir.ArrayAttr:
    """collapse_shape groups that fold unit dim ``drop`` into a neighbour."""
    keep = [k for k in range(rank) if k != drop]
    groups = [[k] for k in keep]
    if groups:
        if drop < rank - 1:
            groups[keep.index(drop + 1)].insert(0, drop)
        else:
            groups[-1].append(drop)
    return ir.ArrayAttr.get([ir.ArrayAttr.get([ir.IntegerAttr.get(_i64(), k) for k in g])
                             for g in groups])


# -- optionals -------------------------------------------------------------------
@lowering("Optional", 15, 28)
def _optional(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    of_seq = seq_elem(opt_elem(op.op.results[0].type)) is not None
    if of_seq:                              # optional(seq): the pointer, or NULL
        return [x if x is not None else _call(b, "om_seq_null", [], _ptr())]
    box = _call(b, "om_seq_new", [_c64(0 if x is None else 1)], _ptr())
    if x is not None:
        put(op, b, x, _code(op, b.onnx_elem(x)))
        _call(b, "om_seq_push", [box])
    return [box]


def _present(op: OnnxOp, b: LoweringContext, x: ir.Value, inner: ir.Type) -> ir.Value:
    """i1: optional ``x`` (of ``inner``) holds a value."""
    if seq_elem(inner) is not None:
        p = _call(b, "om_seq_present", [x], _i64())
    else:
        p = _call(b, "om_seq_len", [x], _i64())
    return arith.cmpi(arith.CmpIPredicate.sgt, p, _c64(0))


@lowering("OptionalHasElement", 15, 18, 28)
def _has_element(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    i1 = ir.IntegerType.get_signless(1)
    inner = opt_elem(_onnx_type(op, b, x)) if x is not None else None
    if x is None:
        has = arith.constant(i1, 0)
    elif inner is not None:
        has = _present(op, b, x, inner)
    else:
        has = arith.constant(i1, 1)         # a tensor or a sequence: present
    return [tensor.from_elements(ir.RankedTensorType.get([], i1), [has])]


@lowering("OptionalGetElement", 15, 18, 28)
def _get_element(op: OnnxOp, b: LoweringContext):
    x = op.input(0)
    inner = opt_elem(_onnx_type(op, b, x))
    if inner is None:                       # a tensor or a sequence (opset 18): itself
        return [x]
    b.require(_present(op, b, x, inner),
              f"node '{op.name}' ({op.op_type}): the optional is empty")
    if seq_elem(inner) is not None:
        return [x]
    return [get(op, b, x, _c64(0), b.result_type(op))]


def _onnx_type(op: OnnxOp, b: LoweringContext, x: ir.Value) -> ir.Type:
    """The ONNX type of lowered operand ``x`` (``!llvm.ptr`` for a sequence or
    an optional, recorded by the driver)."""
    if str(x.type) != "!llvm.ptr":
        return x.type
    t = b.value_type(x)
    if t is None:
        op.fail("the ONNX type of a sequence / optional operand is unknown")
    return t
