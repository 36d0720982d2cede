"""codegen/elf_weights.py: the weights' object written directly defines what
the assembler stub (``.incbin``) defined: the same symbols (global, hidden,
objects, sizes), each weight's bytes at its alignment, a distinct address
for an empty one, no executable stack; a library linked with it reads them."""
from __future__ import annotations

import ctypes
import subprocess

import numpy as np
import pytest

from onnx_mlir_py.codegen.elf_weights import supported, write_weights_object
from onnx_mlir_py.codegen.tools import tool
from onnx_mlir_py.codegen.weights import WeightStore

pytestmark = pytest.mark.skipif(not supported(), reason="x86-64 objects only")


def _store() -> WeightStore:
    rng = np.random.default_rng(0)
    store = WeightStore()
    for n, align in ((4097, 64), (0, 64), (3, 16), (1 << 16, 128), (5, 64)):
        store.add(memoryview(rng.integers(0, 256, n).astype(np.uint8)).cast("B"), align,
                  f"memref<{n}xi8>")
    return store


def _symbols(obj) -> list[str]:
    out = subprocess.run(["readelf", "-sW", str(obj)], capture_output=True, text=True,
                         check=True).stdout
    rows = [line.split() for line in out.splitlines() if "__om_weight_" in line]
    # size, type, bind, visibility, name
    return sorted(" ".join([r[2], r[3], r[4], r[5], r[7]]) for r in rows)


def test_same_symbols_as_the_assembler_stub(tmp_path):
    store = _store()
    mine = tmp_path / "mine.o"
    write_weights_object(mine, store.weights)
    (tmp_path / "stub").mkdir()
    stub = store.write_assembly(tmp_path / "stub")
    theirs = tmp_path / "theirs.o"
    subprocess.run([tool("gcc"), "-c", str(stub), "-o", str(theirs)], check=True)
    assert _symbols(mine) == _symbols(theirs)
    notes = subprocess.run(["readelf", "-SW", str(mine)], capture_output=True, text=True,
                           check=True).stdout
    assert ".note.GNU-stack" in notes and ".rodata.om_weights" in notes


def test_linked_library_reads_the_bytes_at_their_alignment(tmp_path):
    store = _store()
    obj = tmp_path / "weights.o"
    write_weights_object(obj, store.weights)
    decls = "".join(f"extern const unsigned char {w.symbol}[];\n" for w in store.weights)
    table = ", ".join(w.symbol for w in store.weights)
    (tmp_path / "get.c").write_text(
        decls + f"static const unsigned char *t[] = {{{table}}};\n"
        "const unsigned char *om_get(int i) { return t[i]; }\n")
    so = tmp_path / "w.so"
    subprocess.run([tool("gcc"), "-shared", "-fPIC", "-o", str(so), str(tmp_path / "get.c"),
                    str(obj), "-Wl,-z,noexecstack"], check=True)
    lib = ctypes.CDLL(str(so))
    lib.om_get.restype = ctypes.c_void_p
    addrs = set()
    for i, w in enumerate(store.weights):
        a = lib.om_get(i)
        assert a % w.alignment == 0, (w.symbol, a, w.alignment)
        assert ctypes.string_at(a, len(w.data)) == bytes(w.data)
        addrs.add(a)
    assert len(addrs) == len(store.weights)          # the empty weight too
