/* MLIR async runtime API (the calls `convert-async-to-llvm` emits), with a
 * thread count settable at run time. Linked into a model library only when
 * its code uses the async dialect (-O3 multi-threaded kernels, see
 * codegen/link.py), so the .so stays self-contained: MLIR's own
 * libmlir_async_runtime.so needs libLLVM.so and has a fixed-size pool.
 *
 *   omSetNumThreads(n)   n >= 1 threads; n <= 0: all online CPUs
 *   omGetNumThreads()
 *   omGetPoolTaskCount()  tasks handed to the pool so far (diagnostics)
 *   env ONNX_MLIR_PY_NUM_THREADS sets the initial count (default 1)
 *   env ONNX_MLIR_PY_SPIN_US: how long idle threads spin (default 200)
 *
 * With one thread every task runs inline in the caller (legal: the
 * coroutines call coro.save before handing their handle to the runtime).
 * With n threads, n - 1 pool workers and the waiting caller run the tasks.
 *
 * Objects (tokens, values, groups) share one reference-counted struct.
 *
 * Out of memory never aborts: an object that cannot be allocated is the
 * static `failed_obj` (in error state, not counted), a waiter or group link
 * that cannot be allocated becomes a blocking wait. The model code checks
 * each parallel loop's group after awaiting it (om_async_check, in place of
 * the abort convert-async-to-llvm emits, see codegen/alloc_sites.py): an
 * error waits for the tasks still in flight, then fails the call with
 * OM_ERROR_ALLOC naming the node (om_pool_failed, om_runtime.c).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

typedef void (*OmResume)(void *);

typedef struct OmWaiter {
  void *handle;
  OmResume resume;
  struct OmWaiter *next;
} OmWaiter;

enum { OM_PENDING = 0, OM_READY = 1, OM_ERROR = 2 };

typedef struct OmAsyncObj {
  atomic_llong refs;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int state;
  int64_t pending; /* group: tokens not ready yet */
  int64_t rank;    /* group: tokens added so far */
  bool error;      /* group: some token failed */
  OmWaiter *waiters;
  void *storage; /* value */
} OmAsyncObj;

/* Stands for every object that could not be allocated: already failed. */
static OmAsyncObj failed_obj = {.mu = PTHREAD_MUTEX_INITIALIZER,
                                .cv = PTHREAD_COND_INITIALIZER, .state = OM_ERROR};
/* Its value storage (the compiler's pipeline creates no async values). */
static _Alignas(64) unsigned char failed_storage[4096];

extern void om_pool_failed(int64_t site) __attribute__((visibility("hidden")));

/* ---- thread pool ------------------------------------------------------
 *
 * n threads = the caller + (n - 1) pool workers. A caller blocked in an
 * await runs queued tasks itself (it would otherwise sleep while its own
 * loop's blocks wait in the queue), and a worker that finds the queue empty
 * spins for a short while before it sleeps: a model runs one parallel loop
 * after another with a little serial code between them, and waking a
 * sleeping thread through the kernel costs 30-50 us, more than many of the
 * loops take. While a model runs (omPoolRunBegin/End, called by the entry
 * wrapper) idle threads keep spinning, yielding the core now and then; after
 * it they spin for ONNX_MLIR_PY_SPIN_US (default 200 us; 0: sleep at once),
 * then sleep. A run also wakes the workers at its start, so their wake-up
 * overlaps the model's first serial code. */

typedef struct OmTask {
  void *handle;
  OmResume resume;
  struct OmTask *next;
} OmTask;

#define OM_MAX_THREADS 256

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pool_cv = PTHREAD_COND_INITIALIZER;
static OmTask *queue_head, *queue_tail;
static atomic_int queued = 0;      /* tasks in the queue (read while spinning) */
static int started;                /* workers created so far */
static int sleepers;               /* workers blocked on pool_cv */
static atomic_int active = 0;      /* requested thread count (0 = not read yet) */
static atomic_llong pool_tasks = 0; /* tasks handed to the pool (for tests) */
static long spin_ns = -1;          /* -1: not read yet */
static atomic_int runs_active = 0; /* model runs in progress */
static atomic_llong inflight = 0;  /* queued or running pool tasks */

static int online_cpus(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

static int clamp_threads(long n) {
  if (n <= 0) n = online_cpus();
  return n > OM_MAX_THREADS ? OM_MAX_THREADS : (int)n;
}

static int num_threads(void) {
  int n = atomic_load(&active);
  if (n == 0) {
    const char *env = getenv("ONNX_MLIR_PY_NUM_THREADS");
    n = env && *env ? clamp_threads(strtol(env, NULL, 10)) : 1;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&active, &expected, n)) n = expected;
  }
  return n;
}

void omSetNumThreads(int n) { atomic_store(&active, clamp_threads(n)); }

int omGetNumThreads(void) { return num_threads(); }

/* How many tasks were handed to the pool since the library was loaded (run
 * by a worker or by a waiting caller): a parallel loop that was not split
 * into tasks leaves it unchanged. */
int64_t omGetPoolTaskCount(void) { return atomic_load(&pool_tasks); }

static long spin_limit_ns(void) {
  if (spin_ns < 0) {
    const char *env = getenv("ONNX_MLIR_PY_SPIN_US");
    long us = env && *env ? strtol(env, NULL, 10) : 200;
    spin_ns = us > 0 ? us * 1000 : 0;
  }
  return spin_ns;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

static long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Pop a task, or NULL; pool_mu must be held. */
static OmTask *pop_locked(void) {
  OmTask *t = queue_head;
  if (t) {
    queue_head = t->next;
    if (!queue_head) queue_tail = NULL;
    atomic_fetch_sub(&queued, 1);
  }
  return t;
}

static OmTask *try_pop(void) {
  if (atomic_load_explicit(&queued, memory_order_acquire) == 0) return NULL;
  pthread_mutex_lock(&pool_mu);
  OmTask *t = pop_locked();
  pthread_mutex_unlock(&pool_mu);
  return t;
}

static void run_task(OmTask *t) {
  t->resume(t->handle);
  free(t);
  atomic_fetch_sub(&inflight, 1);
}

/* Spin until `ready(arg)`, as long as a run is in progress (yielding the
 * core every ~50 us) and for the spin time after; true if ready. */
static bool spin_until(bool (*ready)(void *), void *arg) {
  long limit = spin_limit_ns();
  long start = now_ns(), yielded = start;
  for (;;) {
    for (int i = 0; i < 64; i++) {
      if (ready(arg)) return true;
      cpu_relax();
    }
    long t = now_ns();
    if (atomic_load_explicit(&runs_active, memory_order_relaxed) > 0) {
      start = t;
      if (t - yielded > 50000) {
        sched_yield();
        yielded = t;
      }
    } else if (t - start >= limit) {
      return ready(arg);
    }
  }
}

static bool queue_nonempty(void *unused) {
  (void)unused;
  return atomic_load_explicit(&queued, memory_order_acquire) > 0;
}

/* A spinning worker stops for a task, or when the thread count drops
 * below it (it then sleeps, even while runs go on). */
static bool task_or_retired(void *arg) {
  return queue_nonempty(NULL) || (long)arg + 1 >= atomic_load(&active);
}

static void *worker_main(void *arg) {
  long index = (long)arg; /* worker i serves thread counts > i + 1 */
  for (;;) {
    if (index + 1 < atomic_load(&active)) {
      OmTask *t = try_pop();
      if (t) {
        run_task(t);
        continue;
      }
      if (spin_until(task_or_retired, arg) && index + 1 < atomic_load(&active)) continue;
    }
    pthread_mutex_lock(&pool_mu);
    if (!queue_head || index + 1 >= atomic_load(&active)) {
      /* woken by a task or by a run's start: either way back to spinning */
      sleepers++;
      pthread_cond_wait(&pool_cv, &pool_mu);
      sleepers--;
    }
    OmTask *t = index + 1 < atomic_load(&active) ? pop_locked() : NULL;
    pthread_mutex_unlock(&pool_mu);
    if (t) run_task(t);
  }
  return NULL;
}

/* Create workers up to n - 1; pool_mu must be held. */
static void start_workers_locked(int n) {
  while (started < n - 1) {
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&attr, 8 << 20);
    int rc = pthread_create(&th, &attr, worker_main, (void *)(long)started);
    pthread_attr_destroy(&attr);
    if (rc != 0) break;
    started++;
  }
}

/* A model run starts / ends (called by the entry wrapper, om_runtime.c). */
void omPoolRunBegin(void) {
  atomic_fetch_add(&runs_active, 1);
  int n = num_threads();
  if (n <= 1) return;
  pthread_mutex_lock(&pool_mu);
  start_workers_locked(n);
  if (sleepers > 0) pthread_cond_broadcast(&pool_cv);
  pthread_mutex_unlock(&pool_mu);
}

void omPoolRunEnd(void) { atomic_fetch_sub(&runs_active, 1); }

static void submit(void *handle, OmResume resume) {
  int n = num_threads();
  if (n <= 1) { /* run inline */
    resume(handle);
    return;
  }
  OmTask *t = malloc(sizeof(OmTask));
  if (!t) { /* out of memory: still make progress */
    resume(handle);
    return;
  }
  t->handle = handle;
  t->resume = resume;
  t->next = NULL;
  pthread_mutex_lock(&pool_mu);
  start_workers_locked(n);
  /* With no worker the task still runs: the caller takes it from the queue
   * when it awaits. */
  if (queue_tail) queue_tail->next = t; else queue_head = t;
  queue_tail = t;
  atomic_fetch_add(&inflight, 1);
  atomic_fetch_add(&queued, 1);
  atomic_fetch_add(&pool_tasks, 1);
  if (sleepers > 0) pthread_cond_broadcast(&pool_cv);
  pthread_mutex_unlock(&pool_mu);
}

/* ---- objects ------------------------------------------------------------ */

static OmAsyncObj *new_obj(void) {
  OmAsyncObj *o = calloc(1, sizeof(OmAsyncObj));
  if (!o) return &failed_obj;
  atomic_init(&o->refs, 1);
  pthread_mutex_init(&o->mu, NULL);
  pthread_cond_init(&o->cv, NULL);
  return o;
}

void mlirAsyncRuntimeAddRef(void *p, int64_t count) {
  if (p != &failed_obj) atomic_fetch_add(&((OmAsyncObj *)p)->refs, count);
}

void mlirAsyncRuntimeDropRef(void *p, int64_t count) {
  OmAsyncObj *o = p;
  if (o != &failed_obj && atomic_fetch_sub(&o->refs, count) == count) {
    pthread_mutex_destroy(&o->mu);
    pthread_cond_destroy(&o->cv);
    free(o->storage);
    free(o);
  }
}

void *mlirAsyncRuntimeCreateToken(void) { return new_obj(); }

void *mlirAsyncRuntimeCreateValue(int64_t size) {
  OmAsyncObj *o = new_obj();
  if (o != &failed_obj) o->storage = calloc(1, size > 0 ? (size_t)size : 1);
  if (o != &failed_obj && !o->storage) {
    mlirAsyncRuntimeDropRef(o, 1);
    o = &failed_obj;
  }
  if (o == &failed_obj && size > (int64_t)sizeof failed_storage) {
    /* unreachable from the compiler's code (it makes no async values) */
    fprintf(stderr, "onnx-mlir-py model: out of memory in the thread pool\n");
    abort();
  }
  return o;
}

void *mlirAsyncRuntimeCreateGroup(int64_t size) {
  OmAsyncObj *o = new_obj();
  if (o == &failed_obj) return o;
  o->pending = size;
  if (size == 0) o->state = OM_READY;
  return o;
}

/* Mark ready (or error) and run the waiters, outside the lock. */
static void set_state(OmAsyncObj *o, int state) {
  if (o == &failed_obj) return;
  pthread_mutex_lock(&o->mu);
  __atomic_store_n(&o->state, state, __ATOMIC_RELEASE);
  OmWaiter *w = o->waiters;
  o->waiters = NULL;
  pthread_cond_broadcast(&o->cv);
  pthread_mutex_unlock(&o->mu);
  while (w) {
    OmWaiter *next = w->next;
    w->resume(w->handle);
    free(w);
    w = next;
  }
}

void mlirAsyncRuntimeEmplaceToken(void *p) { set_state(p, OM_READY); }
void mlirAsyncRuntimeEmplaceValue(void *p) { set_state(p, OM_READY); }
void mlirAsyncRuntimeSetTokenError(void *p) { set_state(p, OM_ERROR); }
void mlirAsyncRuntimeSetValueError(void *p) { set_state(p, OM_ERROR); }

static bool is_error(OmAsyncObj *o) {
  pthread_mutex_lock(&o->mu);
  bool e = o->state == OM_ERROR || o->error;
  pthread_mutex_unlock(&o->mu);
  return e;
}

bool mlirAsyncRuntimeIsTokenError(void *p) { return is_error(p); }
bool mlirAsyncRuntimeIsValueError(void *p) { return is_error(p); }
bool mlirAsyncRuntimeIsGroupError(void *p) { return is_error(p); }

static bool obj_ready(void *p) {
  return __atomic_load_n(&((OmAsyncObj *)p)->state, __ATOMIC_ACQUIRE) != OM_PENDING;
}

/* Block until o is ready, running queued tasks meanwhile (the caller is one
 * of the n threads); then spin a little, then sleep. */
static bool obj_ready_or_task(void *p) { return obj_ready(p) || queue_nonempty(NULL); }

static void await_obj(OmAsyncObj *o) {
  for (;;) {
    if (obj_ready(o)) return;
    OmTask *t = try_pop();
    if (t) {
      run_task(t);
      continue;
    }
    if (!spin_until(obj_ready_or_task, o)) break;
  }
  pthread_mutex_lock(&o->mu);
  while (o->state == OM_PENDING) {
    /* a task queued after the spin (no worker may be running) */
    OmTask *t = NULL;
    if (atomic_load(&queued) > 0) {
      pthread_mutex_unlock(&o->mu);
      t = try_pop();
      if (t) run_task(t);
      pthread_mutex_lock(&o->mu);
      if (t) continue;
    }
    pthread_cond_wait(&o->cv, &o->mu);
  }
  pthread_mutex_unlock(&o->mu);
}

void mlirAsyncRuntimeAwaitToken(void *p) { await_obj(p); }
void mlirAsyncRuntimeAwaitValue(void *p) { await_obj(p); }
void mlirAsyncRuntimeAwaitAllInGroup(void *p) { await_obj(p); }

void *mlirAsyncRuntimeGetValueStorage(void *p) {
  return p == &failed_obj ? (void *)failed_storage : ((OmAsyncObj *)p)->storage;
}

void mlirAsyncRuntimeExecute(void *handle, OmResume resume) { submit(handle, resume); }

/* Run resume(handle) once o is ready: now if it is, else when it becomes so. */
static void await_and_execute(OmAsyncObj *o, void *handle, OmResume resume) {
  pthread_mutex_lock(&o->mu);
  if (o->state != OM_PENDING) {
    pthread_mutex_unlock(&o->mu);
    resume(handle);
    return;
  }
  OmWaiter *w = malloc(sizeof(OmWaiter));
  if (!w) { /* out of memory: wait here instead (running queued tasks meanwhile) */
    pthread_mutex_unlock(&o->mu);
    await_obj(o);
    resume(handle);
    return;
  }
  w->handle = handle;
  w->resume = resume;
  w->next = o->waiters;
  o->waiters = w;
  pthread_mutex_unlock(&o->mu);
}

void mlirAsyncRuntimeAwaitTokenAndExecute(void *p, void *h, OmResume r) { await_and_execute(p, h, r); }
void mlirAsyncRuntimeAwaitValueAndExecute(void *p, void *h, OmResume r) { await_and_execute(p, h, r); }
void mlirAsyncRuntimeAwaitAllInGroupAndExecute(void *p, void *h, OmResume r) { await_and_execute(p, h, r); }

/* Group bookkeeping: a token added to a group counts down the group's
 * pending tokens when it becomes ready (the group holds no token ref; the
 * token keeps the group alive until then). */
static void token_done(void *arg);

typedef struct {
  OmAsyncObj *token, *group;
} OmGroupLink;

static void count_down(OmAsyncObj *token, OmAsyncObj *group) {
  bool failed = is_error(token);
  pthread_mutex_lock(&group->mu);
  if (failed) group->error = true;
  bool last = --group->pending == 0;
  pthread_mutex_unlock(&group->mu);
  if (last) set_state(group, group->error ? OM_ERROR : OM_READY);
}

int64_t mlirAsyncRuntimeAddTokenToGroup(void *tp, void *gp) {
  OmAsyncObj *token = tp, *group = gp;
  if (group == &failed_obj) return 0; /* failed already: nothing to count */
  pthread_mutex_lock(&group->mu);
  int64_t rank = group->rank++;
  pthread_mutex_unlock(&group->mu);
  OmGroupLink *link = malloc(sizeof(OmGroupLink));
  if (!link) { /* out of memory: wait for the token here */
    await_obj(token);
    count_down(token, group);
    return rank;
  }
  link->token = token;
  link->group = group;
  mlirAsyncRuntimeAddRef(group, 1);
  mlirAsyncRuntimeAddRef(token, 1);
  await_and_execute(token, link, token_done);
  return rank;
}

static void token_done(void *arg) {
  OmGroupLink *link = arg;
  count_down(link->token, link->group);
  mlirAsyncRuntimeDropRef(link->token, 1);
  mlirAsyncRuntimeDropRef(link->group, 1);
  free(link);
}

/* After the model code awaited a parallel loop (in place of the abort that
 * convert-async-to-llvm emits): an error means some object could not be
 * allocated. The tasks still in flight (a failed token is ready before its
 * task ran) are finished first, so nothing touches the run's buffers after
 * the call returned; then the call fails naming the node `site`. */
void om_async_check(int64_t ok, int64_t site) {
  if (ok) return;
  while (atomic_load(&inflight) > 0) {
    OmTask *t = try_pop();
    if (t) run_task(t);
    else cpu_relax();
  }
  om_pool_failed(site);
}

/* sic: MLIR's spelling of the symbol */
int64_t mlirAsyncRuntimGetNumWorkerThreads(void) { return num_threads(); }

void mlirAsyncRuntimePrintCurrentThreadId(void) {}
