"""Multidirectional (numpy) broadcasting, shared by elementwise rules."""
from __future__ import annotations

from onnx_mlir_py.dialects.onnx.opview import OnnxOp, Shape


def broadcast_shapes(op: OnnxOp, shapes: list[Shape | None]) -> Shape | None:
    """Numpy broadcast of known shapes; None if any rank is unknown.
    Incompatible static dims fail naming the node."""
    if any(s is None for s in shapes):
        return None
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for k in range(rank):
        dims = [s[len(s) - rank + k] for s in shapes if len(s) - rank + k >= 0]
        static = {d for d in dims if d is not None and d != 1}
        if len(static) > 1:
            op.fail(f"inputs are not broadcast-compatible: "
                    f"{' vs '.join(_fmt(s) for s in shapes)}")
        if static:
            out.append(static.pop())
        elif any(d is None for d in dims):
            # 1 vs ? is ?, ? vs ? is ?
            out.append(None)
        else:
            out.append(1)
    return tuple(out)


def _fmt(s: Shape) -> str:
    return "[" + "x".join("?" if d is None else str(d) for d in s) + "]"
