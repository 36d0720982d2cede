"""onnx_mlir_py/distinct_loops.py: inside ``distinct_loops`` every loop
directly in a function body has a key of its own, so MLIR's CSE never
compares two loops region by region (loops that read their inputs from
above and share one init all hashed alike: quadratic in the loops, issue
#29); CSE still merges everything else, and the keys are gone afterwards."""
from __future__ import annotations

import mlir.ir as ir
from mlir.passmanager import PassManager

from onnx_mlir_py.context import make_context
from onnx_mlir_py.distinct_loops import KEY, distinct_loops
from onnx_mlir_py.ir_util import walk_ops


def _ir(n: int) -> str:
    """``n`` loops over one shared init, each reading its own input from
    above; loops 0 and 1 are the same loop (same input), and every loop body
    holds a duplicated constant."""
    loops = []
    for i in range(n):
        src = 0 if i == 1 else i
        loops.append(f"""
  %e{i} = tensor.empty() : tensor<4xf32>
  %r{i} = scf.forall (%i) in (4) shared_outs(%o = %e{i}) -> (tensor<4xf32>) {{
    %a = arith.constant 1.0 : f32
    %b = arith.constant 1.0 : f32
    %x = tensor.extract %in{src}[%i] : tensor<4xf32>
    %y = arith.addf %x, %a : f32
    %z = arith.addf %y, %b : f32
    %t = tensor.from_elements %z : tensor<1xf32>
    scf.forall.in_parallel {{
      tensor.parallel_insert_slice %t into %o[%i] [1] [1] : tensor<1xf32> into tensor<4xf32>
    }}
  }}""")
    args = ", ".join(f"%in{i}: tensor<4xf32>" for i in range(n))
    rets = ", ".join(f"%r{i}" for i in range(n))
    types = ", ".join(["tensor<4xf32>"] * n)
    return f"func.func @f({args}) -> ({types}) {{{''.join(loops)}\n  return {rets} : {types}\n}}"


def _cse(m: ir.Module) -> None:
    PassManager.parse("builtin.module(cse)").run(m.operation)


def test_loops_keyed_inside_and_clean_after():
    with make_context():
        m = ir.Module.parse(_ir(6))
        with distinct_loops(m):
            keys = [int(ir.IntegerAttr(op.attributes[KEY]).value)
                    for op in walk_ops(m, "scf.forall")]
            assert sorted(keys) == list(range(6))      # one key per loop
            _cse(m)
            assert len(walk_ops(m, "tensor.empty")) == 1          # the inits merged
            assert len(walk_ops(m, "scf.forall")) == 6            # no loop merged
            for loop in walk_ops(m, "scf.forall"):                 # inside: CSE as before
                assert len(walk_ops(loop, "arith.constant")) == 1
        assert KEY not in str(m)
        assert m.operation.verify()


def test_without_keys_cse_merges_the_same_loop():
    # the comparison the keys avoid: without them CSE compares the loops
    # region by region (and merges loop 1 into loop 0)
    with make_context():
        m = ir.Module.parse(_ir(6))
        _cse(m)
        assert len(walk_ops(m, "scf.forall")) == 5
