"""``onnx-mlir-py verify --precision bf16``: both builds run on the same
inputs, the error of bf16 against fp32 reported per output in one table,
exit 0; the error figures checked against numpy on the outputs."""
import math

import numpy as np
import pytest

from onnx_mlir_py.cli import main
from onnx_mlir_py.target import resolve
from onnx_mlir_py.verify.compare import error_stats
from test_verify_cli import mlp

HOST = resolve(None, None, host_default=True)
needs_bf16 = pytest.mark.skipif(not (HOST.avx512_bf16 or HOST.amx_bf16),
                                reason="the build machine has no AVX512-BF16 / AMX-BF16")


def test_error_stats():
    ref = np.array([[1.0, -2.0], [4.0, 0.0]], np.float32)
    ours = ref + np.array([[0.0, 0.5], [-1.0, 0.0]], np.float32)
    st = error_stats(ours, ref)
    assert st.max_abs == 1.0 and st.rel_max == 0.25 and not st.why
    assert math.isclose(st.rel_l2, math.sqrt(1.25) / math.sqrt(21.0), rel_tol=1e-12)
    assert error_stats(ref, ref).rel_l2 == 0.0
    assert "against" in error_stats(ref[0], ref).why
    assert error_stats(np.array([1, 2]), np.array([1, 3])).why == "1 of 2 elements differ"
    assert error_stats(np.array([np.nan]), np.array([np.nan])).why.startswith("equal")


@needs_bf16
@pytest.mark.parametrize("n", [1, 5])       # the dynamic batch at two sizes
def test_verify_precision_bf16_reports_error_against_fp32(tmp_path, capsys, n):
    from onnx_mlir_py.verify.run import verify_precision
    model = mlp(tmp_path / "mlp.onnx")
    r = verify_precision(model, shapes={"x": [n, 8]}, opt_level=0)
    assert list(r.stats) == ["y", "z"]
    for name in r.outputs:
        ours, fp32 = r.ours[name], r.fp32[name]
        assert ours.shape == fp32.shape == ((n, 4) if name == "y" else (n, 16))
        d = np.abs(ours.astype(np.float64) - fp32)
        st = r.stats[name]
        assert st.max_abs == pytest.approx(d.max())
        assert st.rel_l2 == pytest.approx(np.linalg.norm(d) / np.linalg.norm(fp32))
        assert 0 < st.rel_l2 < 2.0 ** -8 * math.sqrt(16)        # bf16's error, K <= 16
    assert main(["verify", str(model), "--precision", "bf16", "--shape", f"x:{n}x8",
                 "-O0"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"verify {model}: --precision bf16 against fp32 (both compiled, "
                             f"-O0), random inputs (seed 0)")
    header = next(i for i, ln in enumerate(out) if ln.split()[:2] == ["output", "type"])
    assert out[header].split() == ["output", "type", "max", "abs", "err", "/", "max",
                                   "|fp32|", "rel", "L2"]
    rows = [ln.split() for ln in out[header + 1:header + 3]]
    assert [r_[0] for r_ in rows] == ["'y'", "'z'"]
    assert rows[0][1:3] == [f"float32[{n},", "4]"] and rows[1][1:3] == [f"float32[{n},", "16]"]
    for row, name in zip(rows, ("y", "z")):      # the figures of verify_precision's stats
        assert [float(x) for x in row[3:]] == pytest.approx(
            [r.stats[name].max_abs, r.stats[name].rel_max, r.stats[name].rel_l2], rel=6e-3)  # 3 digits
    assert out[-1].startswith("bf16 error: worst relative L2 ")


def test_verify_precision_bad_options(tmp_path, capsys):
    model = mlp(tmp_path / "mlp.onnx")
    with pytest.raises(SystemExit) as e:
        main(["verify", model, "--precision", "bf16", "--every-value"])
    assert e.value.code == 2
    assert "--every-value compares with a reference" in capsys.readouterr().err
