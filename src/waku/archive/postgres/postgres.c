/* postgres://: the production driver. Jobs wait in the driver's queue and run on its own
 * threads, at most max_db_connections of them (started as the queue needs them), each job on a
 * pooled connection (opened on first use, dropped when it fails, so the next job reconnects). A
 * thread that finishes a job takes the next one itself, so the connections stay busy while the
 * loop is, and the blocking database calls stay out of libuv's shared thread pool (name
 * resolution and file work). Every statement is parameterised (PQsendQueryParams) and bounded by
 * the job's deadline. */
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
/* Queries at once per core of this machine, and at least. More only queue inside the server and
 * stretch every answer: with the server on the same two cores, 16 lookups at once answered in
 * p99 39-45 ms, 4 at once in 18-25 ms with stalls of 90-700 ms (backends pre-empted while
 * holding a spinlock make the others back off), 2 at once in 17-20 ms with no stall over 25 ms,
 * at the same throughput (bench/RESULTS.md). */
#define PG_THREADS_PER_CORE 1u
#define PG_MIN_THREADS 2u
/* Partitions are checked (and the next hour's created) this often. */
#define PG_PARTITION_CHECK_MS (10u * 60 * 1000)

typedef struct pg_driver {
  ld_archive_driver_t base;
  char *conninfo;
  uv_mutex_t mu; /* guards idle and parts */
  PGconn **idle;
  size_t n_idle;
  ld_pg_partitions_t parts;
  /* the job queue and its threads, guarded by qmu */
  uv_mutex_t qmu;
  uv_cond_t qcv;
  ld_archive_jobq_t jobs;
  uv_thread_t *threads; /* thread_limit() slots; the first n_threads started */
  unsigned n_threads;
  unsigned n_live;    /* started and not yet returned */
  unsigned n_waiting; /* asleep on qcv */
  bool closing;
  ld_archive_job_t *close_job; /* completed by the last thread to return */
} pg_driver_t;

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
  case LD_ARCHIVE_JOB_LIST_KEYS:
    return ld_pg_list_keys(c, &job->query, job->ts, job_deadline(job), &job->rows, st);
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

/* Runs one job; a pooled connection that turns out stale is replaced once. */
static void run_with_connection(pg_driver_t *d, ld_archive_job_t *job) {
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

/* ---- the threads ------------------------------------------------------------------------------
 */

/* The last thread out closes the pooled connections and completes the close job. */
static void finish_close(pg_driver_t *d) {
  PGconn *c;
  while ((c = pool_take(d)) != NULL)
    PQfinish(c);
  ld_archive_job_complete(&d->base, d->close_job);
}

/* Takes jobs until the queue is empty and the driver closing. */
static void worker(void *arg) {
  pg_driver_t *d = arg;
  for (;;) {
    uv_mutex_lock(&d->qmu);
    while (d->jobs.head == NULL && !d->closing) {
      d->n_waiting++;
      uv_cond_wait(&d->qcv, &d->qmu);
      d->n_waiting--;
    }
    ld_archive_job_t *job = ld_archive_jobq_pop(&d->jobs);
    bool last_out = job == NULL && --d->n_live == 0;
    uv_mutex_unlock(&d->qmu);
    if (job == NULL) {
      if (last_out)
        finish_close(d);
      return;
    }
    run_with_connection(d, job);
    ld_archive_job_complete(&d->base, job);
    ld_archive_driver_yield();
  }
}

/* Threads (queries at once): max_db_connections, but no more than PG_THREADS_PER_CORE per core
 * of this machine (at least PG_MIN_THREADS). */
static unsigned thread_limit(const pg_driver_t *d) {
  unsigned by_cores = PG_THREADS_PER_CORE * uv_available_parallelism();
  unsigned limit = by_cores > PG_MIN_THREADS ? by_cores : PG_MIN_THREADS;
  return d->base.max_db_connections < limit ? d->base.max_db_connections : limit;
}

/* One more thread for a job about to be queued when the sleeping threads are already spoken for
 * (a burst of jobs in one loop turn finds them still asleep) and the limit allows it. Called
 * with qmu. */
static int grow_locked(pg_driver_t *d) {
  if (d->jobs.n < d->n_waiting || d->n_threads >= thread_limit(d))
    return 0;
  if (uv_thread_create(&d->threads[d->n_threads], worker, d) != 0)
    return d->n_threads > 0 ? 0 : LD_ERR_NOMEM; /* the started ones get to the job */
  d->n_threads++;
  d->n_live++;
  return 0;
}

static int pg_submit(ld_archive_driver_t *base, ld_archive_job_t *job) {
  pg_driver_t *d = (pg_driver_t *)base;
  uv_mutex_lock(&d->qmu);
  int rc = d->closing ? LD_ERR_CLOSED : grow_locked(d);
  if (rc == 0)
    ld_archive_jobq_push(&d->jobs, job);
  bool wake = rc == 0 && d->n_waiting > 0;
  uv_mutex_unlock(&d->qmu);
  if (wake)
    uv_cond_signal(&d->qcv);
  return rc;
}

static bool is_insert(const ld_archive_job_t *job) {
  return job->kind == LD_ARCHIVE_JOB_INSERT;
}

/* Queued jobs other than inserts fail with LD_ERR_CLOSED; inserts still run. The threads return
 * once the queue is empty, the last one completing `job`. */
static void pg_close(ld_archive_driver_t *base, ld_archive_job_t *job) {
  pg_driver_t *d = (pg_driver_t *)base;
  uv_mutex_lock(&d->qmu);
  d->closing = true;
  d->close_job = job;
  ld_archive_jobq_close(&d->jobs, base, is_insert);
  bool no_threads = d->n_live == 0;
  uv_cond_broadcast(&d->qcv);
  uv_mutex_unlock(&d->qmu);
  if (no_threads)
    finish_close(d);
}

/* After the close job: every thread has returned or is returning. */
static void pg_free(ld_archive_driver_t *base) {
  pg_driver_t *d = (pg_driver_t *)base;
  for (unsigned i = 0; i < d->n_threads; i++)
    uv_thread_join(&d->threads[i]);
  PGconn *c;
  while ((c = pool_take(d)) != NULL)
    PQfinish(c);
  ld_pg_partitions_clear(&d->parts);
  uv_cond_destroy(&d->qcv);
  uv_mutex_destroy(&d->qmu);
  uv_mutex_destroy(&d->mu);
  free(d->threads);
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
    .list_keys = pg_submit,
    .delete_older_than = pg_submit,
    .keep_newest = pg_submit,
    .size_bytes = pg_submit,
    .drop_oldest = pg_submit,
    .maintain = pg_submit,
    .close = pg_close,
    .free = pg_free,
};

static int init_locks(pg_driver_t *d) {
  if (uv_mutex_init(&d->mu) != 0)
    return LD_ERR_NOMEM;
  if (uv_mutex_init(&d->qmu) != 0) {
    uv_mutex_destroy(&d->mu);
    return LD_ERR_NOMEM;
  }
  if (uv_cond_init(&d->qcv) != 0) {
    uv_mutex_destroy(&d->qmu);
    uv_mutex_destroy(&d->mu);
    return LD_ERR_NOMEM;
  }
  return 0;
}

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
  d->threads = calloc(env->max_db_connections, sizeof *d->threads);
  if (d->conninfo == NULL || d->idle == NULL || d->threads == NULL || init_locks(d) != 0) {
    free(d->conninfo);
    free(d->idle);
    free(d->threads);
    free(d);
    return LD_ERR_NOMEM;
  }
  int rc = pg_submit(&d->base, open_job);
  if (rc != 0) {
    pg_free(&d->base);
    return rc;
  }
  *out = &d->base;
  return 0;
}
