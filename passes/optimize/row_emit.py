"""The fused elementwise ops of a kernel (an epilogue or a prologue matched
by :mod:`.kernel_fusion`) applied to a vector value, through the typed
emitter of :mod:`.kernel_emit` (row kernel, direct conv, dynamic convs and
pools)."""
from __future__ import annotations

from onnx_mlir_py.passes.optimize.kernel_emit import Emitter, Value


def emit_ops(e: Emitter, ops: tuple, result: str, val: Value, caps: list[Value]) -> Value:
    """The fused elementwise ``ops`` (see :class:`.row_plan.Conv`: names
    ``%e_in``, ``%e_cap<k>`` and results) on vector ``val``; captured scalar
    k is the vector ``caps[k]``. Every op has ``val``'s type."""
    names: dict[str, Value] = {"%e_in": val}
    for op_name, res, opnds, attrs in ops:
        for a in opnds:
            if a.startswith("%e_cap"):
                names.setdefault(a, caps[int(a[len("%e_cap"):])])
        names[res] = e.op("ep", f"{op_name} {', '.join(str(names[a]) for a in opnds)}{attrs} "
                                f": {val.type}", val.type)
    return names[result]
