"""dialects/onnx/dims.py: one helper, two modes (static ints/UNKNOWN here;
run-time values are covered by the lowering tests)."""
import pytest

from onnx_mlir_py.dialects.onnx import dims as D


def _conv_out(ctx, n, k, s, p):
    gap = n + 2 * p - k
    ctx.require(D.ge(gap, 0), "input {0} + pads is smaller than the kernel {1}", n, k)
    return gap // s + 1


class _Fail(Exception):
    pass


def _ctx():
    def fail(msg):
        raise _Fail(msg)
    return D.ShapeChecks(fail)


def test_static_and_unknown():
    assert _conv_out(_ctx(), 10, 3, 2, 1) == 5
    assert _conv_out(_ctx(), D.UNKNOWN, 3, 2, 1) is D.UNKNOWN
    assert D.to_static([D.UNKNOWN, 3]) == [None, 3]
    assert D.from_static([None, 2]) == [D.UNKNOWN, 2]
    assert D.select(D.eq(D.UNKNOWN, 1), 4, 4) == 4        # both arms equal: known
    assert D.select(D.eq(3, 1), 4, 5) == 5
    assert D.dmax(D.UNKNOWN, 2) is D.UNKNOWN and D.ceil_div(7, 2) == 4
    assert D.either(D.UNKNOWN, True) is True and D.both(D.UNKNOWN, False) is False


def test_require_fails_at_compile_time_only_when_known():
    with pytest.raises(_Fail, match="input 1 \\+ pads is smaller than the kernel 5"):
        _conv_out(_ctx(), 1, 5, 1, 0)
    _conv_out(_ctx(), D.UNKNOWN, 5, 1, 0)            # left to run time


def test_unknown_has_no_truth_value():
    with pytest.raises(TypeError):
        bool(D.UNKNOWN)
