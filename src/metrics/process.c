#include "metrics/process.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/error.h"

typedef enum {
  PROC_CPU,
  PROC_RSS,
  PROC_VSIZE,
  PROC_START,
  PROC_OPEN_FDS,
  PROC_MAX_FDS,
} proc_field_t;

/* A scrape calls the six collectors back to back; they share one reading of /proc taken at most
 * this long ago (per thread, since every node scrapes on its own loop thread). */
#define PROCESS_STATS_REUSE_MS 100

static double g_boot_time;
static pthread_once_t g_boot_time_once = PTHREAD_ONCE_INIT;

/* Reads the boot time (Unix seconds) from the "btime" line of /proc/stat; 0 when unknown. */
static void read_boot_time(void) {
  FILE *f = fopen("/proc/stat", "r");
  if (f == NULL)
    return;
  char line[256];
  while (fgets(line, sizeof line, f) != NULL)
    if (strncmp(line, "btime ", 6) == 0)
      g_boot_time = strtod(line + 6, NULL);
  fclose(f);
}

static double boot_time(void) {
  pthread_once(&g_boot_time_once, read_boot_time);
  return g_boot_time;
}

/* Reads utime, stime, starttime, vsize and rss from /proc/self/stat. */
static int read_stat(ld_process_stats_t *out) {
  char buf[1024];
  FILE *f = fopen("/proc/self/stat", "r");
  if (f == NULL)
    return LD_ERR_IO;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *p = strrchr(buf, ')');
  unsigned long utime, stime, vsize;
  unsigned long long start;
  long rss;
  /* fields 3.. after the command name: state ppid pgrp session tty tpgid flags minflt cminflt
   * majflt cmajflt utime stime cutime cstime priority nice threads itrealvalue starttime vsize
   * rss */
  if (p == NULL || sscanf(p + 1,
                          " %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %lu %lu %*s %*s %*s %*s "
                          "%*s %*s %llu %lu %ld",
                          &utime, &stime, &start, &vsize, &rss) != 5)
    return LD_ERR_IO;
  double ticks = (double)sysconf(_SC_CLK_TCK);
  double page = (double)sysconf(_SC_PAGESIZE);
  out->cpu_seconds = (double)(utime + stime) / ticks;
  out->virtual_bytes = (double)vsize;
  out->resident_bytes = (double)rss * page;
  out->start_time_seconds = boot_time() + (double)start / ticks;
  return 0;
}

static double count_fds(void) {
  DIR *d = opendir("/proc/self/fd");
  if (d == NULL)
    return 0;
  double n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (e->d_name[0] != '.')
      n++;
  closedir(d);
  return n - 1; /* the descriptor opendir itself holds */
}

int ld_process_stats_read(ld_process_stats_t *out) {
  memset(out, 0, sizeof *out);
  int rc = read_stat(out);
  out->open_fds = count_fds();
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
    out->max_fds = rl.rlim_cur == RLIM_INFINITY ? -1 : (double)rl.rlim_cur;
  return rc;
}

/* The latest reading of this thread, reused within PROCESS_STATS_REUSE_MS. */
static int recent_stats(ld_process_stats_t *out) {
  static _Thread_local ld_process_stats_t cached;
  static _Thread_local int cached_rc;
  static _Thread_local uint64_t cached_at;
  uint64_t now = ld_now_ms();
  if (cached_at == 0 || now - cached_at > PROCESS_STATS_REUSE_MS) {
    cached_rc = ld_process_stats_read(&cached);
    cached_at = now == 0 ? 1 : now;
  }
  *out = cached;
  return cached_rc;
}

static void collect(ld_metrics_emitter_t *e, void *user_data) {
  ld_process_stats_t st;
  proc_field_t field = (proc_field_t)(uintptr_t)user_data;
  if (recent_stats(&st) != 0 && field != PROC_OPEN_FDS && field != PROC_MAX_FDS)
    return;
  double v[] = {st.cpu_seconds,        st.resident_bytes, st.virtual_bytes,
                st.start_time_seconds, st.open_fds,       st.max_fds};
  ld_metrics_emit(e, NULL, v[field]);
}

int ld_metrics_register_process(ld_metrics_t *reg) {
  static const struct {
    const char *name;
    ld_metric_type_t type;
    const char *help;
  } defs[] = {
      {"process_cpu_seconds", LD_METRIC_COUNTER,
       "Total user and system CPU time spent in seconds."},
      {"process_resident_memory_bytes", LD_METRIC_GAUGE, "Resident memory size in bytes."},
      {"process_virtual_memory_bytes", LD_METRIC_GAUGE, "Virtual memory size in bytes."},
      {"process_start_time_seconds", LD_METRIC_GAUGE,
       "Start time of the process since unix epoch in seconds."},
      {"process_open_fds", LD_METRIC_GAUGE, "Number of open file descriptors."},
      {"process_max_fds", LD_METRIC_GAUGE, "Maximum number of open file descriptors."},
  };
  for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++) {
    int rc = ld_metrics_add_collector(reg, defs[i].name, defs[i].type, defs[i].help, NULL, 0,
                                      collect, (void *)(uintptr_t)i);
    if (rc != 0)
      return rc;
  }
  return 0;
}
