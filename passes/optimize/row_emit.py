"""Text emission for the row kernel (:mod:`.row_kernel`, :mod:`.row_plane`):
the line writer with fresh value names and hoisted index constants, type
text, and the fused elementwise ops applied to a vector.
"""
from __future__ import annotations

import struct


def ttype(shape) -> str:
    """A static f32 tensor type."""
    return "tensor<" + "x".join(str(s) for s in shape) + "xf32>"


def vtype(n: int) -> str:
    return f"vector<{n}xf32>"


def f32_hex(v: float) -> str:
    """An f32 constant's exact text (-inf, -0.0 included)."""
    return f"0x{struct.unpack('<I', struct.pack('<f', v))[0]:08X}"


class Emit:
    """Lines of a function body at indentation ``ind``; the index constants
    (:meth:`idx`) are declared by the caller at the function's top."""

    def __init__(self):
        self.lines: list[str] = []
        self.consts: dict[int, str] = {}
        self.k = 0
        self.ind = 2

    def __call__(self, text: str):
        self.lines.append("  " * self.ind + text)

    def val(self, base: str, text: str) -> str:
        """Emit ``%<fresh> = text``; returns the name."""
        self.k += 1
        nm = f"%{base}{self.k}"
        self(f"{nm} = {text}")
        return nm

    def idx(self, v: int) -> str:
        if v not in self.consts:
            self.consts[v] = f"%i{v}"
        return self.consts[v]

    def add(self, a: str, b: int) -> str:
        return a if b == 0 else self.val("ix", f"arith.addi {a}, {self.idx(b)} : index")

    def mul(self, a: str, b: int) -> str:
        return a if b == 1 else self.val("ix", f"arith.muli {a}, {self.idx(b)} : index")


def emit_ops(e: Emit, ops: tuple, result: str, val: str, cap: str, lanes: int) -> str:
    """The fused elementwise ``ops`` (see :class:`.row_plan.Conv`) on vector
    ``val``; captured scalar k is the splat named ``cap.format(k)``."""
    names = {"%e_in": val}
    for op_name, res, opnds, attrs in ops:
        for a in opnds:
            if a.startswith("%e_cap"):
                names.setdefault(a, cap.format(int(a[len("%e_cap"):])))
        names[res] = e.val("ep", f"{op_name} {', '.join(names[a] for a in opnds)}{attrs} "
                                 f": {vtype(lanes)}")
    return names[result]
