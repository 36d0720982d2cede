"""Text of the packed matmul kernels (one private function per shape).

C[M, N] (+)= A[M, K] @ B[K, N] becomes, with blocks (mb, nb, kb):

    A4 = expand_shape(pad(A))                [M/mb, mb, K/kb, kb]  (a view)
    Bp = linalg.pack B                       [N/nb, K/kb, kb, nb]  (a copy; folded for weights)
    C4 = expand_shape(pad(C))                [M/mb, mb, N/nb, nb]  (a view)
    C4 = generic (mo, no, ko, mi, ni, ki)    the packed contraction
    C  = collapse_shape(C4) [-> extract_slice when padded]

Only B is relaid out: the kernel reads one mb x kb block of A per k step
(scalar broadcasts) and kb rows of nb contiguous B values. ``batch_matmul``
gets a leading batch loop.

``pack_b=False`` (a constant A times a large computed B: a convolution's
weights times its im2col matrix) skips the copy of B: B is only viewed in
blocks, ``B4 = expand_shape(pad(B)) [K/kb, kb, N/nb, nb]``, and the N-block
loop runs outside the M-block loop, so the kb x nb blocks of one column panel
of B are read from memory once and reused (from L1/L2) by every M block,
while A (the weights) stays in L2. Padding (sizes not multiples of the blocks) adds
zeros, which do not change the sums, and is sliced off the result.
"""
from __future__ import annotations

from onnx_mlir_py.passes.optimize.kernel_emit import F32, Emitter, Value, tensor
from onnx_mlir_py.passes.optimize.matmul_attrs import PACKED_ATTR
from onnx_mlir_py.passes.optimize.epilogue import epilogue_generic


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def contraction(e: Emitter, a4: Value, bp: Value, c4: Value, batched: bool, pack_b: bool,
                n_outer: bool, contract: bool = False, a_cols: bool = False) -> Value:
    """The packed contraction ``c4 + a4 . bp`` (a generic tagged
    PACKED_ATTR) on the block views: a4 [batch,] [MO, mb, KO, kb], bp
    [batch,] [NO, KO, kb, nb] (packed B) or [KO, kb, NO, nb] (B viewed), c4
    [batch,] [MO, mb, NO, nb] (dims may be dynamic). Loops:
    [batch,] MO, NO, KO, mi, ni, ki (MO and NO swapped when ``n_outer``).
    ``contract``: the multiply and add may fuse (k blocks of 1 vectorize to
    a multiply and an add, not to a contraction lowered to FMAs).
    ``a_cols``: a4 is Aᵀ in blocks, [KO, kb, MO, mb] (see kernel_function)."""
    loops = [f"d{i}" for i in range(7 if batched else 6)]
    lead, (mo_, no_, ko_, mi, ni, ki) = loops[:-6], loops[-6:]
    if n_outer:
        mo_, no_ = no_, mo_
    operands = [(ko_, ki, mo_, mi) if a_cols else (mo_, mi, ko_, ki),
                (no_, ko_, ki, ni) if pack_b else (ko_, ki, no_, ni),
                (mo_, mi, no_, ni)]
    d = ", ".join(loops)
    maps = [f"({d}) -> ({', '.join(lead + list(x))})" for x in operands]
    kinds = ["parallel"] * len(lead) + ["parallel", "parallel", "reduction"] * 2
    iters = ", ".join(f'"{x}"' for x in kinds)
    fm = " fastmath<contract>" if contract else ""
    x, y, acc, p, sm = (e.fresh(b) for b in ("x", "y", "acc", "p", "s"))
    res = Value(e.fresh("r4"), c4.type)
    e(f"{res} = linalg.generic {{indexing_maps = [affine_map<{maps[0]}>, "
      f"affine_map<{maps[1]}>, affine_map<{maps[2]}>], iterator_types = [{iters}], "
      f"{PACKED_ATTR}}}")
    e(f"    ins({a4}, {bp} : {a4.type}, {bp.type}) outs({c4} : {c4.type}) {{")
    e(f"^bb0({x}: f32, {y}: f32, {acc}: f32):")
    e(f"  {p} = arith.mulf {x}, {y}{fm} : f32")
    e(f"  {sm} = arith.addf {acc}, {p}{fm} : f32")
    e(f"  linalg.yield {sm} : f32")
    e(f"}} -> {c4.type}")
    return res


def kernel_function(name: str, batch: int | None, m: int, k: int, n: int,
                    mb: int, nb: int, kb: int, pack_b: bool = True,
                    n_outer: bool | None = None, a_cols: bool = False,
                    epilogue: tuple | None = None, init: str | None = None) -> str:
    """A private ``func.func @name(A, B, C) -> C`` computing C + A @ B.
    ``n_outer``: the N-block loop outside the M-block loop (default: when B
    is not packed). ``a_cols`` (no batch): the first argument is Aᵀ,
    ``[K, M]`` (a convolution's im2col matrix, whose pixels are the rows of
    A), read in place in blocks ``[K/kb, kb, M/mb, mb]``: the kb x mb block
    of one k step is kb rows of mb contiguous values.
    ``epilogue`` (no batch, not ``a_cols``): ``(ops, result, tensors,
    captured)`` of :mod:`.epilogue`, applied to the result in its block
    layout (a generic ``kernel_schedule`` fuses into the register tile);
    the function then also takes the ``tensors`` ([M, N]; only when M and N
    are whole blocks) and the ``captured`` f32 scalars.
    ``init`` (no batch; with ``a_cols`` only ``"cols_after"``; see
    :func:`.matmul.matmul_init`):
    the third argument is not C but what C is made of, and the
    accumulators start from it in registers (``kernel_schedule`` fuses the
    init into the register tile) instead of from a C the caller
    materialized: ``"rows"`` a vector [M] (C[i, j] = v[i], a conv's bias)
    or ``"fill"`` an f32 scalar. ``"rows_after"`` (no ``epilogue``): the
    vector [M] of ``"rows"`` added to the accumulators after the k loop,
    which start from zero, by an epilogue generic of that one add (a
    kernel's own epilogue that only copied its result would be erased by
    the canonicalizer, and the init left unfused). ``"cols_after"``: the
    same with a vector [N] (C[i, j] = v[j]: the bias of a conv in
    pixel-row form, :mod:`.conv_pixel_rows`)."""
    if n_outer is None:
        n_outer = not pack_b
    bt = [] if batch is None else [batch]
    mp, kp, np_ = _cdiv(m, mb) * mb, _cdiv(k, kb) * kb, _cdiv(n, nb) * nb
    mo, ko, no = mp // mb, kp // kb, np_ // nb
    assert not (a_cols and bt), "a_cols: no batch"
    ash, apad = ([k, m], [kp, mp]) if a_cols else (bt + [m, k], bt + [mp, kp])
    e = Emitter()
    after = init in _AFTER
    assert init is None or not bt, "init: no batch"
    assert not a_cols or init in (None, "cols_after"), "a_cols: init cols_after only"
    assert not after or epilogue is None
    a, b = e.param("a", tensor(ash)), e.param("b", tensor(bt + [k, n]))
    c = e.param("c", _INIT_PARAM[init](m, n) if init else tensor(bt + [m, n]))
    ets, ecs = [], []
    if epilogue is not None:
        assert not bt and not a_cols and (not epilogue[2] or (mp, np_) == (m, n))
        ets = [e.param("et", tensor([m, n])) for _ in range(epilogue[2])]
        ecs = [e.param("ec", F32) for _ in range(epilogue[3])]
    zero = e.const("0.0", F32)

    def padded(v: Value, shape) -> Value:
        """``v`` with zeros at the end of each dim up to ``shape``."""
        if list(v.type.shape) == list(shape):
            return v
        return e.pad(v, [p - s for s, p in zip(v.type.shape, shape)], shape, zero)

    o = len(bt)
    reass = ([[0]] if bt else []) + [[o, o + 1], [o + 2, o + 3]]
    rtext = "[" + ", ".join(str(r) for r in reass) + "]"
    a4 = [ko, kb, mo, mb] if a_cols else bt + [mo, mb, ko, kb]
    c4 = bt + [mo, mb, no, nb]
    av = padded(a, apad)
    if pack_b:
        perm = "[0, 2, 1]" if bt else "[1, 0]"
        dims = "[1, 2]" if bt else "[0, 1]"
        pad_b = f" padding_value({zero} : f32)" if (kp != k or np_ != n) else ""
        bpe = e.empty(bt + [no, ko, kb, nb])
        bp = e.op("bp", f"linalg.pack {b}{pad_b} outer_dims_perm = {perm} inner_dims_pos = {dims} "
                        f"inner_tiles = [{kb}, {nb}] into {bpe} : {b.type} -> {bpe.type}", bpe.type)
    else:
        bp = e.expand(padded(b, bt + [kp, np_]), rtext, bt + [ko, kb, no, nb])
    if after:
        c4v = _init_blocks(e, "fill", zero, padded, c4)
    elif init:
        c4v = _init_blocks(e, init, c, padded, c4)
    else:
        c4v = e.expand(padded(c, bt + [mp, np_]), rtext, c4)
    r4 = contraction(e, e.expand(av, rtext, a4), bp, c4v, bool(bt), pack_b, n_outer, a_cols=a_cols)
    if epilogue is not None:
        r4 = _blocked_epilogue(e, r4, [e.expand(t, rtext, c4) for t in ets], ecs, n_outer, epilogue)
    if after:
        cols = init == "cols_after"
        bias = e.expand(padded(c, [np_ if cols else mp]), "[[0, 1]]", [no, nb] if cols else [mo, mb],
                        base="cv")
        r4 = _bias_epilogue(e, r4, bias, n_outer, cols)
    r = e.collapse(r4, rtext, bt + [mp, np_])
    if (mp, np_) != (m, n):
        full = bt + [m, n]
        r = e.extract_slice(r, [0] * len(full), full)
    rt = tensor(bt + [m, n])
    e(f"return {r} : {rt}")
    return e.function(name, [a, b, c] + ets + ecs, rt)


_INIT_PARAM = {"rows": lambda m, n: tensor([m]), "rows_after": lambda m, n: tensor([m]),
               "cols_after": lambda m, n: tensor([n]), "fill": lambda m, n: F32}
# the inits added by a one-add epilogue after the k loop (accumulators from zero)
_AFTER = ("rows_after", "cols_after")


def _init_blocks(e: Emitter, init: str, v: Value, padded, c4: list[int]) -> Value:
    """The contraction's init in blocks ``c4`` ([MO, mb, NO, nb]) made from
    ``v`` (see ``init`` of :func:`kernel_function`): a ``linalg.generic``
    broadcasting the scalar or the (padded) vector, which the register tile
    reads directly once fused into it (a ``linalg.fill`` would not be
    vectorized with the tile)."""
    dst = e.empty(c4, base="ce")
    mo, mb, no, nb = c4
    if init == "fill":
        src, dims = v, ""
    else:
        src, dims = e.expand(padded(v, [mo * mb]), "[[0, 1]]", [mo, mb], base="cv"), "d0, d1"
    return e.broadcast_rows(src, dst, f"affine_map<(d0, d1, d2, d3) -> ({dims})>, "
                                         "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>",
                            base="cb")


def _blocked_epilogue(e: Emitter, r4: Value, t4: list[Value], caps: list[Value], n_outer: bool,
                      epilogue: tuple) -> Value:
    """The epilogue generic on the contraction's result ``r4`` ([MO, mb, NO,
    nb]) and the tensors ``t4`` (the same blocks), its loops in the
    contraction's order (outer block loops, then mi, ni): tiling it like
    the contraction gives the register tile the contraction fuses into."""
    ops, result, _nt, _nc = epilogue
    return epilogue_generic(e, r4, t4, caps, [_block_map(n_outer)] * (len(t4) + 2), ops, result,
                            expand_exp=True)


def _block_map(n_outer: bool, rows_only: bool = False, cols_only: bool = False) -> str:
    """The map of the blocks [MO, mb, NO, nb] (or of the row vector in
    blocks [MO, mb], or of the column vector in blocks [NO, nb]) in an
    epilogue's loops (the contraction's order)."""
    mo, no = ("d1", "d0") if n_outer else ("d0", "d1")
    if cols_only:
        return f"(d0, d1, d2, d3) -> ({no}, d3)"
    return f"(d0, d1, d2, d3) -> ({mo}, d2{'' if rows_only else f', {no}, d3'})"


def _bias_epilogue(e: Emitter, r4: Value, bias: Value, n_outer: bool, cols: bool = False) -> Value:
    """``r4`` ([MO, mb, NO, nb]) + ``bias`` ([MO, mb]) broadcast along the
    columns (``cols``: [NO, nb] broadcast along the rows): the epilogue of
    ``init="rows_after"`` / ``"cols_after"``."""
    m = _block_map(n_outer)
    return epilogue_generic(e, r4, [bias], [], [m, _block_map(n_outer, not cols, cols), m],
                            (("arith.addf", "%e_b", ("%e_in", "%e_t0"), ""),), "%e_b")
