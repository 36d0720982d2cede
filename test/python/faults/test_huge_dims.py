"""Static shapes whose size overflows int64 are refused with one line
naming the input or node (passes/check_sizes.py), at every -O level,
instead of an MLIR assertion (SIGABRT) in codegen. The CLI runs in a
subprocess: before the check it died of a signal."""
import resource
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

BIG = 2 ** 40


def _model(path, nodes, inputs, outputs, inits=()):
    g = h.make_graph(nodes, "g", inputs, outputs, list(inits))
    onnx.save(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]), str(path))
    return str(path)


def _huge_input(path, dims):
    return _model(path, [h.make_node("Add", ["x", "x"], ["y"], name="add0")],
                  [h.make_tensor_value_info("x", T.FLOAT, dims)],
                  [h.make_tensor_value_info("y", T.FLOAT, dims)])


def _huge_intermediate(path, dims):
    """A small input; ConstantOfShape makes a static value of ``dims``."""
    shape = nh.from_array(np.array(dims, np.int64), "shape")
    return _model(path, [h.make_node("ConstantOfShape", ["shape"], ["big"], name="fill"),
                         h.make_node("Add", ["big", "x"], ["y"], name="add0")],
                  [h.make_tensor_value_info("x", T.FLOAT, [1])],
                  [h.make_tensor_value_info("y", T.FLOAT, None)], [shape])


def _limit_memory():
    # a regression that allocates per element (onnx's data propagation did,
    # for 1-D values) fails here instead of calling the OOM killer
    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))


def _cli(model, out, level):
    return subprocess.run([sys.executable, "-m", "onnx_mlir_py.cli", f"-O{level}", model,
                           "-o", str(out)], capture_output=True, text=True, timeout=300,
                          preexec_fn=_limit_memory)


def _one_line(r, *needles):
    assert r.returncode == 1, (r.returncode, r.stderr[-2000:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr[-2000:]
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("dims,needle", [
    ([BIG, BIG], "elements, more than a 64-bit size can count"),     # element count
    ([2 ** 62], "bytes, more than a 64-bit size can hold"),          # 2**62 f32 = 2**64 B
    (["n", BIG, BIG], "elements"),                                   # dynamic + huge static
])
def test_huge_input_refused(tmp_path, level, dims, needle):
    model = _huge_input(tmp_path / "m.onnx", dims)
    line = _one_line(_cli(model, tmp_path / "m", level), "input 'x'", needle)
    assert str(BIG if BIG in dims else 2 ** 62) in line
    assert not list(tmp_path.glob("m.so*"))


@pytest.mark.parametrize("level", [0, 3])
@pytest.mark.parametrize("dims", [[BIG, BIG], [2 ** 62]], ids=["2d", "1d"])
def test_huge_intermediate_names_the_node(tmp_path, level, dims):
    model = _huge_intermediate(tmp_path / "m.onnx", dims)
    _one_line(_cli(model, tmp_path / "m", level), "node 'fill' (ConstantOfShape)",
              str(dims[0]))


def test_large_1d_values_skip_onnx_data_propagation():
    """onnx's data propagation takes memory and time per element of a 1-D
    value (a [2**24] input: 8 s, 2.5 GB): such models are inferred without it."""
    from onnx_mlir_py.importer.model import DATA_PROP_MAX_1D, infer_onnx_types
    import time
    g = h.make_graph([h.make_node("Add", ["x", "x"], ["y"], name="add0")], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [1 << 24])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)])
    assert 1 << 24 > DATA_PROP_MAX_1D
    t = time.perf_counter()
    m = infer_onnx_types(h.make_model(g, opset_imports=[h.make_opsetid("", 17)]))
    assert time.perf_counter() - t < 2.0
    assert [d.dim_value for d in m.graph.output[0].type.tensor_type.shape.dim] == [1 << 24]


def test_largest_allowed_size_is_not_refused():
    from onnx_mlir_py.passes.check_sizes import size_problem
    assert size_problem([2 ** 61 - 1, 1], 4) is None         # just under 2**63 bytes
    assert size_problem([2 ** 61], 4) is not None             # 2**63 bytes
    assert size_problem([0, BIG, BIG], 4) is not None         # MLIR's strides skip 0 dims
    assert size_problem([-1, 2 ** 20], 8) is None             # a dynamic dim counts as 1


def test_tensor_level_module_checked_before_codegen():
    """A tensor-level module given straight to codegen (no ONNX level): the
    buffer is refused before bufferization asserts. In a subprocess."""
    code = """
import mlir.ir as ir
from onnx_mlir_py.codegen import emit_llvm_ir
from onnx_mlir_py.errors import CompileError
ctx = ir.Context()
m = ir.Module.parse('''
func.func @main_graph(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<1099511627776x1099511627776xf32>
  return %a : tensor<4xf32>
}''', ctx)
try:
    emit_llvm_ir(m, opt_level=0)
except CompileError as e:
    print("refused:", e)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "refused:" in r.stdout and "tensor.empty" in r.stdout and str(BIG) in r.stdout, \
        r.stdout
