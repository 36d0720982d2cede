"""Dim arithmetic shared by shape inference and lowering (onnx-mlir's IndexExpr).

A shape helper (one per op family, in ``dialects/onnx/ops/<family>.py``) is
written ONCE against the operations of this module and runs in two modes:

* **inference** (shape rules): dims are Python ``int`` or ``UNKNOWN``;
  the answer is a static dim or ``?``;
* **lowering** (``passes/onnx_to_linalg``): dims are ``int`` or run-time
  values (``passes/onnx_to_linalg/dims_ir.py::IxVal``, an ``index`` SSA
  value); the same helper emits the ``arith`` ops that compute the dim at
  run time, folding whatever is static.

So the compile-time rule and the run-time computation cannot disagree.

Operations: ``+ - * // %`` work on every kind of dim (ints, ``UNKNOWN``,
run-time values; mixed). Everything else is a function here: ``dmax``,
``dmin``, ``ceil_div``, ``eq``/``ne``/``lt``/``le``/``gt``/``ge`` (give a
*condition*: ``bool``, ``UNKNOWN`` or a run-time ``i1``), ``both``/
``either``/``negate`` on conditions, and ``select(cond, a, b)``.

Checks: ``ctx.require(cond, message, *dims)`` where ``ctx`` is a
``ShapeChecks``: at inference a ``False`` condition fails naming the node
and an unknown one is left to run time; at lowering a run-time condition
becomes a check in the compiled code (the call returns an error naming
the node instead of reading out of bounds). ``message`` may use ``{0}``,
``{1}``... for the ``dims`` (printed with their run-time values).
"""
from __future__ import annotations

from typing import Any, Sequence


class _Unknown:
    """A dim (or condition) not known at compile time; absorbs arithmetic."""
    _inst = None

    def __new__(cls):
        if cls._inst is None:
            cls._inst = super().__new__(cls)
        return cls._inst

    def __repr__(self):
        return "?"

    def _op(self, *_):
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _op
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __neg__ = _op

    def __bool__(self):
        raise TypeError("an unknown dim has no truth value; use dims.select / ctx.require")


UNKNOWN = _Unknown()

Dim = Any  # int | UNKNOWN | run-time value (has ``_dims_impl``)


def is_runtime(x) -> bool:
    return hasattr(x, "_dims_impl")


def is_static(x) -> bool:
    return isinstance(x, (int, bool)) and not isinstance(x, _Unknown)


def _impl(*xs):
    for x in xs:
        if is_runtime(x):
            return x._dims_impl
    return None


def from_static(shape: Sequence[int | None] | None):
    """Shape-rule dims (``None`` = dynamic) -> dims for a helper."""
    if shape is None:
        return None
    return [UNKNOWN if d is None else int(d) for d in shape]


def to_static(dims: Sequence[Dim] | None):
    """Helper result -> shape-rule dims (``None`` for anything not static)."""
    if dims is None:
        return None
    return [int(d) if is_static(d) else None for d in dims]


# -- arithmetic that Python operators do not cover ---------------------------------
def dmax(a: Dim, b: Dim) -> Dim:
    if is_static(a) and is_static(b):
        return max(a, b)
    impl = _impl(a, b)
    return impl.max(a, b) if impl else UNKNOWN


def dmin(a: Dim, b: Dim) -> Dim:
    if is_static(a) and is_static(b):
        return min(a, b)
    impl = _impl(a, b)
    return impl.min(a, b) if impl else UNKNOWN


def ceil_div(a: Dim, b: Dim) -> Dim:
    if is_static(a) and is_static(b):
        return -(-a // b)
    impl = _impl(a, b)
    return impl.ceil_div(a, b) if impl else UNKNOWN


def _cmp(name, fn):
    def f(a: Dim, b: Dim):
        if is_static(a) and is_static(b):
            return bool(fn(a, b))
        impl = _impl(a, b)
        return impl.cmp(name, a, b) if impl else UNKNOWN
    f.__name__ = name
    return f


eq = _cmp("eq", lambda a, b: a == b)
ne = _cmp("ne", lambda a, b: a != b)
lt = _cmp("lt", lambda a, b: a < b)
le = _cmp("le", lambda a, b: a <= b)
gt = _cmp("gt", lambda a, b: a > b)
ge = _cmp("ge", lambda a, b: a >= b)


def _logic(name: str, absorbing: bool):
    """A logical connective of two conditions, short-cut on static ones:
    ``absorbing`` decides it (False for and, True for or), its negation
    leaves the other condition."""
    neutral = not absorbing

    def f(a, b):
        if a is absorbing or b is absorbing:
            return absorbing
        if a is neutral:
            return b
        if b is neutral:
            return a
        impl = _impl(a, b)
        return getattr(impl, name)(a, b) if impl else UNKNOWN
    f.__name__ = name
    return f


both = _logic("both", False)      # logical and
either = _logic("either", True)   # logical or


def negate(a):
    if isinstance(a, bool):
        return not a
    impl = _impl(a)
    return impl.negate(a) if impl else UNKNOWN


def select(cond, a: Dim, b: Dim) -> Dim:
    """``a if cond else b`` for dims (cond: bool, UNKNOWN or run-time)."""
    if isinstance(cond, bool):
        return a if cond else b
    if is_static(a) and is_static(b) and a == b:
        return a
    impl = _impl(cond, a, b)
    return impl.select(cond, a, b) if impl else UNKNOWN


def product(dims: Sequence[Dim]) -> Dim:
    p: Dim = 1
    for d in dims:
        p = p * d
    return p


class ShapeChecks:
    """Where ``require`` sends a failed or run-time condition.

    ``fail(message)`` raises (a compile-time violation, naming the node);
    ``runtime(cond, message, dims)`` emits a run-time check (lowering only;
    ``None`` at inference, where an unknown condition is not checked)."""

    def __init__(self, fail, runtime=None):
        self._fail = fail
        self._runtime = runtime

    def require(self, cond, message: str, *dims: Dim) -> None:
        if cond is True:
            return
        if cond is False:
            shown = ["?" if not is_static(d) else str(int(d)) for d in dims]
            self._fail(message.format(*shown))
        if isinstance(cond, _Unknown) or self._runtime is None:
            return
        self._runtime(cond, message, list(dims))


def inference_checks(op) -> ShapeChecks:
    """Checks for a shape rule or verifier of ``op`` (an OnnxOp)."""
    return ShapeChecks(op.fail)
