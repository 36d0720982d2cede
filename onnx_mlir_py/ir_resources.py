"""Reading ``dense_resource`` constants back from MLIR.

The Python bindings give no access to a resource's bytes, and a resource
attribute read back from an op is not downcast, so both go through text:
the attribute's name from its printed form, the blobs from one print of a
scratch module holding clones of the ops (blob = 4-byte alignment + data).
Used by codegen (weights into the .so), the ONNX graph rewrites and the -O3
weight packing (constants evaluated at compile time).
"""
from __future__ import annotations

import re

import mlir.ir as ir

_RESOURCE_NAME = re.compile(r"^dense_resource<(.+?)>")
_RESOURCE_BLOB = re.compile(r'(?m)^\s*("(?:[^"\\]|\\.)*"|[^\s:]+):\s*"0x([0-9A-Fa-f]*)"')


def resource_name(attr: ir.Attribute) -> str | None:
    """The resource key of a ``dense_resource<...>`` attribute, else None."""
    if isinstance(attr, ir.DenseElementsAttr):
        return None
    m = _RESOURCE_NAME.match(str(attr))
    return m.group(1) if m else None


def resource_blobs(ops: list[ir.Operation]) -> dict[str, bytes]:
    """{resource key: data bytes} of the resources the ``ops`` refer to."""
    if not ops:
        return {}
    with ops[0].context, ir.Location.unknown():
        scratch = ir.Module.create()
        ip = ir.InsertionPoint(scratch.body)
        for op in ops:
            op.clone(ip)
        text = scratch.operation.get_asm(large_elements_limit=None)
    section = text[text.find("{-#"):]
    blobs = {}
    for m in _RESOURCE_BLOB.finditer(section):
        name = m.group(1)
        blobs[name[1:-1] if name.startswith('"') else name] = bytes.fromhex(m.group(2))[4:]
    return blobs
