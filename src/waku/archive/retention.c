/* Retention: runs the configured policies one after the other as a chain of driver jobs. Every
 * step starts from a job completion, so callers' callbacks never run inside an ld_archive_* call.
 */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/log.h"
#include "waku/archive/archive_internal.h"

#define LOG_TOPIC "archive"

enum {
  STEP_BEGIN = 0,
  STEP_TIME_DELETE,
  STEP_CAP_COUNT,
  STEP_CAP_KEEP,
  STEP_SIZE_MEASURE,
  STEP_SIZE_DROP,
  STEP_SIZE_REMEASURE,
  STEP_SIZE_COUNT,
  STEP_SIZE_KEEP,
};

/* sqlite and memory: the share of rows kept when the size limit is reached (nwaku: 80 %). */
#define SIZE_KEEP_PERCENT 80

static void start_policy(ld_archive_t *a);
static void begin_run(ld_archive_t *a);

static void record_error(ld_archive_t *a, int err, const char *why) {
  ld_archive_retention_t *r = &a->retention;
  if (r->err == 0)
    r->err = err;
  LD_WARN(LOG_TOPIC, "retention policy %zu failed: %s (%s)", r->policy + 1, why, ld_errname(err));
}

static void call_waiters(ld_archive_waiter_t *w, size_t n, int err) {
  for (size_t i = 0; i < n; i++)
    if (w[i].done != NULL)
      w[i].done(err, w[i].user_data);
  free(w);
}

static void finish_run(ld_archive_t *a) {
  ld_archive_retention_t *r = &a->retention;
  int err = a->state == LD_ARCHIVE_ST_OPEN ? r->err : LD_ERR_CLOSED;
  ld_archive_waiter_t *w = r->waiters;
  size_t n = r->n_waiters;
  r->waiters = r->next_waiters;
  r->n_waiters = r->n_next_waiters;
  r->next_waiters = NULL;
  r->n_next_waiters = 0;
  r->running = false;
  a->stats.retention_runs++;
  if (a->state != LD_ARCHIVE_ST_OPEN) {
    ld_archive_waiter_t *later = r->waiters;
    size_t n_later = r->n_waiters;
    r->waiters = NULL;
    r->n_waiters = 0;
    call_waiters(w, n, err);
    call_waiters(later, n_later, LD_ERR_CLOSED);
    return;
  }
  if (r->n_waiters > 0)
    begin_run(a);
  else
    ld_archive__retention_start_timer(a, err < 0 ? LD_ARCHIVE_RETENTION_RETRY_MS
                                                 : LD_ARCHIVE_RETENTION_INTERVAL_MS);
  call_waiters(w, n, err);
}

static void next_policy(ld_archive_t *a) {
  a->retention.policy++;
  start_policy(a);
}

static void on_result(ld_archive_t *a, int err, const char *why, uint64_t value);

static void step_done(ld_archive_job_t *job) {
  ld_archive_t *a = job->owner;
  char why[LD_ARCHIVE_WHY_LEN];
  memcpy(why, job->why, sizeof why);
  int err = job->err;
  uint64_t value = job->value;
  ld_archive__job_free(job);
  on_result(a, err, why, value);
}

static void step_timeout(ld_archive_job_t *job) {
  on_result(job->owner, LD_ERR_TIMEOUT, "database request timed out", 0);
}

/* Starts the next step as a job; a job the driver refuses completes with that error. */
static void issue(ld_archive_t *a, ld_archive_job_kind_t kind, int step, int64_t ts, uint64_t n) {
  a->retention.step = step;
  ld_archive_job_t *job = ld_archive__job_new(a, kind);
  if (job == NULL) {
    LD_ERROR(LOG_TOPIC, "no memory for a retention step");
    record_error(a, LD_ERR_NOMEM, "out of memory");
    finish_run(a);
    return;
  }
  job->ts = ts;
  job->n = n;
  job->on_done = step_done;
  job->on_timeout = step_timeout;
  int rc = ld_archive__submit(a, job, LD_ARCHIVE_MAINTENANCE_TIMEOUT_MS);
  if (rc != 0) {
    ld_archive_job_fail(job, rc, "the driver refused the step");
    ld_archive__defer(a, job);
  }
}

static void start_policy(ld_archive_t *a) {
  ld_archive_retention_t *r = &a->retention;
  if (a->state != LD_ARCHIVE_ST_OPEN || r->policy >= a->cfg.n_policies) {
    finish_run(a);
    return;
  }
  const ld_archive_policy_t *p = &a->cfg.policies[r->policy];
  int64_t now = ld_archive_driver_now_ns(a->drv);
  switch (p->kind) {
  case LD_ARCHIVE_POLICY_TIME:
    issue(a, LD_ARCHIVE_JOB_DELETE_OLDER, STEP_TIME_DELETE, now - (int64_t)p->value * 1000000000ll,
          0);
    break;
  case LD_ARCHIVE_POLICY_CAPACITY:
    issue(a, LD_ARCHIVE_JOB_COUNT, STEP_CAP_COUNT, 0, 0);
    break;
  case LD_ARCHIVE_POLICY_SIZE:
    issue(a, LD_ARCHIVE_JOB_SIZE, STEP_SIZE_MEASURE, 0, 0);
    break;
  default:
    record_error(a, LD_ERR_INVALID_ARG, "unknown policy kind");
    next_policy(a);
  }
}

/* capacity:n — at n·1.3 rows keep the newest n + n·0.15 (nwaku's integer arithmetic). */
static void capacity_counted(ld_archive_t *a, uint64_t n, uint64_t count) {
  if (count < n * 13 / 10) {
    next_policy(a);
    return;
  }
  issue(a, LD_ARCHIVE_JOB_KEEP_NEWEST, STEP_CAP_KEEP, 0, n + (n * 3 / 10) / 2);
}

/* size:limit — partitioned drivers drop the oldest partitions until size <= limit; the others keep
 * the newest 80 % of rows once size >= limit. */
static void size_measured(ld_archive_t *a, uint64_t limit, uint64_t size, bool again) {
  ld_archive_retention_t *r = &a->retention;
  int64_t now = ld_archive_driver_now_ns(a->drv);
  if (a->drv->ops->drop_oldest == NULL) {
    if (size >= limit)
      issue(a, LD_ARCHIVE_JOB_COUNT, STEP_SIZE_COUNT, 0, 0);
    else
      next_policy(a);
    return;
  }
  if (again && size == r->figure) {
    record_error(a, LD_ERR_DB, "dropping a partition did not reduce the database size");
    next_policy(a);
    return;
  }
  r->figure = size;
  if (size > limit)
    issue(a, LD_ARCHIVE_JOB_DROP_OLDEST, STEP_SIZE_DROP, now, 0);
  else
    next_policy(a);
}

static void on_result(ld_archive_t *a, int err, const char *why, uint64_t value) {
  ld_archive_retention_t *r = &a->retention;
  if (a->state != LD_ARCHIVE_ST_OPEN) {
    finish_run(a);
    return;
  }
  if (err == LD_ERR_NOT_FOUND && r->step == STEP_SIZE_DROP) {
    next_policy(a); /* nothing left to drop but the current partition */
    return;
  }
  if (err < 0) {
    record_error(a, err, why);
    next_policy(a);
    return;
  }
  const ld_archive_policy_t *p = &a->cfg.policies[r->policy];
  switch (r->step) {
  case STEP_CAP_COUNT:
    capacity_counted(a, p->value, value);
    break;
  case STEP_SIZE_MEASURE:
  case STEP_SIZE_REMEASURE:
    size_measured(a, p->value, value, r->step == STEP_SIZE_REMEASURE);
    break;
  case STEP_SIZE_DROP:
    a->stats.retention_deleted += value;
    issue(a, LD_ARCHIVE_JOB_SIZE, STEP_SIZE_REMEASURE, 0, 0);
    break;
  case STEP_SIZE_COUNT:
    issue(a, LD_ARCHIVE_JOB_KEEP_NEWEST, STEP_SIZE_KEEP, 0, value * SIZE_KEEP_PERCENT / 100);
    break;
  case STEP_BEGIN:
    start_policy(a);
    break;
  default: /* TIME_DELETE, CAP_KEEP, SIZE_KEEP */
    a->stats.retention_deleted += value;
    next_policy(a);
  }
}

static void begin_done(ld_archive_job_t *job) {
  ld_archive_t *a = job->owner;
  ld_archive__job_free(job);
  on_result(a, 0, "", 0);
}

/* Starts a run from the next loop turn. */
static void begin_run(ld_archive_t *a) {
  ld_archive_retention_t *r = &a->retention;
  r->running = true;
  r->policy = 0;
  r->step = STEP_BEGIN;
  r->err = 0;
  r->figure = 0;
  uv_timer_stop(&a->retention_timer);
  ld_archive_job_t *job = ld_archive__job_new(a, LD_ARCHIVE_JOB_COUNT);
  if (job == NULL) {
    record_error(a, LD_ERR_NOMEM, "out of memory");
    ld_archive__retention_start_timer(a, LD_ARCHIVE_RETENTION_RETRY_MS);
    r->running = false;
    return;
  }
  job->on_done = begin_done;
  ld_archive__defer(a, job);
}

static void on_retention_timer(uv_timer_t *t) {
  ld_archive_t *a = t->data;
  if (!a->retention.running && a->state == LD_ARCHIVE_ST_OPEN)
    begin_run(a);
}

void ld_archive__retention_start_timer(ld_archive_t *a, uint64_t delay_ms) {
  if (a->cfg.n_policies == 0 || a->state != LD_ARCHIVE_ST_OPEN)
    return;
  uv_timer_start(&a->retention_timer, on_retention_timer, delay_ms, 0);
}

static int add_waiter(ld_archive_waiter_t **arr, size_t *n, ld_archive_done_fn done,
                      void *user_data) {
  ld_archive_waiter_t *w = realloc(*arr, (*n + 1) * sizeof *w);
  if (w == NULL)
    return LD_ERR_NOMEM;
  w[*n].done = done;
  w[*n].user_data = user_data;
  *arr = w;
  (*n)++;
  return 0;
}

int ld_archive_apply_retention(ld_archive_t *a, ld_archive_done_fn done, void *user_data) {
  if (a == NULL)
    return LD_ERR_INVALID_ARG;
  if (a->state != LD_ARCHIVE_ST_OPEN)
    return LD_ERR_CLOSED;
  ld_archive_retention_t *r = &a->retention;
  if (r->running)
    return add_waiter(&r->next_waiters, &r->n_next_waiters, done, user_data);
  if (add_waiter(&r->waiters, &r->n_waiters, done, user_data) != 0)
    return LD_ERR_NOMEM;
  begin_run(a);
  if (!r->running) {
    r->n_waiters--;
    return LD_ERR_NOMEM;
  }
  return 0;
}

void ld_archive__retention_free(ld_archive_t *a) {
  free(a->retention.waiters);
  free(a->retention.next_waiters);
  a->retention.waiters = a->retention.next_waiters = NULL;
}
