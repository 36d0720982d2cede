"""Large constants (weights) out of the IR, into the object file verbatim.

After bufferization every dense tensor constant is a ``memref.global
constant``. Translating a 50 MB initializer through textual LLVM IR would
print every element as text (hundreds of MB through ``opt`` and ``llc``), so
globals larger than a threshold are turned into *external declarations*
(renamed ``__om_weight_<n>``) and one object file defines them in
``.rodata`` (:mod:`.elf_weights`, x86-64: it reserves their place and their
bytes are written once, into the linked library; elsewhere ``.bin`` files
that an assembler stub pulls in with ``.incbin``), linked into the shared
object. The result is still one self-contained ``.so``. Constants with
the same bytes get one symbol (one copy in the library), also across the
modules of one store: the ISA variants of a model (``codegen/fat.py``)
share the weights that their kernels do not pack differently.

``dense_resource`` initializers are read back from the printed module's
``{-# dialect_resources #-}`` section (the Python bindings have no accessor for
resource blobs); without the extraction a 12 MB resource costs ~35 s of
mlir-translate/opt/llc time, with it well under a second.
"""
from __future__ import annotations

import hashlib
import queue
import threading
from dataclasses import dataclass, field
from pathlib import Path

import mlir.ir as ir
import numpy as np

from onnx_mlir_py.ir_dense import dense_to_numpy
from onnx_mlir_py.ir_resources import resource_blobs, resource_name
from onnx_mlir_py.ir_util import rename_symbol_refs

DEFAULT_THRESHOLD = 4096  # bytes; smaller constants stay in the IR


# bytes compared at each end of two weights of one size and type before
# their digests are (see WeightStore.add)
_EDGE = 4096


class _Digests:
    """sha256 digests computed on a thread of their own (hashlib releases the
    GIL for large buffers), so the compile's main thread does not hash its
    weights (ResNet-50: 100 MB, ~0.1 s; GPT-2: 620 MB) while it lowers the
    model. One daemon thread for the process (started at the first weight):
    waiting for work, it never holds up exit."""

    def __init__(self) -> None:
        self._todo: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def submit(self, w: "Weight") -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="om-weight-digests",
                                                daemon=True)
                self._thread.start()
        self._todo.put(w)

    def _run(self) -> None:
        while True:
            self._todo.get()._hash()


_DIGESTS = _Digests()


@dataclass(eq=False)
class Weight:
    symbol: str
    data: bytes | memoryview       # a byte buffer (a view of an array: not copied)
    alignment: int
    _digest: bytes | None = None
    _done: threading.Event = field(default_factory=threading.Event)

    def _hash(self) -> None:
        try:
            self._digest = hashlib.sha256(self.data).digest()
        except Exception:       # noqa: BLE001 (hashed again, and raised, by digest)
            pass
        finally:
            self._done.set()

    @property
    def digest(self) -> bytes:
        """sha256 of data (made on the digest thread: waits for it)."""
        self._done.wait()
        if self._digest is None:
            self._digest = hashlib.sha256(self.data).digest()
        return self._digest


def _same_edges(a, b) -> bool:
    """The first and last _EDGE bytes of two buffers of one length are equal."""
    a, b = memoryview(a).cast("B"), memoryview(b).cast("B")
    return a[:_EDGE] == b[:_EDGE] and a[-_EDGE:] == b[-_EDGE:]


@dataclass
class WeightStore:
    """Constants taken out of a module by :func:`externalize_weights`."""
    threshold: int = DEFAULT_THRESHOLD
    weights: list[Weight] = field(default_factory=list)
    # (size, memref type) -> indices in weights
    by_size: dict[tuple[int, str], list[int]] = field(default_factory=dict)

    def add(self, data: bytes | memoryview, alignment: int, type_: str = "") -> str:
        """The symbol of a weight with these bytes and memref type (one
        declaration per symbol in a module): an existing one (its alignment
        raised to ``alignment`` if lower) or a new one. Equal bytes are
        found by size and type, then both ends, then the sha256 digests:
        only a weight that may be a copy is hashed here; the others' digests
        (the library's identity) are made on the digest thread."""
        same = self.by_size.setdefault((len(data), type_), [])
        found, digest = None, None
        for i in same:
            w = self.weights[i]
            if not _same_edges(w.data, data):
                continue
            digest = digest or hashlib.sha256(data).digest()
            if w.digest == digest:
                found = w
                break
        if found is None:
            same.append(len(self.weights))
            found = Weight(f"__om_weight_{len(self.weights)}", data, alignment)
            self.weights.append(found)
            _DIGESTS.submit(found)
        found.alignment = max(found.alignment, alignment)
        return found.symbol

    @property
    def nbytes(self) -> int:
        return sum(len(w.data) for w in self.weights)

    def identity(self, h) -> None:
        """Feed what decides the weights' object (each weight's symbol,
        alignment, size and content digest) to the hash ``h``: the
        library's build-id without reading the bytes again (see link.py)."""
        for w in self.weights:
            h.update(f"{w.symbol}:{w.alignment}:{len(w.data)}:".encode() + w.digest)

    def write_object(self, directory: Path, placeholder: bool = False) -> Path | None:
        """The object file defining the weights, for the link: written
        directly on x86-64 (:mod:`.elf_weights`), else
        :meth:`write_assembly`'s stub; None if there are none.
        ``placeholder``: on x86-64, without the bytes, which :meth:`fill`
        writes into the linked library (ignored elsewhere)."""
        from onnx_mlir_py.codegen.elf_weights import supported, write_weights_object
        if not self.weights:
            return None
        if not supported():
            return self.write_assembly(directory)
        out = directory / ("weights_placeholder.o" if placeholder else "weights.o")
        write_weights_object(out, self.weights, placeholder)
        return out

    def placeholders(self) -> bool:
        """Whether :meth:`write_object` can leave the bytes to :meth:`fill`."""
        from onnx_mlir_py.codegen.elf_weights import supported
        return bool(self.weights) and supported()

    def fill(self, library: Path) -> bool:
        """Write the weights into ``library``, linked with the placeholder
        object; False (nothing written) if its layout is not the expected one."""
        from onnx_mlir_py.codegen.elf_weights import fill_weights
        return fill_weights(library, self.weights)

    def write_assembly(self, directory: Path) -> Path | None:
        """Write ``weights.s`` and one ``.bin`` per weight; None if empty."""
        if not self.weights:
            return None
        lines = []
        for w in self.weights:
            binf = directory / f"{w.symbol}.bin"
            binf.write_bytes(w.data)
            path = str(binf.resolve()).replace("\\", "\\\\").replace('"', '\\"')
            lines += [
                '\t.section .rodata.om_weights,"a",@progbits',
                f"\t.globl {w.symbol}", f"\t.hidden {w.symbol}",
                f"\t.type {w.symbol}, @object", f"\t.balign {w.alignment}",
                f"{w.symbol}:", f'\t.incbin "{path}"',
                f"\t.size {w.symbol}, {len(w.data)}",
                # a zero-size weight still needs a distinct address
                *(["\t.byte 0"] if not w.data else []),
            ]
        lines.append('\t.section .note.GNU-stack,"",@progbits')
        out = directory / "weights.s"
        out.write_text("\n".join(lines) + "\n")
        return out


def _payload(attr: ir.Attribute) -> memoryview | None:
    """Raw little-endian bytes of a dense initializer, or None to keep it inline."""
    if not isinstance(attr, ir.DenseElementsAttr):
        return None
    # not np.array(attr): it reads garbage for an i1 splat (see ir_dense.py)
    arr = dense_to_numpy(attr)
    if arr is None:  # pragma: no cover - unsupported element type
        return None
    if arr.dtype == np.bool_:   # one byte per bool in memory
        arr = arr.astype(np.uint8)
    return memoryview(np.ascontiguousarray(arr)).cast("B")      # the copy just made


def externalize_weights(module: ir.Module, store: WeightStore) -> WeightStore:
    """Move large ``memref.global constant`` initializers from ``module``
    (already bufferized) into ``store``; the module keeps declarations."""
    with module.context:
        chosen = []
        for op in list(module.body.operations):
            op = op.operation
            if op.name != "memref.global" or "constant" not in op.attributes \
                    or "initial_value" not in op.attributes:
                continue
            mt = op.attributes["type"].value
            width = getattr(mt.element_type, "width", 0)
            nbytes_est = int(np.prod(mt.shape, dtype=np.int64)) * max(1, width // 8) \
                if width and mt.has_static_shape else 0
            if nbytes_est >= store.threshold:
                chosen.append(op)
        blobs = resource_blobs([op for op in chosen
                                 if resource_name(op.attributes["initial_value"])], views=True)
        declared: set[str] = set()
        renamed: dict[str, str] = {}
        for op in chosen:
            init = op.attributes["initial_value"]
            rname = resource_name(init)
            data = blobs.get(rname) if rname else _payload(init)
            if data is None or (rname and str(op.attributes["type"].value.element_type) == "i1"):
                continue
            old = op.attributes["sym_name"].value
            align = int(op.attributes["alignment"].value) \
                if "alignment" in op.attributes else 64
            new = store.add(data, max(64, align), str(op.attributes["type"]))
            if new != old:
                renamed[old] = new
            if new in declared:           # same bytes as an earlier constant: its symbol
                op.erase()
                continue
            declared.add(new)
            op.attributes["sym_name"] = ir.StringAttr.get(new)
            del op.attributes["initial_value"]
            if "sym_visibility" in op.attributes:
                del op.attributes["sym_visibility"]   # a declaration must be public
        _rename_uses(module, renamed)
    return store


def _rename_uses(module: ir.Module, renamed: dict[str, str]) -> None:
    """Point every ``memref.get_global`` at its global's new name, in one walk
    (a SymbolTable.replace_all_symbol_uses per weight walked the module once
    per weight). A bufferized module refers to globals only through them."""
    rename_symbol_refs(module, "memref.get_global", "name", renamed)
