"""onnx_mlir_py.timings: phases and their steps (what ``-v`` prints): the -O3
kernel steps and the codegen stages are timed one by one under their phase,
printed indented, and not counted twice in the total."""
from __future__ import annotations

import io

import numpy as np
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from onnx_mlir_py.timings import Timings


def test_steps_print_under_their_phase_and_stay_out_of_the_total():
    t = Timings()
    with t.phase("outer"):
        with t.step("outer", "a"):
            pass
        with t.step("outer", "a"):
            pass
        with t.step("outer", "b"):
            pass
    t["other"] = 0.5
    out = io.StringIO()
    t.report(out)
    lines = out.getvalue().splitlines()
    assert [ln.split()[1] for ln in lines] == ["outer", "a", "b", "other", "total"]
    assert lines[1].startswith("[onnx-mlir-py]   a")
    total = float(lines[-1].split()[2])
    assert abs(total - (t["outer"] + t["other"]) * 1000) < 0.2
    assert set(t.steps["outer"]) == {"a", "b"}


def test_o3_compile_times_each_step(tmp_path):
    import onnx_mlir_py
    rng = np.random.default_rng(0)
    w = nh.from_array(rng.standard_normal((8, 4, 3, 3)).astype(np.float32), "w")
    g = h.make_graph([h.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                      h.make_node("Relu", ["c"], ["y"])], "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [1, 4, 16, 16])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [1, 8, 16, 16])], [w])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    t = Timings()
    onnx_mlir_py.compile(m, output=str(tmp_path / "m.so"), opt_level=3, timings=t)
    o3 = t.steps["optimize (tensor -O3)"]
    # a kernel step runs only when the plan gave one of its kernels an op:
    # this conv's is the direct conv
    assert {"kernel plan", "direct convs", "tile packed contractions",
            "vectorize elementwise"} <= set(o3)
    assert "convs to matmul" not in o3
    assert sum(o3.values()) <= t["optimize (tensor -O3)"] + 1e-3
    cg = t.steps["codegen: mlir"]
    assert {"bufferize", "outline and merge kernels", "LLVM dialect"} <= set(cg)
    assert sum(cg.values()) <= t["codegen: mlir"] + 1e-3
