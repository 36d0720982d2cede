/* String tensor elements of the model code (docs/design.md "Strings").
 *
 * A string element is an int64 holding a `const char *` to a NUL-terminated
 * UTF-8 buffer (NULL reads as ""). Buffers made during a call come from the
 * run arena of om_seq.c (freed by om_seq_run_end); string outputs are copied
 * into one owning block per OMTensor (om_string_output) before that. */
#include <regex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "om_entry.h"

void *om_arena_alloc(uint64_t bytes);   /* om_seq.c */
void om_check_failed(int64_t id, int64_t v0, int64_t v1, int64_t v2, int64_t v3);

static const char *om_s(int64_t p) { return p ? (const char *)(intptr_t)p : ""; }

int64_t om_str_eq(int64_t a, int64_t b) { return strcmp(om_s(a), om_s(b)) == 0; }

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
