"""Run-wide notes: without the ``[tf]`` extra the TensorFlow frontend tests
(test/python/tensorflow) are skipped, and the run says so in its header and
in its closing summary, not only as skip reasons. The tests marked with an
extra's name (``export``: torch's exporters; ``ray``: the Ray integration)
are deselected when that extra is absent, and the run says so the same way."""
from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import signal
import tempfile

import pytest

# marker (= the extra's name) -> (the packages its tests need, what they test)
OPTIONAL = {"export": (("torch", "onnxscript"), "torch export tests"),
            "ray": (("ray",), "Ray integration tests")}


def _absent() -> dict[str, list[str]]:
    """marker -> the packages of its extra that are not installed (only the
    markers with some)."""
    missing = {m: [p for p in pkgs if importlib.util.find_spec(p) is None]
               for m, (pkgs, _) in OPTIONAL.items()}
    return {m: ps for m, ps in missing.items() if ps}


def _optional_notes() -> list[str]:
    return [f"{OPTIONAL[m][1]} (marker '{m}') deselected: the [{m}] extra is absent "
            f"(not installed: {', '.join(ps)}; pip install -e '.[{m}]')"
            for m, ps in _absent().items()]


def pytest_configure(config):
    # the -O3 kernel cache (codegen/kernel_cache.py) of this run (each xdist
    # worker its own) in a temp folder, not in the user's ~/.cache
    if "ONNX_MLIR_PY_KERNEL_CACHE" not in os.environ:
        d = tempfile.mkdtemp(prefix="om-test-kernels-")
        os.environ["ONNX_MLIR_PY_KERNEL_CACHE"] = d
        atexit.register(shutil.rmtree, d, True)
    # the interrupt tests (faults/, test_llvm_capi) Ctrl-C the compiles they
    # start: a run started in the background (`cmd &` in a script, nohup)
    # inherits SIGINT ignored and would pass it on to them, so they would
    # never see the signal; they get the default back
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    for m, (_, what) in OPTIONAL.items():
        config.addinivalue_line("markers", f"{m}: {what} (need the [{m}] extra; deselected "
                                f"without it)")


@pytest.fixture(autouse=True)
def _stage_cache(tmp_path_factory, monkeypatch):
    """Each test its own -O3 stage cache (passes/optimize/stage_cache.py):
    a test that patches an -O3 function must not take another test's
    entry for a model of the same structure."""
    if os.environ.get("ONNX_MLIR_PY_STAGE_CACHE") != "0":
        monkeypatch.setenv("ONNX_MLIR_PY_STAGE_CACHE", str(tmp_path_factory.mktemp("o3")))


def pytest_collection_modifyitems(config, items):
    absent = set(_absent())
    if not absent:
        return
    keep, drop = [], []
    for item in items:
        (drop if any(item.get_closest_marker(m) for m in absent) else keep).append(item)
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
    return [note for note in (_tf_note(), *_optional_notes()) if note]


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    for note in (_tf_note(), *_optional_notes()):
        if note:
            terminalreporter.write_line(note)
