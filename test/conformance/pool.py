"""Run tasks on N crash-isolated child processes (``ChildWorker``s).

A child that dies while running a task (MLIR abort, segfault in generated
code) or overruns the time limit has that task reported as ``crash`` /
``timeout``; a fresh child takes the next task. The caller never dies.
"""
from __future__ import annotations

import time
from multiprocessing.connection import wait

from onnx_mlir_py.backend.isolate import ChildWorker


def run_tasks(tasks, fn, jobs: int = 2, timeout: float = 300.0, timeout_of=None):
    """Yield ``(task, reply)`` as tasks finish; ``reply`` is ``("ok", fn(task))``,
    ``("error", dict)``, ``("crash", why)`` or ``("timeout", why)``.
    ``timeout_of(task)`` may give a per-task limit."""
    pending = iter(tasks)
    workers = [ChildWorker() for _ in range(max(1, jobs))]
    running: dict[ChildWorker, tuple] = {}   # worker -> (task, deadline)
    try:
        while True:
            for w in workers:
                if w not in running:
                    task = next(pending, None)
                    if task is None:
                        continue
                    limit = timeout_of(task) if timeout_of else timeout
                    w.send(fn, (task,))
                    running[w] = (task, time.monotonic() + limit, limit)
            if not running:
                return
            now = time.monotonic()
            wait_for = max(0.0, min(d for _, d, _ in running.values()) - now)
            handles = {h: w for w in running for h in w.waitables()}
            ready = wait(list(handles), wait_for)
            done = {handles[h] for h in ready}
            for w in list(running):
                task, deadline, limit = running[w]
                if w in done:
                    reply = w.receive()
                elif time.monotonic() >= deadline:
                    reply = w.kill_timeout(limit)
                else:
                    continue
                del running[w]
                yield task, reply
    finally:
        for w in workers:
            w.close()
