/*
 * OnnxMlirRuntime.h - the subset of onnx-mlir's public C runtime API that a
 * model shared object built by onnx-mlir-py exports.
 *
 * A model .so exports:
 *   OMTensorList *run_main_graph(OMTensorList *inputs);
 *   const char *omInputSignature(const char *entry_point);
 *   const char *omOutputSignature(const char *entry_point);
 *   const char **omQueryEntryPoints(int64_t *num_entry_points);
 * plus the OMTensor / OMTensorList functions below and omGetLastError().
 *
 * run_main_graph returns NULL and sets errno (EINVAL for bad inputs, ENOMEM)
 * on failure; omGetLastError() then describes what went wrong. The returned
 * list owns its tensors and their buffers: release it with
 * omTensorListDestroy().
 */
#ifndef ONNX_MLIR_RUNTIME_H
#define ONNX_MLIR_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types: the values of onnx's TensorProto.DataType. */
typedef enum {
  ONNX_TYPE_UNDEFINED = 0,
  ONNX_TYPE_FLOAT = 1,
  ONNX_TYPE_UINT8 = 2,
  ONNX_TYPE_INT8 = 3,
  ONNX_TYPE_UINT16 = 4,
  ONNX_TYPE_INT16 = 5,
  ONNX_TYPE_INT32 = 6,
  ONNX_TYPE_INT64 = 7,
  ONNX_TYPE_STRING = 8,
  ONNX_TYPE_BOOL = 9,
  ONNX_TYPE_FLOAT16 = 10,
  ONNX_TYPE_DOUBLE = 11,
  ONNX_TYPE_UINT32 = 12,
  ONNX_TYPE_UINT64 = 13,
  ONNX_TYPE_COMPLEX64 = 14,
  ONNX_TYPE_COMPLEX128 = 15,
  ONNX_TYPE_BFLOAT16 = 16,
  /* stored one element per byte (the bits in the low part) */
  ONNX_TYPE_FLOAT8E4M3FN = 17,
  ONNX_TYPE_FLOAT8E4M3FNUZ = 18,
  ONNX_TYPE_FLOAT8E5M2 = 19,
  ONNX_TYPE_FLOAT8E5M2FNUZ = 20,
  ONNX_TYPE_UINT4 = 21,
  ONNX_TYPE_INT4 = 22,
  ONNX_TYPE_FLOAT4E2M1 = 23,
  ONNX_TYPE_FLOAT8E8M0 = 24,
  ONNX_TYPE_UINT2 = 25,
  ONNX_TYPE_INT2 = 26
} OM_DATA_TYPE;

typedef struct OMTensor OMTensor;
typedef struct OMTensorList OMTensorList;

/* Size in bytes of one element of `dtype` (0 if unknown). */
int64_t omTensorGetElemSize(OM_DATA_TYPE dtype);

/* A tensor over `data_ptr` (row-major, contiguous); the shape is copied.
 * omTensorCreate does not own the data; ...WithOwnership frees it with
 * free() on destroy when `owning` is non-zero. */
OMTensor *omTensorCreate(void *data_ptr, const int64_t *shape, int64_t rank,
                         OM_DATA_TYPE dtype);
OMTensor *omTensorCreateWithOwnership(void *data_ptr, const int64_t *shape,
                                      int64_t rank, OM_DATA_TYPE dtype,
                                      int64_t owning);
/* A tensor with a fresh, owned, uninitialised buffer. */
OMTensor *omTensorCreateEmpty(const int64_t *shape, int64_t rank,
                              OM_DATA_TYPE dtype);
void omTensorDestroy(OMTensor *tensor);

void *omTensorGetDataPtr(const OMTensor *tensor);
/* The pointer that is free()d when the tensor owns its buffer. */
void *omTensorGetAllocatedPtr(const OMTensor *tensor);
const int64_t *omTensorGetShape(const OMTensor *tensor);
const int64_t *omTensorGetStrides(const OMTensor *tensor); /* in elements */
int64_t omTensorGetRank(const OMTensor *tensor);
OM_DATA_TYPE omTensorGetDataType(const OMTensor *tensor);
int64_t omTensorGetNumElems(const OMTensor *tensor);
int64_t omTensorGetBufferSize(const OMTensor *tensor); /* bytes */
int64_t omTensorGetOwning(const OMTensor *tensor);
/* Give up (0) or take (1) ownership of the buffer. */
void omTensorSetOwning(OMTensor *tensor, int64_t owning);

/* A list over `tensors` (not copied). omTensorListDestroy destroys the
 * tensors; the array itself is freed only when created with owning != 0. */
OMTensorList *omTensorListCreate(OMTensor **tensors, int64_t n);
OMTensorList *omTensorListCreateWithOwnership(OMTensor **tensors, int64_t n,
                                              int64_t owning);
void omTensorListDestroy(OMTensorList *list);
int64_t omTensorListGetSize(const OMTensorList *list);
OMTensor *omTensorListGetOmtByIndex(const OMTensorList *list, int64_t index);
OMTensor **omTensorListGetOmtArray(const OMTensorList *list);

/* Sequence and optional values (onnx-mlir-py extensions). A seq(tensor)
 * input or output is an OMTensor holding an OMTensorList of tensors (its
 * elements, in order); an optional input or output is its value (a tensor,
 * or a sequence tensor), or a None tensor when empty. omTensorCreateSeq takes
 * ownership of `elements` (NULL: an empty sequence); omTensorGetSeq is NULL
 * for anything but a sequence; omTensorDestroy destroys the elements too.
 * The signature JSON marks such values with "kind": "seq", "opt" or
 * "opt_seq", "type"/"dims" then describing the elements. */
OMTensor *omTensorCreateSeq(OMTensorList *elements);
OMTensorList *omTensorGetSeq(const OMTensor *tensor);
OMTensor *omTensorCreateNone(void);
int64_t omTensorIsNone(const OMTensor *tensor);

/* One-call helpers for language bindings (onnx-mlir-py extensions): run an
 * entry point on caller-owned buffers, and read every output's rank, dtype,
 * data pointer and dims at once (see om_runtime.c). */
OMTensorList *omRunArrays(OMTensorList *(*entry)(OMTensorList *), int64_t n,
                          void *const *data, const int64_t *ranks,
                          const int64_t *shapes, const int32_t *dtypes);
int64_t omTensorListInfo(const OMTensorList *list, int64_t cap, int64_t *ranks,
                         int32_t *dtypes, void **data, int64_t *shapes);
/* omRunArrays with outputs of known dtype and shape copied into caller-owned
 * buffers, the output list destroyed: 0, or -1 with the last error set. */
int64_t omRunInto(OMTensorList *(*entry)(OMTensorList *), int64_t n, void *const *data,
                  const int64_t *ranks, const int64_t *shapes, const int32_t *dtypes,
                  int64_t m, void *const *out, const int64_t *out_ranks,
                  const int64_t *out_shapes, const int32_t *out_dtypes);

/* The caller takes the buffers of list's numeric tensors of at least
 * min_bytes (allocated[i]: what free() gets, else NULL; data stays
 * omTensorGetDataPtr): the list's destroy no longer frees them. Returns
 * how many. For outputs handed over without a copy. */
int64_t omTensorListRelease(OMTensorList *list, int64_t min_bytes, void **allocated);

/* omRunInto's arguments but the addresses in one record, made once per
 * session by a binding (a call with 2 arguments, not 11: each costs a
 * Python caller ~0.1 us); ptrs: the n input then the m output addresses. */
typedef struct OMRunPlan {
  OMTensorList *(*entry)(OMTensorList *);
  int64_t n;
  const int64_t *ranks, *shapes;
  const int32_t *dtypes;
  int64_t m;
  const int64_t *out_ranks, *out_shapes;
  const int32_t *out_dtypes;
} OMRunPlan;
int64_t omRunPlan(const OMRunPlan *plan, void *const *ptrs);

/* Message of the last failure of this thread ("" if none). */
const char *omGetLastError(void);
/* What the last error was: OM_ERROR_CHECK when a run-time check of the
 * model code failed (inputs inconsistent with the model: dims it ties
 * together, a reshape's element count, an index out of range, ...). */
#define OM_ERROR_NONE 0
#define OM_ERROR_OTHER 1
#define OM_ERROR_CHECK 2
/* The model code could not allocate memory (a dim computed from the inputs,
 * e.g. ConstantOfShape's or Expand's shape, asked for too much). */
#define OM_ERROR_ALLOC 3
int64_t omGetLastErrorKind(void);

/* The target the library was compiled for, as JSON {"cpu": ..., "features":
 * [...]}, and NULL when this CPU has those features, else a message naming
 * the missing ones (onnx-mlir-py extensions; the entry points check too). */
const char *omTargetInfo(void);
const char *omCheckTarget(void);
/* Only in a library with ISA variants (--march x86-64-v3+x86-64-v4): the
 * level this process runs ("x86-64-v4": the best one the CPU has, or the one
 * ONNX_MLIR_PY_FORCE_ISA names), NULL with the last error set when that
 * variable names one it cannot run. Chosen at the first call, then fixed. */
const char *omTargetVariant(void);

/* Per-node profile of a library built with --profile (onnx-mlir-py
 * extensions, absent from other libraries: look them up with dlsym). Every
 * run records one event per ONNX node and one for the whole call;
 * omProfileWrite writes them as onnxruntime's profile file (a Chrome-trace
 * JSON array), 0 on success, else -1 with omGetLastError() set. Setting
 * ONNX_MLIR_PY_PROFILE_FILE writes it when the library is unloaded. */
int omProfileWrite(const char *path);
int64_t omProfileEventCount(void);
void omProfileReset(void);

/* The model's entry points (generated per model). */
OMTensorList *run_main_graph(OMTensorList *inputs);
const char *omInputSignature(const char *entry_point);
const char *omOutputSignature(const char *entry_point);
const char **omQueryEntryPoints(int64_t *num_entry_points);

#ifdef __cplusplus
}
#endif
#endif /* ONNX_MLIR_RUNTIME_H */
