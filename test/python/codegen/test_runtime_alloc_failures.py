"""Every allocation of a model library (generated code, om_runtime.c, the
entry wrapper, the output wrapping) is checked: a malloc shim (LD_PRELOAD)
makes the k-th allocation called from the model .so fail, for every k of a
run, from Python and from the C example (examples/c/run_model.c). Each run
either fails with an out-of-memory error (ModelRunError / exit status 1 and
the message) or, where the runtime can do without (none today), gives the
right answer; never a signal. Sizes computed from a shape are overflow
checked: omTensorCreateEmpty of [2**62, 4] floats is an error, not a 0-byte
buffer the caller writes 2**64 bytes into."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import onnx_mlir_py
from onnx_mlir_py.codegen.tools import tool

from test_c_example import _build_example

SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_memalign(size_t, size_t);
static const char *lib;            /* path of the model library */
static long fail_at = -1, count;
static __thread int busy;
static int fail_now(void *ra) {
  Dl_info i;
  if (!lib || busy) return 0;
  busy = 1;
  int mine = dladdr(ra, &i) && i.dli_fname && strcmp(i.dli_fname, lib) == 0;
  busy = 0;
  return mine && __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED) == fail_at;
}
void *malloc(size_t n) {
  return fail_now(__builtin_return_address(0)) ? NULL : __libc_malloc(n);
}
void *calloc(size_t a, size_t b) {
  return fail_now(__builtin_return_address(0)) ? NULL : __libc_calloc(a, b);
}
int posix_memalign(void **p, size_t al, size_t n) {
  if (fail_now(__builtin_return_address(0))) return ENOMEM;
  void *q = __libc_memalign(al, n);
  if (!q) return ENOMEM;
  *p = q;
  return 0;
}
void shim_set(const char *l, long k) { lib = l; fail_at = k; count = 0; }
long shim_count(void) { return count; }
__attribute__((constructor)) static void shim_init(void) {
  if (getenv("SHIM_LIB")) shim_set(getenv("SHIM_LIB"), getenv("SHIM_FAIL") ? atol(getenv("SHIM_FAIL")) : -1);
}
__attribute__((destructor)) static void shim_fini(void) {
  const char *o = getenv("SHIM_COUNT_FILE");
  FILE *f = o ? fopen(o, "w") : NULL;
  if (f) { fprintf(f, "%ld\n", count); fclose(f); }
}
"""

_PY_CHILD = r"""
import ctypes, re, sys, numpy as np
from onnx_mlir_py.runtime import ExecutionSession, ModelRunError
so, shim = sys.argv[1], ctypes.CDLL(sys.argv[2])
shim.shim_set.argtypes = [ctypes.c_char_p, ctypes.c_long]
shim.shim_count.restype = ctypes.c_long
lib = ctypes.create_string_buffer(so.encode())    # kept alive: the shim keeps the pointer
x = np.arange(20, dtype=np.float32).reshape(5, 4) - 7
i = np.array([4, -1, 0], np.int64)
want = ExecutionSession(so).run([x, i])
sess = ExecutionSession(so)
shim.shim_set(lib, -1)
sess.run([x, i])
n = shim.shim_count()
failed, nodes = 0, set()
for k in range(n):
    shim.shim_set(lib, k)
    try:
        got = sess.run([x, i])
    except ModelRunError as e:
        assert "out of memory" in str(e), str(e)
        failed += 1
        nodes.update(re.findall(r"node '(\w+)'", str(e)))
    else:
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
shim.shim_set(lib, -1)
for a, b in zip(sess.run([x, i]), want):
    np.testing.assert_array_equal(a, b)
print(n, failed, *sorted(nodes))
"""


def _model():
    """Gather (an index check) -> Transpose -> Relu, both results outputs:
    intermediate and output buffers of run-time size."""
    g = h.make_graph([h.make_node("Gather", ["x", "i"], ["g"], name="gat", axis=0),
                      h.make_node("Transpose", ["g"], ["t"], name="tr"),
                      h.make_node("Relu", ["t"], ["y"], name="relu")], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, ["n", 4]),
                      h.make_tensor_value_info("i", T.INT64, ["k"])],
                     [h.make_tensor_value_info("y", T.FLOAT, None),
                      h.make_tensor_value_info("g", T.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _shim(tmp_path) -> str:
    src, so = tmp_path / "shim.c", tmp_path / "shim.so"
    src.write_text(SHIM)
    subprocess.run([tool("gcc"), "-O1", "-shared", "-fPIC", "-o", str(so), str(src), "-ldl"],
                   check=True)
    return str(so)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_every_allocation_failure_from_python(tmp_path, opt_level):
    so = os.path.realpath(onnx_mlir_py.compile(_model(), tmp_path / "m.so", opt_level=opt_level))
    shim = _shim(tmp_path)
    p = subprocess.run([sys.executable, "-c", _PY_CHILD, so, shim], capture_output=True,
                       text=True, env=dict(os.environ, LD_PRELOAD=shim), timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    n, failed, *nodes = p.stdout.split()
    assert int(n) >= 5 and int(failed) == int(n)     # every allocation of a run matters
    assert {"gat", "tr"} <= set(nodes)          # the model code's allocations name their node


def test_every_allocation_failure_from_c(tmp_path):
    exe = _build_example(tmp_path)
    so = os.path.realpath(onnx_mlir_py.compile(_model(), tmp_path / "m.so"))
    shim = _shim(tmp_path)
    np.arange(20, dtype=np.float32).tofile(tmp_path / "x.bin")
    np.array([4, -1, 0], np.int64).tofile(tmp_path / "i.bin")
    args = [exe, so, f"{tmp_path / 'x.bin'}:5x4", f"{tmp_path / 'i.bin'}:3"]
    env = dict(os.environ, LD_PRELOAD=shim, SHIM_LIB=so,
               SHIM_COUNT_FILE=str(tmp_path / "count"))
    ok = subprocess.run(args, capture_output=True, text=True, env=env)
    assert ok.returncode == 0, ok.stderr
    n = int((tmp_path / "count").read_text())
    assert n >= 5
    nodes = set()
    for k in range(n):
        p = subprocess.run(args, capture_output=True, text=True, env=dict(env, SHIM_FAIL=str(k)))
        assert p.returncode == 1, (k, p.returncode, p.stderr)      # an error, not a signal
        assert "out of memory" in p.stderr, (k, p.stderr)
        nodes.update(re.findall(r"node '(\w+)' \(\w+\): out of memory", p.stderr))
    assert {"gat", "tr"} <= nodes


def test_oversized_tensor_from_c(tmp_path):
    """run_model makes its inputs with omTensorCreateEmpty: a shape whose
    byte size overflows is refused (before: n * 4 wrapped to 0 bytes and the
    example filled 2**62 floats into it)."""
    exe = _build_example(tmp_path)
    so = onnx_mlir_py.compile(_model(), tmp_path / "m.so")
    for dims in (f"{2 ** 62}x4", f"{2 ** 31}x{2 ** 31}"):
        p = subprocess.run([exe, so, f":{dims}", ":3"], capture_output=True, text=True)
        assert p.returncode == 1, (p.returncode, p.stderr)
        assert "cannot create input 0: omTensorCreateEmpty: a tensor of this shape has 2**63 " \
            "bytes or more" in p.stderr


_POOL_CHILD = r"""
import ctypes, re, sys, numpy as np
from onnx_mlir_py.runtime import ExecutionSession, ModelRunError
so, shim, threads = sys.argv[1], ctypes.CDLL(sys.argv[2]), int(sys.argv[3])
shim.shim_set.argtypes = [ctypes.c_char_p, ctypes.c_long]
shim.shim_count.restype = ctypes.c_long
lib = ctypes.create_string_buffer(so.encode())
shape = [int(v) for v in sys.argv[4].split("x")]
x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
sess = ExecutionSession(so)
sess.set_num_threads(threads)
want = sess.run([x])
shim.shim_set(lib, -1)
sess.run([x])
n = shim.shim_count()
msgs = set()
for k in range(n):
    shim.shim_set(lib, k)
    try:
        got = sess.run([x])
    except ModelRunError as e:
        assert "out of memory" in str(e), str(e)
        msgs.add(re.sub(r"\d+ bytes", "N bytes", str(e)))
    else:
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)
shim.shim_set(lib, -1)
for a, b in zip(sess.run([x]), want):
    np.testing.assert_array_equal(a, b)
print(n)
for m in sorted(msgs):
    print(m)
"""


@pytest.mark.parametrize("threads", [1, 2])
def test_thread_pool_allocation_failures(tmp_path, threads):
    """-O3 parallel loops whose chunks allocate (the strips of a big conv,
    each with its own im2col, split across the pool's threads): every
    allocation of a run fails in turn, on the caller's thread or a worker's.
    A run fails with an out-of-memory error naming the conv (a failure in a
    worker's chunk is raised on the caller's thread once the chunks in
    flight are done: no abort, no hang), or gives the right answer, and the
    session works afterwards."""
    from onnx import numpy_helper as nh
    rng = np.random.default_rng(1)
    # 48 filters: not whole panels of 32, so the im2col strips (the direct
    # conv of conv_direct_pixels, which takes 64 filters, allocates less)
    w = nh.from_array(rng.standard_normal((48, 64, 3, 3)).astype(np.float32) * 0.05, "w")
    g = h.make_graph([h.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="cv"),
                      h.make_node("Relu", ["c"], ["y"], name="rl")], "g",
                     [h.make_tensor_value_info("x", T.FLOAT, [1, 64, 56, 56])],
                     [h.make_tensor_value_info("y", T.FLOAT, None)], [w])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    so = os.path.realpath(onnx_mlir_py.compile(m, tmp_path / "m.so", opt_level=3))
    shim = _shim(tmp_path)
    p = subprocess.run([sys.executable, "-c", _POOL_CHILD, so, shim, str(threads), "1x64x56x56"],
                       capture_output=True, text=True, env=dict(os.environ, LD_PRELOAD=shim),
                       timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    n, *msgs = p.stdout.splitlines()
    assert int(n) >= 14                  # one im2col per strip at least
    assert any("node 'cv' (Conv): out of memory: the model could not allocate" in m
               for m in msgs), msgs
