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

from onnx_mlir_py.passes.optimize.kernel_emit import tensor_type
from onnx_mlir_py.passes.optimize.matmul_attrs import PACKED_ATTR


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


# -- text of the ops, shared with matmul_dyn_text (a dim: an int, or None
#    or the SSA name of an index value for a dynamic one) ----------------------
def bracket(xs) -> str:
    return "[" + ", ".join(str(x) for x in xs) + "]"


def slice_text(res: str, op: str, src: str, offs, sizes, src_shape, dst_shape,
               dest: str = "") -> str:
    """``res = tensor.extract_slice`` (op "extract") or ``insert_slice``
    (into ``dest``)."""
    where = f"{bracket(offs)} {bracket(sizes)} {bracket([1] * len(sizes))}"
    types = f"{tensor_type(src_shape)} {'to' if op == 'extract' else 'into'} {tensor_type(dst_shape)}"
    if op == "extract":
        return f"    {res} = tensor.extract_slice {src}{where} : {types}"
    return f"    {res} = tensor.insert_slice {src} into {dest}{where} : {types}"


def pad_text(res: str, src: str, src_shape, highs, dst_shape) -> str:
    """``res = tensor.pad src`` with zeros (``%zero``) at the end of each dim."""
    idx = ", ".join(f"%{res[1:]}_i{k}: index" for k in range(len(highs)))
    return (f"    {res} = tensor.pad {src} low{bracket([0] * len(highs))} high{bracket(highs)} {{\n"
            f"    ^bb0({idx}):\n      tensor.yield %zero : f32\n"
            f"    }} : {tensor_type(src_shape)} to {tensor_type(dst_shape)}")


def reshape_text(res: str, op: str, src: str, rt: str, src_shape, dst_shape) -> str:
    """``res = tensor.expand_shape`` (op "expand") or ``collapse_shape``."""
    if op == "expand":
        return (f"    {res} = tensor.expand_shape {src} {rt} output_shape {bracket(dst_shape)} "
                f": {tensor_type(src_shape)} into {tensor_type(dst_shape)}")
    return f"    {res} = tensor.collapse_shape {src} {rt} : {tensor_type(src_shape)} into {tensor_type(dst_shape)}"


def _pad(name: str, src: str, shape, padded) -> tuple[str, str]:
    if list(shape) == list(padded):
        return "", src
    highs = [p - s for s, p in zip(shape, padded)]
    return pad_text(f"%{name}", src, shape, highs, padded) + "\n", f"%{name}"


def contraction(res: str, a4: str, bp: str, c4: str, a4s, bps, c4s, batched: bool,
                pack_b: bool, n_outer: bool, contract: bool = False, a_cols: bool = False) -> str:
    """The packed contraction ``res = c4 + a4 . bp`` (a generic tagged
    PACKED_ATTR) on the block views: a4 [batch,] [MO, mb, KO, kb], bp
    [batch,] [NO, KO, kb, nb] (packed B) or [KO, kb, NO, nb] (B viewed), c4
    [batch,] [MO, mb, NO, nb]; shapes a4s/bps/c4s (None: dynamic). Loops:
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
    return (f"    {res} = linalg.generic {{indexing_maps = [affine_map<{maps[0]}>, "
            f"affine_map<{maps[1]}>, affine_map<{maps[2]}>], iterator_types = [{iters}], "
            f"{PACKED_ATTR}}}\n"
            f"        ins({a4}, {bp} : {tensor_type(a4s)}, {tensor_type(bps)}) outs({c4} : {tensor_type(c4s)}) {{\n"
            f"    ^bb0(%x: f32, %y: f32, %acc: f32):\n      %p = arith.mulf %x, %y{fm} : f32\n"
            f"      %s = arith.addf %acc, %p{fm} : f32\n      linalg.yield %s : f32\n"
            f"    }} -> {tensor_type(c4s)}")


def kernel_function(name: str, batch: int | None, m: int, k: int, n: int,
                    mb: int, nb: int, kb: int, pack_b: bool = True,
                    n_outer: bool | None = None, a_cols: bool = False) -> str:
    """A private ``func.func @name(A, B, C) -> C`` computing C + A @ B.
    ``n_outer``: the N-block loop outside the M-block loop (default: when B
    is not packed). ``a_cols`` (no batch): the first argument is Aᵀ,
    ``[K, M]`` (a convolution's im2col matrix, whose pixels are the rows of
    A), read in place in blocks ``[K/kb, kb, M/mb, mb]``: the kb x mb block
    of one k step is kb rows of mb contiguous values."""
    if n_outer is None:
        n_outer = not pack_b
    bt = [] if batch is None else [batch]
    mp, kp, np_ = _cdiv(m, mb) * mb, _cdiv(k, kb) * kb, _cdiv(n, nb) * nb
    mo, ko, no = mp // mb, kp // kb, np_ // nb
    lines = []
    assert not (a_cols and bt), "a_cols: no batch"
    ash, apad = ([k, m], [kp, mp]) if a_cols else (bt + [m, k], bt + [mp, kp])
    pa, a = _pad("ap", "%a", ash, apad)
    pc, c = _pad("cp", "%c", bt + [m, n], bt + [mp, np_])
    o = len(bt)
    reass = ([[0]] if bt else []) + [[o, o + 1], [o + 2, o + 3]]
    rtext = bracket(bracket(r) for r in reass)
    a4 = [ko, kb, mo, mb] if a_cols else bt + [mo, mb, ko, kb]
    c4 = bt + [mo, mb, no, nb]
    bp = bt + [no, ko, kb, nb] if pack_b else bt + [ko, kb, no, nb]
    perm = "[0, 2, 1]" if bt else "[1, 0]"
    dims = "[1, 2]" if bt else "[0, 1]"
    pad_b = " padding_value(%zero : f32)" if (kp != k or np_ != n) else ""
    lines.append(f"  func.func private @{name}(%a: {tensor_type(ash)}, %b: {tensor_type(bt + [k, n])}, "
                 f"%c: {tensor_type(bt + [m, n])}) -> {tensor_type(bt + [m, n])} {{")
    lines.append("    %zero = arith.constant 0.0 : f32")
    if pack_b:
        lines.append(pa + pc + f"    %bpe = tensor.empty() : {tensor_type(bp)}")
        lines.append(f"    %bp = linalg.pack %b{pad_b} outer_dims_perm = {perm} inner_dims_pos = {dims} "
                     f"inner_tiles = [{kb}, {nb}] into %bpe : {tensor_type(bt + [k, n])} -> {tensor_type(bp)}")
    else:
        pb, b = _pad("bpad", "%b", bt + [k, n], bt + [kp, np_])
        lines.append(pa + pc + pb)
        lines.append(reshape_text("%bp", "expand", b, rtext, bt + [kp, np_], bp))
    lines.append(reshape_text("%a4", "expand", a, rtext, apad, a4))
    lines.append(reshape_text("%c4", "expand", c, rtext, bt + [mp, np_], c4))
    lines.append(contraction("%r4", "%a4", "%bp", "%c4", a4, bp, c4, bool(bt), pack_b, n_outer,
                             a_cols=a_cols))
    lines.append(reshape_text("%r", "collapse", "%r4", rtext, c4, bt + [mp, np_]))
    res = "%r"
    if (mp, np_) != (m, n):
        full = bt + [m, n]
        lines.append(slice_text("%rs", "extract", "%r", [0] * len(full), full,
                                bt + [mp, np_], full))
        res = "%rs"
    lines.append(f"    return {res} : {tensor_type(bt + [m, n])}\n  }}")
    return "\n".join(lines)
