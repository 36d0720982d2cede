"""``--onnx-op-stats [TXT|JSON]`` (as in onnx-mlir): the ONNX ops of a model,
counted per op type and schema version, and how each is compiled.

Counted on the module as imported (before ``expand-functions``), nodes of
If/Loop/Scan bodies included. How an op is compiled:

- ``rule``: ``lower-to-linalg`` has a lowering rule for that version;
- ``function``: no rule, but an ONNX function body (the ``expand-functions``
  pass, ``passes/expand_functions.py``, replaces the node by the body's
  ops, listed in ``body_ops``);
- ``none``: neither; compiling to code stops with "unsupported op".
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import mlir.ir as ir

FORMATS = ("TXT", "JSON")


@dataclass
class OpStat:
    domain: str
    op_type: str
    version: int                 # the schema's since_version
    count: int = 0
    lowering: str = "rule"       # rule | function | none | mixed (nodes differ)
    function_nodes: int = 0      # nodes with a function body (when there is no rule)
    body_ops: set = field(default_factory=set)

    def as_json(self) -> dict:
        d = {"domain": self.domain or "ai.onnx", "op_type": self.op_type,
             "version": self.version, "count": self.count, "lowering": self.lowering}
        if self.lowering != "rule":
            d["function_nodes"] = self.function_nodes
            d["body_ops"] = sorted(self.body_ops)
        return d


def op_stats(module: ir.Module) -> list[OpStat]:
    """One :class:`OpStat` per (domain, op type, version), most frequent first."""
    from onnx_mlir_py.dialects.onnx.opview import OnnxOp, is_onnx_op
    from onnx_mlir_py.ir_util import walk_ops
    from onnx_mlir_py.passes.expand_functions import function_body, module_opsets, unlowered
    from onnx_mlir_py.registry import has_lowering
    opsets = module_opsets(module)
    stats: dict[tuple, OpStat] = {}
    with module.context, ir.Location.unknown():
        for op in walk_ops(module, is_onnx_op):
            if op.name == "onnx.constant":          # an initializer, not a node
                continue
            v = OnnxOp(op)
            key = (v.spec.domain, v.op_type, v.version)
            st = stats.setdefault(key, OpStat(*key))
            st.count += 1
            if not unlowered(op):
                continue
            body = function_body(op, opsets)
            if body is not None:
                st.function_nodes += 1
                st.body_ops.update(n.op_type for n in body[0].node)
    for st in stats.values():
        if has_lowering(st.domain, st.op_type, st.version):
            st.lowering = "rule"
        elif st.function_nodes == st.count:
            st.lowering = "function"
        else:
            st.lowering = "none" if st.function_nodes == 0 else "mixed"
    return sorted(stats.values(), key=lambda s: (-s.count, s.domain, s.op_type, s.version))


def render(stats: list[OpStat], fmt: str, opsets: dict[str, int] | None = None) -> str:
    fmt = fmt.upper()
    total = sum(s.count for s in stats)
    if fmt == "JSON":
        out = {"total": total, "op_types": len(stats), "ops": [s.as_json() for s in stats]}
        if opsets is not None:
            out["opset_import"] = {(d or "ai.onnx"): v for d, v in sorted(opsets.items())}
        return json.dumps(out, indent=1)
    head = f"ONNX op stats: {total} ops of {len(stats)} op types"
    if opsets:
        head += " (opsets: " + ", ".join(f"{d or 'ai.onnx'} {v}"
                                         for d, v in sorted(opsets.items())) + ")"
    lines = [head, f"{'op':<34} {'version':>7} {'count':>6}  lowering"]
    for s in stats:
        name = (s.domain + "." if s.domain else "") + s.op_type
        how = s.lowering
        if s.lowering in ("function", "mixed"):
            how += " body: " + ", ".join(sorted(s.body_ops))
        if s.lowering == "mixed":
            how += f" ({s.function_nodes} of {s.count} nodes; the others: none)"
        lines.append(f"{name:<34} {'v' + str(s.version):>7} {s.count:>6}  {how}")
    return "\n".join(lines)
