"""``onnx-mlir-py verify model.onnx``: does the compiled model compute what
onnxruntime computes? (onnx-mlir's ``RunONNXModel.py --verify``.)

    onnx-mlir-py verify model.onnx                        # random inputs, seed 0
    onnx-mlir-py verify model.onnx --shape x:4x16 --every-value
    onnx-mlir-py verify model.onnx --inputs test_data_set_0/ --ref reference
    onnx-mlir-py verify model.onnx --precision bf16       # bf16's error against fp32

Exit status 0 if every compared value is within ``--rtol``/``--atol``, 1 if
one is not or something failed (one ``error:`` line), 2 for bad options.
``--precision bf16`` compiles the model in fp32 and in bf16, runs both on
the same inputs and reports the error per output (a table, no tolerance):
exit status 0 unless something failed.
"""
from __future__ import annotations

import argparse
import sys
import warnings

from onnx_mlir_py.options import DEFAULT_OPT_LEVEL


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="onnx-mlir-py verify",
        description="Compile an ONNX model, run it and onnxruntime (or onnx.reference) on "
                    "the same inputs and compare the outputs; exit 0 if they match, else 1.")
    ap.add_argument("model", help="the .onnx file")
    ap.add_argument("--inputs", metavar="DIR|FILE.npz",
                    help="the inputs: a folder of input_0.pb, input_1.pb, ... (onnx's test "
                         "data layout) or an .npz keyed by input name (default: random)")
    ap.add_argument("--shape", metavar="NAME:D0xD1,...",
                    help="run-time shape of inputs with dynamic dims, by name or index "
                         "(e.g. x:4x16,mask:4x16)")
    ap.add_argument("--dim", type=int, default=1,
                    help="size of the dynamic dims --shape does not give (default 1)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    ap.add_argument("--ref", choices=("onnxruntime", "reference"), default="onnxruntime",
                    help="the reference: onnxruntime (default) or onnx.reference")
    ap.add_argument("--rtol", type=float, default=1e-3, help="relative tolerance (1e-3)")
    ap.add_argument("--atol", type=float, default=1e-4, help="absolute tolerance (1e-4)")
    for lvl in range(4):
        ap.add_argument(f"-O{lvl}", dest="opt_level", action="store_const", const=lvl,
                        help=argparse.SUPPRESS)
    ap.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                    help="bf16: compile the model in fp32 and with --precision bf16, run "
                         "both on the same inputs and report the error of bf16 against "
                         "fp32 per output (max abs, max abs / max |fp32|, relative L2); "
                         "exit 0 unless something fails (--ref, --rtol, --atol, "
                         "--every-value do not apply)")
    ap.add_argument("--every-value", action="store_true",
                    help="compare every value the main graph computes and report the first "
                         "node (in topological order) whose output differs")
    talk = ap.add_mutually_exclusive_group()
    talk.add_argument("-v", "--verbose", action="store_true",
                      help="print every compared value and the time of each phase")
    talk.add_argument("-q", "--quiet", action="store_true",
                      help="print only the verdict line (and errors): no progress line, "
                           "no warnings")
    ap.add_argument("--debug", action="store_true", help="show Python tracebacks")
    ap.set_defaults(opt_level=DEFAULT_OPT_LEVEL)
    return ap


def _report(args, r) -> None:
    from onnx_mlir_py.verify.compare import type_str
    outs = [r.diffs[n] for n in r.outputs]
    verdict = f"{'PASS' if r.ok else 'FAIL'}: {sum(d.ok for d in outs)} of {len(outs)} outputs match"
    if args.quiet:
        print(verdict)
        return
    src = f"inputs from {args.inputs}" if args.inputs else f"random inputs (seed {args.seed})"
    print(f"verify {args.model}: -O{args.opt_level}, {src}, reference {args.ref}, "
          f"rtol {args.rtol:g}, atol {args.atol:g}")
    for name, x in r.inputs.items():
        print(f"  input '{name}': {type_str(x)}")
    shown = r.names if args.verbose else r.outputs
    for n in shown:
        d = r.diffs[n]
        kind = "output" if n in r.outputs else "value"
        print(f"  {kind} '{n}': {type_str(r.ours[n])} {'ok' if d.ok else 'DIFFERS'}: "
              f"{d.describe()}")
    if args.every_value:
        bad = sum(not d.ok for d in r.diffs.values())
        print(f"every value: {len(r.names)} compared, {bad} differ")
        if r.mismatch is not None:
            print("\n".join(r.mismatch.lines))
        elif not r.ok:       # only a graph output that no node makes (an input, a constant)
            print("no node's output differs: a graph output that is a graph input or an "
                  "initializer does")
    print(verdict)


def _report_precision(args, r) -> None:
    """One table: an output per row, the error of its ``--precision`` run
    against its fp32 run."""
    from onnx_mlir_py.verify.compare import type_str
    src = f"inputs from {args.inputs}" if args.inputs else f"random inputs (seed {args.seed})"
    print(f"verify {args.model}: --precision {r.precision} against fp32 (both compiled, "
          f"-O{args.opt_level}), {src}")
    if not args.quiet:
        for name, x in r.inputs.items():
            print(f"  input '{name}': {type_str(x)}")
    rows = [("output", "type", "max abs err", "/ max |fp32|", "rel L2")]
    for n in r.outputs:
        st = r.stats[n]
        nums = (f"{st.max_abs:.3g}", f"{st.rel_max:.3g}", f"{st.rel_l2:.3g}") if not st.why \
            else (st.why, "", "")
        rows.append((f"'{n}'", type_str(r.ours[n])) + nums)
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    for row in rows:
        print("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    worst = max((st.rel_l2 for st in r.stats.values() if not st.why), default=None)
    if worst is not None:
        print(f"{r.precision} error: worst relative L2 {worst:.3g} over {len(r.outputs)} "
              f"output(s) (bf16's relative step 2^-8 = 0.0039)")


def main(argv=None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if args.precision != "fp32" and args.every_value:
        ap.error("--every-value compares with a reference: not with --precision")
    from onnx_mlir_py.cli import _print_warnings
    from onnx_mlir_py.cli_guard import run_guarded
    from onnx_mlir_py.timings import Timings
    from onnx_mlir_py.verify.inputs import parse_shapes
    from onnx_mlir_py.verify.run import verify, verify_precision
    from onnx_mlir_py.progress import show_progress
    timings = Timings()
    result = None

    def body() -> int:
        nonlocal result
        with warnings.catch_warnings(), \
                show_progress(timings, False if args.quiet else None):
            _print_warnings(args.quiet)
            if args.precision != "fp32":
                result = verify_precision(args.model, args.inputs, precision=args.precision,
                                          shapes=parse_shapes(args.shape), dim=args.dim,
                                          seed=args.seed, opt_level=args.opt_level,
                                          timings=timings)
                return 0
            result = verify(args.model, args.inputs, shapes=parse_shapes(args.shape),
                            dim=args.dim, seed=args.seed, ref=args.ref, rtol=args.rtol,
                            atol=args.atol, opt_level=args.opt_level,
                            every_value=args.every_value, timings=timings)
        return 0
    status = run_guarded(body, args.debug, internal_status=1)   # a failure for a user's CI
    if result is None:
        return status
    if args.verbose:
        timings.report()
    if args.precision != "fp32":
        _report_precision(args, result)
        return 0
    _report(args, result)
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
