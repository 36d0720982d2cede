"""``--precision bf16``: the f32 Conv / MatMul / Gemm read bf16 inputs and
accumulate in f32 (passes/onnx_to_linalg/bf16.py).

Each model runs at two run-time sizes of its dynamic dims and is checked
against onnx.reference twice: on the same model with every contraction
input rounded to bf16 (Cast to BFLOAT16 and back: round to nearest even,
as ml_dtypes; then f32 sums) to f32 rounding error, and against the plain
f32 model within bf16's error, 2^-8 sqrt(K) of the output's scale (and not
equal to it: the mode is on), and per element within the fuzzer's bound
(testing/fuzz/bf16_bound.py: the rounding's actual effect, by ml_dtypes,
+ K f32 roundings: the fuzzer's oracle checked on these models too)."""
import math

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh
from onnx.reference import ReferenceEvaluator

import onnx_mlir_py
from onnx_mlir_py.errors import CompileError
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.target import resolve
from onnx_mlir_py.testing.fuzz.bf16_bound import bounds, compare, rounded_model
from onnx_mlir_py.verify.values import expose_values

HOST = resolve(None, None, host_default=True)
needs_bf16 = pytest.mark.skipif(not (HOST.avx512_bf16 or HOST.amx_bf16),
                                reason="the build machine has no AVX512-BF16 / AMX-BF16")
CONTRACTIONS = ("Conv", "MatMul", "Gemm")
R = np.random.default_rng(0)


def _w(*shape):
    return R.standard_normal(shape).astype(np.float32)


def _model(nodes, inputs, inits, opset=17):
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info(n, T.FLOAT, s) for n, s in inputs],
                     [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [nh.from_array(a, n) for n, a in inits.items()])
    return h.make_model(g, opset_imports=[h.make_opsetid("", opset)])


# name -> (model, K of its contraction, {dim name: run-time sizes})
CASES = {
    "matmul_3d_2d": (lambda: _model([h.make_node("MatMul", ["x", "w"], ["y"])],
                                    [("x", ["N", "S", 64])], {"w": _w(64, 24)}),
                     64, {"N": (1, 3), "S": (2, 5)}),
    "gemm_transb_bias": (lambda: _model(
        [h.make_node("Gemm", ["x", "w", "c"], ["y"], transB=1, alpha=0.5, beta=2.0)],
        [("x", ["N", 48])], {"w": _w(20, 48), "c": _w(20)}), 48, {"N": (1, 4)}),
    "batch_matmul_activations": (lambda: _model(
        [h.make_node("MatMul", ["x", "z"], ["y"])],
        [("x", ["N", 5, 16]), ("z", ["N", 16, 7])], {}), 16, {"N": (1, 3)}),
    "matmul_1d_broadcast": (lambda: _model(
        [h.make_node("MatMul", ["x", "z"], ["y"])],
        [("x", [16]), ("z", ["N", 16, 3])], {}), 16, {"N": (1, 2)}),
    "conv_bias_stride": (lambda: _model(
        [h.make_node("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1], strides=[2, 2])],
        [("x", ["N", 6, 9, 9])], {"w": _w(8, 6, 3, 3), "b": _w(8)}), 54, {"N": (1, 2)}),
    "conv_dynamic_hw": (lambda: _model(
        [h.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])],
        [("x", [1, 3, "H", "H"])], {"w": _w(4, 3, 3, 3)}), 27, {"H": (5, 8)}),
    "conv_grouped": (lambda: _model(
        [h.make_node("Conv", ["x", "w"], ["y"], group=2)],
        [("x", ["N", 4, 7, 7])], {"w": _w(6, 2, 3, 3)}), 18, {"N": (1, 2)}),
    "conv_depthwise": (lambda: _model(
        [h.make_node("Conv", ["x", "w", "b"], ["y"], group=4, pads=[1, 1, 1, 1])],
        [("x", ["N", 4, 8, 8])], {"w": _w(4, 1, 3, 3), "b": _w(4)}), 9, {"N": (1, 3)}),
    "conv_1d": (lambda: _model([h.make_node("Conv", ["x", "w"], ["y"])],
                               [("x", ["N", 3, "L"])], {"w": _w(5, 3, 3)}),
                9, {"N": (1, 2), "L": (6, 11)}),
    "conv_3d": (lambda: _model([h.make_node("Conv", ["x", "w"], ["y"])],
                               [("x", ["N", 2, 4, 4, 4])], {"w": _w(3, 2, 2, 2, 2)}),
                16, {"N": (1, 2)}),
    # a chain: the Gemm's input is the conv's (f32) output, rounded again
    "conv_relu_gemm": (lambda: _model(
        [h.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
         h.make_node("Relu", ["c"], ["r"]), h.make_node("Flatten", ["r"], ["f"]),
         h.make_node("Gemm", ["f", "v"], ["y"])],
        [("x", ["N", 2, 4, 4])], {"w": _w(3, 2, 3, 3), "v": _w(48, 5)}), 48, {"N": (1, 2)}),
}


def bf16_rounded(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model`` with inputs 0 and 1 of every Conv / MatMul / Gemm rounded to
    bf16 and back to f32 (onnx Casts): the bf16 mode's arithmetic in f32."""
    return rounded_model(model, CONTRACTIONS)


def _inputs(model, sizes: dict, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    out = {}
    for vi in model.graph.input:
        shape = [d.dim_value if d.HasField("dim_value") else sizes[d.dim_param]
                 for d in vi.type.tensor_type.shape.dim]
        out[vi.name] = rng.standard_normal(shape).astype(np.float32)
    return out


def check_bf16(y, model, feed, k: int) -> None:
    """``y``: the bf16 mode's output of ``model`` on ``feed``."""
    ref = ReferenceEvaluator(bf16_rounded(model)).run(None, feed)[0]
    f32 = ReferenceEvaluator(model).run(None, feed)[0]
    scale = float(np.abs(f32).max())
    # the same rounded inputs, f32 sums in another order
    np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-5 * scale)
    err = float(np.abs(y - f32).max()) / scale
    assert 0 < err <= 2.0 ** -8 * math.sqrt(k), err
    # per element: the bf16 rounding's actual effect + K f32 roundings (the fuzzer's oracle)
    exposed, names = expose_values(model)
    values = dict(zip(names, ReferenceEvaluator(exposed).run(None, feed)))
    e = bounds(model, feed, values)["y"]
    assert compare(y, f32, e) is None, compare(y, f32, e)


@needs_bf16
@pytest.mark.parametrize("opt", [0, 3])
@pytest.mark.parametrize("name", sorted(CASES))
def test_bf16_matches_rounded_reference(name, opt, tmp_path):
    make, k, dims = CASES[name]
    model = make()
    so = onnx_mlir_py.compile(model, tmp_path / "m.so", opt_level=opt, precision="bf16")
    sess = ExecutionSession(str(so))
    for i in range(2):          # two run-time sizes of the dynamic dims
        feed = _inputs(model, {d: v[i] for d, v in dims.items()}, seed=i)
        y = sess.run([feed[vi.name] for vi in model.graph.input])[0]
        check_bf16(y, model, feed, k)


@pytest.mark.quick
@needs_bf16
def test_bf16_quick(tmp_path):
    test_bf16_matches_rounded_reference("conv_relu_gemm", 3, tmp_path)


@pytest.mark.parametrize("how", [dict(march="x86-64-v3"), dict(mcpu="skylake-avx512"),
                                 dict(march="x86-64-v3+x86-64-v4")])
def test_refused_without_bf16(how, tmp_path):
    model = CASES["matmul_3d_2d"][0]()
    with pytest.raises(CompileError, match=r"^--precision bf16 needs AVX512-BF16 or "
                                           r"AMX-BF16; target \S+ has neither$"):
        onnx_mlir_py.compile(model, tmp_path / "m.so", precision="bf16", **how)


def test_refused_on_the_command_line(tmp_path, capsys):
    from onnx_mlir_py.cli import main
    path = tmp_path / "m.onnx"
    onnx.save(CASES["matmul_3d_2d"][0](), path)
    assert main([str(path), "--precision", "bf16", "--march", "x86-64-v3"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: --precision bf16 needs AVX512-BF16 or AMX-BF16; target x86-64-v3 "
                   "has neither"]


def test_precision_is_checked():
    from onnx_mlir_py.options import Options
    with pytest.raises(CompileError, match="precision must be one of fp32, bf16"):
        Options(precision="fp16")


@needs_bf16
def test_kernel_plan_keeps_f32_kernels_off_bf16_contractions(tmp_path):
    """Only a ``*_bf16`` kernel may take a bf16 -> f32 contraction; the f32
    kernels (conv_direct, im2col, packed matmul, depthwise...) would read
    its bf16 operands as f32."""
    from onnx_mlir_py.compiler import Options, run_pipeline
    plans = []
    for name in ("conv_bias_stride", "conv_depthwise", "batch_matmul_activations",
                 "matmul_3d_2d"):
        run_pipeline(CASES[name][0](), Options(precision="bf16"), str(tmp_path / f"{name}.so"),
                     on_plan=plans.append)
    entries = [e for p in plans for e in p.entries]
    assert len(entries) == 4
    for e in entries:
        assert e.kernel.endswith("_bf16") or \
            (e.kernel == "linalg" and e.reason == "bf16 inputs: generic path"), e
    assert any(e.reason == "bf16 inputs: generic path" for e in entries)


@needs_bf16
def test_session_config_entry(tmp_path):
    """``session.onnx_mlir_py.precision`` = bf16: the session's library
    computes in bf16 (its own cache entry: the fp32 session's differs)."""
    import onnx_mlir_py as ort
    from onnx_mlir_py.inference.config_entries import PRECISION
    from onnx_mlir_py.inference.session import _compile_options
    make, k, dims = CASES["gemm_transb_bias"]
    model = make()
    data = model.SerializeToString()
    so = ort.SessionOptions()
    so.add_session_config_entry(PRECISION, "bf16")
    assert so.get_session_config_entry(PRECISION) == "bf16"
    opts = _compile_options(so, {})
    assert opts["precision"] == "bf16"
    # the key names the machine's bf16 extensions (a shared cache), the
    # library is built for it
    assert "avx512_bf16" in opts["host"] or "amx_bf16" in opts["host"]
    assert "mcpu" not in opts
    assert "precision" not in _compile_options(ort.SessionOptions(), {})
    cache = str(tmp_path / "cache")
    bf = ort.InferenceSession(data, so, cache_dir=cache)
    fp = ort.InferenceSession(data, ort.SessionOptions(), cache_dir=cache)
    for n in dims["N"]:
        feed = _inputs(model, {"N": n}, seed=n)
        y = bf.run(None, feed)[0]
        check_bf16(y, model, feed, k)
        np.testing.assert_allclose(fp.run(None, feed)[0],
                                   ReferenceEvaluator(model).run(None, feed)[0],
                                   rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="must be one of fp32, bf16, got 'fp16'"):
        so.add_session_config_entry(PRECISION, "fp16")
