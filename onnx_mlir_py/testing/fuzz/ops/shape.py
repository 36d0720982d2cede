"""Data movement specs: Transpose, Reshape, Flatten, Squeeze/Unsqueeze,
Concat, Split, Slice, Gather, Expand, Tile, Pad."""
from __future__ import annotations

import math

import numpy as np

from onnx_mlir_py.testing.fuzz.ops import I32, I64, Reject, bcast, first, spec


def reshape_shape(s, target, allowzero=0):
    out = [s[i] if t == 0 and not allowzero else t for i, t in enumerate(target)]
    total = math.prod(s)
    if out.count(-1) > 1:
        raise ValueError("two -1")
    if -1 in out:
        known = math.prod(d for d in out if d != -1)
        if known == 0 or total % known:
            raise ValueError("cannot infer -1")
        out[out.index(-1)] = total // known
    if math.prod(out) != total:
        raise ValueError(f"reshape {s} -> {target}")
    return tuple(out)


def _factor(r, n: int, parts: int) -> list[int]:
    out = []
    for _ in range(parts - 1):
        divs = [d for d in range(1, n + 1) if n % d == 0]
        d = r.choice(divs)
        out.append(d)
        n //= d
    return out + [n]


@spec("transpose", weight=2)
def transpose(g):
    x = first(g, "Transpose", rank=(2, 4))
    perm = list(range(x.rank))
    g.rng.shuffle(perm)
    if g.rng.random() < 0.15:
        g.add("Transpose", [x], lambda s: s[::-1], x.dtype)
    else:
        g.add("Transpose", [x], lambda s: tuple(s[p] for p in perm), x.dtype, perm=perm)


@spec("reshape", weight=2)
def reshape(g):
    r = g.rng
    x = first(g, "Reshape", rank=(0, 4))
    k = r.randint(0, x.rank)
    rest = x.dims[k:]
    if all(len(set(d)) == 1 for d in rest):
        if math.prod(d[0] for d in rest) == 0:
            raise Reject("reshape of an empty static tensor")
        target = _factor(r, math.prod(d[0] for d in rest), r.randint(1, 3)) if rest else []
        if target and r.random() < 0.4:
            target[r.randrange(len(target))] = -1
    else:
        static = math.prod(d[0] for d in rest if len(set(d)) == 1)
        if static == 0:
            raise Reject("reshape of an empty static tensor")
        target = [-1] + _factor(r, static, r.randint(1, 2))
        r.shuffle(target)
    target = [0] * k + target
    shp = g.const(np.array(target, dtype=np.int64))
    g.add("Reshape", [x, shp], lambda s: reshape_shape(s, target), x.dtype, shape_args=[x])


@spec("flatten", weight=0.7)
def flatten(g):
    x = first(g, "Flatten", rank=(1, 4))
    axis = g.rng.randint(-x.rank, x.rank)
    a = axis + x.rank if axis < 0 else axis
    g.add("Flatten", [x], lambda s: (math.prod(s[:a]), math.prod(s[a:])), x.dtype, axis=axis)


def _axes_operand(g, axes, op):
    if g.opset >= 13:
        return [g.const(np.array(axes, dtype=np.int64))], {}
    return [], {"axes": axes}


@spec("squeeze", weight=1)
def squeeze(g):
    r = g.rng
    op = r.choice(["Squeeze", "Unsqueeze"])
    if op == "Squeeze":
        x = first(g, op, rank=(1, 4), pred=lambda v: any(d == (1,) * len(d) for d in v.dims))
        ones = [i for i, d in enumerate(x.dims) if set(d) == {1}]
        axes = sorted(r.sample(ones, r.randint(1, len(ones))))
        extra, attrs = _axes_operand(g, [a - x.rank if r.random() < 0.3 else a for a in axes], op)
        g.add(op, [x] + extra, lambda s: tuple(d for i, d in enumerate(s) if i not in axes),
              x.dtype, shape_args=[x], **attrs)
    else:
        x = first(g, op, rank=(0, 3))
        n = r.randint(1, 2)
        axes = sorted(r.sample(range(x.rank + n), n))

        def shape(s):
            it = iter(s)
            return tuple(1 if i in axes else next(it) for i in range(len(s) + n))
        extra, attrs = _axes_operand(g, axes, op)
        g.add(op, [x] + extra, shape, x.dtype, shape_args=[x], **attrs)


@spec("concat", weight=2)
def concat(g):
    r = g.rng
    x = first(g, "Concat", rank=(1, 4))
    axis = r.randrange(x.rank)
    ins = [x]
    for _ in range(r.randint(1, 3)):
        y = g.pick(lambda v: v.dtype == x.dtype and v.rank == x.rank and v not in ins and all(
            v.dims[i] == x.dims[i] for i in range(x.rank) if i != axis), p_new=0.5)
        if y is None:
            dims = list(x.dims)
            dims[axis] = g.random_dim(0 if r.random() < 0.1 else 1, 4)
            y = g.operand(x.dtype, tuple(dims))
        ins.append(y)
    r.shuffle(ins)

    def shape(*ss):
        return tuple(sum(s[axis] for s in ss) if i == axis else d for i, d in enumerate(ss[0]))
    g.add("Concat", ins, shape, x.dtype, axis=axis - x.rank if r.random() < 0.3 else axis)


@spec("split", weight=1.5)
def split(g):
    r = g.rng
    x = first(g, "Split", rank=(1, 4))
    axis = r.randrange(x.rank)
    d = x.dims[axis]
    attrs = {"axis": axis}
    ins = [x]
    if len(set(d)) == 1 and r.random() < 0.6:
        n = r.randint(1, 3)
        cuts = sorted(r.randint(0, d[0]) for _ in range(n - 1))
        sizes = [b - a for a, b in zip([0] + cuts, cuts + [d[0]])]
        ins.append(g.const(np.array(sizes, dtype=np.int64)))

        def shape(s):
            return [tuple(z if i == axis else v for i, v in enumerate(s)) for z in sizes]
    else:
        n = r.randint(1, 3)
        if g.opset >= 18:
            attrs["num_outputs"] = n
        elif any(v % n for v in d):
            raise Reject("uneven split before opset 18")

        def shape(s):
            chunk = -(-s[axis] // n)
            if chunk * (n - 1) > s[axis] or (g.opset < 18 and s[axis] % n):
                raise ValueError("split into more chunks than elements")
            last = s[axis] - chunk * (n - 1)
            return [tuple((chunk if k < n - 1 else last) if i == axis else v
                          for i, v in enumerate(s)) for k in range(n)]
    g.add("Split", ins, shape, [x.dtype] * n, shape_args=[x], **attrs)


def slice_len(n, start, end, step):
    """Elements of range(start, end, step) on an axis of n, ONNX clamping."""
    if start < 0:
        start += n
    if end < 0:
        end += n
    if step > 0:
        start, end = min(max(start, 0), n), min(max(end, 0), n)
        return max(0, -(-(end - start) // step))
    # negative step: start clamps to [0, n - 1] (the spec; onnxruntime: start -6
    # on an axis of 5 takes element 0), end to [-1, n - 1] (-1: through index 0)
    start, end = min(max(start, 0), n - 1), min(max(end, -1), n - 1)
    return max(0, -(-(start - end) // -step))


@spec("slice", weight=2)
def slice_(g):
    r = g.rng
    x = first(g, "Slice", rank=(1, 4))
    axes = sorted(r.sample(range(x.rank), r.randint(1, x.rank)))
    big = 2**62
    starts, ends, steps = [], [], []
    for a in axes:
        n = max(x.dims[a])
        step = r.choice([1, 1, 1, 2, 3, -1, -2])
        pool = list(range(-n - 1, n + 2)) + [big, -big]
        s, e = r.choice(pool), r.choice(pool)
        starts.append(s)
        ends.append(e)
        steps.append(step)
    ins = [x] + [g.const(np.array(v, dtype=np.int64)) for v in (starts, ends)]
    signed = [a - x.rank if r.random() < 0.3 else a for a in axes]
    explicit = r.random() < 0.8 or steps != [1] * len(steps) or axes != list(range(len(axes)))
    if explicit:
        ins.append(g.const(np.array(signed, dtype=np.int64)))
        if steps != [1] * len(steps) or r.random() < 0.5:
            ins.append(g.const(np.array(steps, dtype=np.int64)))

    def shape(s):
        out = list(s)
        for a, st, en, sp in zip(axes, starts, ends, steps):
            out[a] = slice_len(s[a], st, en, sp)
        return tuple(out)
    g.add("Slice", ins, shape, x.dtype, shape_args=[x])


@spec("gather", weight=2)
def gather(g):
    r = g.rng
    x = first(g, "Gather", rank=(1, 4), pred=lambda v: any(min(d[:2]) > 0 for d in v.dims))
    axis = r.choice([i for i, d in enumerate(x.dims) if min(d[:2]) > 0])
    d = x.dims[axis]
    irank = r.randint(0, 2)
    ishape = tuple(r.randint(1, 3) for _ in range(irank))
    if len(set(d[:2])) == 1 and r.random() < 0.6:
        n = d[0]
        idx = g.const(np.array(g.nrng.integers(-n, n, ishape), dtype=np.int64),
                      I64 if r.random() < 0.8 else I32)
    else:
        idx = g.new_input(I64, tuple(g.static_dim(k) for k in ishape),
                          index_range=lambda b: (-d[b], d[b] - 1))

    def shape(s, i):
        if s[axis] == 0 and math.prod(i):
            raise ValueError("Gather from an empty axis")
        return s[:axis] + tuple(i) + s[axis + 1:]
    g.add("Gather", [x, idx], shape, x.dtype, axis=axis - x.rank if r.random() < 0.3 else axis)


@spec("expand", weight=1.5)
def expand(g):
    r = g.rng
    x = first(g, "Expand", rank=(0, 3))
    target = [r.randint(1, 4) if set(d) == {1} and r.random() < 0.7 else 1 for d in x.dims]
    target = [r.randint(1, 3) for _ in range(r.randint(0, 2))] + target
    shp = g.const(np.array(target, dtype=np.int64))
    g.add("Expand", [x, shp], lambda s: bcast(s, tuple(target)), x.dtype, shape_args=[x])


@spec("tile", weight=0.7)
def tile(g):
    x = first(g, "Tile", rank=(1, 3))
    reps = [g.rng.randint(1, 3) for _ in range(x.rank)]
    g.add("Tile", [x, g.const(np.array(reps, dtype=np.int64))],
          lambda s: tuple(a * b for a, b in zip(s, reps)), x.dtype, shape_args=[x])


@spec("pad", weight=1)
def pad(g):
    r = g.rng
    x = first(g, "Pad", rank=(1, 4))
    mode = r.choice(["constant", "constant", "reflect", "edge"])
    pads = [r.randint(-1 if mode == "constant" else 0, 2) for _ in range(2 * x.rank)]
    ins = [x, g.const(np.array(pads, dtype=np.int64))]
    if mode == "constant" and r.random() < 0.5:
        ins.append(g.const(g.random_array(x.dtype, ())))
    rk = x.rank

    def shape(s):
        for i, n in enumerate(s):
            if mode == "reflect" and max(pads[i], pads[i + rk]) >= n:
                raise ValueError("reflect pad >= dim")
            if mode == "edge" and n == 0 and pads[i] + pads[i + rk] > 0:
                raise ValueError("edge pad of an empty dim")
        return tuple(n + pads[i] + pads[i + rk] for i, n in enumerate(s))
    attrs = {} if mode == "constant" and r.random() < 0.5 else {"mode": mode}
    g.add("Pad", ins, shape, x.dtype, shape_args=[x], **attrs)
