/* The walk of onnx_mlir_py/native_walk.py: the operations nested in a root
   whose names are in a list, found by MLIR's C API walk in C, so that the
   compiler's Python side makes a Python object only for the ops it asked
   for (issue #29). Built at run time with gcc, linked against nothing but
   libc: the three C API functions it calls are handed to om_walk_init by
   the loader, taken from the bindings' own libMLIRPythonCAPI.so (one MLIR
   in the process; linking against that 200 MB library cost ld ~0.5 s).
   The C API's types are declared here (the wheel ships no headers):
   MlirOperation, MlirIdentifier and MlirStringRef are structs of one
   pointer (and a length), passed by value. */
#include <stddef.h>
#include <string.h>

typedef struct { void *ptr; } MlirOperation;
typedef struct { const void *ptr; } MlirIdentifier;
typedef struct { const char *data; size_t length; } MlirStringRef;
typedef enum { WalkAdvance = 0, WalkInterrupt = 1, WalkSkip = 2 } MlirWalkResult;
typedef MlirWalkResult (*MlirOperationWalkCallback)(MlirOperation, void *);

typedef void (*WalkFn)(MlirOperation op, MlirOperationWalkCallback callback,
                       void *user_data, int walk_order);   /* mlirOperationWalk */
typedef MlirIdentifier (*GetNameFn)(MlirOperation op);     /* mlirOperationGetName */
typedef MlirStringRef (*IdentifierStrFn)(MlirIdentifier);  /* mlirIdentifierStr */

static WalkFn walk_fn;
static GetNameFn get_name_fn;
static IdentifierStrFn identifier_str_fn;

/* The C API's functions this library calls (the loader's, before any walk).
   Returns 1 when all three are given. */
int om_walk_init(void *walk, void *get_name, void *identifier_str) {
  walk_fn = (WalkFn)walk;
  get_name_fn = (GetNameFn)get_name;
  identifier_str_fn = (IdentifierStrFn)identifier_str;
  return walk && get_name && identifier_str;
}

typedef struct {
  const char *const *names;
  const size_t *lengths;
  int count;
  int skip_found;
  void **out;
  size_t capacity;
  size_t found;
} Walk;

static MlirWalkResult visit(MlirOperation op, void *user_data) {
  Walk *w = (Walk *)user_data;
  MlirStringRef s = identifier_str_fn(get_name_fn(op));
  for (int i = 0; i < w->count; ++i) {
    if (s.length == w->lengths[i] && memcmp(s.data, w->names[i], s.length) == 0) {
      if (w->found < w->capacity)
        w->out[w->found] = op.ptr;
      w->found++;
      return w->skip_found ? WalkSkip : WalkAdvance;
    }
  }
  return WalkAdvance;
}

/* The ops nested in root (root included) named one of names[0..count), in
   walk order (order 0: pre-order, 1: post-order, MLIR's MlirWalkOrder);
   skip_found (pre-order only): the ops nested in a found op are not visited.
   Writes the first `capacity` of them to out; returns how many there are. */
size_t om_walk_names(void *root, const char *const *names, const size_t *lengths, int count,
                     int order, int skip_found, void **out, size_t capacity) {
  Walk w = {names, lengths, count, skip_found, out, capacity, 0};
  MlirOperation r = {root};
  if (!walk_fn)
    return (size_t)-1;      /* not initialised: the loader does not use it */
  walk_fn(r, visit, &w, order);
  return w.found;
}
