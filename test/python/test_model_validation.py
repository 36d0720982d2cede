"""Model validation before MLIR (importer/validate.py): every rule refuses its
invalid model with one InvalidModelError line naming the node, value or
version, through import_model, compile(), the CLI and the backend; the legal
look-alikes (dim 0, shadowing subgraph inputs, an unsorted main graph, ...)
still compile."""
import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

import onnx_mlir_py
from onnx_mlir_py import cli as cli_mod
from onnx_mlir_py.errors import ImportError_, InvalidModelError
from onnx_mlir_py.importer import import_model
from onnx_mlir_py.importer.validate import validate_model


def vi(name, shape=(2,), elem=T.FLOAT):
    return h.make_tensor_value_info(name, elem, list(shape) if shape is not None else None)


def node(op, ins, outs, name, **attrs):
    return h.make_node(op, ins, outs, name=name, **attrs)


def model(nodes, inputs=("x",), outputs=("y",), inits=(), value_info=(), opset=17, ir=8,
          opsets=None, functions=()):
    g = h.make_graph(nodes, "g", [i if isinstance(i, onnx.ValueInfoProto) else vi(i)
                                  for i in inputs],
                     [o if isinstance(o, onnx.ValueInfoProto) else vi(o) for o in outputs],
                     [nh.from_array(np.ones(2, np.float32), n) for n in inits],
                     value_info=list(value_info))
    m = h.make_model(g, opset_imports=opsets or [h.make_opsetid("", opset)],
                     functions=list(functions))
    m.ir_version = ir
    return m


def graph(nodes, inputs, outputs, name):
    return h.make_graph(nodes, name, inputs, outputs)


COND = vi("c", (), T.BOOL)
THEN = graph([node("Relu", ["x"], ["t"], "then_relu")], [], [vi("t")], "then_g")
ELSE = graph([node("Neg", ["x"], ["e"], "else_neg")], [], [vi("e")], "else_g")


def if_model(then=THEN, els=ELSE):
    attrs = {k: v for k, v in (("then_branch", then), ("else_branch", els)) if v is not None}
    return model([node("If", ["c"], ["y"], "if1", **attrs)], inputs=("x", COND))


def loop_body(inputs, nodes, outputs):
    i, ci = vi("i", (), T.INT64), vi("ci", (), T.BOOL)
    return graph([node("Identity", ["ci"], ["co"], "keep_going")] + nodes,
                 [i, ci] + inputs, [vi("co", (), T.BOOL)] + outputs, "body_g")


def loop_model(body):
    return model([node("Loop", ["M", "", "x"], ["y"], "loop1", body=body)],
                 inputs=("x", vi("M", (), T.INT64)))


def scan_model(body):
    return model([node("Scan", ["s0", "xs"], ["s", "ys"], "scan1", body=body,
                       num_scan_inputs=1)],
                 inputs=(vi("s0", (2,)), vi("xs", (3, 2))),
                 outputs=(vi("s", (2,)), vi("ys", (3, 2))))


def fn_model(fn_nodes, fn_in=("a",), fn_out=("b",), fn_opset=17):
    f = h.make_function("local", "f", list(fn_in), list(fn_out), fn_nodes,
                        [h.make_opsetid("", fn_opset)])
    return model([node("f", ["x"], ["y"], "call_f", domain="local")],
                 opsets=[h.make_opsetid("", 17), h.make_opsetid("local", 1)], functions=[f])


# (id, model, words the one-line message must contain)
CASES = [
    # values defined twice
    ("two_nodes_define_y", model([node("Relu", ["x"], ["y"], "r1"),
                                  node("Neg", ["x"], ["y"], "n1")]),
     ["'y'", "defined twice", "'r1'", "'n1'"]),
    ("output_shadows_input", model([node("Relu", ["x"], ["x"], "r1")], outputs=("x",)),
     ["'r1'", "redefines the graph input 'x'"]),
    ("output_shadows_initializer", model([node("Relu", ["x"], ["w"], "r1"),
                                          node("Add", ["x", "w"], ["y"], "a1")], inits=["w"]),
     ["'r1'", "redefines the initializer 'w'"]),
    ("duplicate_graph_inputs", model([node("Relu", ["x"], ["y"], "r1")], inputs=("x", "x")),
     ["graph input 'x' is listed twice"]),
    ("duplicate_initializers", model([node("Add", ["x", "w"], ["y"], "a1")], inits=["w", "w"]),
     ["initializer 'w' is listed twice"]),
    # undefined inputs, cycles
    ("undefined_input", model([node("Add", ["x", "q"], ["y"], "a1")]),
     ["'a1'", "input 'q' is not defined"]),
    ("undefined_graph_output", model([node("Relu", ["x"], ["z"], "r1")]),
     ["graph output 'y' is never produced"]),
    ("cycle", model([node("Add", ["x", "b"], ["a"], "add_a"), node("Relu", ["a"], ["b"], "relu_b"),
                     node("Relu", ["a"], ["y"], "out")]),
     ["cycle", "'add_a'", "'relu_b'"]),
    ("self_cycle", model([node("Add", ["x", "a"], ["a"], "self"), node("Relu", ["a"], ["y"], "o")]),
     ["cycle", "'self'"]),
    # versions
    ("opset_999", model([node("Relu", ["x"], ["y"], "r1")], opset=999),
     ["opset 999", "'ai.onnx'", onnx.__version__, "28"]),
    ("opset_0", model([node("Relu", ["x"], ["y"], "r1")], opset=0), ["opset 0", "'ai.onnx'"]),
    ("ir_version_99", model([node("Relu", ["x"], ["y"], "r1")], ir=99),
     ["IR version 99", str(onnx.IR_VERSION)]),
    ("ml_domain_99", model([node("Relu", ["x"], ["y"], "r1")],
                           opsets=[h.make_opsetid("", 17), h.make_opsetid("ai.onnx.ml", 99)]),
     ["opset 99", "'ai.onnx.ml'"]),
    ("conflicting_imports", model([node("Relu", ["x"], ["y"], "r1")],
                                  opsets=[h.make_opsetid("", 17), h.make_opsetid("", 13)]),
     ["'ai.onnx'", "imported twice", "17", "13"]),
    ("default_domain_not_imported",
     model([node("Relu", ["x"], ["y"], "r1")], opsets=[h.make_opsetid("ai.onnx.ml", 3)]),
     ["'r1'", "'ai.onnx' is not imported"]),
    # malformed subgraphs
    ("if_without_else", if_model(els=None), ["'if1'", "'else_branch'"]),
    ("if_branch_with_input", if_model(then=graph([node("Relu", ["p"], ["t"], "tr")], [vi("p")],
                                                 [vi("t")], "then_g")),
     ["'if1'", "'then_branch'", "has 1 inputs"]),
    ("if_branch_output_count", if_model(then=graph([node("Relu", ["x"], ["t"], "tr"),
                                                    node("Neg", ["x"], ["u"], "tn")], [],
                                                   [vi("t"), vi("u")], "then_g")),
     ["'if1'", "'then_branch'", "2 outputs"]),
    ("loop_body_input_count", loop_model(loop_body([], [node("Add", ["x", "x"], ["v2"], "add")],
                                                   [vi("v2")])),
     ["'loop1'", "'body'", "has 2 inputs", "needs 3 and 2"]),
    ("loop_body_output_count", loop_model(loop_body([vi("v")], [], [])),
     ["'loop1'", "'body'", "needs 3 and 2"]),
    ("scan_body_output_count", scan_model(graph([node("Add", ["st", "xi"], ["st2"], "acc")],
                                                [vi("st"), vi("xi")], [vi("st2")], "scan_g")),
     ["'scan1'", "'body'", "1 outputs", "needs 2 and 2"]),
    ("graph_attr_on_relu", model([node("Relu", ["x"], ["y"], "r1", body=THEN)]),
     ["'r1'", "graph attribute 'body'", "Relu-14"]),
    ("subgraph_value_defined_twice",
     if_model(then=graph([node("Relu", ["x"], ["t"], "t1"), node("Neg", ["x"], ["t"], "t2")], [],
                         [vi("t")], "then_g")),
     ["'if1'", "subgraph 'then_g'", "'t' is defined twice", "'t1'", "'t2'"]),
    ("subgraph_redefines_outer_value",
     loop_model(loop_body([vi("v")], [node("Add", ["v", "v"], ["x"], "shadow")], [vi("x")])),
     ["'loop1'", "subgraph 'body_g'", "'shadow'", "output 'x' redefines a value of the enclosing"]),
    ("subgraph_undefined_outer_value",
     if_model(then=graph([node("Relu", ["zz"], ["t"], "tr")], [], [vi("t")], "then_g")),
     ["'if1'", "subgraph 'then_g'", "'tr'", "input 'zz' is not defined"]),
    ("subgraph_out_of_order",
     if_model(then=graph([node("Relu", ["a"], ["t"], "late"), node("Neg", ["x"], ["a"], "early")],
                         [], [vi("t")], "then_g")),
     ["subgraph 'then_g'", "'late'", "input 'a' is used before"]),
    ("subgraph_returns_outer_value", loop_model(loop_body([vi("v")], [], [vi("x")])),
     ["subgraph 'body_g'", "graph output 'x' is a value of the enclosing graph"]),
    ("nested_subgraph_error",
     if_model(then=graph([node("If", ["c"], ["t"], "inner_if", then_branch=THEN,
                               else_branch=graph([node("Relu", ["x"], ["x"], "bad")], [],
                                                 [vi("x")], "inner_else"))],
                         [], [vi("t")], "then_g")),
     ["'if1'", "'inner_if'", "subgraph 'inner_else'", "'bad'", "redefines"]),
    # model-local functions
    ("function_value_defined_twice", fn_model([node("Relu", ["a"], ["b"], "f1"),
                                               node("Neg", ["a"], ["b"], "f2")]),
     ["function 'local.f'", "'b' is defined twice", "'f1'", "'f2'"]),
    ("function_undefined_input", fn_model([node("Add", ["a", "q"], ["b"], "f1")]),
     ["function 'local.f'", "'f1'", "input 'q' is not defined"]),
    ("function_opset_999", fn_model([node("Relu", ["a"], ["b"], "f1")], fn_opset=999),
     ["function 'local.f'", "opset 999"]),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("case_id,m,words", CASES, ids=IDS)
def test_rule(case_id, m, words):
    with pytest.raises(InvalidModelError) as ei:
        import_model(m)
    msg = str(ei.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg, msg
    assert isinstance(ei.value, ImportError_)   # existing `except ImportError_` still catch it


@pytest.mark.parametrize("case_id,m,words", CASES, ids=IDS)
def test_rule_through_cli(case_id, m, words, tmp_path, capsys):
    path = tmp_path / "bad.onnx"
    onnx.save(m, str(path))
    assert cli_mod.main([str(path), "--EmitONNXBasic"]) == 1
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for w in words:
        assert w in lines[0], lines[0]


@pytest.mark.parametrize("case_id", ["two_nodes_define_y", "opset_999", "cycle"])
def test_issue_cases_in_a_real_cli_process(case_id, tmp_path):
    _, m, words = CASES[IDS.index(case_id)]
    path = tmp_path / "bad.onnx"
    onnx.save(m, str(path))
    r = subprocess.run([sys.executable, "-m", "onnx_mlir_py.cli", str(path)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words[0] in lines[0], r.stderr
    assert not (tmp_path / "bad.so").exists()


def test_compile_and_backend_refuse(tmp_path):
    from onnx_mlir_py import backend
    _, m, _ = CASES[IDS.index("two_nodes_define_y")]
    with pytest.raises(InvalidModelError, match="'y' is defined twice"):
        onnx_mlir_py.compile(m, tmp_path / "m.so")
    with pytest.raises(InvalidModelError, match="'y' is defined twice"):
        backend.prepare(m, cache_dir=str(tmp_path / "cache"))     # isolated child process


# -- legal models that look like the refused ones ---------------------------------
LEGAL = [
    ("dim_zero", model([node("Relu", ["x"], ["y"], "r1")], inputs=[vi("x", (0, 3))],
                       outputs=[vi("y", (0, 3))])),
    ("initializer_listed_as_input", model([node("Add", ["x", "w"], ["y"], "a1")],
                                          inputs=("x", "w"), inits=["w"])),
    ("output_listed_twice", model([node("Relu", ["x"], ["y"], "r1")], outputs=("y", "y"))),
    ("branches_share_names", if_model(els=graph([node("Neg", ["x"], ["t"], "en")], [], [vi("t")],
                                                "else_g"))),
    ("branch_output_named_like_if_output",
     if_model(then=graph([node("Relu", ["x"], ["y"], "tr")], [], [vi("y")], "then_g"))),
    ("body_input_shadows_outer_input",
     loop_model(loop_body([vi("x")], [node("Add", ["x", "x"], ["v2"], "dbl")], [vi("v2")]))),
    ("body_passes_carried_value_through", loop_model(loop_body([vi("v")], [], [vi("v")]))),
    ("custom_domain_version", model([node("Relu", ["x"], ["y"], "r1")],
                                    opsets=[h.make_opsetid("", 17), h.make_opsetid("com.x", 7)])),
]


@pytest.mark.parametrize("case_id,m", LEGAL, ids=[c[0] for c in LEGAL])
def test_legal_model_is_accepted(case_id, m):
    assert validate_model(m) is m       # nothing to sort, nothing refused
    import_model(m)


def test_unsorted_main_graph_is_sorted_and_runs_like_onnxruntime(tmp_path):
    """onnxruntime accepts a main graph listed out of order (it sorts it);
    so do we, including a dependency through an If branch's outer value."""
    then = graph([node("Relu", ["z"], ["t"], "tr")], [], [vi("t")], "then_g")
    els = graph([node("Neg", ["z"], ["e"], "en")], [], [vi("e")], "else_g")
    m = model([node("Mul", ["w", "w"], ["y"], "last"),
               node("If", ["c"], ["w"], "if1", then_branch=then, else_branch=els),
               node("Sub", ["x", "k"], ["z"], "first")],
              inputs=("x", COND), inits=["k"])
    sorted_m = validate_model(m)
    assert [n.name for n in sorted_m.graph.node] == ["first", "if1", "last"]
    assert [n.name for n in m.graph.node] == ["last", "if1", "first"]   # input left as it was
    so = onnx_mlir_py.compile(m, tmp_path / "m.so")
    sess = onnx_mlir_py.ExecutionSession(so)
    ref = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.array([3.0, -0.5], np.float32)
    for c in (True, False):
        feeds = {"x": x, "c": np.array(c)}
        np.testing.assert_allclose(sess.run([x, np.array(c)])[0], ref.run(None, feeds)[0],
                                   rtol=1e-6)


def test_validation_is_linear_on_a_large_graph():
    """100k nodes (in reverse order, so the sort runs too) validate in well
    under the time a quadratic scan would take."""
    import time
    n = 100_000
    nodes = [node("Relu", [f"v{i}"], [f"v{i + 1}"], f"n{i}") for i in range(n)][::-1]
    m = model(nodes, inputs=("v0",), outputs=(f"v{n}",))
    t0 = time.perf_counter()
    out = validate_model(m)
    assert time.perf_counter() - t0 < 10
    assert out.graph.node[0].name == "n0" and out.graph.node[-1].name == f"n{n - 1}"
