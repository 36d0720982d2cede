"""How om_parallel_for (runtime/c/om_parallel.c) cuts a loop: every
iteration runs exactly once, no chunk is empty, and the threads' shares are
as even as whole iterations allow (a share boundary at i * n / threads,
rounded as even_part does, is always a chunk boundary). Before, chunks were
equal over the whole loop and shares whole chunks: 35 iterations at 2
threads were shares of 19 and 16 (8 chunks: 5,5,5,4 | 4,4,4,4), 21 were
12 and 9.

The pool's source is compiled into a small C program with stubs for the
runtime's error hooks; it records the (lo, hi) of every chunk."""
from __future__ import annotations

import subprocess

import pytest

from onnx_mlir_py.codegen.link import RUNTIME_DIR
from onnx_mlir_py.codegen.tools import tool

HARNESS = r"""
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
__thread jmp_buf *om_check_target;
void om_error_get(char *b, size_t c, int64_t *k, int *e) { (void)b; (void)c; *k = 0; *e = 0; }
void om_error_raise(const char *m, int64_t k, int e) { (void)m; (void)k; (void)e; abort(); }
void om_alloc_site(int64_t id) { (void)id; }
int64_t om_alloc_site_get(void) { return 0; }
void om_parallel_for(int64_t n, void (*fn)(void *, int64_t, int64_t), void *ctx);
void omSetNumThreads(int n);
void omPoolShutdown(void);
typedef struct { int64_t lo, hi; } Chunk;
static Chunk chunks[4096];
static _Atomic int nchunks;
static void body(void *ctx, int64_t lo, int64_t hi) {
  (void)ctx;
  chunks[nchunks++] = (Chunk){lo, hi};
}
int main(int argc, char **argv) {
  int threads = atoi(argv[1]);
  omSetNumThreads(threads);
  for (int64_t n = 2; n <= atoll(argv[2]); n++) {
    nchunks = 0;
    om_parallel_for(n, body, 0);
    printf("%lld", (long long)n);
    for (int i = 0; i < nchunks; i++) printf(" %lld:%lld", (long long)chunks[i].lo, (long long)chunks[i].hi);
    printf("\n");
  }
  omPoolShutdown();
  return 0;
}
"""


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    d = tmp_path_factory.mktemp("pool_partition")
    (d / "h.c").write_text(HARNESS)
    exe = d / "h"
    subprocess.run([tool("gcc"), "-O1", "-std=gnu11", "-o", str(exe), str(d / "h.c"),
                    str(RUNTIME_DIR / "om_parallel.c"), "-lpthread"], check=True)
    return exe


def even_bounds(n: int, parts: int) -> list[int]:
    q, r = divmod(n, parts)
    return [i * q + min(i, r) for i in range(parts + 1)]


@pytest.mark.parametrize("threads", [2, 3, 4])
def test_chunks_cover_once_and_shares_are_even(harness, threads):
    out = subprocess.run([str(harness), str(threads), "70"], check=True, capture_output=True,
                         text=True, timeout=60).stdout
    for line in out.splitlines():
        n, *parts = line.split()
        n = int(n)
        chunks = sorted(tuple(map(int, p.split(":"))) for p in parts)
        assert all(lo < hi for lo, hi in chunks), (n, chunks)          # no empty call
        assert chunks[0][0] == 0 and chunks[-1][1] == n, (n, chunks)
        assert all(a[1] == b[0] for a, b in zip(chunks, chunks[1:])), (n, chunks)  # once each
        assert len(chunks) <= 4 * threads
        cuts = {lo for lo, _ in chunks} | {n}
        assert set(even_bounds(n, threads)) <= cuts, (n, chunks)      # shares differ by <= 1
