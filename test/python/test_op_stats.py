"""--onnx-op-stats: ONNX ops per type and version, and how each is lowered
(a rule, the function body that expand-functions substitutes, or none)."""
import json

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

from onnx_mlir_py.cli import main
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, is_onnx_op
from onnx_mlir_py.importer import import_model
from onnx_mlir_py.ir_util import walk_ops
from onnx_mlir_py.op_stats import op_stats
from onnx_mlir_py.passes.pipeline import run_passes


def model(path=None, det=True):
    """2 Relu + 1 in an If branch, HannWindow (a function body), SVMRegressor (neither),
    a Constant node, an initializer (not a node: not counted)."""
    branch = lambda out: h.make_graph(      # noqa: E731
        [h.make_node("Relu", ["x"], [out])], "b", [],
        [h.make_tensor_value_info(out, T.FLOAT, [2, 2])])
    nodes = [h.make_node("Relu", ["x"], ["r1"], name="relu1"),
             h.make_node("Relu", ["r1"], ["r2"], name="relu2"),
             h.make_node("Constant", [], ["k"], value=nh.from_array(np.array(1.0, np.float32))),
             h.make_node("Add", ["r2", "w"], ["a"], name="add"),
             h.make_node("Mul", ["a", "k"], ["m"], name="mul"),
             h.make_node("If", ["c"], ["i"], name="if", then_branch=branch("t"),
                         else_branch=h.make_graph([h.make_node("Neg", ["x"], ["e"])], "e", [],
                                                  [h.make_tensor_value_info("e", T.FLOAT,
                                                                            [2, 2])])),
             h.make_node("HannWindow", ["n"], ["win"], name="hann")]
    outs = ["m", "i", "win"]
    ins = [h.make_tensor_value_info("x", T.FLOAT, [2, 2]),
           h.make_tensor_value_info("c", T.BOOL, []),
           h.make_tensor_value_info("n", T.INT64, [])]
    if det:      # an op with neither a lowering nor a function body
        nodes.append(h.make_node("SVMRegressor", ["img"], ["d"], name="dconv", domain="ai.onnx.ml",
                                 coefficients=[1.0], support_vectors=[1.0], n_supports=1,
                                 rho=[0.0]))
        outs.append("d")
        ins += [h.make_tensor_value_info("img", T.FLOAT, [100, 1])]
    g = h.make_graph(nodes, "g", ins,
                     [h.make_tensor_value_info(o, T.FLOAT, None)
                      for o in outs],
                     [nh.from_array(np.ones((2, 2), np.float32), "w")])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 20)]
                     + [h.make_opsetid("ai.onnx.ml", 1)] * det)
    if path is not None:
        onnx.save(m, str(path))
        return str(path)
    return m


def test_txt_counts_per_type_and_version_with_lowering(tmp_path, capsys):
    rc = main([model(tmp_path / "m.onnx"), "--EmitONNXBasic", "--onnx-op-stats"])
    out = capsys.readouterr().out
    assert rc == 0, out
    lines = {ln.split()[0]: ln.split(None, 3)[1:] for ln in out.splitlines()[2:]}
    assert out.splitlines()[0] == ("ONNX op stats: 10 ops of 8 op types "
                                 "(opsets: ai.onnx 20, ai.onnx.ml 1)")
    assert lines["Relu"] == ["v14", "3", "rule"]        # 2 + 1 in the If's then-branch
    assert lines["Constant"] == ["v19", "1", "rule"]    # the initializer w is no node
    assert lines["If"][:2] == ["v19", "1"] and lines["Neg"][:2] == ["v13", "1"]
    assert lines["ai.onnx.ml.SVMRegressor"] == ["v1", "1", "none"]
    how = lines["HannWindow"]
    assert how[:2] == ["v17", "1"] and how[2].startswith("function body: ") and "Cos" in how[2]
    assert out.splitlines()[2].split()[0] == "Relu"     # most frequent first


def test_json_and_what_expand_functions_does(tmp_path, capsys):
    path = model(tmp_path / "m.onnx", det=False)
    rc = main([path, "--EmitONNXBasic", "--onnx-op-stats=json", "-o", str(tmp_path / "x")])
    assert rc == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["total"] == 9 and stats["opset_import"] == {"ai.onnx": 20}
    by_op = {s["op_type"]: s for s in stats["ops"]}
    assert by_op["Relu"] == {"domain": "ai.onnx", "op_type": "Relu", "version": 14,
                             "count": 3, "lowering": "rule"}
    hann = by_op["HannWindow"]
    assert hann["lowering"] == "function" and hann["function_nodes"] == 1
    # the pass replaces exactly the ops reported as 'function', by the ops listed
    module = import_model(onnx.load(path))
    run_passes(module, ["expand-functions"])
    after = {OnnxOp(op).op_type for op in walk_ops(module, is_onnx_op)
             if op.name != "onnx.constant"}
    assert "HannWindow" not in after and set(hann["body_ops"]) <= after
    assert {s["op_type"] for s in stats["ops"] if s["lowering"] == "rule"} <= after


def test_stats_printed_when_the_compile_then_fails(tmp_path, capsys):
    rc = main([model(tmp_path / "m.onnx"), "--onnx-op-stats", "-O0", "-q"])
    out, err = capsys.readouterr()
    assert rc == 1
    assert "SVMRegressor" in out and out.splitlines()[0].startswith("ONNX op stats: 10 ops")
    assert err.startswith("error: ") and "SVMRegressor" in err and "'dconv'" in err


def test_op_stats_api_on_a_module():
    stats = op_stats(import_model(model(det=False)))
    assert sum(s.count for s in stats) == 9
    assert [s.lowering for s in stats if s.op_type == "HannWindow"] == ["function"]


def test_option_before_the_model(tmp_path, capsys):
    """``--onnx-op-stats model.onnx``: the model is not taken for the format."""
    rc = main(["--onnx-op-stats", model(tmp_path / "m.onnx"), "--EmitONNXBasic"])
    assert rc == 0
    assert capsys.readouterr().out.startswith("ONNX op stats: 10 ops")


def test_closed_stdout_pipe_is_quiet(tmp_path):
    """``onnx-mlir-py ... --onnx-op-stats=json | head -1``: no 'internal error'."""
    import subprocess
    import sys
    path = model(tmp_path / "m.onnx")
    p = subprocess.run(f"{sys.executable} -m onnx_mlir_py.cli {path} --EmitONNXBasic "
                       f"--onnx-op-stats=json -o {tmp_path / 'x'} | head -c 1",
                       shell=True, capture_output=True, text=True, cwd=tmp_path)
    assert p.stdout == "{" and "internal error" not in p.stderr and "Traceback" not in p.stderr
