/*
 * om_cpu.c - the CPU a model library was compiled for, checked before its
 * code runs (onnx_mlir_py/isa.py makes the list). A library built
 * for x86-64-v4 on a CPU without AVX-512 then fails with an error naming the
 * missing features, from Python at load time (omCheckTarget) and from C on
 * each entry call (om_check_target_cpu), instead of dying of SIGILL.
 * This file is compiled for the baseline x86-64 ISA, like the rest of the
 * runtime, so the check itself runs anywhere.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "om_entry.h"

/* Features to treat as absent: for tests only (a host lacking them). */
#define OM_HIDE_ENV "ONNX_MLIR_PY_TEST_HIDE_CPU_FEATURES"

static int om_hidden(const char *f) {
  const char *h = getenv(OM_HIDE_ENV);
  size_t n = strlen(f);
  while (h && *h) {
    const char *e = strchr(h, ',');
    size_t len = e ? (size_t)(e - h) : strlen(h);
    if (len == n && strncmp(h, f, n) == 0) return 1;
    h = e ? e + 1 : 0;
  }
  return 0;
}

/* AMX tile data is off in every Linux process until it asks for it
 * (arch_prctl ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA): before that the first
 * tile instruction dies of SIGILL. A library whose kernels use AMX records
 * "amx-tile"; checking that feature asks once per process, before any model
 * code runs. The permission covers every thread of the process. -1 not
 * asked yet, 0 refused (or not Linux), 1 granted. */
static int om_amx_state = -1;

static int om_amx_permitted(void) {
  int s = __atomic_load_n(&om_amx_state, __ATOMIC_ACQUIRE);
  if (s < 0) {
#if defined(__linux__) && defined(__x86_64__)
    s = syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) == 0;
#else
    s = 0;
#endif
    __atomic_store_n(&om_amx_state, s, __ATOMIC_RELEASE);
  }
  return s;
}

/* 1 when the CPU (and the OS's saved vector state) has feature `f`, in the
 * names of GCC's __builtin_cpu_supports; unknown names count as absent. */
static int om_cpu_has(const char *f) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (strcmp(f, "amx-tile") == 0)     /* OM_F("amx-tile"): and the OS's permission */
    return __builtin_cpu_supports("amx-tile") && om_amx_permitted();
#define OM_F(name) if (strcmp(f, name) == 0) return __builtin_cpu_supports(name) != 0;
  OM_F("popcnt") OM_F("sse3") OM_F("ssse3") OM_F("sse4.1") OM_F("sse4.2")
  OM_F("avx") OM_F("avx2") OM_F("bmi") OM_F("bmi2") OM_F("f16c") OM_F("fma")
  OM_F("lzcnt") OM_F("movbe") OM_F("xsave")
  OM_F("avx512f") OM_F("avx512bw") OM_F("avx512cd") OM_F("avx512dq") OM_F("avx512vl")
  OM_F("avx512vnni") OM_F("avx512bf16") OM_F("avx512fp16") OM_F("avx512vbmi")
  OM_F("avx512vbmi2") OM_F("avx512bitalg") OM_F("avx512vpopcntdq") OM_F("avx512ifma")
  OM_F("avxvnni") OM_F("gfni") OM_F("vaes") OM_F("vpclmulqdq")
  OM_F("amx-int8") OM_F("amx-bf16")
#undef OM_F
#endif
  (void)f;
  return 0;
}

static char om_cpu_message[768];
static int om_cpu_state = -1; /* -1 not checked yet, 0 fine, 1 features missing */

const char *omTargetInfo(void) { return om_target_info; }

const char *omCheckTarget(void) {
  int state = __atomic_load_n(&om_cpu_state, __ATOMIC_ACQUIRE);
  if (state < 0) {
    char missing[512] = "";
    size_t used = 0;
    for (const char *const *f = om_target_features; *f; ++f) {
      if (om_cpu_has(*f) && !om_hidden(*f)) continue;
      int n = snprintf(missing + used, sizeof missing - used, "%s%s", used ? ", " : "", *f);
      if (n < 0 || (size_t)n >= sizeof missing - used) break;
      used += (size_t)n;
    }
    if (used) {
      snprintf(om_cpu_message, sizeof om_cpu_message,
               "this model library was compiled for %s and needs CPU features this machine "
               "lacks: %s (compile with --march x86-64-v3 for a library that runs on any "
               "AVX2 machine)%s", om_target_cpu, missing,
               strstr(missing, "amx-tile") && om_cpu_has("amx-int8") && !om_hidden("amx-tile")
                   ? "; this CPU has AMX, but the OS refused this process AMX tile data "
                     "(arch_prctl ARCH_REQ_XCOMP_PERM)" : "");
    }
    state = used ? 1 : 0;
    __atomic_store_n(&om_cpu_state, state, __ATOMIC_RELEASE);
  }
  return state ? om_cpu_message : 0;
}

int om_check_target_cpu(const char *entry) {
  const char *msg = omCheckTarget();
  if (!msg) return 1;
  om_set_error(ENOTSUP, "%s: %s", entry, msg);
  return 0;
}

#define OM_FORCE_ENV "ONNX_MLIR_PY_FORCE_ISA"

static int om_cpu_has_all(const char *const *features, const char **missing) {
  for (const char *const *f = features; *f; ++f) {
    if (!om_cpu_has(*f) || om_hidden(*f)) {
      if (missing) *missing = *f;
      return 0;
    }
  }
  return 1;
}

static int om_variant_choice = -1;   /* cached index, -1 not chosen yet */

int om_pick_variant(const om_variant *variants, int n, const char *entry) {
  int chosen = __atomic_load_n(&om_variant_choice, __ATOMIC_ACQUIRE);
  if (chosen >= 0) return chosen;
  const char *force = getenv(OM_FORCE_ENV);
  if (force && *force) {
    for (int i = 0; i < n; ++i) {
      if (strcmp(force, variants[i].name) != 0) continue;
      const char *missing = "";
      if (!om_cpu_has_all(variants[i].features, &missing)) {
        om_set_error(ENOTSUP, "%s: %s=%s: this CPU lacks %s", entry, OM_FORCE_ENV, force,
                     missing);
        return -1;
      }
      chosen = i;
      break;
    }
    if (chosen < 0) {
      char names[256] = "";
      size_t used = 0;
      for (int i = 0; i < n; ++i) {
        int k = snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                         variants[i].name);
        if (k < 0 || (size_t)k >= sizeof names - used) break;
        used += (size_t)k;
      }
      om_set_error(EINVAL, "%s: %s=%s names no variant of this library (it has %s)", entry,
                   OM_FORCE_ENV, force, names);
      return -1;
    }
  } else {
    chosen = 0;       /* the lowest: om_check_target_cpu has checked its features */
    for (int i = n - 1; i > 0; --i) {
      if (om_cpu_has_all(variants[i].features, 0)) { chosen = i; break; }
    }
  }
  __atomic_store_n(&om_variant_choice, chosen, __ATOMIC_RELEASE);
  return chosen;
}
