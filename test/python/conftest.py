"""Run-wide notes: without the ``[tf]`` extra the TensorFlow frontend tests
(test/python/tensorflow) are skipped, and the run says so in its header and
in its closing summary, not only as skip reasons."""
from __future__ import annotations


def _tf_note() -> str | None:
    from onnx_mlir_py.frontends.tensorflow.errors import missing_packages
    missing = missing_packages()
    if not missing:
        return None
    return (f"TensorFlow frontend tests (test/python/tensorflow) skipped: the [tf] extra is "
            f"absent (not installed: {', '.join(missing)}; pip install -e '.[tf]')")


def pytest_report_header(config):
    note = _tf_note()
    return [note] if note else []


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    note = _tf_note()
    if note:
        terminalreporter.write_line(note)
