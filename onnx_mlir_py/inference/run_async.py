"""``InferenceSession.run_async``: the run on its own thread, then
``callback(outputs, user_data, err)`` on that thread, as onnxruntime calls
it (outputs and ``""``, or ``[]`` and the error message). An exception in
the callback is reported by ``threading.excepthook`` (printed; the caller is
not affected). The thread is not a daemon: a pending run finishes before
the interpreter exits."""
from __future__ import annotations

import threading


def start(run, callback, user_data) -> None:
    """Call ``run()`` on a new thread and pass its result to ``callback``."""
    if not callable(callback):
        raise TypeError(f"run_async: callback must be callable, got {type(callback).__name__}")

    def work():
        try:
            outputs, err = run(), ""
        except Exception as e:  # noqa: BLE001 - handed to the callback as onnxruntime does
            outputs, err = [], str(e)
        callback(outputs, user_data, err)

    threading.Thread(target=work, name="onnx_mlir_py-run_async").start()
