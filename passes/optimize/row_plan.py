"""What the row kernel of window ops computes (:class:`Conv`, the key of its
function) and how its loops are cut: output rows into vector chunks
(:func:`row_plan`), channels into thread blocks (:func:`channel_blocks`).
The kernel is written by :mod:`.row_kernel` for depthwise convs
(:mod:`.depthwise`) and pools (:mod:`.pool`).
"""
from __future__ import annotations

from dataclasses import dataclass

UNROLL = 4           # vectors per output chunk (accumulators in registers)
THREAD_TASKS = 16    # scf.forall channel blocks (about: a divisor of C is used)


@dataclass(frozen=True)
class Conv:
    """Everything the kernel text depends on (the key of its function)."""
    xs: tuple            # the kernel's input [N, C, H, W] (unpadded when pad is fused)
    pad: tuple           # fused zero padding (top, left, bottom, right), or ()
    kh: int
    kw: int
    os: tuple            # output [N, C, OH, OW]
    s: tuple
    d: tuple
    init: str            # "scalar" | "bias" | "out"
    epilogue: tuple = ()  # ((op name, result, operands, attr text), ...) on %e_in / %e_cap<k>
    epi_result: str = ""
    n_cap: int = 0
    combine: str = "fma"  # "fma": acc += x * w (conv); "max" / "add": pools (w unread)
    pad_value: float = 0.0  # the fused pad's value (the scratch border)
    prologue: tuple = ()  # elementwise ops applied to the input as it is copied
    pro_result: str = ""  # into the scratch plane (fused pad only), on %e_in / %e_cap<k>
    n_pcap: int = 0
    # 8-bit input and output (depthwise_q8.Quant: hashed by identity): the plane copy
    # converts the input, the epilogue writes the output; replaces prologue / epilogue
    quant: object = None


def lane_sizes(ow: int, vw: int) -> list[int]:
    sizes = [vw] if ow >= vw else []
    if ow % vw:
        sizes.append(ow % vw)
    return sizes


def bases(cv: Conv) -> dict[int, list[int]]:
    """Strided read groups: base column offset -> the phases of its taps."""
    s1, d1 = cv.s[1], cv.d[1]
    out: dict[int, list[int]] = {}
    for j in range(cv.kw):
        off = j * d1
        out.setdefault(off - off % s1, []).append(off % s1)
    return out


def wide(cv: Conv) -> bool:
    """Whole vectors only (the scratch has room for them): a fused pad, and
    accumulators that do not start from the output tensor."""
    return bool(cv.pad) and cv.init != "out"


def split(cv: Conv) -> bool:
    """Stride-2 columns read from a scratch plane whose rows are split into
    their even and odd padded columns (:mod:`.row_plane`): every tap reads
    contiguous columns of one half, no shuffle per tap (a 3x3 window read
    32 columns and kept every other lane 3 times a row). Whole vectors
    (:func:`wide`), dilation 1, rows of more than 8 output columns
    (a 7-wide row on 8 lanes keeps the in-lane vshufps reads of
    :mod:`.row_kernel`: split, 576x14x14 3x3 was 1.06x slower). Measured on
    Zen 4 (1 thread, thread CPU time, Clip -> depthwise -> Clip, min):
    3x3 96x112x112 0.252 -> 0.221 ms, 144x56x56 0.095 -> 0.085, 192x28x28
    0.040 -> 0.037, 16x112x112 0.054 -> 0.049; 5x5 72x56x56 0.096 -> 0.074,
    96x28x28 0.036 -> 0.033. 8-bit convs (``cv.quant``, :mod:`.depthwise_q8`)
    too: the split copy dequantizes each vector it reads, as the plain one."""
    return wide(cv) and cv.s[1] == 2 and cv.d[1] == 1 and cv.os[3] > 8


def half_width(cv: Conv, vw: int) -> int:
    """Columns of each half of a :func:`split` scratch row: the padded
    row's, the copies' whole 2*vw-column steps (from the left pad's half
    index) and the reads of the last whole output vector's taps."""
    w, ow, pl = cv.xs[3], cv.os[3], cv.pad[1]
    wp = w + pl + cv.pad[3]
    steps = -(-w // (2 * vw))
    last = -(-ow // vw) * vw
    return max(-(-wp // 2), (pl + 1) // 2 + steps * vw, last + (cv.kw - 1) // 2)


def geometry(cv: Conv, vw: int):
    """(padded H, width that bounds the reads: the scratch's when the pad is
    fused; a :func:`split` row: both halves)."""
    n, c, h, w = cv.xs
    if not cv.pad:
        return h, w
    pt, pl, pb, pr = cv.pad
    hp, wp = h + pt + pb, w + pl + pr
    if split(cv):
        return hp, 2 * half_width(cv, vw)
    ow, s1 = cv.os[3], cv.s[1]
    top = max(bases(cv))
    wsc = max(wp, pl + -(-w // vw) * vw)             # whole-vector row copies
    last = -(-ow // vw) * vw if wide(cv) else ow     # output columns computed
    wsc = max(wsc, last * s1 + top if s1 > 1 else last + top)
    return hp, wsc


def row_plan(cv: Conv, vw: int) -> tuple[int, list[tuple[int, int, int, int]]]:
    """How an output row is covered: ``(m, chunks)``: a loop of ``m`` chunks
    of UNROLL whole vectors from column 0, then static chunks ``(first
    column, lanes, vectors, lanes stored by the last vector)``. Stores never
    pass the row's end; a full-length strided read in the loop never passes
    the readable width (the scratch's when the pad is fused)."""
    ow, s1 = cv.os[3], cv.s[1]
    step = UNROLL * vw
    _hp, limit = geometry(cv, vw)
    m = ow // step
    if s1 > 1 and not split(cv):      # split rows: reads within the half (half_width)
        top = max(bases(cv))
        while m > 0 and (m * step - vw) * s1 + top + s1 * vw > limit:
            m -= 1
    pos, chunks = m * step, []
    if wide(cv):        # whole vectors, the last one stores what is left
        nv = -(-(ow - pos) // vw)
        while nv > 0:
            cnt = min(UNROLL, nv)
            end = pos + cnt * vw
            chunks.append((pos, vw, cnt, vw - (end - ow) if end > ow else vw))
            pos, nv = end, nv - cnt
    while pos < ow:     # whole vectors, then one shorter vector
        lanes = vw if ow - pos >= vw else ow - pos
        cnt = min(UNROLL, (ow - pos) // lanes)
        chunks.append((pos, lanes, cnt, lanes))
        pos += lanes * cnt
    return m, chunks


def channel_blocks(c: int, threads: bool) -> int:
    """How many scf.forall blocks the C channels are split into (1: no forall)."""
    if not threads:
        return 1
    want = max(1, -(-c // THREAD_TASKS))
    cb = min(b for b in range(want, c + 1) if c % b == 0)
    return c // cb


def macs(cv: Conv) -> int:
    """Multiply-adds of the window op (the threading threshold's measure)."""
    n, c, oh, ow = cv.os
    return n * c * oh * ow * cv.kh * cv.kw
