"""examples/c/run_model.c builds, runs a model .so and prints the same numbers."""
from __future__ import annotations

import subprocess
from pathlib import Path

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.codegen import emit_library
from onnx_mlir_py.codegen.cwrapper import RUNTIME_DIR
from onnx_mlir_py.codegen.tools import tool
from onnx_mlir_py.runtime import ExecutionSession

from codegen_samples import DYNAMIC, MATMUL

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "c" / "run_model.c"


def _build_example(tmp_path) -> str:
    exe = tmp_path / "run_model"
    subprocess.run([tool("gcc"), "-O2", "-Wall", "-Werror", "-o", str(exe), str(EXAMPLE),
                    f"-I{RUNTIME_DIR}", "-ldl"], check=True)
    return str(exe)


def _parse_outputs(text: str) -> list[np.ndarray]:
    outs, cur = [], None
    for line in text.splitlines():
        if line.startswith("output ") and "shape=[" in line:
            shape = line.split("shape=[")[1].split("]")[0]
            cur = ([int(d) for d in shape.split(",") if d], [])
            outs.append(cur)
        elif cur is not None:
            cur[1].append(float(line))
    return [np.array(v, np.float64).reshape(s) for s, v in outs]


def test_c_example_matches_python(tmp_path):
    exe = _build_example(tmp_path)
    with ir.Context():
        so = emit_library(ir.Module.parse(MATMUL), tmp_path / "matmul.so")
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(s, dtype=np.float32) for s in [(32, 64), (64, 48), (48,)]]
    files = []
    for i, x in enumerate(xs):
        f = tmp_path / f"in{i}.bin"
        x.tofile(f)
        files.append(str(f))
    p = subprocess.run([exe, so, *files], capture_output=True, text=True, check=True)
    assert '"name": "x"' in p.stdout and "entry point: run_main_graph" in p.stdout
    (c_out,) = _parse_outputs(p.stdout)
    (py_out,) = ExecutionSession(so).run(xs)
    np.testing.assert_allclose(c_out, py_out, rtol=1e-7)


def test_c_example_dynamic_defaults(tmp_path):
    exe = _build_example(tmp_path)
    with ir.Context():
        so = emit_library(ir.Module.parse(DYNAMIC), tmp_path / "dyn.so")
    p = subprocess.run([exe, so], capture_output=True, text=True, check=True)
    s, t = _parse_outputs(p.stdout)
    a = (0.01 * np.arange(4, dtype=np.float32)).reshape(2, 2)
    np.testing.assert_allclose(s, a + a, rtol=1e-6)
    np.testing.assert_allclose(t, np.exp(np.tanh(a + a)), rtol=1e-5)


def test_c_example_prints_every_type_exactly(tmp_path):
    """f16 (subnormal, inf, nan, -0), f64 (17 digits), i64 above 2**53, u8
    and bool outputs; per-run dims, a scalar and an explicit element type."""
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h

    import onnx_mlir_py
    from onnx_mlir_py.testing.corpus.c_api import parse_outputs
    nodes = [h.make_node("Cast", ["x"], ["h"], to=T.FLOAT16),
             h.make_node("Mul", ["d", "d"], ["dd"]),
             h.make_node("Add", ["i", "s"], ["ii"]),
             h.make_node("Cast", ["x"], ["u"], to=T.UINT8),
             h.make_node("Cast", ["x"], ["b"], to=T.BOOL)]
    g = h.make_graph(nodes, "types", [h.make_tensor_value_info("x", T.FLOAT, ["n"]),
                                      h.make_tensor_value_info("d", T.DOUBLE, ["n"]),
                                      h.make_tensor_value_info("i", T.INT64, ["n"]),
                                      h.make_tensor_value_info("s", T.INT64, [])],
                     [h.make_tensor_value_info(n, t, None) for n, t in
                      [("h", T.FLOAT16), ("dd", T.DOUBLE), ("ii", T.INT64), ("u", T.UINT8),
                       ("b", T.BOOL)]])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    onnx.save(m, tmp_path / "types.onnx")
    so = onnx_mlir_py.compile(str(tmp_path / "types.onnx"), str(tmp_path / "types.so"))
    xs = [np.array([1e-7, 7e4, np.nan, -0.0, 3.3, 200.0], np.float32),
          np.array([0.1, 1 / 3, -1e300, 5e-324, 2.0, -7.0]),
          np.array([2 ** 62 + 1, -2 ** 53 - 1, 0, 1, -1, 7], np.int64), np.array(3, np.int64)]
    args = []
    for k, (x, t) in enumerate(zip(xs, ["f32", "f64", "i64", "i64"])):
        x.tofile(tmp_path / f"in{k}.bin")
        args.append(f"{tmp_path / f'in{k}.bin'}:{'x'.join(map(str, x.shape))}" +
                    (f":{t}" if k % 2 else ""))
    exe = _build_example(tmp_path)
    p = subprocess.run([exe, so, *args], capture_output=True, text=True, check=True)
    got = parse_outputs(p.stdout)
    want = ExecutionSession(so).run(xs)
    assert [g.dtype for g in got] == [np.float16, np.float64, np.int64, np.uint8, np.bool_]
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)
    assert np.signbit(got[0][3]) and np.isinf(got[0][1]) and got[0][0] > 0   # -0, inf, subnormal
    extra = subprocess.run([exe, so, *args, args[0]], capture_output=True, text=True)
    assert extra.returncode == 2 and "5 input files for a model with 4 inputs" in extra.stderr
    wrong = subprocess.run([exe, so, f"{tmp_path / 'in1.bin'}:6:f64", *args[1:]],
                           capture_output=True, text=True)   # f64 data for the f32 input
    assert wrong.returncode == 1 and "input 0 ('x'): expected element type 1, got 11" \
        in wrong.stderr, wrong.stderr
