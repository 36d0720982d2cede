"""passes/optimize/kernel_inline.py: the kernel steps' inlining leaves the
IR that ``inline, symbol-dce`` left (symbol-dce runs only when a private
symbol is left after the inliner)."""
from __future__ import annotations

import mlir.ir as ir
import pytest
from mlir.passmanager import PassManager

from onnx_mlir_py.context import make_context
from onnx_mlir_py.passes.optimize.kernel_inline import inline_kernels, private_symbols

_KERNEL = """
func.func private @kernel(%x: f32) -> f32 {
  %y = arith.addf %x, %x : f32
  return %y : f32
}"""
_MAIN = """
func.func @main(%x: f32) -> f32 {
  %y = func.call @kernel(%x) : (f32) -> f32
  return %y : f32
}"""
_DEAD_DECL = "\nfunc.func private @unused_decl(f32)"
_DEAD_FUNC = """
func.func private @unused(%x: f32) -> f32 {
  return %x : f32
}"""


@pytest.mark.parametrize("extra", ["", _DEAD_DECL, _DEAD_FUNC, _DEAD_DECL + _DEAD_FUNC])
@pytest.mark.parametrize("canonicalize", [False, True])
def test_same_ir_as_inline_then_symbol_dce(extra, canonicalize):
    text = _KERNEL + extra + _MAIN
    with make_context():
        want = ir.Module.parse(text)
        inliner = "inline" if canonicalize else "inline{default-pipeline=}"
        PassManager.parse(f"builtin.module({inliner}, symbol-dce)").run(want.operation)
        got = ir.Module.parse(text)
        inline_kernels(got, canonicalize=canonicalize)
        assert str(got) == str(want)
        assert not private_symbols(got)
        names = [ir.StringAttr(op.operation.attributes["sym_name"]).value
                 for op in got.body.operations]
        assert names == ["main"]


def test_private_symbols():
    with make_context():
        assert not private_symbols(ir.Module.parse(_DEAD_FUNC.replace(" private", "")))
        assert private_symbols(ir.Module.parse(_KERNEL + _MAIN))
        assert private_symbols(ir.Module.parse(_DEAD_DECL))
