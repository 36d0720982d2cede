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


def geometry(cv: Conv, vw: int):
    """(padded H, width that bounds the reads: the scratch's when the pad is fused)."""
    n, c, h, w = cv.xs
    if not cv.pad:
        return h, w
    pt, pl, pb, pr = cv.pad
    hp, wp = h + pt + pb, w + pl + pr
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
    if s1 > 1:
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
