/* ImageDecoder of the model code (passes/onnx_to_linalg/image_decoder.py).
 *
 * Decodes BMP, PNG and PNM (PBM/PGM/PPM) images written here, with no codec
 * library: the pixels equal Pillow's (what onnx.reference's ImageDecoder
 * uses), converted to RGB, BGR or Grayscale (Pillow's convert("L"):
 * (19595 R + 38470 G + 7471 B + 0x8000) >> 16). Every length and offset is
 * checked before it is read: a corrupt or truncated image fails the call
 * with om_check_failed(check_base + code, ...), `code` one of OM_IMG_* below
 * (the lowering registers one message per code, in this order), never a
 * read outside the input.
 *
 * JPEG, JPEG 2000, TIFF, WebP and GIF are recognised by their magic bytes
 * and refused (OM_IMG_JPEG..OM_IMG_GIF): matching Pillow's JPEG pixels
 * exactly needs libjpeg's IDCT and upsampling arithmetic, and linking a
 * codec library would add a system dependency the pip install does not have.
 *
 * Supported: BMP with the 12/40/52/56/108/124-byte headers, 1/4/8-bit
 * palette, 24-bit, 32-bit (BI_RGB, or BI_BITFIELDS with 8-bit masks),
 * bottom-up and top-down; PNG colour types 0 (bit depths 1/2/4/8),
 * 2, 3 (1/2/4/8), 4 and 6 (8), not interlaced, with zlib streams of stored,
 * fixed and dynamic Huffman blocks (chunk CRCs and the Adler-32 checked);
 * PNM P1-P6 with maxval 1..255 (scaled to 0..255 as Pillow). Alpha is
 * dropped (Pillow's convert("RGB")), palette indices past the palette are
 * black (Pillow's zero-filled palette).
 *
 * The decoded image lives in the run arena (freed at the end of the call):
 * om_image_decode returns it, om_image_dim gives its dims, om_image_read
 * copies its pixels into the output buffer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "om_entry.h"

#define OM_HIDDEN __attribute__((visibility("hidden")))

void *om_arena_alloc(uint64_t bytes);   /* om_seq.c */

/* Failure codes: passes/onnx_to_linalg/image_decoder.py MESSAGES, same order. */
enum {
  OM_IMG_JPEG, OM_IMG_JPEG2000, OM_IMG_TIFF, OM_IMG_WEBP, OM_IMG_GIF,
  OM_IMG_UNKNOWN,        /* v0: input bytes */
  OM_IMG_BMP_BAD,        /* v0: input bytes, v1: byte offset of the problem */
  OM_IMG_BMP_UNSUPP,     /* v0: bits per pixel, v1: compression, v2: header size */
  OM_IMG_PNG_BAD,        /* v0: input bytes, v1: byte offset */
  OM_IMG_PNG_UNSUPP,     /* v0: bit depth, v1: colour type, v2: interlace */
  OM_IMG_PNM_BAD,        /* v0: input bytes, v1: byte offset */
  OM_IMG_PNM_UNSUPP,     /* v0: the digit of P<n>, v1: maxval */
  OM_IMG_TOO_LARGE,      /* v0: width, v1: height */
  OM_IMG_BAD_STRIDE,     /* v0: the stride (internal: the input view) */
};

/* Pillow's limit (2 * Image.MAX_IMAGE_PIXELS): bigger is refused there too. */
#define OM_IMG_MAX_PIXELS 178956970LL

typedef struct {
  int64_t h, w, c;
  uint8_t *px;          /* h * w * c bytes, row-major HWC */
} om_image;

typedef struct {
  const uint8_t *d;
  int64_t n;            /* input bytes */
  int64_t base;         /* check id of code 0 */
  int64_t mode;         /* 0 RGB, 1 BGR, 2 Grayscale */
  om_image *img;
} om_img_ctx;

static _Noreturn void om_img_fail(const om_img_ctx *c, int code, int64_t v0, int64_t v1,
                                  int64_t v2) {
  om_check_failed(c->base + code, v0, v1, v2, 0);
  abort();   /* not reached: om_check_failed returns to the entry point */
}

/* The output buffer of a w x h image (checked size). */
static void om_img_alloc(om_img_ctx *c, int64_t w, int64_t h) {
  if (w <= 0 || h <= 0 || w > OM_IMG_MAX_PIXELS || h > OM_IMG_MAX_PIXELS ||
      w * h > OM_IMG_MAX_PIXELS)
    om_img_fail(c, OM_IMG_TOO_LARGE, w, h, 0);
  om_image *img = om_arena_alloc(sizeof *img);
  img->w = w;
  img->h = h;
  img->c = c->mode == 2 ? 1 : 3;
  img->px = om_arena_alloc((uint64_t)(w * h * img->c));
  c->img = img;
}

/* Store pixel i (row-major) from its R, G, B. */
static inline void om_img_put(const om_img_ctx *c, int64_t i, unsigned r, unsigned g,
                              unsigned b) {
  uint8_t *o = c->img->px;
  if (c->mode == 2) {
    o[i] = (uint8_t)((r * 19595u + g * 38470u + b * 7471u + 0x8000u) >> 16);
  } else {
    o += 3 * i;
    o[0] = (uint8_t)(c->mode ? b : r);
    o[1] = (uint8_t)g;
    o[2] = (uint8_t)(c->mode ? r : b);
  }
}

static uint32_t om_le16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t om_le32(const uint8_t *p) { return om_le16(p) | om_le16(p + 2) << 16; }
static uint32_t om_be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Sample k (of `bits` bits, MSB first) of a packed row. */
static unsigned om_packed(const uint8_t *row, int64_t k, int bits) {
  if (bits == 8) return row[k];
  int64_t bit = k * bits;
  return (row[bit >> 3] >> (8 - bits - (bit & 7))) & ((1u << bits) - 1);
}

/* ---- BMP ------------------------------------------------------------------ */
/* Shift and presence of an 8-bit channel mask (0: none, -1: not 8 contiguous bits). */
static int om_mask_shift(uint32_t m) {
  if (!m) return -2;
  for (int s = 0; s <= 24; s += 8)
    if (m == 0xffu << s) return s;
  return -1;
}

static void om_bmp(om_img_ctx *c) {
  const uint8_t *d = c->d;
  int64_t n = c->n;
  if (n < 26) om_img_fail(c, OM_IMG_BMP_BAD, n, n, 0);
  uint32_t off = om_le32(d + 10), hs = om_le32(d + 14);
  if (hs != 12 && hs != 40 && hs != 52 && hs != 56 && hs != 64 && hs != 108 && hs != 124)
    om_img_fail(c, OM_IMG_BMP_UNSUPP, 0, 0, hs);
  if ((int64_t)14 + hs > n) om_img_fail(c, OM_IMG_BMP_BAD, n, 14, 0);
  int64_t w, h;
  uint32_t bpp, comp = 0, used = 0;
  if (hs == 12) {
    w = om_le16(d + 18);
    h = om_le16(d + 20);
    bpp = om_le16(d + 24);
  } else {
    w = (int32_t)om_le32(d + 18);
    h = (int32_t)om_le32(d + 22);
    bpp = om_le16(d + 28);
    comp = om_le32(d + 30);
    used = om_le32(d + 46);
  }
  int top_down = h < 0;
  if (top_down) h = -h;
  int palette = bpp == 1 || bpp == 4 || bpp == 8;
  int rgb_ok = (bpp == 24 && comp == 0) || (bpp == 32 && (comp == 0 || comp == 3));
  if (!(palette && comp == 0) && !rgb_ok) om_img_fail(c, OM_IMG_BMP_UNSUPP, bpp, comp, hs);
  /* channel shifts of a 32-bit pixel (little-endian word) */
  int sh[3] = {16, 8, 0};
  if (comp == 3) {
    int64_t at = 54;   /* right after a 40-byte header, or inside a bigger one */
    if (at + 12 > n) om_img_fail(c, OM_IMG_BMP_BAD, n, at, 0);
    for (int k = 0; k < 3; ++k) {
      sh[k] = om_mask_shift(om_le32(d + at + 4 * k));
      if (sh[k] < 0) om_img_fail(c, OM_IMG_BMP_UNSUPP, bpp, comp, hs);
    }
  }
  om_img_alloc(c, w, h);
  uint8_t pal[256 * 3] = {0};
  if (palette) {
    int64_t ent = hs == 12 ? 3 : 4, max = (int64_t)1 << bpp;
    int64_t cnt = used && used < (uint32_t)max ? used : max;
    int64_t at = 14 + (int64_t)hs;
    if (at + cnt * ent > n) om_img_fail(c, OM_IMG_BMP_BAD, n, at, 0);
    for (int64_t k = 0; k < cnt; ++k)
      for (int j = 0; j < 3; ++j) pal[3 * k + j] = d[at + k * ent + 2 - j];
  }
  int64_t stride = ((w * bpp + 31) / 32) * 4;
  if ((int64_t)off > n || stride * h > n - (int64_t)off)
    om_img_fail(c, OM_IMG_BMP_BAD, n, off, 0);
  for (int64_t y = 0; y < h; ++y) {
    const uint8_t *row = d + off + stride * (top_down ? y : h - 1 - y);
    for (int64_t x = 0; x < w; ++x) {
      int64_t i = y * w + x;
      if (palette) {
        const uint8_t *p = pal + 3 * om_packed(row, x, (int)bpp);
        om_img_put(c, i, p[0], p[1], p[2]);
      } else if (bpp == 24) {
        om_img_put(c, i, row[3 * x + 2], row[3 * x + 1], row[3 * x]);
      } else {
        uint32_t v = om_le32(row + 4 * x);
        om_img_put(c, i, (v >> sh[0]) & 255, (v >> sh[1]) & 255, (v >> sh[2]) & 255);
      }
    }
  }
}

/* ---- PNM -------------------------------------------------------------------- */
static int om_space(uint8_t ch) { return ch == ' ' || (ch >= 9 && ch <= 13); }

/* Skip whitespace and comments at *pos; fails at the end of the data. */
static void om_pnm_skip(om_img_ctx *c, int64_t *pos) {
  for (;;) {
    if (*pos >= c->n) om_img_fail(c, OM_IMG_PNM_BAD, c->n, *pos, 0);
    uint8_t ch = c->d[*pos];
    if (ch == '#') {
      while (*pos < c->n && c->d[*pos] != '\n' && c->d[*pos] != '\r') ++*pos;
    } else if (om_space(ch)) {
      ++*pos;
    } else {
      return;
    }
  }
}

/* A decimal number at *pos (after whitespace / comments); at most 9 digits. */
static int64_t om_pnm_int(om_img_ctx *c, int64_t *pos) {
  om_pnm_skip(c, pos);
  int64_t v = 0, digits = 0;
  while (*pos < c->n && c->d[*pos] >= '0' && c->d[*pos] <= '9') {
    if (++digits > 9) om_img_fail(c, OM_IMG_PNM_BAD, c->n, *pos, 0);
    v = v * 10 + (c->d[(*pos)++] - '0');
  }
  if (!digits) om_img_fail(c, OM_IMG_PNM_BAD, c->n, *pos, 0);
  return v;
}

/* v scaled to 0..255 as Pillow: round(v / maxval * 255), half to even; a
 * binary sample above maxval is clamped to it. */
static unsigned om_pnm_scale(int64_t v, int64_t maxval) {
  if (v > maxval) v = maxval;
  if (maxval == 255) return (unsigned)v;
  double x = (double)v / (double)maxval * 255.0;
  int64_t f = (int64_t)x;
  double r = x - (double)f;
  return (unsigned)(r > 0.5 || (r == 0.5 && (f & 1)) ? f + 1 : f);
}

static void om_pnm(om_img_ctx *c) {
  int kind = c->d[1] - '0';
  int64_t pos = 2;
  int64_t w = om_pnm_int(c, &pos), h = om_pnm_int(c, &pos);
  int64_t maxval = 1;
  int bitmap = kind == 1 || kind == 4, ascii = kind <= 3;
  int ch = kind == 3 || kind == 6 ? 3 : 1;
  if (!bitmap) {
    maxval = om_pnm_int(c, &pos);
    if (maxval < 1 || maxval > 255) om_img_fail(c, OM_IMG_PNM_UNSUPP, kind, maxval, 0);
  }
  if (!ascii) {   /* exactly one whitespace byte before the raster */
    if (pos >= c->n || !om_space(c->d[pos])) om_img_fail(c, OM_IMG_PNM_BAD, c->n, pos, 0);
    ++pos;
  }
  om_img_alloc(c, w, h);
  if (!ascii) {
    int64_t rowbytes = bitmap ? (w + 7) / 8 : w * ch;
    if (rowbytes * h > c->n - pos) om_img_fail(c, OM_IMG_PNM_BAD, c->n, c->n, 0);
    for (int64_t y = 0; y < h; ++y) {
      const uint8_t *row = c->d + pos + rowbytes * y;
      for (int64_t x = 0; x < w; ++x) {
        if (bitmap) {
          unsigned v = om_packed(row, x, 1) ? 0 : 255;
          om_img_put(c, y * w + x, v, v, v);
        } else if (ch == 1) {
          unsigned v = om_pnm_scale(row[x], maxval);
          om_img_put(c, y * w + x, v, v, v);
        } else {
          om_img_put(c, y * w + x, om_pnm_scale(row[3 * x], maxval),
                     om_pnm_scale(row[3 * x + 1], maxval), om_pnm_scale(row[3 * x + 2], maxval));
        }
      }
    }
    return;
  }
  for (int64_t i = 0; i < w * h; ++i) {
    unsigned s[3];
    for (int k = 0; k < ch; ++k) {
      if (bitmap) {   /* one digit per sample, whitespace optional */
        om_pnm_skip(c, &pos);
        uint8_t b = c->d[pos++];
        if (b != '0' && b != '1') om_img_fail(c, OM_IMG_PNM_BAD, c->n, pos - 1, 0);
        s[k] = b == '1' ? 0 : 255;
      } else {   /* a value above maxval is an error here (Pillow's too) */
        int64_t v = om_pnm_int(c, &pos);
        if (v > maxval) om_img_fail(c, OM_IMG_PNM_BAD, c->n, pos, 0);
        s[k] = om_pnm_scale(v, maxval);
      }
    }
    if (ch == 1) om_img_put(c, i, s[0], s[0], s[0]);
    else om_img_put(c, i, s[0], s[1], s[2]);
  }
}

/* ---- inflate (RFC 1950 / 1951) ------------------------------------------ */
typedef struct {
  const uint8_t *d;
  int64_t n, pos;        /* input bytes, next byte */
  uint64_t bits;         /* unread bits, LSB first (whole bytes past pos - 1 too) */
  int nbits;
  uint8_t *out;
  int64_t cap, len;      /* output capacity (the exact size wanted), written */
  om_img_ctx *c;
  int64_t at;            /* offset of the stream in the file (for messages) */
} om_inflate;

static _Noreturn void om_z_bad(om_inflate *z) {
  om_img_fail(z->c, OM_IMG_PNG_BAD, z->c->n, z->at + z->pos, 0);
}

/* Top the bit buffer up with whole bytes (as many as fit, while there are any). */
static void om_z_fill(om_inflate *z) {
  while (z->nbits <= 56 && z->pos < z->n) {
    z->bits |= (uint64_t)z->d[z->pos++] << z->nbits;
    z->nbits += 8;
  }
}

static unsigned om_z_bits(om_inflate *z, int k) {
  if (z->nbits < k) {
    om_z_fill(z);
    if (z->nbits < k) om_z_bad(z);
  }
  unsigned v = (unsigned)(z->bits & ((1u << k) - 1));
  z->bits >>= k;
  z->nbits -= k;
  return v;
}

/* Drop the bits of the current byte; the whole bytes still buffered go back
 * to the input (pos: the next byte boundary). */
static void om_z_align(om_inflate *z) {
  z->pos -= z->nbits / 8;
  z->bits = 0;
  z->nbits = 0;
}

/* A canonical Huffman code: codes per length, symbols in code order, and
 * the codes of up to OM_FAST bits by their next OM_FAST input bits. */
#define OM_FAST 9
typedef struct {
  uint16_t count[16];
  uint16_t sym[288];
  uint16_t fast[1 << OM_FAST];   /* symbol << 4 | code length; 0: longer or unused */
} om_huff;

/* 0, or -1 when the lengths over-subscribe the code space. */
static int om_huff_build(om_huff *hf, const uint8_t *lens, int n) {
  uint16_t next[16];
  memset(hf->count, 0, sizeof hf->count);
  for (int i = 0; i < n; ++i) hf->count[lens[i]]++;
  hf->count[0] = 0;
  int32_t room = 1;
  for (int l = 1; l < 16; ++l) {
    room = 2 * room - hf->count[l];
    if (room < 0) return -1;
  }
  next[1] = 0;
  for (int l = 1; l < 15; ++l) next[l + 1] = (uint16_t)(next[l] + hf->count[l]);
  for (int i = 0; i < n; ++i)
    if (lens[i]) hf->sym[next[lens[i]]++] = (uint16_t)i;
  /* the short codes: code values in order per length, read LSB first in
   * the stream, so a table slot is the code's bits reversed */
  memset(hf->fast, 0, sizeof hf->fast);
  uint32_t code = 0, index = 0;
  for (int l = 1; l <= OM_FAST; ++l) {
    for (uint32_t k = 0; k < hf->count[l]; ++k, ++code, ++index) {
      uint32_t rev = 0;
      for (int b = 0; b < l; ++b) rev |= ((code >> b) & 1u) << (l - 1 - b);
      for (uint32_t slot = rev; slot < (1u << OM_FAST); slot += 1u << l)
        hf->fast[slot] = (uint16_t)(hf->sym[index] << 4 | l);
    }
    code <<= 1;
  }
  return 0;
}

/* Next symbol: a short code from the table, else the code read bit by bit
 * (first bit = most significant), compared with the range of codes of each
 * length. */
static int om_huff_sym(om_inflate *z, const om_huff *hf) {
  if (z->nbits < OM_FAST) om_z_fill(z);
  uint16_t e = hf->fast[z->bits & ((1u << OM_FAST) - 1)];
  if (e && (e & 15) <= z->nbits) {
    z->bits >>= e & 15;
    z->nbits -= e & 15;
    return e >> 4;
  }
  int32_t code = 0, first = 0, index = 0;
  for (int l = 1; l < 16; ++l) {
    code |= (int32_t)om_z_bits(z, 1);
    int32_t cnt = hf->count[l];
    if (code < first + cnt) return hf->sym[index + code - first];
    index += cnt;
    first = (first + cnt) << 1;
    code <<= 1;
  }
  om_z_bad(z);   /* a code of the unused part of an incomplete code */
}

static const uint16_t om_len_base[29] = {3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27,
                                         31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195,
                                         227, 258};
static const uint8_t om_len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                         2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t om_dist_base[30] = {1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97,
                                          129, 193, 257, 385, 513, 769, 1025, 1537, 2049,
                                          3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t om_dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6,
                                          6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

static void om_z_codes(om_inflate *z, const om_huff *lit, const om_huff *dist) {
  for (;;) {
    int s = om_huff_sym(z, lit);
    if (s < 256) {
      if (z->len >= z->cap) om_z_bad(z);
      z->out[z->len++] = (uint8_t)s;
      continue;
    }
    if (s == 256) return;
    s -= 257;
    if (s >= 29) om_z_bad(z);
    int64_t len = om_len_base[s] + om_z_bits(z, om_len_extra[s]);
    int ds = om_huff_sym(z, dist);
    if (ds >= 30) om_z_bad(z);
    int64_t dd = om_dist_base[ds] + om_z_bits(z, om_dist_extra[ds]);
    if (dd > z->len || len > z->cap - z->len) om_z_bad(z);
    uint8_t *o = z->out + z->len;
    if (dd >= len) memcpy(o, o - dd, (size_t)len);
    else for (int64_t k = 0; k < len; ++k) o[k] = o[k - dd];   /* overlaps forward */
    z->len += len;
  }
}

static void om_z_fixed(om_inflate *z) {
  uint8_t l[288 + 30];
  om_huff lit, dist;
  for (int i = 0; i < 288; ++i) l[i] = i < 144 ? 8 : i < 256 ? 9 : i < 280 ? 7 : 8;
  for (int i = 0; i < 30; ++i) l[288 + i] = 5;
  om_huff_build(&lit, l, 288);
  om_huff_build(&dist, l + 288, 30);
  om_z_codes(z, &lit, &dist);
}

static void om_z_dynamic(om_inflate *z) {
  static const uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2,
                                    14, 1, 15};
  int nlit = (int)om_z_bits(z, 5) + 257, ndist = (int)om_z_bits(z, 5) + 1;
  int ncl = (int)om_z_bits(z, 4) + 4;
  if (nlit > 286 || ndist > 30) om_z_bad(z);
  uint8_t l[320] = {0};
  for (int i = 0; i < ncl; ++i) l[order[i]] = (uint8_t)om_z_bits(z, 3);
  om_huff cl, lit, dist;
  if (om_huff_build(&cl, l, 19)) om_z_bad(z);
  memset(l, 0, sizeof l);
  for (int i = 0; i < nlit + ndist;) {
    int s = om_huff_sym(z, &cl), rep;
    uint8_t v = 0;
    if (s < 16) {
      l[i++] = (uint8_t)s;
      continue;
    }
    if (s == 16) {
      if (i == 0) om_z_bad(z);
      v = l[i - 1];
      rep = 3 + (int)om_z_bits(z, 2);
    } else if (s == 17) {
      rep = 3 + (int)om_z_bits(z, 3);
    } else {
      rep = 11 + (int)om_z_bits(z, 7);
    }
    if (i + rep > nlit + ndist) om_z_bad(z);
    while (rep--) l[i++] = v;
  }
  if (!l[256] || om_huff_build(&lit, l, nlit) || om_huff_build(&dist, l + nlit, ndist))
    om_z_bad(z);
  om_z_codes(z, &lit, &dist);
}

/* Inflate the zlib stream d[0, n) into exactly `cap` bytes at `out`. */
static void om_zlib(om_img_ctx *c, const uint8_t *d, int64_t n, uint8_t *out, int64_t cap,
                    int64_t at) {
  om_inflate z = {d, n, 0, 0, 0, out, cap, 0, c, at};
  if (n < 2 || (d[0] & 15) != 8 || (d[0] >> 4) > 7 || (d[1] & 32) ||
      ((unsigned)d[0] << 8 | d[1]) % 31)
    om_z_bad(&z);
  z.pos = 2;
  int last;
  do {
    last = (int)om_z_bits(&z, 1);
    int type = (int)om_z_bits(&z, 2);
    if (type == 0) {
      om_z_align(&z);
      if (z.pos + 4 > n) om_z_bad(&z);
      uint32_t len = om_le16(d + z.pos), nlen = om_le16(d + z.pos + 2);
      if ((len ^ 0xffffu) != nlen) om_z_bad(&z);
      z.pos += 4;
      if (len > n - z.pos || len > cap - z.len) om_z_bad(&z);
      memcpy(out + z.len, d + z.pos, len);
      z.pos += len;
      z.len += len;
    } else if (type == 1) {
      om_z_fixed(&z);
    } else if (type == 2) {
      om_z_dynamic(&z);
    } else {
      om_z_bad(&z);
    }
  } while (!last);
  om_z_align(&z);
  if (z.len != cap || z.pos + 4 > n) om_z_bad(&z);
  uint32_t a = 1, b = 0;   /* Adler-32 of the output */
  for (int64_t i = 0; i < cap;) {
    int64_t end = i + 5552 < cap ? i + 5552 : cap;
    for (; i < end; ++i) {
      a += out[i];
      b += a;
    }
    a %= 65521;
    b %= 65521;
  }
  if (om_be32(d + z.pos) != (b << 16 | a)) om_z_bad(&z);
}

/* ---- PNG ------------------------------------------------------------------- */
static uint32_t om_crc32(const uint32_t *tab, const uint8_t *p, int64_t n) {
  uint32_t c = 0xffffffffu;
  for (int64_t i = 0; i < n; ++i) c = tab[(c ^ p[i]) & 255] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

static unsigned om_paeth(int a, int b, int c) {
  int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
  return (unsigned)(pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
}

static void om_png(om_img_ctx *c) {
  const uint8_t *d = c->d;
  int64_t n = c->n, pos = 8;
  uint32_t tab[256];
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t v = i;
    for (int k = 0; k < 8; ++k) v = v & 1 ? 0xedb88320u ^ (v >> 1) : v >> 1;
    tab[i] = v;
  }
  int64_t w = 0, h = 0, idat = 0, idat_at = 0;
  int depth = 0, ctype = 0, have_hdr = 0, have_end = 0;
  uint8_t pal[256 * 3] = {0};
  int have_pal = 0;
  /* pass 1: check the chunks, read IHDR / PLTE, add up the IDAT bytes */
  while (!have_end) {
    if (pos + 12 > n) om_img_fail(c, OM_IMG_PNG_BAD, n, pos, 0);
    uint32_t len = om_be32(d + pos);
    const uint8_t *type = d + pos + 4, *body = d + pos + 8;
    if (len > 0x7fffffffu || len > n - pos - 12) om_img_fail(c, OM_IMG_PNG_BAD, n, pos, 0);
    if (om_crc32(tab, type, (int64_t)len + 4) != om_be32(body + len))
      om_img_fail(c, OM_IMG_PNG_BAD, n, pos + 8 + len, 0);
    if (!have_hdr && memcmp(type, "IHDR", 4)) om_img_fail(c, OM_IMG_PNG_BAD, n, pos, 0);
    if (!memcmp(type, "IHDR", 4)) {
      if (have_hdr || len != 13) om_img_fail(c, OM_IMG_PNG_BAD, n, pos, 0);
      have_hdr = 1;
      w = om_be32(body);
      h = om_be32(body + 4);
      depth = body[8];
      ctype = body[9];
      int ok_depth = depth == 8 || ((ctype == 0 || ctype == 3) &&
                                    (depth == 1 || depth == 2 || depth == 4));
      if (body[10] || body[11] || body[12] || !ok_depth ||
          (ctype != 0 && ctype != 2 && ctype != 3 && ctype != 4 && ctype != 6))
        om_img_fail(c, OM_IMG_PNG_UNSUPP, depth, ctype, body[12]);
    } else if (!memcmp(type, "PLTE", 4)) {
      if (len % 3 || len > 768) om_img_fail(c, OM_IMG_PNG_BAD, n, pos, 0);
      memcpy(pal, body, len);
      have_pal = 1;
    } else if (!memcmp(type, "IDAT", 4)) {
      if (!idat) idat_at = pos + 8;
      idat += len;
    } else if (!memcmp(type, "IEND", 4)) {
      have_end = 1;
    }
    pos += 12 + (int64_t)len;
  }
  if (!idat || (ctype == 3 && !have_pal)) om_img_fail(c, OM_IMG_PNG_BAD, n, pos, 0);
  om_img_alloc(c, w, h);
  /* pass 2: the zlib stream (the IDAT bodies, joined) */
  uint8_t *zs = om_arena_alloc((uint64_t)idat);
  int64_t got = 0;
  for (pos = 8; got < idat;) {
    uint32_t len = om_be32(d + pos);
    if (!memcmp(d + pos + 4, "IDAT", 4)) {
      memcpy(zs + got, d + pos + 8, len);
      got += len;
    }
    pos += 12 + (int64_t)len;
  }
  int ch = ctype == 2 ? 3 : ctype == 4 ? 2 : ctype == 6 ? 4 : 1;
  int64_t rowbytes = (w * ch * depth + 7) / 8, bpp = (ch * depth + 7) / 8;
  uint8_t *raw = om_arena_alloc((uint64_t)((rowbytes + 1) * h));
  om_zlib(c, zs, idat, raw, (rowbytes + 1) * h, idat_at);
  /* undo the filters in place (each row after its filter byte) */
  for (int64_t y = 0; y < h; ++y) {
    uint8_t *r = raw + y * (rowbytes + 1) + 1;
    const uint8_t *up = y ? r - (rowbytes + 1) : NULL;
    int f = r[-1];
    if (f > 4) om_img_fail(c, OM_IMG_PNG_BAD, n, idat_at, 0);
    for (int64_t x = 0; x < rowbytes; ++x) {
      unsigned a = x >= bpp ? r[x - bpp] : 0, b = up ? up[x] : 0;
      unsigned cc = up && x >= bpp ? up[x - bpp] : 0;
      unsigned p = f == 0 ? 0 : f == 1 ? a : f == 2 ? b : f == 3 ? (a + b) / 2
                 : om_paeth((int)a, (int)b, (int)cc);
      r[x] = (uint8_t)(r[x] + p);
    }
  }
  static const unsigned gray_scale[9] = {0, 255, 85, 0, 17, 0, 0, 0, 1};
  for (int64_t y = 0; y < h; ++y) {
    const uint8_t *r = raw + y * (rowbytes + 1) + 1;
    for (int64_t x = 0; x < w; ++x) {
      int64_t i = y * w + x;
      if (ctype == 0) {
        unsigned v = om_packed(r, x, depth) * gray_scale[depth];
        om_img_put(c, i, v, v, v);
      } else if (ctype == 3) {
        const uint8_t *p = pal + 3 * om_packed(r, x, depth);
        om_img_put(c, i, p[0], p[1], p[2]);
      } else if (ctype == 4) {
        om_img_put(c, i, r[2 * x], r[2 * x], r[2 * x]);
      } else {
        const uint8_t *p = r + ch * x;
        om_img_put(c, i, p[0], p[1], p[2]);
      }
    }
  }
}

/* ---- entry points ------------------------------------------------------ */
static int om_magic(const uint8_t *d, int64_t n, const char *m, int64_t k) {
  return n >= k && !memcmp(d, m, (size_t)k);
}

/* Decode the `len` bytes at aligned + offset (stride `stride` bytes) with
 * pixel format `mode` (0 RGB, 1 BGR, 2 Grayscale); failures are check ids
 * check_base + OM_IMG_*. Returns the image (run arena). */
OM_HIDDEN int64_t om_image_decode(int64_t aligned, int64_t offset, int64_t stride, int64_t len,
                                  int64_t mode, int64_t check_base) {
  om_img_ctx c = {(const uint8_t *)(intptr_t)aligned + offset, len, check_base, mode, NULL};
  if (len > 1 && stride != 1) {   /* a strided view: gather it first */
    if (stride <= 0) om_img_fail(&c, OM_IMG_BAD_STRIDE, stride, 0, 0);
    uint8_t *g = om_arena_alloc((uint64_t)len);
    for (int64_t i = 0; i < len; ++i) g[i] = c.d[i * stride];
    c.d = g;
  }
  const uint8_t *d = c.d;
  int64_t n = len;
  if (om_magic(d, n, "\x89PNG\r\n\x1a\n", 8)) om_png(&c);
  else if (om_magic(d, n, "BM", 2)) om_bmp(&c);
  else if (n >= 3 && d[0] == 'P' && d[1] >= '1' && d[1] <= '6' && om_space(d[2])) om_pnm(&c);
  else if (om_magic(d, n, "\xff\xd8\xff", 3)) om_img_fail(&c, OM_IMG_JPEG, 0, 0, 0);
  else if (om_magic(d, n, "\0\0\0\x0cjP  \r\n\x87\n", 12) || om_magic(d, n, "\xff\x4f\xff\x51", 4))
    om_img_fail(&c, OM_IMG_JPEG2000, 0, 0, 0);
  else if (om_magic(d, n, "II*\0", 4) || om_magic(d, n, "MM\0*", 4))
    om_img_fail(&c, OM_IMG_TIFF, 0, 0, 0);
  else if (n >= 12 && om_magic(d, n, "RIFF", 4) && !memcmp(d + 8, "WEBP", 4))
    om_img_fail(&c, OM_IMG_WEBP, 0, 0, 0);
  else if (om_magic(d, n, "GIF87a", 6) || om_magic(d, n, "GIF89a", 6))
    om_img_fail(&c, OM_IMG_GIF, 0, 0, 0);
  else om_img_fail(&c, OM_IMG_UNKNOWN, n, 0, 0);
  return (int64_t)(intptr_t)c.img;
}

/* Dim k (0 height, 1 width, 2 channels) of a decoded image. */
OM_HIDDEN int64_t om_image_dim(int64_t image, int64_t k) {
  const om_image *img = (const om_image *)(intptr_t)image;
  return k == 0 ? img->h : k == 1 ? img->w : img->c;
}

/* Copy the pixels into `dst` (h * w * c bytes); returns the byte count. */
OM_HIDDEN int64_t om_image_read(int64_t image, int64_t dst) {
  const om_image *img = (const om_image *)(intptr_t)image;
  int64_t bytes = img->h * img->w * img->c;
  memcpy((void *)(intptr_t)dst, img->px, (size_t)bytes);
  return bytes;
}
