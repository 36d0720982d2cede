"""One model per worker process, for run.py, checks.py and march.py.

The parent starts ``python <script> --worker NAME --result OUT <args>`` for
each model (:func:`run`) and reads the row back as JSON: a crash or a hang
costs that model's row only ("status": "crash" / "timeout"). The worker
(:func:`serve`) fills the row and writes it even when the work raised
("status": "error" with the message and a short traceback).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import traceback
from typing import Callable


def parse(ap: argparse.ArgumentParser, argv, threads: str = "1") -> argparse.Namespace:
    """Add the options every benchmark script has (--threads, --quick,
    --timeout, and the hidden ones its worker is started with) and parse:
    ``args.threads`` is a list of ints, ``args.worker_args`` what the worker
    is to be given of them."""
    ap.add_argument("--threads", default=threads, help="comma list of thread counts")
    ap.add_argument("--quick", action="store_true", help="few repetitions: a smoke test")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per model")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    args.threads = [int(t) for t in args.threads.split(",") if t.strip()]
    args.worker_args = ["--threads", ",".join(map(str, args.threads))] + \
        (["--quick"] if args.quick else [])
    return args


def write_json(path: str | None, rows) -> None:
    if path:
        with open(path, "w") as f:
            json.dump(rows, f, indent=1)


def serve(name: str, out_json: str, work: Callable[[dict], None]) -> None:
    """In the worker: ``work(row)`` fills the row; it is written to ``out_json``."""
    res: dict = {"name": name, "status": "error"}
    try:
        work(res)
    except BaseException as e:  # a failure is reported in the row, not raised
        res["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        res["traceback"] = traceback.format_exc(limit=4)
    with open(out_json, "w") as f:
        json.dump(res, f)


def run(script: str, name: str, args: list[str], timeout: float) -> dict:
    """In the parent: run ``script``'s worker for model ``name``; its row."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    cmd = [sys.executable, os.path.abspath(script), "--worker", name, "--result", out] + args
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.unlink(out)
        return {"name": name, "status": "timeout", "error": f"no result within {timeout} s"}
    try:
        with open(out) as f:
            return json.load(f)
    except (OSError, ValueError):
        tail = (p.stderr or "").strip().splitlines()[-1:] or [f"exit status {p.returncode}"]
        return {"name": name, "status": "crash",
                "error": f"worker died (status {p.returncode}): {tail[0][:200]}"}
    finally:
        if os.path.exists(out):
            os.unlink(out)
