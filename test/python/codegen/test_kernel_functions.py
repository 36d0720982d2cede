"""The -O3 kernels as functions at the tensor level, the copies merged
before bufferization (codegen/kernel_functions.py, #29).

What can go wrong, and what each test checks:
- a wrong merge (one conv's weights or constants used for another) or a
  wrong argument gives wrong numbers: models with repeated blocks run
  against onnxruntime at 1 and 2 threads;
- a kernel that no longer writes its destination in place costs a copy per
  call at run time: the LLVM IR has no more allocations than without the
  outlining, no memcpy, and no kernel returns a buffer;
- a slice passed to a kernel would be copied (an argument has the identity
  layout): a kernel reading a Slice's output takes the slice inside, and a
  kernel writing into a slice (a Concat's half) stays in place.
"""
from __future__ import annotations

import re

import numpy as np
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from helpers_models import conv_relu_stack

import mlir.ir as ir

from onnx_mlir_py.codegen import llvm as codegen_llvm
from onnx_mlir_py.codegen import kernel_functions
from onnx_mlir_py.testing.check import assert_match, reference


def _blocks(n_same=3, ch=16, hw=14, seed=0):
    """``n_same`` conv + ReLU blocks of one shape (different weights and
    biases), then one of another width: the repeated ones share a kernel."""
    m = conv_relu_stack([ch] * n_same + [ch * 2], ch, hw, seed)
    rng = np.random.default_rng(seed + 1)
    return m, {"x": rng.standard_normal((1, ch, hw, hw)).astype(np.float32)}


_OUTLINE = kernel_functions.outline_kernels    # (before any spy replaces it)


def _spy(monkeypatch, results: list, enabled: bool = True):
    """Record (outlined, dropped) of each outlining: the -O3 stage's (which
    imports ``kernel_functions.outline_kernels`` when it runs) and codegen's."""
    def spy(module, entry):
        r = _OUTLINE(module, entry) if enabled else (0, 0)
        results.append(r)
        return r
    monkeypatch.setattr(codegen_llvm, "outline_kernels", spy)
    monkeypatch.setattr(kernel_functions, "outline_kernels", spy)


def _total(results: list) -> tuple[int, int]:
    return sum(r[0] for r in results), sum(r[1] for r in results)


def _run(m, feeds, tmp_path, threads):
    import onnx_mlir_py
    from onnx_mlir_py.runtime import ExecutionSession
    so = onnx_mlir_py.compile(m, output=str(tmp_path / f"m{threads}.so"), opt_level=3)
    return ExecutionSession(so, num_threads=threads).run(list(feeds.values()))


def _run_against_onnxruntime(model_and_feeds, tmp_path, monkeypatch, threads, tol):
    """(outlined, dropped) of the compile, after checking its outputs."""
    results = []
    _spy(monkeypatch, results)
    m, feeds = model_and_feeds
    got = _run(m, feeds, tmp_path, threads)
    assert_match(got, reference(m, feeds, "onnxruntime"), rtol=tol, atol=tol / 10)
    # the -O3 stage's (a model with kernels), then codegen's
    assert 1 <= len(results) <= 2, results
    return _total(results)


@pytest.mark.parametrize("threads", [1, 2])
def test_repeated_blocks_share_kernels_and_match(tmp_path, monkeypatch, threads):
    outlined, dropped = _run_against_onnxruntime(_blocks(), tmp_path, monkeypatch, threads, 1e-4)
    assert outlined >= 4 and dropped >= 2, (outlined, dropped)   # blocks 2, 3 reuse block 1's


def _llvm_ir(m, tmp_path, name):
    import onnx_mlir_py
    return open(onnx_mlir_py.compile(m, output=str(tmp_path / f"{name}.ll"), opt_level=3,
                                     emit="EmitLLVMIR")).read()


def _allocs(ll: str) -> int:
    return len(re.findall(r"call ptr @_mlir_memref_to_llvm_alloc\(", ll))


def _memcpys(ll: str) -> int:
    return len(re.findall(r"call void @llvm\.memcpy", ll))


def _no_more_copies_than_inline(m, tmp_path, monkeypatch) -> int:
    """Compile ``m`` to LLVM IR without and with the outlining: the outlined
    build has no more memcpys and allocations; returns how many kernels."""
    results = []
    _spy(monkeypatch, results, enabled=False)
    inline = _llvm_ir(m, tmp_path, "inline")
    n = len(results)
    _spy(monkeypatch, results, enabled=True)
    outlined = _llvm_ir(m, tmp_path, "outlined")
    assert _memcpys(outlined) <= _memcpys(inline)
    assert _allocs(outlined) <= _allocs(inline), (_allocs(outlined), _allocs(inline))
    return _total(results[n:])[0]


def test_kernels_write_their_destination_in_place(tmp_path, monkeypatch):
    returns = {}
    real = codegen_llvm.bufferize_prepared      # bufferization's second half

    def bufferize(module, entry):
        out = real(module, entry)
        for op in module.body.operations:
            name = ir.StringAttr(op.operation.attributes["sym_name"]).value
            if name.startswith(kernel_functions.PREFIX):
                returns[name] = len(ir.FunctionType(
                    ir.TypeAttr(op.operation.attributes["function_type"]).value).results)
        return out
    monkeypatch.setattr(codegen_llvm, "bufferize_prepared", bufferize)
    m, _ = _blocks()
    assert _no_more_copies_than_inline(m, tmp_path, monkeypatch) >= 4
    # after bufferization no kernel returns its destination (it would be cloned)
    assert returns and set(returns.values()) == {0}, returns


def _slice_model(seed=1):
    """A kernel reading a slice (Slice -> Mul -> Tanh) and kernels writing into
    the parts of a Concat (Sigmoid, Relu)."""
    rng = np.random.default_rng(seed)
    k = nh.from_array(rng.standard_normal((1, 32, 1, 1)).astype(np.float32), "k")
    starts = nh.from_array(np.array([1], np.int64), "st")
    ends = nh.from_array(np.array([29], np.int64), "en")
    axes = nh.from_array(np.array([3], np.int64), "ax")
    nodes = [h.make_node("Slice", ["x", "st", "en", "ax"], ["s"]),
             h.make_node("Mul", ["s", "k"], ["m"]),
             h.make_node("Tanh", ["m"], ["t"]),
             h.make_node("Sigmoid", ["z"], ["g"]),
             h.make_node("Relu", ["z"], ["r"]),
             h.make_node("Concat", ["g", "r"], ["y"], axis=1)]
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, [2, 32, 24, 30]),
                                  h.make_tensor_value_info("z", TP.FLOAT, [2, 16, 24, 28])],
                     [h.make_tensor_value_info("t", TP.FLOAT, [2, 32, 24, 28]),
                      h.make_tensor_value_info("y", TP.FLOAT, [2, 32, 24, 28])],
                     [k, starts, ends, axes])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    return m, {"x": rng.standard_normal((2, 32, 24, 30)).astype(np.float32),
               "z": rng.standard_normal((2, 16, 24, 28)).astype(np.float32)}


@pytest.mark.parametrize("threads", [1, 2])
def test_slices_in_and_out_of_kernels(tmp_path, monkeypatch, threads):
    outlined, _ = _run_against_onnxruntime(_slice_model(), tmp_path, monkeypatch, threads, 1e-5)
    assert outlined >= 1


def test_a_slice_read_costs_no_copy(tmp_path, monkeypatch):
    m, _ = _slice_model()
    assert _no_more_copies_than_inline(m, tmp_path, monkeypatch) >= 1


def test_nested_pipelines_give_the_code_of_module_level_ones(tmp_path):
    """Codegen's per-function passes are nested under func.func / llvm.func
    (MLIR runs them on the functions in parallel): the LLVM IR is the one the
    same passes give at the module level."""
    import onnx_mlir_py.codegen.bufferize as bufferize
    m, _ = _blocks()
    nested = _llvm_ir(m, tmp_path, "nested")
    pipelines = [(codegen_llvm, ("TO_LOOPS_PIPELINE", "PRE_LLVM_PIPELINE", "LOWER_PIPELINE")),
                 (bufferize, ("RESOLVE_DIMS_PIPELINE", "PRE_BUFFERIZE_PIPELINE",
                              "BUFFERIZE_PIPELINE"))]
    with pytest.MonkeyPatch.context() as mp:
        for mod, names in pipelines:
            for n in names:
                text = getattr(mod, n)
                assert re.search(r"\b(func|llvm)\.func\(", text), n    # nested today
                mp.setattr(mod, n, re.sub(r"\b(?:func|llvm)\.func\(([^()]*)\)", r"\1", text))
        flat = _llvm_ir(m, tmp_path, "flat")
    assert flat == nested


def test_the_merge_texts_are_the_kernels_prints(tmp_path, monkeypatch):
    """The tensor-level kernel keys (kernel_stubs.stub_kernels) take the
    texts the merge printed (kernel_functions.printed_kernels) instead of
    printing those kernels again: each must be exactly the kernel's print
    at that point (else a key would name other code), and handed over once."""
    import onnx_mlir_py
    from onnx_mlir_py.codegen.kernel_cache import _print
    real = kernel_functions.printed_kernels
    seen = []

    def spy(module):
        texts = real(module)
        with module.context:
            fns = {ir.StringAttr(op.operation.attributes["sym_name"]).value: op.operation
                   for op in module.body.operations if op.operation.name == "func.func"}
            seen.append({n: t == _print(fns[n]) for n, t in texts.items()})
        assert real(module) == {}           # taken once
        return texts
    monkeypatch.setattr(kernel_functions, "printed_kernels", spy)
    m, feeds = _blocks()
    got = _run(m, feeds, tmp_path, 1)
    # the -O3 stage's (dropped: the steps after it change the bodies) and
    # codegen's (the loops left to it)
    assert seen and any(seen) and all(all(s.values()) for s in seen), seen
    assert all(n.startswith(kernel_functions.PREFIX) for s in seen for n in s)
    assert_match(got, reference(m, feeds, "onnxruntime"), rtol=1e-4, atol=1e-5)
