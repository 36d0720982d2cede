"""The machine's peak f32 GFLOPS per core, from its ISA and clock:

    peak = clock (GHz) x f32 lanes of the widest vector FMA x 2 (an FMA is
           two FLOPs) x FMA pipes per core

- lanes: 16 with ``avx512f`` in /proc/cpuinfo's flags, 8 with ``avx2`` +
  ``fma``, else 4 (SSE: a multiply and an add, counted as one FMA pipe pair);
- FMA pipes: 2 (two vector FMA units: Intel since Haswell, AMD since Zen 2),
  except the cores whose AVX-512 runs on narrower units, known by LLVM's name
  for the host CPU (``llc --version``: "Host CPU"): Zen 4 (``znver4``) splits
  a 512-bit FMA over its two 256-bit units (1 pipe of 16 lanes), Ice/Tiger/
  Rocket Lake client cores have one 512-bit FMA pipe, Zen 1 two 128-bit ones;
- clock: the largest of cpufreq's ``cpuinfo_max_freq`` (when the kernel
  exposes it) and /proc/cpuinfo's "cpu MHz". Under a hypervisor only the
  latter exists and it is the nominal (TSC) clock: a core that boosts above
  it can exceed this "peak".
"""
from __future__ import annotations

from functools import lru_cache

# LLVM host CPU name -> (f32 lanes per FMA pipe at the widest ISA, pipes)
_NARROW = {"znver4": (16, 1), "icelake-client": (16, 1), "tigerlake": (16, 1),
           "rocketlake": (16, 1), "znver1": (4, 2)}


def _cpuinfo() -> tuple[frozenset[str], float | None]:
    flags, mhz = frozenset(), None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags") and not flags:
                    flags = frozenset(line.split(":", 1)[1].split())
                elif line.startswith("cpu MHz") and mhz is None:
                    mhz = float(line.split(":", 1)[1])
    except (OSError, ValueError):
        pass
    try:
        with open("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq") as f:
            mhz = max(mhz or 0.0, int(f.read()) / 1e3)
    except (OSError, ValueError):
        pass
    return flags, mhz


def _host_cpu() -> str | None:
    try:
        from onnx_mlir_py.codegen.tools import run, tool
        out = run([tool("llc"), "--version"], what="llc --version").decode()
    except Exception:  # noqa: BLE001 - the name only refines the pipe count
        return None
    for line in out.splitlines():
        if "Host CPU:" in line:
            return line.split(":", 1)[1].strip()
    return None


@lru_cache(maxsize=1)
def peak() -> dict:
    """{"gflops_per_core", "ghz", "lanes", "pipes", "isa", "cpu", "how"}."""
    flags, mhz = _cpuinfo()
    cpu = _host_cpu()
    if "avx512f" in flags:
        isa, lanes = "avx512f", 16
    elif "avx2" in flags and "fma" in flags:
        isa, lanes = "avx2+fma", 8
    else:
        isa, lanes = "sse", 4
    pipes = 2
    if cpu in _NARROW:
        lanes, pipes = min(lanes, _NARROW[cpu][0]), _NARROW[cpu][1]
    ghz = (mhz or 0.0) / 1e3
    gf = ghz * lanes * 2 * pipes
    return {"gflops_per_core": gf, "ghz": ghz, "lanes": lanes, "pipes": pipes, "isa": isa,
            "cpu": cpu, "how": f"{ghz:.2f} GHz x {lanes} f32 lanes ({isa}) x 2 (FMA) x "
                               f"{pipes} FMA pipes ({cpu or 'unknown CPU'}) = {gf:.1f} GFLOPS/core"}
