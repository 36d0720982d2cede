/*
 * run_model.c - load a model .so built by onnx-mlir-py, print its
 * signatures and run it.
 *
 *   cc -o run_model run_model.c $(onnx-mlir-py --cflags) -ldl
 *
 * Every runtime function is looked up in the model with dlsym (the model
 * .so embeds the runtime), so nothing else needs to be linked.
 *   ./run_model model.so [input.bin ...]
 *
 * A model path without a slash is taken in the current folder (dlopen
 * itself would search only the system's library path for it).
 *
 * Each input is read from a raw little-endian binary file holding exactly
 * the tensor's data; without files inputs are filled with 0.01 * i (cast to
 * the element type) and dynamic dimensions are set to 2. An argument may add
 * the dims of this run and the element type: "x.bin:3x4", "x.bin:3x4:f64",
 * ":3x4" (default fill), "s.bin:" (a scalar). Given dims set the rank too;
 * dims, rank and type are passed as given and the model checks them against
 * its signature (a mismatch is a clean error, not a crash). Every output is
 * printed as "output <i> shape=[..] type=<code>" followed by its values, one
 * per line, exactly (integers as integers, f32 "%.9g", f64 "%.17g"), so
 * other tools can compare the numbers. Exit status: 0 on success, 1 when the
 * model (or the runtime) refuses the inputs, with its message on stderr, 2 on
 * a usage error.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "OnnxMlirRuntime.h"

/* The runtime functions this program uses, as pointers p_<name>. */
#define OM_FUNCS(X)                                                        \
  X(const char **, omQueryEntryPoints, (int64_t *))                        \
  X(const char *, omInputSignature, (const char *))                        \
  X(const char *, omOutputSignature, (const char *))                       \
  X(const char *, omGetLastError, (void))                                  \
  X(int64_t, omGetLastErrorKind, (void))                                   \
  X(int64_t, omTensorGetElemSize, (OM_DATA_TYPE))                          \
  X(OMTensor *, omTensorCreateEmpty, (const int64_t *, int64_t, OM_DATA_TYPE)) \
  X(void *, omTensorGetDataPtr, (const OMTensor *))                        \
  X(const int64_t *, omTensorGetShape, (const OMTensor *))                 \
  X(int64_t, omTensorGetRank, (const OMTensor *))                          \
  X(OM_DATA_TYPE, omTensorGetDataType, (const OMTensor *))                 \
  X(int64_t, omTensorGetNumElems, (const OMTensor *))                      \
  X(int64_t, omTensorGetBufferSize, (const OMTensor *))                    \
  X(OMTensorList *, omTensorListCreateWithOwnership, (OMTensor **, int64_t, int64_t)) \
  X(int64_t, omTensorListGetSize, (const OMTensorList *))                  \
  X(OMTensor *, omTensorListGetOmtByIndex, (const OMTensorList *, int64_t)) \
  X(void, omTensorListDestroy, (OMTensorList *))

#define OM_DECLARE(ret, name, args) static ret(*p_##name) args;
OM_FUNCS(OM_DECLARE)

static void *must_sym(void *h, const char *name) {
  void *p = dlsym(h, name);
  if (!p) { fprintf(stderr, "missing symbol %s: %s\n", name, dlerror()); exit(2); }
  return p;
}

/* Minimal parse of the input signature: the next entry's type (up to 15
 * chars) and dims (up to 32). */
static const char *sig_next_tensor(const char *p, char *type, int64_t *dims, int64_t *rank) {
  const char *t = strstr(p, "\"type\"");
  if (!t) return NULL;
  t = strchr(t + 6, '"');
  size_t n = strcspn(t + 1, "\"");
  if (n > 15) n = 15;
  memcpy(type, t + 1, n); type[n] = '\0';
  const char *d = strchr(strstr(t, "\"dims\""), '[') + 1;
  *rank = 0;
  while (*d != ']') {
    char *end;
    long long v = strtoll(d, &end, 10);
    if (end == d) { ++d; continue; }
    if (*rank == 32) { fprintf(stderr, "an input has more than 32 dims\n"); exit(2); }
    dims[(*rank)++] = v;
    d = end;
  }
  return d;
}

static OM_DATA_TYPE type_code(const char *t) {
  static const struct { const char *n; OM_DATA_TYPE c; } m[] = {
    {"f32", ONNX_TYPE_FLOAT}, {"ui8", ONNX_TYPE_UINT8}, {"i8", ONNX_TYPE_INT8},
    {"ui16", ONNX_TYPE_UINT16}, {"i16", ONNX_TYPE_INT16}, {"i32", ONNX_TYPE_INT32},
    {"i64", ONNX_TYPE_INT64}, {"i1", ONNX_TYPE_BOOL}, {"f16", ONNX_TYPE_FLOAT16},
    {"f64", ONNX_TYPE_DOUBLE}, {"ui32", ONNX_TYPE_UINT32}, {"ui64", ONNX_TYPE_UINT64}};
  for (size_t i = 0; i < sizeof m / sizeof m[0]; ++i)
    if (!strcmp(m[i].n, t)) return m[i].c;
  return ONNX_TYPE_UNDEFINED;
}

/* An IEEE half (f16) as a float (exact). */
static float f16_value(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, bits;
  float f;
  if (e == 0) { /* zero or subnormal: m * 2**-24 */
    f = (float)m * (1.0f / 16777216.0f);
    return sign ? -f : f;
  }
  bits = sign | (e == 31 ? 0xffu : e + 112) << 23 | m << 13; /* inf/nan or rebias 15 -> 127 */
  memcpy(&f, &bits, sizeof f);
  return f;
}

/* Element i of a buffer of type t, printed exactly, one line. */
static void print_value(const void *p, OM_DATA_TYPE t, int64_t i) {
  switch (t) {
  case ONNX_TYPE_FLOAT: printf("%.9g\n", ((const float *)p)[i]); break;
  case ONNX_TYPE_FLOAT16: printf("%.9g\n", f16_value(((const uint16_t *)p)[i])); break;
  case ONNX_TYPE_DOUBLE: printf("%.17g\n", ((const double *)p)[i]); break;
  case ONNX_TYPE_INT64: printf("%lld\n", (long long)((const int64_t *)p)[i]); break;
  case ONNX_TYPE_INT32: printf("%d\n", ((const int32_t *)p)[i]); break;
  case ONNX_TYPE_INT16: printf("%d\n", ((const int16_t *)p)[i]); break;
  case ONNX_TYPE_INT8: printf("%d\n", ((const int8_t *)p)[i]); break;
  case ONNX_TYPE_UINT64: printf("%llu\n", (unsigned long long)((const uint64_t *)p)[i]); break;
  case ONNX_TYPE_UINT32: printf("%u\n", ((const uint32_t *)p)[i]); break;
  case ONNX_TYPE_UINT16: printf("%u\n", ((const uint16_t *)p)[i]); break;
  case ONNX_TYPE_UINT8: case ONNX_TYPE_BOOL: printf("%u\n", ((const uint8_t *)p)[i]); break;
  default: printf("?\n"); /* an element type this example does not decode */
  }
}

static void fill_default(void *p, OM_DATA_TYPE t, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    double v = 0.01 * (double)i;
    switch (t) {
    case ONNX_TYPE_FLOAT: ((float *)p)[i] = (float)v; break;
    case ONNX_TYPE_DOUBLE: ((double *)p)[i] = v; break;
    case ONNX_TYPE_INT64: ((int64_t *)p)[i] = i; break;
    case ONNX_TYPE_INT32: ((int32_t *)p)[i] = (int32_t)i; break;
    case ONNX_TYPE_BOOL: ((uint8_t *)p)[i] = (uint8_t)(i % 2); break;
    default: memset((char *)p + i * p_omTensorGetElemSize(t), (int)(i & 0x7f),
                    (size_t)p_omTensorGetElemSize(t));
    }
  }
}

int main(int argc, char **argv) {
  if (argc < 2) { fprintf(stderr, "usage: %s model.so [input.bin ...]\n", argv[0]); return 2; }
  /* dlopen searches the library path for a bare name: "model.so" -> "./model.so" */
  const char *model = argv[1];
  char *local = NULL;
  if (!strchr(model, '/')) {
    local = malloc(strlen(model) + 3);
    if (!local) { fprintf(stderr, "out of memory\n"); return 2; }
    strcpy(local, "./");
    strcat(local, model);
    model = local;
  }
  void *h = dlopen(model, RTLD_NOW | RTLD_LOCAL);
  free(local);
  if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 2; }
#define OM_LOAD(ret, name, args) p_##name = (ret(*) args)must_sym(h, #name);
  OM_FUNCS(OM_LOAD)

  int64_t n_entries = 0;
  const char **entries = p_omQueryEntryPoints(&n_entries);
  for (int64_t i = 0; i < n_entries; ++i) printf("entry point: %s\n", entries[i]);
  const char *isig = p_omInputSignature(entries[0]), *osig = p_omOutputSignature(entries[0]);
  printf("input signature: %s\noutput signature: %s\n", isig, osig);
  OMTensorList *(*run)(OMTensorList *) = (OMTensorList * (*)(OMTensorList *))must_sym(h, entries[0]);

  OMTensor *inputs[64];
  int64_t n_in = 0;
  char type[16];
  int64_t dims[32], rank;
  for (const char *p = isig; (p = sig_next_tensor(p, type, dims, &rank)); ++n_in) {
    if (n_in == 64) { fprintf(stderr, "more than 64 inputs\n"); return 2; }
    OM_DATA_TYPE code = type_code(type);
    /* argument: "file.bin" or "" (default fill), optionally followed by
       ":DIMS" (the dims of this run, "3x4", "" for a scalar; their count is
       the rank) and ":TYPE" (the element type, e.g. "f64") */
    const char *arg = argc > 2 + n_in ? argv[2 + n_in] : "";
    const char *colon = strchr(arg, ':');
    if (colon) {
      const char *q = colon + 1;
      for (rank = 0; *q && *q != ':';) {
        char *end;
        long long v = strtoll(q, &end, 10);
        if (end == q || rank == 32 || (*end && *end != 'x' && *end != ':') ||
            (*end == 'x' && (!end[1] || end[1] == ':'))) {
          fprintf(stderr, "bad dims '%s' for input %lld\n", colon + 1, (long long)n_in);
          return 2;
        }
        dims[rank++] = v;
        q = *end == 'x' ? end + 1 : end;
      }
      if (*q == ':' && (code = type_code(q + 1)) == ONNX_TYPE_UNDEFINED) {
        fprintf(stderr, "unknown element type '%s' for input %lld\n", q + 1, (long long)n_in);
        return 2;
      }
    } else {
      for (int64_t k = 0; k < rank; ++k) if (dims[k] < 0) dims[k] = 2;
    }
    OMTensor *t = p_omTensorCreateEmpty(dims, rank, code);
    if (!t) { /* e.g. dims whose byte size overflows, or out of memory */
      fprintf(stderr, "cannot create input %lld: %s\n", (long long)n_in, p_omGetLastError());
      return 1;
    }
    int64_t bytes = p_omTensorGetBufferSize(t);
    size_t name_len = colon ? (size_t)(colon - arg) : strlen(arg);
    if (name_len) {
      char path[4096];
      snprintf(path, sizeof path, "%.*s", (int)name_len, arg);
      FILE *f = fopen(path, "rb");
      if (!f || fread(p_omTensorGetDataPtr(t), 1, (size_t)bytes, f) != (size_t)bytes) {
        fprintf(stderr, "cannot read %lld bytes from %s\n", (long long)bytes, path);
        return 2;
      }
      fclose(f);
    } else {
      fill_default(p_omTensorGetDataPtr(t), code, p_omTensorGetNumElems(t));
    }
    inputs[n_in] = t;
  }
  if (argc > 2 + n_in) {
    fprintf(stderr, "%d input files for a model with %lld inputs\n", argc - 2, (long long)n_in);
    return 2;
  }
  OMTensorList *in = p_omTensorListCreateWithOwnership(inputs, n_in, 0);
  if (!in) { fprintf(stderr, "cannot create the input list: %s\n", p_omGetLastError()); return 1; }
  OMTensorList *out = run(in);
  if (!out) { /* kind: "check" when a run-time check of the model failed */
    static const char *const kinds[] = {"none", "other", "check", "alloc"};
    int err = errno;
    int64_t kind = p_omGetLastErrorKind();
    fprintf(stderr, "run failed (errno %d, %s): %s\n", err,
            kind >= 0 && kind < 4 ? kinds[kind] : "?", p_omGetLastError());
    p_omTensorListDestroy(in);
    return 1;
  }
  for (int64_t i = 0; i < p_omTensorListGetSize(out); ++i) {
    OMTensor *t = p_omTensorListGetOmtByIndex(out, i);
    const int64_t *shape = p_omTensorGetShape(t);
    printf("output %lld shape=[", (long long)i);
    for (int64_t k = 0; k < p_omTensorGetRank(t); ++k) printf(k ? ",%lld" : "%lld", (long long)shape[k]);
    printf("] type=%d\n", (int)p_omTensorGetDataType(t));
    for (int64_t j = 0; j < p_omTensorGetNumElems(t); ++j)
      print_value(p_omTensorGetDataPtr(t), p_omTensorGetDataType(t), j);
  }
  p_omTensorListDestroy(out);
  p_omTensorListDestroy(in);
  dlclose(h);
  return 0;
}
