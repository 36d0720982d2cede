"""Compare one computed array with the reference's.

Floats match where ``|ours - ref| <= atol + rtol * |ref|`` (``numpy.isclose``;
NaN matches NaN, an infinity the same infinity); integers, bools and strings
must be equal. ``max_rel`` is ``|ours - ref| / |ref|``; where the reference
is 0 it is 0, or infinite if ``|ours| > atol`` there.

:func:`error_stats` measures, without a tolerance, how far a lower-precision
build (``verify --precision bf16``) is from the f32 one.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Diff:
    ok: bool
    max_abs: float = 0.0
    max_rel: float = 0.0
    bad: int = 0               # elements outside the tolerance
    size: int = 0
    why: str = ""              # a shape or type difference, when there is one

    def describe(self) -> str:
        if self.why:
            return self.why
        errs = f"max abs err {self.max_abs:.3g}, max rel err {self.max_rel:.3g}"
        return errs if self.ok else f"{errs} ({self.bad} of {self.size} elements differ)"


def _maps(a) -> bool:
    """A ZipMap output: a list of {label: score} dicts."""
    return isinstance(a, list) and bool(a) and all(isinstance(d, dict) for d in a)


def type_str(a) -> str:
    if _maps(a):
        return f"seq(map)[{len(a)}]"
    a = np.asarray(a)
    return f"{a.dtype}[{', '.join(map(str, a.shape))}]"


def compare(ours, ref, rtol: float, atol: float) -> Diff:
    if _maps(ours) or _maps(ref):     # ZipMap: same labels per row, scores as a matrix
        if not (_maps(ours) and _maps(ref)) or len(ours) != len(ref) or \
                any(list(a) != list(b) for a, b in zip(ours, ref)):
            return Diff(False, why=f"{type_str(ours)} with other labels or rows than the "
                                   f"reference's {type_str(ref)}")
        ours = np.array([list(d.values()) for d in ours], np.float32)
        ref = np.array([list(d.values()) for d in ref], np.float32)
    ours, ref = np.asarray(ours), np.asarray(ref)
    if ours.shape != ref.shape:
        return Diff(False, why=f"shape {type_str(ours)}, the reference has {type_str(ref)}")
    if ours.dtype != ref.dtype:
        return Diff(False, why=f"type {type_str(ours)}, the reference has {type_str(ref)}")
    if ours.size == 0:
        return Diff(True)
    if ours.dtype.kind not in "fiub":                # strings, objects
        bad = int(np.sum(ours != ref))
        return Diff(bad == 0, bad=bad, size=ours.size)
    o, r = ours.astype(np.float64), ref.astype(np.float64)
    if ours.dtype.kind == "f":
        good = np.isclose(o, r, rtol=rtol, atol=atol, equal_nan=True)
    else:
        good = ours == ref
    same = (o == r) | (np.isnan(o) & np.isnan(r))
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.where(same, 0.0, np.abs(o - r))
    err = np.where(np.isnan(err), np.inf, err)       # NaN against a number
    nz = r != 0
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(nz, err / np.abs(np.where(nz, r, 1.0)), np.where(err > atol, np.inf, 0.0))
    rel = np.where(np.isnan(rel), 0.0, rel)           # inf against inf
    bad = int(ours.size - np.count_nonzero(good))
    return Diff(bad == 0, float(err.max()), float(rel.max()), bad, int(ours.size))


@dataclass(frozen=True)
class ErrorStats:
    """The error of a lower-precision result against the f32 one:
    ``max_abs`` = max |ours - ref|, ``rel_max`` = max_abs / max |ref|,
    ``rel_l2`` = ||ours - ref|| / ||ref||; ``why`` when they cannot be
    measured (another shape or type, non-finite values)."""
    max_abs: float = 0.0
    rel_max: float = 0.0
    rel_l2: float = 0.0
    why: str = ""


def error_stats(ours, ref) -> ErrorStats:
    ours, ref = np.asarray(ours), np.asarray(ref)
    if ours.shape != ref.shape or ours.dtype != ref.dtype:
        return ErrorStats(why=f"{type_str(ours)} against {type_str(ref)}")
    if ours.size == 0:
        return ErrorStats()
    if ours.dtype.kind != "f":                   # integers, bools, strings: exact
        bad = int(np.sum(ours != ref))
        return ErrorStats(why="equal" if bad == 0 else f"{bad} of {ours.size} elements differ")
    o, r = ours.astype(np.float64), ref.astype(np.float64)
    if not (np.isfinite(o).all() and np.isfinite(r).all()):
        same = bool(np.array_equal(o, r, equal_nan=True))
        return ErrorStats(why="equal (with non-finite values)" if same else
                          "non-finite values that differ")
    d = np.abs(o - r)
    scale, norm = float(np.abs(r).max()), float(np.linalg.norm(r))
    max_abs = float(d.max())
    return ErrorStats(max_abs, max_abs / scale if scale else (0.0 if max_abs == 0 else np.inf),
                      float(np.linalg.norm(d)) / norm if norm else
                      (0.0 if max_abs == 0 else np.inf))
