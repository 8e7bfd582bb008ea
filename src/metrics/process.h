/* Process metrics as nwaku (nim-metrics) exposes them, read from /proc at scrape time:
 * process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
 * process_start_time_seconds, process_open_fds and process_max_fds. */
#ifndef LD_METRICS_PROCESS_H
#define LD_METRICS_PROCESS_H

#include "metrics/metrics.h"

/* Registers the process collectors in `reg`. Returns 0, LD_ERR_EXISTS (already registered) or
 * LD_ERR_NOMEM. Where /proc cannot be read the samples are simply left out. */
int ld_metrics_register_process(ld_metrics_t *reg);

/* The figures behind those metrics (exposed for tests). Returns 0 or LD_ERR_IO. */
typedef struct ld_process_stats {
  double cpu_seconds;
  double resident_bytes;
  double virtual_bytes;
  double start_time_seconds; /* Unix time */
  double open_fds;
  double max_fds;
} ld_process_stats_t;

int ld_process_stats_read(ld_process_stats_t *out);

#endif
