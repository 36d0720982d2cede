"""The x86-64 instruction set a model library is compiled for, and what it
requires of the CPU it is loaded on.

Choices (``compile(march=...)``, ``--march``): the ISA levels
``x86-64-v2`` (SSE4.2/POPCNT), ``x86-64-v3`` (AVX2 + FMA, the portable
choice: any x86-64 CPU since ~2015), ``x86-64-v4`` (AVX-512 F/BW/CD/DQ/VL)
and ``native`` (every feature of the build machine, LLVM's ``-mcpu=native``).
Two or more levels joined by ``+`` (``x86-64-v3+x86-64-v4``) build one
library with a variant of the model code per level, chosen once per process
by the CPU (:func:`fat_levels`, ``codegen/fat.py``).
Without a choice, ``-O3`` takes the highest level the build machine has
(:func:`host_level`) and ``-O0..-O2`` ``x86-64-v2``.

The library records the level and its CPU features (the names of GCC's
``__builtin_cpu_supports``: CPUID and the OS's XSAVE state) and checks them
when it is loaded from Python and on each entry call from C
(``runtime/c/om_cpu.c``, the record written by ``codegen/link.py``): on a
CPU without them it refuses with an error naming the missing features
instead of dying of SIGILL. For ``native`` the list is the level's features
plus the AVX-512 extensions and the like that the build machine has (LLVM
may use any of them). The -O3 kernels take their vector width and register
count from the level (``onnx_mlir_py/target.py``).
"""
from __future__ import annotations

import platform
from functools import lru_cache

_V2 = ("popcnt", "sse3", "ssse3", "sse4.1", "sse4.2")
_V3 = _V2 + ("avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave")
_V4 = _V3 + ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl")
LEVELS: dict[str, tuple[str, ...]] = {"x86-64-v2": _V2, "x86-64-v3": _V3, "x86-64-v4": _V4}
CHOICES = ("native",) + tuple(LEVELS)
# what -mcpu=native may use beyond x86-64-v4 (only required when the host has it)
_EXTRAS = ("avx512vnni", "avx512bf16", "avx512fp16", "avx512vbmi", "avx512vbmi2",
           "avx512bitalg", "avx512vpopcntdq", "avx512ifma", "avxvnni", "gfni", "vaes",
           "vpclmulqdq")
# GCC's names -> /proc/cpuinfo's where they differ
_CPUINFO = {"sse3": "pni", "sse4.1": "sse4_1", "sse4.2": "sse4_2", "bmi": "bmi1",
            "lzcnt": "abm", "avx512vnni": "avx512_vnni", "avx512bf16": "avx512_bf16",
            "avx512fp16": "avx512_fp16", "avx512vbmi2": "avx512_vbmi2",
            "avx512bitalg": "avx512_bitalg", "avx512vpopcntdq": "avx512_vpopcntdq",
            "avxvnni": "avx_vnni", "amx-tile": "amx_tile", "amx-int8": "amx_int8",
            "amx-bf16": "amx_bf16"}
# a test-only override, also read by om_cpu.c: features to treat as absent
HIDE_ENV = "ONNX_MLIR_PY_TEST_HIDE_CPU_FEATURES"
# a library with ISA variants runs this one (a level it has) instead of the
# best one the CPU has (read by om_cpu.c)
FORCE_ENV = "ONNX_MLIR_PY_FORCE_ISA"


def is_x86_host() -> bool:
    return platform.machine().lower() in ("x86_64", "amd64")


@lru_cache(maxsize=1)
def host_flags() -> frozenset[str]:
    """The build machine's /proc/cpuinfo flags (empty when unreadable)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def host_has(feature: str) -> bool:
    return _CPUINFO.get(feature, feature) in host_flags()


def host_level() -> str | None:
    """The highest ISA level the build machine has (None off x86-64)."""
    if not is_x86_host():
        return None
    best = None
    for name, feats in LEVELS.items():
        if all(host_has(f) for f in feats):
            best = name
    return best or "x86-64-v2"


# llc -mcpu names by the vector ISA they imply (prefixes)
_V4_CPUS = ("skylake-avx512", "cascadelake", "cooperlake", "icelake", "tigerlake",
            "sapphirerapids", "rocketlake", "alderlake-avx512", "znver4", "znver5",
            "graniterapids", "emeraldrapids")
_V3_CPUS = ("haswell", "broadwell", "skylake", "znver1", "znver2", "znver3", "alderlake",
            "raptorlake", "meteorlake", "arrowlake", "lunarlake", "cannonlake")


def level_of_cpu(mcpu: str | None) -> str:
    """The ISA level an ``llc -mcpu`` name implies (by its vector ISA);
    ``native``: the build machine's; None (codegen's default): x86-64-v2."""
    if mcpu is None:
        return "x86-64-v2"
    if mcpu == "native":
        return host_level() or "x86-64-v2"
    name = mcpu.lower()
    if name in LEVELS:
        return name
    if any(name.startswith(c) for c in _V4_CPUS):
        return "x86-64-v4"
    if any(name.startswith(c) for c in _V3_CPUS):
        return "x86-64-v3"
    return "x86-64-v2"


def required_features(mcpu: str | None, march: str | None) -> tuple[str, ...]:
    """What a library compiled with ``-mcpu=mcpu`` (``march`` = its triple's
    arch, None = the host's) needs of the CPU: () off x86-64."""
    if mcpu is None or (march is not None and not march.replace("_", "-").startswith("x86-64")):
        return ()
    if march is None and not is_x86_host():
        return ()
    if mcpu == "native":
        return LEVELS[level_of_cpu(mcpu)] + tuple(f for f in _EXTRAS if host_has(f))
    return LEVELS[level_of_cpu(mcpu)]


def fat_levels(march: str | None) -> tuple[str, ...] | None:
    """The ISA levels of a ``march`` that names several (``x86-64-v3+x86-64-v4``),
    lowest first; None for any other ``march``. Raises ValueError for a
    ``+`` list that is not two or more distinct levels of :data:`LEVELS`."""
    if not isinstance(march, str) or "+" not in march:
        return None
    parts = march.split("+")
    bad = [p for p in parts if p not in LEVELS]
    if bad or len(set(parts)) != len(parts):
        raise ValueError(f"march {march!r}: a library with ISA variants takes two or more "
                         f"distinct levels of {', '.join(LEVELS)} joined by '+' "
                         f"(e.g. x86-64-v3+x86-64-v4)"
                         + (f"; {', '.join(repr(b) for b in bad)} is not one" if bad else ""))
    order = list(LEVELS)
    return tuple(sorted(parts, key=order.index))
