"""codegen/passes.run_pipeline: the module is verified once, after the
pipeline (#29: not after each pass); invalid IR is still one CompileError
naming the stage, and ONNX_MLIR_PY_VERIFY_EACH=1 verifies after each pass."""
import mlir.ir as ir
import pytest

from onnx_mlir_py.codegen.passes import VERIFY_EACH_ENV, run_pipeline
from onnx_mlir_py.errors import CompileError


def _broken(ctx) -> ir.Module:
    """A module whose return no longer matches its function's type."""
    m = ir.Module.parse("func.func @f(%a: i32) -> i32 { return %a : i32 }", ctx)
    block = m.body.operations[0].regions[0].blocks[0]
    i64 = ir.IntegerType.get_signless(64)
    with ir.Location.unknown(ctx):
        c = ir.Operation.create("arith.constant", results=[i64],
                                attributes={"value": ir.IntegerAttr.get(i64, 1)},
                                ip=ir.InsertionPoint.at_block_begin(block))
    block.operations[1].operands[0] = c.results[0]
    return m


def test_pipeline_runs_and_result_verifies():
    with ir.Context() as ctx:
        m = ir.Module.parse("func.func @f(%a: i32) -> i32 {\n"
                            "  %c = arith.constant 0 : i32\n"
                            "  %0 = arith.addi %a, %c : i32\n  return %0 : i32\n}", ctx)
        run_pipeline(m, "func.func(canonicalize, cse)", "test")
        assert "arith.addi" not in str(m) and m.operation.verify()


def test_invalid_ir_is_one_error_naming_the_stage(monkeypatch):
    """(The pass manager's own verifier skips a pass that changed nothing:
    with it, this module went through unnoticed.)"""
    monkeypatch.delenv(VERIFY_EACH_ENV, raising=False)
    with ir.Context() as ctx:
        m = _broken(ctx)
        with pytest.raises(CompileError, match="(?s)my stage failed: .*return operand"):
            run_pipeline(m, "func.func(cse)", "my stage")


def test_verify_each_pass_on_request(monkeypatch):
    monkeypatch.setenv(VERIFY_EACH_ENV, "1")
    test_pipeline_runs_and_result_verifies()


def test_bad_pipeline_text_is_one_error():
    with ir.Context() as ctx:
        m = ir.Module.parse("func.func @f() { return }", ctx)
        with pytest.raises(CompileError, match="bad pass pipeline"):
            run_pipeline(m, "no-such-pass", "test")
