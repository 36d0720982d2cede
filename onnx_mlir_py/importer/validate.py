"""Reject invalid ONNX models before any MLIR is built.

``validate_model`` runs once at model load (``prepare_model``, so for
``compile()``, the CLI and the backend alike) and raises one
:class:`~onnx_mlir_py.errors.InvalidModelError` whose one-line message names
the node, value or version at fault. It follows what onnxruntime refuses at
load time (and ``onnx.checker`` where onnxruntime is silent but the model is
ambiguous):

- a value defined twice: two nodes with one output name, a node output that
  redefines a graph input, an initializer or (in a subgraph) a value of an
  enclosing graph; graph inputs or initializers listed twice;
- an input that no graph input, initializer or node defines; a cycle. The
  main graph may list its nodes out of order (onnxruntime sorts it, and so do
  we: the returned model is then a sorted copy); subgraphs and function
  bodies must be in order, as onnxruntime requires;
- an IR version or an opset of a domain ``onnx`` knows that is newer than the
  installed ``onnx`` (or below 1); conflicting imports of one domain; no
  import of the default domain;
- (not refused: a declared dim below 0, which exporters such as Paddle2ONNX
  write for a dynamic dim; onnxruntime reads every negative ``dim_value`` as
  unknown, and so do we, with one :class:`NegativeDimWarning` per value);
- malformed subgraphs: a missing required branch/body, a graph attribute the
  op does not take, a body whose input/output counts do not fit its node, a
  subgraph output that is only a value of the enclosing graph.

Model-local functions are checked the same way (their own scope, no outer
values). Everything is one pass over nodes and value names (hash sets, no
quadratic work); initializers are looked at through name and dims only.
"""
from __future__ import annotations

import heapq

import onnx
from onnx import defs

import warnings

from onnx_mlir_py.errors import InvalidModelError, NegativeDimWarning

GRAPH_KINDS = (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)


def node_label(node: onnx.NodeProto) -> str:
    """The name users see in messages and MLIR locations."""
    return node.name or (f"{node.op_type}:{node.output[0]}" if node.output else node.op_type)


def _at(node: onnx.NodeProto) -> str:
    return f"node '{node_label(node)}' ({node.op_type})"


def _fail(where: str, msg: str):
    raise InvalidModelError(where + msg)


# -- versions -----------------------------------------------------------------
def _known_versions() -> dict[str, tuple[int, int]]:
    """domain -> (lowest, highest) opset the installed onnx has schemas for."""
    try:
        return dict(defs.C.schema_version_map())
    except AttributeError:  # older onnx: from its version table
        out: dict[str, tuple[int, int]] = {}
        for (dom, v) in onnx.helper.OP_SET_ID_VERSION_MAP:
            dom = "" if dom == "ai.onnx" else dom
            lo, hi = out.get(dom, (1, 0))
            out[dom] = (lo, max(hi, v))
        return out


def _opsets(imports, where: str, known) -> dict[str, int]:
    out: dict[str, int] = {}
    for o in imports:
        dom = "" if o.domain == "ai.onnx" else o.domain
        shown = o.domain or "ai.onnx"
        if dom in out and out[dom] != o.version:
            _fail(where, f"domain '{shown}' is imported twice, at opset {out[dom]} and "
                         f"{o.version}")
        out[dom] = o.version
        if dom in known:
            lo, hi = known[dom]
            if o.version > hi:
                _fail(where, f"opset {o.version} of domain '{shown}' is newer than the "
                             f"installed onnx {onnx.__version__} knows (up to {hi})")
            if o.version < lo:
                _fail(where, f"opset {o.version} of domain '{shown}' is not a valid version "
                             f"(the first is {lo})")
    return out


def _check_ir_version(model: onnx.ModelProto) -> None:
    if model.ir_version > onnx.IR_VERSION:
        _fail("", f"IR version {model.ir_version} is newer than the installed onnx "
                  f"{onnx.__version__} knows (up to {onnx.IR_VERSION})")
    if model.ir_version < 0:
        _fail("", f"IR version {model.ir_version} is not a valid version")


# -- declared types -------------------------------------------------------------
def _negative_dims(tp: onnx.TypeProto) -> list:
    """The dim protos of ``tp`` (through sequences, optionals and maps) that
    declare a negative ``dim_value``."""
    kind = tp.WhichOneof("value")
    if kind in ("tensor_type", "sparse_tensor_type"):
        t = getattr(tp, kind)
        return [d for d in t.shape.dim if d.HasField("dim_value") and d.dim_value < 0] \
            if t.HasField("shape") else []
    if kind in ("sequence_type", "optional_type"):
        return _negative_dims(getattr(tp, kind).elem_type)
    if kind == "map_type":
        return _negative_dims(tp.map_type.value_type)
    return []


def _value_infos(g: onnx.GraphProto, where: str):
    """(what, value_info, where) of every declared type of ``g`` and of the
    subgraphs of its nodes."""
    for what, vis in (("graph input", g.input), ("graph output", g.output),
                      ("value_info", g.value_info)):
        for vi in vis:
            yield what, vi, where
    for node in g.node:
        for a in node.attribute:
            if a.type in GRAPH_KINDS:
                for sg in ([a.g] if a.type == onnx.AttributeProto.GRAPH else a.graphs):
                    yield from _value_infos(sg, f"{where}{_at(node)}, subgraph '{sg.name}': ")


def _all_value_infos(model: onnx.ModelProto):
    yield from _value_infos(model.graph, "")
    for f in model.functions:
        where = f"function '{f.domain + '.' if f.domain else ''}{f.name}': "
        for vi in getattr(f, "value_info", []):
            yield "value_info", vi, where


def _negative_dims_as_dynamic(model: onnx.ModelProto) -> onnx.ModelProto:
    """``model``, or a copy whose negative declared dims are unknown dims,
    with one NegativeDimWarning per declared value (Paddle2ONNX writes
    ``dim_value: -1`` for a dynamic dim; onnxruntime reads any negative
    value as unknown)."""
    if not any(vi.HasField("type") and _negative_dims(vi.type)
               for _, vi, _ in _all_value_infos(model)):
        return model
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    for what, vi, where in _all_value_infos(copy):
        dims = _negative_dims(vi.type) if vi.HasField("type") else []
        if not dims:
            continue
        shown = ", ".join(str(d.dim_value) for d in dims)
        warnings.warn(NegativeDimWarning(
            f"{where}{what} '{vi.name}' declares a negative dim ({shown}): read as a "
            f"dynamic dim, as onnxruntime does"), stacklevel=2)
        for d in dims:
            d.ClearField("dim_value")
    return copy


# -- subgraph arities ------------------------------------------------------------
_GRAPH_OPS: dict[tuple[str, str], bool] = {}


def _takes_graphs(domain: str, op_type: str) -> bool:
    """Whether the op ``(domain, op_type)`` takes graph attributes (If, Loop,
    Scan, ...), from its newest schema; remembered per op. (Not a set of
    every such op from all ~660 schemas with history: ~20 ms of each
    import, #29.)"""
    key = (domain, op_type)
    found = _GRAPH_OPS.get(key)
    if found is None:
        kinds = (defs.OpSchema.AttrType.GRAPH, defs.OpSchema.AttrType.GRAPHS)
        found = defs.has(op_type, domain) and any(
            a.type in kinds for a in defs.get_schema(op_type, domain).attributes.values())
        _GRAPH_OPS[key] = found
    return found


def _body_arity(node: onnx.NodeProto, since: int, attr: str) -> tuple[int, int] | None:
    """(inputs, outputs) the subgraph ``attr`` of a control-flow node must have."""
    n_in, n_out = len(node.input), len(node.output)
    if node.op_type == "If":
        return 0, n_out
    if node.op_type == "Loop":
        carried = max(n_in - 2, 0)
        return 2 + carried, 1 + n_out
    if node.op_type == "Scan":
        return (n_in - 1 if since == 8 else n_in), n_out
    if node.op_type == "SequenceMap":
        return n_in, n_out
    return None


def _check_graph_attrs(node, opsets, where: str) -> list[tuple[str, onnx.GraphProto]]:
    """The node's subgraphs, after checking they fit its op's schema."""
    graphs = [(a.name, g) for a in node.attribute if a.type in GRAPH_KINDS and not a.ref_attr_name
              for g in ([a.g] if a.type == onnx.AttributeProto.GRAPH else a.graphs)]
    dom = "" if node.domain == "ai.onnx" else node.domain
    if not graphs and not _takes_graphs(dom, node.op_type):
        return graphs
    if dom not in opsets:
        return graphs           # check_supported names the missing domain
    try:
        schema = defs.get_schema(node.op_type, opsets[dom], dom)
    except defs.SchemaError:
        return graphs           # not an onnx op (a local function, ...)
    kinds = (defs.OpSchema.AttrType.GRAPH, defs.OpSchema.AttrType.GRAPHS)
    takes = {n: a for n, a in schema.attributes.items() if a.type in kinds}
    given = {a.name for a in node.attribute}
    for name, _ in graphs:
        if name not in takes:
            _fail(where, f"{_at(node)}: has a graph attribute '{name}', but "
                         f"{node.op_type}-{schema.since_version} takes "
                         + (f"only {', '.join(repr(t) for t in takes)}" if takes else "none"))
    for name, a in takes.items():
        if a.required and name not in given:
            _fail(where, f"{_at(node)}: missing required graph attribute '{name}'")
    for name, g in graphs:
        want = _body_arity(node, schema.since_version, name)
        if want is None:
            continue
        ins, outs = want
        if len(g.input) != ins or len(g.output) != outs:
            _fail(where, f"{_at(node)}: subgraph '{name}' has {len(g.input)} inputs and "
                         f"{len(g.output)} outputs; with {len(node.input)} inputs and "
                         f"{len(node.output)} outputs the node needs {ins} and {outs}")
    return graphs


# -- scopes and graph bodies --------------------------------------------------------
class _Scope:
    """Names visible at a point of a graph, chained to the enclosing graph's."""
    __slots__ = ("names", "parent")

    def __init__(self, parent: "_Scope | None" = None):
        self.names: set[str] = set()
        self.parent = parent

    def has(self, name: str) -> bool:
        s = self
        while s is not None:
            if name in s.names:
                return True
            s = s.parent
        return False


class _Validator:
    def __init__(self, opsets: dict[str, int]):
        self.opsets = opsets

    def body(self, nodes, inputs: list[str], inits: list[str], outputs: list[str],
             parent: _Scope | None, where: str, sortable: bool = False,
             subgraph: bool = False) -> list[int] | None:
        """Check one graph (or function) body; returns a topological order of
        its nodes when ``sortable`` and the listed order is not one."""
        seen: set[str] = set()
        for name in inputs:
            if name in seen:
                _fail(where, f"graph input '{name}' is listed twice")
            seen.add(name)
        own_inits: set[str] = set()
        for name in inits:
            if name in own_inits:
                _fail(where, f"initializer '{name}' is listed twice")
            own_inits.add(name)
        producer: dict[str, int] = {}
        for i, node in enumerate(nodes):
            for o in node.output:
                if not o:
                    continue
                if o in producer:
                    _fail(where, f"value '{o}' is defined twice: by {_at(nodes[producer[o]])} "
                                 f"and by {_at(node)}")
                if o in seen or o in own_inits:
                    kind = "graph input" if o in seen else "initializer"
                    _fail(where, f"{_at(node)}: output '{o}' redefines the {kind} '{o}'")
                producer[o] = i
        scope = _Scope(parent)
        scope.names |= seen
        scope.names |= own_inits
        order = None
        if sortable and not self._in_order(nodes, scope, producer):
            order = self._topological_order(nodes, producer, where)
        for i in (order if order is not None else range(len(nodes))):
            self.node(nodes[i], scope, producer, where)
        for o in outputs:
            if o in scope.names:
                continue
            if subgraph and parent is not None and parent.has(o):
                _fail(where, f"graph output '{o}' is a value of the enclosing graph; a subgraph "
                             "must compute its outputs (add an Identity node)")
            _fail(where, f"graph output '{o}' is never produced")
        return order

    def node(self, node, scope: _Scope, producer: dict[str, int], where: str) -> None:
        if node.domain in ("", "ai.onnx") and "" not in self.opsets:
            _fail(where, f"{_at(node)}: the default domain 'ai.onnx' is not imported "
                         "(no opset_import entry for it)")
        for name in node.input:
            if name and not scope.has(name):
                if name in producer:
                    _fail(where, f"{_at(node)}: input '{name}' is used before the node that "
                                 "defines it (nodes of a subgraph or function must be in "
                                 "topological order)")
                _fail(where, f"{_at(node)}: input '{name}' is not defined before this node "
                             "(no graph input, initializer or node output has that name)")
        for attr, g in _check_graph_attrs(node, self.opsets, where):
            self.graph(g, scope, f"{where}{_at(node)}, {attr} subgraph '{g.name}': ",
                       subgraph=True)
        parent = scope.parent
        for o in node.output:
            if o and parent is not None and parent.has(o):
                _fail(where, f"{_at(node)}: output '{o}' redefines a value of the enclosing "
                             "graph")
            if o:
                scope.names.add(o)

    def graph(self, g: onnx.GraphProto, parent: _Scope | None, where: str,
              sortable: bool = False, subgraph: bool = False) -> list[int] | None:
        inits = [t.name for t in g.initializer] + [t.values.name for t in g.sparse_initializer]
        for t in g.initializer:
            if any(d < 0 for d in t.dims):
                _fail(where, f"initializer '{t.name}' has a negative dim: {list(t.dims)}")
        return self.body(g.node, [i.name for i in g.input], inits, [o.name for o in g.output],
                         parent, where, sortable, subgraph)

    # -- order ------------------------------------------------------------------
    def _in_order(self, nodes, scope: _Scope, producer: dict[str, int]) -> bool:
        """True if every value a node uses (its subgraphs' included) that a
        node of this graph defines is defined by an earlier node."""
        for i, node in enumerate(nodes):
            for name in self._uses(node):
                j = producer.get(name)
                if j is not None and j >= i and not scope.has(name):
                    return False
        return True

    def _uses(self, node) -> list[str]:
        """The node's inputs and the outer values its subgraphs use."""
        names = [n for n in node.input if n]
        for a in node.attribute:
            if a.type in GRAPH_KINDS:
                for g in ([a.g] if a.type == onnx.AttributeProto.GRAPH else a.graphs):
                    names.extend(_free_names(g))
        return names

    def _topological_order(self, nodes, producer: dict[str, int], where: str) -> list[int]:
        """Kahn's algorithm, keeping the listed order where it can."""
        deps = [sorted({producer[n] for n in self._uses(node) if n in producer})
                for node in nodes]
        users: list[list[int]] = [[] for _ in nodes]
        missing = [len(d) for d in deps]
        for i, d in enumerate(deps):
            for j in d:
                users[j].append(i)
        ready = [i for i, m in enumerate(missing) if m == 0]
        heapq.heapify(ready)
        order = []
        while ready:
            i = heapq.heappop(ready)
            order.append(i)
            for u in users[i]:
                missing[u] -= 1
                if missing[u] == 0:
                    heapq.heappush(ready, u)
        if len(order) < len(nodes):
            self._report_cycle(nodes, deps, missing, where)
        return order

    @staticmethod
    def _report_cycle(nodes, deps, missing, where: str):
        # every node left over waits on another left-over node: walk back until one repeats
        i = next(k for k, m in enumerate(missing) if m > 0)
        path, at = [], {}
        while i not in at:
            at[i] = len(path)
            path.append(i)
            i = next(j for j in deps[i] if missing[j] > 0)
        cycle = list(reversed(path[at[i]:]))
        chain = " -> ".join(_at(nodes[k]) for k in cycle + cycle[:1])
        _fail(where, f"the graph has a cycle: {chain}")


def _free_names(g: onnx.GraphProto) -> set[str]:
    """Names a subgraph (nested ones included) uses but does not define."""
    defined = {i.name for i in g.input} | {t.name for t in g.initializer}
    used: set[str] = set()
    for node in g.node:
        used.update(n for n in node.input if n)
        for a in node.attribute:
            if a.type in GRAPH_KINDS:
                for sg in ([a.g] if a.type == onnx.AttributeProto.GRAPH else a.graphs):
                    used |= _free_names(sg)
        defined.update(node.output)
    return used - defined


# -- entry point ----------------------------------------------------------------
def validate_model(model: onnx.ModelProto) -> onnx.ModelProto:
    """Raise InvalidModelError naming what is wrong; return the model (a copy
    with the main graph's nodes sorted when they were listed out of order)."""
    _check_ir_version(model)
    model = _negative_dims_as_dynamic(model)
    known = _known_versions()
    opsets = _opsets(model.opset_import, "", known)
    seen = set()
    for f in model.functions:
        key = (f.domain, f.name, getattr(f, "overload", ""))
        where = f"function '{f.domain + '.' if f.domain else ''}{f.name}': "
        if key in seen:
            _fail("", f"{where[:-2]} is defined twice")
        seen.add(key)
        f_opsets = _opsets(f.opset_import, where, known)
        _Validator(f_opsets).body(f.node, list(f.input), [], list(f.output), None, where)
    order = _Validator(opsets).graph(model.graph, None, "", sortable=True)
    if order is None:
        return model
    sorted_model = onnx.ModelProto()
    sorted_model.CopyFrom(model)
    nodes = [sorted_model.graph.node[i] for i in order]
    kept = [onnx.NodeProto() for _ in nodes]
    for k, n in zip(kept, nodes):
        k.CopyFrom(n)
    del sorted_model.graph.node[:]
    sorted_model.graph.node.extend(kept)
    return sorted_model
