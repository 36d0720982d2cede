"""The CPU a model is compiled for, resolved once: :class:`Target`.

Every ``--march`` / ``--mcpu`` / build-machine question is answered here,
once per compile (:func:`resolve`); the compiler (``compiler.resolve_target``)
stores the result in the :class:`~onnx_mlir_py.options.Options` it hands
on, the -O3 kernels (``passes/optimize``) read their vector width, register
count, FMA pipes, caches and ISA extensions from it, and codegen takes its
``llc -mcpu`` / triple from it (``codegen/link.py``). ``onnx_mlir_py.isa``
keeps the lists: the ISA levels and their CPU features (what the library
records and checks at load time).

Which CPU (``Target.cpu``, llc's ``-mcpu``):
  - ``--march`` an ISA level or ``native`` (``isa.CHOICES``): that one;
  - neither ``--march`` nor ``--mcpu`` at -O3 (``host_default``): the build
    machine's highest ISA level (``isa.host_level``), so the kernels use its
    vector width (the library still runs on any CPU of that level);
  - else ``--mcpu`` as given; ``--march`` an architecture or triple
    (cross-compiling) is ``Target.arch``;
  - nothing on an x86-64 host: ``x86-64-v2`` (any x86-64 CPU of the last ~15 years).

What the kernels know of it:
  - ISA level, f32 vector width and vector registers: from the level the CPU
    implies (``isa.level_of_cpu``); cross-compiling (``arch``) or off x86-64
    the generic 128-bit target (4 lanes, 16 registers);
  - FMA pipes and latency: from :data:`CPUS` by the CPU's name, for
    ``native`` and the -O3 default by the build machine's (LLVM's host CPU
    name, ``llc --version``); unknown names get :data:`DEFAULT_TUNING`;
  - cache sizes (L1d, L2 per core, L3): the build machine's
    (``/sys/devices/system/cpu/cpu0/cache``) when the target is the build
    machine, else :data:`CPUS`' or :data:`DEFAULT_TUNING`'s;
  - VNNI, AVX512-BF16, AMX (tile/int8/bf16): the build machine's
    ``/proc/cpuinfo`` flags for ``native`` and for the -O3 default on an
    AVX-512 machine, the table's for a named CPU, none for a bare ISA level
    given with ``--march``/``--mcpu`` (``llc -mcpu=x86-64-v4`` emits no VNNI
    instruction). At the -O3 default, a kernel that uses an extension (the
    int8 VNNI matmul) adds it to ``Target.features``: codegen passes it to
    llc (``-mattr``) and the library records it as required, so a library
    without such a kernel still runs on any CPU of its level.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

from onnx_mlir_py.isa import CHOICES, host_flags, host_level, is_x86_host, level_of_cpu

# codegen's CPU on an x86-64 host when nothing is chosen (and below -O3)
DEFAULT_CPU = "x86-64-v2"
KIB, MIB = 1 << 10, 1 << 20

# (f32 lanes, vector registers) by ISA level; other levels / architectures: GENERIC
VECTORS = {"x86-64-v4": (16, 32), "x86-64-v3": (8, 16)}
GENERIC = (4, 16)


@dataclass(frozen=True)
class Tuning:
    """Microarchitecture facts the kernel plan may size tiles by."""
    fma_pipes: int          # FMAs of the full vector width issued per cycle
    fma_latency: int        # cycles from an FMA to its result
    l1d: int                # bytes, per core
    l2: int                 # bytes, per core
    l3: int                 # bytes, shared
    extensions: frozenset = frozenset()   # of "vnni", "avx512_bf16", "amx_tile", "amx_int8", "amx_bf16"


_SPR = frozenset({"vnni", "avx512_bf16", "amx_tile", "amx_int8", "amx_bf16"})
# llc -mcpu names (prefixes, first match wins) -> Tuning. Pipes count the
# FMAs of the CPU's widest vector per cycle: Zen 4 splits a 512-bit FMA over
# its two 256-bit pipes (one effective 512-bit pipe; measured: the register-
# only 8x32 tile peaks at 1 FMA/cycle on the 2-vCPU EPYC of docs/design.md);
# server Intel cores since Skylake-SP have two 512-bit FMA units (port 0+1
# fused and port 5), the client/Ice Lake-SP... parts listed with 1 have one.
CPUS: tuple[tuple[str, Tuning], ...] = (
    ("sapphirerapids", Tuning(2, 4, 48 * KIB, 2 * MIB, 105 * MIB, _SPR)),
    ("emeraldrapids", Tuning(2, 4, 48 * KIB, 2 * MIB, 320 * MIB, _SPR)),
    ("graniterapids", Tuning(2, 4, 48 * KIB, 2 * MIB, 504 * MIB, _SPR | {"avx512_fp16"})),
    ("icelake-server", Tuning(2, 4, 48 * KIB, 5 * MIB // 4, 54 * MIB, frozenset({"vnni"}))),
    ("icelake-client", Tuning(1, 4, 48 * KIB, 512 * KIB, 8 * MIB, frozenset({"vnni"}))),
    ("tigerlake", Tuning(1, 4, 48 * KIB, 5 * MIB // 4, 12 * MIB, frozenset({"vnni"}))),
    ("rocketlake", Tuning(1, 4, 48 * KIB, 512 * KIB, 16 * MIB, frozenset({"vnni"}))),
    ("cooperlake", Tuning(2, 4, 32 * KIB, 1 * MIB, 38 * MIB, frozenset({"vnni", "avx512_bf16"}))),
    ("cascadelake", Tuning(2, 4, 32 * KIB, 1 * MIB, 38 * MIB, frozenset({"vnni"}))),
    ("skylake-avx512", Tuning(2, 4, 32 * KIB, 1 * MIB, 38 * MIB)),
    ("znver5", Tuning(2, 4, 48 * KIB, 1 * MIB, 32 * MIB, frozenset({"vnni", "avx512_bf16"}))),
    ("znver4", Tuning(1, 4, 32 * KIB, 1 * MIB, 32 * MIB, frozenset({"vnni", "avx512_bf16"}))),
    ("znver3", Tuning(2, 4, 32 * KIB, 512 * KIB, 32 * MIB)),
    ("znver2", Tuning(2, 5, 32 * KIB, 512 * KIB, 16 * MIB)),
    ("znver1", Tuning(1, 5, 32 * KIB, 512 * KIB, 8 * MIB)),
    ("alderlake", Tuning(2, 4, 48 * KIB, 5 * MIB // 4, 30 * MIB)),
    ("skylake", Tuning(2, 4, 32 * KIB, 256 * KIB, 8 * MIB)),
    ("broadwell", Tuning(2, 5, 32 * KIB, 256 * KIB, 8 * MIB)),
    ("haswell", Tuning(2, 5, 32 * KIB, 256 * KIB, 8 * MIB)),
)
# an ISA level or an unknown CPU: a typical core of that class
DEFAULT_TUNING = {"x86-64-v4": Tuning(2, 4, 32 * KIB, 1 * MIB, 32 * MIB),
                  "x86-64-v3": Tuning(2, 4, 32 * KIB, 512 * KIB, 16 * MIB)}
GENERIC_TUNING = Tuning(2, 4, 32 * KIB, 256 * KIB, 8 * MIB)


@dataclass(frozen=True)
class Target:
    """One resolved compile target (see the module docstring)."""
    cpu: str | None             # llc -mcpu (None: llc's default for the triple)
    arch: str | None            # --march architecture / triple (None: the build machine's)
    level: str | None           # the x86-64 ISA level the kernels use (None: generic 128-bit)
    vector_width: int           # f32 lanes of one vector register
    num_registers: int          # vector registers
    fma_pipes: int
    fma_latency: int
    l1d: int
    l2: int
    l3: int
    vnni: bool = False
    avx512_bf16: bool = False
    amx_tile: bool = False
    amx_int8: bool = False
    amx_bf16: bool = False
    tuned_for: str = ""         # where the tuning facts came from (a CPU name, "host ...", a level)
    # llc features the generated code uses beyond what ``cpu`` implies (set
    # after the -O3 kernels by ``compiler.used_features``: ("avx512vnni",)
    # when an int8 kernel was built for an ISA level); the library requires them
    features: tuple = ()

    @property
    def matmul_tile(self) -> tuple[int, int, int]:
        """(mb, nb, kb) block factors: an mb x nb accumulator tile (nb = two
        vectors) that leaves registers for the B row and the broadcast A.
        With 32 registers (AVX-512) 8 x 32 (16 accumulators): MLAS's 12 x 32
        (24) measured 1.03-1.16x slower with this kernel (matmul1024, mlp,
        bert_layer, resnet18 at x86-64-v4, 1 thread)."""
        nb = 2 * self.vector_width
        mb = 8 if self.num_registers >= 32 else 6
        return mb, nb, 8

    def describe(self) -> str:
        """One line for ``-v``."""
        ext = [n for n, on in (("VNNI", self.vnni), ("AVX512-BF16", self.avx512_bf16),
                               ("AMX-TILE", self.amx_tile), ("AMX-INT8", self.amx_int8),
                               ("AMX-BF16", self.amx_bf16)) if on]
        where = f"cpu {self.cpu or 'default'}" + (f", arch {self.arch}" if self.arch else "")
        return (f"target: {self.level or 'generic'} ({where}; tuned for {self.tuned_for}): "
                f"f32 x{self.vector_width}, {self.num_registers} vector registers, "
                f"{self.fma_pipes} FMA pipe{'s' if self.fma_pipes > 1 else ''} x "
                f"{self.fma_latency} cycles, L1d {_size(self.l1d)}, L2 {_size(self.l2)}, "
                f"L3 {_size(self.l3)}, extensions: {', '.join(ext) or 'none'}")


def _size(n: int) -> str:
    return f"{n // MIB} MiB" if n >= MIB and n % MIB == 0 else f"{n // KIB} KiB"


def codegen_cpu(mcpu: str | None, march: str | None, host_default: bool = False
                ) -> tuple[str | None, str | None]:
    """(llc -mcpu, architecture) for the options ``mcpu`` / ``march``; see
    the module docstring."""
    if march in CHOICES:
        return march, None
    if mcpu is None and march is None and host_default:
        mcpu = host_level()
    if mcpu is None and march is None and is_x86_host():
        mcpu = DEFAULT_CPU
    return mcpu, march


@lru_cache(maxsize=None)
def resolve(mcpu: str | None = None, march: str | None = None, *,
            host_default: bool = False) -> Target:
    """The :class:`Target` of the options ``mcpu`` / ``march``;
    ``host_default``: with neither, the build machine's ISA level (the -O3
    default) instead of :data:`DEFAULT_CPU`."""
    cpu, arch = codegen_cpu(mcpu, march, host_default)
    level = level_of_cpu(cpu) if arch is None and is_x86_host() else None
    width, regs = VECTORS.get(level, GENERIC)
    native = cpu == "native"
    on_host = arch is None and (native or (host_default and mcpu is None and march is None))
    name = host_cpu_name() if on_host else (cpu or "").lower()
    tuning = next((t for prefix, t in CPUS if name.startswith(prefix)), None)
    tuned_for = name if tuning is not None else (level or "generic")
    tuning = tuning or DEFAULT_TUNING.get(level, GENERIC_TUNING)
    if on_host:
        tuned_for = f"host {name or '?'}"
        tuning = _with_host_caches(tuning)
    if native or (on_host and level == "x86-64-v4"):
        # the build machine's; at the -O3 default (its ISA level) a kernel that
        # uses one adds it to the code's features (Target.features), so only
        # libraries that use it require it
        ext = {n for n in ("avx512_vnni", "avx512_bf16", "amx_tile", "amx_int8", "amx_bf16")
               if n in host_flags() and n not in _hidden()}
        if "amx_tile" not in ext or not host_amx_permitted():
            ext -= {"amx_tile", "amx_int8", "amx_bf16"}
        ext = {"vnni" if n == "avx512_vnni" else n for n in ext}
    else:           # a named CPU's (an ISA level's table entry has none)
        ext = set(tuning.extensions) if level is not None and not on_host else set()
    return Target(cpu=cpu, arch=arch, level=level, vector_width=width, num_registers=regs,
                  fma_pipes=tuning.fma_pipes, fma_latency=tuning.fma_latency,
                  l1d=tuning.l1d, l2=tuning.l2, l3=tuning.l3,
                  vnni="vnni" in ext, avx512_bf16="avx512_bf16" in ext,
                  amx_tile="amx_tile" in ext, amx_int8="amx_int8" in ext,
                  amx_bf16="amx_bf16" in ext, tuned_for=tuned_for)


def host_kernel_extensions(level: str | None) -> tuple[str, ...]:
    """The llc features of the build machine that the -O3 kernels may use
    when compiling for its ISA level by default (what :func:`resolve` gives
    the host-default Target): ("avx512vnni",) on an AVX-512 VNNI machine,
    and "amx-int8" where it also has AMX-INT8 and the OS grants tile data
    (the int8 kernels then use AMX: a library that a VNNI-only machine
    cannot load). For cache keys: reads /proc/cpuinfo (and asks for AMX
    once), no compiler import."""
    if level != "x86-64-v4":
        return ()
    flags, hidden = host_flags(), _hidden()
    ext = ("avx512vnni",) if "avx512_vnni" in flags and "avx512_vnni" not in hidden else ()
    if all(f in flags and f not in hidden for f in ("amx_tile", "amx_int8")) and \
            host_amx_permitted():
        ext += ("amx-int8",)
    return ext


@lru_cache(maxsize=1)
def host_amx_permitted() -> bool:
    """Linux gives a process AMX tile data only when it asks (arch_prctl
    ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA); before that a tile instruction
    is SIGILL. A library's runtime asks for itself before its code runs
    (runtime/c/om_cpu.c, the ``amx-tile`` feature); the compiler asks here
    for the build machine, and where the OS refuses, no AMX kernel is chosen
    for it (the VNNI / AVX512-BF16 ones are)."""
    if not is_x86_host():
        return False
    try:
        import ctypes
        return ctypes.CDLL(None, use_errno=True).syscall(158, 0x1023, 18) == 0   # SYS_arch_prctl
    except (OSError, AttributeError):
        return False


def _hidden() -> set[str]:
    """/proc/cpuinfo names of the features the test override hides (isa.HIDE_ENV)."""
    from onnx_mlir_py.isa import HIDE_ENV, _CPUINFO
    return {_CPUINFO.get(f, f) for f in os.environ.get(HIDE_ENV, "").replace(",", " ").split()}


def target_for(cpu: str | None) -> Target:
    """The :class:`Target` of an ``llc -mcpu`` name alone (an ISA level such
    as ``x86-64-v4``, a CPU such as ``znver4``, ``native``; None: the default
    CPU): what the lit tests and kernel tests pick (``target=`` of the -O3
    passes), independent of the build machine unless ``native``."""
    return resolve(cpu, None)


def options_target(opts) -> Target:
    """The Target of an :class:`~onnx_mlir_py.options.Options`: the one the
    compiler resolved (``opts.target``), else that of its ``mcpu`` /
    ``march`` as given (codegen's own callers)."""
    return opts.target if opts.target is not None else resolve(opts.mcpu, opts.march)


@lru_cache(maxsize=1)
def host_cpu_name() -> str:
    """LLVM's name for the build machine's CPU (``llc --version``'s "Host
    CPU", what ``-mcpu=native`` means), "" when unknown."""
    from onnx_mlir_py.codegen.link import llc_host_cpu
    return llc_host_cpu()


def _with_host_caches(t: Tuning) -> Tuning:
    """``t`` with the build machine's L1d / L2 / L3 sizes where sysfs has them."""
    sizes = host_cache_sizes()
    return Tuning(t.fma_pipes, t.fma_latency, sizes.get(1, t.l1d), sizes.get(2, t.l2),
                  sizes.get(3, t.l3), t.extensions)


CACHE_DIR = "/sys/devices/system/cpu/cpu0/cache"


@lru_cache(maxsize=1)
def host_cache_sizes() -> dict[int, int]:
    """{level: bytes} of cpu0's data / unified caches (empty when unreadable)."""
    sizes: dict[int, int] = {}
    try:
        entries = sorted(os.listdir(CACHE_DIR))
    except OSError:
        return sizes
    for entry in entries:
        if not entry.startswith("index"):
            continue
        try:
            def read(f: str) -> str:
                with open(os.path.join(CACHE_DIR, entry, f)) as fh:
                    return fh.read().strip()
            if read("type") == "Instruction":
                continue
            text = read("size")
            mult = {"K": KIB, "M": MIB, "G": 1 << 30}.get(text[-1:], 1)
            sizes[int(read("level"))] = int(text.rstrip("KMG")) * mult
        except (OSError, ValueError):
            continue
    return sizes
