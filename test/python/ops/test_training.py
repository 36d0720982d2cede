"""Adagrad, Adam, Momentum (ai.onnx.preview.training v1): result types
against onnx's shape inference (one and two tensor groups, f32/f64), and the
verifier's one-line errors naming the node."""
import pytest
from onnx import TensorProto as TP, helper

from helpers import infer_and_compare, make_model, our_output_types
from onnx_mlir_py.errors import ImportError_, VerificationError

TR = "ai.onnx.preview.training"
F, D, I = TP.FLOAT, TP.DOUBLE, TP.INT64
ROLES = {"Adagrad": "XGH", "Momentum": "XGV", "Adam": "XGVH"}
MOM = dict(alpha=0.9, beta=0.1, mode="standard", norm_coefficient=0.0)


def model(op, shapes, elem=F, r=(F, []), t=(I, []), n_out=None, roles=None, **attrs):
    """shapes: X's shape per group; G/V/H get the same unless roles maps a
    role letter to [shapes] / an element type via (role, "elem")."""
    roles_of = ROLES[op]
    n = len(shapes)
    ins = [("r", r[0], r[1]), ("t", t[0], t[1])]
    for c in roles_of:
        for i, s in enumerate(shapes):
            s = (roles or {}).get(c, shapes)[i]
            e = (roles or {}).get((c, "elem"), elem)
            ins.append((f"{c.lower()}{i}", e, s))
    outs = [f"{c.lower()}{i}_new" for c in roles_of[:1] + roles_of[2:] for i in range(n)]
    outs = outs if n_out is None else outs[:n_out]
    if op == "Momentum":
        attrs = {**MOM, **attrs}
    node = helper.make_node(op, [x[0] for x in ins], outs, name="n", domain=TR, **attrs)
    m = make_model([node], ins, outs, 21)
    m.opset_import.append(helper.make_opsetid(TR, 1))
    return m


@pytest.mark.parametrize("op", ["Adagrad", "Adam", "Momentum"])
@pytest.mark.parametrize("shapes", [[[2, 3]], [[]], [[2, 3], [4]]])
@pytest.mark.parametrize("elem", [F, D])
def test_types(op, shapes, elem):
    got = infer_and_compare(model(op, shapes, elem))
    assert len(got) == len(shapes) * (len(ROLES[op]) - 1)
    assert got[0] == ({F: "f32", D: "f64"}[elem], shapes[0])


@pytest.mark.parametrize("op, kw, msg", [
    ("Adagrad", dict(n_out=1), r"1 outputs for 1 optimized tensor\(s\): expected 2"),
    ("Adam", dict(n_out=2), r"2 outputs for 1 optimized tensor\(s\): expected 3"),
    ("Momentum", dict(roles={"V": [[2, 4]]}),
     r"input 'V1' has shape \[2x4\]: expected the shape \[2x3\] of 'X1'"),
    ("Adam", dict(roles={"H": [[3]]}),
     r"input 'H1' has shape \[3\]: expected the shape \[2x3\] of 'X1'"),
    ("Adagrad", dict(roles={"G": [[2, 3]], ("G", "elem"): D}),
     r"input 'G1' has element type f64: expected f32"),
    ("Adagrad", dict(r=(F, [2])), r"input 'R' has shape \[2\]: expected a scalar"),
    ("Adam", dict(t=(TP.INT32, [])), r"input 'T' has type tensor\(int32\), expected one of tensor\(int64\)"),
    ("Momentum", dict(mode="heavy"),
     r"attribute 'mode' = 'heavy': expected 'standard' or 'nesterov'"),
])
def test_invalid(op, kw, msg):
    with pytest.raises(VerificationError, match=r"node 'n' \(" + op + r"\): " + msg):
        our_output_types(model(op, [[2, 3]], **kw))


def test_invalid_input_count():
    """5 group tensors for Adam (4 per optimized tensor)."""
    ins = [("r", F, []), ("t", I, [])] + [(f"x{i}", F, [2]) for i in range(5)]
    node = helper.make_node("Adam", [x[0] for x in ins], ["a", "b", "c"], name="n", domain=TR)
    m = make_model([node], ins, ["a", "b", "c"], 21)
    m.opset_import.append(helper.make_opsetid(TR, 1))
    with pytest.raises(VerificationError, match=r"node 'n' \(Adam\): 5 tensor inputs after R "
                       r"and T: expected a positive multiple of 4 \(X, G, V, H for each"):
        our_output_types(m)


def test_momentum_requires_its_attributes():
    ins = [("r", F, []), ("t", I, []), ("x", F, [2]), ("g", F, [2]), ("v", F, [2])]
    node = helper.make_node("Momentum", [x[0] for x in ins], ["x2", "v2"], name="n",
                            domain=TR, alpha=0.9, beta=1.0, norm_coefficient=0.0)
    m = make_model([node], ins, ["x2", "v2"], 21)
    m.opset_import.append(helper.make_opsetid(TR, 1))
    with pytest.raises(ImportError_, match=r"node 'n' \(Momentum\): missing required "
                       r"attribute 'mode'"):
        our_output_types(m)
