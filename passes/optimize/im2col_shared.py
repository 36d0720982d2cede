"""Pieces shared by the two im2col writers (:mod:`.conv`'s plain
``[B, K, M]`` matrix and :mod:`.im2col_packed`'s column panels), on the typed
emitter (:mod:`.kernel_emit`): the zero fill of the padding regions and the
per-channel loop around the rows of one channel."""
from __future__ import annotations

from onnx_mlir_py.passes.optimize.kernel_emit import Emitter, Value


def zero_regions(e: Emitter, init: Value, regions, pad: Value) -> Value:
    """``init`` with each ``(offsets, sizes)`` region filled with ``pad``
    (an f32 zero); empty regions are skipped."""
    for off, size in regions:
        if 0 in size:
            continue
        part = e.extract_slice(init, off, size, base="zs")
        init = e.insert_slice(e.fill(pad, part, base="zf"), init, off, size, base="zi")
    return init


def channel_loop(e: Emitter, par: bool, channels: int, init: Value):
    """Open the loop over the input channels (an ``scf.forall`` when
    ``par``, else an ``scf.for``) carrying ``init``; returns (channel, the
    carried tensor, the loop's result). Close it with :func:`end_channel_loop`."""
    if par:
        return e.forall(channels, init, base="colt")
    ch, (carried,), (res,) = e.loop(0, channels, 1, [init], base="colt")
    return ch, carried, res


def end_channel_loop(e: Emitter, par: bool, value: Value, carried: Value, row0) -> None:
    """Close :func:`channel_loop`: ``value`` (the channel's rows) goes into
    ``carried`` at ``[0, row0, 0]``."""
    sizes = list(value.type.shape)
    if par:
        e.end_forall(value, carried, [0, row0, 0], sizes)
    else:
        e.end([e.insert_slice(value, carried, [0, row0, 0], sizes, base="ci")])
