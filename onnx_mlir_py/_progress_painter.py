"""The painter of the progress line (see progress.py), run as a child
process so the line moves on while the compiler holds the interpreter in
a long MLIR call: ``python -S _progress_painter.py TICK``.

stdin: one JSON list per line from the compiler: ``["P", t0, name]`` a
phase started (``t0``: its time.monotonic()), ``["C", done, total, unit]``
a count, ``["W", text]`` print a line above the progress line. stdout: the
terminal. At the end of stdin the line is erased and the painter exits.
"""
import json
import os
import select
import signal
import sys
import time


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # the compiler handles Ctrl-C
    tick = float(sys.argv[1])
    t0 = time.monotonic()
    state = {"phase": "starting", "pt0": t0, "count": None}
    drawn = [True]          # the state on screen is the newest one

    def out(s: str) -> None:
        os.write(1, s.encode())

    def draw() -> None:
        now = time.monotonic()
        text = f"[onnx-mlir-py {now - t0:5.1f} s] {state['phase']}"
        if state["count"]:
            text += " {}/{} {}".format(*state["count"])
        text += f" ({now - state['pt0']:.1f} s)"
        try:
            cols = os.get_terminal_size(1).columns
        except OSError:
            cols = 0
        out("\r" + text[:(cols if cols >= 20 else 80) - 1] + "\x1b[K")
        drawn[0] = True

    buf = b""
    while True:
        ready, _, _ = select.select([0], [], [], tick)
        if ready:
            chunk = os.read(0, 65536)
            if not chunk:
                break
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                msg = json.loads(line)
                if msg[0] == "P":
                    if not drawn[0] and state["count"]:
                        draw()      # a phase's last count is shown, however fast it was
                    state.update(phase=msg[2], pt0=msg[1], count=None)
                elif msg[0] == "C":
                    state["count"] = msg[1:]
                    drawn[0] = False
                elif msg[0] == "W":
                    out("\r\x1b[K" + msg[1] + "\n")
        draw()
    out("\r\x1b[K")


if __name__ == "__main__":
    main()
