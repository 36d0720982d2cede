"""RNN / GRU / LSTM -> per direction an ``scf.for`` over time steps carrying
H (and C for LSTM) and the direction's output sequence; inside, a
``linalg.matmul`` H·R[d]ᵀ and one elementwise linalg.generic for the gates
(GRU with linear_before_reset=0 needs a second matmul on r ⊙ H). The input
projection of all steps is one ``linalg.matmul`` [S*B, I] x [I, G*H] before
the loop (recurrent_cells.py), as onnxruntime's deep_cpu_lstm/gru do.

sequence_lens: rows past their length keep their state and output zeros;
reverse passes run forward over per-row reversed inputs (recurrent_cells.py).
Y_h / Y_c of a row of length 0 are zeros, as onnxruntime gives them (not
the initial state, which that row carries through the loop).

Bidirectional ops: the two directions (input projection and time loop each)
are the two iterations of an ``scf.forall`` (an ``scf.index_switch`` on the
iteration picks the direction's code) in multi-threaded -O3 builds
(``THREADS_ATTR`` on the module), so they run on two threads.
"""
from __future__ import annotations

import mlir.ir as ir
from mlir.dialects import arith, scf, tensor

from onnx_mlir_py import ir_linalg as linalg
from onnx_mlir_py.check_abi import THREADS_ATTR
from onnx_mlir_py.registry import lowering
from onnx_mlir_py.dialects.onnx.opview import OnnxOp
from onnx_mlir_py.passes.onnx_to_linalg.builder import LoweringContext, val
from onnx_mlir_py.passes.onnx_to_linalg.loops import for_nest
from onnx_mlir_py.passes.onnx_to_linalg.recurrent_cells import (Rec, amap, assemble, clip_fn, gate,
                                                           initial_state, parse, project,
                                                           recurrence_t, reverse_time, step_slice,
                                                           transpose, vec)
from onnx_mlir_py.passes.onnx_to_linalg.tensor_util import (_split_mixed, extract_slice,
                                                            insert_slice, to_index)


def _direction(b: LoweringContext, rec: Rec, d: int, states0: list, fold_limit: int, cell,
               steps=None):
    """Run direction d; cell(t, xw, hr, states, rt) -> (new states, y_t).
    ``steps``: None (xw = step t of the f32 input projection, hr = H·R[d]ᵀ),
    or steps(d) -> step(t, states) -> (xw, hr) emitting other per-step terms
    (DynamicQuantizeLSTM's quantized ones, ms_recurrent.py; rt is then None)."""
    H, gh = rec.hidden, rec.gates * rec.hidden
    rt = None
    if steps is None:
        proj = project(b, rec, d, fold_limit)
        rt = recurrence_t(b, rec, d)
    S, B = b.dim(rec.x, 0), b.dim(rec.x, 1)
    if steps is None:
        def step(t, states):
            hr = linalg.matmul(states[0], rt, outs=[b.full([B, gh], rec.et, 0.0)])
            return step_slice(b, proj, t, B), hr
    else:
        step = steps(d)
    y0 = b.full([S, B, H], rec.et, 0.0)

    def body(ivs, carried):
        (t,) = ivs
        states, y = carried[:-1], carried[-1]
        xw, hr = step(t, states)
        new, yt = cell(t, xw, hr, states, rt)
        return list(new) + [insert_slice(yt, y, [t, 0, 0], [1, B, H])]
    res = for_nest(b, [S], list(states0) + [y0], body)
    y = res[-1]
    if rec.reverse[d]:
        y = reverse_time(b, rec, y)
    return res[:-1], y


def _all_directions(b: LoweringContext, rec: Rec, nstates: int, run) -> tuple[list, list]:
    """(ys, finals) of every direction; run(d) emits direction d and returns
    (states, y). Two directions: an scf.forall over them (module docstring)
    writing Y [S, 2, B, H] and each final state [2, B, H]; ys / finals are
    slices of those ([S, 1, B, H], [1, B, H]: what assemble inserts)."""
    S, B, H = b.dim(rec.x, 0), b.dim(rec.x, 1), rec.hidden
    threads = b.module is not None and THREADS_ATTR in b.module.operation.attributes
    if rec.dirs == 1 or not threads or 0 in (S, B, H):
        res = [run(d) for d in range(rec.dirs)]
        return [y for _, y in res], [st for st, _ in res]
    yt, stt = b.type_of([S, B, H], rec.et), b.type_of([B, H], rec.et)
    outs = [b.empty([S, 2, B, H], rec.et)] + [b.empty([2, B, H], rec.et) for _ in range(nstates)]
    loop = scf.ForallOp([0], [2], [1], outs)
    with ir.InsertionPoint(loop.body):
        d = loop.induction_variables[0]
        sw = scf.IndexSwitchOp([yt] + [stt] * nstates, d, [0])
        for blk, dd in ((sw.case_block(0), 0), (sw.default_block, 1)):
            with ir.InsertionPoint(blk):
                st, y = run(dd)
                scf.YieldOp([tensor.cast(yt, y)] + [tensor.cast(stt, v) for v in st])
        term = loop.terminator()
    with ir.InsertionPoint(term.region.blocks[0]):
        for k, (v, dst) in enumerate(zip(sw.results, loop.inner_iter_args)):
            offs, sizes = ([0, d, 0, 0], [S, 1, B, H]) if k == 0 else ([d, 0, 0], [1, B, H])
            (do, so), (dz, sz) = _split_mixed(offs), _split_mixed(sizes)
            tensor.parallel_insert_slice(v, dst, do, dz, [], so, sz, [1] * len(sizes))
    res = list(loop.results)
    ys = [extract_slice(b, res[0], [0, d, 0, 0], [S, 1, B, H]) for d in range(2)]
    finals = [[extract_slice(b, res[1 + k], [d, 0, 0], [1, B, H]) for k in range(nstates)]
              for d in range(2)]
    return ys, finals


_MAPS = {1: [1], 2: [0, 1], 3: [("c", 0), 0, 1]}


def _cell(b: LoweringContext, rec: Rec, t, states: list, ins: list, fn):
    """Elementwise (B, H) generic. ins: tensors [H], [B, H] or [1, B, H].
    fn(*state scalars, *in scalars) -> new states (unmasked). Returns the new
    states (rows past their sequence length keep the old ones), each copied
    into its loop-carried tensor (``linalg.copy``: the loop yields then
    bufferize in place), and y_t."""
    B = b.dim(rec.x, 1)
    n = len(states)
    vals = list(states) + list(ins)
    maps = [amap(2, _MAPS[v.type.rank]) for v in vals]
    if rec.seq_lens is not None:
        vals.append(rec.seq_lens)
        maps.append(amap(2, [0]))
    outs = [b.empty([B, rec.hidden], rec.et) for _ in range(n + 1)]

    def body(*a):
        old = list(a[:n])
        new = list(fn(*a[:n + len(ins)]))
        if rec.seq_lens is None:
            return new + [new[0]]
        valid = arith.cmpi(arith.CmpIPredicate.ult, t, to_index(a[n + len(ins)]))
        zero = arith.constant(rec.et, 0.0)
        return [arith.select(valid, v, o) for v, o in zip(new, old)] + \
            [arith.select(valid, new[0], zero)]
    res = b.generic(vals, outs, maps + [amap(2, [0, 1])] * len(outs), ["parallel"] * 2, body)
    return [val(linalg.copy(v, outs=[s])) for v, s in zip(res[:n], states)], res[n]


def _zero_empty_rows(b: LoweringContext, rec: Rec, v: ir.Value) -> ir.Value:
    """v ([B, H] or [1, B, H]) with the rows whose sequence length is 0 set to
    0: onnxruntime's Y_h / Y_c there (its RNN, GRU and LSTM kernels fill
    them with zeros), not the initial state those rows carry. Only the
    outputs: the carried state itself is left as it is."""
    if rec.seq_lens is None:
        return v
    n = v.type.rank
    ident = amap(n, list(range(n)))

    def body(x, sl, _o):
        empty = arith.cmpi(arith.CmpIPredicate.eq, to_index(sl), b.index(0))
        return arith.select(empty, arith.constant(rec.et, 0.0), x)
    return b.generic([v, rec.seq_lens], [b.empty(b.dims(v), rec.et)],
                     [ident, amap(n, [n - 2]), ident], ["parallel"] * n, body)[0]


def _outputs(op: OnnxOp, b: LoweringContext, rec: Rec, ys: list, finals: list[list]):
    """Values for the present outputs: Y, then the final states (Y_h, Y_c;
    zero in rows of sequence length 0, _zero_empty_rows)."""
    avail = [lambda: assemble(b, rec, ys, True)] + \
        [lambda k=k: assemble(b, rec, [_zero_empty_rows(b, rec, f[k]) for f in finals], False)
         for k in range(len(finals[0]))]
    out = []
    for k, grp in enumerate(op.result_groups()):
        if grp:
            out.append(avail[k]())
    return out


@lowering("RNN", 7, 14, 22)
def lower_rnn(op: OnnxOp, b: LoweringContext):
    rec = parse(op, b, 1, ["Tanh"])
    clip = clip_fn(rec)
    def run(d):
        (f,) = rec.acts[d]

        def cell(t, xw, hr, states, _rt, f=f):
            return _cell(b, rec, t, states, [xw, hr],
                         lambda h, x, r: [f(clip(arith.addf(x, r)))])
        return _direction(b, rec, d, [initial_state(b, rec, rec.h0, d)], rec.hidden, cell)
    ys, finals = _all_directions(b, rec, 1, run)
    return _outputs(op, b, rec, ys, finals)


@lowering("GRU", 7, 14, 22)
def lower_gru(op: OnnxOp, b: LoweringContext):
    """z, r, h gates; Rbh stays out of the projection (it sits inside r ⊙ (...)
    when linear_before_reset, and is added after (r ⊙ H)·Rhᵀ otherwise)."""
    rec = parse(op, b, 3, ["Sigmoid", "Tanh"])
    lbr = bool(op.attrs.linear_before_reset)
    clip = clip_fn(rec)
    H, gh = rec.hidden, 3 * rec.hidden
    B = b.dim(rec.x, 1)
    one = lambda: arith.constant(rec.et, 1.0)  # noqa: E731
    def run(d):
        f, g = rec.acts[d]
        rbh = [vec(b, rec.bias, d, gh + 2 * H, H)] if rec.bias is not None else []

        def add_rbh(v, rb):
            return arith.addf(v, rb[0]) if rb else v

        def new_h(z, hh, h):  # (1 - z) * hh + z * h
            return arith.addf(arith.mulf(arith.subf(one(), z), hh), arith.mulf(z, h))

        def cell(t, xw, hr, states, rt, f=f, g=g, rbh=rbh):
            xz, xr, xh = (gate(b, xw, k, H) for k in range(3))
            hz, hrr = gate(b, hr, 0, H), gate(b, hr, 1, H)
            if lbr:
                hh = gate(b, hr, 2, H)

                def fn(h, xz, xr, xh, hz, hrr, hh, *rb):
                    z = f(clip(arith.addf(xz, hz)))
                    r = f(clip(arith.addf(xr, hrr)))
                    c = g(clip(arith.addf(xh, arith.mulf(r, add_rbh(hh, rb)))))
                    return [new_h(z, c, h)]
                return _cell(b, rec, t, states, [xz, xr, xh, hz, hrr, hh] + rbh, fn)
            # r ⊙ H first, then (r ⊙ H)·Rhᵀ
            rh = b.generic([states[0], xr, hrr], [b.empty([B, H], rec.et)],
                           [amap(2, [0, 1]), amap(2, _MAPS[2]), amap(2, [0, 1]),
                            amap(2, [0, 1])], ["parallel"] * 2,
                           lambda h, xr_, hr_, _o: arith.mulf(
                               f(clip(arith.addf(xr_, hr_))), h))[0]
            rht = extract_slice(b, rt, [0, 2 * H], [H, H])
            rhr = linalg.matmul(rh, rht, outs=[b.full([B, H], rec.et, 0.0)])

            def fn(h, xz, xh, hz, rr, *rb):
                z = f(clip(arith.addf(xz, hz)))
                c = g(clip(arith.addf(xh, add_rbh(rr, rb))))
                return [new_h(z, c, h)]
            return _cell(b, rec, t, states, [xz, xh, hz, rhr] + rbh, fn)
        return _direction(b, rec, d, [initial_state(b, rec, rec.h0, d)], 2 * H, cell)
    ys, finals = _all_directions(b, rec, 1, run)
    return _outputs(op, b, rec, ys, finals)


LSTM_ACTIVATIONS = ["Sigmoid", "Tanh", "Tanh"]


@lowering("LSTM", 7, 14, 22)
def lower_lstm(op: OnnxOp, b: LoweringContext):
    return lstm(op, b, parse(op, b, 4, LSTM_ACTIVATIONS))


def lstm(op: OnnxOp, b: LoweringContext, rec: Rec, steps=None):
    """i, o, f, c gates; peepholes P = [Pi, Po, Pf]; input_forget: f = 1 - i.
    ``op``'s inputs 6 and 7 are initial_c and P (LSTM and DynamicQuantizeLSTM);
    ``steps``: the per-step terms (see _direction)."""
    c0, p = op.input(6), op.input(7)
    if c0 is not None and rec.layout:
        c0 = transpose(b, c0, [1, 0, 2])
    coupled = bool(op.attrs.input_forget)
    clip = clip_fn(rec)
    H = rec.hidden
    def run(d):
        f, g, hf = rec.acts[d]
        peep = [vec(b, p, d, k * H, H) for k in range(3)] if p is not None else []

        def fn(h, c, xi, xo, xf, xc, ri, ro, rf, rc, *pp, f=f, g=g, hf=hf):
            def with_peep(v, k, cell_state):
                return arith.addf(v, arith.mulf(pp[k], cell_state)) if pp else v
            i = f(clip(with_peep(arith.addf(xi, ri), 0, c)))
            if coupled:
                fg = arith.subf(arith.constant(rec.et, 1.0), i)
            else:
                fg = f(clip(with_peep(arith.addf(xf, rf), 2, c)))
            cc = g(clip(arith.addf(xc, rc)))
            cn = arith.addf(arith.mulf(fg, c), arith.mulf(i, cc))
            o = f(clip(with_peep(arith.addf(xo, ro), 1, cn)))
            return [arith.mulf(o, hf(cn)), cn]

        def cell(t, xw, hr, states, _rt, fn=fn, peep=peep):
            ins = [gate(b, xw, k, H) for k in range(4)] + [gate(b, hr, k, H) for k in range(4)]
            return _cell(b, rec, t, states, ins + peep, fn)
        states0 = [initial_state(b, rec, rec.h0, d), initial_state(b, rec, c0, d)]
        return _direction(b, rec, d, states0, 4 * H, cell, steps)
    ys, finals = _all_directions(b, rec, 2, run)
    return _outputs(op, b, rec, ys, finals)
