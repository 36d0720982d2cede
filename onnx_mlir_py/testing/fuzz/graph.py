"""The graph under construction: values with concrete shapes at every binding.

A *binding* is one assignment of the model's symbolic dims (``dim_param``)
to sizes, i.e. one run-time shape of the model. Every value records its
dims as one tuple per axis of sizes per binding (``Val.dims[axis][b]``), so
an op spec checks legality and computes its output shape with plain integers
(``Builder.add`` calls its shape function once per binding). A dim is
*static* when it has the same size at every binding.

Bindings 0 and 1 are the two run-time shapes every case runs at; an optional
binding 2 ("empty") is binding 0 with one symbol set to 0. Shape functions
that fail at binding 2 only drop that binding (``Builder.empty_ok``), never
the op.

Nodes are emitted in *groups* (one group per op spec application, e.g. the
Shape -> Gather -> Concat -> Reshape chain is one group); node names are
``g<group>.<k>`` so the reducer removes groups as units.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper

F32, F64, F16 = TP.FLOAT, TP.DOUBLE, TP.FLOAT16
I64, I32, I8, U8, BOOL = TP.INT64, TP.INT32, TP.INT8, TP.UINT8, TP.BOOL
FLOATS = (F32, F64, F16)
INTS = (I64, I32, I8, U8)
NP = {t: np.dtype(helper.tensor_dtype_to_np_dtype(t)) for t in FLOATS + INTS + (BOOL,)}


class Reject(Exception):
    """An op spec cannot be applied here (illegal shapes/attributes); the
    generator tries another op."""


@dataclass
class Val:
    name: str
    dtype: int
    dims: tuple          # per axis: (size at binding 0, size at binding 1, ...)

    @property
    def rank(self) -> int:
        return len(self.dims)

    def shape(self, b: int = 0) -> tuple[int, ...]:
        return tuple(d[b] for d in self.dims)

    def static(self, axis: int) -> bool:
        return len(set(self.dims[axis])) == 1

    def all_static(self) -> bool:
        return all(self.static(a) for a in range(self.rank))


def dims_of(shapes: list[tuple[int, ...]]) -> tuple:
    """Per-binding shapes -> per-axis size vectors."""
    return tuple(zip(*shapes)) if shapes and shapes[0] else ()


class Builder:
    """Collects nodes, inputs and initializers; see the module docstring."""

    def __init__(self, rng: random.Random, nrng: np.random.Generator, opset: int,
                 dynamic: bool, empty: bool):
        self.rng, self.nrng, self.opset = rng, nrng, opset
        self.nodes: list[onnx.NodeProto] = []
        self.inputs: list[Val] = []
        self.inits: list[onnx.TensorProto] = []
        self.values: list[Val] = []      # usable as op operands, in definition order
        self.index_ranges: dict[str, list[tuple[int, int]]] = {}  # input -> per-binding [lo, hi]
        self.group = 0
        self._k = 0
        self._names = 0
        nb = 2
        self.symbols: dict[tuple, str] = {}
        syms = []
        if dynamic:
            for i in range(rng.randint(1, 3)):
                while True:
                    v = (rng.randint(1, 5), rng.randint(1, 7))
                    if v[0] != v[1] and v not in syms:
                        break
                syms.append(v)
        self.empty_ok = empty and bool(syms)
        if self.empty_ok:
            nb = 3
            zero = rng.randrange(len(syms))
            syms = [s + ((0,) if i == zero else (s[0],)) for i, s in enumerate(syms)]
        self.nb = nb
        self.sym_dims = [tuple(s) for s in syms]
        for i, s in enumerate(self.sym_dims):
            self.symbols[s] = "NMKLP"[i]

    # -- names and dims ----------------------------------------------------------
    def fresh(self, prefix: str = "v") -> str:
        self._names += 1
        return f"{prefix}{self._names}"

    def static_dim(self, n: int) -> tuple:
        return (n,) * self.nb

    def random_dim(self, lo: int = 1, hi: int = 6, p_sym: float = 0.35) -> tuple:
        if self.sym_dims and self.rng.random() < p_sym:
            return self.rng.choice(self.sym_dims)
        return self.static_dim(self.rng.randint(lo, hi))

    def random_dims(self, rank: int, **kw) -> tuple:
        return tuple(self.random_dim(**kw) for _ in range(rank))

    def declared_dim(self, d: tuple):
        if len(set(d)) == 1:
            if self.rng.random() < 0.15:       # a dynamic dim that happens to be fixed
                return self.fresh("s")
            return d[0]
        if d not in self.symbols:
            self.symbols[d] = self.fresh("d")
        return self.symbols[d]

    # -- leaves -----------------------------------------------------------------
    def new_input(self, dtype: int, dims: tuple, index_range=None) -> Val:
        """A graph input; ``index_range(b) -> (lo, hi)`` makes it an index
        tensor whose run-time values stay in [lo, hi]."""
        v = Val(self.fresh("in"), dtype, tuple(dims))
        self.inputs.append(v)
        if index_range is not None:
            self.index_ranges[v.name] = [index_range(b) for b in range(self.nb)]
        self.values.append(v)
        return v

    def const(self, array: np.ndarray, dtype: int | None = None, usable: bool = False) -> Val:
        """An initializer holding ``array`` (attribute-like operands: axes, shapes, indices)."""
        dtype = dtype if dtype is not None else helper.np_dtype_to_tensor_dtype(array.dtype)
        array = np.asarray(array, dtype=NP[dtype] if dtype in NP else array.dtype)
        name = self.fresh("w")
        self.inits.append(onnx.numpy_helper.from_array(array, name))
        v = Val(name, dtype, tuple(self.static_dim(n) for n in array.shape))
        if usable:
            self.values.append(v)
        return v

    def random_array(self, dtype: int, shape: tuple, nonzero: bool = False) -> np.ndarray:
        r = self.nrng
        if dtype == BOOL:
            return r.random(shape) < 0.5
        if dtype in FLOATS:
            a = r.uniform(-2, 2, shape)
        else:
            lo = 0 if dtype == U8 else -4
            a = r.integers(lo, 5, shape)
            if nonzero:
                a[a == 0] = 1
        return a.astype(NP[dtype])

    def operand(self, dtype: int, dims: tuple, p_const: float = 0.3) -> Val:
        """A new leaf of the given type: an initializer (static dims only) or an input."""
        if all(len(set(d)) == 1 for d in dims) and self.rng.random() < p_const:
            return self.const(self.random_array(dtype, tuple(d[0] for d in dims)), dtype,
                              usable=True)
        return self.new_input(dtype, dims)

    # -- operands ---------------------------------------------------------------
    def pick(self, pred=lambda v: True, p_new: float = 0.0) -> Val | None:
        """An existing value satisfying ``pred``, biased to recent ones (chains)
        with some older ones (DAGs)."""
        cands = [v for v in self.values if pred(v)]
        if not cands or self.rng.random() < p_new:
            return None
        if self.rng.random() < 0.6:
            return cands[-1] if self.rng.random() < 0.5 else self.rng.choice(cands[-3:])
        return self.rng.choice(cands)

    # -- nodes ------------------------------------------------------------------
    def begin_group(self) -> None:
        self.group += 1
        self._k = 0

    def node(self, op: str, inputs: list, n_out: int = 1, **attrs) -> list[str]:
        """Emit a node; returns its output names (no shape bookkeeping)."""
        from onnx_mlir_py.testing.fuzz.ops import lowered
        if not lowered(op, self.opset):
            raise Reject(f"{op} has no lowering at opset {self.opset}")
        outs = [self.fresh() for _ in range(n_out)]
        names = [i.name if isinstance(i, Val) else i for i in inputs]
        self._k += 1
        self.nodes.append(helper.make_node(op, names, outs, name=f"g{self.group}.{self._k}",
                                           **attrs))
        return outs

    def shapes(self, fn, vals: list[Val]) -> list[list[tuple]]:
        """``fn(*input shapes) -> output shape or list of shapes`` at every
        binding; raises Reject when illegal at binding 0 or 1."""
        per_b = []
        for b in range(self.nb):
            try:
                out = fn(*[v.shape(b) for v in vals])
                if out and isinstance(out, list):
                    outs = [tuple(o) for o in out]
                else:
                    outs = [tuple(out)]
                if any(d < 0 for o in outs for d in o):
                    raise Reject("negative dim")
            except (Reject, ValueError, ZeroDivisionError, IndexError) as e:
                if b < 2:
                    raise Reject(str(e)) from None
                self.empty_ok = False
                outs = per_b[0]
            per_b.append(outs)
        return per_b

    def add(self, op: str, inputs: list[Val], shape_fn, dtypes, shape_args=None,
            usable=True, **attrs) -> list[Val]:
        """Emit ``op`` and record its outputs: ``shape_fn`` over the shapes of
        ``shape_args`` (default: ``inputs``), ``dtypes`` one per output."""
        per_b = self.shapes(shape_fn, shape_args if shape_args is not None else inputs)
        dtypes = [dtypes] if isinstance(dtypes, int) else list(dtypes)
        names = self.node(op, inputs, len(dtypes), **attrs)
        outs = [Val(n, t, dims_of([per_b[b][i] for b in range(self.nb)]))
                for i, (n, t) in enumerate(zip(names, dtypes))]
        if usable:
            self.values.extend(outs)
        return outs

    # -- the model ----------------------------------------------------------------
    def model(self, outputs: list[Val]) -> onnx.ModelProto:
        ins = [helper.make_tensor_value_info(v.name, v.dtype, [self.declared_dim(d)
                                                               for d in v.dims])
               for v in self.inputs]
        # outputs: rank only, or (sometimes) the dims this builder computed
        outs = [helper.make_tensor_value_info(
            v.name, v.dtype, [self.declared_dim(d) if self.rng.random() < 0.3 else None
                              for d in v.dims]) for v in outputs]
        g = helper.make_graph(self.nodes, "fuzz", ins, outs, initializer=self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", self.opset)],
                              producer_name="onnx_mlir_py.testing.fuzz")
        m.ir_version = min(m.ir_version, 10)
        return m
