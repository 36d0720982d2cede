"""Large constants are embedded in the .so (via .incbin), and still correct."""
from __future__ import annotations

import time

import mlir.ir as ir
import numpy as np
import pytest

from onnx_mlir_py.codegen import emit_library
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.timings import Timings

ROWS, COLS = 3200, 4096          # 13,107,200 f32 = 50 MiB

BIG = f"""
func.func @main_graph(%x: tensor<{ROWS}x{COLS}xf32> {{onnx.name = "x"}})
    -> (tensor<{ROWS}x{COLS}xf32> {{onnx.name = "y"}}, tensor<4xi64> {{onnx.name = "small"}}) {{
  %w = arith.constant dense<0.0> : tensor<{ROWS}x{COLS}xf32>
  %k = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %e = tensor.empty() : tensor<{ROWS}x{COLS}xf32>
  %y = linalg.add ins(%x, %w : tensor<{ROWS}x{COLS}xf32>, tensor<{ROWS}x{COLS}xf32>)
                  outs(%e : tensor<{ROWS}x{COLS}xf32>) -> tensor<{ROWS}x{COLS}xf32>
  return %y, %k : tensor<{ROWS}x{COLS}xf32>, tensor<4xi64>
}}
"""


@pytest.mark.parametrize("kind", ["dense", "dense_resource"])
def test_50mb_weight(tmp_path, kind):
    w = np.random.default_rng(0).standard_normal((ROWS, COLS), dtype=np.float32)
    with ir.Context(), ir.Location.unknown():
        m = ir.Module.parse(BIG)
        func = m.body.operations[0]
        cst = func.regions[0].blocks[0].operations[0]
        if kind == "dense":
            cst.attributes["value"] = ir.DenseElementsAttr.get(w)
        else:
            ty = ir.RankedTensorType.get([ROWS, COLS], ir.F32Type.get())
            cst.attributes["value"] = ir.DenseResourceElementsAttr.get_from_buffer(
                memoryview(w), "big_weight", ty)
        t0 = time.perf_counter()
        timings = Timings()
        path = emit_library(m, tmp_path / "big.so", timings=timings)
        seconds = time.perf_counter() - t0
    print(f"\n50 MiB weight ({kind}): compiled in {seconds:.2f}s {dict(timings)}")
    assert seconds < 60
    sess = ExecutionSession(path)
    x = np.ones((ROWS, COLS), np.float32)
    y, k = sess.run([x])
    np.testing.assert_array_equal(y, x + w)
    np.testing.assert_array_equal(k, [1, 2, 3, 4])
    size = (tmp_path / "big.so").stat().st_size
    assert w.nbytes <= size < w.nbytes + 4 * 2**20
