"""The typed emitter of the -O3 kernels' MLIR text (the kernel functions of
``passes/optimize/``; docs/design.md lists the few lines still written
with names of their own).

Types are values, not text: a :class:`Type` is a scalar, vector or tensor of
an :class:`Elem` with a shape (``None``: a dynamic dim), rendered once by
:func:`type_text`; kernels compare ``Type`` objects, never type strings.
A :class:`Value` is an SSA name with its type (``str(value)`` is the name,
so values go straight into op text).

:class:`Emitter` holds a function body's lines and hands out fresh names
(``op``, ``param``), caches index constants (``index``) and other constants
(``const``, ``f32``), declared once at the function's top, and does index
arithmetic on ``int | Value`` (``add``, ``sub``, ``mul``, ``div``, ``cdiv``,
``rem``): two static sizes fold to an int, a right-hand 0 or 1 that changes
nothing folds away, anything else is one ``arith`` op (``iop``: always
one). The op methods (``read``, ``write``, ``broadcast``, ``shuffle``,
``binary``, ``fma``, ``extract_slice``, ``pad``, ``call``, ...) take the
operand and result types from the values; ``loop``/``end`` and
``forall``/``end_forall`` write ``scf.for`` / ``scf.forall`` regions.

A kernel::

    e = Emitter()
    x, o = e.param("x", tensor([1, c, None, None])), e.param("o", tensor(os_))
    ch, (acc,), (res,) = e.loop(e.index(0), e.index(c), e.index(1), [o])
    v = e.read(x, [0, ch, 0, 0], e.const("0.0", F32), vector(16))
    e.end([e.write(e.binary("arith.maximumf", v, v), acc, [0, ch, 0, 0])])
    e(f"return {res} : {o.type}")
    text = e.function("k", [x, o], o.type)
"""
from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

from onnx_mlir_py.passes.optimize.kernel_budget import KernelTooLarge, budget


class Elem(enum.Enum):
    """Element types of kernel values."""
    F32 = "f32"
    F64 = "f64"
    F16 = "f16"
    BF16 = "bf16"
    I64 = "i64"
    I32 = "i32"
    I16 = "i16"
    I8 = "i8"
    I1 = "i1"
    INDEX = "index"


class Kind(enum.Enum):
    SCALAR = "scalar"
    VECTOR = "vector"
    TENSOR = "tensor"


@dataclass(frozen=True)
class Type:
    """A scalar, vector or tensor type; ``shape`` dims are ints or None (dynamic)."""
    kind: Kind
    elem: Elem = Elem.F32
    shape: tuple = ()

    def __str__(self) -> str:
        return type_text(self)

    @property
    def scalar(self) -> "Type":
        """The element type as a scalar type."""
        return Type(Kind.SCALAR, self.elem)

    def like(self, elem: Elem) -> "Type":
        """The same kind and shape with elements ``elem``."""
        return Type(self.kind, elem, self.shape)


INDEX = Type(Kind.SCALAR, Elem.INDEX)
F32 = Type(Kind.SCALAR, Elem.F32)
I1 = Type(Kind.SCALAR, Elem.I1)


def _dims(shape) -> tuple:
    """Static dims stay ints; anything else (None, a Value, an SSA name) is dynamic."""
    return tuple(s if isinstance(s, int) else None for s in shape)


def tensor(shape, elem: Elem = Elem.F32) -> Type:
    return Type(Kind.TENSOR, elem, _dims(shape))


def vector(n, elem: Elem = Elem.F32) -> Type:
    """A 1-D vector of ``n`` lanes (or of shape ``n`` when a sequence)."""
    return Type(Kind.VECTOR, elem, (n,) if isinstance(n, int) else tuple(n))


def mask(n: int) -> Type:
    return vector(n, Elem.I1)


_TYPE_TEXT: dict[tuple, str] = {}       # (kind, elem, shape) -> text


def type_text(t: Type) -> str:
    # (``_value_``, not the enum's ``value`` property: ~1 us less a call, and
    # the kernels' emission prints ~10^4 types; #29)
    kind, elem = t.kind._value_, t.elem._value_
    if kind == "scalar":
        return elem
    key = (kind, elem, t.shape)
    text = _TYPE_TEXT.get(key)
    if text is None:
        dims = "".join(("?" if s is None else str(s)) + "x" for s in t.shape)
        text = _TYPE_TEXT[key] = f"{kind}<{dims}{elem}>"
    return text


def tensor_type(shape, elem: Elem = Elem.F32) -> str:
    """A tensor type's text (dims: int, or None / a value for a dynamic one)."""
    return type_text(tensor(shape, elem))


def vector_type(n: int, elem: Elem = Elem.F32) -> str:
    return type_text(vector(n, elem))


def f32_hex(v: float) -> str:
    """An f32 constant's exact text (-inf, -0.0 included)."""
    return f"0x{struct.unpack('<I', struct.pack('<f', v))[0]:08X}"


@dataclass(frozen=True)
class Value:
    """An SSA value: its name and its type."""
    name: str
    type: Type

    def __str__(self) -> str:
        return self.name

    def result(self, i: int, t: Type) -> "Value":
        """Result ``i`` (of type ``t``) of the multi-result op named by this value."""
        return Value(f"{self.name}#{i}", t)


Dim = "int | Value"         # a static size or an index value


def _bracket(xs) -> str:
    return "[" + ", ".join(str(x) for x in xs) + "]"


def _in_bounds(vt: Type, in_bounds: bool | None) -> str:
    """The transfer's ``in_bounds`` attribute (one flag per vector dim; None: none)."""
    if in_bounds is None:
        return ""
    return f" {{in_bounds = {_bracket([str(in_bounds).lower()] * len(vt.shape))}}}"


class Emitter:
    """Lines of a function body at indentation ``ind`` (two spaces each)."""

    def __init__(self, ind: int = 2):
        self.budget = budget() or -1       # SSA values (kernel_budget.py; -1: none)
        self.lines: list[str] = []
        self.consts: dict[int, Value] = {}
        self.hoisted: dict[tuple, Value] = {}
        self.index_sink: list[str] | None = None
        self.k = 0
        self.ind = ind

    def __call__(self, text: str) -> None:
        self.lines.append("  " * self.ind + text)

    def fresh(self, base: str) -> str:
        """A new SSA name ``%<base>_<n>`` (n counts up: unique within the
        function, and never an index constant's ``%k<v>``)."""
        self.k += 1
        if self.k == self.budget:
            raise KernelTooLarge(self.budget)
        return f"%{base}_{self.k}"

    def op(self, base: str, text: str, t: Type) -> Value:
        """Emit ``%<fresh> = text``; returns the value (of type ``t``). With
        ``index_sink`` set, index values go there (hoisted out of a region
        being written)."""
        v = Value(self.fresh(base), t)
        line = "  " * self.ind + f"{v} = {text}"
        sink = self.index_sink if t == INDEX and self.index_sink is not None else self.lines
        sink.append(line)
        return v

    # -- index values ------------------------------------------------------
    def index(self, v: int) -> Value:
        """The index constant ``v`` (declared by :meth:`const_lines`)."""
        if v not in self.consts:
            self.consts[v] = Value(f"%k{v}", INDEX)
        return self.consts[v]

    def ix(self, d) -> Value:
        """An index operand: an int becomes its constant."""
        return self.index(d) if isinstance(d, int) else d

    def const(self, text: str, t: Type, base: str = "cst") -> Value:
        """The constant ``text : t`` (``0.0``, ``dense<0.0>``), declared once
        at the function's top by :meth:`const_lines`."""
        if (text, t) not in self.hoisted:
            self.hoisted[(text, t)] = Value(self.fresh(base), t)
        return self.hoisted[(text, t)]

    def splat_const(self, text: str, t: Type) -> Value:
        """The constant ``text`` as a value of type ``t``: a scalar, or every
        lane of a vector (``dense<text>``)."""
        return self.const(text if t.kind is Kind.SCALAR else f"dense<{text}>", t)

    def f32(self, v: float) -> Value:
        """The f32 constant ``v`` (exact: its bits in hex)."""
        return self.const(f32_hex(v), F32)

    def const_lines(self, ind: int = 2) -> list[str]:
        return (["  " * ind + f"{nm} = arith.constant {v} : index"
                 for v, nm in sorted(self.consts.items())]
                + ["  " * ind + f"{v} = arith.constant {text} : {t}"
                   for (text, t), v in self.hoisted.items()])

    def function(self, name: str, params: list[Value], result: Type) -> str:
        """The whole ``func.func private @name`` with this body (constants first)."""
        sig = ", ".join(f"{p}: {p.type}" for p in params)
        head = "  " * (self.ind - 1) + f"func.func private @{name}({sig}) -> {result} {{"
        return "\n".join([head] + self.const_lines(self.ind) + self.lines
                         + ["  " * (self.ind - 1) + "}"])

    def param(self, base: str, t: Type) -> Value:
        """A fresh name for a function or block argument of type ``t``."""
        return Value(self.fresh(base), t)

    # -- regions -----------------------------------------------------------
    def _results(self, base: str, types: list[Type]) -> tuple[str, list[Value]]:
        nm = self.fresh(base)
        if len(types) == 1:
            return nm, [Value(nm, types[0])]
        return f"{nm}:{len(types)}", [Value(f"{nm}#{i}", t) for i, t in enumerate(types)]

    def loop(self, lo, hi, step, inits: list[Value], base: str = "l"):
        """Open ``scf.for iv = lo to hi step step`` carrying ``inits``;
        returns (iv, iter args, results). Close it with :meth:`end`."""
        iv = Value(self.fresh("iv"), INDEX)
        args = [Value(self.fresh("it"), v.type) for v in inits]
        head, res = self._results(base, [v.type for v in inits])
        carried = ", ".join(f"{a} = {v}" for a, v in zip(args, inits))
        types = ", ".join(str(v.type) for v in inits)
        self(f"{head} = scf.for {iv} = {self.ix(lo)} to {self.ix(hi)} step {self.ix(step)} "
             f"iter_args({carried}) -> ({types}) {{")
        self.ind += 1
        return iv, args, res

    def end(self, vals: list[Value]) -> None:
        """``scf.yield vals`` and close the loop."""
        self.yield_(vals)
        self.ind -= 1
        self("}")

    def yield_(self, vals: list[Value]) -> None:
        self(f"scf.yield {', '.join(map(str, vals))} : {', '.join(str(v.type) for v in vals)}")

    def forall(self, n, out: Value, base: str = "par"):
        """Open ``scf.forall (iv) in (n) shared_outs(arg = out)``; returns
        (iv, arg, result). Close it with :meth:`end_forall`."""
        iv, arg = Value(self.fresh("iv"), INDEX), Value(self.fresh("so"), out.type)
        head, (res,) = self._results(base, [out.type])
        self(f"{head} = scf.forall ({iv}) in ({n}) shared_outs({arg} = {out}) -> ({out.type}) {{")
        self.ind += 1
        return iv, arg, res

    def end_forall(self, src: Value, dst: Value, offs, sizes) -> None:
        """``tensor.parallel_insert_slice src into dst[offs] [sizes]`` and close."""
        self("scf.forall.in_parallel {")
        self(f"  tensor.parallel_insert_slice {src} into {dst}{_bracket(offs)} {_bracket(sizes)} "
             f"{_bracket([1] * len(sizes))} : {src.type} into {dst.type}")
        self("}")
        self.ind -= 1
        self("}")

    def extract_slice(self, src: Value, offs, sizes, base: str = "sl") -> Value:
        """The unit-stride slice ``src[offs] [sizes]`` (sizes: ints or index values)."""
        t = tensor(sizes, src.type.elem)
        return self.op(base, f"tensor.extract_slice {src}{_bracket(offs)} {_bracket(sizes)} "
                             f"{_bracket([1] * len(sizes))} : {src.type} to {t}", t)

    def insert_slice(self, src: Value, dst: Value, offs, sizes, base: str = "ins") -> Value:
        return self.op(base, f"tensor.insert_slice {src} into {dst}{_bracket(offs)} "
                             f"{_bracket(sizes)} {_bracket([1] * len(sizes))} "
                             f": {src.type} into {dst.type}", dst.type)

    def _arith(self, name: str, a, b, fold, unit: int | None):
        if isinstance(a, int) and isinstance(b, int):
            return fold(a, b)
        if isinstance(b, int) and b == unit:
            return a
        return self.iop(name, a, b)

    def iop(self, name: str, a, b) -> Value:
        """``arith.<name> a, b : index``, never folded (an index constant
        operand, ``index(v)``, does not fold either)."""
        return self.op("ix", f"arith.{name} {self.ix(a)}, {self.ix(b)} : index", INDEX)

    def add(self, a, b):
        return self._arith("addi", a, b, lambda x, y: x + y, 0)

    def sub(self, a, b):
        return self._arith("subi", a, b, lambda x, y: x - y, 0)

    def mul(self, a, b):
        return self._arith("muli", a, b, lambda x, y: x * y, 1)

    def div(self, a, b):
        return self._arith("divui", a, b, lambda x, y: x // y, 1)

    def cdiv(self, a, b):
        return self._arith("ceildivui", a, b, lambda x, y: -(-x // y), 1)

    def rem(self, a, b):
        return self._arith("remui", a, b, lambda x, y: x % y, None)

    def cmpi(self, pred: str, a, b) -> Value:
        return self.op("cmp", f"arith.cmpi {pred}, {self.ix(a)}, {self.ix(b)} : index", I1)

    # -- ops on typed values -----------------------------------------------
    def dim(self, t: Value, i: int) -> Value:
        return self.op("dim", f"tensor.dim {t}, {self.index(i)} : {t.type}", INDEX)

    def extract(self, t: Value, idx) -> Value:
        """``tensor.extract t[idx]``: a scalar of t's element type."""
        ix = ", ".join(str(self.ix(i)) for i in idx)
        return self.op("ex", f"tensor.extract {t}[{ix}] : {t.type}", t.type.scalar)

    def read(self, src: Value, idx, pad: Value, vt: Type, mask_: Value | None = None,
             in_bounds: bool | None = True, base: str = "x") -> Value:
        """``vector.transfer_read`` of ``vt`` from ``src`` at ``idx``."""
        ix = ", ".join(str(self.ix(i)) for i in idx)
        m = f", {mask_}" if mask_ is not None else ""
        return self.op(base, f"vector.transfer_read {src}[{ix}], {pad}{m}{_in_bounds(vt, in_bounds)} "
                             f": {src.type}, {vt}", vt)

    def write(self, v: Value, dst: Value, idx, mask_: Value | None = None,
              in_bounds: bool | None = True, base: str = "t") -> Value:
        """``vector.transfer_write v`` into ``dst`` at ``idx``."""
        ix = ", ".join(str(self.ix(i)) for i in idx)
        m = f", {mask_}" if mask_ is not None else ""
        return self.op(base, f"vector.transfer_write {v}, {dst}[{ix}]{m}"
                             f"{_in_bounds(v.type, in_bounds)} : {v.type}, {dst.type}", dst.type)

    def broadcast(self, s: Value, vt: Type, base: str = "bc") -> Value:
        return self.op(base, f"vector.broadcast {s} : {s.type} to {vt}", vt)

    def shuffle(self, a: Value, b: Value, idx, base: str = "sh") -> Value:
        t = vector(len(idx), a.type.elem)
        return self.op(base, f"vector.shuffle {a}, {b} {_bracket(idx)} : {a.type}, {b.type}", t)

    def prefix(self, v: Value, n: int, base: str = "part") -> Value:
        """The first ``n`` lanes of vector ``v``."""
        t = vector(n, v.type.elem)
        return self.op(base, f"vector.extract_strided_slice {v} {{offsets = [0], sizes = [{n}], "
                             f"strides = [1]}} : {v.type} to {t}", t)

    def binary(self, name: str, a: Value, b: Value, base: str = "acc", attrs: str = "") -> Value:
        """``name a, b`` of a's type (arith.addf, arith.maximumf, ...);
        ``attrs``: e.g. `` fastmath<contract>``."""
        return self.op(base, f"{name} {a}, {b}{attrs} : {a.type}", a.type)

    def cast(self, name: str, v: Value, t: Type, base: str = "cv") -> Value:
        """``name v : v.type to t`` (arith.bitcast, ...)."""
        return self.op(base, f"{name} {v} : {v.type} to {t}", t)

    def fma(self, a: Value, b: Value, c: Value, base: str = "acc") -> Value:
        return self.op(base, f"vector.fma {a}, {b}, {c} : {a.type}", a.type)

    def select(self, cond: Value, a: Value, b: Value, base: str = "sel") -> Value:
        types = f"{cond.type}, {a.type}" if cond.type.kind is Kind.VECTOR else f"{a.type}"
        return self.op(base, f"arith.select {cond}, {a}, {b} : {types}", a.type)

    def empty(self, shape, base: str = "e", elem: Elem = Elem.F32) -> Value:
        """``tensor.empty`` of ``shape``: ints static, index values the dynamic sizes."""
        t = tensor(shape, elem)
        sizes = ", ".join(str(d) for d in shape if not isinstance(d, int))
        return self.op(base, f"tensor.empty({sizes}) : {t}", t)

    def fill(self, v: Value, dst: Value, base: str = "fill") -> Value:
        return self.op(base, f"linalg.fill ins({v} : {v.type}) outs({dst} : {dst.type}) "
                             f"-> {dst.type}", dst.type)

    def pad(self, src: Value, highs, shape, value: Value, base: str = "pad") -> Value:
        """``tensor.pad src`` by ``highs`` at the end of each dim (ints or
        index values) with ``value``, to ``shape``."""
        t = tensor(shape)
        args = ", ".join(f"{self.fresh('p')}: index" for _ in highs)
        res = Value(self.fresh(base), t)
        ind = "  " * self.ind
        self(f"{res} = tensor.pad {src} low{_bracket([0] * len(highs))} high{_bracket(highs)} {{")
        self.lines.append(f"{ind}^bb0({args}):\n{ind}  tensor.yield {value} : {value.type}\n"
                          f"{ind}}} : {src.type} to {t}")
        return res

    def expand(self, src: Value, reassoc: str, shape, base: str = "ex") -> Value:
        """``tensor.expand_shape`` to ``shape`` (ints, or index values for dynamic sizes)."""
        t = tensor(shape)
        return self.op(base, f"tensor.expand_shape {src} {reassoc} output_shape {_bracket(shape)} "
                             f": {src.type} into {t}", t)

    def collapse(self, src: Value, reassoc: str, shape, base: str = "co") -> Value:
        t = tensor(shape)
        return self.op(base, f"tensor.collapse_shape {src} {reassoc} : {src.type} into {t}", t)

    def broadcast_rows(self, src: Value, dst: Value, maps: str, base: str = "bc") -> Value:
        """``dst`` = ``src`` broadcast by a ``linalg.generic`` with the
        indexing ``maps`` (src's map, dst's map: ``affine_map<...>`` texts)
        over all-parallel dims."""
        rank = len(dst.type.shape)
        iters = ", ".join(['"parallel"'] * rank)
        a, o = self.fresh("in"), self.fresh("out")
        et = dst.type.scalar
        ind = "  " * self.ind
        return self.op(base, f"linalg.generic {{indexing_maps = [{maps}], iterator_types = "
                             f"[{iters}]}} ins({src} : {src.type}) outs({dst} : {dst.type}) {{\n"
                             f"{ind}^bb0({a}: {et}, {o}: {et}):\n{ind}  linalg.yield {a} : {et}\n"
                             f"{ind}}} -> {dst.type}", dst.type)

    def call(self, callee: str, args: list[Value], t: Type, base: str = "y") -> Value:
        """``func.call @callee(args)`` returning one value of type ``t``."""
        return self.op(base, f"func.call @{callee}({', '.join(map(str, args))}) "
                             f": ({', '.join(str(a.type) for a in args)}) -> {t}", t)

    def cmpf(self, pred: str, a: Value, b: Value, base: str = "cmp") -> Value:
        """``arith.cmpf``: an i1 (scalars) or a vector of i1."""
        return self.op(base, f"arith.cmpf {pred}, {a}, {b} : {a.type}", a.type.like(Elem.I1))

    def reduction(self, kind: str, v: Value, base: str = "red") -> Value:
        """``vector.reduction <kind>`` of ``v`` to a scalar."""
        t = v.type.scalar
        return self.op(base, f"vector.reduction <{kind}>, {v} : {v.type} into {t}", t)

    def create_mask(self, n, lanes: int, base: str = "m") -> Value:
        t = mask(lanes)
        return self.op(base, f"vector.create_mask {self.ix(n)} : {t}", t)
