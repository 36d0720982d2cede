/*
 * om_entry.h - helpers the generated entry wrapper uses to move between
 * OMTensors and MLIR memref descriptors. Internal to a model .so.
 *
 * An MLIR memref descriptor of rank R is, in C layout, a sequence of
 * 3 + 2R eight-byte words: {allocated, aligned, offset, sizes[R],
 * strides[R]}; the results of `_mlir_ciface_main_graph` are such
 * descriptors laid out back to back.
 */
#ifndef OM_ENTRY_H
#define OM_ENTRY_H

#include <setjmp.h>

#include "OnnxMlirRuntime.h"

/* The runtime's structs (opaque to users of OnnxMlirRuntime.h). */
struct OMTensor {
  void *data;      /* first element */
  void *allocated; /* what free() gets when owning */
  int64_t *shape;
  int64_t *strides;
  int64_t rank;
  OM_DATA_TYPE dtype;
  int64_t owning;
  /* a sequence value (omTensorCreateSeq: rank -1, no data), owned */
  OMTensorList *seq;
  /* an empty optional (omTensorCreateNone) */
  int64_t none;
};

struct OMTensorList {
  OMTensor **omts;
  int64_t size;
  int64_t owning;
};


typedef struct {
  const char *name;
  OM_DATA_TYPE dtype;
  int64_t rank;
  const int64_t *dims; /* -1 = dynamic */
  /* OM_KIND_*: a tensor, or a sequence / optional whose elements are
   * described by dtype, rank (-1: any) and dims */
  int64_t kind;
} om_arg_spec;

#define OM_KIND_TENSOR 0
#define OM_KIND_SEQ 1     /* seq(tensor) */
#define OM_KIND_OPT 2     /* optional(tensor) */
#define OM_KIND_OPT_SEQ 3 /* optional(seq(tensor)) */

#define OM_DESC_WORDS(rank) (3 + 2 * (rank))

/* Record a failure: sets errno and the message of omGetLastError(). */
void om_set_error(int err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void om_clear_error(void);

/* Check count, dtype, rank and static dims of `inputs`; 0 on mismatch. */
int om_check_inputs(const OMTensorList *inputs, const om_arg_spec *specs,
                    int64_t n, const char *entry);
/* Dims of two inputs that the model ties together (the same ONNX dim_param):
 * dim `dim` of input `input` must equal dim `other_dim` of input `other`. */
typedef struct {
  int64_t input, dim, other, other_dim;
  const char *param;
} om_dim_tie;
/* Check the ties of already checked `inputs`; 0 (and an OM_ERROR_CHECK
 * error naming both inputs and the dim_param) on a mismatch. */
int om_check_dim_ties(const OMTensorList *inputs, const om_arg_spec *specs,
                      const om_dim_tie *ties, int64_t n, const char *entry);
/* Fill descriptor words `desc` (rank words from spec) from tensor `t`. */
void om_fill_desc(int64_t *desc, const OMTensor *t);
/* Turn the returned descriptors into an owning OMTensorList. Buffers that
 * are fresh allocations are adopted (once); inputs, constants and repeats
 * are copied. On failure frees what it can and returns NULL. */
OMTensorList *om_wrap_results(int64_t *results, const om_arg_spec *specs,
                              int64_t n, const OMTensorList *inputs);
/* Copy a strided view into a contiguous row-major buffer. */
void om_strided_copy(char *dst, const char *src, const int64_t *sizes,
                     const int64_t *strides, int64_t rank, int64_t esize);

/* Sequence and optional values of the model code (om_seq.c): an opaque
 * pointer to a run-local record; every record and element buffer of a run
 * is freed once, by om_seq_run_end (the outputs are copied out first). */
/* Check input `t` against a sequence / optional spec; 0 with the error set. */
int om_seq_check_input(const OMTensor *t, const om_arg_spec *s, int64_t i,
                       const char *entry);
/* The model-code value of checked input `t` (elements not copied). */
void *om_seq_from_input(const OMTensor *t, const om_arg_spec *s);
/* A fresh owning OMTensor for output value `v` (NULL: out of memory). */
OMTensor *om_seq_to_output(void *v, const om_arg_spec *s);
/* Free every record of this thread's run (after the outputs are wrapped). */
void om_seq_run_end(void);
/* A string output tensor made to own its strings (om_string.c); `t` is consumed. */
OMTensor *om_string_output(OMTensor *t);
/* ImageDecoder (om_image.c, called by the model code): decode the `len`
 * bytes at aligned + offset (stride in bytes) as BMP, PNG or PNM with pixel
 * format `mode` (0 RGB, 1 BGR, 2 Grayscale) into a run-arena image; a bad
 * image fails the call with check id check_base + its OM_IMG_* code. */
int64_t om_image_decode(int64_t aligned, int64_t offset, int64_t stride, int64_t len,
                        int64_t mode, int64_t check_base);
int64_t om_image_dim(int64_t image, int64_t k);     /* 0 height, 1 width, 2 channels */
int64_t om_image_read(int64_t image, int64_t dst);  /* copy the pixels, HWC uint8 */

/* Around the model call: tells the thread pool, if any, that a run is in
 * progress (its idle threads spin instead of sleeping). */
void om_run_begin(void);
void om_run_end(void);

/* Run-time checks of the model code (LoweringContext.require): a failed check
 * calls om_check_failed(id, v0..v3), which formats om_check_messages[id]
 * (printf positional %N$lld conversions of the values) into the last error
 * and longjmps to om_check_target, set by the entry wrapper around the model
 * call on the calling thread. The table is generated with the wrapper. */
extern __thread jmp_buf *om_check_target;
extern const char *const om_check_messages[];
extern const int64_t om_check_count;
void om_check_failed(int64_t id, int64_t v0, int64_t v1, int64_t v2, int64_t v3);

/* Allocation failures name the node: the model code calls
 * om_alloc_site(id) before each allocation, id into this table (generated
 * with the wrapper) or -1. */
extern const char *const om_alloc_sites[];
extern const int64_t om_alloc_site_count;

/* Per-node profiling (--profile builds only, om_profile.c): the entry
 * wrapper calls om_prof_run_begin/end around the entry call; the model code
 * om_prof_begin/end(id) around each node, id into om_prof_events[] (each
 * the "name", "args" members of the event's JSON, generated with the
 * wrapper). */
extern const char *const om_prof_events[];
extern const int64_t om_prof_event_count;
void om_prof_run_begin(void);
void om_prof_run_end(void);

/* The target the model code was compiled for (generated with the wrapper):
 * its -mcpu name, the CPU features it needs (NULL-terminated, GCC's
 * __builtin_cpu_supports names) and both as JSON for omTargetInfo(). */
extern const char om_target_cpu[];
extern const char *const om_target_features[];
extern const char om_target_info[];
/* 1 when this CPU has every feature of om_target_features; else 0 with the
 * last error set (naming `entry` and the missing features). Cached. */
int om_check_target_cpu(const char *entry);

/* A library with ISA variants (--march x86-64-v3+x86-64-v4, codegen/fat.py)
 * has one model entry per variant, lowest level first; om_target_features
 * are the lowest one's. om_pick_variant returns the index of the one to run:
 * the one ONNX_MLIR_PY_FORCE_ISA names, else the highest whose features
 * this CPU has; -1 with the last error set (naming `entry`) when the forced
 * one is not in the library or not supported by this CPU. Chosen once. */
typedef struct {
  const char *name;               /* the ISA level, e.g. "x86-64-v4" */
  const char *const *features;    /* NULL-terminated */
} om_variant;
int om_pick_variant(const om_variant *variants, int n, const char *entry);

#endif
