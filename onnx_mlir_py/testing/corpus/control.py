"""If branches whose types disagree (dtype, rank, output count), malformed
If/Loop attributes and conditions. A dtype or count disagreement must be
refused naming the node; branches of different ranks or shapes are legal
ONNX (onnxruntime runs them): a result matching onnxruntime or a clean
refusal."""
from __future__ import annotations

import numpy as np
from onnx import helper as h

from onnx_mlir_py.testing.corpus.case import BOOL, F, I64, Case, Run, fx, model, vi


def _branch(name, out_name, value: np.ndarray, dtype) -> object:
    node = h.make_node("Constant", [], [out_name], name=f"{name}_c",
                       value=h.make_tensor(f"{name}_v", dtype, value.shape, value.ravel().tolist()))
    return h.make_graph([node], name, [], [vi(out_name, dtype, list(value.shape))])


def _branch_of(name, outs) -> object:
    """A branch returning each (value, dtype) of ``outs``."""
    nodes, vis = [], []
    for k, (v, dt) in enumerate(outs):
        nodes.append(h.make_node("Constant", [], [f"{name}_o{k}"], name=f"{name}_c{k}",
                                 value=h.make_tensor(f"{name}_v{k}", dt, v.shape,
                                                     v.ravel().tolist())))
        vis.append(vi(f"{name}_o{k}", dt, list(v.shape)))
    return h.make_graph(nodes, name, [], vis)


def _if(then_outs, else_outs, n_out=1, cond_type=BOOL, cond_shape=(), runs=None, **kw):
    attrs = {}
    if then_outs is not None:
        attrs["then_branch"] = _branch_of("then", then_outs)
    if else_outs is not None:
        attrs["else_branch"] = _branch_of("else", else_outs)
    node = h.make_node("If", ["c"], [f"y{i}" for i in range(n_out)], name="bad", **attrs)
    m = model([node], [("c", cond_type, list(cond_shape))],
              [(f"y{i}", F, None) for i in range(n_out)])
    kw.setdefault("match", "'bad'")
    return m.SerializeToString(), runs or [], kw


def _loop(body_inputs, body_outputs, body_nodes, n_carried=1, **kw):
    body = h.make_graph(body_nodes, "body", body_inputs, body_outputs)
    node = h.make_node("Loop", ["m", "", "v0"][: 2 + n_carried],
                       [f"y{i}" for i in range(n_carried)], name="bad", body=body)
    m = model([node], [("m", I64, []), ("v0", F, [2])],
              [(f"y{i}", F, None) for i in range(n_carried)])
    kw.setdefault("match", "'bad'")
    return m.SerializeToString(), [], kw


def cases() -> list[Case]:
    a23 = np.ones((2, 3), np.float32)
    i23 = np.ones((2, 3), np.int64)
    t, f = np.array(True), np.array(False)
    specs = {
        "if/dtype_float_vs_int64": _if([(a23, F)], [(i23, I64)]),
        "if/dtype_float_vs_bool": _if([(a23, F)], [(np.ones((2, 3), bool), BOOL)]),
        "if/dtype_second_output": _if([(a23, F), (a23, F)], [(a23, F), (i23, I64)], n_out=2),
        "if/output_count_then_2_else_1": _if([(a23, F), (a23, F)], [(a23, F)], n_out=2),
        "if/output_count_node_2_branches_1": _if([(a23, F)], [(a23, F)], n_out=2),
        "if/output_count_node_1_branches_2": _if([(a23, F), (a23, F)], [(a23, F), (a23, F)]),
        "if/else_missing": _if([(a23, F)], None),
        "if/then_missing": _if(None, [(a23, F)]),
        "if/cond_float": _if([(a23, F)], [(a23, F)], cond_type=F),
        "if/cond_int64": _if([(a23, F)], [(a23, F)], cond_type=I64),
        "if/dtype_nested_if": None,
        "if/rank_2_vs_1": _if([(a23, F)], [(np.ones(3, np.float32), F)], expect="clean",
                              runs=[Run([t]), Run([f])]),
        "if/rank_2_vs_0": _if([(a23, F)], [(np.ones((), np.float32), F)], expect="clean",
                              runs=[Run([t]), Run([f])]),
        "if/shape_2x3_vs_3x2": _if([(a23, F)], [(np.ones((3, 2), np.float32), F)],
                                   expect="clean", runs=[Run([t]), Run([f])]),
        "if/cond_not_scalar": _if([(a23, F)], [(a23 * 2, F)], cond_shape=(2,), expect="clean",
                                  runs=[Run([np.array([True, False])])]),
        "if/cond_empty": _if([(a23, F)], [(a23 * 2, F)], cond_shape=(0,), expect="clean",
                             runs=[Run([np.zeros(0, bool)])]),
        "if/cond_shape_1x1": _if([(a23, F)], [(a23 * 2, F)], cond_shape=(1, 1), expect="ok",
                                 runs=[Run([np.array([[True]])]), Run([np.array([[False]])])]),
        "if/cond_dynamic_shape": _if([(a23, F)], [(a23 * 2, F)], cond_shape=("n",), expect="ok",
                                     runs=[Run([np.array([False])]),
                                           Run([np.array([True, False])], "RuntimeInputError",
                                               r"'bad'.*cond dim 0 is 2"),
                                           Run([np.zeros(0, bool)], "RuntimeInputError",
                                               r"'bad'.*cond dim 0 is 0")]),
        "loop/carried_dtype_changes": _loop(
            [vi("i", I64, []), vi("cin", BOOL, []), vi("v", F, [2])],
            [vi("cout", BOOL, []), vi("vo", I64, [2])],
            [h.make_node("Identity", ["cin"], ["cout"], name="b_id"),
             h.make_node("Cast", ["v"], ["vo"], name="b_cast", to=I64)]),
        "loop/body_too_few_inputs": _loop(
            [vi("i", I64, []), vi("cin", BOOL, [])],
            [vi("cout", BOOL, []), vi("vo", F, [2])],
            [h.make_node("Identity", ["cin"], ["cout"], name="b_id"),
             h.make_node("Constant", [], ["vo"], name="b_c", value_floats=[1.0, 2.0])]),
        "loop/body_too_few_outputs": _loop(
            [vi("i", I64, []), vi("cin", BOOL, []), vi("v", F, [2])],
            [vi("cout", BOOL, [])],
            [h.make_node("Identity", ["cin"], ["cout"], name="b_id")]),
        "loop/cond_output_float": _loop(
            [vi("i", I64, []), vi("cin", BOOL, []), vi("v", F, [2])],
            [vi("cout", F, []), vi("vo", F, [2])],
            [h.make_node("Cast", ["cin"], ["cout"], name="b_cast", to=F),
             h.make_node("Identity", ["v"], ["vo"], name="b_id")]),
    }
    # nested: the inner If's branches disagree
    inner = h.make_node("If", ["c"], ["z"], name="inner",
                        then_branch=_branch_of("it", [(a23, F)]),
                        else_branch=_branch_of("ie", [(i23, I64)]))
    outer_then = h.make_graph([inner], "ot", [], [vi("z", F, None)])
    node = h.make_node("If", ["c"], ["y0"], name="outer", then_branch=outer_then,
                       else_branch=_branch_of("oe", [(a23, F)]))
    specs["if/dtype_nested_if"] = (model([node], [("c", BOOL, [])], [("y0", F, None)])
                                   .SerializeToString(), [], {"match": "'inner'"})
    # a branch reading an outer value whose rank differs from the other branch's output
    then_g = h.make_graph([h.make_node("Identity", ["x"], ["tx"], name="t_id")], "then", [],
                          [vi("tx", F, ["n", 3])])
    else_g = h.make_graph([h.make_node("ReduceSum", ["x"], ["ex"], name="e_sum", keepdims=0)],
                          "else", [], [vi("ex", F, [])])
    node = h.make_node("If", ["c", ], ["y0"], name="bad", then_branch=then_g, else_branch=else_g)
    m = model([node], [("c", BOOL, []), ("x", F, ["n", 3])], [("y0", F, None)])
    x = fx(4, 3)
    specs["if/rank_dynamic_vs_scalar"] = (m.SerializeToString(),
                                          [Run([t, x]), Run([f, x])], {"expect": "clean"})
    out = []
    for name, (data, runs, kw) in specs.items():
        kw = dict(kw)
        expect = kw.pop("expect", "error")
        out.append(Case(name, "control", data, expect=expect, runs=runs,
                        match=kw.get("match") if expect == "error" else None))
    return out
