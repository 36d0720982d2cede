"""Big convs in horizontal strips: the im2col conv of :mod:`.conv` on R
output rows at a time.

A conv whose whole im2col matrix is large (a 6x6/2 stem on 640x640: 112 x
102400 floats, 46 MB) wrote it through memory, faulted its pages in on
every call and read it back in the matmul (50 ms against onnxruntime's 2.5).
Here the (batch-1) image is cut into strips of R output rows:

    for i in [0, OH / R):     out[:, :, i*R : i*R+R] = conv(x[:, :, i*R*s : i*R*s + HR], w)
    last strip (OH % R rows, if any): the same with its own kernel

HR = (R-1)*s + (KH-1)*d + 1 input rows (strips overlap by the kernel's
reach). Each strip is the static kernel of :func:`.conv.conv_function`
(im2col of about ``kernel_plan.STRIP_COLS`` floats, cache-resident, then the packed
matmul), writing into its slice of the output (the bias broadcast into it,
or the zero fill accumulated into). With threads the whole strips are one
``scf.forall`` (one parallel loop per conv instead of two per strip; each
strip's im2col stays in its thread's cache), the strip kernel itself
single-threaded. A dynamic or
static batch > 1 runs the strip function once per image (:mod:`.batch_loop`).
"""
from __future__ import annotations

from onnx_mlir_py.passes.optimize.kernel_emit import Emitter, Value, tensor


def strip_input_rows(r: int, ws, s, d) -> int:
    return (r - 1) * s[0] + (ws[2] - 1) * d[0] + 1


def strip_function(name: str, inner: str, inner_last: str | None, xs, ws, os_, s, d, r: int,
                   bias: bool, threads: bool = False) -> str:
    """``func.func private @name(x [1, C, H, W], w, out [1, F, OH, OW][, bias])
    -> out`` calling ``@inner`` (R rows) per whole strip and ``@inner_last``
    on the OH % R rows left. ``threads``: the whole strips are an
    ``scf.forall`` (each thread its own strips, ``@inner`` single-threaded)."""
    _, c, _h, w = xs
    f, oh, ow = os_[1], os_[2], os_[3]
    full, rem = oh // r, oh % r
    e = Emitter()
    x, wv, o = e.param("x", tensor(xs)), e.param("w", tensor(ws)), e.param("o", tensor(os_))
    params = [x, wv, o] + ([e.param("b", tensor([f]))] if bias else [])

    def call(callee: str, rows: int, h0, oh0, dst: Value) -> Value:
        xsl = e.extract_slice(x, [0, 0, h0, 0], [1, c, strip_input_rows(rows, ws, s, d), w])
        osl = e.extract_slice(dst, [0, 0, oh0, 0], [1, f, rows, ow])
        return e.call(callee, [xsl, wv, osl] + params[3:], osl.type)

    par = threads and full > 1
    if par:
        i, acc, res = e.forall(full, o)
    else:
        i, (acc,), (res,) = e.loop(e.index(0), e.index(full), e.index(1), [o])
    h0 = e.iop("muli", i, e.index(r * s[0]))
    oh0 = e.iop("muli", i, e.index(r))
    y = call(inner, r, h0, oh0, acc)
    if par:
        e.end_forall(y, acc, [0, 0, oh0, 0], [1, f, r, ow])
    else:
        e.end([e.insert_slice(y, acc, [0, 0, oh0, 0], [1, f, r, ow])])
    if rem:
        y = call(inner_last, rem, full * r * s[0], full * r, res)
        res = e.insert_slice(y, res, [0, 0, full * r, 0], [1, f, rem, ow])
    e(f"return {res} : {o.type}")
    return e.function(name, params, o.type)


def strip_functions(name: str, conv_function, sig, bias: bool, threads: bool,
                    blocks: tuple[int, int], r: int) -> list[str]:
    """The texts of ``@name(x, w, out[, bias]) -> out``: the strip kernels
    (``conv_function`` of :mod:`.conv`), the strip loop and, for a batch
    other than 1, the loop over the images."""
    from onnx_mlir_py.passes.optimize.batch_loop import BATCHED, SHARED, batch_loop_function
    xs, ws, os_, s, d, _g = (list(v) if isinstance(v, tuple) else v for v in sig)
    c, w, f, oh, ow = xs[1], xs[3], os_[1], os_[2], os_[3]

    def kernel(kname: str, rows: int, par: bool) -> str:
        return conv_function(kname, [1, c, strip_input_rows(rows, ws, s, d), w], ws,
                             [1, f, rows, ow], s, d, 1, par, blocks, bias=bias, dest=bias)
    # threads: the strips are split across threads (each strip's kernel on
    # one thread); the last, shorter strip threads its own im2col / matmul
    par_strips = threads and oh // r > 1
    texts = [kernel(name + "_strip", r, threads and not par_strips)]
    last = None
    if oh % r:
        last = name + "_last"
        texts.append(kernel(last, oh % r, threads))
    image = name if xs[0] == 1 else name + "_image"
    texts.append(strip_function(image, name + "_strip", last, [1] + xs[1:], ws, [1] + os_[1:],
                                s, d, r, bias, par_strips))
    if xs[0] != 1:
        args = [(xs, BATCHED), (ws, SHARED), (os_, BATCHED)] + ([([f], SHARED)] if bias else [])
        texts.append(batch_loop_function(name, image, args, dest=2, parallel=threads))
    return texts
