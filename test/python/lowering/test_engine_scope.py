"""The lowering tests' ExecutionEngine harness keeps LLVM out of the process's
global symbol scope. With libmlir_c_runner_utils.so given to the engine as a
shared lib, it was dlopened RTLD_GLOBAL together with libLLVM.so, and a
TensorFlow imported later in the same pytest worker bound its own LLVM's
static initializers to that copy and aborted (CI, 2 TensorFlow tests)."""
from __future__ import annotations

import ctypes

import numpy as np
from onnx import TensorProto as T
from onnx import helper

import engine

LLVM_SYMBOL = "_ZN4llvm2cl6Option11addArgumentEv"     # llvm::cl::Option::addArgument()


def _global(symbol: str) -> bool:
    try:
        ctypes.CDLL(None)[symbol]
        return True
    except AttributeError:
        return False


def test_engine_run_keeps_llvm_local():
    # a strided slice of a transpose: bufferizes to a memref.copy between
    # non-identity layouts, i.e. a call to the runner utils' memrefCopy
    g = helper.make_graph(
        [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
         helper.make_node("Slice", ["t", "s", "e", "a", "st"], ["y"])], "g",
        [helper.make_tensor_value_info("x", T.FLOAT, [4, 6])],
        [helper.make_tensor_value_info("y", T.FLOAT, [3, 2])],
        [helper.make_tensor("s", T.INT64, [2], [0, 1]), helper.make_tensor("e", T.INT64, [2], [6, 4]),
         helper.make_tensor("a", T.INT64, [2], [0, 1]), helper.make_tensor("st", T.INT64, [2], [2, 2])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    want = x.T[0:6:2, 1:4:2]
    (y,) = engine.run_model(m, {"x": x}, [want])
    np.testing.assert_array_equal(y, want)
    assert not _global(LLVM_SYMBOL)
