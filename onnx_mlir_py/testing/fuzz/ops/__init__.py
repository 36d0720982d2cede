"""Op specs of the fuzzer, keyed by name (one small module per op group).

A spec is ``fn(g: Builder) -> None``: it picks operands among the values
built so far (``g.pick``) or makes new leaves (``g.operand``), chooses legal
attributes, and emits one group of nodes through ``g.add`` (which computes
the output shapes at every binding). It raises :class:`~..graph.Reject` when
it cannot apply; the generator then rolls the group back and tries another.

``allowed(op, opset)`` reads the ONNX schema's type constraint of an input,
so each op gets every element type its schema allows (among the fuzzer's);
``g.node`` refuses ops the compiler has no lowering rule for at that opset.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import onnx

from onnx_mlir_py.testing.fuzz.graph import (BOOL, F16, F32, F64, FLOATS, I8, I32, I64, INTS, U8,
                                             Reject, Val)  # noqa: F401

_TYPE_STR = {"tensor(float)": F32, "tensor(double)": F64, "tensor(float16)": F16,
             "tensor(int64)": I64, "tensor(int32)": I32, "tensor(int8)": I8,
             "tensor(uint8)": U8, "tensor(bool)": BOOL}


@dataclass
class Spec:
    name: str
    fn: object
    weight: float
    min_opset: int
    mode: str = ""          # "bf16": only drawn when named (``--ops``, ``--precision bf16``)


SPECS: dict[str, Spec] = {}


def spec(name: str, weight: float = 1.0, min_opset: int = 1, mode: str = ""):
    def deco(fn):
        SPECS[name] = Spec(name, fn, weight, min_opset, mode)
        return fn
    return deco


def mode_specs(mode: str) -> list[str]:
    """The names of the specs of ``mode`` (``bf16``)."""
    return sorted(n for n, s in load_all().items() if s.mode == mode)


@functools.lru_cache(maxsize=None)
def schema(op: str, opset: int):
    try:
        return onnx.defs.get_schema(op, opset)
    except onnx.defs.SchemaError:
        return None


@functools.lru_cache(maxsize=None)
def allowed(op: str, opset: int, index: int = 0) -> frozenset:
    """Element types the schema allows for input ``index`` of ``op``."""
    s = schema(op, opset)
    if s is None:
        return frozenset()
    inp = s.inputs[min(index, len(s.inputs) - 1)]
    for c in s.type_constraints:
        if c.type_param_str == inp.type_str:
            return frozenset(_TYPE_STR[t] for t in c.allowed_type_strs if t in _TYPE_STR)
    return frozenset({_TYPE_STR[inp.type_str]}) if inp.type_str in _TYPE_STR else frozenset()


@functools.lru_cache(maxsize=None)
def lowered(op: str, opset: int) -> bool:
    from onnx_mlir_py import registry
    s = schema(op, opset)
    return s is not None and registry.lookup("lower", "", op, s.since_version) is not None


def pick_dtype(g, choices, weights_f32: float = 4.0) -> int:
    """One of ``choices``, float32 favoured."""
    choices = sorted(choices)
    if not choices:
        raise Reject("no element type")
    w = [weights_f32 if t == F32 else 1.0 for t in choices]
    return g.rng.choices(choices, w)[0]


def bcast(*shapes) -> tuple:
    """numpy broadcasting of shapes; ValueError if incompatible."""
    r = max(len(s) for s in shapes)
    out = []
    for i in range(r):
        ds = {s[len(s) - r + i] for s in shapes if len(s) - r + i >= 0}
        ds.discard(1)
        if len(ds) > 1:
            raise ValueError(f"cannot broadcast {shapes}")
        out.append(ds.pop() if ds else 1)
    return tuple(out)


def broadcastable_dims(g, dims: tuple) -> tuple:
    """Dims of a new operand that broadcasts against ``dims``: some axes 1,
    sometimes fewer leading axes."""
    r = g.rng
    out = [d if r.random() < 0.7 else g.static_dim(1) for d in dims]
    if out and r.random() < 0.25:
        out = out[r.randint(1, len(out)):]
    return tuple(out)


def first(g, op: str, pred=lambda v: True, dtypes=None, rank=(0, 4), **kw):
    """An operand of ``op``: an existing value of an allowed type, or a new leaf."""
    ok = set(dtypes if dtypes is not None else allowed(op, g.opset))
    v = g.pick(lambda v: v.dtype in ok and rank[0] <= v.rank <= rank[1] and pred(v), **kw)
    if v is None:
        t = pick_dtype(g, ok)
        for _ in range(10):
            dims = g.random_dims(g.rng.randint(*rank))
            if pred(Val("", t, dims)):
                return g.operand(t, dims)
        raise Reject(f"no operand for {op}")
    return v


def load_all() -> dict[str, Spec]:
    # noqa: F401
    from onnx_mlir_py.testing.fuzz.ops import (bf16, control, conv, elementwise, linalg,
                                               quant, reduce, shape)
    return SPECS
