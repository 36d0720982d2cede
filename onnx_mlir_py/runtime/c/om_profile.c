/*
 * om_profile.c - per-node profiling, linked only into libraries built with
 * --profile (passes/instrument.py): a library built without it has none of
 * these symbols and no calls to them.
 *
 * The model code calls om_prof_begin(id) / om_prof_end(id) around the code
 * of each ONNX node (on the thread that called the entry point: a node's
 * parallel loops have finished when om_prof_end runs), id into the event
 * table om_prof_events[] of the generated entry wrapper; the wrapper calls
 * om_prof_run_begin() / om_prof_run_end() around the whole entry call (the
 * trace's "model_run"). Events go into one buffer (a mutex: sessions may run
 * on several threads); omProfileWrite writes them as onnxruntime's profile
 * file, a Chrome trace (JSON array of "ph":"X" events, times in
 * microseconds from when the library was loaded), which Perfetto and
 * chrome://tracing load.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "OnnxMlirRuntime.h"
#include "om_entry.h"

#define OM_HIDDEN __attribute__((visibility("hidden")))
/* at most this many events are kept (32 bytes each); later ones are counted */
#define OM_PROF_MAX_EVENTS (1 << 21)

typedef struct {
  int64_t id; /* om_prof_events index, -1: model_run */
  int64_t ts, dur, tid; /* ns from om_prof_origin, ns, thread id */
} om_prof_event;

static pthread_mutex_t om_prof_lock = PTHREAD_MUTEX_INITIALIZER;
static om_prof_event *om_prof_buf;
static int64_t om_prof_n, om_prof_cap, om_prof_dropped;
static int64_t om_prof_origin;
static __thread int64_t om_prof_node_start, om_prof_run_start, om_prof_tid;

static int64_t om_prof_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

__attribute__((constructor)) static void om_prof_init(void) { om_prof_origin = om_prof_now(); }

static void om_prof_record(int64_t id, int64_t start, int64_t end) {
  if (!om_prof_tid) om_prof_tid = (int64_t)syscall(SYS_gettid);
  pthread_mutex_lock(&om_prof_lock);
  if (om_prof_n == om_prof_cap && om_prof_cap < OM_PROF_MAX_EVENTS) {
    int64_t cap = om_prof_cap ? 2 * om_prof_cap : 1024;
    om_prof_event *b = realloc(om_prof_buf, (size_t)cap * sizeof *b);
    if (b) {
      om_prof_buf = b;
      om_prof_cap = cap;
    }
  }
  if (om_prof_n < om_prof_cap)
    om_prof_buf[om_prof_n++] = (om_prof_event){id, start - om_prof_origin, end - start, om_prof_tid};
  else
    ++om_prof_dropped;
  pthread_mutex_unlock(&om_prof_lock);
}

OM_HIDDEN void om_prof_begin(int64_t id) {
  (void)id;
  om_prof_node_start = om_prof_now();
}

OM_HIDDEN void om_prof_end(int64_t id) { om_prof_record(id, om_prof_node_start, om_prof_now()); }

void om_prof_run_begin(void) { om_prof_run_start = om_prof_now(); }

void om_prof_run_end(void) { om_prof_record(-1, om_prof_run_start, om_prof_now()); }

int64_t omProfileEventCount(void) {
  pthread_mutex_lock(&om_prof_lock);
  int64_t n = om_prof_n;
  pthread_mutex_unlock(&om_prof_lock);
  return n;
}

void omProfileReset(void) {
  pthread_mutex_lock(&om_prof_lock);
  om_prof_n = om_prof_dropped = 0;
  pthread_mutex_unlock(&om_prof_lock);
}

static void om_prof_write_event(FILE *f, const om_prof_event *e, int pid, int first) {
  fprintf(f, "%s\n{\"cat\":\"%s\",\"pid\":%d,\"tid\":%lld,\"dur\":%.3f,\"ts\":%.3f,\"ph\":\"X\",",
          first ? "" : ",", e->id < 0 ? "Session" : "Node", pid, (long long)e->tid,
          e->dur / 1e3, e->ts / 1e3);
  if (e->id >= 0 && e->id < om_prof_event_count)
    fprintf(f, "%s}", om_prof_events[e->id]);
  else
    fputs("\"name\":\"model_run\",\"args\":{}}", f);
}

int omProfileWrite(const char *path) {
  FILE *f = path ? fopen(path, "w") : NULL;
  if (!f) {
    om_set_error(errno ? errno : EINVAL, "cannot write the profile to '%s': %s",
                 path ? path : "(null)", strerror(errno ? errno : EINVAL));
    return -1;
  }
  int pid = (int)getpid();
  pthread_mutex_lock(&om_prof_lock);
  fputc('[', f);
  for (int64_t i = 0; i < om_prof_n; ++i) om_prof_write_event(f, &om_prof_buf[i], pid, i == 0);
  if (om_prof_dropped)
    fprintf(f, "%s\n{\"cat\":\"Session\",\"pid\":%d,\"tid\":%d,\"dur\":0,\"ts\":0,\"ph\":\"X\","
               "\"name\":\"events_dropped\",\"args\":{\"count\":\"%lld\"}}",
            om_prof_n ? "," : "", pid, pid, (long long)om_prof_dropped);
  fputs("\n]\n", f);
  pthread_mutex_unlock(&om_prof_lock);
  if (fclose(f) != 0) {
    om_set_error(errno, "cannot write the profile to '%s': %s", path, strerror(errno));
    return -1;
  }
  return 0;
}

/* A C program (no Python) gets the trace by setting ONNX_MLIR_PY_PROFILE_FILE:
 * written when the library is unloaded (dlclose or exit). */
__attribute__((destructor)) static void om_prof_at_unload(void) {
  const char *path = getenv("ONNX_MLIR_PY_PROFILE_FILE");
  if (path && *path && om_prof_n) omProfileWrite(path);
}
