"""A malformed-input case: the model (bytes, possibly damaged), the files
beside it, the inputs of its runs and the outcome it must have.

Outcomes (``Case.expect``):

- ``"error"``: compiling fails with one of our error classes (``error``, a
  class name of :mod:`onnx_mlir_py.errors` / ``runtime.errors``; any
  ``OnnxMlirError`` when None), a one-line message matching ``match``;
- ``"ok"``: it compiles; every run either matches onnxruntime or (``Run.error``)
  raises that error class with a one-line message matching ``Run.match``;
- ``"clean"``: either of the two (byte-damaged models: a clean refusal, or a
  result that matches onnxruntime when onnxruntime accepts the model).

Never acceptable: a signal, a timeout, an exception that is not one of ours
(KeyError, IndexError, ... from deep inside), an internal-error wrapper, or
a message of more than one line.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

F, I64, I32, BOOL = T.FLOAT, T.INT64, T.INT32, T.BOOL


@dataclass
class Run:
    inputs: list                 # numpy arrays, graph input order
    error: str | None = None     # expected error class name, None: match onnxruntime
    match: str | None = None     # regex the message must contain (re.search)
    expected: list | None = None  # the outputs, where onnxruntime has no answer (it traps)


@dataclass
class Case:
    name: str
    category: str
    model: bytes
    expect: str = "error"        # "error" | "ok" | "clean"
    error: str | None = None
    match: str | None = None
    runs: list = field(default_factory=list)
    files: dict = field(default_factory=dict)   # relative path -> bytes, beside the model
    opt_level: int = 0


def vi(name: str, dtype: int, shape) -> onnx.ValueInfoProto:
    return h.make_tensor_value_info(name, dtype, shape)


def model(nodes, inputs, outputs, inits=(), opset: int = 17, ir: int = 8,
          name: str = "corpus") -> onnx.ModelProto:
    """``inputs``/``outputs``: (name, dtype, shape) triples or ValueInfoProtos."""
    def v(x):
        return x if isinstance(x, onnx.ValueInfoProto) else vi(*x)
    g = h.make_graph(list(nodes), name, [v(i) for i in inputs], [v(o) for o in outputs],
                     initializer=[_init(k, a) if not isinstance(a, onnx.TensorProto) else a
                                  for k, a in (inits.items() if isinstance(inits, dict)
                                               else inits)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = ir
    return m


def _init(name: str, arr) -> onnx.TensorProto:
    from onnx import numpy_helper
    return numpy_helper.from_array(np.asarray(arr), name)


def fx(*shape, seed: int = 0) -> np.ndarray:
    """Deterministic float32 data of a shape."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(np.float32)


def node_case(name: str, category: str, op: str, inputs, attrs=None, inits=None,
              n_out: int = 1, opset: int = 17, out_dtype: int = F, **kw) -> Case:
    """One node named ``bad`` over ``inputs`` ((name, dtype, shape) triples,
    ``inits`` name -> array for constant operands); by default the case must
    fail to compile with a message naming the node."""
    inits = dict(inits or {})
    ins = [n for n, *_ in inputs] + [k for k in inits if k not in {n for n, *_ in inputs}]
    order = kw.pop("order", None)
    node = h.make_node(op, order if order is not None else ins,
                       [f"y{i}" for i in range(n_out)], name="bad", **(attrs or {}))
    m = model([node], inputs, [(f"y{i}", out_dtype, None) for i in range(n_out)],
              inits, opset=opset)
    kw.setdefault("match", r"'bad'" if kw.get("expect", "error") == "error" else None)
    return Case(name, category, m.SerializeToString(), **kw)
