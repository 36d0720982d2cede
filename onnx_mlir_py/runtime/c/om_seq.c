/*
 * om_seq.c - Sequence and Optional values, compiled into every model .so.
 *
 * Public side (OnnxMlirRuntime.h): a sequence input or output is an OMTensor
 * holding an OMTensorList of tensors (omTensorCreateSeq / omTensorGetSeq);
 * an optional one is its value, or omTensorCreateNone() when empty.
 *
 * Model side (passes/onnx_to_linalg/sequence.py calls these): a value is a
 * pointer to an om_seq {len, arr}; an element is an om_val (a contiguous
 * row-major tensor). An optional tensor is an om_seq of 0 or 1 elements, an
 * optional sequence the sequence pointer or NULL. Records are immutable once built (Insert
 * and Erase make new ones that share the elements), so values can be shared
 * freely; each is allocated in this thread's run arena and freed once, by
 * om_seq_run_end after the outputs were copied out (also after a failed
 * check). A tensor goes in by om_seq_arg / om_seq_arg_dim (its strided view:
 * pointer, offset, sizes, strides) then om_seq_push / om_seq_insert, which
 * copy it; it comes out by om_seq_dim and om_seq_read into a fresh buffer of
 * the model code.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "OnnxMlirRuntime.h"
#include "om_entry.h"

#define OM_HIDDEN __attribute__((visibility("hidden")))
#define OM_SEQ_MAX_RANK 64

typedef struct om_val {
  void *data;    /* contiguous row-major */
  int64_t rank;
  int64_t dtype;
  int64_t shape[];
} om_val;

/* The element array of one or more records: each record sees elems[0, len);
 * a record whose len == used may append in place (at `used`, which no
 * record sees), so a Loop appending n elements is O(n), not O(n^2). */
typedef struct om_arr {
  int64_t used, cap;
  om_val *elems[];
} om_arr;

typedef struct om_seq {
  int64_t len;
  om_arr *arr;
} om_seq;

/* fails the call (longjmp, OM_ERROR_ALLOC) when malloc fails (om_runtime.c) */
void *_mlir_memref_to_llvm_alloc(uint64_t size);

/* ---- the run arena ------------------------------------------------------ */
static __thread void **om_arena;
static __thread int64_t om_arena_n, om_arena_cap;

/* also used by om_string.c for the strings a call makes */
void *om_arena_alloc(uint64_t bytes) {
  if (om_arena_n == om_arena_cap) {
    int64_t cap = om_arena_cap ? 2 * om_arena_cap : 64;
    void **a = _mlir_memref_to_llvm_alloc((uint64_t)cap * sizeof *a);
    if (om_arena_n) memcpy(a, om_arena, (size_t)om_arena_n * sizeof *a);
    free(om_arena);
    om_arena = a;
    om_arena_cap = cap;
  }
  void *p = _mlir_memref_to_llvm_alloc(bytes);
  om_arena[om_arena_n++] = p;
  return p;
}

void om_seq_run_end(void) {
  for (int64_t i = 0; i < om_arena_n; ++i) free(om_arena[i]);
  free(om_arena);
  om_arena = NULL;
  om_arena_n = om_arena_cap = 0;
}

static om_arr *om_arr_alloc(int64_t cap) {
  if (cap < 0) cap = 0;
  om_arr *a = om_arena_alloc(sizeof(om_arr) + (uint64_t)cap * sizeof(om_val *));
  a->used = 0;
  a->cap = cap;
  return a;
}

static om_seq *om_seq_of(om_arr *a, int64_t len) {
  om_seq *s = om_arena_alloc(sizeof(om_seq));
  s->len = len;
  s->arr = a;
  return s;
}

static om_seq *om_seq_alloc(int64_t cap) { return om_seq_of(om_arr_alloc(cap), 0); }

/* Append v to fresh (or longest) record q in place. */
static void om_seq_append(om_seq *q, om_val *v) {
  if (q->len == q->arr->used && q->arr->used < q->arr->cap) {
    q->arr->elems[q->arr->used++] = v;
    q->len++;
  }
}

/* ---- tensors in: the pending strided view ------------------------------- */
static __thread struct {
  const char *data;
  int64_t rank, dtype;
  int64_t sizes[OM_SEQ_MAX_RANK], strides[OM_SEQ_MAX_RANK];
} om_pending;

OM_HIDDEN void om_seq_arg(int64_t aligned, int64_t offset, int64_t rank, int64_t dtype) {
  om_pending.rank = rank < 0 ? 0 : rank > OM_SEQ_MAX_RANK ? OM_SEQ_MAX_RANK : rank;
  om_pending.dtype = dtype;
  om_pending.data = (const char *)(intptr_t)aligned + offset * omTensorGetElemSize(dtype);
}

OM_HIDDEN void om_seq_arg_dim(int64_t k, int64_t size, int64_t stride) {
  if (k >= 0 && k < OM_SEQ_MAX_RANK) {
    om_pending.sizes[k] = size;
    om_pending.strides[k] = stride;
  }
}

static om_val *om_val_copy(const char *data, int64_t rank, int64_t dtype, const int64_t *sizes,
                           const int64_t *strides) {
  int64_t esize = omTensorGetElemSize((OM_DATA_TYPE)dtype);
  uint64_t bytes = (uint64_t)esize;
  for (int64_t k = 0; k < rank; ++k) bytes *= (uint64_t)sizes[k];
  uint64_t head = (sizeof(om_val) + (uint64_t)rank * sizeof(int64_t) + 63) & ~(uint64_t)63;
  om_val *v = om_arena_alloc(head + bytes);
  v->data = (char *)v + head;
  v->rank = rank;
  v->dtype = dtype;
  memcpy(v->shape, sizes, (size_t)rank * sizeof(int64_t));
  if (bytes) om_strided_copy(v->data, data, sizes, strides, rank, esize);
  return v;
}

static om_val *om_pending_val(void) {
  return om_val_copy(om_pending.data, om_pending.rank, om_pending.dtype, om_pending.sizes,
                     om_pending.strides);
}

/* ---- the calls of the model code ---------------------------------------- */
OM_HIDDEN void *om_seq_new(int64_t cap) { return om_seq_alloc(cap); }

OM_HIDDEN int64_t om_seq_len(void *s) { return ((om_seq *)s)->len; }

/* Append the pending tensor to `s`, made by om_seq_new with room for it. */
OM_HIDDEN void om_seq_push(void *s) { om_seq_append(s, om_pending_val()); }

/* A new sequence: `s` with the pending tensor inserted at `pos` (0..len,
 * checked by the model code). At the end of the longest record of its array
 * it shares the array (grown by doubling when full). */
OM_HIDDEN void *om_seq_insert(void *s, int64_t pos) {
  om_seq *q = s;
  om_val *v = om_pending_val();
  om_arr *a = q->arr;
  if (pos == q->len && q->len == a->used && a->used < a->cap) {
    a->elems[a->used++] = v;
    return om_seq_of(a, q->len + 1);
  }
  om_arr *b = om_arr_alloc(pos == q->len ? 2 * q->len + 4 : q->len + 1);
  for (int64_t i = 0, j = 0; i <= q->len; ++i)
    b->elems[i] = i == pos ? v : q->arr->elems[j++];
  b->used = q->len + 1;
  return om_seq_of(b, q->len + 1);
}

/* A new sequence: `s` without element `pos` (0..len-1, checked); the last
 * one goes by sharing the array. */
OM_HIDDEN void *om_seq_erase(void *s, int64_t pos) {
  om_seq *q = s;
  if (pos == q->len - 1) return om_seq_of(q->arr, q->len - 1);
  om_arr *b = om_arr_alloc(q->len);
  for (int64_t i = 0; i < q->len; ++i)
    if (i != pos) b->elems[b->used++] = q->arr->elems[i];
  return om_seq_of(b, q->len - 1);
}

/* optional(seq) is a nullable sequence pointer: NULL when empty. */
OM_HIDDEN void *om_seq_null(void) { return NULL; }

OM_HIDDEN int64_t om_seq_present(void *s) { return s != NULL; }

OM_HIDDEN int64_t om_seq_dim(void *s, int64_t pos, int64_t k) {
  om_val *v = ((om_seq *)s)->arr->elems[pos];
  return k >= 0 && k < v->rank ? v->shape[k] : -1;
}

OM_HIDDEN int64_t om_seq_rank(void *s, int64_t pos) {
  return ((om_seq *)s)->arr->elems[pos]->rank;
}

/* Copy element `pos` (a tensor) into the contiguous buffer at `dst`. */
OM_HIDDEN void om_seq_read(void *s, int64_t pos, int64_t dst) {
  om_val *v = ((om_seq *)s)->arr->elems[pos];
  int64_t n = omTensorGetElemSize((OM_DATA_TYPE)v->dtype);
  for (int64_t k = 0; k < v->rank; ++k) n *= v->shape[k];
  if (n) memcpy((void *)(intptr_t)dst, v->data, (size_t)n);
}

/* ---- public API: sequence / None values in OMTensorLists ---------------- */
OMTensor *omTensorCreateSeq(OMTensorList *elements) {
  OMTensor *t = calloc(1, sizeof *t);
  if (!t) {
    om_set_error(ENOMEM, "omTensorCreateSeq: out of memory");
    return NULL;
  }
  t->seq = elements ? elements : omTensorListCreateWithOwnership(NULL, 0, 1);
  if (!t->seq) { free(t); return NULL; }
  t->rank = -1;
  return t;
}

OMTensorList *omTensorGetSeq(const OMTensor *t) { return t ? t->seq : NULL; }

OMTensor *omTensorCreateNone(void) {
  OMTensor *t = calloc(1, sizeof *t);
  if (!t) {
    om_set_error(ENOMEM, "omTensorCreateNone: out of memory");
    return NULL;
  }
  t->none = 1;
  t->rank = -1;
  return t;
}

int64_t omTensorIsNone(const OMTensor *t) { return t ? t->none : 0; }

/* ---- the entry wrapper's conversions ------------------------------------ */
static const char *om_kind_name(int64_t kind) {
  return kind == OM_KIND_SEQ ? "a sequence" : kind == OM_KIND_OPT ? "an optional tensor"
                                                                  : "an optional sequence";
}

static int om_check_elem(const OMTensor *e, const om_arg_spec *s, int64_t i, int64_t j,
                         const char *entry) {
  if (!e || e->seq || e->none) {
    om_set_error(EINVAL, "%s: input %lld ('%s') element %lld must be a tensor", entry,
                 (long long)i, s->name, (long long)j);
    return 0;
  }
  if (e->dtype != s->dtype || (s->rank >= 0 && e->rank != s->rank) ||
      e->rank > OM_SEQ_MAX_RANK) {
    om_set_error(EINVAL, "%s: input %lld ('%s') element %lld: expected element type %d and "
                 "rank %lld, got %d and %lld", entry, (long long)i, s->name, (long long)j,
                 (int)s->dtype, (long long)s->rank, (int)e->dtype, (long long)e->rank);
    return 0;
  }
  for (int64_t k = 0; k < e->rank; ++k) {
    if (e->shape[k] < 0 || (s->rank >= 0 && s->dims[k] >= 0 && e->shape[k] != s->dims[k])) {
      om_set_error(EINVAL, "%s: input %lld ('%s') element %lld: dimension %lld is %lld, "
                   "expected %lld", entry, (long long)i, s->name, (long long)j, (long long)k,
                   (long long)e->shape[k], (long long)s->dims[k]);
      return 0;
    }
  }
  if (!e->data && omTensorGetNumElems(e) != 0) {
    om_set_error(EINVAL, "%s: input %lld ('%s') element %lld has no data", entry,
                 (long long)i, s->name, (long long)j);
    return 0;
  }
  return 1;
}

static int om_check_seq(const OMTensorList *l, const om_arg_spec *s, int64_t i,
                        const char *entry) {
  for (int64_t j = 0; j < omTensorListGetSize(l); ++j)
    if (!om_check_elem(l->omts[j], s, i, j, entry)) return 0;
  return 1;
}

int om_seq_check_input(const OMTensor *t, const om_arg_spec *s, int64_t i, const char *entry) {
  int ok = s->kind == OM_KIND_SEQ ? t->seq != NULL
         : s->kind == OM_KIND_OPT ? !t->seq
         : t->none || t->seq;
  if (!ok) {
    om_set_error(EINVAL, "%s: input %lld ('%s') must be %s", entry, (long long)i, s->name,
                 om_kind_name(s->kind));
    return 0;
  }
  if (t->none) return 1;
  if (t->seq) return om_check_seq(t->seq, s, i, entry);
  return om_check_elem(t, s, i, 0, entry);
}

static om_val *om_val_borrow(const OMTensor *e) {
  om_val *v = om_arena_alloc(sizeof(om_val) + (uint64_t)e->rank * sizeof(int64_t));
  v->data = e->data;
  v->rank = e->rank;
  v->dtype = e->dtype;
  memcpy(v->shape, e->shape, (size_t)e->rank * sizeof(int64_t));
  return v;
}

static om_seq *om_seq_borrow(const OMTensorList *l) {
  om_seq *q = om_seq_alloc(l->size);
  for (int64_t j = 0; j < l->size; ++j) om_seq_append(q, om_val_borrow(l->omts[j]));
  return q;
}

void *om_seq_from_input(const OMTensor *t, const om_arg_spec *s) {
  if (s->kind == OM_KIND_SEQ) return om_seq_borrow(t->seq);
  if (s->kind == OM_KIND_OPT_SEQ) return t->none ? NULL : om_seq_borrow(t->seq);
  om_seq *box = om_seq_alloc(1);
  if (!t->none) om_seq_append(box, om_val_borrow(t));
  return box;
}

static OMTensor *om_val_out(const om_val *v) {
  OMTensor *t = omTensorCreateEmpty(v->shape, v->rank, (OM_DATA_TYPE)v->dtype);
  int64_t n = t ? omTensorGetBufferSize(t) : 0;
  if (t && n) memcpy(t->data, v->data, (size_t)n);
  return t;
}

static OMTensor *om_seq_out(const om_seq *q) {
  OMTensor **ts = calloc((size_t)(q->len ? q->len : 1), sizeof *ts);
  int failed = !ts;
  for (int64_t j = 0; !failed && j < q->len; ++j)
    failed = (ts[j] = om_val_out(q->arr->elems[j])) == NULL;
  OMTensorList *l = failed ? NULL : omTensorListCreateWithOwnership(ts, q->len, 1);
  OMTensor *t = l ? omTensorCreateSeq(l) : NULL;
  if (!t) {
    if (l) omTensorListDestroy(l);
    else for (int64_t j = 0; ts && j < q->len; ++j) omTensorDestroy(ts[j]);
    if (!l) free(ts);
  }
  return t;
}

OMTensor *om_seq_to_output(void *v, const om_arg_spec *s) {
  const om_seq *q = v;
  if (s->kind == OM_KIND_SEQ) return om_seq_out(q);
  if (s->kind == OM_KIND_OPT_SEQ) return q ? om_seq_out(q) : omTensorCreateNone();
  return q->len ? om_val_out(q->arr->elems[0]) : omTensorCreateNone();
}
