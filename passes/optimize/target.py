"""What the -O3 schedules need to know about the CPU: the f32 vector width.

``mcpu="native"`` reads the build machine's flags; an explicit CPU name
(the -O3 default is the build machine's ISA level, e.g. ``x86-64-v4``, see
``compiler.resolve_target``) is mapped by its ISA level.
The width picks the register tile of the matmul kernel (two vectors of
columns) and the vector size of elementwise code.
"""
from __future__ import annotations

from dataclasses import dataclass

from onnx_mlir_py.isa import is_x86_host, level_of_cpu


@dataclass(frozen=True)
class Target:
    vector_width: int          # f32 lanes of one vector register
    num_registers: int         # vector registers (for the register tile)

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


SSE = Target(4, 16)
AVX2 = Target(8, 16)
AVX512 = Target(16, 32)

def target_for(mcpu: str | None) -> Target:
    """The :class:`Target` for an ``llc -mcpu`` value (None = the default
    CPU), by the ISA level it implies (``onnx_mlir_py.isa``)."""
    if not is_x86_host():
        return SSE                      # 128-bit NEON-like default elsewhere
    return {"x86-64-v4": AVX512, "x86-64-v3": AVX2}.get(level_of_cpu(mcpu), SSE)
