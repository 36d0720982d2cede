"""codegen/elementwise_functions: a huge function's elementwise generics
become calls of one function per distinct op (issue #29: a 50,000-node
chain at -O3 vectorized ~4,200 fused groups though four are different). Ops
that differ in anything (a captured constant, a type, a map) keep functions
of their own; ops that cannot be passed without a copy stay in place;
results unchanged against onnxruntime."""
from __future__ import annotations

import sys

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import mlir.ir as ir

from onnx_mlir_py.codegen import bufferize as B
from onnx_mlir_py.codegen import elementwise_functions as E
from onnx_mlir_py.codegen.passes import run_pipeline
from onnx_mlir_py.context import make_context
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.testing.check import assert_match, reference

_OP = """
  %e{i} = tensor.empty() : tensor<8xf32>
  %v{i} = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel"]}}
      ins(%v{p} : tensor<8xf32>) outs(%e{i} : tensor<8xf32>) {{
    ^bb0(%a: f32, %o: f32):
      %s = arith.{op} %a, {c} : f32
      linalg.yield %s : f32
  }} -> tensor<8xf32>"""


def _module(kinds: list[tuple[str, str]], tail: str = "", last: str | None = None) -> str:
    """A chain of generics ``(arith op, scalar constant)`` over tensor<8xf32>."""
    body = "\n".join(_OP.format(i=i, p=i - 1, op=op, c=c) for i, (op, c) in
                     enumerate(kinds, 1))
    ret = last or f"%v{len(kinds)}"
    return f"""
#id = affine_map<(d0) -> (d0)>
#red = affine_map<(d0) -> ()>
func.func @main_graph(%v0: tensor<8xf32>) -> tensor<8xf32> {{
  %c1 = arith.constant 1.0 : f32
  %c2 = arith.constant 2.0 : f32
{body}
{tail}
  return {ret} : tensor<8xf32>
}}"""


def _funcs(m: ir.Module) -> list[ir.Operation]:
    return [op.operation for op in m.body.operations
            if op.operation.attributes["sym_name"].value.startswith(E.PREFIX)]


def _entry(m: ir.Module) -> ir.Operation:
    return [op.operation for op in m.body.operations][-1]


def test_one_function_per_distinct_op():
    # 4 kinds: addf 1.0, addf 2.0 (another captured constant), mulf 1.0, subf 1.0
    kinds = [("addf", "%c1"), ("addf", "%c2"), ("mulf", "%c1"), ("subf", "%c1")] * 5
    with make_context():
        m = ir.Module.parse(_module(kinds))
        assert E.outline_elementwise(_entry(m), min_ops=0) == 20
        assert m.operation.verify()
        fns = _funcs(m)
        assert len(fns) == 4
        for f in fns:
            assert str(f.attributes["passthrough"]) == '["noinline"]'
        assert not walk_ops(_entry(m), "linalg.generic")
        # each function keeps its own constant
        consts = sorted(str(walk_ops(f, "arith.constant")[0].attributes["value"]) for f in fns)
        assert consts == ["1.000000e+00 : f32"] * 3 + ["2.000000e+00 : f32"], consts
        run_pipeline(m, B.BUFFERIZE_PIPELINE, "test")
        assert m.operation.verify()
        # the destinations are the caller's buffers, written in place
        assert not walk_ops(m, ("memref.copy", "bufferization.clone"))


def test_small_function_is_left_alone():
    with make_context():
        m = ir.Module.parse(_module([("addf", "%c1")] * 10))
        assert E.outline_elementwise(_entry(m)) == 0          # MIN_OPS
        assert not _funcs(m)


def test_ops_that_cannot_be_called_stay_in_place():
    """A reduction, a generic reading its destination, a slice input and a
    result inserted into a larger tensor stay generics."""
    tail = """
  %r0 = tensor.empty() : tensor<f32>
  %r = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["reduction"]}
      ins(%v2 : tensor<8xf32>) outs(%r0 : tensor<f32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
  } -> tensor<f32>
  %rd = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%v2 : tensor<8xf32>) outs(%v1 : tensor<8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %o : f32
      linalg.yield %s : f32
  } -> tensor<8xf32>
  %w0 = tensor.empty() : tensor<16xf32>
  %w = tensor.insert_slice %v2 into %w0[0] [8] [1] : tensor<8xf32> into tensor<16xf32>
  %sl = tensor.extract_slice %w[4] [8] [1] : tensor<16xf32> to tensor<8xf32>
  %e9 = tensor.empty() : tensor<8xf32>
  %v9 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%sl : tensor<8xf32>) outs(%e9 : tensor<8xf32>) {
    ^bb0(%a: f32, %o: f32):
      %s = arith.addf %a, %c1 : f32
      linalg.yield %s : f32
  } -> tensor<8xf32>
  %x = tensor.extract %r[] : tensor<f32>
  %y = tensor.extract %rd[%i0] : tensor<8xf32>
  %z = arith.addf %x, %y : f32
  %out = tensor.insert %z into %v9[%i0] : tensor<8xf32>"""
    text = _module([("addf", "%c1"), ("mulf", "%c2")], tail, "%out").replace(
        "  %c1 = arith.constant 1.0 : f32", "  %c1 = arith.constant 1.0 : f32\n"
        "  %i0 = arith.constant 0 : index")
    with make_context():
        m = ir.Module.parse(text)
        n = E.outline_elementwise(_entry(m), min_ops=0)
        assert m.operation.verify()
        # %v1 is called (that %rd writes into it later changes nothing);
        # %v2 (inserted into %w), %r, %rd and %v9 stay
        left = walk_ops(_entry(m), "linalg.generic")
        assert len(left) == 4, [str(g)[:60] for g in left]
        assert n == 1


def _model(n: int, dynamic: bool = False, residual: bool = True):
    """A chain of every elementwise kind with several constants (Clips of
    different bounds: scalar constants in the body), a broadcast input and a
    residual read across the chain."""
    rng = np.random.default_rng(1)
    inits = {"c": (rng.standard_normal(16) * 0.5).astype(np.float32),
             "d": (rng.standard_normal(16) * 0.3).astype(np.float32),
             "lo1": np.array(-0.5, np.float32), "hi1": np.array(0.5, np.float32),
             "lo2": np.array(-0.25, np.float32), "hi2": np.array(0.75, np.float32)}
    steps = [("Add", ["c"], {}), ("Tanh", [], {}), ("Mul", ["d"], {}), ("Sigmoid", [], {}),
             ("Clip", ["lo1", "hi1"], {}), ("Add", ["d"], {}), ("Clip", ["lo2", "hi2"], {}),
             ("LeakyRelu", [], {"alpha": 0.2}), ("LeakyRelu", [], {"alpha": 0.3}),
             ("Sub", ["c"], {})]
    nodes, prev = [], "x"
    for i in range(n):
        op, extra, kw = steps[i % len(steps)]
        nodes.append(h.make_node(op, [prev] + extra, [f"v{i}"], **kw))
        prev = f"v{i}"
        if residual and i % 17 == 16:
            nodes.append(h.make_node("Add", [prev, "v2"], [f"a{i}"]))   # residual
            prev = f"a{i}"
    rows = "N" if dynamic else 4
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [rows, 16])],
                     [h.make_tensor_value_info(prev, TP.FLOAT, [rows, 16])],
                     [nh.from_array(v, k) for k, v in inits.items()])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


@pytest.mark.parametrize("opt", [2, 3])
@pytest.mark.parametrize("dynamic", [False, True])
def test_outlined_model_matches_onnxruntime(tmp_path, monkeypatch, opt, dynamic):
    """-O3 and -O2 (fuse_huge_functions: the fusion and the outlining in a
    huge function) against onnxruntime, the bounds lowered."""
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    calls = []
    real = E.outline_elementwise

    def counted(fn, min_ops=None):
        calls.append(real(fn, min_ops))
        return calls[-1]
    monkeypatch.setattr(E, "MIN_OPS", 8)
    monkeypatch.setattr("onnx_mlir_py.codegen.bufferize_chunks.CHUNK_MIN_OPS", 16)
    from onnx_mlir_py.passes.optimize import fuse_elementwise
    monkeypatch.setattr(sys.modules[fuse_elementwise.__module__], "outline_elementwise",
                        counted)
    m = _model(120, dynamic)
    so = onnx_mlir_py.compile(m, output=str(tmp_path / "m.so"), opt_level=opt)
    if not dynamic:
        assert sum(calls) > 1, calls         # a few fused groups
    sess = ExecutionSession(so)
    rng = np.random.default_rng(2)
    for rows in ([4] if not dynamic else [1, 5, 12]):
        x = rng.standard_normal((rows, 16)).astype(np.float32)
        assert_match(sess.run([x]), reference(m, {"x": x}, "onnxruntime"), rtol=1e-5, atol=1e-5)


def test_outlined_functions_approximated_and_vectorized_once(tmp_path, monkeypatch):
    """The outlining runs right after the fusion and approximate_math's
    inline pass keeps the calls (``no_inline``): the polynomials and the
    vectorization are done once per distinct function, not once per fused
    group (a 300-node chain without residuals: 30 Tanh and 30 Sigmoid nodes,
    13 fused groups, 4 distinct)."""
    import onnx_mlir_py
    import onnx_mlir_py.passes.optimize as O
    from onnx_mlir_py.runtime import ExecutionSession
    monkeypatch.setattr(E, "MIN_OPS", 8)
    seen = {}
    real_approx, real_vec = O.approximate_math, O.vectorize_elementwise

    def approx(m, *a, **k):
        seen["approximated"] = real_approx(m, *a, **k)
        seen["functions"] = len(_funcs(m))
        seen["calls"] = len(walk_ops(m, "func.call"))
        return seen["approximated"]

    def vec(m, *a, **k):
        seen["vectorized"] = real_vec(m, *a, **k)
        seen["calls after"] = len([c for c in walk_ops(m, "func.call") if str(
            c.attributes["callee"]).startswith("@" + E.PREFIX)])
        return seen["vectorized"]
    monkeypatch.setattr(O, "approximate_math", approx)
    monkeypatch.setattr(O, "vectorize_elementwise", vec)
    m = _model(300, residual=False)
    so = onnx_mlir_py.compile(m, output=str(tmp_path / "m.so"), opt_level=3)
    groups = seen["calls after"]
    assert seen["functions"] >= 2 and groups > seen["functions"], seen
    # each function approximated and vectorized once: not the groups' 60
    # transcendental ops, no more vectorized generics than functions
    assert 0 < seen["approximated"] < 30, seen
    assert seen["vectorized"] <= seen["functions"], seen
    x = np.random.default_rng(3).standard_normal((4, 16)).astype(np.float32)
    assert_match(ExecutionSession(so).run([x]), reference(m, {"x": x}, "onnxruntime"),
                 rtol=1e-5, atol=1e-5)


def test_o2_fuses_only_huge_functions():
    """-O2's fuse_huge_functions leaves a module whose functions have at
    most MIN_OPS top-level ops as it was (a normal model's code unchanged),
    and fuses and outlines the chain of a huge one."""
    from onnx_mlir_py.passes.optimize.fuse_elementwise import fuse_huge_functions
    kinds = [("addf", "%c1"), ("mulf", "%c2")] * 10
    with make_context():
        m = ir.Module.parse(_module(kinds))
        before = str(m)
        assert not fuse_huge_functions(m)
        assert str(m) == before
    with make_context():
        m = ir.Module.parse(_module(kinds))
        old = E.MIN_OPS
        E.MIN_OPS = 8
        try:
            assert fuse_huge_functions(m)
        finally:
            E.MIN_OPS = old
        assert m.operation.verify()
        # the 20 ops fused into one group (weight 20; the entry is then
        # small: the outlining of the groups is test_outlined_model_...)
        assert len(walk_ops(_entry(m), "linalg.generic")) == 1
