"""AMX tile text for the -O3 kernels (MLIR's ``amx`` dialect), shared by the
AMX-BF16 kernels (matmul_bf16_amx.py) and the AMX-INT8 ones.

The ``amx`` ops work on memrefs, while the kernels are tensor-level
functions (:class:`.kernel_emit.Emitter`): a kernel takes its read-only
tensor operands as buffers (:func:`to_buffer`), builds its result in a
:func:`alloc` and returns it with :func:`to_tensor` (``restrict writable``:
one-shot bufferization then uses that buffer, copying nothing).

The values here are kernel_emit :class:`~.kernel_emit.Value` s whose type
is a :class:`MemRef` or :class:`Tile` (printed as the types' text; the
Emitter only prints types, so loops may carry tiles as ``iter_args``).

Tiles (``!amx.tile<RxCxT>``): at most 16 rows of at most 64 bytes. The
products (Intel SDM, TDPBF16PS / TDPB[SU][SU]D):

- bf16: A ``16 x 32`` bf16 (16 rows, 16 k pairs), B ``16 x 32`` bf16 (16 k
  pairs, one 64-byte row each: 16 columns x 2, the pair-packed B of
  :func:`.matmul_q8.pack_b` with ``nb`` 16, ``group`` 2), C ``16 x 16`` f32;
  :func:`mulf`. K steps by 32.
- int8: A ``16 x 64`` i8, B ``16 x 64`` i8 (16 k quads x 16 columns x 4:
  ``pack_b`` with ``nb`` 16, ``group`` 4), C ``16 x 16`` i32; :func:`muli`
  (``zext`` per operand for u8). K steps by 64.

A tile load's row stride is the memref's second-to-last stride, so
operands are 2-D memrefs whose row is what a tile row steps over.

:func:`micro_kernel` is the 8-register block: ``len(a_rows) x len(b_rows)``
C tiles (at most 2 x 2 with 2 A + 2 B tiles) accumulated over the K steps
into a C memref (tiles cannot be loop-carried: see there).

The llc features: :data:`FEATURES_BF16` / :data:`FEATURES_INT8` go into the
module's ``om.cpu_features`` (:func:`mark_features`), which makes the
library require them and its runtime ask the OS for tile data
(om_cpu.c); ``convert-vector-to-llvm{enable-amx}`` lowers the ops.
"""
from __future__ import annotations

from dataclasses import dataclass

from onnx_mlir_py.passes.optimize.kernel_emit import INDEX, Elem, Emitter, Value

FEATURES_BF16 = ("amx-tile", "amx-bf16")
FEATURES_INT8 = ("amx-tile", "amx-int8")
ROWS = 16               # rows of a tile
ROW_BYTES = 64          # bytes of a tile row


@dataclass(frozen=True)
class MemRef:
    """A memref type (``None``: a dynamic dim); duck-typed as a kernel_emit Type."""
    elem: Elem
    shape: tuple
    kind: str = "memref"

    def __str__(self) -> str:
        return "memref<" + "".join(("?" if s is None else str(s)) + "x" for s in self.shape) + \
            self.elem.value + ">"


@dataclass(frozen=True)
class Tile:
    """An ``!amx.tile<rows x cols x elem>`` type."""
    rows: int
    cols: int
    elem: Elem
    kind: str = "tile"

    def __str__(self) -> str:
        return f"!amx.tile<{self.rows}x{self.cols}x{self.elem.value}>"


def memref(shape, elem: Elem) -> MemRef:
    return MemRef(elem, tuple(s if isinstance(s, int) else None for s in shape))


# the tiles of the two products
A_BF16, B_BF16, C_F32 = Tile(16, 32, Elem.BF16), Tile(16, 32, Elem.BF16), Tile(16, 16, Elem.F32)
A_I8, B_I8, C_I32 = Tile(16, 64, Elem.I8), Tile(16, 64, Elem.I8), Tile(16, 16, Elem.I32)


def _ix(e: Emitter, idx) -> str:
    return ", ".join(str(e.ix(i)) for i in idx)


# -- buffers ----------------------------------------------------------------------
def to_buffer(e: Emitter, t: Value) -> Value:
    """A read-only tensor operand as a memref (same shape; the kernel must
    not write it)."""
    mt = memref(t.type.shape, t.type.elem)
    return e.op("buf", f"bufferization.to_buffer {t} read_only : {t.type} to {mt}", mt)


def alloc(e: Emitter, shape, elem: Elem, base: str = "mem") -> Value:
    """``memref.alloc`` of ``shape`` (ints, or index values for dynamic dims),
    64-byte aligned (tile rows)."""
    mt = memref(shape, elem)
    dyn = ", ".join(str(s) for s in shape if not isinstance(s, int))
    return e.op(base, f"memref.alloc({dyn}) {{alignment = 64 : i64}} : {mt}", mt)


def dealloc(e: Emitter, m: Value) -> None:
    e(f"memref.dealloc {m} : {m.type}")


def to_tensor(e: Emitter, m: Value) -> Value:
    """The result buffer ``m`` as the kernel's tensor (``restrict writable``:
    bufferization reuses ``m``)."""
    from onnx_mlir_py.passes.optimize.kernel_emit import tensor
    t = tensor(m.type.shape, m.type.elem)
    return e.op("res", f"bufferization.to_tensor {m} restrict writable : {m.type} to {t}", t)


def collapse(e: Emitter, m: Value, groups: str, shape) -> Value:
    """``memref.collapse_shape m groups`` (e.g. ``[[0, 1]]``) to ``shape``."""
    mt = memref(shape, m.type.elem)
    return e.op("co", f"memref.collapse_shape {m} {groups} : {m.type} into {mt}", mt)


# -- tiles -----------------------------------------------------------------------
def zero(e: Emitter, t: Tile) -> Value:
    return e.op("tz", f"amx.tile_zero : {t}", t)


def load(e: Emitter, m: Value, idx, t: Tile) -> Value:
    """The tile ``t`` whose first row starts at ``m[idx]`` (rows: m's row stride)."""
    return e.op("tl", f"amx.tile_load {m}[{_ix(e, idx)}] : {m.type} into {t}", t)


def store(e: Emitter, m: Value, idx, tile: Value) -> None:
    e(f"amx.tile_store {m}[{_ix(e, idx)}], {tile} : {m.type}, {tile.type}")


def mulf(e: Emitter, a: Value, b: Value, c: Value) -> Value:
    """c + a x b (tdpbf16ps)."""
    return e.op("tm", f"amx.tile_mulf {a}, {b}, {c} : {a.type}, {b.type}, {c.type}", c.type)


def muli(e: Emitter, a: Value, b: Value, c: Value, a_unsigned: bool = False,
         b_unsigned: bool = False) -> Value:
    """c + a x b in i32 (tdpb[su][su]d; ``*_unsigned``: u8 operands)."""
    za, zb = " zext" if a_unsigned else "", " zext" if b_unsigned else ""
    return e.op("tm", f"amx.tile_muli {a}{za}, {b}{zb}, {c} : {a.type}, {b.type}, {c.type}",
                c.type)


UNROLL = 8              # K steps between C's stores (see micro_kernel)


def micro_kernel(e: Emitter, a_mem: Value, a_rows: list, b_mem: Value, b_rows: list, k: int,
                 c_mem: Value, row0, col0, *, a_tile: Tile = A_BF16, b_tile: Tile = B_BF16,
                 c_tile: Tile = C_F32, mul=mulf, unroll: int = UNROLL,
                 c_init: Value | None = None) -> None:
    """``c_mem`` tiles [i][j] (rows row0 + 16 i, columns col0 + 16 j) = the sum
    over the K steps of A_i x B_j: ``a_rows[i]`` is A tile i's first row in
    ``a_mem`` (its columns: the K step's elements, ``a_tile.cols`` per step);
    ``b_rows[j]`` is B tile j's first row in ``b_mem`` (``b_tile.rows`` rows
    per step: the k pairs / quads). ``k``: A's elements per row (static, a
    multiple of ``a_tile.cols``). At most 2 + 2 + 4 tiles (8 registers).

    A tile value cannot cross a block boundary (the LLVM lowering of
    ``cf.br`` has no type for it), so no loop carries C: the K steps run
    in unrolled chunks of ``unroll``, C stored into ``c_mem`` after each
    and loaded before the next (the first chunk starts from zero tiles, or
    with ``c_init``, a memref of at least 16 rows, from its tiles at
    ``[0, col0 + 16 j]``: e.g. a per-column offset repeated in 16 rows).
    """
    steps = k // a_tile.cols
    u = min(steps, unroll)
    kw = dict(a_tile=a_tile, b_tile=b_tile, c_tile=c_tile, mul=mul)
    accumulate(e, a_mem, a_rows, b_mem, b_rows, 0, u, c_mem, row0, col0, first=True,
               c_init=c_init, **kw)
    full = steps // u
    if full > 1:
        iv = open_for(e, 1, full)
        accumulate(e, a_mem, a_rows, b_mem, b_rows, e.mul(iv, u), u, c_mem, row0, col0, **kw)
        close(e)
    if steps % u:
        accumulate(e, a_mem, a_rows, b_mem, b_rows, full * u, steps % u, c_mem, row0, col0, **kw)


def accumulate(e: Emitter, a_mem: Value, a_rows: list, b_mem: Value, b_rows: list, k0, n: int,
               c_mem: Value, row0, col0, *, first: bool = False, a_tile: Tile = A_BF16,
               b_tile: Tile = B_BF16, c_tile: Tile = C_F32, mul=mulf,
               c_init: Value | None = None) -> None:
    """One chunk of :func:`micro_kernel` (same operands): the ``n`` K steps
    from step ``k0`` (unrolled) added to the C tiles in ``c_mem`` (loaded
    first; ``first``: from zero tiles instead, or from ``c_init``'s as in
    micro_kernel), stored back. Kernels that order their loops K chunk
    first (A's chunk stays in L1 across column blocks) call it directly."""
    na, nb = len(a_rows), len(b_rows)
    c_at = [(e.add(row0, i * ROWS), e.add(col0, j * c_tile.cols)) for i in range(na)
            for j in range(nb)]
    if first and c_init is not None:
        c = [load(e, c_init, [0, c_at[j][1]], c_tile) for _ in range(na) for j in range(nb)]
    elif first:     # a zero tile each: tdpbf16ps accumulates in place, so one
        # shared zero tile would be copied through the stack for each C tile
        c = [zero(e, c_tile) for _ in range(na * nb)]
    else:
        c = [load(e, c_mem, list(at), c_tile) for at in c_at]
    for s in range(n):
        kk = e.add(k0, s)
        av = [load(e, a_mem, [r, e.mul(kk, a_tile.cols)], a_tile) for r in a_rows]
        bv = [load(e, b_mem, [e.add(r, e.mul(kk, b_tile.rows)), 0], b_tile) for r in b_rows]
        c = [mul(e, av[i], bv[j], c[i * nb + j]) for i in range(na) for j in range(nb)]
    for at, t in zip(c_at, c):
        store(e, c_mem, list(at), t)


def mark_features(module, features: tuple) -> None:
    """Add ``features`` (llc names) to the module's ``om.cpu_features``."""
    import mlir.ir as ir
    from onnx_mlir_py.passes.optimize.matmul_q8 import FEATURES_ATTR
    attrs = module.operation.attributes
    have = [ir.StringAttr(x).value for x in ir.ArrayAttr(attrs[FEATURES_ATTR])] \
        if FEATURES_ATTR in attrs else []
    new = have + [f for f in features if f not in have]
    if new != have:
        attrs[FEATURES_ATTR] = ir.ArrayAttr.get([ir.StringAttr.get(f) for f in new])


# -- loops of the kernels' text ----------------------------------------------------
def open_for(e: Emitter, lo, hi):
    """Open an ``scf.for`` without results; returns its index. :func:`close` closes it."""
    iv = Value(e.fresh("iv"), INDEX)
    e(f"scf.for {iv} = {e.ix(lo)} to {e.ix(hi)} step {e.index(1)} {{")
    e.ind += 1
    return iv


def open_forall(e: Emitter, n, threaded: bool):
    """An ``scf.forall`` over ``n`` (threads) or else an ``scf.for``; returns its index."""
    if not threaded:
        return open_for(e, 0, n)
    iv = Value(e.fresh("iv"), INDEX)
    e(f"scf.forall ({iv}) in ({e.ix(n)}) {{")
    e.ind += 1
    return iv


def close(e: Emitter) -> None:
    """Close the loop :func:`open_for` / :func:`open_forall` opened."""
    e.ind -= 1
    e("}")



# -- column groups: a threaded kernel's forall over row blocks x column groups -------
GROUPS = 2              # column groups of a row block when threaded (the pool's 2 threads)


def groups_for(nt: int, threaded: bool) -> int:
    """How many column groups a kernel of ``nt`` 16-column tiles splits each
    row block into: :data:`GROUPS` when threaded and there is a pair of
    tiles per group, else 1. A few row blocks (a 7x7 map: 49 pixels, 2
    blocks of 32) then still give every thread work. Kernels pass
    ``threaded`` only where A is read in place: a block copied first (an
    im2col) would be copied once per group. (The bf16 kernel does not
    group: with its convs' per-block [32, N] result buffers, grouped
    ResNet-50 bf16 measured 6-9% slower at 1 thread, thread CPU, loaded.)"""
    return GROUPS if threaded and nt // 2 >= GROUPS else 1


def pair_range(e: Emitter, nt: int, g, groups: int) -> tuple:
    """Group ``g``'s share ``[lo, hi)`` of the ``nt // 2`` tile pairs (all of
    them when ``g`` is None)."""
    pairs = nt // 2
    if g is None:
        return 0, pairs
    return e.div(e.mul(g, pairs), groups), e.div(e.mul(e.add(g, 1), pairs), groups)


def in_last_group(e: Emitter, g, groups: int, body) -> None:
    """``body()`` in group ``g`` = the last one (always when ``g`` is None):
    where the odd last column tile is done."""
    if g is None:
        body()
        return
    e(f"scf.if {e.cmpi('eq', g, e.index(groups - 1))} {{")
    e.ind += 1
    body()
    e.ind -= 1
    e("}")


def column_pairs(e: Emitter, nt: int, block, g=None, groups: int = 1) -> None:
    """``block(cols)`` for group ``g``'s pairs of 16-column tiles (``cols`` =
    [j, j + 1]), then for the odd last tile ([nt - 1]) in the last group."""
    lo, hi = pair_range(e, nt, g, groups)
    if nt // 2:
        jj = open_for(e, lo, hi)
        j0 = e.mul(jj, 2)
        block([j0, e.add(j0, 1)])
        close(e)
    if nt % 2:
        in_last_group(e, g, groups, lambda: block([nt - 1]))


def block_forall(e: Emitter, n, threaded: bool, groups: int) -> tuple:
    """Open a forall (threaded, else a for) over ``n`` row blocks x
    ``groups``: (the row block's index, the group's index or None).
    :func:`close` closes it."""
    it = open_forall(e, e.mul(n, groups), threaded)
    if groups == 1:
        return it, None
    return e.iop("divui", it, e.index(groups)), e.rem(it, groups)


__all__ = ["MemRef", "Tile", "memref", "to_buffer", "alloc", "dealloc", "to_tensor", "collapse",
           "zero", "load", "store", "mulf", "muli", "micro_kernel", "accumulate", "mark_features",
           "A_BF16", "B_BF16", "C_F32", "A_I8", "B_I8", "C_I32", "FEATURES_BF16", "FEATURES_INT8",
           "open_for", "open_forall", "close", "GROUPS", "groups_for", "pair_range", "in_last_group",
           "column_pairs", "block_forall"]
