/*
 * om_runtime.c - OMTensor / OMTensorList and the entry-wrapper helpers,
 * compiled into every model .so (no dependency on Python or onnx-mlir-py).
 */
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "OnnxMlirRuntime.h"
#include "om_entry.h"

/* ---- allocation ---------------------------------------------------------
 * Model code allocates its large intermediates (im2col, packed operands) per
 * call. glibc serves blocks above M_MMAP_THRESHOLD (128 KiB until it adapts)
 * with fresh mmaps: page faults and zeroing on every call, measured at more
 * than half of a ResNet-18 run. Its dynamic threshold normally adapts, but
 * not once a program has set malloc parameters (onnxruntime in the same
 * process does). Raise the threshold to glibc's maximum (32 MiB; a larger
 * value is refused) and keep freed memory (trim threshold) when the library
 * loads, unless the user tuned malloc through the environment. */
__attribute__((constructor)) static void om_tune_malloc(void) {
  if (getenv("MALLOC_MMAP_THRESHOLD_") || getenv("GLIBC_TUNABLES")) return;
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

/* MLIR marks memrefs of constant globals with this allocated pointer. */
#define OM_MLIR_GLOBAL_SENTINEL ((void *)(uintptr_t)0xdeadbeef)

static __thread char om_last_error[1024];
static __thread int64_t om_last_error_kind;

void om_set_error(int err, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(om_last_error, sizeof om_last_error, fmt, ap);
  va_end(ap);
  om_last_error_kind = OM_ERROR_OTHER;
  errno = err;
}

void om_clear_error(void) {
  om_last_error[0] = '\0';
  om_last_error_kind = OM_ERROR_NONE;
}

const char *omGetLastError(void) { return om_last_error; }

int64_t omGetLastErrorKind(void) { return om_last_error_kind; }

/* ---- run-time checks of the model code ---------------------------------- */
__thread jmp_buf *om_check_target;

void om_check_failed(int64_t id, int64_t v0, int64_t v1, int64_t v2, int64_t v3) {
  /* the message with {0}..{3} replaced by the values */
  const int64_t vals[4] = {v0, v1, v2, v3};
  const char *m = (id >= 0 && id < om_check_count) ? om_check_messages[id]
                                                     : "a run-time check failed";
  size_t k = 0, cap = sizeof om_last_error;
  for (; *m && k + 1 < cap; ++m) {
    if (m[0] == '{' && m[1] >= '0' && m[1] <= '3' && m[2] == '}') {
      int w = snprintf(om_last_error + k, cap - k, "%lld", (long long)vals[m[1] - '0']);
      k = (w > 0 && (size_t)w < cap - k) ? k + (size_t)w : cap - 1;
      m += 2;
    } else {
      om_last_error[k++] = *m;
    }
  }
  om_last_error[k] = '\0';
  om_last_error_kind = OM_ERROR_CHECK;
  errno = EINVAL;
  if (om_check_target) longjmp(*om_check_target, 1);
  /* not on the thread that called the entry point: nothing to return to */
  fprintf(stderr, "onnx-mlir-py model: %s\n", om_last_error);
  abort();
}

/* ---- memory of the model code --------------------------------------------
 * finalize-memref-to-llvm{use-generic-functions} routes every memref.alloc /
 * dealloc of the model code through these (plain malloc/free otherwise, so
 * buffers returned as outputs are freed with free()). A failed allocation, or
 * a size that overflowed (>= 2**63), fails the call like a run-time check
 * (NULL, OM_ERROR_ALLOC) instead of the model writing through NULL. Hidden:
 * each model library uses its own (its own om_check_target). */
#define OM_HIDDEN __attribute__((visibility("hidden")))

/* The node of the next allocation on this thread (om_alloc_sites id, -1:
 * none): set by the model code before each allocation (codegen/alloc_sites). */
static __thread int64_t om_alloc_site_id = -1;

OM_HIDDEN void om_alloc_site(int64_t id) { om_alloc_site_id = id; }

/* The calling thread's id, for the pool to hand to the loop's chunks. */
OM_HIDDEN int64_t om_alloc_site_get(void) { return om_alloc_site_id; }

static void om_alloc_failed(uint64_t size) {
  int64_t id = om_alloc_site_id;
  const char *node = id >= 0 && id < om_alloc_site_count ? om_alloc_sites[id] : NULL;
  snprintf(om_last_error, sizeof om_last_error,
           "%s%sout of memory: the model could not allocate %llu bytes%s",
           node ? node : "", node ? ": " : "", (unsigned long long)size,
           size >> 62 ? " (a dim computed from the inputs is too large)" : "");
  om_last_error_kind = OM_ERROR_ALLOC;
  errno = ENOMEM;
  if (om_check_target) longjmp(*om_check_target, 1);
  fprintf(stderr, "onnx-mlir-py model: %s\n", om_last_error);
  abort();
}

/* For the thread pool (om_parallel.c): the error a chunk of a parallel loop
 * failed with on its thread, and raising it on the thread that called the
 * entry point (longjmp to the entry wrapper, as the failure itself would). */
OM_HIDDEN void om_error_get(char *buf, size_t cap, int64_t *kind, int *err) {
  snprintf(buf, cap, "%s", om_last_error);
  *kind = om_last_error_kind;
  *err = errno;
}

OM_HIDDEN void om_error_raise(const char *msg, int64_t kind, int err) {
  snprintf(om_last_error, sizeof om_last_error, "%s", msg);
  om_last_error_kind = kind;
  errno = err;
  if (om_check_target) longjmp(*om_check_target, 1);
  fprintf(stderr, "onnx-mlir-py model: %s\n", om_last_error);
  abort();
}

OM_HIDDEN void *_mlir_memref_to_llvm_alloc(uint64_t size) {
  void *p = size >> 63 ? NULL : malloc(size ? size : 1);
  if (!p) om_alloc_failed(size);
  return p;
}

OM_HIDDEN void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t size) {
  void *p = NULL;
  if (size >> 63 || posix_memalign(&p, alignment < sizeof(void *) ? sizeof(void *)
                                   : (size_t)alignment, size ? size : 1))
    p = NULL;
  if (!p) om_alloc_failed(size);
  return p;
}

OM_HIDDEN void _mlir_memref_to_llvm_free(void *p) { free(p); }

#if defined(__x86_64__)
/* float -> bfloat16, round to nearest even (NaN stays NaN). The model code
 * does bf16 arithmetic in f32 (codegen/llvm.py), but LLVM's x86 backend still
 * legalizes some bf16 vector operations (selects, shuffles) by promoting to
 * f32 and calling this libcall, which libgcc before GCC 13 does not have.
 * The bits are returned in xmm0 like a half, hence _Float16 (GCC 12+). */
OM_HIDDEN _Float16 __truncsfbf2(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  uint16_t b = (u & 0x7fffffffu) > 0x7f800000u
                   ? (uint16_t)((u >> 16) | 0x40u)
                   : (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  _Float16 r;
  memcpy(&r, &b, sizeof r);
  return r;
}
#endif

int64_t omTensorGetElemSize(OM_DATA_TYPE t) {
  switch (t) {
  case ONNX_TYPE_UINT8: case ONNX_TYPE_INT8: case ONNX_TYPE_BOOL:
  case ONNX_TYPE_FLOAT8E4M3FN: case ONNX_TYPE_FLOAT8E4M3FNUZ: case ONNX_TYPE_FLOAT8E5M2:
  case ONNX_TYPE_FLOAT8E5M2FNUZ: case ONNX_TYPE_UINT4: case ONNX_TYPE_INT4:
  case ONNX_TYPE_FLOAT4E2M1: case ONNX_TYPE_FLOAT8E8M0: case ONNX_TYPE_UINT2:
  case ONNX_TYPE_INT2: return 1;
  case ONNX_TYPE_UINT16: case ONNX_TYPE_INT16: case ONNX_TYPE_FLOAT16:
  case ONNX_TYPE_BFLOAT16: return 2;
  case ONNX_TYPE_FLOAT: case ONNX_TYPE_INT32: case ONNX_TYPE_UINT32: return 4;
  case ONNX_TYPE_DOUBLE: case ONNX_TYPE_INT64: case ONNX_TYPE_UINT64:
  case ONNX_TYPE_COMPLEX64: case ONNX_TYPE_STRING: return 8;
  case ONNX_TYPE_COMPLEX128: return 16;
  default: return 0;
  }
}

/* Bytes of a tensor of `shape` with elements of `esize` bytes, into *bytes:
 * 0 (and the reason in the last error, prefixed by `what`) when a dim is
 * negative or the size does not fit in 2**63 (no wrapped multiplication). */
#define OM_MAX_RANK 4096
static int om_size_fits(const int64_t *shape, int64_t rank, int64_t esize, uint64_t *bytes) {
  uint64_t n = (uint64_t)esize;
  for (int64_t i = 0; i < rank; ++i)
    if (shape[i] < 0 || __builtin_mul_overflow(n, (uint64_t)shape[i], &n) || n >> 63) return 0;
  *bytes = n;
  return 1;
}

static int om_size_bytes(const int64_t *shape, int64_t rank, int64_t esize, uint64_t *bytes,
                         const char *what) {
  if (om_size_fits(shape, rank, esize, bytes)) return 1;
  uint64_t n = (uint64_t)esize;
  for (int64_t i = 0; i < rank; ++i) {
    if (shape[i] < 0) {
      om_set_error(EINVAL, "%s: dim %lld is negative (%lld)", what, (long long)i,
                   (long long)shape[i]);
      return 0;
    }
    if (__builtin_mul_overflow(n, (uint64_t)shape[i], &n) || n >> 63) {
      om_set_error(ENOMEM, "%s: a tensor of this shape has 2**63 bytes or more", what);
      om_last_error_kind = OM_ERROR_ALLOC;
      return 0;
    }
  }
  *bytes = n;
  return 1;
}

static OMTensor *om_tensor_new(void *data, void *allocated, const int64_t *shape,
                               int64_t rank, OM_DATA_TYPE dtype, int64_t owning) {
  if (rank < 0 || rank > OM_MAX_RANK || (rank > 0 && !shape)) {
    om_set_error(EINVAL, "omTensorCreate: bad rank %lld or NULL shape", (long long)rank);
    return NULL;
  }
  OMTensor *t = calloc(1, sizeof *t);
  int64_t *sh = malloc(sizeof(int64_t) * (size_t)(rank + 1));
  int64_t *st = malloc(sizeof(int64_t) * (size_t)(rank + 1));
  if (!t || !sh || !st) {
    free(t); free(sh); free(st);
    om_set_error(ENOMEM, "omTensorCreate: out of memory");
    om_last_error_kind = OM_ERROR_ALLOC;
    return NULL;
  }
  uint64_t stride = 1; /* unsigned: a lying shape wraps instead of being UB */
  for (int64_t i = rank - 1; i >= 0; --i) {
    sh[i] = shape[i];
    st[i] = (int64_t)stride;
    stride *= (uint64_t)shape[i];
  }
  t->data = data; t->allocated = allocated; t->shape = sh; t->strides = st;
  t->rank = rank; t->dtype = dtype; t->owning = owning;
  return t;
}

OMTensor *omTensorCreate(void *data_ptr, const int64_t *shape, int64_t rank,
                         OM_DATA_TYPE dtype) {
  return om_tensor_new(data_ptr, data_ptr, shape, rank, dtype, 0);
}

OMTensor *omTensorCreateWithOwnership(void *data_ptr, const int64_t *shape,
                                      int64_t rank, OM_DATA_TYPE dtype,
                                      int64_t owning) {
  return om_tensor_new(data_ptr, data_ptr, shape, rank, dtype, owning != 0);
}

OMTensor *omTensorCreateEmpty(const int64_t *shape, int64_t rank, OM_DATA_TYPE dtype) {
  uint64_t bytes;
  int64_t esize = omTensorGetElemSize(dtype);
  if (rank < 0 || rank > OM_MAX_RANK || (rank > 0 && !shape) || !esize) {
    om_set_error(EINVAL, "omTensorCreateEmpty: bad rank %lld, NULL shape or unknown "
                 "element type %d", (long long)rank, (int)dtype);
    return NULL;
  }
  if (!om_size_bytes(shape, rank, esize, &bytes, "omTensorCreateEmpty")) return NULL;
  void *buf = malloc(bytes ? (size_t)bytes : 1);
  if (!buf) {
    om_set_error(ENOMEM, "omTensorCreateEmpty: out of memory (%llu bytes)",
                 (unsigned long long)bytes);
    om_last_error_kind = OM_ERROR_ALLOC;
    return NULL;
  }
  OMTensor *t = om_tensor_new(buf, buf, shape, rank, dtype, 1);
  if (!t) free(buf);
  return t;
}

void omTensorDestroy(OMTensor *t) {
  if (!t) return;
  omTensorListDestroy(t->seq);
  if (t->owning) free(t->allocated);
  free(t->shape);
  free(t->strides);
  free(t);
}

void *omTensorGetDataPtr(const OMTensor *t) { return t ? t->data : NULL; }
void *omTensorGetAllocatedPtr(const OMTensor *t) { return t ? t->allocated : NULL; }
const int64_t *omTensorGetShape(const OMTensor *t) { return t ? t->shape : NULL; }
const int64_t *omTensorGetStrides(const OMTensor *t) { return t ? t->strides : NULL; }
int64_t omTensorGetRank(const OMTensor *t) { return t ? t->rank : -1; }
OM_DATA_TYPE omTensorGetDataType(const OMTensor *t) {
  return t ? t->dtype : ONNX_TYPE_UNDEFINED;
}
/* -1 when the count (or size) does not fit in int64 or a dim is negative
 * (only a tensor made by omTensorCreate with a shape its buffer cannot have) */
int64_t omTensorGetNumElems(const OMTensor *t) {
  if (!t) return 0;
  int64_t n = 1;
  for (int64_t i = 0; i < t->rank; ++i)
    if (t->shape[i] < 0 || __builtin_mul_overflow(n, t->shape[i], &n)) return -1;
  return n;
}
int64_t omTensorGetBufferSize(const OMTensor *t) {
  int64_t n = omTensorGetNumElems(t), b;
  if (n < 0 || __builtin_mul_overflow(n, t ? omTensorGetElemSize(t->dtype) : 0, &b)) return -1;
  return b;
}
int64_t omTensorGetOwning(const OMTensor *t) { return t ? t->owning : 0; }
void omTensorSetOwning(OMTensor *t, int64_t owning) { if (t) t->owning = owning != 0; }

OMTensorList *omTensorListCreateWithOwnership(OMTensor **tensors, int64_t n,
                                              int64_t owning) {
  if (n < 0 || (n > 0 && !tensors)) {
    om_set_error(EINVAL, "omTensorListCreate: bad size %lld or NULL array", (long long)n);
    return NULL;
  }
  OMTensorList *l = malloc(sizeof *l);
  if (!l) {
    om_set_error(ENOMEM, "omTensorListCreate: out of memory");
    om_last_error_kind = OM_ERROR_ALLOC;
    return NULL;
  }
  l->omts = tensors; l->size = n; l->owning = owning != 0;
  return l;
}

OMTensorList *omTensorListCreate(OMTensor **tensors, int64_t n) {
  return omTensorListCreateWithOwnership(tensors, n, 0);
}

void omTensorListDestroy(OMTensorList *l) {
  if (!l) return;
  for (int64_t i = 0; i < l->size; ++i) omTensorDestroy(l->omts[i]);
  if (l->owning) free(l->omts);
  free(l);
}

int64_t omTensorListGetSize(const OMTensorList *l) { return l ? l->size : 0; }
OMTensor *omTensorListGetOmtByIndex(const OMTensorList *l, int64_t i) {
  if (!l || i < 0 || i >= l->size) return NULL;
  return l->omts[i];
}
OMTensor **omTensorListGetOmtArray(const OMTensorList *l) { return l ? l->omts : NULL; }

/* ---- one-call helpers for language bindings (the Python runtime) --------
 * omRunArrays: run `entry` on n caller-owned buffers (not copied, not freed):
 *   data[i], ranks[i], shapes (all dims, flat), dtypes[i]. Returns the
 *   entry's output list, or NULL with omGetLastError() set.
 * omTensorListInfo: for each tensor of l, its rank, dtype and data pointer,
 *   and all dims (flat) into shapes when they fit in cap entries. Returns the
 *   number of dims needed (callers retry with a larger buffer if > cap). */
OMTensorList *omRunArrays(OMTensorList *(*entry)(OMTensorList *), int64_t n,
                          void *const *data, const int64_t *ranks,
                          const int64_t *shapes, const int32_t *dtypes) {
  if (!entry || n < 0) {
    om_set_error(EINVAL, "omRunArrays: NULL entry or negative count");
    return NULL;
  }
  OMTensor **ts = calloc((size_t)(n ? n : 1), sizeof *ts);
  if (!ts) {
    om_set_error(ENOMEM, "omRunArrays: out of memory");
    om_last_error_kind = OM_ERROR_ALLOC;
    return NULL;
  }
  const int64_t *sh = shapes;
  OMTensorList *out = NULL;
  int64_t i = 0;
  for (; i < n; sh += ranks[i], ++i)
    if (!(ts[i] = om_tensor_new(data[i], data[i], sh, ranks[i], (OM_DATA_TYPE)dtypes[i], 0)))
      break;
  if (i == n) {
    OMTensorList in = {ts, n, 0};
    out = entry(&in);
  }
  for (int64_t j = 0; j < n; ++j) omTensorDestroy(ts[j]);
  free(ts);
  return out;
}

/* omRunInto: omRunArrays, then output i copied into out[i] (caller-owned,
 *   room for the out_ranks[i] dims of out_shapes, flat, of out_dtypes[i]) and
 *   the output list destroyed: one call per run for outputs of static shape.
 *   Returns 0, or -1 with omGetLastError() set: the run failed, or an output's
 *   count, dtype, rank or dims is not what the caller expected (out[] is then
 *   not all written). */
int64_t omRunInto(OMTensorList *(*entry)(OMTensorList *), int64_t n, void *const *data,
                  const int64_t *ranks, const int64_t *shapes, const int32_t *dtypes,
                  int64_t m, void *const *out, const int64_t *out_ranks,
                  const int64_t *out_shapes, const int32_t *out_dtypes) {
  OMTensorList *l = omRunArrays(entry, n, data, ranks, shapes, dtypes);
  if (!l) return -1;
  int64_t rc = 0;
  if (l->size != m) {
    om_set_error(EINVAL, "omRunInto: the model returned %lld outputs, expected %lld",
                 (long long)l->size, (long long)m);
    rc = -1;
  }
  const int64_t *sh = out_shapes;
  for (int64_t i = 0; rc == 0 && i < m; sh += out_ranks[i], ++i) {
    const OMTensor *t = l->omts[i];
    uint64_t bytes = 0;
    int ok = t && !t->seq && !t->none && t->rank == out_ranks[i] &&
             (int32_t)t->dtype == out_dtypes[i] &&
             om_size_fits(t->shape, t->rank, omTensorGetElemSize(t->dtype), &bytes);
    for (int64_t k = 0; ok && k < t->rank; ++k) ok = t->shape[k] == sh[k];
    if (!ok) {
      om_set_error(EINVAL, "omRunInto: output %lld is not of the expected type and shape",
                   (long long)i);
      rc = -1;
    } else if (bytes) {
      memcpy(out[i], t->data, (size_t)bytes);
    }
  }
  omTensorListDestroy(l);
  return rc;
}

int64_t omRunPlan(const OMRunPlan *plan, void *const *ptrs) {
  if (!plan || !ptrs) {
    om_set_error(EINVAL, "omRunPlan: NULL plan or addresses");
    return -1;
  }
  return omRunInto(plan->entry, plan->n, ptrs, plan->ranks, plan->shapes, plan->dtypes,
                   plan->m, ptrs + plan->n, plan->out_ranks, plan->out_shapes,
                   plan->out_dtypes);
}

int64_t omTensorListRelease(OMTensorList *l, int64_t min_bytes, void **allocated) {
  int64_t k = 0;
  for (int64_t i = 0; l && i < l->size; ++i) {
    OMTensor *t = l->omts[i];
    uint64_t bytes = 0;
    allocated[i] = NULL;
    if (t && t->owning && t->allocated && !t->seq && !t->none &&
        t->dtype != ONNX_TYPE_STRING &&
        om_size_fits(t->shape, t->rank, omTensorGetElemSize(t->dtype), &bytes) &&
        bytes >= (uint64_t)min_bytes) {
      allocated[i] = t->allocated;
      t->owning = 0;
      ++k;
    }
  }
  return k;
}

int64_t omTensorListInfo(const OMTensorList *l, int64_t cap, int64_t *ranks,
                         int32_t *dtypes, void **data, int64_t *shapes) {
  int64_t need = 0;
  for (int64_t i = 0; l && i < l->size; ++i) {
    const OMTensor *t = l->omts[i];
    ranks[i] = t->rank;
    dtypes[i] = (int32_t)t->dtype;
    data[i] = t->data;
    for (int64_t k = 0; k < t->rank; ++k, ++need)
      if (need < cap) shapes[need] = t->shape[k];
  }
  return need;
}

/* ---- entry-wrapper helpers --------------------------------------------- */

/* The thread pool (om_parallel.c, linked only into libraries with
 * parallel loops) learns when a run starts and ends: its idle threads spin
 * through a run instead of sleeping between two parallel loops. Hidden weak
 * references: NULL when this library has no pool, never another library's. */
extern void omPoolRunBegin(void) __attribute__((weak, visibility("hidden")));
extern void omPoolRunEnd(void) __attribute__((weak, visibility("hidden")));

void om_run_begin(void) {
  if (omPoolRunBegin) omPoolRunBegin();
}

void om_run_end(void) {
  if (omPoolRunEnd) omPoolRunEnd();
}

static void om_format_dims(char *buf, size_t cap, const int64_t *d, int64_t r) {
  size_t k = 0;
  k += (size_t)snprintf(buf + k, cap - k, "[");
  for (int64_t i = 0; i < r && k < cap; ++i)
    k += (size_t)snprintf(buf + k, cap - k, i ? ",%lld" : "%lld", (long long)d[i]);
  if (k < cap) snprintf(buf + k, cap - k, "]");
}

int om_check_inputs(const OMTensorList *in, const om_arg_spec *specs, int64_t n,
                    const char *entry) {
  if (!in) { om_set_error(EINVAL, "%s: the input list is NULL", entry); return 0; }
  if (in->size != n) {
    om_set_error(EINVAL, "%s: expected %lld input(s), got %lld", entry,
                 (long long)n, (long long)in->size);
    return 0;
  }
  for (int64_t i = 0; i < n; ++i) {
    const OMTensor *t = in->omts[i];
    const om_arg_spec *s = &specs[i];
    if (!t) {
      om_set_error(EINVAL, "%s: input %lld ('%s') is NULL", entry, (long long)i, s->name);
      return 0;
    }
    if (s->kind != OM_KIND_TENSOR) {
      if (!om_seq_check_input(t, s, i, entry)) return 0;
      continue;
    }
    if (t->seq || t->none) {
      om_set_error(EINVAL, "%s: input %lld ('%s') must be a tensor, got a %s", entry,
                   (long long)i, s->name, t->seq ? "sequence" : "None optional");
      return 0;
    }
    if (t->dtype != s->dtype) {
      om_set_error(EINVAL, "%s: input %lld ('%s'): expected element type %d, got %d",
                   entry, (long long)i, s->name, (int)s->dtype, (int)t->dtype);
      return 0;
    }
    if (t->rank != s->rank) {
      om_set_error(EINVAL, "%s: input %lld ('%s'): expected rank %lld, got %lld", entry,
                   (long long)i, s->name, (long long)s->rank, (long long)t->rank);
      return 0;
    }
    for (int64_t k = 0; k < s->rank; ++k) {
      if (t->shape[k] < 0 || (s->dims[k] >= 0 && t->shape[k] != s->dims[k])) {
        char want[256], got[256];
        om_format_dims(want, sizeof want, s->dims, s->rank);
        om_format_dims(got, sizeof got, t->shape, t->rank);
        om_set_error(EINVAL, "%s: input %lld ('%s'): dimension %lld: expected shape %s, "
                     "got %s", entry, (long long)i, s->name, (long long)k, want, got);
        return 0;
      }
    }
    uint64_t bytes;
    int64_t esize = omTensorGetElemSize(t->dtype);
    if (!om_size_fits(t->shape, t->rank, esize, &bytes)) {  /* the message only on failure */
      char what[256];
      snprintf(what, sizeof what, "%s: input %lld ('%s')", entry, (long long)i, s->name);
      om_size_bytes(t->shape, t->rank, esize, &bytes, what);
      om_last_error_kind = OM_ERROR_OTHER;
      return 0;
    }
    if (!t->data && bytes > 0) {
      om_set_error(EINVAL, "%s: input %lld ('%s') has no data", entry, (long long)i, s->name);
      return 0;
    }
  }
  return 1;
}

int om_check_dim_ties(const OMTensorList *in, const om_arg_spec *specs, const om_dim_tie *ties,
                      int64_t n, const char *entry) {
  for (int64_t i = 0; i < n; ++i) {
    const om_dim_tie *t = &ties[i];
    int64_t a = in->omts[t->input]->shape[t->dim];
    int64_t b = in->omts[t->other]->shape[t->other_dim];
    if (a != b) {
      om_set_error(EINVAL, "%s: input %lld ('%s') dim %lld ('%s') is %lld but input %lld "
                   "('%s') has %lld", entry, (long long)t->input, specs[t->input].name,
                   (long long)t->dim, t->param, (long long)a, (long long)t->other,
                   specs[t->other].name, (long long)b);
      om_last_error_kind = OM_ERROR_CHECK;
      return 0;
    }
  }
  return 1;
}

void om_fill_desc(int64_t *desc, const OMTensor *t) {
  desc[0] = (int64_t)(intptr_t)t->data;
  desc[1] = (int64_t)(intptr_t)t->data;
  desc[2] = 0;
  for (int64_t k = 0; k < t->rank; ++k) {
    desc[3 + k] = t->shape[k];
    desc[3 + t->rank + k] = t->strides[k];
  }
}

/* Copy a strided view into a contiguous row-major buffer (contiguous
   trailing dims, e.g. rows of a padded result, in one memcpy). */
void om_strided_copy(char *dst, const char *src, const int64_t *sizes,
                            const int64_t *strides, int64_t rank, int64_t esize) {
  if (rank == 0) { memcpy(dst, src, (size_t)esize); return; }
  int64_t count = 1;
  for (int64_t k = rank - 1; k >= 0 && (sizes[k] == 1 || strides[k] == count); --k)
    count *= sizes[k];
  if (count == 0) return;
  int64_t all = 1;
  for (int64_t k = 0; k < rank; ++k) all *= sizes[k];
  if (count == all) { memcpy(dst, src, (size_t)(count * esize)); return; }
  int64_t inner = 1;
  for (int64_t k = 1; k < rank; ++k) inner *= sizes[k];
  for (int64_t i = 0; i < sizes[0]; ++i)
    om_strided_copy(dst + i * inner * esize, src + i * strides[0] * esize, sizes + 1,
                    strides + 1, rank - 1, esize);
}

static int om_is_contiguous(const int64_t *sizes, const int64_t *strides, int64_t rank) {
  int64_t expect = 1;
  for (int64_t k = rank - 1; k >= 0; --k) {
    if (sizes[k] != 1 && strides[k] != expect) return 0;
    expect *= sizes[k];
  }
  return 1;
}

static int om_is_input_buffer(const void *p, const OMTensorList *in) {
  for (int64_t j = 0; in && j < in->size; ++j)
    if (in->omts[j] && (in->omts[j]->data == p || in->omts[j]->allocated == p)) return 1;
  return 0;
}

OMTensorList *om_wrap_results(int64_t *res, const om_arg_spec *specs, int64_t n,
                              const OMTensorList *in) {
  size_t cap = (size_t)(n ? n : 1);
  OMTensor **ts = calloc(cap, sizeof *ts);
  void **fresh = calloc(cap, sizeof *fresh); /* distinct buffers MLIR allocated */
  char *adopted = calloc(cap, 1);
  int64_t nfresh = 0, failed = !ts || !fresh || !adopted;
  int64_t *d = res;
  for (int64_t i = 0; i < n; d += specs[i].kind ? 1 : OM_DESC_WORDS(specs[i].rank), ++i) {
    if (specs[i].kind != OM_KIND_TENSOR) {   /* a run-local value: copied out */
      if (!failed) failed |= (ts[i] = om_seq_to_output((void *)(intptr_t)d[0], &specs[i])) == NULL;
      continue;
    }
    void *allocated = (void *)(intptr_t)d[0];
    int64_t rank = specs[i].rank, esize = omTensorGetElemSize(specs[i].dtype);
    const int64_t *sizes = d + 3, *strides = d + 3 + rank;
    char *data = (char *)(intptr_t)d[1] + d[2] * esize;
    int mine = allocated && allocated != OM_MLIR_GLOBAL_SENTINEL &&
               !om_is_input_buffer(allocated, in);
    int64_t slot = -1;
    for (int64_t j = 0; mine && fresh && j < nfresh; ++j)
      if (fresh[j] == allocated) slot = j;
    int first = mine && slot < 0;
    if (first && fresh) { slot = nfresh++; fresh[slot] = allocated; }
    if (failed) continue;
    if (first && specs[i].dtype != ONNX_TYPE_STRING && om_is_contiguous(sizes, strides, rank)) {
      ts[i] = om_tensor_new(data, allocated, sizes, rank, specs[i].dtype, 1);
      if (ts[i]) adopted[slot] = 1;
    } else {
      ts[i] = omTensorCreateEmpty(sizes, rank, specs[i].dtype);
      if (ts[i]) om_strided_copy(ts[i]->data, data, sizes, strides, rank, esize);
    }
    if (ts[i] && specs[i].dtype == ONNX_TYPE_STRING)   /* om_string.c */
      ts[i] = om_string_output(ts[i]);
    failed |= ts[i] == NULL;
  }
  for (int64_t j = 0; fresh && j < nfresh; ++j)
    if (!adopted || !adopted[j]) free(fresh[j]);
  free(fresh);
  free(adopted);
  if (failed) {
    for (int64_t i = 0; ts && i < n; ++i) omTensorDestroy(ts[i]);
    free(ts);
    om_set_error(ENOMEM, "run_main_graph: out of memory while wrapping outputs");
    om_last_error_kind = OM_ERROR_ALLOC;
    return NULL;
  }
  OMTensorList *l = omTensorListCreateWithOwnership(ts, n, 1);
  if (!l) { for (int64_t i = 0; i < n; ++i) omTensorDestroy(ts[i]); free(ts); }
  return l;
}
