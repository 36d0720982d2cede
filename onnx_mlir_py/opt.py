"""``python -m onnx_mlir_py.opt FILE.mlir --shape-inference ...`` (lit driver).

Like onnx-mlir-opt / xdsl-opt: parses an MLIR file with the ONNX dialects
loaded, runs the named passes (see passes/pipeline.py) in the order given,
and prints the result. Passes take options as ``--NAME=KEY=VALUE,KEY=VALUE``
(the -O3 steps: ``--o3-depthwise=target=x86-64-v4,threads=1``). A pass failure prints ``error: <one line>`` and exits
with status 1. ``--split-input-file`` runs each ``// -----`` chunk alone.
"""
from __future__ import annotations

import argparse
import sys

import mlir.ir as ir

from onnx_mlir_py.context import make_context
from onnx_mlir_py.errors import OnnxMlirError
from onnx_mlir_py.passes.pipeline import PASSES, run_passes


def _split_passes(argv: list[str]) -> tuple[list[str], list[str]]:
    """(passes as ``NAME`` or ``NAME=OPTIONS``, in order; the other arguments)."""
    passes, rest = [], []
    for a in argv:
        if a.startswith("--") and a[2:].partition("=")[0] in PASSES:
            passes.append(a[2:])
        else:
            rest.append(a)
    return passes, rest


def main(argv=None) -> int:
    passes, argv = _split_passes(sys.argv[1:] if argv is None else list(argv))
    ap = argparse.ArgumentParser(prog="onnx-mlir-py-opt", description=__doc__.splitlines()[0],
                                 epilog="passes (--NAME or --NAME=KEY=VALUE,...): "
                                        + ", ".join(PASSES))
    ap.add_argument("input", help="MLIR file ('-' for stdin)")
    ap.add_argument("--split-input-file", action="store_true")
    ap.add_argument("--mlir-print-debuginfo", action="store_true")
    args = ap.parse_args(argv)
    args.passes = passes
    text = sys.stdin.read() if args.input == "-" else open(args.input).read()
    chunks = text.split("// -----") if args.split_input_file else [text]
    status = 0
    for i, chunk in enumerate(chunks):
        if i:
            print("// -----")
        ctx = make_context()
        try:
            with ctx, ir.Location.unknown():
                module = ir.Module.parse(chunk)
            run_passes(module, args.passes or [])
        except ir.MLIRError as e:
            lines = [s.strip() for s in str(e).splitlines() if s.strip()]
            print(f"error: {' '.join(lines[:2])}", file=sys.stdout)
            status = 1
            continue
        except OnnxMlirError as e:
            print(f"error: {e}", file=sys.stdout)
            status = 1
            continue
        module.operation.print(enable_debug_info=args.mlir_print_debuginfo,
                               large_elements_limit=16, large_resource_limit=64)
    return status


if __name__ == "__main__":
    sys.exit(main())
