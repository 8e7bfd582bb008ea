/* postgres://: the production driver. Jobs wait on the loop for a slot (at most
 * max_db_connections at once) and run on the libuv thread pool, each on a pooled connection
 * (opened on first use, dropped when it fails, so the next job reconnects). Every statement is
 * parameterised (PQsendQueryParams) and bounded by the job's deadline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "waku/archive/driver.h"
#include "waku/archive/postgres/pg_rows.h"
#include "waku/archive/postgres/pg_schema.h"
#include "waku/archive/postgres/pgconn.h"

#define LOG_TOPIC "archive"
/* Partitions are checked (and the next hour's created) this often. */
#define PG_PARTITION_CHECK_MS (10u * 60 * 1000)

typedef struct pg_driver {
  ld_archive_driver_t base;
  char *conninfo;
  uv_mutex_t mu; /* guards idle and parts */
  PGconn **idle;
  size_t n_idle;
  ld_pg_partitions_t parts;
  /* loop thread */
  ld_archive_job_t *wait_head, *wait_tail;
  unsigned running;
  bool closing, close_started;
  ld_archive_job_t *close_job;
} pg_driver_t;

typedef struct pg_work {
  uv_work_t req;
  pg_driver_t *d;
  ld_archive_job_t *job;
} pg_work_t;

/* ---- connections --------------------------------------------------------------------------- */

static PGconn *pool_take(pg_driver_t *d) {
  uv_mutex_lock(&d->mu);
  PGconn *c = d->n_idle > 0 ? d->idle[--d->n_idle] : NULL;
  uv_mutex_unlock(&d->mu);
  return c;
}

/* Keeps a healthy connection outside any transaction for the next job; drops the others. */
static void pool_give(pg_driver_t *d, PGconn *c) {
  if (PQstatus(c) != CONNECTION_OK || PQtransactionStatus(c) != PQTRANS_IDLE) {
    PQfinish(c);
    return;
  }
  uv_mutex_lock(&d->mu);
  if (d->n_idle < d->base.max_db_connections) {
    d->idle[d->n_idle++] = c;
    c = NULL;
  }
  uv_mutex_unlock(&d->mu);
  PQfinish(c);
}

static uint64_t connect_deadline(const pg_driver_t *d, const ld_archive_job_t *job) {
  uint64_t dl = ld_now_ms() + d->base.request_timeout_ms;
  return job->deadline_ms != 0 && job->deadline_ms < dl ? job->deadline_ms : dl;
}

static uint64_t job_deadline(const ld_archive_job_t *job) {
  return job->deadline_ms != 0 ? job->deadline_ms : ld_now_ms() + LD_ARCHIVE_MAINTENANCE_TIMEOUT_MS;
}

/* ---- partitions cache ------------------------------------------------------------------------ */

static int parts_snapshot(pg_driver_t *d, ld_pg_partitions_t *out) {
  uv_mutex_lock(&d->mu);
  int rc = ld_pg_partitions_copy(out, &d->parts);
  uv_mutex_unlock(&d->mu);
  return rc;
}

static int parts_reload(pg_driver_t *d, PGconn *c, uint64_t dl, ld_pg_partitions_t *out,
                        ld_pg_status_t *st) {
  int rc = ld_pg_partitions_load(c, dl, out, st);
  if (rc != 0)
    return rc;
  uv_mutex_lock(&d->mu);
  rc = ld_pg_partitions_copy(&d->parts, out);
  uv_mutex_unlock(&d->mu);
  return rc;
}

static size_t parts_count(pg_driver_t *d) {
  uv_mutex_lock(&d->mu);
  size_t n = d->parts.n;
  uv_mutex_unlock(&d->mu);
  return n;
}

/* Makes sure partitions hold every timestamp in ts[0..n). */
static int parts_ensure(pg_driver_t *d, PGconn *c, const int64_t *ts, size_t n, uint64_t dl,
                        ld_pg_status_t *st) {
  ld_pg_partitions_t known = {0};
  int rc = parts_snapshot(d, &known);
  for (size_t i = 0; i < n && rc == 0; i++) {
    if (ld_pg_partitions_find(&known, ts[i]) >= 0)
      continue;
    rc = ld_pg_partition_ensure(c, &known, ts[i], dl, st);
    if (rc == 0)
      rc = parts_reload(d, c, dl, &known, st);
  }
  ld_pg_partitions_clear(&known);
  return rc;
}

/* The partition holding now and the one after it (the factory's work). */
static int parts_ahead(pg_driver_t *d, PGconn *c, uint64_t dl, ld_pg_status_t *st) {
  int64_t now = ld_archive_driver_now_ns(&d->base);
  ld_pg_partitions_t known = {0};
  int rc = parts_reload(d, c, dl, &known, st);
  if (rc == 0)
    rc = parts_ensure(d, c, &now, 1, dl, st);
  if (rc == 0)
    rc = parts_snapshot(d, &known);
  long i = rc == 0 ? ld_pg_partitions_find(&known, now) : -1;
  if (i >= 0) {
    int64_t next = known.p[i].hi;
    rc = parts_ensure(d, c, &next, 1, dl, st);
  }
  ld_pg_partitions_clear(&known);
  return rc;
}

/* ---- jobs (worker threads) ------------------------------------------------------------------- */

static int run_open(pg_driver_t *d, PGconn *c, ld_archive_job_t *job, ld_pg_status_t *st) {
  uint64_t dl = job_deadline(job);
  int rc = ld_pg_migrate(c, dl, st);
  if (rc == 0)
    rc = ld_pg_drop_strays(c, dl, st);
  if (rc == 0)
    rc = ld_pg_key_ts_trim(c, dl, st);
  if (rc == 0)
    rc = parts_ahead(d, c, dl, st);
  return rc;
}

static int run_maintain(pg_driver_t *d, PGconn *c, ld_archive_job_t *job, ld_pg_status_t *st) {
  uint64_t dl = job_deadline(job);
  int rc = ld_pg_drop_strays(c, dl, st);
  if (rc == 0)
    rc = ld_pg_key_ts_trim(c, dl, st);
  return rc == 0 ? parts_ahead(d, c, dl, st) : rc;
}

static int run_insert(pg_driver_t *d, PGconn *c, ld_archive_job_t *job, ld_pg_status_t *st) {
  uint64_t dl = job_deadline(job);
  int64_t *ts = malloc((job->batch.n + 1) * sizeof *ts);
  if (ts == NULL)
    return LD_ERR_NOMEM;
  for (size_t i = 0; i < job->batch.n; i++)
    ts[i] = job->batch.rows[i].msg.timestamp;
  int rc = 0;
  for (int attempt = 0; attempt < 2; attempt++) {
    rc = parts_ensure(d, c, ts, job->batch.n, dl, st);
    if (rc == 0)
      rc = ld_pg_insert_batch(c, &job->batch, dl, st);
    if (rc != LD_ERR_DB || strcmp(st->sqlstate, LD_PG_SQLSTATE_CHECK_VIOLATION) != 0)
      break;
    ld_pg_partitions_t known = {0}; /* partitions dropped behind our back: look again */
    rc = parts_reload(d, c, dl, &known, st);
    ld_pg_partitions_clear(&known);
    if (rc != 0)
      break;
  }
  free(ts);
  return rc;
}

static int run_count(PGconn *c, ld_archive_job_t *job, ld_pg_status_t *st) {
  return ld_pg_scalar(c, "SELECT COUNT(*) FROM messages", NULL, job_deadline(job), &job->value, st);
}

static int run_size(PGconn *c, ld_archive_job_t *job, ld_pg_status_t *st) {
  return ld_pg_scalar(c, "SELECT pg_database_size(current_database())", NULL, job_deadline(job),
                      &job->value, st);
}

static int run_delete_older(pg_driver_t *d, PGconn *c, ld_archive_job_t *job, ld_pg_status_t *st) {
  uint64_t dl = job_deadline(job);
  ld_pg_partitions_t ps = {0};
  int rc = parts_reload(d, c, dl, &ps, st);
  for (size_t i = 0; rc == 0 && i < ps.n && ps.p[i].hi <= job->ts; i++) {
    uint64_t rows = 0;
    rc = ld_pg_partition_drop(c, &ps.p[i], dl, &rows, st);
    job->value += rows;
  }
  ld_pg_partitions_clear(&ps);
  if (rc == 0)
    rc = parts_reload(d, c, dl, &ps, st);
  ld_pg_partitions_clear(&ps);
  uint64_t rows = 0;
  if (rc == 0)
    rc = ld_pg_delete_before(c, job->ts, NULL, dl, &rows, st);
  job->value += rows;
  return rc;
}

static int run_keep_newest(PGconn *c, ld_archive_job_t *job, ld_pg_status_t *st) {
  uint64_t dl = job_deadline(job);
  int64_t ts = INT64_MAX;
  uint8_t hash[LD_WAKU_HASH_LEN];
  memset(hash, 0xff, sizeof hash);
  if (job->n > 0) {
    bool found = false;
    int rc = ld_pg_nth_newest(c, job->n - 1, dl, &found, &ts, hash, st);
    if (rc != 0 || !found)
      return rc;
  }
  return ld_pg_delete_before(c, ts, hash, dl, &job->value, st);
}

static int run_drop_oldest(pg_driver_t *d, PGconn *c, ld_archive_job_t *job, ld_pg_status_t *st) {
  uint64_t dl = job_deadline(job);
  ld_pg_partitions_t ps = {0};
  int rc = parts_reload(d, c, dl, &ps, st);
  if (rc == 0 && (ps.n == 0 || ps.p[0].hi > job->ts)) {
    snprintf(st->why, sizeof st->why, "no partition older than the current one");
    rc = LD_ERR_NOT_FOUND;
  }
  if (rc == 0)
    rc = ld_pg_partition_drop(c, &ps.p[0], dl, &job->value, st);
  ld_pg_partitions_clear(&ps);
  if (rc == 0)
    rc = parts_reload(d, c, dl, &ps, st);
  ld_pg_partitions_clear(&ps);
  return rc;
}

static int run_job(pg_driver_t *d, PGconn *c, ld_archive_job_t *job, ld_pg_status_t *st) {
  switch (job->kind) {
  case LD_ARCHIVE_JOB_OPEN:
    return run_open(d, c, job, st);
  case LD_ARCHIVE_JOB_INSERT:
    return run_insert(d, c, job, st);
  case LD_ARCHIVE_JOB_QUERY:
    return ld_pg_query(c, &job->query, parts_count(d), job_deadline(job), &job->rows, st);
  case LD_ARCHIVE_JOB_COUNT:
    return run_count(c, job, st);
  case LD_ARCHIVE_JOB_DELETE_OLDER:
    return run_delete_older(d, c, job, st);
  case LD_ARCHIVE_JOB_KEEP_NEWEST:
    return run_keep_newest(c, job, st);
  case LD_ARCHIVE_JOB_SIZE:
    return run_size(c, job, st);
  case LD_ARCHIVE_JOB_DROP_OLDEST:
    return run_drop_oldest(d, c, job, st);
  case LD_ARCHIVE_JOB_MAINTAIN:
    return run_maintain(d, c, job, st);
  default:
    snprintf(st->why, sizeof st->why, "not supported by postgres");
    return LD_ERR_UNSUPPORTED;
  }
}

/* Clears what a failed attempt left in the job before it runs again on a new connection. */
static void reset_outputs(ld_archive_job_t *job) {
  ld_archive_rows_clear(&job->rows);
  job->value = 0;
  for (size_t i = 0; i < job->batch.n; i++)
    job->batch.rows[i].result = 0;
}

static void work(uv_work_t *req) {
  pg_work_t *w = req->data;
  pg_driver_t *d = w->d;
  ld_archive_job_t *job = w->job;
  ld_pg_status_t st = {{0}, {0}};
  int rc = 0;
  for (int attempt = 0; attempt < 2; attempt++) {
    if (job->deadline_ms != 0 && ld_now_ms() >= job->deadline_ms) {
      rc = LD_ERR_TIMEOUT;
      snprintf(st.why, sizeof st.why, "deadline passed before a connection was free");
      break;
    }
    PGconn *c = pool_take(d);
    bool reused = c != NULL;
    if (c == NULL && (rc = ld_pg_connect(d->conninfo, connect_deadline(d, job),
                                         d->base.request_timeout_ms, &c, &st)) != 0)
      break;
    rc = run_job(d, c, job, &st);
    if (!ld_pg_conn_lost(rc)) {
      pool_give(d, c);
      break;
    }
    PQfinish(c); /* lost: the next job connects anew */
    if (!reused)
      break;
    reset_outputs(job); /* a pooled connection went stale: once more on a fresh one */
  }
  if (rc != 0)
    ld_archive_job_fail(job, rc == LD_ERR_IO ? LD_ERR_DB : rc, "postgres: %s", st.why);
}

/* ---- the loop side --------------------------------------------------------------------------- */

static void pump(pg_driver_t *d);
static void maybe_finish_close(pg_driver_t *d);

static void after_work(uv_work_t *req, int status) {
  pg_work_t *w = req->data;
  pg_driver_t *d = w->d;
  if (status == UV_ECANCELED)
    ld_archive_job_fail(w->job, LD_ERR_CLOSED, "archive closed");
  d->running--;
  ld_archive_job_complete(&d->base, w->job);
  free(w);
  pump(d);
  maybe_finish_close(d);
}

static ld_archive_job_t *wait_pop(pg_driver_t *d) {
  ld_archive_job_t *job = d->wait_head;
  if (job != NULL) {
    d->wait_head = job->dnext;
    if (d->wait_head == NULL)
      d->wait_tail = NULL;
  }
  return job;
}

static void pump(pg_driver_t *d) {
  while (d->wait_head != NULL && d->running < d->base.max_db_connections) {
    ld_archive_job_t *job = wait_pop(d);
    pg_work_t *w = calloc(1, sizeof *w);
    if (w == NULL) {
      ld_archive_job_fail(job, LD_ERR_NOMEM, "out of memory");
      ld_archive_job_complete(&d->base, job);
      continue;
    }
    w->d = d;
    w->job = job;
    w->req.data = w;
    if (uv_queue_work(d->base.loop, &w->req, work, after_work) != 0) {
      free(w);
      ld_archive_job_fail(job, LD_ERR_INTERNAL, "thread pool refused the work");
      ld_archive_job_complete(&d->base, job);
      continue;
    }
    d->running++;
  }
}

static int pg_submit(ld_archive_driver_t *base, ld_archive_job_t *job) {
  pg_driver_t *d = (pg_driver_t *)base;
  if (d->closing)
    return LD_ERR_CLOSED;
  job->dnext = NULL;
  if (d->wait_tail != NULL)
    d->wait_tail->dnext = job;
  else
    d->wait_head = job;
  d->wait_tail = job;
  pump(d);
  return 0;
}

static void close_work(uv_work_t *req) {
  pg_driver_t *d = req->data;
  PGconn *c;
  while ((c = pool_take(d)) != NULL)
    PQfinish(c);
}

static void close_after(uv_work_t *req, int status) {
  (void)status;
  pg_driver_t *d = req->data;
  free(req);
  ld_archive_job_complete(&d->base, d->close_job);
}

static void maybe_finish_close(pg_driver_t *d) {
  if (!d->closing || d->close_started || d->running > 0 || d->wait_head != NULL)
    return;
  d->close_started = true;
  uv_work_t *req = calloc(1, sizeof *req);
  if (req != NULL) {
    req->data = d;
    if (uv_queue_work(d->base.loop, req, close_work, close_after) == 0)
      return;
    free(req);
  }
  close_work(&(uv_work_t){.data = d}); /* no memory: finish the connections here */
  ld_archive_job_complete(&d->base, d->close_job);
}

/* Queued jobs other than inserts fail with LD_ERR_CLOSED; inserts still run. */
static void pg_close(ld_archive_driver_t *base, ld_archive_job_t *job) {
  pg_driver_t *d = (pg_driver_t *)base;
  d->closing = true;
  d->close_job = job;
  ld_archive_job_t *keep_head = NULL, *keep_tail = NULL, *j;
  while ((j = wait_pop(d)) != NULL) {
    j->dnext = NULL;
    if (j->kind == LD_ARCHIVE_JOB_INSERT) {
      if (keep_tail != NULL)
        keep_tail->dnext = j;
      else
        keep_head = j;
      keep_tail = j;
      continue;
    }
    ld_archive_job_fail(j, LD_ERR_CLOSED, "archive closed");
    ld_archive_job_complete(base, j);
  }
  d->wait_head = keep_head;
  d->wait_tail = keep_tail;
  pump(d);
  maybe_finish_close(d);
}

static void pg_free(ld_archive_driver_t *base) {
  pg_driver_t *d = (pg_driver_t *)base;
  PGconn *c;
  while ((c = pool_take(d)) != NULL)
    PQfinish(c);
  ld_pg_partitions_clear(&d->parts);
  uv_mutex_destroy(&d->mu);
  free(d->idle);
  free(d->conninfo);
  free(d);
}

static const ld_archive_driver_ops_t pg_ops = {
    .name = "postgres",
    .max_batches_in_flight = 4,
    .max_batch_rows = 1000,
    .maintain_interval_ms = PG_PARTITION_CHECK_MS,
    .insert = pg_submit,
    .query = pg_submit,
    .count = pg_submit,
    .delete_older_than = pg_submit,
    .keep_newest = pg_submit,
    .size_bytes = pg_submit,
    .drop_oldest = pg_submit,
    .maintain = pg_submit,
    .close = pg_close,
    .free = pg_free,
};

int ld_archive_postgres_open(const ld_archive_driver_t *env, const char *target,
                             ld_archive_job_t *open_job, ld_archive_driver_t **out) {
  if (ld_pq_load() != 0)
    return LD_ERR_UNSUPPORTED;
  char *err = NULL;
  PQconninfoOption *opts = PQconninfoParse(target, &err);
  if (opts == NULL) {
    size_t n = err != NULL ? strcspn(err, "\n") : 0;
    LD_WARN(LOG_TOPIC, "bad postgres URL: %.*s", (int)n, err != NULL ? err : "");
    PQfreemem(err);
    return LD_ERR_INVALID_ARG;
  }
  PQconninfoFree(opts);
  pg_driver_t *d = calloc(1, sizeof *d);
  if (d == NULL)
    return LD_ERR_NOMEM;
  d->base = *env;
  d->base.ops = &pg_ops;
  d->conninfo = strdup(target);
  d->idle = calloc(env->max_db_connections, sizeof *d->idle);
  if (d->conninfo == NULL || d->idle == NULL || uv_mutex_init(&d->mu) != 0) {
    free(d->conninfo);
    free(d->idle);
    free(d);
    return LD_ERR_NOMEM;
  }
  *out = &d->base;
  pg_submit(&d->base, open_job);
  return 0;
}
