"""``--inputs name:0[1,28,28,3],other:0`` / ``--outputs name:0``: tensor names,
with optional shapes (``-1`` a dynamic dim), as tf2onnx's command line takes them."""
from __future__ import annotations

import re

from onnx_mlir_py.frontends.tensorflow.errors import TensorFlowError

_ITEM = re.compile(r"([\w./\-:]+?)(?:\[(-?\d+(?:,-?\d+)*)?\])?$")


def _split(text: str) -> list[str]:
    """Split at commas outside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts]


def parse_names(text, option: str) -> tuple[list[str], dict[str, list] | None]:
    """(tensor names, {name: shape with None for -1} or None)."""
    items = list(text) if isinstance(text, (list, tuple)) else _split(str(text))
    names, shapes = [], {}
    for item in items:
        m = _ITEM.match(item)
        if not item or m is None:
            raise TensorFlowError(f"{option}: cannot read {item!r}: expected NAME:0 or "
                                  f"NAME:0[D0,D1,...] (-1 = dynamic)")
        name = m.group(1) if ":" in m.group(1) else m.group(1) + ":0"
        names.append(name)
        if m.group(2) is not None:
            shapes[name] = [None if int(d) < 0 else int(d) for d in m.group(2).split(",")]
        elif item.endswith("[]"):
            shapes[name] = []
    return names, (shapes or None)
