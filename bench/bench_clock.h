/* Clocks and memory as the benchmarks read them: milliseconds of a POSIX clock (CPU time of the
 * process or thread, or CLOCK_MONOTONIC for wall time) and the resident set of this or another
 * process. */
#ifndef LD_BENCH_CLOCK_H
#define LD_BENCH_CLOCK_H

#include <stdio.h>
#include <sys/types.h>
#include <time.h>

/* Milliseconds on `clock` (CLOCK_PROCESS_CPUTIME_ID, CLOCK_THREAD_CPUTIME_ID, CLOCK_MONOTONIC). */
static inline double bench_clock_ms(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
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

#endif
