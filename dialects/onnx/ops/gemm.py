"""Matrix products: Gemm, MatMul, Einsum (MatMulInteger: integer_ops.py).

* Gemm (v7+): A [M, K] (transA: [K, M]), B [K, N] (transB: [N, K]), optional
  (v11+) C unidirectionally broadcastable to [M, N]; Y is [M, N]. Versions 1
  and 6 (``broadcast`` attribute) predate opset 7 and are not covered.
* MatMul: numpy.matmul -- a 1-D A is promoted to [1, K] and
  a 1-D B to [K, 1] (the added dim is removed from the result), batch dims
  broadcast.
* Einsum: explicit (``->``) or implicit output, ``...`` broadcasting.
"""
from __future__ import annotations


from onnx_mlir_py.registry import shape_rule, verifier
from onnx_mlir_py.dialects.onnx.opview import OnnxOp, tensor
from onnx_mlir_py.dialects.onnx.ops.broadcast import broadcast_shapes
from onnx_mlir_py.dialects.onnx.ops.common import fmt, single_result


def _same(a, b) -> bool:
    return a is None or b is None or a == b


# -- Gemm ------------------------------------------------------------------------

def _gemm(op: OnnxOp):
    a, b = op.shape(op.input(0)), op.shape(op.input(1))
    for name, s in (("A", a), ("B", b)):
        if s is not None and len(s) != 2:
            op.fail(f"input '{name}' has shape {fmt(s)}: expected rank 2, got rank {len(s)}")
    ta, tb = op.attrs.transA, op.attrs.transB
    m = k_a = k_b = n = None
    if a is not None:
        m, k_a = (a[1], a[0]) if ta else (a[0], a[1])
    if b is not None:
        k_b, n = (b[1], b[0]) if tb else (b[0], b[1])
    if not _same(k_a, k_b):
        op.fail(f"inner dimensions differ: A {fmt(a)} (transA={ta}) has K = {k_a}, "
                f"B {fmt(b)} (transB={tb}) has K = {k_b}")
    c = op.shape(op.input(2))
    if c is not None:
        if len(c) > 2:
            op.fail(f"input 'C' has shape {fmt(c)}: expected rank <= 2 "
                    f"(unidirectionally broadcastable to [M, N]), got rank {len(c)}")
        for cd, yd, what in zip(reversed(c), (n, m), ("N", "M")):
            if cd is not None and cd != 1 and yd is not None and cd != yd:
                op.fail(f"input 'C' has shape {fmt(c)}: not unidirectionally broadcastable to "
                        f"[M, N] = {fmt((m, n))} ({what}: expected 1 or {yd}, got {cd})")
    if a is None or b is None:
        return None
    return (m, n)


@verifier("Gemm", 7, 9, 11, 13)
def _gemm_verify(op: OnnxOp):
    _gemm(op)


shape_rule("Gemm", 7, 9, 11, 13)(single_result(_gemm))


# -- MatMul / MatMulInteger ------------------------------------------------------------

def matmul_shape(op: OnnxOp, a, b):
    """numpy.matmul result shape (None if a rank is unknown); checks K."""
    for name, s in (("A", a), ("B", b)):
        if s is not None and len(s) < 1:
            op.fail(f"input '{name}' is a scalar: expected rank >= 1")
    if a is None or b is None:
        return None
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if not _same(a2[-1], b2[-2]):
        op.fail(f"inner dimensions differ: A {fmt(a)} has K = {a2[-1]}, "
                f"B {fmt(b)} has K = {b2[-2]}")
    batch = broadcast_shapes(op, [a2[:-2], b2[:-2]])
    out = list(batch)
    if len(a) > 1:
        out.append(a2[-2])
    if len(b) > 1:
        out.append(b2[-1])
    return tuple(out)


@verifier("MatMul", 1, 9, 13)
def _matmul_verify(op: OnnxOp):
    matmul_shape(op, op.shape(op.input(0)), op.shape(op.input(1)))


@shape_rule("MatMul", 1, 9, 13)
def _matmul_shape(op: OnnxOp):
    et = op.elem(op.input(0))
    shape = matmul_shape(op, op.shape(op.input(0)), op.shape(op.input(1)))
    return [tensor(shape, et) if et is not None else None]


# -- Einsum ------------------------------------------------------------------------

def _parse_term(op: OnnxOp, term: str) -> list[str]:
    """'ab...c' -> ['a', 'b', '...', 'c']."""
    term = term.strip().replace(" ", "")
    if term.count("...") > 1:
        op.fail(f"equation term '{term}' has more than one ellipsis")
    out, i = [], 0
    while i < len(term):
        if term.startswith("...", i):
            out.append("...")
            i += 3
        elif term[i].isalpha():
            out.append(term[i])
            i += 1
        else:
            op.fail(f"equation term '{term}': unexpected character '{term[i]}' "
                    f"(expected letters or '...')")
    return out


def _einsum(op: OnnxOp):
    eq = op.attrs.equation
    ins = op.variadic()
    if eq is None:
        op.fail("attribute 'equation' is required")
    lhs, arrow, rhs = eq.replace(" ", "").partition("->")
    terms = [_parse_term(op, t) for t in lhs.split(",")]
    if len(terms) != len(ins):
        op.fail(f"equation '{eq}' has {len(terms)} input term(s), expected one per input "
                f"({len(ins)})")
    shapes = [op.shape(v) for v in ins]
    letters: dict[str, int | None] = {}
    ell_shapes = []
    ell_rank = 0
    known = True
    for k, (term, s) in enumerate(zip(terms, shapes)):
        n_letters = sum(t != "..." for t in term)
        if s is None:
            known = False
            for t in term:
                if t != "...":
                    letters.setdefault(t, None)
            continue
        has_ell = "..." in term
        if (not has_ell and len(s) != n_letters) or (has_ell and len(s) < n_letters):
            op.fail(f"input {k} has shape {fmt(s)} (rank {len(s)}), but its equation term "
                    f"'{''.join(term)}' expects rank {'>= ' if has_ell else ''}{n_letters}")
        pos = 0
        for t in term:
            if t == "...":
                r = len(s) - n_letters
                ell_shapes.append(s[pos:pos + r])
                ell_rank = max(ell_rank, r)
                pos += r
                continue
            d = s[pos]
            pos += 1
            prev = letters.get(t)
            if prev is not None and d is not None and prev != d and 1 not in (prev, d):
                op.fail(f"label '{t}' has size {prev} in one input and {d} in input {k} "
                        f"(equation '{eq}')")
            if t not in letters or prev == 1 or (prev is None and d != 1):
                letters[t] = d
    ell = broadcast_shapes(op, ell_shapes) if known else None
    if arrow:
        out_terms = _parse_term(op, rhs)
        for t in out_terms:
            if t != "..." and t not in letters:
                op.fail(f"output label '{t}' does not appear in any input of equation '{eq}'")
    else:
        counts: dict[str, int] = {}
        for term in terms:
            for t in term:
                counts[t] = counts.get(t, 0) + 1
        out_terms = (["..."] if any("..." in t for t in terms) else []) + \
            sorted(t for t, c in counts.items() if c == 1 and t != "...")
    if not known:
        if "..." in out_terms:
            return None
        return tuple(letters.get(t) for t in out_terms)
    out = []
    for t in out_terms:
        if t == "...":
            out.extend(ell if ell is not None else ())
        else:
            out.append(letters[t])
    return tuple(out)


@verifier("Einsum", 12, 28)
def _einsum_verify(op: OnnxOp):
    _einsum(op)


@shape_rule("Einsum", 12, 28)
def _einsum_shape(op: OnnxOp):
    ins = op.variadic()
    et = op.elem(ins[0]) if ins else None
    return [tensor(_einsum(op), et) if et is not None else None]
