"""Trilu: our shape inference against onnx's."""
from _common import one
from helpers import infer_and_compare


def test_trilu():
    infer_and_compare(one("Trilu", [2, 4, 5], 14, upper=0))
