/* Internals shared by archive.c (jobs, ingest, queries, lifecycle) and retention.c. Loop thread
 * only. */
#ifndef LD_WAKU_ARCHIVE_ARCHIVE_INTERNAL_H
#define LD_WAKU_ARCHIVE_ARCHIVE_INTERNAL_H

#include "base/timerheap.h"
#include "waku/archive/archive.h"
#include "waku/archive/driver.h"

typedef enum archive_state {
  LD_ARCHIVE_ST_OPENING = 0,
  LD_ARCHIVE_ST_OPEN,
  LD_ARCHIVE_ST_CLOSING,
} ld_archive_state_t;

/* A caller waiting for a retention run. */
typedef struct ld_archive_waiter {
  ld_archive_done_fn done;
  void *user_data;
} ld_archive_waiter_t;

typedef struct ld_archive_retention {
  bool running;
  size_t policy;                               /* index of the running policy */
  int step;                                    /* step within it */
  int err;                                     /* first error of this run */
  uint64_t figure;                             /* last size or count seen */
  ld_archive_waiter_t *waiters, *next_waiters; /* this run's, the following run's */
  size_t n_waiters, n_next_waiters;
} ld_archive_retention_t;

struct ld_archive {
  uv_loop_t *loop;
  ld_archive_config_t cfg;
  char *url;
  ld_archive_driver_t *drv;
  ld_archive_state_t state;
  ld_archive_open_fn open_cb;
  void (*close_cb)(void *user_data);
  void *cb_data;
  int open_err;
  char open_why[LD_ARCHIVE_WHY_LEN];

  /* jobs handed back by drivers, run on the loop */
  uv_async_t async;
  uv_mutex_t done_mu;
  ld_archive_job_t *done_head, *done_tail;

  /* deadlines */
  ld_timerheap_t deadlines;
  uv_timer_t deadline_timer;

  /* write batching: chunks (insert jobs not yet submitted), oldest first */
  ld_archive_job_t *pending_head, *pending_tail;
  uv_timer_t flush_timer;
  unsigned batches_in_flight;
  size_t backlog_rows, backlog_bytes; /* accepted, not yet completed */

  /* read-your-writes: accepted messages are numbered 1, 2, …; a read (query, count) submitted
   * while messages accepted before it are not written yet (or while the archive opens) waits in
   * `reads` until they are */
  uint64_t accepted_seq;                       /* number of the last accepted message */
  ld_archive_job_t *flight_head, *flight_tail; /* insert jobs at the driver, oldest first */
  ld_archive_job_t *reads_head, *reads_tail;   /* reads held back, oldest first */

  uv_timer_t retention_timer;
  ld_archive_retention_t retention;
  uv_timer_t maintain_timer;
  bool maintaining;

  size_t jobs_out; /* handed to the driver, not completed */
  int handles_open;
  ld_archive_stats_t stats;
};

ld_archive_job_t *ld_archive__job_new(ld_archive_t *a, ld_archive_job_kind_t kind);
void ld_archive__job_free(ld_archive_job_t *job);
/* Hands `job` to the driver entry of its kind with a deadline `timeout_ms` from now (0: none).
 * Returns 0 or an error (job not handed over). */
int ld_archive__submit(ld_archive_t *a, ld_archive_job_t *job, uint64_t timeout_ms);
/* Completes a job that never reached the driver on the next loop turn. */
void ld_archive__defer(ld_archive_t *a, ld_archive_job_t *job);

/* retention.c */
void ld_archive__retention_start_timer(ld_archive_t *a, uint64_t delay_ms);
void ld_archive__retention_free(ld_archive_t *a);

#endif
