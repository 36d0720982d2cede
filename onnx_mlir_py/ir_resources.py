"""Reading ``dense_resource`` constants back from MLIR.

The Python bindings give no access to a resource's bytes, and a resource
attribute read back from an op is not downcast, so both go through text:
the attribute's name from its printed form, the blobs from one print of a
scratch module holding clones of the ops (blob = 4-byte alignment + data).
Used by codegen (weights into the .so), the ONNX graph rewrites and the -O3
weight packing (constants evaluated at compile time).

The print costs about 10 ns a byte (ResNet-50's 100 MB of weights: ~1 s
of its compile, issue #29), so resources made here (:func:`resource_attr`:
the importer's initializers) are also remembered by name with the array
that holds their bytes, and read from it. The table is kept per MLIR
context (a resource name means a blob only inside its context: a module
parsed in another context may reuse the name for other bytes) and holds
contexts and arrays weakly: an entry lives as long as its context and the
array. Inside a context MLIR renames a clashing name (``w`` -> ``w_1``), and
the table records the name the attribute really got; a name seen with two
different arrays anyway is dropped, so it is read through the print
again: the table never answers for a resource it is not sure of.
"""
from __future__ import annotations

import re
import weakref

import mlir.ir as ir
import numpy as np

_RESOURCE_NAME = re.compile(r"^dense_resource<(.+?)>")
_RESOURCE_BLOB = re.compile(r'(?m)^\s*("(?:[^"\\]|\\.)*"|[^\s:]+):\s*"0x([0-9A-Fa-f]*)"')


def resource_name(attr: ir.Attribute) -> str | None:
    """The resource key of a ``dense_resource<...>`` attribute, else None."""
    if isinstance(attr, ir.DenseElementsAttr):
        return None
    m = _RESOURCE_NAME.match(str(attr))
    return m.group(1) if m else None


# context -> (resource name -> array holding its bytes, names seen twice)
_known: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _table(context: ir.Context) -> tuple[weakref.WeakValueDictionary, set[str]]:
    table = _known.get(context)
    if table is None:
        table = _known[context] = (weakref.WeakValueDictionary(), set())
    return table


def resource_attr(arr: np.ndarray, name: str, ttype: ir.Type) -> ir.Attribute:
    """``dense_resource`` attribute of type ``ttype`` over the bytes of the
    contiguous array ``arr`` (not copied), remembered by its name (see the
    module docstring)."""
    attr = ir.DenseResourceElementsAttr.get_from_buffer(memoryview(arr), name, ttype)
    key = resource_name(attr)
    known, ambiguous = _table(attr.context)
    if key is not None and key not in ambiguous:
        old = known.get(key)
        if old is None:
            known[key] = arr
        elif old is not arr:
            del known[key]
            ambiguous.add(key)
    return attr


def _remembered(op: ir.Operation, out: dict, views: bool = False) -> bool:
    """Put the remembered resources ``op`` refers to in ``out`` (bytes, or
    with ``views`` byte views of the arrays, not copied); False when one of
    them is not remembered."""
    table = _known.get(op.context)
    known = table[0] if table is not None else None
    attrs = op.attributes
    for i in range(len(attrs)):
        key = resource_name(attrs[i].attr)
        if key is None:
            continue
        arr = known.get(key) if known is not None else None
        if arr is None:
            return False
        out[key] = memoryview(arr).cast("B") if views else arr.tobytes()
    return True


# called on every read (the -O3 stage cache's recorder: passes/optimize/value_reads.py)
_read_observer = None


def set_read_observer(fn) -> None:
    """``fn()`` is called at each :func:`resource_blobs` call (None: none)."""
    global _read_observer
    _read_observer = fn


def resource_blobs(ops: list[ir.Operation], views: bool = False) -> dict[str, bytes]:
    """{resource key: data bytes} of the resources the ``ops`` refer to.
    ``views``: a remembered resource's data is a byte ``memoryview`` of its
    array instead of a copy (codegen's weights: a decode step's hundreds of
    MB were copied once more)."""
    if _read_observer is not None:
        _read_observer()
    blobs: dict[str, bytes] = {}
    ops = [op for op in ops if not _remembered(op, blobs, views)]
    if not ops:
        return blobs
    with ops[0].context, ir.Location.unknown():
        scratch = ir.Module.create()
        ip = ir.InsertionPoint(scratch.body)
        for op in ops:
            op.clone(ip)
        text = scratch.operation.get_asm(large_elements_limit=None)
    section = text[text.find("{-#"):]
    for m in _RESOURCE_BLOB.finditer(section):
        name = m.group(1)
        blobs[name[1:-1] if name.startswith('"') else name] = bytes.fromhex(m.group(2))[4:]
    return blobs
