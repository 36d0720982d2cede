"""ONNX backend node tests through the lowering (ExecutionEngine).

    python test/python/lowering/node_suite.py REGEX [-v]

prints, per op, how many node tests whose name matches REGEX run and agree
with the test's expected outputs (tests run in a worker process; an MLIR
abort is counted as a crash of that test and the rest go on). ``run_case(name)`` is the pytest entry.
"""
from __future__ import annotations

import os
import re
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))

_CASES: dict | None = None


def cases() -> dict:
    """name -> onnx TestCase (loading all of them takes a few seconds)."""
    global _CASES
    if _CASES is None:
        warnings.simplefilter("ignore")
        import onnx.backend.test.loader as L
        _CASES = {t.name: t for t in L.load_model_tests(kind="node")}
    return _CASES


def names(pattern: str) -> list[str]:
    return sorted(n for n in cases() if re.search(pattern, n))


def _array(a) -> np.ndarray:
    import onnx
    if isinstance(a, onnx.TensorProto):
        return onnx.numpy_helper.to_array(a)
    return np.asarray(a)


def run_case(name: str) -> None:
    """Lower + run test ``name``; AssertionError on a mismatch."""
    from engine import run_model
    t = cases()[name]
    model = t.model
    for inputs, outputs in t.data_sets:
        feeds = {}
        graph_ins = [i.name for i in model.graph.input]
        for n, a in zip(graph_ins, inputs):
            feeds[n] = _array(a)
        expected = [_array(o) for o in outputs]
        got = run_model(model, feeds, expected)
        for i, (g, e) in enumerate(zip(got, expected)):
            assert g.shape == e.shape, f"output {i}: shape {g.shape} != {e.shape}"
            if e.dtype.kind in "fc" or e.dtype.name.startswith(("bfloat", "float")):
                np.testing.assert_allclose(g.astype(np.float64), e.astype(np.float64),
                                           rtol=t.rtol, atol=t.atol, equal_nan=True,
                                           err_msg=f"output {i}")
            else:
                np.testing.assert_array_equal(g, e.astype(g.dtype) if g.dtype != e.dtype
                                              else e, err_msg=f"output {i}")


def _one(name: str):
    warnings.simplefilter("ignore")
    try:
        run_case(name)
        return name, "ok", ""
    except AssertionError as e:
        return name, "mismatch", " ".join(str(e).split())[:160]
    except Exception as e:
        return name, "error", f"{type(e).__name__}: {' '.join(str(e).split())[:160]}"


def _worker(todo: list[str]) -> None:
    """Run tests in order, one result line each (``name<TAB>status<TAB>detail``)."""
    for n in todo:
        print(f"{n}\tstart\t", flush=True)
        _, st, detail = _one(n)
        print(f"{n}\t{st}\t{detail}", flush=True)


def main(argv=None) -> int:
    import argparse
    import subprocess
    ap = argparse.ArgumentParser()
    ap.add_argument("pattern")
    ap.add_argument("-v", action="store_true")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    todo = names(a.pattern)
    if a.worker:
        _worker(todo)
        return 0
    res: dict[str, tuple] = {}
    while True:  # one worker process; after an abort, go on past the crashed test
        rest = [n for n in todo if n not in res]
        if not rest:
            break
        pat = "^(" + "|".join(re.escape(n) for n in rest) + ")$"
        p = subprocess.run([sys.executable, __file__, pat, "--worker"], capture_output=True,
                           text=True)
        last = None
        for line in p.stdout.splitlines():
            parts = line.split("\t", 2)
            if len(parts) != 3:
                continue
            if parts[1] == "start":
                last = parts[0]
            else:
                res[parts[0]] = (parts[0], parts[1], parts[2])
                last = None
        if last is not None:
            res[last] = (last, "crash", (p.stderr.strip().splitlines() or ["?"])[-1][:160])
        elif p.returncode != 0:
            for n in rest:
                res.setdefault(n, (n, "crash", "worker failed"))
    per_op: dict[str, list[int]] = {}
    for n in todo:
        _, st, detail = res[n]
        base = re.sub(r"_expanded.*$", "", n)  # expanded: count under the op itself
        nodes = cases()[base if base in cases() else n].model.graph.node
        op = nodes[0].op_type if nodes else "?"
        c = per_op.setdefault(op, [0, 0])
        c[1] += 1
        c[0] += st == "ok"
        if st != "ok" or a.v:
            print(f"{st:9} {n}: {detail}")
    for op, (ok, tot) in sorted(per_op.items()):
        print(f"{op:28} {ok}/{tot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
