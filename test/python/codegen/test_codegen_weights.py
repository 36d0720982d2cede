"""Large constants are embedded in the .so (via .incbin), and still correct."""
from __future__ import annotations

import time

import mlir.ir as ir
import numpy as np
import pytest

from onnx_mlir_py.codegen import emit_library
from onnx_mlir_py.runtime import ExecutionSession
from onnx_mlir_py.timings import Timings

ROWS, COLS = 3200, 4096          # 13,107,200 f32 = 50 MiB

BIG = f"""
func.func @main_graph(%x: tensor<{ROWS}x{COLS}xf32> {{onnx.name = "x"}})
    -> (tensor<{ROWS}x{COLS}xf32> {{onnx.name = "y"}}, tensor<4xi64> {{onnx.name = "small"}}) {{
  %w = arith.constant dense<0.0> : tensor<{ROWS}x{COLS}xf32>
  %k = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi64>
  %e = tensor.empty() : tensor<{ROWS}x{COLS}xf32>
  %y = linalg.add ins(%x, %w : tensor<{ROWS}x{COLS}xf32>, tensor<{ROWS}x{COLS}xf32>)
                  outs(%e : tensor<{ROWS}x{COLS}xf32>) -> tensor<{ROWS}x{COLS}xf32>
  return %y, %k : tensor<{ROWS}x{COLS}xf32>, tensor<4xi64>
}}
"""


@pytest.mark.parametrize("kind", ["dense", "dense_resource"])
def test_50mb_weight(tmp_path, kind):
    w = np.random.default_rng(0).standard_normal((ROWS, COLS), dtype=np.float32)
    with ir.Context(), ir.Location.unknown():
        m = ir.Module.parse(BIG)
        func = m.body.operations[0]
        cst = func.regions[0].blocks[0].operations[0]
        if kind == "dense":
            cst.attributes["value"] = ir.DenseElementsAttr.get(w)
        else:
            ty = ir.RankedTensorType.get([ROWS, COLS], ir.F32Type.get())
            cst.attributes["value"] = ir.DenseResourceElementsAttr.get_from_buffer(
                memoryview(w), "big_weight", ty)
        t0 = time.perf_counter()
        timings = Timings()
        path = emit_library(m, tmp_path / "big.so", timings=timings)
        seconds = time.perf_counter() - t0
    print(f"\n50 MiB weight ({kind}): compiled in {seconds:.2f}s {dict(timings)}")
    assert seconds < 60
    sess = ExecutionSession(path)
    x = np.ones((ROWS, COLS), np.float32)
    y, k = sess.run([x])
    np.testing.assert_array_equal(y, x + w)
    np.testing.assert_array_equal(k, [1, 2, 3, 4])
    size = (tmp_path / "big.so").stat().st_size
    assert w.nbytes <= size < w.nbytes + 4 * 2**20


SAME_BYTES = """
func.func private @helper(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %w = arith.constant dense<2.5> : tensor<64x64xf32>
  %e = tensor.empty() : tensor<64x64xf32>
  %y = linalg.add ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>)
                  outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %y : tensor<64x64xf32>
}
func.func @main_graph(%x: tensor<64x64xf32> {onnx.name = "x"})
    -> (tensor<64x64xf32> {onnx.name = "y"}, tensor<64x64xi32> {onnx.name = "z"}) {
  %w = arith.constant dense<2.5> : tensor<64x64xf32>
  %i = arith.constant dense<1075838976> : tensor<64x64xi32>
  %e = tensor.empty() : tensor<64x64xf32>
  %a = linalg.add ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>)
                  outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %y = func.call @helper(%a) : (tensor<64x64xf32>) -> tensor<64x64xf32>
  return %y, %i : tensor<64x64xf32>, tensor<64x64xi32>
}
"""


TWINS = """
memref.global "private" constant @a : memref<64x64xf32> = dense<1.5>
memref.global "private" constant @b : memref<64x64xf32> = dense<1.5>
func.func @main_graph() -> (memref<64x64xf32>, memref<64x64xf32>) {
  %a = memref.get_global @a : memref<64x64xf32>
  %b = memref.get_global @b : memref<64x64xf32>
  return %a, %b : memref<64x64xf32>, memref<64x64xf32>
}
"""


def test_equal_constants_one_copy(tmp_path):
    """Constants with the same bytes and type are one weight symbol (the ISA
    variants of codegen/fat.py share weights this way); the same bytes as
    another type (2.5f == 1075838976) stay a symbol of their own."""
    from onnx_mlir_py.codegen.llvm import emit_mlir_llvm
    from onnx_mlir_py.codegen.weights import WeightStore, externalize_weights
    with ir.Context():
        twins = ir.Module.parse(TWINS)          # two globals with the same bytes
        store = externalize_weights(twins, WeightStore())
        assert twins.operation.verify() and len(store.weights) == 1
        assert str(twins).count("memref.global") == 1 and str(twins).count("@__om_weight_0") == 3
        store = WeightStore()
        emit_mlir_llvm(ir.Module.parse(SAME_BYTES), weights=store)
        assert len(store.weights) == 2 and store.weights[0].data == store.weights[1].data
        emit_mlir_llvm(ir.Module.parse(SAME_BYTES), weights=store)      # a second module
        assert len(store.weights) == 2
        so = emit_library(ir.Module.parse(SAME_BYTES), tmp_path / "same.so")
    x = np.random.default_rng(0).standard_normal((64, 64), dtype=np.float32)
    y, z = ExecutionSession(so).run([x])
    np.testing.assert_allclose(y, x + 5.0, rtol=1e-6)
    assert (z == 1075838976).all()


def _build_id(so) -> bytes:
    """The GNU build-id note's 20 bytes (namesz 4, descsz 20, NT_GNU_BUILD_ID)."""
    import struct
    data = open(so, "rb").read()
    head = struct.pack("<III", 4, 20, 3) + b"GNU\0"
    at = data.find(head)
    assert at >= 0 and data.find(head, at + 1) < 0
    return data[at + len(head):at + len(head) + 20]


def test_build_id_from_the_weights_digests(tmp_path):
    """The library's build-id is link.py's (the objects' bytes and the
    weights' digests, not ld's hash of the whole output): the same module
    gives the same id, other weight bytes another one."""
    with ir.Context():
        a = emit_library(ir.Module.parse(SAME_BYTES), tmp_path / "a.so")
        a2 = emit_library(ir.Module.parse(SAME_BYTES), tmp_path / "a2.so")
        b = emit_library(ir.Module.parse(SAME_BYTES.replace("dense<2.5>", "dense<3.5>")),
                         tmp_path / "b.so")
    assert _build_id(a) == _build_id(a2) != _build_id(b)
    assert open(a, "rb").read() == open(a2, "rb").read()
    x = np.random.default_rng(0).standard_normal((64, 64), dtype=np.float32)
    np.testing.assert_allclose(ExecutionSession(b).run([x])[0], x + 7.0, rtol=1e-6)


def test_store_finds_copies_by_bytes_not_by_edges():
    """WeightStore.add: weights of one size and type whose ends are equal
    but whose middles differ are two symbols (zero-padded packed weights
    look alike at both ends); equal bytes are one symbol whatever the
    buffer; another type is another symbol; the digests (made on the
    digest thread) are the bytes' sha256."""
    import hashlib
    from onnx_mlir_py.codegen.weights import WeightStore
    n = 3 * 4096
    a = np.zeros(n, np.uint8)
    a[n // 2] = 1
    b = np.zeros(n, np.uint8)
    b[n // 2 + 1] = 1
    store = WeightStore()
    sa = store.add(memoryview(a), 64, "t")
    sb = store.add(memoryview(b), 64, "t")
    assert sa != sb
    assert store.add(a.tobytes(), 128, "t") == sa          # the same bytes, a copy
    assert store.add(memoryview(b.copy()), 64, "t") == sb
    assert store.add(memoryview(a), 64, "u") not in (sa, sb)
    assert len(store.weights) == 3 and store.weights[0].alignment == 128
    for w in store.weights:
        assert w.digest == hashlib.sha256(w.data).digest()
