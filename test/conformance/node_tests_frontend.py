"""Import every ONNX backend node test and check shape inference against onnx.

    python test/conformance/node_tests_frontend.py [-j 2] [--filter REGEX] [--json out.json]

For each of the node tests of the installed onnx
(``onnx.backend.test.loader.load_model_tests(kind="node")``): import the
model *without* ``onnx.shape_inference`` (so types come from our own
shape-inference pass), run the --EmitONNXIR pipeline (verify-mlir,
verify-onnx, shape-inference, canonicalize-onnx), and compare each graph
output type with what ``onnx.shape_inference.infer_shapes`` infers, where it
infers a full shape. Models run in worker processes, so an MLIR abort is
counted as a crash instead of ending the run. Prints one line per failing
test and the counts, ending with ``N passed, N failed``.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import re
import sys
import warnings

# Tests we expect not to import, each with the reason (kept short on purpose).
EXPECTED_IMPORT_FAILURES = {
}


def _onnx_output_shapes(model):
    import onnx
    try:
        inferred = onnx.shape_inference.infer_shapes(model, data_prop=True, strict_mode=False)
    except Exception:
        return None
    out = []
    for o in inferred.graph.output:
        t = o.type
        if t.WhichOneof("value") != "tensor_type" or not t.tensor_type.HasField("shape"):
            out.append(None)
            continue
        dims = [d.dim_value if d.HasField("dim_value") else None for d in t.tensor_type.shape.dim]
        out.append(None if None in dims else tuple(dims))
    return out


def _strip_types(model):
    """Drop the declared output and intermediate types, so every result type
    must come from our shape inference."""
    import onnx
    m = onnx.ModelProto()
    m.CopyFrom(model)
    for o in m.graph.output:
        o.ClearField("type")
    del m.graph.value_info[:]
    return m


def check_one(name: str):
    """-> (name, status, detail); status in ok|import|verify|shape-mismatch."""
    warnings.simplefilter("ignore")
    import onnx.backend.test.loader as L
    from onnx_mlir_py.errors import OnnxMlirError
    from onnx_mlir_py.importer import import_model
    from onnx_mlir_py.passes.pipeline import to_onnx_ir
    model = _MODELS[name]
    try:
        module = import_model(_strip_types(model), onnx_shape_inference=False)
    except OnnxMlirError as e:
        return name, "import", str(e)
    try:
        to_onnx_ir(module)
    except OnnxMlirError as e:
        return name, "verify", str(e)
    except Exception as e:
        return name, "internal", f"{type(e).__name__}: {e}"
    expected = _onnx_output_shapes(model)
    f = next(op for op in module.body.operations if op.operation.name == "func.func")
    import mlir.ir as ir
    ours = []
    for t in ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value).results:
        if isinstance(t, ir.RankedTensorType) and not any(t.is_dynamic_dim(i) for i in range(t.rank)):
            ours.append(tuple(t.shape))
        else:
            ours.append(None)
    compared = 0
    if expected is not None:
        for i, (e, o) in enumerate(zip(expected, ours)):
            if e is None:
                continue
            compared += 1
            if e != o:
                return name, "shape-mismatch", f"output {i}: onnx {e}, ours {o}"
    return name, "ok" if compared else "ok-uncompared", ""


_MODELS = {}


def _init(names_filter):
    warnings.simplefilter("ignore")
    import onnx.backend.test.loader as L
    for t in L.load_model_tests(kind="node"):
        if names_filter is None or re.search(names_filter, t.name):
            _MODELS[t.name] = t.model


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--filter")
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    _init(args.filter)
    names = sorted(_MODELS)
    results = {}
    ctx = mp.get_context("fork")
    pending = list(names)
    while pending:  # a worker crash (abort) loses its task: record it, resubmit the rest
        with ctx.Pool(args.j, initializer=None, maxtasksperchild=200) as pool:
            futs = {n: pool.apply_async(check_one, (n,)) for n in pending}
            pending = []
            for n, fu in futs.items():
                try:
                    results[n] = fu.get(timeout=120)
                except mp.TimeoutError:
                    results[n] = (n, "crash", "timeout or process abort")
                except Exception as e:
                    results[n] = (n, "internal", f"{type(e).__name__}: {e}")
    counts: dict[str, int] = {}
    for n, status, detail in (results[n] for n in names):
        counts[status] = counts.get(status, 0) + 1
        if status not in ("ok", "ok-uncompared"):
            print(f"{status:15} {n}: {detail[:200]}")
    imported = sum(v for k, v in counts.items() if k in ("ok", "ok-uncompared", "shape-mismatch"))
    compared = counts.get("ok", 0) + counts.get("shape-mismatch", 0)
    print(f"\n{len(names)} node tests: {counts}")
    print(f"imported+verified: {imported}/{len(names)}; shape agreement where onnx infers: "
          f"{counts.get('ok', 0)}/{compared}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"counts": counts, "results": results}, f, indent=1)
    failed = len(names) - counts.get("ok", 0) - counts.get("ok-uncompared", 0)
    print(f"{len(names) - failed} passed, {failed} failed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
