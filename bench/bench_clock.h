/* Clocks, memory and percentiles as the benchmarks read them: milliseconds or microseconds of a
 * POSIX clock (CPU time of the process or thread, or CLOCK_MONOTONIC for wall time), the resident
 * set of this or another process, and percentiles of sorted samples. */
#ifndef LD_BENCH_CLOCK_H
#define LD_BENCH_CLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <time.h>

/* Milliseconds on `clock` (CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID, CLOCK_MONOTONIC). */
static inline double bench_clock_ms(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Microseconds on `clock`, as bench_clock_ms. */
static inline uint64_t bench_clock_us(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* VmRSS in KiB from the /proc status file at `path`, or -1 when it cannot tell. */
static inline long bench_rss_kib_at(const char *path) {
  FILE *f = fopen(path, "r");
  char line[256];
  long kib = -1;
  while (f != NULL && fgets(line, sizeof line, f) != NULL)
    if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
      break;
  if (f != NULL)
    fclose(f);
  return kib;
}

/* VmRSS of this process in KiB, or -1 when /proc cannot tell. */
static inline long bench_rss_kib(void) {
  return bench_rss_kib_at("/proc/self/status");
}

/* VmRSS of process `pid` in KiB, or -1 when /proc cannot tell. */
static inline long bench_rss_kib_of(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  return bench_rss_kib_at(path);
}

/* qsort's comparison of two uint64_t, ascending. */
static inline int bench_cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Sorts n samples in ascending order (for bench_pct_u64). */
static inline void bench_sort_u64(uint64_t *v, size_t n) {
  qsort(v, n, sizeof *v, bench_cmp_u64);
}

/* The pct-th percentile of n > 0 sorted samples: the one at index n * pct / 100 (pct < 100; the
 * maximum is v[n - 1]). */
static inline uint64_t bench_pct_u64(const uint64_t *v, size_t n, unsigned pct) {
  return v[n * pct / 100];
}

#endif
