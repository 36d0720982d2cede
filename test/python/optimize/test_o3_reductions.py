"""-O3 row reductions: float add/mul ``vector.reduction`` ops are marked
``fastmath<reassoc>`` (passes/optimize/reductions.py) so LLVM sums a row as
vectors and a tree of lanes instead of one dependent scalar add per element;
GlobalAveragePool / GlobalMaxPool reduce their spatial dims as one row
(passes/onnx_to_linalg/pool.py). Numbers against onnxruntime, with dynamic
dims at two run-time shapes, at -O0 and -O3."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from onnx_mlir_py import compiler
from onnx_mlir_py.options import Options
from onnx_mlir_py.passes.optimize import reductions
from onnx_mlir_py.passes.pipeline import run_passes, to_onnx_ir
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.timings import Timings

N = h.make_node


def _model(dims):
    """GlobalAveragePool, GlobalMaxPool, ReduceSum over the last axis and a
    Softmax of one [N, C, H, W] input (dims may be names)."""
    x = h.make_tensor_value_info("x", T.FLOAT, dims)
    outs = [h.make_tensor_value_info(n, T.FLOAT, None) for n in ("gap", "gmp", "rsum", "sm")]
    axes = h.make_tensor("axes", T.INT64, [1], [3])
    g = h.make_graph([N("GlobalAveragePool", ["x"], ["gap"], name="gap_node"),
                      N("GlobalMaxPool", ["x"], ["gmp"], name="gmp_node"),
                      N("ReduceSum", ["x", "axes"], ["rsum"], name="rsum_node", keepdims=1),
                      N("Softmax", ["x"], ["sm"], name="sm_node", axis=-1)],
                     "reductions", [x], outs, [axes])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)])
    m.ir_version = 9
    return m


def _o3_ir(model) -> str:
    opts, t = Options(emit="EmitLib", opt_level=3), Timings()
    module = compiler.import_onnx(model, opts, t)
    run_passes(module, ["expand-functions"], t)
    to_onnx_ir(module, t)
    compiler.lower(module, opts, t)
    compiler.optimize_tensors(module, compiler.resolve_target(opts), t)
    return str(module)


def test_row_sums_are_reassociable():
    text = _o3_ir(_model([2, 24, 14, 14]))
    reds = [ln for ln in text.splitlines() if "vector.reduction <add>" in ln]
    assert reds, "no vectorized sum"
    assert all("fastmath<reassoc>" in ln for ln in reds), reds
    # max reductions need no flag (exact in any order) and are left alone
    assert not any("fastmath" in ln for ln in text.splitlines()
                   if "vector.reduction <maximumf>" in ln)


def test_global_pool_reduces_one_row():
    """The 14 x 14 spatial dims are one row of 196 (a reshape), not two
    reduction dims the vectorizer leaves as a scalar loop."""
    text = _o3_ir(_model([2, 24, 14, 14]))
    assert "vector<196xf32>" in text


@pytest.mark.parametrize("opt", [0, 3])
def test_against_onnxruntime_dynamic(tmp_path, opt):
    model = _model(["N", 24, "H", "W"])
    path = str(tmp_path / "m.onnx")
    import onnx
    onnx.save(model, path)
    lib = onnx_mlir_py.compile(path, opt_level=opt)
    ref = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(3)
    for shape in [(2, 24, 14, 14), (1, 24, 7, 33), (3, 24, 40, 40)]:
        x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
        for threads in (1, 2):
            got = ExecutionSession(lib, num_threads=threads).run([x])
            want = ref.run(None, {"x": x})
            for g, w, name in zip(got, want, ("gap", "gmp", "rsum", "sm")):
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5,
                                           err_msg=f"{name} at {shape}, {threads} threads")


@pytest.mark.parametrize("hw", [(28, 28), (56, 56), (17, 19), (40, 25)])
def test_long_static_rows(tmp_path, hw):
    """Static rows longer than WHOLE_ROW_MAX (256): 784 and 3136 in whole
    chunks of vectors, 323 and 1000 with a scalar remainder (peeled). Were a
    scalar loop: a GlobalAveragePool over 96x28x28 took 70 us, one dependent
    add per element. Rows of -inf check that no padding lane reaches the
    max (the remainder must not be masked); GlobalMaxPool is checked against
    numpy there (onnxruntime gives -FLT_MAX for a row of -inf)."""
    model = _model([2, 24, *hw])
    text = _o3_ir(model)
    # no whole row left to a scalar loop (only a peeled remainder, < 4 vectors)
    generics = [ln for ln in text.splitlines() if "linalg.generic" in ln]
    assert not any(f"x{hw[0] * hw[1]}xf32>" in ln for ln in generics), generics
    assert "vector.reduction <add>" in text
    path = str(tmp_path / "m.onnx")
    import onnx
    onnx.save(model, path)
    lib = onnx_mlir_py.compile(path, opt_level=3)
    ref = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    x = (np.random.default_rng(4).standard_normal((2, 24, *hw)) * 3 + 1).astype(np.float32)
    x[1, 5] = -np.inf
    for threads in (1, 2):
        got = ExecutionSession(lib, num_threads=threads).run([x])
        want = ref.run(None, {"x": x})
        want[1] = x.max(axis=(2, 3), keepdims=True)
        for g, w, name in zip(got, want, ("gap", "gmp", "rsum", "sm")):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5,
                                       err_msg=f"{name} at {hw}, {threads} threads")


def test_pass_counts_only_float_sums():
    import mlir.ir as ir
    with ir.Context(), ir.Location.unknown():
        m = ir.Module.parse("""
func.func @f(%v: vector<16xf32>, %i: vector<16xi32>) -> (f32, f32, i32) {
  %a = vector.reduction <add>, %v : vector<16xf32> into f32
  %b = vector.reduction <maximumf>, %v : vector<16xf32> into f32
  %c = vector.reduction <add>, %i : vector<16xi32> into i32
  return %a, %b, %c : f32, f32, i32
}""")
        assert reductions.reassociate_reductions(m) == 1
        assert reductions.reassociate_reductions(m) == 0      # already marked
        assert str(m).count("fastmath<reassoc>") == 1


def test_pass_keeps_existing_flags():
    import mlir.ir as ir
    with ir.Context(), ir.Location.unknown():
        m = ir.Module.parse("""
func.func @f(%v: vector<16xf32>) -> (f32, f32, f32) {
  %a = vector.reduction <add>, %v fastmath<nnan,ninf> : vector<16xf32> into f32
  %b = vector.reduction <mul>, %v fastmath<fast> : vector<16xf32> into f32
  %c = vector.reduction <add>, %v fastmath<none> : vector<16xf32> into f32
  return %a, %b, %c : f32, f32, f32
}""")
        assert reductions.reassociate_reductions(m) == 2
        text = str(m)
        assert "fastmath<reassoc,nnan,ninf>" in text          # kept, printed in MLIR's order
        assert "fastmath<fast>" in text
        assert "fastmath<reassoc>" in text                      # none -> reassoc
