"""The weights' object file, written directly (x86-64 ELF).

:class:`.weights.WeightStore` used to write each weight to a ``.bin`` file
and an assembler stub that ``.incbin``-ed them: every byte went to disk
three times before the link (the ``.bin``, the assembler's ``.o``, the
``.so``), 2 of GPT-2's 6.4 s link (#29). This writes the relocatable object
``as`` made from that stub in one pass: one section ``.rodata.om_weights``
(allocated, read-only) holding each weight at its alignment, a global hidden
``STT_OBJECT`` symbol with its size per weight (a zero-size weight still
gets a byte: a distinct address), and an empty ``.note.GNU-stack`` (no
executable stack).
"""
from __future__ import annotations

import platform
import struct
from pathlib import Path

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")          # Elf64_Ehdr, 64 bytes
_SHDR = struct.Struct("<IIQQQQIIQQ")                # Elf64_Shdr, 64 bytes
_SYM = struct.Struct("<IBBHQQ")                     # Elf64_Sym, 24 bytes
ET_REL, EM_X86_64, EV_CURRENT = 1, 62, 1
SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB = 1, 2, 3
SHF_ALLOC = 2
STB_GLOBAL, STT_OBJECT, STV_HIDDEN = 1, 1, 2
SECTION = b".rodata.om_weights"


def supported() -> bool:
    """The build machine links x86-64 objects (else the assembler stub)."""
    return platform.machine() in ("x86_64", "AMD64")


def _align(n: int, a: int) -> int:
    return -(-n // a) * a


def write_weights_object(path: Path, weights) -> None:
    """``path`` = the object defining each ``weights`` entry (``symbol``,
    ``data``: a byte buffer, ``alignment``)."""
    offsets, off, align = [], 0, 1
    for w in weights:
        a = max(1, w.alignment)
        align = max(align, a)
        off = _align(off, a)
        offsets.append(off)
        off += max(len(w.data), 1)
    rodata_size = off
    names = [b"", SECTION, b".note.GNU-stack", b".symtab", b".strtab", b".shstrtab"]
    shstr = b"\0".join(names) + b"\0"
    name_at = [shstr.index(n + b"\0") if n else 0 for n in names]
    strtab, sym_name = bytearray(b"\0"), []
    for w in weights:
        sym_name.append(len(strtab))
        strtab += w.symbol.encode() + b"\0"
    symtab = _SYM.pack(0, 0, 0, 0, 0, 0) + b"".join(
        _SYM.pack(n, (STB_GLOBAL << 4) | STT_OBJECT, STV_HIDDEN, 1, o, len(w.data))
        for n, o, w in zip(sym_name, offsets, weights))
    rodata_at = _align(_EHDR.size, align)
    symtab_at = _align(rodata_at + rodata_size, 8)
    strtab_at = symtab_at + len(symtab)
    shstr_at = strtab_at + len(strtab)
    shdr_at = _align(shstr_at + len(shstr), 8)
    sections = [
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
        (name_at[1], SHT_PROGBITS, SHF_ALLOC, 0, rodata_at, rodata_size, 0, 0, align, 0),
        (name_at[2], SHT_PROGBITS, 0, 0, rodata_at, 0, 0, 0, 1, 0),
        (name_at[3], SHT_SYMTAB, 0, 0, symtab_at, len(symtab), 4, 1, 8, _SYM.size),
        (name_at[4], SHT_STRTAB, 0, 0, strtab_at, len(strtab), 0, 0, 1, 0),
        (name_at[5], SHT_STRTAB, 0, 0, shstr_at, len(shstr), 0, 0, 1, 0),
    ]
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
    header = _EHDR.pack(ident, ET_REL, EM_X86_64, EV_CURRENT, 0, 0, shdr_at, 0,
                        _EHDR.size, 0, 0, _SHDR.size, len(sections), 5)
    with open(path, "wb") as f:
        f.write(header)
        f.write(bytes(rodata_at - _EHDR.size))
        at = 0
        for o, w in zip(offsets, weights):
            f.write(bytes(o - at))
            f.write(w.data)
            at = o + len(w.data)
        f.write(bytes(symtab_at - rodata_at - at))
        f.write(symtab)
        f.write(strtab)
        f.write(shstr)
        f.write(bytes(shdr_at - shstr_at - len(shstr)))
        for s in sections:
            f.write(_SHDR.pack(*s))
