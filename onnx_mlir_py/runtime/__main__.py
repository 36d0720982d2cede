"""Run a compiled model on random inputs (a smoke test, like onnx-mlir's
RunONNXModel.py):

    python -m onnx_mlir_py.runtime model.so [--reference model.onnx] [--dim N] [--seed S]

Prints the signatures, each output's shape and first values, and with
``--reference`` the largest difference from onnxruntime on the same inputs
(exit status 1 if outside rtol 1e-3 / atol 1e-4).
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

from onnx_mlir_py.runtime.errors import ModelRunError, RuntimeInputError
from onnx_mlir_py.runtime.session import ExecutionSession


def random_inputs(sess: ExecutionSession, dynamic_dim: int, seed: int) -> list:
    """One array per tensor input; a list of 2 arrays per sequence (and
    optional sequence) input, an array per optional tensor input."""
    rng = np.random.default_rng(seed)

    def array(sig):
        shape = [dynamic_dim if d is None else d for d in (sig.shape or (None,))]
        if sig.dtype == np.bool_:
            return rng.random(shape) < 0.5
        if sig.dtype.kind in "iu":
            return rng.integers(0, 10, shape).astype(sig.dtype)
        return rng.standard_normal(shape).astype(sig.dtype)
    return [[array(s), array(s)] if s.kind in ("seq", "opt_seq") else array(s)
            for s in sess.input_specs]


def _arrays(value) -> list[np.ndarray]:
    """The arrays of an output value (a sequence's elements; None: none)."""
    if value is None:
        return []
    return [np.asarray(v) for v in value] if isinstance(value, list) else [value]


class ReferenceFailed(Exception):
    """onnxruntime is missing or cannot run the reference model (one line)."""


def _reference(onnx_path: str, sess: ExecutionSession, inputs):
    try:
        import onnxruntime as ort
    except ImportError as e:
        raise ReferenceFailed(f"--reference needs onnxruntime (pip install onnxruntime): "
                              f"{_first_line(e)}") from None
    try:
        ref = ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
        names = [i.name for i in ref.get_inputs()]
        return ref.run(None, dict(zip(names, inputs)))
    except Exception as e:  # noqa: BLE001 - onnxruntime's errors: one line, like verify
        raise ReferenceFailed(f"the reference (onnxruntime) cannot run '{onnx_path}': "
                              f"{_first_line(e)}") from None


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m onnx_mlir_py.runtime",
                                 description="Run a compiled model .so on random inputs.")
    ap.add_argument("library", help="the .so written by onnx-mlir-py --EmitLib")
    ap.add_argument("--reference", metavar="MODEL.onnx",
                    help="compare the outputs with onnxruntime running this model")
    ap.add_argument("--dim", type=int, default=1, help="size used for dynamic dims (default 1)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    try:
        sess = ExecutionSession(args.library)
        print("inputs: ", sess.input_signature())
        print("outputs:", sess.output_signature())
        inputs = random_inputs(sess, args.dim, args.seed)
        outputs = sess.run(inputs)
    except (RuntimeInputError, ModelRunError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    for sig, value in zip(sess.output_specs, outputs):
        if value is None or isinstance(value, list):
            print(f"{sig.name}: {'None' if value is None else f'sequence of {len(value)}'}")
        for o in _arrays(value):
            flat = o.reshape(-1)[:6]
            print(f"{sig.name}: {o.dtype}{list(o.shape)} = {np.array2string(flat, precision=5)}"
                  f"{' ...' if o.size > 6 else ''}")
    if not args.reference:
        return 0
    try:
        refs = _reference(args.reference, sess, inputs)
    except ReferenceFailed as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    ok = True
    for sig, ours, ref in zip(sess.output_specs, outputs, refs):
        os_, rs = _arrays(ours), _arrays(ref)
        match = len(os_) == len(rs) and (ours is None) == (ref is None)
        diff = 0.0
        for o, r in zip(os_, rs):
            same = o.shape == r.shape
            match &= same and np.allclose(o, r, rtol=1e-3, atol=1e-4)
            if same and o.size:
                diff = max(diff, float(np.max(np.abs(o.astype(np.float64) -
                                                      r.astype(np.float64)))))
        ok &= match
        print(f"{sig.name}: max |ours - onnxruntime| = {diff:.3g} ({'ok' if match else 'MISMATCH'})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
