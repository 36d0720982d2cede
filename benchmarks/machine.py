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
- clock: measured, a chain of dependent register-register integer adds (one
  cycle each; adds of an immediate are not used: Golden Cove and later Intel
  cores fold them at rename, which read as 13 GHz on a Xeon) in a
  small C program (best of 300 runs of 4e6 adds, about 1 ms: a preempted run does not
  count); /proc/cpuinfo's "cpu MHz" only when no C compiler is found. Under a
  hypervisor (this machine) "cpu MHz" is the nominal TSC clock, 2.6 GHz,
  while the core runs at 4.3-4.5 as measured (the mlp ran at 247 GFLOPS,
  above a 2.6 GHz peak of 166), so it would understate the peak.
"""
from __future__ import annotations

import os
import subprocess
import tempfile
from functools import lru_cache

_CLOCK_C = r"""
#include <stdio.h>
#include <time.h>
int main(void) {
  unsigned long x = 0, n = 1000000UL;
  volatile unsigned long one_v = 1;
  unsigned long one = one_v;
  double best = 1e30;
  for (int rep = 0; rep < 300; ++rep) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (unsigned long i = 0; i < n; ++i)
      __asm__ volatile("add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
                       : "+r"(x) : "r"(one));
    clock_gettime(CLOCK_MONOTONIC, &b);
    double t = (b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec);
    if (t < best) best = t;
  }
  printf("%f\n", 4.0 * n / best / 1e9);
  return x == 0;
}
"""


def measured_ghz() -> float | None:
    """The core clock from a dependent add chain (x86-64 only), or None."""
    from onnx_mlir_py.isa import is_x86_host
    if not is_x86_host():
        return None
    with tempfile.TemporaryDirectory(prefix="clock_") as d:
        src, exe = os.path.join(d, "clock.c"), os.path.join(d, "clock")
        with open(src, "w") as f:
            f.write(_CLOCK_C)
        try:
            subprocess.run([os.environ.get("CC", "gcc"), "-O1", "-o", exe, src], check=True,
                           capture_output=True)
            out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
            return float(out)
        except (OSError, subprocess.CalledProcessError, ValueError):
            return None

# LLVM host CPU name -> (f32 lanes per FMA pipe at the widest ISA, pipes)
_NARROW = {"znver4": (16, 1), "icelake-client": (16, 1), "tigerlake": (16, 1),
           "rocketlake": (16, 1), "znver1": (4, 2)}
_CLIENT_AVX512 = ("icelake-client", "tigerlake", "rocketlake")


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
    if cpu in _CLIENT_AVX512 and "amx_tile" in flags:
        # a hypervisor's CPU model number can name a client core (KVM here:
        # model 167, "rocketlake") for a Xeon with AMX (Sapphire Rapids or
        # later: two 512-bit FMA pipes); no client core has AMX
        cpu = "sapphirerapids"
    if "avx512f" in flags:
        isa, lanes = "avx512f", 16
    elif "avx2" in flags and "fma" in flags:
        isa, lanes = "avx2+fma", 8
    else:
        isa, lanes = "sse", 4
    pipes = 2
    if cpu in _NARROW:
        lanes, pipes = min(lanes, _NARROW[cpu][0]), _NARROW[cpu][1]
    ghz = measured_ghz()
    clock = "measured"
    if ghz is None:
        ghz, clock = (mhz or 0.0) / 1e3, "/proc/cpuinfo"
    gf = ghz * lanes * 2 * pipes
    return {"gflops_per_core": gf, "ghz": ghz, "lanes": lanes, "pipes": pipes, "isa": isa,
            "cpu": cpu, "how": f"{ghz:.2f} GHz ({clock}) x {lanes} f32 lanes ({isa}) x 2 (FMA) x "
                               f"{pipes} FMA pipes ({cpu or 'unknown CPU'}) = {gf:.1f} GFLOPS/core"}


_FEATURES = ("avx512f", "avx512_vnni", "avx_vnni", "avx512_bf16", "avx512_fp16",
             "amx_tile", "amx_int8", "amx_bf16")


def machine_line() -> str:
    """One line naming the machine for a results table: the CPU model
    (/proc/cpuinfo "model name"), LLVM's name for it, the vector features
    the kernel plan reads (VNNI, BF16, FP16, AMX) and the core count, e.g.
    ``AMD EPYC (znver4), avx512f avx512_vnni avx512_bf16, 2 cpus``."""
    model = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    flags, _ = _cpuinfo()
    cpu = _host_cpu()
    feats = " ".join(f for f in _FEATURES if f in flags) or "no AVX-512"
    return (f"{model or 'unknown CPU'}" + (f" ({cpu})" if cpu else "")
            + f", {feats}, {os.cpu_count()} cpus")
