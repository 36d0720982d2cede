"""The fuzzer's bf16 mode (``--precision bf16``): its specs, its oracle
(testing/fuzz/bf16_bound.py: the f32 reference and a bound per element),
and a regression of a false mismatch it first reported."""
import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from onnx_mlir_py.target import resolve
from onnx_mlir_py.testing.fuzz.bf16_bound import bounds
from onnx_mlir_py.testing.fuzz.generator import check, generate
from onnx_mlir_py.testing.fuzz.inputs import Run
from onnx_mlir_py.testing.fuzz.ops import mode_specs
from onnx_mlir_py.testing.fuzz.runner import BUGS, Evaluator

HOST = resolve(None, None, host_default=True)
needs_bf16 = pytest.mark.skipif(not (HOST.avx512_bf16 or HOST.amx_bf16),
                                reason="the build machine has no AVX512-BF16 / AMX-BF16")


def test_bf16_specs_only_when_named():
    names = mode_specs("bf16")
    assert names == ["bf16_after", "bf16_conv", "bf16_gemm", "bf16_matmul"]
    ops = set()
    for i in range(30):
        case = generate(5, i, 12, None, names)
        check(case.model)
        ops |= set(case.ops())
    assert {"MatMul", "Gemm", "Conv"} <= ops <= {"MatMul", "Gemm", "Conv", "Add", "Relu", "Mul",
                                                  "Transpose", "Flatten"}
    for i in range(10):          # the default mix draws none of them
        assert not any(n.name.startswith("bf16") for n in generate(5, i).model.graph.node)


def _chain():
    """v = a @ b (constants: 2^-12 in f32, 0 once b is rounded to bf16: 1 +
    2^-7 + 2^-12 rounds to 1 + 2^-7), y = v @ z (z an input)."""
    a = np.array([[1.0, -1.0]], np.float32)
    b = np.array([[1 + 2 ** -7 + 2 ** -12], [1 + 2 ** -7]], np.float32)
    g = h.make_graph([h.make_node("MatMul", ["a", "b"], ["v"]),
                      h.make_node("MatMul", ["v", "z"], ["y"])], "g",
                     [h.make_tensor_value_info("z", T.FLOAT, [1, 3])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [nh.from_array(a, "a"), nh.from_array(b, "b")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


def test_inf_times_a_value_ours_rounds_to_zero_is_not_compared():
    """s2-15 (a Conv of a MatMul's results with inf weights: -inf for inf):
    an inf term's partner that ours may round to 0 or to the other sign
    makes the position unknown (inf, not compared); a partner of a sure
    sign keeps the check (the same infinity)."""
    model = _chain()
    z = np.array([[np.inf, 2.0, np.nan]], np.float32)
    v = np.array([[2.0 ** -12]], np.float32)
    e = bounds(model, {"z": z}, {"v": v, "y": v @ z})
    assert np.isinf(e["y"][0, 0]) and np.isfinite(e["y"][0, 1:]).all()


@needs_bf16
def test_fuzz_bf16_chain_regression(tmp_path):
    """End to end: ours computes v = 0 (bf16), so v * inf is NaN where the
    f32 reference has inf: not a mismatch; the finite positions are."""
    ev = Evaluator((0, 3), str(tmp_path / "cache"), 300, 120, "bf16")
    try:
        runs = [Run(0, "edge", {"z": np.array([[np.inf, 2.0, -1.0]], np.float32)})]
        found = ev.evaluate(_chain(), runs)
    finally:
        ev.close()
    assert not [f for f in found if f.kind in BUGS], found


@needs_bf16
def test_fuzz_bf16_smoke(tmp_path):
    from onnx_mlir_py.testing.fuzz.cli import main
    assert main(["--precision", "bf16", "--seed", "7", "--count", "2", "--opt", "3",
                 "--out", str(tmp_path / "out"), "--no-reduce", "-q"]) == 0


def _conv_mul():
    """s5-28: Conv (bias) -> Mul by a constant scalar; -O3 folds the scale
    into the weights (fold-affine-into-conv), which then round to bf16 as
    w * c, not as w."""
    rng = np.random.default_rng(28)
    g = h.make_graph([h.make_node("Conv", ["x", "w", "b"], ["v"], kernel_shape=[2, 3],
                                  pads=[0, 1, 0, 2]),
                      h.make_node("Mul", ["v", "c"], ["y"])], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [1, 2, 9, 8])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)],
                     [nh.from_array(rng.uniform(-2, 2, (16, 2, 2, 3)).astype(np.float32), "w"),
                      nh.from_array(rng.uniform(-2, 2, 16).astype(np.float32), "b"),
                      nh.from_array(np.array([-1.8522707], np.float32), "c")])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 17)])


@needs_bf16
def test_fuzz_bf16_scale_folded_into_weights(tmp_path, monkeypatch):
    from onnx_mlir_py.testing.fuzz import bf16_bound
    x = np.random.default_rng(1).uniform(-3, 3, (1, 2, 9, 8)).astype(np.float32)
    runs = [Run(0, "normal", {"x": x})]
    ev = Evaluator((3,), str(tmp_path / "cache"), 300, 120, "bf16")
    try:
        assert not [f for f in ev.evaluate(_conv_mul(), runs) if f.kind in BUGS]
        # without the fold's allowance the oracle reports it (the test is not vacuous)
        monkeypatch.setattr(bf16_bound, "_folded_scale", lambda *a: np.zeros(np.shape(a[-1])))
        assert [f for f in ev.evaluate(_conv_mul(), runs) if f.kind == "mismatch"]
    finally:
        ev.close()
