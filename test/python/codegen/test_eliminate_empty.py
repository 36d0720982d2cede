"""bufferize.eliminate_empty_tensors: eliminate-empty-tensors run only on the
functions that hold a tensor.empty and an insertion op, moved into a module
of their own and back; the same module as the pass on the whole module."""
import mlir.ir as ir

from onnx_mlir_py.codegen import bufferize as B
from onnx_mlir_py.codegen.passes import run_pipeline
from onnx_mlir_py.context import make_context

# @fill_rows: an empty filled then inserted into the argument (the pass
# makes the fill write into the argument's slice); @plain: nothing to do
KERNEL = """
func.func private @fill_rows(%d: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %c = arith.constant 1.0 : f32
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = tensor.insert_slice %f into %d[2, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
"""
PLAIN = """
func.func private @plain(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %e = tensor.empty() : tensor<8x8xf32>
  %c = arith.constant 3.0 : f32
  %r = linalg.fill ins(%c : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
"""
MAIN = """
func.func @main_graph(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %r = call @fill_rows(%a) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %r : tensor<8x8xf32>
}
"""
# a function with an empty, an insertion and a call: the whole module
CALLER = """
func.func @main_graph(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %r = call @fill_rows(%a) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %c = arith.constant 2.0 : f32
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = tensor.insert_slice %f into %r[0, 0] [4, 8] [1, 1] : tensor<4x8xf32> into tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}
"""


def _both(text):
    """(returned count, module text) of eliminate_empty_tensors, and the text
    of the pass on the whole module."""
    with make_context():
        ours = ir.Module.parse(text)
        n = B.eliminate_empty_tensors(ours)
        assert ours.operation.verify()
        ref = ir.Module.parse(text)
        run_pipeline(ref, B.ELIMINATE_EMPTY, "test")
        return n, str(ours), str(ref)


def test_only_the_functions_with_work_in_place():
    # the function moved out is first, last, and between others: back in its place
    for text in (KERNEL + PLAIN + MAIN, PLAIN + MAIN + KERNEL, PLAIN + KERNEL + MAIN,
                 KERNEL + KERNEL.replace("@fill_rows", "@fill_b") + MAIN):
        n, ours, ref = _both(text)
        assert n == text.count("tensor.insert_slice")
        assert ours == ref
        # the pass did act: the fill writes into the argument's slice
        assert "tensor.extract_slice" in ours


def test_a_function_that_calls_takes_the_whole_module():
    n, ours, ref = _both(KERNEL + CALLER)
    assert n == -1 and ours == ref
    assert ours.count("tensor.extract_slice") == 2


def test_nothing_to_eliminate():
    n, ours, ref = _both(PLAIN + MAIN.replace("@fill_rows", "@plain"))
    assert n == 0 and ours == ref
