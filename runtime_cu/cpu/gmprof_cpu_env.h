// gmprof CPU backend: the GMPROF_CPU_* variables it reads, checked.
//
// Stage: runtime, CPU backend (both paths). atoll/atof read `abc` as 0 and `12x` as 12, and a
// bad value became the default or garbage silently; gmprof profile refused some of them with
// rules of its own. The same rules are here and in gmprof/runtime/cpu_env.py (keep the two in
// step: tests/program/test_cpu_env.py runs both on the same values). A whole program stops at a
// bad value before any kernel runs, as its host runtime does for its GMPROF_* variables
// (runtime_cu/host/gmprof_host_options.h, whose refuse() writes the host runtime's state, so it
// is not shared): one line `gmprof: error: NAME=VALUE: expected ...`, status 2, no report.
#ifndef GMPROF_CPU_ENV_H
#define GMPROF_CPU_ENV_H

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

namespace gmprof_cpu_env {

const unsigned long long kStackKbMin = 16, kStackKbMax = 1048576;  // 1 GiB a thread
const unsigned long long kStackKbDefault = 256;
const double kLivelockDefault = 2.0;
const char *const kStackKb = "expected a stack size in KiB, from 16 to 1048576";
const char *const kTimeout = "expected seconds >= 0 (0: no limit)";
const char *const kLivelock = "expected seconds > 0";
const char *const kSwitch = "expected 0 or 1";

// Decimal digits, a '.' and digits after them allowed (no sign, space, exponent, inf, nan or
// hex: strtod would take all of them); false for anything else or a value past a double.
static inline bool decimal(const char *text, double *out) {
  size_t digits = 0, dots = 0;
  for (const char *p = text; *p; ++p) {
    if (*p >= '0' && *p <= '9') ++digits;
    else if (*p == '.' && !dots) ++dots;
    else return false;
  }
  if (!digits) return false;
  *out = strtod(text, nullptr);
  return isfinite(*out);
}

// Each returns null for a good value (stored in *out), else what was expected. Unset: the
// default; empty is a value (refused), as for the host runtime's integers, except a switch's.

static inline const char *stack_kb(const char *text, unsigned long long *out) {
  *out = kStackKbDefault;
  if (!text) return nullptr;
  const size_t n = strlen(text);
  if (n == 0 || strspn(text, "0123456789") != n) return kStackKb;
  errno = 0;
  const unsigned long long kb = strtoull(text, nullptr, 10);
  if (errno == ERANGE || kb < kStackKbMin || kb > kStackKbMax) return kStackKb;
  *out = kb;
  return nullptr;
}

static inline const char *timeout_s(const char *text, double *out) {
  *out = 0.0;  // a whole program's launches have no limit unless asked for
  if (!text) return nullptr;
  return decimal(text, out) ? nullptr : kTimeout;
}

static inline const char *livelock_s(const char *text, double *out) {
  *out = kLivelockDefault;
  if (!text) return nullptr;
  return decimal(text, out) && *out > 0 ? nullptr : kLivelock;
}

static inline const char *graph_dump(const char *text, bool *out) {
  *out = false;
  if (!text || !*text) return nullptr;
  if (strcmp(text, "0") && strcmp(text, "1")) return kSwitch;
  *out = text[0] == '1';
  return nullptr;
}

// A whole program: the line and status 2 (_exit: neither the host runtime's report nor the
// program's exit handlers run for a usage error, from a constructor or a launch alike).
[[noreturn]] static inline void refuse(const char *name, const char *text, const char *expected) {
  fflush(nullptr);
  fprintf(stderr, "gmprof: error: %s=%s: %s\n", name, text, expected);
  fflush(stderr);
  _exit(2);
}

// A whole program's values now (checked at start-up and at each launch: a program may set them)
struct Values {
  unsigned long long stack_kb;
  double timeout_s, livelock_s;
  bool graph_dump;
};

static inline Values program_values() {
  Values v;
  const char *t, *e;
  if ((e = stack_kb(t = getenv("GMPROF_CPU_STACK_KB"), &v.stack_kb)))
    refuse("GMPROF_CPU_STACK_KB", t, e);
  if ((e = timeout_s(t = getenv("GMPROF_CPU_TIMEOUT_S"), &v.timeout_s)))
    refuse("GMPROF_CPU_TIMEOUT_S", t, e);
  if ((e = livelock_s(t = getenv("GMPROF_CPU_LIVELOCK_S"), &v.livelock_s)))
    refuse("GMPROF_CPU_LIVELOCK_S", t, e);
  if ((e = graph_dump(t = getenv("GMPROF_CPU_GRAPH_DUMP"), &v.graph_dump)))
    refuse("GMPROF_CPU_GRAPH_DUMP", t, e);
  return v;
}

}  // namespace gmprof_cpu_env

#endif  // GMPROF_CPU_ENV_H
