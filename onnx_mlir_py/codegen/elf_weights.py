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

With ``placeholder=True`` the section is ``SHT_NOBITS``: the object holds
no byte of the weights, and ld (which lays the input out where the bytes
would go, inside ``.rodata``, and leaves them a hole of zeros in the sparse
output) neither reads nor copies them; :func:`fill_weights` then writes
each weight once, straight into the linked library, at the file offset of
its symbol. Before, every weight byte was written to ``weights.o``, read
back by ld and written again (#29). :func:`fill_weights` checks the layout
first (the symbol's section is file-backed ``PROGBITS`` holding the whole
range, inside a ``PT_LOAD``'s file bytes) and answers False, writing
nothing, when it is not so (another linker): the caller links again with
the bytes in the object.
"""
from __future__ import annotations

import platform
import struct
from pathlib import Path

_EHDR = struct.Struct("<16sHHIQQQIHHHHHH")          # Elf64_Ehdr, 64 bytes
_SHDR = struct.Struct("<IIQQQQIIQQ")                # Elf64_Shdr, 64 bytes
_SYM = struct.Struct("<IBBHQQ")                     # Elf64_Sym, 24 bytes
_PHDR = struct.Struct("<IIQQQQQQ")                  # Elf64_Phdr, 56 bytes
ET_REL, EM_X86_64, EV_CURRENT = 1, 62, 1
SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_NOBITS = 1, 2, 3, 8
PT_LOAD = 1
SHF_ALLOC = 2
STB_GLOBAL, STT_OBJECT, STV_HIDDEN = 1, 1, 2
SECTION = b".rodata.om_weights"


def supported() -> bool:
    """The build machine links x86-64 objects (else the assembler stub)."""
    return platform.machine() in ("x86_64", "AMD64")


def _align(n: int, a: int) -> int:
    return -(-n // a) * a


def _layout(weights) -> tuple[list[int], int, int]:
    """Each weight's offset in the section, the section's size and alignment."""
    offsets, off, align = [], 0, 1
    for w in weights:
        a = max(1, w.alignment)
        align = max(align, a)
        off = _align(off, a)
        offsets.append(off)
        off += max(len(w.data), 1)
    return offsets, off, align


def write_weights_object(path: Path, weights, placeholder: bool = False) -> None:
    """``path`` = the object defining each ``weights`` entry (``symbol``,
    ``data``: a byte buffer, ``alignment``); ``placeholder``: without their
    bytes (see the module docstring)."""
    offsets, rodata_size, align = _layout(weights)
    filed = 0 if placeholder else rodata_size       # the section's bytes in this file
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
    symtab_at = _align(rodata_at + filed, 8)
    strtab_at = symtab_at + len(symtab)
    shstr_at = strtab_at + len(strtab)
    shdr_at = _align(shstr_at + len(shstr), 8)
    sections = [
        (0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
        (name_at[1], SHT_NOBITS if placeholder else SHT_PROGBITS, SHF_ALLOC, 0, rodata_at,
         rodata_size, 0, 0, align, 0),
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
        for o, w in zip(offsets, weights if filed else []):
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


def _symbols(f, sections, names: set[bytes]) -> dict[bytes, tuple[int, int]]:
    """{name: (value, section index)} of the ``STT_OBJECT`` symbols ``names``
    in the ``.symtab`` of the ELF file ``f``."""
    found = {}
    for sh in sections:
        if sh[1] != SHT_SYMTAB or sh[9] != _SYM.size or sh[6] >= len(sections):
            continue
        strs = sections[sh[6]]
        f.seek(strs[4])
        strtab = f.read(strs[5])
        f.seek(sh[4])
        syms = f.read(sh[5])
        for k in range(len(syms) // _SYM.size):
            name, info, _, ndx, val, _ = _SYM.unpack_from(syms, k * _SYM.size)
            if info & 0xF == STT_OBJECT:
                end = strtab.find(b"\0", name)
                if strtab[name:end] in names:
                    found[strtab[name:end]] = (val, ndx)
    return found


def _file_offset(f, first: str, last: str, last_at: int, size: int) -> int | None:
    """The file offset of the symbol ``first`` in the ELF64 little-endian
    shared object ``f`` (open for reading) if ``last`` is ``last_at`` bytes
    after it and ``size`` bytes from it are file bytes of one ``PROGBITS``
    section and of one ``PT_LOAD``, else None."""
    f.seek(0)
    ehdr = f.read(_EHDR.size)
    if len(ehdr) < _EHDR.size or ehdr[:6] != b"\x7fELF\x02\x01":
        return None
    (_, _, _, _, _, phoff, shoff, _, _, phentsize, phnum, shentsize, shnum, _) = \
        _EHDR.unpack(ehdr)
    if shentsize != _SHDR.size or phentsize != _PHDR.size or not shnum:
        return None
    f.seek(shoff)
    raw = f.read(shnum * _SHDR.size)
    if len(raw) < shnum * _SHDR.size:
        return None
    sections = [_SHDR.unpack_from(raw, i * _SHDR.size) for i in range(shnum)]
    syms = _symbols(f, sections, {first.encode(), last.encode()})
    if first.encode() not in syms or last.encode() not in syms:
        return None
    value, shndx = syms[first.encode()]
    if syms[last.encode()] != (value + last_at, shndx) or not 0 < shndx < shnum:
        return None
    _, sh_type, _, addr, offset, sh_size = sections[shndx][:6]
    if sh_type != SHT_PROGBITS or not (addr <= value and value + size <= addr + sh_size):
        return None
    f.seek(phoff)
    raw = f.read(phnum * _PHDR.size)
    for i in range(len(raw) // _PHDR.size):
        p_type, _, p_offset, p_vaddr, _, p_filesz, _, _ = _PHDR.unpack_from(raw, i * _PHDR.size)
        if p_type == PT_LOAD and p_vaddr <= value and value + size <= p_vaddr + p_filesz:
            at = value - p_vaddr + p_offset
            return at if at == value - addr + offset else None
    return None


def fill_weights(path: Path, weights) -> bool:
    """Write the ``weights`` into the shared object ``path`` linked with
    their placeholder object (see the module docstring); False, writing
    nothing, if its layout is not the one expected."""
    if not weights:
        return True
    offsets, size, _ = _layout(weights)
    with open(path, "r+b") as f:
        base = _file_offset(f, weights[0].symbol, weights[-1].symbol, offsets[-1], size)
        if base is None or offsets[0] != 0:
            return False
        for o, w in zip(offsets, weights):
            if len(w.data):
                f.seek(base + o)
                f.write(w.data)
    return True
