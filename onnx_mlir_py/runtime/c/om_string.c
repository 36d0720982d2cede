/* String tensor elements of the model code (docs/design.md "Strings").
 *
 * A string element is an int64 holding a `const char *` to a NUL-terminated
 * UTF-8 buffer (NULL reads as ""). Buffers made during a call come from the
 * run arena of om_seq.c (freed by om_seq_run_end); string outputs are copied
 * into one owning block per OMTensor (om_string_output) before that. */
#define _GNU_SOURCE
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <regex.h>
#include <stdint.h>
#include <wctype.h>
#include <stdlib.h>
#include <string.h>

#include "om_entry.h"

void *om_arena_alloc(uint64_t bytes);   /* om_seq.c */
void om_check_failed(int64_t id, int64_t v0, int64_t v1, int64_t v2, int64_t v3);

static const char *om_s(int64_t p) { return p ? (const char *)(intptr_t)p : ""; }

int64_t om_str_eq(int64_t a, int64_t b) { return strcmp(om_s(a), om_s(b)) == 0; }

/* <0, 0, >0 as strcmp (byte order = code point order for UTF-8) */
int64_t om_str_cmp(int64_t a, int64_t b) {
  int c = strcmp(om_s(a), om_s(b));
  return c < 0 ? -1 : c > 0;
}

int64_t om_str_concat(int64_t a, int64_t b) {
  const char *x = om_s(a), *y = om_s(b);
  size_t n = strlen(x), m = strlen(y);
  char *r = om_arena_alloc(n + m + 1);
  memcpy(r, x, n);
  memcpy(r + n, y, m + 1);
  return (int64_t)(intptr_t)r;
}

/* ---- RegexFullMatch: POSIX ERE (the pattern was translated from RE2 syntax
 * and anchored at compile time, passes/onnx_to_linalg/strings_ml.py). */
#define OM_RE_CACHE 16
static __thread struct { const char *pat; regex_t re; } om_re_cache[OM_RE_CACHE];
static __thread int om_re_n;

static regex_t *om_regex(const char *pat, int64_t check_id) {
  for (int i = 0; i < om_re_n; ++i)
    if (om_re_cache[i].pat == pat) return &om_re_cache[i].re;
  int slot = om_re_n < OM_RE_CACHE ? om_re_n++ : 0;
  if (om_re_cache[slot].pat) regfree(&om_re_cache[slot].re);
  om_re_cache[slot].pat = NULL;
  if (regcomp(&om_re_cache[slot].re, pat, REG_EXTENDED | REG_NOSUB) != 0)
    om_check_failed(check_id, 0, 0, 0, 0);     /* does not return */
  om_re_cache[slot].pat = pat;
  return &om_re_cache[slot].re;
}

/* 1 if `s` matches the anchored `pat`. `ascii_only`: the pattern has a
 * construct that matches one byte where RE2 matches one code point ('.',
 * '[^'): a non-ASCII input fails the call (check `check_id`, value 1). */
int64_t om_regex_full_match(int64_t s, int64_t pat, int64_t ascii_only, int64_t check_id) {
  const char *x = om_s(s);
  if (ascii_only)
    for (const unsigned char *p = (const unsigned char *)x; *p; ++p)
      if (*p >= 0x80) om_check_failed(check_id, 1, 0, 0, 0);
  return regexec(om_regex(om_s(pat), check_id), x, 0, NULL, 0) == 0;
}

/* ---- StringSplit: Python's str.split(delim or None, maxsplit), as
 * onnx.reference. Whitespace (no delimiter) is Python's str.isspace set. */
static int om_ws(const unsigned char *p, int *len) {
  unsigned c = p[0];
  *len = 1;
  if ((c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x20)) return 1;
  if (c < 0x80) return 0;
  unsigned cp = 0;
  int n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
  for (int i = 1; i < n; ++i) if ((p[i] & 0xc0) != 0x80) return 0;
  cp = n == 2 ? ((c & 0x1f) << 6) | (p[1] & 0x3f)
     : n == 3 ? ((c & 0x0f) << 12) | ((p[1] & 0x3f) << 6) | (p[2] & 0x3f) : 0;
  *len = n;
  return cp == 0x85 || cp == 0xa0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200a) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

/* Number of parts; part `want` (if < the count) in [*b, *e). */
static int64_t om_split_scan(const char *s, const char *d, int64_t maxsplit, int64_t want,
                             const char **b, const char **e) {
  int64_t n = 0, splits = 0;
  size_t dl = strlen(d);
  if (dl) {
    const char *start = s, *hit;
    while ((maxsplit < 0 || splits < maxsplit) && (hit = strstr(start, d))) {
      if (n == want) { *b = start; *e = hit; }
      ++n; ++splits;
      start = hit + dl;
    }
    if (n == want) { *b = start; *e = start + strlen(start); }
    return n + 1;
  }
  const unsigned char *p = (const unsigned char *)s;
  int l;
  for (;;) {
    while (*p && om_ws(p, &l)) p += l;
    if (!*p) return n;
    const unsigned char *start = p;
    if (maxsplit >= 0 && splits >= maxsplit) {   /* the rest, as it is */
      if (n == want) { *b = (const char *)start; *e = (const char *)start + strlen((const char *)start); }
      return n + 1;
    }
    while (*p && !om_ws(p, &l)) p += l;
    if (n == want) { *b = (const char *)start; *e = (const char *)p; }
    ++n; ++splits;
  }
}

/* k < 0: the number of parts of `s`; else part k (an arena copy; "" past the end). */
int64_t om_str_split(int64_t s, int64_t delim, int64_t maxsplit, int64_t k) {
  const char *b = NULL, *e = NULL;
  int64_t n = om_split_scan(om_s(s), om_s(delim), maxsplit, k, &b, &e);
  if (k < 0) return n;
  if (!b) return (int64_t)(intptr_t)"";
  char *r = om_arena_alloc((uint64_t)(e - b) + 1);
  memcpy(r, b, (size_t)(e - b));
  r[e - b] = 0;
  return (int64_t)(intptr_t)r;
}

/* ---- StringNormalizer (case change: towlower/towupper of glibc's C.UTF-8
 * ctype tables, code point by code point, as onnxruntime's en_US). */
static __thread locale_t om_utf8_loc;

static size_t om_utf8_dec(const unsigned char *p, uint32_t *cp) {
  unsigned c = p[0];
  int n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
  for (int i = 1; i < n; ++i) if ((p[i] & 0xc0) != 0x80) n = 1;
  if (n == 1) { *cp = c; return 1; }
  uint32_t v = c & (0x3f >> (n - 1));
  for (int i = 1; i < n; ++i) v = (v << 6) | (p[i] & 0x3f);
  *cp = v;
  return (size_t)n;
}

static size_t om_utf8_enc(uint32_t cp, char *o) {
  if (cp < 0x80) { o[0] = (char)cp; return 1; }
  if (cp < 0x800) { o[0] = (char)(0xc0 | (cp >> 6)); o[1] = (char)(0x80 | (cp & 0x3f)); return 2; }
  if (cp < 0x10000) {
    o[0] = (char)(0xe0 | (cp >> 12)); o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[2] = (char)(0x80 | (cp & 0x3f)); return 3;
  }
  o[0] = (char)(0xf0 | (cp >> 18)); o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
  o[2] = (char)(0x80 | ((cp >> 6) & 0x3f)); o[3] = (char)(0x80 | (cp & 0x3f)); return 4;
}

/* `s` lower- (action 1) or upper-cased (2) into `o` (4 * strlen + 1 bytes). */
static void om_case(const char *s, int64_t action, char *o, int64_t check_id) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p) {
    if (*p < 0x80) {
      *o++ = (char)(action == 1 ? (*p >= 'A' && *p <= 'Z' ? *p + 32 : *p)
                                : (*p >= 'a' && *p <= 'z' ? *p - 32 : *p));
      ++p;
      continue;
    }
    if (!om_utf8_loc) om_utf8_loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    if (!om_utf8_loc) om_check_failed(check_id, 0, 0, 0, 0);
    uint32_t cp;
    p += om_utf8_dec(p, &cp);
    cp = (uint32_t)(action == 1 ? towlower_l((wint_t)cp, om_utf8_loc)
                                : towupper_l((wint_t)cp, om_utf8_loc));
    o += om_utf8_enc(cp, o);
  }
  *o = 0;
}

int64_t om_str_case(int64_t s, int64_t action, int64_t check_id) {
  const char *x = om_s(s);
  if (action == 0) return s;
  char *r = om_arena_alloc(4 * strlen(x) + 1);
  om_case(x, action, r, check_id);
  return (int64_t)(intptr_t)r;
}

/* 0 if `s` is one of the `n` stopwords (NUL-separated in `stops`), else 1;
 * case-insensitive: both sides lower-cased first. */
int64_t om_str_norm_keep(int64_t s, int64_t stops, int64_t n, int64_t case_sensitive,
                         int64_t check_id) {
  const char *x = om_s(s), *w = om_s(stops);
  char buf[256], *lx = NULL;
  if (!case_sensitive) {
    size_t need = 4 * strlen(x) + 1;
    lx = need <= sizeof buf ? buf : om_arena_alloc(need);
    om_case(x, 1, lx, check_id);
    x = lx;
  }
  for (int64_t i = 0; i < n; ++i, w += strlen(w) + 1)
    if (strcmp(x, w) == 0) return 0;
  return 1;
}

/* ---- Cast between strings and numbers, as onnxruntime's Cast kernel:
 * numbers to text with "%.8g" (floats, widened to double exactly; "NaN",
 * "INF", "-INF") or as decimal integers; text to numbers with std::stod /
 * std::stoll / std::stoull / std::stoi semantics (strtod / strtoll / strtoull
 * / strtol base 10: leading blanks, the longest numeric prefix, "inf",
 * "nan", hex floats), failing the call (check `check_id`) where those throw:
 * code 0 = no number at the start of the string, 1 = out of range (ERANGE,
 * which glibc's strtod also sets on underflow; or outside int for stoi). */
static int64_t om_str_dup(const char *b) {
  size_t n = strlen(b) + 1;
  char *r = om_arena_alloc(n);
  memcpy(r, b, n);
  return (int64_t)(intptr_t)r;
}

int64_t om_str_from_f64(int64_t bits) {
  double v;
  memcpy(&v, &bits, sizeof v);
  if (isnan(v)) return om_str_dup("NaN");
  if (isinf(v)) return om_str_dup(v < 0 ? "-INF" : "INF");
  char buf[40];
  snprintf(buf, sizeof buf, "%.8g", v);
  return om_str_dup(buf);
}

int64_t om_str_from_int(int64_t v, int64_t is_unsigned) {
  char buf[24];
  if (is_unsigned) snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
  else snprintf(buf, sizeof buf, "%lld", (long long)v);
  return om_str_dup(buf);
}

/* The double's bits. */
int64_t om_str_to_f64(int64_t s, int64_t check_id) {
  const char *x = om_s(s);
  char *end;
  errno = 0;
  double v = strtod(x, &end);
  if (end == x) om_check_failed(check_id, 0, 0, 0, 0);
  if (errno == ERANGE) om_check_failed(check_id, 1, 0, 0, 0);
  int64_t bits;
  memcpy(&bits, &v, sizeof bits);
  return bits;
}

/* mode 0: stoll, 1: stoull (the bits), 2: stoi. */
int64_t om_str_to_int(int64_t s, int64_t mode, int64_t check_id) {
  const char *x = om_s(s);
  char *end;
  errno = 0;
  int64_t v = mode == 1 ? (int64_t)strtoull(x, &end, 10) : (int64_t)strtoll(x, &end, 10);
  if (end == x) om_check_failed(check_id, 0, 0, 0, 0);
  if (errno == ERANGE || (mode == 2 && (v < INT32_MIN || v > INT32_MAX)))
    om_check_failed(check_id, 1, 0, 0, 0);
  return v;
}

/* A string output: the char* elements (and the bytes they point to, which
 * may live in the run arena or the caller's inputs) copied into one block
 * the returned tensor owns; `t` is destroyed. NULL when out of memory. */
OMTensor *om_string_output(OMTensor *t) {
  int64_t n = omTensorGetNumElems(t), rank = omTensorGetRank(t);
  const int64_t *el = omTensorGetDataPtr(t);
  size_t bytes = 0;
  for (int64_t i = 0; i < n; ++i) bytes += strlen(om_s(el[i])) + 1;
  char *block = malloc((size_t)n * sizeof(int64_t) + bytes + 1);
  OMTensor *r = block ? omTensorCreateWithOwnership(block, omTensorGetShape(t), rank,
                                                     ONNX_TYPE_STRING, 1) : NULL;
  if (!r) { free(block); omTensorDestroy(t); return NULL; }
  int64_t *ptrs = (int64_t *)block;
  char *chars = block + (size_t)n * sizeof(int64_t);
  for (int64_t i = 0; i < n; ++i) {
    size_t len = strlen(om_s(el[i])) + 1;
    memcpy(chars, om_s(el[i]), len);
    ptrs[i] = (int64_t)(intptr_t)chars;
    chars += len;
  }
  omTensorDestroy(t);
  return r;
}
