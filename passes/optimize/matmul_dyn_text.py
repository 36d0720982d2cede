"""Text of the packed matmul kernel when dims are dynamic (a batch, a
sequence length): the static kernel's blocks (:mod:`.matmul_text`) with the
row blocks split at run time into whole blocks and one remainder.

    Bp = linalg.pack B, padded                [batch,] [NO, KO, kb, nb]  (folded for weights)
    C4 = expand_shape(pad(C))                 [batch,] [MO', mb, NO, nb]   MO' = ceil(M/mb)
    main:      A4 = expand_shape(A[0:MO*mb])  [batch,] [MO, mb, KO, kb]   (a view of A)
               C4[0:MO] = contraction(A4, Bp, C4[0:MO])
    remainder: (M % mb rows, when there are any, under an scf.if)
               Ar = pad(A[MO*mb:M]) to mb rows (2 or 4 when they hold them
               and C is unpadded), C4[MO] = contraction(Ar, Bp, C4[MO])
    C = collapse_shape(C4) -> extract_slice [M, N]

This is the "tile, peel the last iteration, pad only the remainder" route
of the dynamic-shapes notes, written out: the main contraction has the
static kernel's blocks with a run-time block count (its schedule tiles the
block loops by 1, so every tile is static and vectorizes the same way), and
only the remainder's A rows are copied into an mb-row buffer. A padded C
is free when C is a fill (the pad of a fill folds to a larger fill).

A dynamic K uses k blocks of 1 (A and B need no padding along K then).
N is padded to whole column blocks (B when packed, C). Only packed B
(``linalg.pack`` of B; weights are packed at compile time).
"""
from __future__ import annotations

from onnx_mlir_py.passes.optimize.kernel_emit import F32, Emitter, Value, tensor
from onnx_mlir_py.passes.optimize.matmul_text import contraction

# Row blocks for the remainder rows (fewer than mb) besides mb itself: the
# rows are padded to the smallest that holds them. A 2 x nb tile has a
# quarter of the 8-row tile's multiply-adds (its few accumulators make it
# FMA-latency bound, still about twice as fast as the padded 8 rows).
REMAINDER_BLOCKS = (2, 4)


def shared_kernel(k: int | None, n: int | None, nb: int, pack_b: bool) -> bool:
    """Whether the kernel is split in two (:func:`kernel_function_dynamic`):
    B packed by the caller, the kernel a function of its own that is not
    inlined, so every matmul of the same shapes calls one copy. Needs a
    packed B of static K and N, and C in whole column blocks (the kernel
    then writes C in place and returns it: no padded C to allocate)."""
    return pack_b and k is not None and n is not None and n % nb == 0


def kernel_function_dynamic(name: str, batch: int | None | bool, m: int | None,
                            k: int | None, n: int | None, mb: int, nb: int, kb: int,
                            n_outer: bool, pack_b: bool) -> str:
    """A private ``func.func @name(A, B, C) -> C`` computing C + A @ B where
    dims may be dynamic (None). ``batch``: False for a matmul, an int or
    None (dynamic) for a batch_matmul. ``pack_b``: B relaid out by
    ``linalg.pack`` (for constant B, folded at compile time); else B is only
    viewed in blocks [KO, kb, NO, nb] (padded first when N or K are not
    whole blocks).

    When :func:`shared_kernel`, the text holds two functions: ``@name``
    packs B and calls ``@name_kernel(A, packed B, C)`` with ``no_inline``.
    ``@name`` is inlined at each matmul (its pack of constant B folds
    there); the kernel stays one function for all of them, so the -O3
    schedule, bufferization and the lowerings handle it once (issue #29:
    GPT-2's 12 layers repeat four matmul shapes)."""
    if not shared_kernel(k, n, nb, pack_b):
        return _kernel(name, batch, m, k, n, mb, nb, kb, n_outer, pack_b, False)
    batched = batch is not False
    e = Emitter()
    bs = [batch] if batched else []
    a, b, c = (e.param("a", tensor(bs + [m, k])), e.param("b", tensor(bs + [k, n])),
               e.param("c", tensor(bs + [m, n])))
    bp = _pack_b(e, b, [e.dim(a, 0) if batch is None else batch] if batched else [],
                 e.cdiv(k, kb), e.cdiv(n, nb), kb, nb, batched)
    r = e.op("r", f"func.call @{name}_kernel({a}, {bp}, {c}) {{no_inline}} : "
                  f"({a.type}, {bp.type}, {c.type}) -> {c.type}", c.type)
    e(f"return {r} : {c.type}")
    return e.function(name, [a, b, c], c.type) + "\n" \
        + _kernel(f"{name}_kernel", batch, m, k, n, mb, nb, kb, n_outer, pack_b, True)


def _pack_b(e: Emitter, b: Value, bt: list, ko, no, kb: int, nb: int, batched: bool) -> Value:
    """B [batch,] [K, N] relaid out by ``linalg.pack`` as [batch,] [NO, KO, kb, nb]."""
    zero = e.const("0.0", F32)
    perm, dims = ("[0, 2, 1]", "[1, 2]") if batched else ("[1, 0]", "[0, 1]")
    bpe = e.empty(bt + [no, ko, kb, nb])
    return e.op("bp", f"linalg.pack {b} padding_value({zero} : f32) outer_dims_perm = {perm} "
                      f"inner_dims_pos = {dims} inner_tiles = [{kb}, {nb}] into {bpe} "
                      f": {b.type} -> {bpe.type}", bpe.type)


def _kernel(name: str, batch: int | None | bool, m: int | None, k: int | None,
            n: int | None, mb: int, nb: int, kb: int, n_outer: bool, pack_b: bool,
            b_packed: bool) -> str:
    """The kernel of :func:`kernel_function_dynamic`; ``b_packed``: its B
    parameter is already packed ([batch,] [NO, KO, kb, nb], static K and N)."""
    batched = batch is not False
    e = Emitter()
    o = 1 if batched else 0
    bs = [batch] if batched else []
    if b_packed:
        bshape = bs + [-(-n // nb), -(-k // kb), kb, nb]
    else:
        bshape = bs + [k, n]
    a, b, c = (e.param("a", tensor(bs + [m, k])), e.param("b", tensor(bshape)),
               e.param("c", tensor(bs + [m, n])))
    zero = e.const("0.0", F32)

    def dim(v: Value, i: int, static):
        return static if static is not None else e.dim(v, i)

    bt = [dim(a, 0, batch)] if batched else []
    M, K, N = dim(a, o, m), dim(a, o + 1, k), n if b_packed else dim(b, o + 1, n)
    if k is None:
        kb = 1
    mo = e.div(M, mb)
    mf = e.mul(mo, mb)
    r = e.sub(M, mf)
    ko, no = e.cdiv(K, kb), e.cdiv(N, nb)
    kp, np_ = e.mul(ko, kb), e.mul(no, nb)
    z = [0] * o
    rt = "[" + ("[0], " if batched else "") + f"[{o}, {o + 1}], [{o + 2}, {o + 3}]]"
    # B: packed [batch,] [NO, KO, kb, nb] or viewed [batch,] [KO, kb, NO, nb]
    if b_packed:
        bp = b
    elif pack_b:
        bp = _pack_b(e, b, bt, ko, no, kb, nb, batched)
    else:
        bv = b
        if kp != K or np_ != N:
            bv = e.pad(b, z + [e.sub(kp, K), e.sub(np_, N)], bt + [kp, np_], zero)
        bp = e.expand(bv, rt, bt + [ko, kb, no, nb])
    # A padded along a static K that is no multiple of kb
    av = a
    if kp != K:
        av = e.pad(a, z + [0, e.sub(kp, K)], bt + [M, kp], zero)
    # C: with whole column blocks, row slices of C are viewed in blocks and
    # computed in place (static strides). Else C is padded to whole blocks
    # both ways (free for a fill: the pad folds into it), viewed in blocks
    # once, and the row blocks are slices of that view (a reshape of a slice
    # with a dynamic stride would be copied by bufferization).
    cv = c
    c_padded = np_ != N
    if c_padded:
        mp = e.mul(e.cdiv(M, mb), mb)
        cp = e.pad(c, z + [e.sub(mp, M), e.sub(np_, N)], bt + [mp, np_], zero)
        cv = e.expand(cp, rt, bt + [e.cdiv(M, mb), mb, no, nb])

    def block(row0, rows, nblocks, pad_rows, cur: Value, outer: bool, bm: int = mb) -> Value:
        """Rows [row0, row0 + rows) of C computed in ``nblocks`` row blocks
        of ``bm`` rows (``pad_rows``: the rows padded to one block first);
        returns C. ``bm`` below mb only when C is not padded (its block
        view has mb rows)."""
        def rows_of(src: Value, width) -> Value:
            """The rows of ``src`` (``width`` columns), padded when ``pad_rows``."""
            sl = e.extract_slice(src, z + [row0, 0], bt + [rows, width])
            if not pad_rows:
                return sl
            return e.pad(sl, z + [e.sub(bm, rows), 0], bt + [bm, width], zero)

        a4 = e.expand(rows_of(av, kp), rt, bt + [nblocks, bm, ko, kb])
        c4 = bt + [nblocks, bm, no, nb]
        if c_padded:
            at = z + [e.div(row0, mb), 0, 0, 0]
            c4v = e.extract_slice(cur, at, c4)
        else:
            crows = rows_of(cur, np_)
            c4v = e.expand(crows, rt, c4)
        r4 = contraction(e, a4, bp, c4v, batched, pack_b, outer, contract=kb == 1)
        if c_padded:
            return e.insert_slice(r4, cur, at, c4)
        res = e.collapse(r4, rt, crows.type.shape)
        sizes = bt + [bm if pad_rows else rows, np_]
        if pad_rows:
            sizes = bt + [rows, np_]
            res = e.extract_slice(res, z + [0, 0], sizes)
        return e.insert_slice(res, cur, z + [row0, 0], sizes)

    cur = cv
    # main: the whole row blocks, in place in C
    if mo != 0:
        cur = block(0, mf, mo, False, cur, n_outer)
    # remainder: the last M % mb rows, padded to one block of mb rows, or,
    # when C is not padded, of REMAINDER_BLOCKS rows if they fit (a batch of
    # 2 does 2 rows of work, not 8); under scf.ifs when M is dynamic; one
    # row block: the column blocks outermost
    small = [] if c_padded else [bm for bm in REMAINDER_BLOCKS if bm < mb]
    if isinstance(r, int) and r:
        bm = next((x for x in small if r <= x), mb)
        cur = block(mf, r, 1, True, cur, True, bm)
    elif not isinstance(r, int):
        # the ifs' bodies are written aside; the index values they need are
        # hoisted before the ifs
        main, body = e.lines, []
        ct = cur.type

        def region(fn):
            e.lines, e.index_sink = body, main
            try:
                return fn()
            finally:
                e.lines, e.index_sink = main, None

        def choose(i: int) -> Value:
            """Blocks small[i:] then mb, by the remainder's size."""
            bm = small[i] if i < len(small) else mb
            if i >= len(small):
                return region(lambda: block(mf, r, 1, True, cur, True, bm))
            fits = region(lambda: e.cmpi("ule", r, e.index(bm)))
            cf = Value(e.fresh("cf"), ct)
            body.append(f"    {cf} = scf.if {fits} -> ({ct}) {{")
            res = region(lambda: block(mf, r, 1, True, cur, True, bm))
            body.append(f"      scf.yield {res} : {ct}\n    }} else {{")
            other = choose(i + 1)
            body.append(f"      scf.yield {other} : {ct}\n    }}")
            return cf
        has = e.cmpi("ugt", r, e.index(0))
        res = choose(0)
        cf = Value(e.fresh("cf"), ct)
        e(f"{cf} = scf.if {has} -> ({ct}) {{")
        e.lines.extend(body)
        e(f"  scf.yield {res} : {ct}\n    }} else {{\n      scf.yield {cur} : {ct}\n    }}")
        cur = cf
    if c_padded:
        cur = e.extract_slice(e.collapse(cur, rt, bt + [mp, np_]), z + [0, 0], bt + [M, N])
    e(f"return {cur} : {c.type}")
    return e.function(name, [a, b, c], c.type)
