"""Run-time dims for the shape helpers of ``dialects/onnx/dims.py``.

``IxVal`` wraps an ``index`` SSA value and ``IxCond`` an ``i1``; the
operations of ``dims`` on them emit ``arith`` ops at the current insertion
point (static operands fold: ``x * 1`` is ``x``, ``3 + 4`` is ``7``).

    d = b.ixdim(x, 2)          # int, or IxVal of tensor.dim(x, 2)
    out = (d + 2 * p - k) // s + 1
    b.index_of(out)            # -> int or ir.Value (for tensor.empty etc.)

``checks(op, b)`` gives a ``dims.ShapeChecks`` whose run-time conditions
become checks in the compiled code (``LoweringContext.require``).
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith

from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import owner_op

_P = arith.CmpIPredicate
_PRED = {"eq": _P.eq, "ne": _P.ne, "lt": _P.slt, "le": _P.sle, "gt": _P.sgt, "ge": _P.sge}


def _index(x) -> ir.Value:
    if isinstance(x, IxVal):
        return x.value
    if isinstance(x, ir.Value):
        return x
    return arith.constant(ir.IndexType.get(), int(x))


def _divisor(x) -> ir.Value:
    """A run-time divisor with 0 replaced by 1: a division by zero traps
    (SIGFPE). Shape helpers check their divisors (``ctx.require``) before the
    result is used; this keeps the arithmetic itself from killing the
    process, e.g. ``num % den == 0`` evaluated for the check itself."""
    if D.is_static(x):
        return _index(x)
    v = _index(x)
    zero = arith.cmpi(_P.eq, v, arith.constant(ir.IndexType.get(), 0))
    return arith.select(zero, arith.constant(ir.IndexType.get(), 1), v)


def _i1(c) -> ir.Value:
    if isinstance(c, IxCond):
        return c.value
    return arith.constant(ir.IntegerType.get_signless(1), 1 if c else 0)


def _emit(result, fn, lhs=_index, rhs=_index):
    """A two-operand ``dims`` operation: ``result(fn(lhs(a), rhs(b)))``."""
    return staticmethod(lambda a, b: result(fn(lhs(a), rhs(b))))


class _Impl:
    """The run-time implementation of the ``dims`` operations."""
    max = _emit(lambda v: IxVal(v), arith.maxsi)
    min = _emit(lambda v: IxVal(v), arith.minsi)
    ceil_div = _emit(lambda v: IxVal(v), arith.ceildivsi, rhs=_divisor)
    both = _emit(lambda v: IxCond(v), arith.andi, _i1, _i1)
    either = _emit(lambda v: IxCond(v), arith.ori, _i1, _i1)

    @staticmethod
    def cmp(name, a, b):
        return IxCond(arith.cmpi(_PRED[name], _index(a), _index(b)))

    @staticmethod
    def negate(a):
        return IxCond(arith.xori(_i1(a), _i1(True)))

    @staticmethod
    def select(c, a, b):
        if isinstance(c, bool):
            return a if c else b
        if isinstance(a, IxCond) or isinstance(b, IxCond):
            return IxCond(arith.select(_i1(c), _i1(a), _i1(b)))
        return IxVal(arith.select(_i1(c), _index(a), _index(b)))


_IMPL = _Impl()


def _operator(fn, unit=None, rev: bool = False, zero_at=None):
    """An ``IxVal`` arithmetic method emitting ``fn`` (``o`` first when
    ``rev``): ``x op unit`` is ``x``; ``x op zero_at`` is 0."""
    def method(self, o):
        if zero_at is not None and D.is_static(o) and int(o) == zero_at:
            return 0
        return self._bin(o, fn, unit, rev)
    return method


class IxCond:
    """A run-time condition (``i1``)."""
    _dims_impl = _IMPL

    def __init__(self, value: ir.Value):
        self.value = value

    def __bool__(self):
        raise TypeError("a run-time condition has no Python truth value; use dims.select")


class IxVal:
    """A run-time dim (``index``), with Python arithmetic emitting ``arith``."""
    _dims_impl = _IMPL

    def __init__(self, value: ir.Value):
        if isinstance(value, IxVal):
            value = value.value
        self.value = value

    def __bool__(self):
        raise TypeError("a run-time dim has no Python truth value; use dims.select")

    def __repr__(self):
        return f"IxVal({self.value.get_name() if hasattr(self.value, 'get_name') else '?'})"

    def _bin(self, other, fn, unit=None, rev=False):
        if D.is_static(other) and unit is not None and int(other) == unit:
            return self
        a, b = (other, self) if rev else (self, other)
        if fn in (arith.floordivsi, arith.remsi):
            return IxVal(fn(_index(a), _divisor(b)))
        return IxVal(fn(_index(a), _index(b)))

    __add__ = __radd__ = _operator(arith.addi, unit=0)
    __sub__ = _operator(arith.subi, unit=0)
    __rsub__ = _operator(arith.subi, rev=True)
    __mul__ = __rmul__ = _operator(arith.muli, unit=1, zero_at=0)
    __floordiv__ = _operator(arith.floordivsi, unit=1)
    __rfloordiv__ = _operator(arith.floordivsi, rev=True)
    __mod__ = _operator(arith.remsi, zero_at=1)
    __rmod__ = _operator(arith.remsi, rev=True)

    def __neg__(self):
        return 0 - self


def index_of(d) -> int | ir.Value:
    """A helper's dim -> what ``LoweringContext`` takes (int or index Value)."""
    if isinstance(d, IxVal):
        return d.value
    if isinstance(d, ir.Value):
        return d
    if D.is_static(d):
        return int(d)
    raise TypeError(f"not a lowering-time dim: {d!r}")


def wrap(d) -> D.Dim:
    """int or index Value (``b.dim``) -> a helper's dim."""
    if isinstance(d, ir.Value):
        return IxVal(d)
    return d


def checks(op, b) -> D.ShapeChecks:
    """``ShapeChecks`` for a lowering rule: static violations fail naming the
    node, run-time conditions become ``b.require`` checks."""
    def runtime(cond, message, dims):
        b.require(_i1(cond), f"node '{op.name}' ({op.op_type}): {message}",
                  *[_index(d) for d in dims])
    return D.ShapeChecks(op.fail, runtime)


def require_same_dim(op, b, x: ir.Value, i: int, y: ir.Value, j: int,
                     x_name: str, y_name: str) -> None:
    """Check that dim ``i`` of ``x`` equals dim ``j`` of ``y`` (the lowering
    indexes one with the other's extent): a compile-time error when both are
    static and differ, a run-time check when either is dynamic, nothing when
    both are static and equal. Names are the ONNX inputs ("A", "B", "scale")."""
    dx, dy = b.ixdim(x, i), b.ixdim(y, j)
    checks(op, b).require(D.eq(dx, dy), f"{x_name} dim {i} is {{0}} but {y_name} "
                          f"dim {j} is {{1}}; they must be equal", dx, dy)


def int_elements(op, b, v, n: int, what: str) -> list:
    """The ``n`` elements of a 1-D integer operand ``v`` (a shape, axes,
    repeats...) as dims: ints where ``v`` is a constant, else run-time
    values (``tensor_util.ix_elems``). A static length other than
    ``n`` fails naming the node; a dynamic one is checked at run time."""
    from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import const_np, ix_elems
    t = b.ranked(op, v, what)
    if t.rank != 1:
        op.fail(f"'{what}' must be 1-D, got rank {t.rank}")
    c = const_np(v)
    if c is not None:
        vals = [int(x) for x in c.reshape(-1)]
        if len(vals) != n:
            op.fail(f"'{what}' has {len(vals)} elements, expected {n}")
        return vals
    if not t.is_dynamic_dim(0):
        if t.shape[0] != n:
            op.fail(f"'{what}' has {t.shape[0]} elements, expected {n}")
    else:
        ln = IxVal(b.dim(v, 0))
        checks(op, b).require(D.eq(ln, n), f"'{what}' has {{0}} elements, expected {n}", ln)
    return ix_elems(b, v, n)


def opaque_dim(d):
    """A run-time dim chosen by ``arith.select`` (Reshape's 0 and -1, a
    broadcast of 1) hidden from MLIR's value-bounds analysis: an index ->
    i64 -> index cast pair it does not look through (and canonicalize does
    not fold, index_cast then index_castui). The one-shot bufferization
    analysis compares slice sizes with that analysis, which splits on every
    select it meets, recursively: a chain of a few Reshapes of run-time
    shapes took it minutes (LinearAttention fp16 at dynamic dims: > 300 s,
    16 s for the whole compile with the barrier). Dims are >= 0 here
    (checked), so the casts are the identity."""
    if not isinstance(d, IxVal):
        return d
    o = owner_op(d.value)
    if o is None or o.name != "arith.select":
        return d
    i64 = ir.IntegerType.get_signless(64)
    return IxVal(arith.index_castui(ir.IndexType.get(), arith.index_cast(i64, d.value)))


def fit_result(op, b, out: list, k_result: int = 0) -> list:
    """Computed result dims against the result type: a dim the type fixes
    must agree (a compile-time error, or a run-time check) and is used as
    the static size; the others stay computed. Returns ints / IxVals."""
    t = b.result_type(op, k_result)
    if len(out) != t.rank:
        op.fail(f"result #{k_result} has rank {t.rank}, the computed shape has rank {len(out)}")
    chk = checks(op, b)
    fitted = []
    for k, d in enumerate(out):
        if t.is_dynamic_dim(k):
            fitted.append(opaque_dim(d))
            continue
        s = int(t.shape[k])
        if D.is_static(d):
            if int(d) != s:
                op.fail(f"result #{k_result} dim {k} is {int(d)}, its type says {s}")
        else:
            chk.require(D.eq(d, s), f"result #{k_result} dim {k} is {{0}}, its type says {s}", d)
        fitted.append(s)
    return fitted
