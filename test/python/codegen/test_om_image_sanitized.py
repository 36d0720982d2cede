"""runtime/c/om_image.c under AddressSanitizer and UBSan: every image of a
set of valid BMP / PNG / PNM files (all the decoders' paths) and thousands
of mutations of each (cut short, bytes flipped or replaced, PNG chunk CRCs
made valid again so the damage reaches the inflater and the filters) is
decoded in the three pixel formats from an exact-size buffer. Each either
decodes or fails through om_check_failed (a stub that longjmps, as the real
one); a read or write out of bounds, an overflow or any undefined behaviour
aborts the harness. The same run with sanitizers off must agree on what
decodes (no behaviour that depends on memory past the input)."""
from __future__ import annotations

import io
import struct
import subprocess
import zlib

import numpy as np
from PIL import Image

from onnx_mlir_py.codegen.cwrapper import RUNTIME_DIR
from onnx_mlir_py.codegen.tools import tool

HARNESS = r"""
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int64_t om_image_decode(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t);
int64_t om_image_dim(int64_t, int64_t);
int64_t om_image_read(int64_t, int64_t);
static jmp_buf jb;
static void *arena[4096];
static int na;
void om_check_failed(int64_t id, int64_t a, int64_t b, int64_t c, int64_t d) {
  (void)id; (void)a; (void)b; (void)c; (void)d;
  longjmp(jb, 1);
}
void *om_arena_alloc(uint64_t n) {
  if (n > (1u << 28) || na == 4096) longjmp(jb, 1);   /* as a failed allocation */
  return arena[na++] = malloc(n ? n : 1);
}
static uint32_t crc(const uint8_t *p, size_t n) {
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
  }
  return c ^ 0xffffffffu;
}
static void fix_crcs(uint8_t *d, size_t n) {
  if (n < 8 || memcmp(d, "\x89PNG", 4)) return;
  for (size_t pos = 8; pos + 12 <= n;) {
    uint32_t len = (uint32_t)d[pos] << 24 | d[pos + 1] << 16 | d[pos + 2] << 8 | d[pos + 3];
    if (len > n - pos - 12) return;
    uint32_t c = crc(d + pos + 4, len + 4);
    uint8_t *q = d + pos + 8 + len;
    q[0] = (uint8_t)(c >> 24); q[1] = (uint8_t)(c >> 16); q[2] = (uint8_t)(c >> 8); q[3] = (uint8_t)c;
    pos += 12 + len;
  }
}
static long ok, bad;
static void run(const uint8_t *d, size_t n) {
  uint8_t *copy = malloc(n ? n : 1);      /* exact size: a read past n is caught */
  memcpy(copy, d, n);
  for (volatile int mode = 0; mode < 3; ++mode) {
    if (setjmp(jb) == 0) {
      int64_t img = om_image_decode((int64_t)(intptr_t)copy, 0, 1, (int64_t)n, mode, 0);
      int64_t h = om_image_dim(img, 0), w = om_image_dim(img, 1), c = om_image_dim(img, 2);
      uint8_t *out = malloc((size_t)(h * w * c));
      om_image_read(img, (int64_t)(intptr_t)out);
      free(out);
      ok++;
    } else {
      bad++;
    }
    while (na) free(arena[--na]);
  }
  free(copy);
}
int main(int argc, char **argv) {
  static uint8_t seed[1 << 20], m[1 << 20];
  int iters = atoi(argv[1]);
  srand(1234);
  for (int f = 2; f < argc; ++f) {
    FILE *fp = fopen(argv[f], "rb");
    size_t n = fread(seed, 1, sizeof seed, fp);
    fclose(fp);
    run(seed, n);
    for (int it = 0; it < iters; ++it) {
      size_t len = n;
      memcpy(m, seed, n);
      int kind = rand() % 4;
      if (kind == 0) len = (size_t)rand() % (n + 1);
      for (int k = 1 + rand() % 4; k > 0 && len; --k) {
        size_t at = (size_t)rand() % len;
        if (rand() % 2) m[at] ^= (uint8_t)(1u << (rand() % 8)); else m[at] = (uint8_t)rand();
      }
      if (kind >= 2) fix_crcs(m, len);
      run(m, len);
    }
  }
  printf("decoded %ld, refused %ld\n", ok, bad);
  return 0;
}
"""


def _seeds(folder):
    a = np.random.default_rng(0).integers(0, 256, (9, 11, 3), dtype=np.uint8) // 32 * 32
    im = Image.fromarray(a)
    files = {}

    def save(name, img, fmt, **kw):
        b = io.BytesIO()
        img.save(b, fmt, **kw)
        files[name] = b.getvalue()
    for mode in ("RGB", "P", "L", "LA", "RGBA", "1"):
        save(f"{mode}.png", im.convert(mode), "PNG")
    save("p2.png", im.convert("P"), "PNG", bits=2)
    for mode in ("RGB", "P", "1", "RGBA"):
        save(f"{mode}.bmp", im.convert(mode), "BMP")
    for mode in ("RGB", "L", "1"):
        save(f"{mode}.pnm", im.convert(mode), "PPM")
    files["p3.ppm"] = b"P3\n# c\n3 2\n200\n" + b" ".join(
        str(int(v) % 201).encode() for v in a[:2, :3].ravel())
    files["p1.pbm"] = b"P1\n3 2\n101\n010\n"
    raw = b"".join(bytes([y % 5]) + a[y].tobytes() for y in range(9))
    fixed = zlib.compressobj(6, zlib.DEFLATED, 15, 8, zlib.Z_FIXED)

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d))
    for name, z in (("fixed.png", fixed.compress(raw) + fixed.flush()),
                    ("stored.png", zlib.compress(raw, 0))):
        files[name] = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 11, 9, 8, 2,
                                                                          0, 0, 0))
                       + chunk(b"IDAT", z) + chunk(b"IEND", b""))
    paths = []
    for name, data in files.items():
        (folder / name).write_bytes(data)
        paths.append(str(folder / name))
    return paths


def _build(tmp_path, name, flags):
    src = tmp_path / "harness.c"
    src.write_text(HARNESS)
    exe = tmp_path / name
    subprocess.run([tool("gcc"), "-O1", "-g", *flags, f"-I{RUNTIME_DIR}", "-o", str(exe),
                    str(src), str(RUNTIME_DIR / "om_image.c")], check=True)
    return exe


def test_mutated_images_under_sanitizers(tmp_path):
    seeds = _seeds(tmp_path)
    outs = []
    for name, flags in (("asan", ["-fsanitize=address,undefined",
                                  "-fno-sanitize-recover=all"]), ("plain", [])):
        exe = _build(tmp_path, name, flags)
        r = subprocess.run([str(exe), "300", *seeds], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
        outs.append(r.stdout.strip())
    decoded, refused = map(int, outs[0].replace(",", "").split()[1::2])
    assert decoded > 1000 and refused > 1000, outs[0]
    assert outs[0] == outs[1]
