"""Run-wide notes: without the ``[tf]`` extra the TensorFlow frontend tests
(test/python/tensorflow) are skipped, and the run says so in its header and
in its closing summary, not only as skip reasons. Without torch / onnxscript
(the ``[export]`` extra) the tests marked ``export`` (they run torch's
exporters) are deselected, and the run says so the same way."""
from __future__ import annotations

import importlib.util

EXPORT_PACKAGES = ("torch", "onnxscript")


def _export_note() -> str | None:
    missing = [p for p in EXPORT_PACKAGES if importlib.util.find_spec(p) is None]
    if not missing:
        return None
    return (f"torch export tests (marker 'export') deselected: the [export] extra is absent "
            f"(not installed: {', '.join(missing)}; pip install -e '.[export]')")


def pytest_configure(config):
    config.addinivalue_line("markers", "export: runs torch's exporters (needs the [export] "
                            "extra; deselected without it)")


def pytest_collection_modifyitems(config, items):
    if _export_note() is None:
        return
    keep, drop = [], []
    for item in items:
        (keep if item.get_closest_marker("export") is None else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def _tf_note() -> str | None:
    from onnx_mlir_py.frontends.tensorflow.errors import missing_packages
    missing = missing_packages()
    if not missing:
        return None
    return (f"TensorFlow frontend tests (test/python/tensorflow) skipped: the [tf] extra is "
            f"absent (not installed: {', '.join(missing)}; pip install -e '.[tf]')")


def pytest_report_header(config):
    return [note for note in (_tf_note(), _export_note()) if note]


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    for note in (_tf_note(), _export_note()):
        if note:
            terminalreporter.write_line(note)
