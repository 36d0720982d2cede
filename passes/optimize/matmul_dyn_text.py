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

from onnx_mlir_py.passes.optimize.kernel_emit import tensor_type
from onnx_mlir_py.passes.optimize.matmul_text import contraction, pad_text, reshape_text, slice_text

Dim = "int | str"          # a static size or the SSA name of an index value

# Row blocks for the remainder rows (fewer than mb) besides mb itself: the
# rows are padded to the smallest that holds them. A 2 x nb tile has a
# quarter of the 8-row tile's multiply-adds (its few accumulators make it
# FMA-latency bound, still about twice as fast as the padded 8 rows).
REMAINDER_BLOCKS = (2, 4)


def _s(shape) -> list:
    """The shape for :func:`.matmul_text.contraction` (None: dynamic)."""
    return [d if isinstance(d, int) else None for d in shape]


class _Idx:
    """Index arithmetic on static ints and SSA names, folding constants."""

    def __init__(self, lines: list[str]):
        self.lines = lines
        self.n = 0
        self.consts: dict[int, str] = {}

    def const(self, v: int) -> str:
        if v not in self.consts:
            self.consts[v] = f"%ci{v}"
            self.lines.append(f"    %ci{v} = arith.constant {v} : index")
        return self.consts[v]

    def op(self, name: str, a, b, fold) -> Dim:
        if isinstance(a, int) and isinstance(b, int):
            return fold(a, b)
        if b == 1 and name in ("divui", "ceildivui", "muli"):
            return a
        if b == 0 and name == "subi":
            return a
        self.n += 1
        v = f"%ix{self.n}"
        a = self.const(a) if isinstance(a, int) else a
        b = self.const(b) if isinstance(b, int) else b
        self.lines.append(f"    {v} = arith.{name} {a}, {b} : index")
        return v

    def div(self, a, b):
        return self.op("divui", a, b, lambda x, y: x // y)

    def cdiv(self, a, b):
        return self.op("ceildivui", a, b, lambda x, y: -(-x // y))

    def mul(self, a, b):
        return self.op("muli", a, b, lambda x, y: x * y)

    def sub(self, a, b):
        return self.op("subi", a, b, lambda x, y: x - y)


def kernel_function_dynamic(name: str, batch: int | None | bool, m: int | None,
                            k: int | None, n: int | None, mb: int, nb: int, kb: int,
                            n_outer: bool, pack_b: bool) -> str:
    """A private ``func.func @name(A, B, C) -> C`` computing C + A @ B where
    dims may be dynamic (None). ``batch``: False for a matmul, an int or
    None (dynamic) for a batch_matmul. ``pack_b``: B relaid out by
    ``linalg.pack`` (for constant B, folded at compile time); else B is only
    viewed in blocks [KO, kb, NO, nb] (padded first when N or K are not
    whole blocks)."""
    batched = batch is not False
    lines: list[str] = []
    ix = _Idx(lines)
    o = 1 if batched else 0

    def dim(v: str, i: int, static):
        if static is not None:
            return static
        name_ = f"%d{v[1:]}{i}"
        lines.append(f"    {name_} = tensor.dim {v}, {ix.const(i)} : {sig[v]}")
        return name_

    bs = [batch] if batched else []
    sig = {"%a": tensor_type(bs + [m, k]), "%b": tensor_type(bs + [k, n]), "%c": tensor_type(bs + [m, n])}
    lines.append(f"  func.func private @{name}(%a: {sig['%a']}, %b: {sig['%b']}, "
                 f"%c: {sig['%c']}) -> {sig['%c']} {{")
    lines.append("    %zero = arith.constant 0.0 : f32")
    bt = [dim("%a", 0, batch)] if batched else []
    M, K, N = dim("%a", o, m), dim("%a", o + 1, k), dim("%b", o + 1, n)
    if k is None:
        kb = 1
    mo = ix.div(M, mb)
    mf = ix.mul(mo, mb)
    r = ix.sub(M, mf)
    ko, no = ix.cdiv(K, kb), ix.cdiv(N, nb)
    kp, np_ = ix.mul(ko, kb), ix.mul(no, nb)
    z = [0] * o
    rt = "[" + ("[0], " if batched else "") + f"[{o}, {o + 1}], [{o + 2}, {o + 3}]]"
    # B: packed [batch,] [NO, KO, kb, nb] or viewed [batch,] [KO, kb, NO, nb]
    if pack_b:
        bp = bt + [no, ko, kb, nb]
        perm, dims = ("[0, 2, 1]", "[1, 2]") if batched else ("[1, 0]", "[0, 1]")
        dyn = [d for d in bt + [no, ko] if isinstance(d, str)]
        lines.append(f"    %bpe = tensor.empty({', '.join(dyn)}) : {tensor_type(bp)}")
        lines.append(f"    %bp = linalg.pack %b padding_value(%zero : f32) outer_dims_perm = {perm} "
                     f"inner_dims_pos = {dims} inner_tiles = [{kb}, {nb}] into %bpe "
                     f": {sig['%b']} -> {tensor_type(bp)}")
    else:
        b, b_shape = "%b", bt + [K, N]
        if kp != K or np_ != N:
            lines.append(pad_text("%bpad", "%b", b_shape, z + [ix.sub(kp, K), ix.sub(np_, N)],
                              bt + [kp, np_]))
            b, b_shape = "%bpad", bt + [kp, np_]
        bp = bt + [ko, kb, no, nb]
        lines.append(reshape_text("%bp", "expand", b, rt, b_shape, bp))
    # A padded along a static K that is no multiple of kb
    a, a_shape = "%a", bt + [M, K]
    if kp != K:
        lines.append(pad_text("%ap", "%a", a_shape, z + [0, ix.sub(kp, K)], bt + [M, kp]))
        a, a_shape = "%ap", bt + [M, kp]
    # C: with whole column blocks, row slices of C are viewed in blocks and
    # computed in place (static strides). Else C is padded to whole blocks
    # both ways (free for a fill: the pad folds into it), viewed in blocks
    # once, and the row blocks are slices of that view (a reshape of a slice
    # with a dynamic stride would be copied by bufferization).
    c, c_shape = "%c", bt + [M, N]
    c_padded = np_ != N
    if c_padded:
        mp = ix.mul(ix.cdiv(M, mb), mb)
        lines.append(pad_text("%cp", "%c", c_shape, z + [ix.sub(mp, M), ix.sub(np_, N)],
                          bt + [mp, np_]))
        c_shape = bt + [ix.cdiv(M, mb), mb, no, nb]
        lines.append(reshape_text("%c4", "expand", "%cp", rt, bt + [mp, np_], c_shape))
        c = "%c4"

    def block(tag: str, row0, rows, nblocks, pad_rows, cur: str, outer: bool,
              bm: int = mb) -> str:
        """Rows [row0, row0 + rows) of C computed in ``nblocks`` row blocks
        of ``bm`` rows (``pad_rows``: the rows padded to one block first);
        returns C. ``bm`` below mb only when C is not padded (its block
        view has mb rows)."""
        def rows_of(v: str, src: str, src_shape, width):
            """The rows of ``src`` (``width`` columns), padded when ``pad_rows``."""
            shape = bt + [rows, width]
            lines.append(slice_text(f"%{v}{tag}", "extract", src, z + [row0, 0], shape,
                                    src_shape, shape))
            if not pad_rows:
                return f"%{v}{tag}", shape
            lines.append(pad_text(f"%{v}{tag}p", f"%{v}{tag}", shape, z + [ix.sub(bm, rows), 0],
                              bt + [bm, width]))
            return f"%{v}{tag}p", bt + [bm, width]

        av, ar = rows_of("a", a, a_shape, kp)
        a4, c4 = bt + [nblocks, bm, ko, kb], bt + [nblocks, bm, no, nb]
        lines.append(reshape_text(f"%a4{tag}", "expand", av, rt, ar, a4))
        if c_padded:
            at = z + [ix.div(row0, mb), 0, 0, 0]
            lines.append(slice_text(f"%c4{tag}", "extract", cur, at, c4, c_shape, c4))
        else:
            cv, cr = rows_of("c", cur, c_shape, np_)
            lines.append(reshape_text(f"%c4{tag}", "expand", cv, rt, cr, c4))
        lines.append(contraction(f"%r4{tag}", f"%a4{tag}", "%bp", f"%c4{tag}", _s(a4), _s(bp),
                                 _s(c4), batched, pack_b, outer, contract=kb == 1))
        if c_padded:
            lines.append(slice_text(f"%o{tag}", "insert", f"%r4{tag}", at, c4, c4, c_shape, cur))
            return f"%o{tag}"
        lines.append(reshape_text(f"%r{tag}", "collapse", f"%r4{tag}", rt, c4, cr))
        res = f"%r{tag}"
        if pad_rows:
            full = bt + [rows, np_]
            lines.append(slice_text(f"%r{tag}s", "extract", res, z + [0, 0], full, cr, full))
            res, cr = f"%r{tag}s", full
        lines.append(slice_text(f"%o{tag}", "insert", res, z + [row0, 0], cr, cr, c_shape, cur))
        return f"%o{tag}"

    cur = c
    # main: the whole row blocks, in place in C
    if mo != 0:
        cur = block("m", 0, mf, mo, False, cur, n_outer)
    # remainder: the last M % mb rows, padded to one block of mb rows, or,
    # when C is not padded, of REMAINDER_BLOCKS rows if they fit (a batch of
    # 2 does 2 rows of work, not 8); under scf.ifs when M is dynamic; one
    # row block: the column blocks outermost
    small = [] if c_padded else [bm for bm in REMAINDER_BLOCKS if bm < mb]
    if isinstance(r, int) and r:
        bm = next((x for x in small if r <= x), mb)
        cur = block(f"r{bm}", mf, r, 1, True, cur, True, bm)
    elif not isinstance(r, int):
        # index values the blocks need are emitted with them: hoisted before the ifs
        body: list[str] = []

        def region(fn) -> str:
            at = len(lines)
            res = fn()
            new = lines[at:]
            del lines[at:]
            lines.extend(ln for ln in new if ln.lstrip().startswith(("%ix", "%ci")))
            body.extend("  " + ln for ln in new if not ln.lstrip().startswith(("%ix", "%ci")))
            return res
        ct = tensor_type(c_shape)

        def choose(i: int) -> str:
            """Blocks small[i:] then mb, by the remainder's size."""
            bm = small[i] if i < len(small) else mb
            if i >= len(small):
                return region(lambda: block(f"r{bm}", mf, r, 1, True, cur, True, bm))
            body.append(f"    %fits{bm} = arith.cmpi ule, {r}, {ix.const(bm)} : index")
            body.append(f"    %cf{bm} = scf.if %fits{bm} -> ({ct}) {{")
            res = region(lambda: block(f"r{bm}", mf, r, 1, True, cur, True, bm))
            body.append(f"      scf.yield {res} : {ct}\n    }} else {{")
            other = choose(i + 1)
            body.append(f"      scf.yield {other} : {ct}\n    }}")
            return f"%cf{bm}"
        lines.append(f"    %has = arith.cmpi ugt, {r}, {ix.const(0)} : index")
        res = choose(0)
        lines.append(f"    %cf = scf.if %has -> ({ct}) {{")
        lines.extend(body)
        lines.append(f"      scf.yield {res} : {ct}\n    }} else {{\n"
                     f"      scf.yield {cur} : {ct}\n    }}")
        cur = "%cf"
    if c_padded:
        lines.append(reshape_text("%cc", "collapse", cur, rt, c_shape, bt + [mp, np_]))
        lines.append(slice_text("%rs", "extract", "%cc", z + [0, 0], bt + [M, N], bt + [mp, np_],
                                bt + [M, N]))
        cur = "%rs"
    lines.append(f"    return {cur} : {sig['%c']}\n  }}")
    return "\n".join(lines)
