"""Malformed model structure (checked by importer/validate.py before MLIR):
values defined twice, undefined inputs and outputs, cycles, opsets and IR
versions newer than onnx knows, malformed subgraphs (a negative declared
dim is not refused: it is read as dynamic, as onnxruntime does,
test_negative_dims.py). Each must be refused with a one-line error naming the value,
node or version."""
from __future__ import annotations

import onnx
from onnx import helper as h

from onnx_mlir_py.testing.corpus.case import BOOL, F, Case, model, vi


def _relu(name, x, y):
    return h.make_node("Relu", [x], [y], name=name)


def _m(nodes, inputs=(("x", F, [2, 3]),), outputs=(("y", F, [2, 3]),), **kw) -> onnx.ModelProto:
    return model(nodes, list(inputs), list(outputs), **kw)


def cases() -> list[Case]:
    specs = {}
    specs["defined_twice"] = (_m([_relu("a", "x", "y"), _relu("b", "x", "y")]), "'y'")
    specs["output_over_input"] = (_m([_relu("a", "x", "x"), _relu("b", "x", "y")]), "'x'")
    specs["undefined_input"] = (_m([_relu("a", "nothere", "y")]), "'nothere'")
    specs["undefined_output"] = (_m([_relu("a", "x", "t")]), "'y'")
    specs["cycle"] = (_m([h.make_node("Add", ["x", "t2"], ["t1"], name="a"),
                          _relu("b", "t1", "t2"), _relu("c", "t2", "y")]), r"cycle|'t\d'")
    m = _m([_relu("a", "x", "y")])
    m.opset_import[0].version = 999
    specs["opset_999"] = (m, "999")
    m = _m([_relu("a", "x", "y")])
    m.ir_version = 99
    specs["ir_version_99"] = (m, "99")
    m = _m([_relu("a", "x", "y")])
    del m.opset_import[:]
    specs["no_default_opset"] = (m, "opset|domain")
    then_g = h.make_graph([_relu("t", "x", "ty")], "then", [], [vi("ty", F, [2, 3])])
    node = h.make_node("If", ["c"], ["y"], name="iff", then_branch=then_g)
    specs["if_without_else"] = (_m([node], inputs=[("c", BOOL, []), ("x", F, [2, 3])]), "'iff'")
    body = h.make_graph([_relu("b", "x", "by")], "body", [], [vi("by", F, [2, 3])])
    node = h.make_node("Relu", ["x"], ["y"], name="r", body=body)
    specs["graph_attr_on_relu"] = (_m([node]), "'r'")
    out_g = h.make_graph([_relu("t", "x", "ty"), _relu("u", "tz", "tw")], "then", [],
                         [vi("tw", F, [2, 3])])
    node = h.make_node("If", ["c"], ["y"], name="iff", then_branch=out_g, else_branch=out_g)
    specs["subgraph_undefined_value"] = (_m([node], inputs=[("c", BOOL, []), ("x", F, [2, 3])]),
                                         "'tz'")
    out = []
    for name, (m, match) in specs.items():
        out.append(Case(f"structure/{name}", "structure", m.SerializeToString(), match=match))
    return out
