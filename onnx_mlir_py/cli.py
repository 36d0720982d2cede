"""``onnx-mlir-py``: the command line, with the options of the C++ onnx-mlir.

    onnx-mlir-py model.onnx                     # --EmitLib: model.so
    onnx-mlir-py model.onnx --EmitONNXIR        # model.onnx.mlir
    onnx-mlir-py model.onnx --EmitONNXBasic --printIR
    onnx-mlir-py --list-ops

Errors are printed as one line (``error: ...``) with exit status 1;
``--debug`` shows the Python traceback instead. Warnings of the compiler
(``OnnxMlirWarning``, e.g. a declared output type that contradicts the
inferred one) are printed as ``warning: ...`` and compilation goes on.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

from .compiler import (DEFAULT_OPT_LEVEL, EMIT_LEVELS as EMITS, default_output, expansion_for,
                       print_module)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="onnx-mlir-py",
        description="Compile an ONNX model with MLIR: import, verify, infer shapes, "
                    "lower, and emit IR, an object file or a shared library.")
    ap.add_argument("model", nargs="?", help="the .onnx file to compile")
    g = ap.add_mutually_exclusive_group()
    for e in EMITS:
        g.add_argument(f"--{e}", dest="emit", action="store_const", const=e,
                       help={"EmitONNXBasic": "imported ONNX dialect, no passes",
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
                    "instead of writing a file")
    ap.add_argument("--shapeInformation", metavar="SPEC",
                    help="override input shapes: 'INDEX:D1xD2...,...', -1 = dynamic "
                         "(e.g. 0:1x3x224x224,1:-1x10)")
    ap.add_argument("--mcpu", help="target CPU for codegen (default portable; 'native')")
    ap.add_argument("--march", help="target architecture for codegen")
    ap.add_argument("--no-runtime-checks", dest="runtime_checks", action="store_false",
                    help="UNSAFE: leave out the run-time checks of the compiled code (index "
                         "values, dims that must agree, allocation sizes); a bad input then "
                         "reads out of bounds instead of failing with an error")
    ap.add_argument("-v", "--verbose", action="store_true", help="print per-phase timing")
    ap.add_argument("--list-ops", action="store_true",
                    help="list ops with verifier / shape / lowering rules and exit")
    ap.add_argument("--debug", action="store_true", help="show Python tracebacks")
    ap.set_defaults(emit="EmitLib", opt_level=None)
    return ap


class Timer:
    def __init__(self, verbose: bool):
        self.verbose = verbose
        self.phases: dict[str, float] = {}

    def phase(self, name: str, t0: float) -> None:
        self.phases[name] = self.phases.get(name, 0.0) + time.perf_counter() - t0

    def report(self) -> None:
        if self.verbose:
            total = sum(self.phases.values())
            for k, v in self.phases.items():
                print(f"[onnx-mlir-py] {k:<22} {v * 1000:9.1f} ms", file=sys.stderr)
            print(f"[onnx-mlir-py] {'total':<22} {total * 1000:9.1f} ms", file=sys.stderr)


def run(args) -> int:
    from .importer import import_model
    from .importer.model import parse_shape_information
    from .passes.pipeline import to_onnx_ir

    timer = Timer(args.verbose)
    shapes = parse_shape_information(args.shapeInformation) if args.shapeInformation else None
    t0 = time.perf_counter()
    module = import_model(args.model, shape_information=shapes,
                          expand_functions=expansion_for(args.emit))
    timer.phase("import", t0)
    if args.emit != "EmitONNXBasic":
        to_onnx_ir(module, timer.phases)
    out = default_output(args.model, args.emit, args.output)
    if args.emit in ("EmitONNXBasic", "EmitONNXIR"):
        if args.printIR:
            print_module(module, sys.stdout)
        else:
            with open(out, "w") as f:
                print_module(module, f, elide=False)
        timer.report()
        return 0
    from .compiler import lower_and_emit
    lower_and_emit(module, args.emit, out, opt_level=DEFAULT_OPT_LEVEL if args.opt_level is None
                   else args.opt_level, mcpu=args.mcpu, march=args.march,
                   print_ir=args.printIR, timings=timer.phases,
                   runtime_checks=args.runtime_checks)
    timer.report()
    return 0


def list_ops() -> int:
    from .registry import rules_table, source_of
    for (domain, op), kinds in sorted(rules_table().items()):
        versions = sorted({v for t in kinds.values() for v in t})
        src = next(iter(next(iter(kinds.values())).values()))
        print(f"{(domain + '.' if domain else '') + op:<28} v{','.join(map(str, versions)):<18}"
              f" {'/'.join(sorted(kinds)):<20} {os.path.relpath(source_of(src))}")
    return 0


def _print_warnings() -> None:
    """Inside a ``catch_warnings`` block: every OnnxMlirWarning as one
    ``warning: ...`` line on stderr; other warnings as Python shows them."""
    from .errors import OnnxMlirWarning
    warnings.simplefilter("always", OnnxMlirWarning)
    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, OnnxMlirWarning):
            print(f"warning: {message}", file=sys.stderr)
        else:
            shown(message, category, filename, lineno, file, line)
    warnings.showwarning = show


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    from .errors import OnnxMlirError
    try:
        if args.list_ops:
            return list_ops()
        if not args.model:
            build_parser().print_usage(sys.stderr)
            print("onnx-mlir-py: error: a model file is required", file=sys.stderr)
            return 2
        with warnings.catch_warnings():
            _print_warnings()
            return run(args)
    except OnnxMlirError as e:
        if args.debug:
            raise
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a bug of ours: still one line, ask for a report
        if args.debug:
            raise
        print(f"internal error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
              " (rerun with --debug for the traceback, and please report it)", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
