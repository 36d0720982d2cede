/* The thread pool of multi-threaded -O3 model code: one direct call per
 * parallel loop (codegen/parallel_for.py outlines each loop into
 * fn(ctx, lo, hi)). Linked into a model library only when its code has
 * parallel loops (codegen/link.py).
 *
 *   om_parallel_for(n, fn, ctx)   run fn(ctx, lo, hi) over [0, n)
 *   omSetNumThreads(n)   n >= 1 threads; n <= 0: all online CPUs
 *   omGetNumThreads()
 *   omGetPoolTaskCount()  chunks of loops that were split so far (diagnostics)
 *   omPoolShutdown()     stop and join the workers (before dlclose: the
 *                        runtime unloads a replaced library, runtime/library.py)
 *   env ONNX_MLIR_PY_NUM_THREADS sets the initial count (default 1)
 *   env ONNX_MLIR_PY_SPIN_US: how long idle workers spin after a run (default 200)
 *   omSetSpinMicros(us)  the same at run time (0: sleep as soon as a run ends;
 *                        < 0: back to the env / default); for the next idle time
 *
 * n threads = the calling thread + (n - 1) persistent workers. A loop's
 * iterations are cut into n contiguous shares as even as whole iterations
 * allow (the caller owns the first, worker i the (i + 2)-th), each share into
 * up to 4 chunks of fixed bounds (static chunking; equal chunks over the
 * whole loop gave 35 iterations shares of 19 and 16 at 2 threads, 21 ones of
 * 12 and 9, when stealing could not even them out). A thread runs its own chunks first, then
 * takes the ones left in the other shares, each claim one compare-and-swap,
 * so a worker that starts late (its core busy with another process) still
 * finds its work done by others, and one descheduled in the middle of a
 * chunk holds up an eighth of the loop rather than half of it. Owning a
 * share keeps a thread on the same part of the data from run to run (the
 * column panels of a layer's weights stay in its core's L2; claiming chunks
 * in order instead handed them to whichever thread came first).
 * The caller waits for the chunks in flight by spinning. Workers wait for
 * the next loop spinning while a model run is in progress (the entry
 * wrapper calls omPoolRunBegin/End; yielding the core every ~50 us), for
 * ONNX_MLIR_PY_SPIN_US after it, then sleep on a futex.
 *
 * No allocation per loop, so a loop cannot fail for want of memory. A loop
 * runs inline (on the caller, no split) with one thread, one iteration,
 * inside another loop's chunk, or while another run (another Python thread)
 * holds the pool.
 *
 * Errors: a run-time check or allocation that fails inside a chunk
 * (om_check_failed / _mlir_memref_to_llvm_alloc longjmp to the thread's
 * om_check_target) lands in the chunk's own setjmp; the first error is kept,
 * the chunks not started yet are skipped, and once every chunk in flight is
 * done the caller raises it on its own thread (the entry point returns NULL
 * with the error's kind). Nothing runs on the run's buffers after that.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define OM_HIDDEN __attribute__((visibility("hidden")))
#define OM_MAX_THREADS 256
/* chunks per thread: a worker that starts late (its core busy) still finds
 * work instead of the caller running the whole loop */
#define OM_CHUNKS_PER_THREAD 4

typedef void (*OmBody)(void *ctx, int64_t lo, int64_t hi);

extern __thread jmp_buf *om_check_target;
OM_HIDDEN void om_error_get(char *buf, size_t cap, int64_t *kind, int *err);
OM_HIDDEN void om_error_raise(const char *msg, int64_t kind, int err);
OM_HIDDEN void om_alloc_site(int64_t id);
OM_HIDDEN int64_t om_alloc_site_get(void);

/* The current loop. share[t] = seq << 32 | end << 16 | next: the chunks
 * [next, end) of thread t's share not claimed yet. A chunk is claimed by a
 * CAS that also checks the loop's sequence number, so a worker that wakes
 * late can never take a chunk of the next loop by mistake. */
typedef struct { _Alignas(64) _Atomic uint64_t v; } OmShare;

static struct {
  OmShare share[OM_MAX_THREADS];
  int nshares;                    /* threads of the current loop */
  _Alignas(64) atomic_int done;   /* chunks finished */
  atomic_int failed;              /* some chunk failed */
  OmBody fn;
  void *ctx;
  int64_t n;
  uint32_t nchunks;               /* nshares * per */
  uint32_t per;                   /* chunks per share */
  int64_t site;                   /* the caller's allocation site (node) */
  char msg[1024];                 /* the first failure (set by its thread) */
  int64_t kind;
  int err;
} job;

static _Alignas(64) _Atomic uint32_t seq;       /* futex word: one step per loop */
static _Alignas(64) _Atomic uint32_t config;    /* futex word: thread count / runs */
static atomic_int sleepers = 0;                 /* workers in futex_wait */
static pthread_mutex_t job_mu = PTHREAD_MUTEX_INITIALIZER;  /* one loop at a time */
static pthread_mutex_t start_mu = PTHREAD_MUTEX_INITIALIZER;
static int started;                             /* workers created */
static pthread_t workers[OM_MAX_THREADS];       /* joinable: omPoolShutdown joins them */
static atomic_int stopping = 0;                 /* omPoolShutdown: workers return */
static atomic_int active = 0;                   /* thread count (0: not read yet) */
static atomic_llong pool_tasks = 0;
static atomic_int runs_active = 0;
static atomic_long spin_ns = -1;
static atomic_int caller_cpu = -1;              /* CPU of the thread running the model */
static __thread int in_loop;                    /* inside a chunk / a worker */

static int online_cpus(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

static int clamp_threads(long n) {
  if (n <= 0) n = online_cpus();
  return n > OM_MAX_THREADS ? OM_MAX_THREADS : (int)n;
}

static int num_threads(void) {
  int n = atomic_load_explicit(&active, memory_order_relaxed);
  if (n == 0) {
    const char *env = getenv("ONNX_MLIR_PY_NUM_THREADS");
    n = env && *env ? clamp_threads(strtol(env, NULL, 10)) : 1;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&active, &expected, n)) n = expected;
  }
  return n;
}

static void futex_wait(_Atomic uint32_t *w, uint32_t v) {
  syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

static void futex_wake_all(_Atomic uint32_t *w) {
  syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void poke_config(void) {
  atomic_fetch_add(&config, 1);
  if (atomic_load(&sleepers) > 0) futex_wake_all(&config);
}

void omSetNumThreads(int n) {
  atomic_store(&active, clamp_threads(n));
  poke_config();
}

int omGetNumThreads(void) { return num_threads(); }

/* Chunks of split loops since the library was loaded (run by a worker or by
 * the caller): a loop that ran inline leaves it unchanged. */
int64_t omGetPoolTaskCount(void) { return atomic_load(&pool_tasks); }

static long spin_limit_ns(void) {
  long ns = atomic_load_explicit(&spin_ns, memory_order_relaxed);
  if (ns < 0) {
    const char *env = getenv("ONNX_MLIR_PY_SPIN_US");
    long us = env && *env ? strtol(env, NULL, 10) : 200;
    ns = us > 0 ? us * 1000 : 0;
    atomic_store_explicit(&spin_ns, ns, memory_order_relaxed);
  }
  return ns;
}

void omSetSpinMicros(int64_t us) {
  atomic_store_explicit(&spin_ns, us < 0 ? -1 : (long)us * 1000, memory_order_relaxed);
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

/* ---- placement ----------------------------------------------------------------
 * A worker woken on the CPU of the thread running the model (or joined there
 * by it: after the caller sleeps, the kernel may wake it on the worker's
 * CPU) shares that CPU with it while the others idle. The kernel's balancer
 * leaves both where they are for a long time: both ran in the last half
 * millisecond, so both count as cache-hot (measured on a 2-vCPU VM: after a
 * 100 ms pause both threads sat on one CPU for 600 runs, the model at its
 * 1-thread speed; without pauses, or with workers spinning through them,
 * 2 threads ran 1.7x faster). A worker that finds itself on the caller's
 * CPU moves off it: it narrows its affinity to the other CPUs it may use
 * (which migrates it at once) and restores its affinity (which does not
 * move it back). Checked when a worker wakes and while it spins. */
static void note_caller_cpu(void) {
  int cpu = sched_getcpu();
  if (cpu != atomic_load_explicit(&caller_cpu, memory_order_relaxed))
    atomic_store_explicit(&caller_cpu, cpu, memory_order_relaxed);
}

static void leave_caller_cpu(void) {
  int cpu = atomic_load_explicit(&caller_cpu, memory_order_relaxed);
  if (cpu < 0 || sched_getcpu() != cpu || cpu >= CPU_SETSIZE) return;
  cpu_set_t all, other;
  if (sched_getaffinity(0, sizeof all, &all) != 0) return;
  other = all;
  CPU_CLR(cpu, &other);
  if (CPU_COUNT(&other) == 0) return;
  if (sched_setaffinity(0, sizeof other, &other) == 0) sched_setaffinity(0, sizeof all, &all);
}

/* ---- chunks --------------------------------------------------------------- */

/* Chunk c's iterations: chunk c % per of share c / per, shares and chunks
 * as even as whole iterations allow (a share of fewer iterations than
 * chunks has empty chunks). */
static void even_part(int64_t n, int64_t parts, int64_t i, int64_t *lo, int64_t *len) {
  int64_t q = n / parts, r = n % parts;
  *lo = i * q + (i < r ? i : r);
  *len = q + (i < r ? 1 : 0);
}

static void chunk_bounds(uint32_t c, int64_t *lo, int64_t *hi) {
  int64_t s0, slen, c0, clen;
  even_part(job.n, job.nshares, c / job.per, &s0, &slen);
  even_part(slen, job.per, c % job.per, &c0, &clen);
  *lo = s0 + c0;
  *hi = *lo + clen;
}

static void run_chunk(uint32_t c) {
  int64_t lo, hi;
  chunk_bounds(c, &lo, &hi);
  jmp_buf jb;
  jmp_buf *saved = om_check_target;
  int outer = in_loop;
  in_loop = 1;
  om_check_target = &jb;
  om_alloc_site(job.site);
  if (setjmp(jb) == 0) {
    if (lo < hi && !atomic_load_explicit(&job.failed, memory_order_relaxed)) job.fn(job.ctx, lo, hi);
  } else {
    int expected = 0;
    if (atomic_compare_exchange_strong(&job.failed, &expected, 1))
      om_error_get(job.msg, sizeof job.msg, &job.kind, &job.err);
  }
  om_check_target = saved;
  in_loop = outer;
  atomic_fetch_add_explicit(&job.done, 1, memory_order_release);
}

/* Claim and run the chunks left in share t of loop `s`; false when the
 * share belongs to another loop. */
static bool run_share(uint32_t s, int t) {
  _Atomic uint64_t *w = &job.share[t].v;
  uint64_t cur = atomic_load_explicit(w, memory_order_acquire);
  for (;;) {
    uint32_t next = (uint32_t)(cur & 0xffff), end = (uint32_t)((cur >> 16) & 0xffff);
    if ((uint32_t)(cur >> 32) != s) return false;
    if (next >= end) return true;
    if (atomic_compare_exchange_weak_explicit(w, &cur, cur + 1, memory_order_acq_rel,
                                              memory_order_acquire))
      run_chunk(next);
  }
}

/* Thread `self`'s chunks of loop `s`, then those left in the other shares. */
static void run_chunks(uint32_t s, int self) {
  int n = job.nshares;
  if (self >= n || !run_share(s, self)) return;
  for (int k = 1; k < n; k++)
    if (!run_share(s, (self + k) % n)) return;
}

/* ---- workers --------------------------------------------------------------- */

/* Spin until the loop counter moves from `seen` (true), while a run is in
 * progress and for the spin time after it, or until this worker is retired. */
static bool spin_for_loop(uint32_t seen, long index) {
  long limit = spin_limit_ns();
  long start = now_ns(), yielded = start;
  for (;;) {
    for (int i = 0; i < 64; i++) {
      if (atomic_load_explicit(&seq, memory_order_acquire) != seen) return true;
      cpu_relax();
    }
    if (index + 1 >= atomic_load_explicit(&active, memory_order_relaxed) ||
        atomic_load_explicit(&stopping, memory_order_relaxed))
      return false;
    long t = now_ns();
    if (atomic_load_explicit(&runs_active, memory_order_relaxed) > 0) {
      start = t;
      if (t - yielded > 50000) {
        leave_caller_cpu();
        sched_yield();
        yielded = t;
      }
    } else if (t - start >= limit) {
      return false;
    }
  }
}

static void *worker_main(void *arg) {
  long index = (long)arg; /* worker i serves thread counts > i + 1 */
  in_loop = 1;            /* a loop started inside a chunk runs inline */
  uint32_t seen = atomic_load(&seq);
  for (;;) {
    if (atomic_load(&stopping)) return NULL;
    uint32_t s = atomic_load_explicit(&seq, memory_order_acquire);
    if (s != seen) {
      seen = s;
      if (index + 1 < atomic_load_explicit(&active, memory_order_relaxed))
        run_chunks(s, (int)index + 1);
      continue;
    }
    if (index + 1 < atomic_load(&active) && spin_for_loop(seen, index)) continue;
    /* sleep until a loop (that serves this worker) or a change of setting */
    uint32_t c = atomic_load(&config);
    atomic_fetch_add(&sleepers, 1);
    if (atomic_load(&stopping)) {
      atomic_fetch_sub(&sleepers, 1);
      return NULL;
    }
    if (index + 1 < atomic_load(&active)) {
      if (atomic_load(&seq) == seen) futex_wait(&seq, seen);
    } else {
      futex_wait(&config, c);
    }
    atomic_fetch_sub(&sleepers, 1);
    leave_caller_cpu();
  }
  return NULL;
}

static void start_workers(int n) {
  if (__atomic_load_n(&started, __ATOMIC_ACQUIRE) >= n - 1) return;
  pthread_mutex_lock(&start_mu);
  while (started < n - 1) {
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 8 << 20);
    int rc = pthread_create(&th, &attr, worker_main, (void *)(long)started);
    pthread_attr_destroy(&attr);
    if (rc != 0) break; /* fewer workers: the caller claims their chunks */
    workers[started] = th;
    __atomic_store_n(&started, started + 1, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&start_mu);
}

/* Stop the workers and wait until each has returned (no thread may run the
 * library's code after dlclose). Called when no run is in progress; a later
 * run starts workers again. Both futex words move after `stopping` is set,
 * so a worker about to sleep sees a changed value instead of sleeping on. */
void omPoolShutdown(void) {
  pthread_mutex_lock(&start_mu);
  atomic_store(&stopping, 1);
  atomic_fetch_add(&config, 1);
  atomic_fetch_add(&seq, 1);
  futex_wake_all(&config);
  futex_wake_all(&seq);
  for (int i = 0; i < started; i++) pthread_join(workers[i], NULL);
  __atomic_store_n(&started, 0, __ATOMIC_RELEASE);
  atomic_store(&stopping, 0);
  pthread_mutex_unlock(&start_mu);
}

/* A model run starts / ends (called by the entry wrapper, om_runtime.c):
 * workers spin through a run; its start wakes sleeping ones, so their
 * wake-up overlaps the model's first serial code. */
void omPoolRunBegin(void) {
  atomic_fetch_add(&runs_active, 1);
  int n = num_threads();
  if (n <= 1) return;
  note_caller_cpu();
  start_workers(n);
  if (atomic_load(&sleepers) > 0) {
    atomic_fetch_add(&seq, 0);
    futex_wake_all(&seq);
  }
}

void omPoolRunEnd(void) { atomic_fetch_sub(&runs_active, 1); }

/* ---- the parallel loop -------------------------------------------------------- */

OM_HIDDEN void om_parallel_for(int64_t n, OmBody fn, void *ctx) {
  if (n <= 0) return;
  int threads = num_threads();
  if (threads <= 1 || n == 1 || in_loop || pthread_mutex_trylock(&job_mu) != 0) {
    fn(ctx, 0, n);
    return;
  }
  start_workers(threads);
  note_caller_cpu();
  int64_t share = (n + threads - 1) / threads;
  uint32_t per = (uint32_t)(share < OM_CHUNKS_PER_THREAD ? share : OM_CHUNKS_PER_THREAD);
  uint32_t nchunks = (uint32_t)threads * per;
  job.fn = fn;
  job.ctx = ctx;
  job.n = n;
  job.site = om_alloc_site_get();
  atomic_store_explicit(&job.done, 0, memory_order_relaxed);
  atomic_store_explicit(&job.failed, 0, memory_order_relaxed);
  uint32_t s = atomic_load_explicit(&seq, memory_order_relaxed) + 1;
  job.nchunks = nchunks;
  job.per = per;
  job.nshares = threads;
  for (int t = 0; t < threads; t++) {
    uint64_t lo = (uint64_t)per * t, hi = (uint64_t)per * (t + 1);
    atomic_store_explicit(&job.share[t].v, (uint64_t)s << 32 | hi << 16 | lo,
                          memory_order_release);
  }
  atomic_store_explicit(&seq, s, memory_order_seq_cst);
  if (atomic_load(&sleepers) > 0) futex_wake_all(&seq);
  atomic_fetch_add_explicit(&pool_tasks, nchunks, memory_order_relaxed);
  run_chunks(s, 0);
  long spins = 0;
  while (atomic_load_explicit(&job.done, memory_order_acquire) < (int)nchunks) {
    cpu_relax();
    if (++spins % 4096 == 0) sched_yield();   /* a descheduled worker holds a chunk */
  }
  bool failed = atomic_load(&job.failed);
  char msg[sizeof job.msg];
  int64_t kind = job.kind;
  int err = job.err;
  if (failed) __builtin_memcpy(msg, job.msg, sizeof msg);
  pthread_mutex_unlock(&job_mu);
  if (failed) om_error_raise(msg, kind, err);
}
