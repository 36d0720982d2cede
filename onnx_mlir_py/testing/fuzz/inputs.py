"""Run-time inputs of a case: one *run* per (binding, kind).

Every case runs at its two run-time shapes (bindings 0 and 1) with ordinary
values, once more at binding 0 with *edge* values mixed in (0, -0, +-inf,
NaN, huge magnitudes; for integers 0, -1 and the type's extremes), and at
the "empty" binding (a dynamic dim set to 0) when the generator kept it.
Index inputs (``Case.index_ranges``) always get in-range values: the fuzzer
tests arithmetic, not the bounds checks (those have their own corpus).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from onnx import helper

HUGE = {np.float32: 1e30, np.float64: 1e300, np.float16: 3e4}


@dataclass
class Run:
    binding: int
    kind: str                  # "normal" | "edge"
    feeds: dict                # input name -> array

    @property
    def label(self) -> str:
        return f"b{self.binding}-{self.kind}"


def _normal(rng, dt: np.dtype, shape) -> np.ndarray:
    if dt == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if dt.kind == "f":
        a = rng.uniform(-3, 3, shape)
        a[rng.random(shape) < 0.05] = 0
        return a.astype(dt)
    lo = 0 if dt.kind == "u" else -5
    return rng.integers(lo, 6, shape).astype(dt)


def _edge(rng, dt: np.dtype, shape) -> np.ndarray:
    a = _normal(rng, dt, shape)
    if dt == np.bool_ or a.size == 0:
        return a
    if dt.kind == "f":
        h = HUGE[dt.type]
        special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, h, -h, 1e-30], dtype=np.float64)
    else:
        info = np.iinfo(dt)
        # extremes for the 8-bit types only: wider overflow (in sums, products)
        # is where onnxruntime's kernels disagree with each other (saturate,
        # accumulate in double), so it is no oracle there
        big = [info.max, info.min] if info.bits == 8 else [1000, -1000 if info.min < 0 else 7]
        special = np.array([0, -1 if info.min < 0 else 1] + big, dtype=np.int64)
    mask = rng.random(shape) < 0.25
    picks = special[rng.integers(0, len(special), shape)]
    with np.errstate(over="ignore", invalid="ignore"):
        a[mask] = picks[mask].astype(dt)
    return a


def _tiny(rng, dt: np.dtype, shape) -> np.ndarray:
    """Ordinary values with a quarter replaced by denormals (f32: below
    2^-126), +-0 and the smallest normals: the bf16 kernels flush denormals."""
    a = _normal(rng, dt, shape)
    if dt.kind != "f" or a.size == 0:
        return a
    tiny = float(np.finfo(dt).smallest_normal)
    special = np.array([tiny / 3, -tiny / 1000, tiny / 2 ** 20, 0.0, -0.0, tiny, -tiny * 1.5])
    mask = rng.random(shape) < 0.25
    a[mask] = special[rng.integers(0, len(special), shape)][mask].astype(dt)
    return a


_VALUES = {"normal": _normal, "edge": _edge, "tiny": _tiny}


def make_runs(case, tiny: bool = False) -> list[Run]:
    """The runs of ``case`` (a :class:`..generator.Case`), deterministic in
    its seed; ``tiny``: one more at binding 1 with denormals (``_tiny``)."""
    kinds = [(0, "normal"), (1, "normal"), (0, "edge")]
    if case.bindings > 2:
        kinds.append((2, "normal"))
    if tiny:
        kinds.append((1, "tiny"))
    runs = []
    for k, (b, kind) in enumerate(kinds):
        rng = np.random.default_rng([case.seed, case.index, 7, k])
        feeds = {}
        for vi in case.model.graph.input:
            dt = np.dtype(helper.tensor_dtype_to_np_dtype(vi.type.tensor_type.elem_type))
            shape = case.input_dims[vi.name][b]
            if vi.name in case.index_ranges:
                lo, hi = case.index_ranges[vi.name][b]
                feeds[vi.name] = rng.integers(lo, max(lo, hi) + 1, shape).astype(dt)
            else:
                feeds[vi.name] = np.asarray(_VALUES[kind](rng, dt, shape))
        runs.append(Run(b, kind, feeds))
    return runs
