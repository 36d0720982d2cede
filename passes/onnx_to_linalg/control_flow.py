"""If / Loop / Scan -> scf.if / scf.while / scf.for.

The ONNX op's region blocks are *moved* into the scf op (their ONNX ops are
lowered afterwards by the driver, which collected them in program order),
and the region terminator (``gpu.yield``, see importer/nodes.py) is replaced
by ``scf.yield``. Values crossing the region boundary stay tensors: the
iteration number of Loop is carried as ``tensor<i64>`` and its condition as
``tensor<i1>``, exactly the types the ONNX body expects.

Scan outputs (Loop's trailing body results; Scan's outputs) are written into
a tensor with one slot per iteration: Loop needs its trip count ``M`` for
that, and the slots past an early exit (``cond`` false) are cut off. Scan
(v9+) becomes an scf.for over the scan axis of its first scan input, the
body ops moved into the loop; v8 (a leading batch dim everywhere,
sequence_lens) runs that loop in an scf.for over the batch.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import builtin, arith, scf, tensor

from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, to_signless
from onnx_mlir_py.dialects.onnx import dims as D
from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import checks, require_same_dim

TERMINATOR = "gpu.yield"
IF_VERSIONS = (1, 11, 13, 16, 19, 21, 23, 24, 25)
LOOP_VERSIONS = (1, 11, 13, 16, 19, 21, 23, 24, 25)
SCAN_VERSIONS = (8, 9, 11, 16, 19, 21, 23, 24, 25)


def _ranked(op: OnnxOp, t: ir.Type, what: str, cls=None) -> ir.RankedTensorType:
    """``cls``: the error class (an If result: ``NeedsInputShapesError``, the
    rank may follow from the input shapes)."""
    t = to_signless(t)
    if not isinstance(t, ir.RankedTensorType) and str(t) != "!llvm.ptr":
        why = "its rank is known only at run time" if cls is not None else \
            "rank-changing loop state is not supported"
        op.fail(f"{what} has type {t}; only tensors of known rank can be lowered ({why})",
                **({"cls": cls} if cls is not None else {}))
    return t


def _terminator(block: ir.Block) -> ir.Operation:
    ops = list(block.operations)
    if not ops or ops[-1].operation.name != TERMINATOR:
        raise AssertionError("ONNX region without its gpu.yield terminator")
    return ops[-1].operation


def _cast(v: ir.Value, t: ir.Type) -> ir.Value:
    """tensor.cast when only static-ness differs (branches and iterations may
    produce more static shapes than the op's result). A sequence / optional
    a body yields is lowered after the op: an unrealized cast to
    ``!llvm.ptr`` until then (it folds away)."""
    if v.type == t:
        return v
    if str(t) == "!llvm.ptr":
        return builtin.unrealized_conversion_cast([t], [v])
    return tensor.cast(t, v)


def _scalar(v: ir.Value) -> ir.Value:
    """The element of a one-element tensor (a condition may be [] or [1])."""
    rank = ir.RankedTensorType(v.type).rank
    zero = [arith.constant(ir.IndexType.get(), 0) for _ in range(rank)]
    return tensor.extract(v, zero)


def _single_element(op: OnnxOp, b: LoweringContext, v: ir.Value) -> ir.Value:
    """The one element of If's ``cond`` (rank 0, or any rank with one
    element, as onnxruntime accepts); a dynamic dim is checked to be 1 at run time."""
    t = b.ranked(op, v, "cond")
    if t.rank == 0:
        return _scalar(v)
    from onnx_mlir_py.passes.onnx_to_linalg.dims_ir import IxVal
    chk = checks(op, b)
    for k in range(t.rank):
        if t.is_dynamic_dim(k):
            d = IxVal(b.dim(v, k))
            chk.require(D.eq(d, 1), f"cond dim {k} is {{0}}: expected a single element", d)
        elif t.shape[k] != 1:
            op.fail(f"cond has shape {list(t.shape)}: expected a single element")
    return tensor.extract(v, [b.index(0)] * t.rank)


def _as_tensor(x: ir.Value) -> ir.Value:
    return tensor.from_elements(ir.RankedTensorType.get([], x.type), [x])


def _region(op: OnnxOp, name: str) -> ir.Region:
    """Regions are ordered like the op's graph attributes (spec.regions)."""
    return op.op.regions[op.spec.regions.index(name)]


def _move_body(src: ir.Region, dst: ir.Region) -> ir.Block:
    block = src.blocks[0]
    block.append_to(dst)
    return block


# -- If -----------------------------------------------------------------------
def _rank_differs(op: OnnxOp, t: ir.Type, a: ir.Type, b: ir.Type, what: str) -> None:
    """Refuse a value whose rank is not one rank (``t`` unranked because ``a``
    and ``b``, two ways of computing it, have different ranks)."""
    if not isinstance(to_signless(t), ir.RankedTensorType) and \
            isinstance(a, ir.RankedTensorType) and isinstance(b, ir.RankedTensorType) and \
            a.rank != b.rank:
        op.fail(f"{what}: the ranks differ, and a value whose rank is known only at run "
                "time cannot be lowered")


def _branch_ranks_differ(t: ir.Type, a: ir.Type, b: ir.Type) -> bool:
    """If branches yield ``a`` and ``b`` of different ranks for a result of
    type ``t`` that is not the higher rank ``rank_if_results`` gives
    (dialects/onnx/ops/control_flow_rank.py: unit dims prepended). A rank a
    declared output type gave (torch declares the export-time branch's) is
    not one: the other branch's values would be cast or padded to it."""
    from onnx_mlir_py.dialects.onnx.ops.control_flow_rank import unit_prefix_type
    if not (isinstance(a, ir.RankedTensorType) and isinstance(b, ir.RankedTensorType)) or \
            a.rank == b.rank:
        return False
    padded = unit_prefix_type(a, b)
    t = to_signless(t)
    return not (isinstance(t, ir.RankedTensorType) and padded is not None and
                t.rank == padded.rank)


def lower_if(op: OnnxOp, b: LoweringContext):
    from onnx_mlir_py.errors import NeedsInputShapesError
    branches = [op.op.regions[op.spec.regions.index(n)] for n in ("then_branch", "else_branch")]
    ys = [list(_terminator(r.blocks[0]).operands) for r in branches]
    for i, r in enumerate(op.results):
        if i < min(len(ys[0]), len(ys[1])) and _branch_ranks_differ(r.type, ys[0][i].type,
                                                                    ys[1][i].type):
            op.fail(f"output #{i} is {ys[0][i].type} in then_branch and {ys[1][i].type} in "
                    "else_branch: the ranks differ, and a value whose rank is known only at "
                    "run time cannot be lowered", NeedsInputShapesError)
    res_types = [_ranked(op, r.type, f"result #{i}", NeedsInputShapesError)
                 for i, r in enumerate(op.results)]
    cond = _single_element(op, b, op.input(0))
    if_op = scf.IfOp(cond, res_types, has_else=True)
    for k, (src, dst) in enumerate(zip(branches, if_op.operation.regions)):
        # scf.IfOp made empty blocks; replace them with the ONNX branches.
        for blk in list(dst.blocks):
            _erase_block(blk)
        block = _move_body(src, dst)
        term = _terminator(block)
        if len(term.operands) != len(res_types):
            op.fail(f"{'then' if k == 0 else 'else'}_branch yields {len(term.operands)} values "
                    f"for {len(res_types)} results")
        with ir.InsertionPoint(term), term.location:
            scf.YieldOp([_cast(_unit_prefix(b, v, t), t) for v, t in zip(term.operands, res_types)])
        term.erase()
    return list(if_op.results)


def _unit_prefix(b: LoweringContext, v: ir.Value, t: ir.Type) -> ir.Value:
    """A branch value of lower rank than the If result (dialects/onnx/ops/
    control_flow_rank.py: they differ by leading unit dims) with those dims."""
    if not isinstance(v.type, ir.RankedTensorType) or not isinstance(t, ir.RankedTensorType) \
            or v.type.rank >= t.rank:
        return v
    from onnx_mlir_py.passes.onnx_to_linalg.reshape import expand
    k, r = t.rank - v.type.rank, v.type.rank
    groups = [list(range(k + 1))] + [[k + i] for i in range(1, r)] if r else []
    return expand(b, v, groups, [1] * k + b.dims(v))


def _erase_block(block: ir.Block) -> None:
    for o in reversed(list(block.operations)):
        o.operation.erase()
    # An empty block left in the region would make it invalid: move it out by
    # detaching into a throw-away region of a temporary op.
    tmp = ir.Operation.create("builtin.module", regions=1)
    block.append_to(tmp.regions[0])
    tmp.erase()


# -- Loop ---------------------------------------------------------------------
def lower_loop(op: OnnxOp, b: LoweringContext):
    m_in, cond_in = op.input(0), op.input(1)
    inits = op.variadic()
    body = _region(op, "body").blocks[0]
    n_state = len(inits)
    results = op.results
    n_scan = len(results) - n_state
    term = _terminator(body)
    if len(term.operands) != 1 + n_state + n_scan:
        op.fail(f"body yields {len(term.operands)} values, expected 1 + {n_state} loop-carried "
                f"+ {n_scan} scan outputs")
    if len(body.arguments) != 2 + n_state:
        op.fail(f"body takes {len(body.arguments)} inputs, expected 2 + {n_state}")
    for k, (v, y) in enumerate(zip(inits, list(term.operands)[1:])):
        _rank_differs(op, body.arguments[2 + k].type, v.type, y.type,
                      f"loop-carried value #{k} starts as {v.type} and the body yields {y.type}")
    i64, i1 = ir.IntegerType.get_signless(64), ir.IntegerType.get_signless(1)
    idx = ir.IndexType.get()
    state_types = [_ranked(op, a.type, f"loop-carried body input #{k + 2}")
                   for k, a in enumerate(list(body.arguments)[2:])]
    if n_scan and m_in is None:
        op.fail("scan outputs need the trip count input M (a loop bounded only by its "
                "condition has no known output length)")
    max_trip = arith.index_cast(idx, _scalar(m_in)) if m_in is not None else None
    # Scan accumulators: [M, *elem] with one slot per iteration. Dynamic
    # per-iteration dims are known only once the first iteration ran: the
    # buffer is allocated then (``_scan_buffer``), until then its dims are 0.
    acc_types, accs = [], []
    for k in range(n_scan):
        rt = _ranked(op, results[n_state + k].type, f"scan output #{k}")
        et = _ranked(op, term.operands[1 + n_state + k].type, f"scan output #{k} of the body")
        acc_t = ir.RankedTensorType.get([ir.ShapedType.get_dynamic_size()] + list(et.shape),
                                        rt.element_type)
        accs.append(tensor.empty([max_trip] + [b.index(0) if et.is_dynamic_dim(j) else d
                                               for j, d in enumerate(et.shape)],
                                 rt.element_type))
        acc_types.append(acc_t)
    it_t = ir.RankedTensorType.get([], i64)
    cond_t = ir.RankedTensorType.get([], i1)
    true = _as_tensor(arith.constant(i1, 1))
    init_vals = [_as_tensor(arith.constant(i64, 0)),
                 cond_in if cond_in is not None else true] + \
        [_cast(v, t) for v, t in zip(inits, state_types)] + accs
    types = [it_t, cond_t] + state_types + acc_types
    w = scf.WhileOp(types, init_vals)
    before = w.before.blocks.append(*types)
    with ir.InsertionPoint(before):
        it = arith.index_cast(idx, _scalar(before.arguments[0]))
        go = _scalar(before.arguments[1])
        if max_trip is not None:
            go = arith.andi(go, arith.cmpi(arith.CmpIPredicate.slt, it, max_trip))
        scf.ConditionOp(go, list(before.arguments))
    # after region: the ONNX body block itself, plus the accumulator arguments
    after = _move_body(_region(op, "body"), w.after)
    for a, t in zip(list(after.arguments), [it_t, cond_t] + state_types):
        old = a.type
        a.set_type(t)
        b.record(a, old)      # uintN / float8 ...: the ONNX type of the state
    acc_args = [after.add_argument(t, op.op.location) for t in acc_types]
    with ir.InsertionPoint(term), term.location:
        outs = list(term.operands)
        it = arith.index_cast(idx, _scalar(after.arguments[0]))
        nxt = _as_tensor(arith.addi(_scalar(after.arguments[0]), arith.constant(i64, 1)))
        first = arith.cmpi(arith.CmpIPredicate.eq, it, arith.constant(idx, 0))
        new_accs = [_insert_row(*reversed(_scan_slot(op, b, k, elem, acc, first, max_trip)), it)
                    for k, (elem, acc) in enumerate(zip(outs[1 + n_state:], acc_args))]
        scf.YieldOp([nxt, _cast(outs[0], cond_t)] +
                    [_cast(v, t) for v, t in zip(outs[1:1 + n_state], state_types)] + new_accs)
    term.erase()
    final = list(w.results)
    out = [_cast(v, to_signless(r.type)) for v, r in zip(final[2:2 + n_state], results)]
    trips = arith.index_cast(idx, _scalar(final[0]))
    for k, acc in enumerate(final[2 + n_state:]):
        rt = to_signless(results[n_state + k].type)
        used = _rows(acc, trips)
        out.append(_cast(used, rt))
    return out


def _scan_slot(op: OnnxOp, b: LoweringContext, k: int, elem: ir.Value, acc: ir.Value,
               first: ir.Value, steps: ir.Value, axis: int = 0) -> tuple[ir.Value, ir.Value]:
    """(accumulator, elem) to insert this iteration's ``elem`` of scan output
    ``k`` into the accumulator (along ``axis``). Dims of the accumulator
    unknown before the first iteration: a fresh buffer of ``steps`` slots of
    elem's dims when ``first``. Dynamic dims of elem: a run-time check that
    they are the accumulator's (every iteration has one shape; ONNX stacks
    them), then elem is cast to the slot's type."""
    et, at = elem.type, acc.type
    pos = [j if j < axis else j + 1 for j in range(et.rank)]
    if any(at.is_dynamic_dim(p) for p in pos):
        idx = ir.IndexType.get()
        fresh = scf.IfOp(first, [at], has_else=True)
        with ir.InsertionPoint(fresh.then_block):
            dims = [tensor.dim(elem, arith.constant(idx, j)) if et.is_dynamic_dim(j) else d
                    for j, d in enumerate(et.shape)]
            # the accumulator's element type: elem may still carry the ONNX
            # one (ui8) when the body is lowered after the op
            buf = tensor.empty(dims[:axis] + [steps] + dims[axis:], at.element_type)
            scf.YieldOp([_cast(buf, at)])
        with ir.InsertionPoint(fresh.else_block):
            scf.YieldOp([acc])
        acc = fresh.results[0]
    ck = checks(op, b)
    for j in range(et.rank):
        if et.is_dynamic_dim(j):
            got, want = b.ixdim(elem, j), b.ixdim(acc, pos[j])
            ck.require(D.eq(got, want), f"scan output #{k}: an iteration yields dim {j} = "
                       "{0}, but the output has {1} there (from an earlier iteration or its "
                       "type); every iteration must yield one shape", got, want)
    slot = ir.RankedTensorType.get([at.shape[p] for p in pos], et.element_type)
    return acc, _cast(elem, slot)


def _offsets(shape, axis: int, at: ir.Value) -> tuple[list, list]:
    """(dynamic offsets, static offsets) of a slice at ``at`` along ``axis``
    and 0 elsewhere. An axis of static size 0 gets its 0 as a value: MLIR's
    slice verifier rejects a static offset 0 into a size-0 dim (a Loop
    carrying a [0, 4] tensor, fuzzer case s2000-141)."""
    dyn = ir.ShapedType.get_dynamic_size()
    zero = None
    values, static = [], []
    for k, d in enumerate(shape):
        if k == axis:
            values.append(at)
            static.append(dyn)
        elif d == 0:
            zero = zero or arith.constant(ir.IndexType.get(), 0)
            values.append(zero)
            static.append(dyn)
        else:
            static.append(0)
    return values, static


def _insert_row(elem: ir.Value, acc: ir.Value, row: ir.Value) -> ir.Value:
    """acc[row] = elem (elem's shape = acc's shape without the leading dim;
    a rank-reducing insert_slice)."""
    r = elem.type.rank
    dyn = ir.ShapedType.get_dynamic_size()
    idx = ir.IndexType.get()
    sizes = [tensor.dim(elem, arith.constant(idx, j)) for j in range(r)
             if elem.type.is_dynamic_dim(j)]
    offs, static = _offsets(acc.type.shape, 0, row)
    return tensor.insert_slice(elem, acc, offs, sizes, [], static_offsets=static,
                               static_sizes=[1] + list(elem.type.shape),
                               static_strides=[1] * (r + 1))


def _rows(acc: ir.Value, n: ir.Value) -> ir.Value:
    """acc[0:n]."""
    t = acc.type
    dyn = ir.ShapedType.get_dynamic_size()
    rest = [tensor.dim(acc, arith.constant(ir.IndexType.get(), j))
            for j in range(1, t.rank) if t.is_dynamic_dim(j)]
    out_t = ir.RankedTensorType.get([dyn] + list(t.shape)[1:], t.element_type)
    offs, static = _offsets(t.shape, -1, None)
    return tensor.extract_slice(out_t, acc, offs, [n] + rest, [],
                                static_offsets=static,
                                static_sizes=[dyn] + list(t.shape)[1:],
                                static_strides=[1] * t.rank)


# -- Scan (v9+) -----------------------------------------------------------------
def _slice_along(x: ir.Value, axis: int, at: ir.Value) -> ir.Value:
    """x[..., at, ...] along ``axis`` (rank-reducing extract_slice)."""
    t = x.type
    dyn = ir.ShapedType.get_dynamic_size()
    idx = ir.IndexType.get()
    sizes = [1 if k == axis else t.shape[k] for k in range(t.rank)]
    dyn_sizes = [tensor.dim(x, arith.constant(idx, k)) for k in range(t.rank)
                 if k != axis and t.is_dynamic_dim(k)]
    out_t = ir.RankedTensorType.get([t.shape[k] for k in range(t.rank) if k != axis],
                                    t.element_type)
    offs, static = _offsets(t.shape, axis, at)
    return tensor.extract_slice(out_t, x, offs, dyn_sizes, [],
                                static_offsets=static,
                                static_sizes=sizes, static_strides=[1] * t.rank)


def _insert_along(elem: ir.Value, acc: ir.Value, axis: int, at: ir.Value) -> ir.Value:
    t = acc.type
    dyn = ir.ShapedType.get_dynamic_size()
    idx = ir.IndexType.get()
    dyn_sizes = [tensor.dim(acc, arith.constant(idx, k)) for k in range(t.rank)
                 if k != axis and t.is_dynamic_dim(k)]
    offs, static = _offsets(t.shape, axis, at)
    return tensor.insert_slice(elem, acc, offs, dyn_sizes, [],
                               static_offsets=static,
                               static_sizes=[1 if k == axis else t.shape[k]
                                             for k in range(t.rank)],
                               static_strides=[1] * t.rank)


def _axes(op: OnnxOp, name: str, n: int, ranks: list[int]) -> list[int]:
    given = getattr(op.attrs, name)
    vals = list(given) if given is not None and len(given) else [0] * n
    if len(vals) != n:
        op.fail(f"'{name}' has {len(vals)} entries for {n} values")
    out = []
    for a, r in zip(vals, ranks):
        a = a + r if a < 0 else a
        if not 0 <= a < r:
            op.fail(f"'{name}': axis {a} out of range for rank {r}")
        out.append(a)
    return out


def _directions(op: OnnxOp, name: str, n: int) -> list[int]:
    given = getattr(op.attrs, name)
    return list(given) if given is not None and len(given) else [0] * n


def lower_scan(op: OnnxOp, b: LoweringContext):
    vals = op.variadic()
    n_in = op.attrs.num_scan_inputs
    n_state = len(vals) - n_in
    results = op.results
    n_out = len(results) - n_state
    _check_signature(op, len(vals))
    scans = [vals[n_state + k] for k in range(n_in)]
    in_types = [_ranked(op, v.type, f"scan input #{k}") for k, v in enumerate(scans)]
    out_types = [_ranked(op, r.type, f"scan output #{k}")
                 for k, r in enumerate(results[n_state:])]
    in_axes = _axes(op, "scan_input_axes", n_in, [t.rank for t in in_types])
    out_axes = _axes(op, "scan_output_axes", n_out, [t.rank for t in out_types])
    in_dirs = _directions(op, "scan_input_directions", n_in)
    out_dirs = _directions(op, "scan_output_directions", n_out)
    n_steps = b.dim(scans[0], in_axes[0])          # int when static
    for k in range(1, n_in):                        # every scan input has that many steps
        require_same_dim(op, b, scans[k], in_axes[k], scans[0], in_axes[0],
                         f"scan input #{k}", "scan input #0")
    final = _scan_steps(op, b, vals[:n_state], scans, in_axes, in_dirs, out_types, out_axes,
                        out_dirs, n_steps, b.as_index(n_steps))
    return [_cast(v, to_signless(r.type)) for v, r in zip(final, results)]


def _check_signature(op: OnnxOp, n_vals: int) -> None:
    body = _region(op, "body").blocks[0]
    n_body_out = len(_terminator(body).operands)
    if len(op.results) > n_vals or len(body.arguments) != n_vals or \
            n_body_out != len(op.results):
        op.fail(f"body signature does not match: {len(body.arguments)} body inputs for "
                f"{n_vals} op inputs, {n_body_out} body outputs for {len(op.results)} "
                "op outputs")


def _scan_steps(op: OnnxOp, b: LoweringContext, states: list, scans: list, in_axes, in_dirs,
                out_types, out_axes, out_dirs, n_slots, n_iter: ir.Value,
                zero_fill: bool = False) -> list[ir.Value]:
    """The body, moved into an scf.for of ``n_iter`` steps over ``scans``
    (along ``in_axes``; direction 1: from step n_iter - 1 down), carrying
    ``states``; the scan outputs stacked along ``out_axes`` into tensors of
    ``n_slots`` slots (``out_types``; zeros where no step writes with
    ``zero_fill``). Returns the final states and the scan outputs."""
    body = _region(op, "body").blocks[0]
    term = _terminator(body)
    n_state = len(states)
    state_types = [_ranked(op, a.type, f"state #{k}")
                   for k, a in enumerate(list(body.arguments)[:n_state])]
    idx = ir.IndexType.get()
    accs = []   # dynamic per-iteration dims: 0 until the first iteration (_scan_buffer)
    for t, ax in zip(out_types, out_axes):
        dims = [n_slots if k == ax else b.index(0) if t.is_dynamic_dim(k) else t.shape[k]
                for k in range(t.rank)]
        et = t.element_type
        buf = b.full(dims, et, 0.0 if isinstance(et, ir.FloatType) else 0) if zero_fill \
            else tensor.empty(dims, et)
        accs.append(_cast(buf, t))
    acc_types = [a.type for a in accs]
    inits = [_cast(v, t) for v, t in zip(states, state_types)] + accs
    zero, one = arith.constant(idx, 0), arith.constant(idx, 1)
    last = arith.subi(n_iter, one)
    loop = scf.ForOp(zero, n_iter, one, inits)
    with ir.InsertionPoint(loop.body):
        i = loop.induction_variable
        rev = arith.subi(last, i)
        carried = list(loop.inner_iter_args)
        slices = [_slice_along(x, ax, rev if d else i)
                  for x, ax, d in zip(scans, in_axes, in_dirs)]
        new_args = carried[:n_state] + slices
        anchor = scf.YieldOp([])      # placeholder: body ops go before it
    for a, nv in zip(list(body.arguments), new_args):
        b.record(nv, a.type)
        a.replace_all_uses_with(nv)
    for o in list(body.operations):
        o.operation.move_before(anchor.operation)
    with ir.InsertionPoint(anchor), term.location:
        outs = list(term.operands)
        first = arith.cmpi(arith.CmpIPredicate.eq, i, zero)
        new_accs = [_insert_along(*reversed(_scan_slot(op, b, k, e, acc, first,
                                                       b.as_index(n_slots), ax)),
                                  ax, rev if d else i)
                    for k, (e, acc, ax, d) in enumerate(zip(outs[n_state:], carried[n_state:],
                                                            out_axes, out_dirs))]
        scf.YieldOp([_cast(v, t) for v, t in zip(outs[:n_state], state_types)] + new_accs)
    term.erase()
    anchor.operation.erase()
    return list(loop.results)


def lower_scan8(op: OnnxOp, b: LoweringContext):
    """Scan v8: every state and scan input has a leading batch dim (scan
    inputs [B, seq, ...]), and so has every output. An outer scf.for over the
    batch runs the v9 loop (``_scan_steps``) on row b of each input, for
    sequence_lens[b] steps when given (checked in [0, seq]; the scan outputs'
    slots past it are zeros, as onnxruntime), and stacks the rows' results."""
    seq_lens, vals = op.input(0), op.variadic()
    n_in = op.attrs.num_scan_inputs
    n_state = len(vals) - n_in
    results = op.results
    n_out = len(results) - n_state
    if n_in < 1 or n_state < 0:
        op.fail(f"num_scan_inputs = {n_in}: expected 1..{len(vals)} (the inputs)")
    _check_signature(op, len(vals))
    for k, v in enumerate(vals):
        if _ranked(op, v.type, f"input #{k}").rank < (2 if k >= n_state else 1):
            op.fail(f"input #{k} has rank {v.type.rank}: expected a leading batch dim"
                    f"{' and a sequence dim' if k >= n_state else ''}")
    res_types = [_ranked(op, r.type, f"output #{k}") for k, r in enumerate(results)]
    dirs = _directions(op, "directions", n_in)
    if len(dirs) != n_in:
        op.fail(f"'directions' has {len(dirs)} entries for {n_in} scan inputs")
    scans = vals[n_state:]
    batch = b.dim(vals[0], 0)
    for k in range(1, len(vals)):
        require_same_dim(op, b, vals[k], 0, vals[0], 0, f"input #{k}", "input #0")
    seq = b.dim(scans[0], 1)
    for k in range(1, n_in):
        require_same_dim(op, b, scans[k], 1, scans[0], 1, f"scan input #{k}", "scan input #0")
    idx = ir.IndexType.get()
    if seq_lens is not None:
        if _ranked(op, seq_lens.type, "sequence_lens").rank != 1:
            op.fail("sequence_lens must be 1-D [batch]")
        require_same_dim(op, b, seq_lens, 0, vals[0], 0, "sequence_lens", "input #0")
    # per-row scan outputs [seq, ...]: rows of the batch accumulators
    row_types = [ir.RankedTensorType.get(list(t.shape)[1:], t.element_type)
                 for t in res_types[n_state:]]
    accs = []
    for t in res_types:
        dims = [batch] + [b.index(0) if t.is_dynamic_dim(k) else t.shape[k]
                          for k in range(1, t.rank)]
        accs.append(_cast(tensor.empty(dims, t.element_type), t))
    zero, one = arith.constant(idx, 0), arith.constant(idx, 1)
    outer = scf.ForOp(zero, b.as_index(batch), one, accs)
    with ir.InsertionPoint(outer.body):
        r = outer.induction_variable
        rows = [_slice_along(v, 0, r) for v in vals]
        n_iter = b.as_index(seq)
        if seq_lens is not None:
            n = arith.index_cast(idx, tensor.extract(seq_lens, [r]))
            ok = arith.andi(arith.cmpi(arith.CmpIPredicate.sge, n, zero),
                            arith.cmpi(arith.CmpIPredicate.sle, n, n_iter))
            b.require(ok, f"node '{op.name}' ({op.op_type}): sequence_lens[{{1}}] = {{0}} is "
                      "outside [0, the sequence length {2}]",
                      n, r, n_iter)
            n_iter = n
        final = _scan_steps(op, b, rows[:n_state], rows[n_state:], [0] * n_in, dirs,
                            row_types, [0] * n_out, [0] * n_out, seq, n_iter,
                            zero_fill=seq_lens is not None)
        first = arith.cmpi(arith.CmpIPredicate.eq, r, zero)
        carried = list(outer.inner_iter_args)
        new = [_insert_along(*reversed(_scan_slot(op, b, k, v, acc, first, b.as_index(batch))),
                             0, r)
               for k, (v, acc) in enumerate(zip(final, carried))]
        scf.YieldOp(new)
    return [_cast(v, to_signless(res.type)) for v, res in zip(outer.results, results)]


@lowering("If", *IF_VERSIONS)
def _if(op: OnnxOp, b: LoweringContext):
    return lower_if(op, b)


@lowering("Loop", *LOOP_VERSIONS)
def _loop(op: OnnxOp, b: LoweringContext):
    return lower_loop(op, b)


@lowering("Scan", *SCAN_VERSIONS[1:])
def _scan(op: OnnxOp, b: LoweringContext):
    return lower_scan(op, b)


@lowering("Scan", 8)
def _scan8(op: OnnxOp, b: LoweringContext):
    return lower_scan8(op, b)


for _rule in (_if, _loop, _scan, _scan8):
    _rule.handles_regions = True
