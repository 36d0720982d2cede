"""codegen/elf_weights.py: the weights' object written directly defines what
the assembler stub (``.incbin``) defined: the same symbols (global, hidden,
objects, sizes), each weight's bytes at its alignment, a distinct address
for an empty one, no executable stack; a library linked with it reads them."""
from __future__ import annotations

import ctypes
import subprocess

import numpy as np
import pytest

from onnx_mlir_py.codegen.elf_weights import fill_weights, supported, write_weights_object
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


def _link(tmp_path, store, obj, name="w.so", *extra, rodata=True):
    """A library of ``obj`` and a getter of each weight's address (with
    ``rodata``: a read-only constant of its own, as every model library)."""
    decls = "".join(f"extern const unsigned char {w.symbol}[];\n" for w in store.weights)
    table = ", ".join(w.symbol for w in store.weights)
    (tmp_path / "get.c").write_text(
        decls + f"static const unsigned char *t[] = {{{table}}};\n"
        "const unsigned char *om_get(int i) { return t[i]; }\n"
        + ("const int om_k[4] = {1, 2, 3, 4};\n" if rodata else ""))
    so = tmp_path / name
    subprocess.run([tool("gcc"), "-shared", "-fPIC", "-o", str(so), str(tmp_path / "get.c"),
                    str(obj), "-Wl,-z,noexecstack", "-Wl,--build-id=none", *extra], check=True)
    return so


def _check_library(so, store):
    lib = ctypes.CDLL(str(so))
    lib.om_get.restype = ctypes.c_void_p
    addrs = set()
    for i, w in enumerate(store.weights):
        a = lib.om_get(i)
        assert a % w.alignment == 0, (w.symbol, a, w.alignment)
        assert ctypes.string_at(a, len(w.data)) == bytes(w.data)
        addrs.add(a)
    assert len(addrs) == len(store.weights)          # the empty weight too


def test_linked_library_reads_the_bytes_at_their_alignment(tmp_path):
    store = _store()
    obj = tmp_path / "weights.o"
    write_weights_object(obj, store.weights)
    _check_library(_link(tmp_path, store, obj), store)


def test_placeholder_filled_after_the_link_is_the_same_library(tmp_path):
    """The placeholder object (NOBITS: no byte of the weights) links to a
    library of the same layout with holes where the weights go;
    fill_weights writes them there: byte-identical to the library linked
    with the bytes in the object."""
    store = _store()
    full, empty = tmp_path / "weights.o", tmp_path / "placeholder.o"
    write_weights_object(full, store.weights)
    write_weights_object(empty, store.weights, placeholder=True)
    assert empty.stat().st_size < 4096 < sum(len(w.data) for w in store.weights)
    want = _link(tmp_path, store, full, "want.so").read_bytes()
    so = _link(tmp_path, store, empty, "got.so")
    assert so.read_bytes() != want and len(so.read_bytes()) == len(want)
    assert fill_weights(so, store.weights)
    assert so.read_bytes() == want
    _check_library(so, store)


def test_fill_refuses_an_unexpected_layout_and_writes_nothing(tmp_path):
    """No .symtab (a stripped library), the weights' symbols not where
    the placeholder put them, or no other read-only data (ld makes the
    output .rodata NOBITS too): False, the file unchanged (link.py then
    links again with the bytes in the object)."""
    store = _store()
    empty = tmp_path / "placeholder.o"
    write_weights_object(empty, store.weights, placeholder=True)
    stripped = _link(tmp_path, store, empty, "s.so", "-s")
    before = stripped.read_bytes()
    assert not fill_weights(stripped, store.weights)
    assert stripped.read_bytes() == before
    so = _link(tmp_path, store, empty, "o.so")
    before = so.read_bytes()
    other = _store()
    other.weights.reverse()             # the first and last symbols swapped
    assert not fill_weights(so, other.weights)
    assert so.read_bytes() == before
    alone = _link(tmp_path, store, empty, "a.so", rodata=False)    # .rodata is NOBITS then
    before = alone.read_bytes()
    assert not fill_weights(alone, store.weights)
    assert alone.read_bytes() == before


def test_link_library_falls_back_to_the_bytes_in_the_object(tmp_path, monkeypatch):
    """When fill_weights refuses, link.py links again with the full object:
    the library runs correctly (against numpy: a 16 KiB constant added)."""
    import mlir.ir as ir
    import onnx_mlir_py.codegen.elf_weights as ew
    from onnx_mlir_py.codegen import emit_library
    from onnx_mlir_py.runtime import ExecutionSession
    calls = []
    monkeypatch.setattr(ew, "fill_weights", lambda *a: calls.append(a) or False)
    w = np.random.default_rng(1).standard_normal((64, 64), dtype=np.float32)
    with ir.Context(), ir.Location.unknown():
        m = ir.Module.parse("""
func.func @main_graph(%x: tensor<64x64xf32> {onnx.name = "x"}) -> (tensor<64x64xf32> {onnx.name = "y"}) {
  %w = arith.constant dense<0.0> : tensor<64x64xf32>
  %e = tensor.empty() : tensor<64x64xf32>
  %y = linalg.add ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>)
                  outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}""")
        cst = m.body.operations[0].regions[0].blocks[0].operations[0]
        cst.attributes["value"] = ir.DenseElementsAttr.get(w)
        so = emit_library(m, tmp_path / "m.so")
    assert len(calls) == 1
    x = np.random.default_rng(2).standard_normal((64, 64), dtype=np.float32)
    np.testing.assert_array_equal(ExecutionSession(so).run([x])[0], x + w)
