"""benchmarks/kernels.py --cpu: thread CPU timing of one conv shape (1 thread)."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KERNELS = os.path.join(ROOT, "benchmarks", "kernels.py")


def test_kernel_benchmark_cpu(tmp_path):
    """One MobileNetV2 1x1 shape checked against onnxruntime and timed by
    thread CPU: medians in the table's columns, minima beside them."""
    key = "c320_h7_w7_o1280_k1x1_s1x1_p0x0x0x0_g1_d1x1"
    r = subprocess.run([sys.executable, KERNELS, "--quick", "--cpu", "--models", "mobilenetv2",
                        "--filter", key, "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "kernels.json").read_text())
    (row,) = res["rows"]["mobilenetv2"]
    assert row["status"] == "ok" and row["max_abs_err"] < 1e-3, row
    tm = row["timings"]["1"]
    assert tm["clock"] == "thread_cpu" and tm["reps"] >= 10
    assert 0 < tm["ours_min_ms"] <= tm["ours_ms"] and 0 < tm["ort_min_ms"] <= tm["ort_ms"]
    assert tm["ratio"] == tm["ours_ms"] / tm["ort_ms"]
    assert tm["min_ratio"] == tm["ours_min_ms"] / tm["ort_min_ms"]
    assert "times: thread CPU medians" in (tmp_path / "kernels.md").read_text()


def test_kernel_benchmark_cpu_is_one_thread():
    r = subprocess.run([sys.executable, KERNELS, "--cpu", "--threads", "1,2", "--list"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "--cpu: thread CPU time measures 1-thread runs only" in r.stderr
