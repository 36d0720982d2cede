"""Einsum: explicit (``->``) or implicit output, ``...`` broadcasting,
repeated labels in one term (diagonals).

``parse_equation`` splits the equation into per-input label lists and the
output labels (implicit output: ``...`` then the labels used once, sorted).
``einsum_dims`` is the dim algebra shared with the lowering
(``passes/onnx_to_linalg/einsum.py``): the size of each label and of each
ellipsis dim (numpy broadcasting: equal, or 1), and the output dims.
"""
from __future__ import annotations

from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.common import fmt

ELL = "..."


def _parse_term(op: OnnxOp, term: str) -> list[str]:
    """'ab...c' -> ['a', 'b', '...', 'c']."""
    if term.count(ELL) > 1:
        op.fail(f"equation term '{term}' has more than one ellipsis")
    out, i = [], 0
    while i < len(term):
        if term.startswith(ELL, i):
            out.append(ELL)
            i += 3
        elif term[i].isalpha():
            out.append(term[i])
            i += 1
        else:
            op.fail(f"equation term '{term}': unexpected character '{term[i]}' "
                    f"(expected letters or '...')")
    return out


def parse_equation(op: OnnxOp, n_inputs: int) -> tuple[list[list[str]], list[str]]:
    """-> (labels of each input term, output labels); checks the syntax."""
    eq = op.attrs.equation
    if eq is None:
        op.fail("attribute 'equation' is required")
    lhs, arrow, rhs = eq.replace(" ", "").partition("->")
    terms = [_parse_term(op, t) for t in lhs.split(",")]
    if len(terms) != n_inputs:
        op.fail(f"equation '{eq}' has {len(terms)} input term(s), expected one per input "
                f"({n_inputs})")
    if arrow:
        out = _parse_term(op, rhs)
        for t in out:
            if t != ELL and not any(t in term for term in terms):
                op.fail(f"output label '{t}' does not appear in any input of equation '{eq}'")
        if len(set(out)) != len(out):
            op.fail(f"output labels of equation '{eq}' repeat a label")
    else:
        counts: dict[str, int] = {}
        for term in terms:
            for t in term:
                counts[t] = counts.get(t, 0) + 1
        out = ([ELL] if any(ELL in t for t in terms) else []) + \
            sorted(t for t, c in counts.items() if c == 1 and t != ELL)
    return terms, out


def _bcast(ctx, a, b, what: str):
    """numpy broadcasting of two dims (equal, or one of them 1)."""
    ctx.require(D.either(D.eq(a, b), D.either(D.eq(a, 1), D.eq(b, 1))), what, a, b)
    for x, y in ((a, b), (b, a)):
        if D.is_static(x):
            return x if x != 1 else y
    return D.select(D.eq(a, 1), b, a)


def einsum_dims(op: OnnxOp, ctx, terms, out_labels, shapes):
    """``shapes``: each input's dims (ints/UNKNOWN or run-time dims), None
    for an unknown rank. -> (size of each label, the ellipsis dims (None if
    a rank is unknown), output dims (None if they cannot be told))."""
    eq = op.attrs.equation
    sizes: dict = {}
    ell_rank, ells = 0, []
    for k, (term, s) in enumerate(zip(terms, shapes)):
        n_letters = sum(t != ELL for t in term)
        if s is None:
            for t in term:
                if t != ELL:
                    sizes.setdefault(t, D.UNKNOWN)
            continue
        has_ell = ELL in term
        if (not has_ell and len(s) != n_letters) or (has_ell and len(s) < n_letters):
            op.fail(f"input {k} has shape {fmt(D.to_static(s))} (rank {len(s)}), but its "
                    f"equation term '{''.join(term)}' expects rank "
                    f"{'>= ' if has_ell else ''}{n_letters}")
        pos, own = 0, {}
        for t in term:
            if t == ELL:
                r = len(s) - n_letters
                ells.append(s[pos:pos + r])
                ell_rank = max(ell_rank, r)
                pos += r
                continue
            d = s[pos]
            pos += 1
            if t in own:   # a diagonal: the same size, no broadcasting
                ctx.require(D.eq(own[t], d), f"label '{t}' repeats in input {k} with "
                            f"sizes {{0}} and {{1}} (equation '{eq}')", own[t], d)
                continue
            own[t] = d
            if t in sizes:
                sizes[t] = _bcast(ctx, sizes[t], d, f"label '{t}' has size {{0}} in one input "
                                  f"and {{1}} in input {k} (equation '{eq}')")
            else:
                sizes[t] = d
    known = all(s is not None for s in shapes)
    ell = None
    if known:
        ell = [1] * ell_rank
        for e in ells:
            for j, d in enumerate(e):
                i = ell_rank - len(e) + j
                ell[i] = _bcast(ctx, ell[i], d, f"the '...' dims do not broadcast: {{0}} "
                                f"and {{1}} (equation '{eq}')")
    if ELL in out_labels and ell is None:
        return sizes, ell, None
    out = []
    for t in out_labels:
        out.extend(ell if t == ELL else [sizes[t]])
    return sizes, ell, out


def onnx_einsum_inference_differs(node) -> bool:
    """True when ``onnx.shape_inference`` may type this Einsum node wrongly:
    it takes the ``...`` dims of one input instead of broadcasting them all
    (``...j,...j->...`` on [1, 3, 4] and [2, 3, 4] gave [1, 3], not [2, 3]).
    The importer then lets our rule alone type the node's output."""
    for a in node.attribute:
        if a.name == "equation":
            eq = a.s.decode() if isinstance(a.s, bytes) else str(a.s)
            return eq.partition("->")[0].count(ELL) > 1
    return False


def _einsum(op: OnnxOp):
    ins = op.variadic()
    terms, out = parse_equation(op, len(ins))
    shapes = [D.from_static(op.shape(v)) for v in ins]
    return einsum_dims(op, D.inference_checks(op), terms, out, shapes)[2]


@verifier("Einsum", 12, 28)
def _einsum_verify(op: OnnxOp):
    _einsum(op)


@shape_rule("Einsum", 12, 28)
def _einsum_shape(op: OnnxOp):
    ins = op.variadic()
    et = op.elem(ins[0]) if ins else None
    if et is None:
        return [None]
    out = _einsum(op)
    return [tensor(None if out is None else tuple(D.to_static(out)), et)]
