/* The walk of onnx_mlir_py/native_walk.py: the operations nested in a root
   whose names are in a list, found by MLIR's C API walk in C, so that the
   compiler's Python side makes a Python object only for the ops it asked
   for (issue #29). Built at run time with gcc against the MLIR wheel's
   libMLIRPythonCAPI.so; the C API's types are declared here (the wheel
   ships no headers): MlirOperation, MlirIdentifier and MlirStringRef are
   structs of one pointer (and a length), passed by value. */
#include <stddef.h>
#include <string.h>

typedef struct { void *ptr; } MlirOperation;
typedef struct { const void *ptr; } MlirIdentifier;
typedef struct { const char *data; size_t length; } MlirStringRef;
typedef enum { WalkAdvance = 0, WalkInterrupt = 1, WalkSkip = 2 } MlirWalkResult;
typedef MlirWalkResult (*MlirOperationWalkCallback)(MlirOperation, void *);

extern void mlirOperationWalk(MlirOperation op, MlirOperationWalkCallback callback,
                              void *user_data, int walk_order);
extern MlirIdentifier mlirOperationGetName(MlirOperation op);
extern MlirStringRef mlirIdentifierStr(MlirIdentifier ident);

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
  MlirStringRef s = mlirIdentifierStr(mlirOperationGetName(op));
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
  mlirOperationWalk(r, visit, &w, order);
  return w.found;
}

/* The C API's walk this library calls: the loader checks that it is the
   bindings' own (one copy of MLIR in the process). */
void *om_walk_entry(void) { return (void *)&mlirOperationWalk; }
