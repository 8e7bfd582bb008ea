/* The archive core: lifecycle, jobs and their deadlines, ingest checks and write batching,
 * queries, counts and figures. Retention runs in retention.c. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "waku/archive/archive_internal.h"

#define LOG_TOPIC "archive"

#define DEFAULT_REQUEST_TIMEOUT_MS 5000u
#define DEFAULT_MAX_DB_CONNECTIONS 50u
#define DEFAULT_MEMORY_CAPACITY 100000u
#define ARCHIVE_HANDLES 5
#define OPENING_HELD_POLL_MS 5

static void flush_pending(ld_archive_t *a, bool all);
static void release_reads(ld_archive_t *a);
static void on_deadline_timer(uv_timer_t *t);

/* ---- jobs ------------------------------------------------------------------------------------ */

ld_archive_job_t *ld_archive__job_new(ld_archive_t *a, ld_archive_job_kind_t kind) {
  ld_archive_job_t *job = calloc(1, sizeof *job);
  if (job == NULL)
    return NULL;
  job->kind = kind;
  job->owner = a;
  return job;
}

void ld_archive__job_free(ld_archive_job_t *job) {
  if (job == NULL)
    return;
  ld_archive_batch_clear(&job->batch);
  ld_archive_rows_clear(&job->rows);
  free(job->storage);
  free(job);
}

typedef int (*entry_fn)(ld_archive_driver_t *d, ld_archive_job_t *job);

static entry_fn entry_of(const ld_archive_driver_ops_t *ops, ld_archive_job_kind_t kind) {
  switch (kind) {
  case LD_ARCHIVE_JOB_INSERT:
    return ops->insert;
  case LD_ARCHIVE_JOB_QUERY:
    return ops->query;
  case LD_ARCHIVE_JOB_COUNT:
    return ops->count;
  case LD_ARCHIVE_JOB_DELETE_OLDER:
    return ops->delete_older_than;
  case LD_ARCHIVE_JOB_KEEP_NEWEST:
    return ops->keep_newest;
  case LD_ARCHIVE_JOB_SIZE:
    return ops->size_bytes;
  case LD_ARCHIVE_JOB_DROP_OLDEST:
    return ops->drop_oldest;
  case LD_ARCHIVE_JOB_MAINTAIN:
    return ops->maintain;
  case LD_ARCHIVE_JOB_LIST_KEYS:
    return ops->list_keys;
  default:
    return NULL;
  }
}

static ld_archive_job_t *job_of_timer(ld_timer_t *t) {
  return (ld_archive_job_t *)(void *)((char *)t - offsetof(ld_archive_job_t, timer));
}

static void rearm_deadlines(ld_archive_t *a) {
  uint64_t next = ld_timerheap_next_deadline(&a->deadlines);
  if (next == UINT64_MAX) {
    uv_timer_stop(&a->deadline_timer);
    return;
  }
  uint64_t now = ld_now_ms();
  uv_timer_start(&a->deadline_timer, on_deadline_timer, next > now ? next - now : 0, 0);
}

static void arm_deadline(ld_archive_t *a, ld_archive_job_t *job) {
  if (ld_timerheap_add(&a->deadlines, &job->timer, job->deadline_ms) != 0)
    LD_WARN(LOG_TOPIC, "no memory to track a request deadline");
  rearm_deadlines(a);
}

int ld_archive__submit(ld_archive_t *a, ld_archive_job_t *job, uint64_t timeout_ms) {
  entry_fn fn = entry_of(a->drv->ops, job->kind);
  if (fn == NULL)
    return LD_ERR_UNSUPPORTED;
  if (timeout_ms > 0 && job->deadline_ms == 0)
    job->deadline_ms = ld_now_ms() + timeout_ms;
  job->submitted = true;
  int rc = fn(a->drv, job);
  if (rc != 0) {
    job->submitted = false;
    return rc;
  }
  a->jobs_out++;
  if (job->deadline_ms != 0 && !ld_timer_armed(&job->timer))
    arm_deadline(a, job);
  return 0;
}

/* The wake-up is sent under the lock: once the loop has taken a job from the list, the thread
 * that completed it no longer touches the archive (close relies on it). Only the job that finds
 * the list empty sends it: the loop takes the whole list when it wakes, and every wake-up costs
 * the loop a spin while the sender is inside uv_async_send. */
static void push_done(ld_archive_t *a, ld_archive_job_t *job) {
  job->next = NULL;
  uv_mutex_lock(&a->done_mu);
  bool was_empty = a->done_head == NULL;
  if (a->done_tail != NULL)
    a->done_tail->next = job;
  else
    a->done_head = job;
  a->done_tail = job;
  if (was_empty)
    uv_async_send(&a->async);
  uv_mutex_unlock(&a->done_mu);
}

void ld_archive_job_complete(ld_archive_driver_t *d, ld_archive_job_t *job) {
  push_done(d->archive, job);
}

void ld_archive__defer(ld_archive_t *a, ld_archive_job_t *job) {
  push_done(a, job);
}

int64_t ld_archive_driver_now_ns(const ld_archive_driver_t *d) {
  if (d->now_ns != NULL)
    return d->now_ns(d->clock_data);
  return (int64_t)ld_wall_ns();
}

static void finish_job(ld_archive_t *a, ld_archive_job_t *job) {
  if (ld_timer_armed(&job->timer))
    ld_timerheap_remove(&a->deadlines, &job->timer);
  if (job->submitted)
    a->jobs_out--;
  if (job->abandoned && job->kind != LD_ARCHIVE_JOB_INSERT) {
    ld_archive__job_free(job);
    return;
  }
  job->on_done(job);
}

static void on_async(uv_async_t *h) {
  ld_archive_t *a = h->data;
  uv_mutex_lock(&a->done_mu);
  ld_archive_job_t *job = a->done_head;
  a->done_head = a->done_tail = NULL;
  uv_mutex_unlock(&a->done_mu);
  while (job != NULL) {
    ld_archive_job_t *next = job->next;
    finish_job(a, job);
    job = next;
  }
  if (!uv_is_closing((uv_handle_t *)&a->deadline_timer))
    rearm_deadlines(a);
}

/* ---- write batching ----------------------------------------------------------------------------
 */

static void report_row(ld_archive_t *a, ld_archive_batch_row_t *row, int result) {
  if (row->reported)
    return;
  row->reported = true;
  if (result == 1)
    a->stats.inserted++;
  else if (result == 0)
    a->stats.duplicates++;
  else
    a->stats.insert_errors++;
  if (row->done != NULL)
    row->done(result >= 0 ? 0 : result, row->user_data);
}

static void flight_append(ld_archive_t *a, ld_archive_job_t *job) {
  job->flight_next = NULL;
  if (a->flight_tail != NULL)
    a->flight_tail->flight_next = job;
  else
    a->flight_head = job;
  a->flight_tail = job;
}

/* Drivers with several batches in flight may complete them in any order. */
static void flight_remove(ld_archive_t *a, ld_archive_job_t *job) {
  ld_archive_job_t **pp = &a->flight_head, *prev = NULL;
  while (*pp != NULL && *pp != job) {
    prev = *pp;
    pp = &(*pp)->flight_next;
  }
  if (*pp == NULL)
    return;
  *pp = job->flight_next;
  if (a->flight_tail == job)
    a->flight_tail = prev;
  job->flight_next = NULL;
}

/* The number up to which every accepted message has been written (or has failed): just below
 * the oldest batch not completed. */
static uint64_t written_seq(const ld_archive_t *a) {
  if (a->flight_head != NULL)
    return a->flight_head->seq - 1;
  if (a->pending_head != NULL)
    return a->pending_head->seq - 1;
  return a->accepted_seq;
}

static void insert_done(ld_archive_job_t *job) {
  ld_archive_t *a = job->owner;
  if (job->submitted) {
    a->batches_in_flight--;
    flight_remove(a, job);
  }
  if (job->err < 0 && !job->abandoned)
    LD_WARN(LOG_TOPIC, "write batch of %zu messages failed: %s (%s)", job->batch.n, job->why,
            ld_errname(job->err));
  for (size_t i = 0; i < job->batch.n; i++) {
    ld_archive_batch_row_t *row = &job->batch.rows[i];
    a->backlog_rows--;
    a->backlog_bytes -= row->bytes;
    report_row(a, row, job->err < 0 ? job->err : row->result);
  }
  ld_archive__job_free(job);
  if (a->state == LD_ARCHIVE_ST_OPEN)
    flush_pending(a, false);
  release_reads(a);
}

static void insert_timeout(ld_archive_job_t *job) {
  for (size_t i = 0; i < job->batch.n; i++)
    report_row(job->owner, &job->batch.rows[i], LD_ERR_TIMEOUT);
}

/* The archive's own job lists (chunks waiting for the driver, reads held back): FIFOs linked
 * through `next`, given as their head and tail pointers. */
static void list_append(ld_archive_job_t **head, ld_archive_job_t **tail, ld_archive_job_t *job) {
  job->next = NULL;
  if (*tail != NULL)
    (*tail)->next = job;
  else
    *head = job;
  *tail = job;
}

static ld_archive_job_t *list_pop(ld_archive_job_t **head, ld_archive_job_t **tail) {
  ld_archive_job_t *job = *head;
  if (job != NULL) {
    *head = job->next;
    if (*head == NULL)
      *tail = NULL;
    job->next = NULL;
  }
  return job;
}

/* Takes `job` out of the list, wherever it is (a no-op when it is not in it). */
static void list_unlink(ld_archive_job_t **head, ld_archive_job_t **tail, ld_archive_job_t *job) {
  ld_archive_job_t **pp = head, *prev = NULL;
  while (*pp != NULL && *pp != job) {
    prev = *pp;
    pp = &(*pp)->next;
  }
  if (*pp == NULL)
    return;
  *pp = job->next;
  if (*tail == job)
    *tail = prev;
  job->next = NULL;
}

/* Submits pending chunks while the driver takes more (all of them when closing); nothing while
 * the archive opens. */
static void flush_pending(ld_archive_t *a, bool all) {
  if (a->state == LD_ARCHIVE_ST_OPENING)
    return;
  while (a->pending_head != NULL &&
         (all || a->batches_in_flight < a->drv->ops->max_batches_in_flight)) {
    ld_archive_job_t *job = list_pop(&a->pending_head, &a->pending_tail);
    int rc = ld_archive__submit(a, job, 0);
    if (rc != 0) {
      ld_archive_job_fail(job, rc, "write batch not accepted by the driver");
      ld_archive__defer(a, job);
    } else {
      a->batches_in_flight++;
      flight_append(a, job);
    }
  }
  if (a->pending_head == NULL)
    uv_timer_stop(&a->flush_timer);
}

static void on_flush_timer(uv_timer_t *t) {
  flush_pending(t->data, false);
}

static void arm_chunk_deadline(ld_archive_t *a, ld_archive_job_t *job) {
  job->deadline_ms = ld_now_ms() + a->cfg.request_timeout_ms;
  arm_deadline(a, job);
}

static ld_archive_job_t *pending_chunk(ld_archive_t *a) {
  ld_archive_job_t *tail = a->pending_tail;
  if (tail != NULL && tail->batch.n < a->drv->ops->max_batch_rows)
    return tail;
  ld_archive_job_t *job = ld_archive__job_new(a, LD_ARCHIVE_JOB_INSERT);
  if (job == NULL)
    return NULL;
  job->on_done = insert_done;
  job->on_timeout = insert_timeout;
  job->seq = a->accepted_seq + 1;
  list_append(&a->pending_head, &a->pending_tail, job);
  if (a->state == LD_ARCHIVE_ST_OPEN) /* while opening, the wait counts from the open */
    arm_chunk_deadline(a, job);
  return job;
}

/* Reports the messages of a chunk that never reached the driver as failed with `err`. */
static void pending_fail(ld_archive_t *a, ld_archive_job_t *job, int err) {
  list_unlink(&a->pending_head, &a->pending_tail, job);
  if (job->batch.n > 0)
    LD_WARN(LOG_TOPIC, "%zu accepted messages not written: %s", job->batch.n, ld_errname(err));
  for (size_t i = 0; i < job->batch.n; i++) {
    a->backlog_rows--;
    a->backlog_bytes -= job->batch.rows[i].bytes;
    report_row(a, &job->batch.rows[i], err);
  }
  ld_archive__job_free(job);
}

/* ---- reads held back ---------------------------------------------------------------------------
 */

/* Ends a read that never reached the driver with `err` on the next loop turn. */
static void read_fail(ld_archive_t *a, ld_archive_job_t *job, int err, const char *why) {
  ld_archive_job_fail(job, err, "%s", why);
  ld_archive__defer(a, job);
}

/* Hands the held reads whose messages are all written to the driver, oldest first. */
static void release_reads(ld_archive_t *a) {
  if (a->reads_head == NULL || a->state != LD_ARCHIVE_ST_OPEN)
    return;
  uint64_t written = written_seq(a);
  while (a->reads_head != NULL && a->reads_head->seq <= written) {
    ld_archive_job_t *job = list_pop(&a->reads_head, &a->reads_tail);
    int rc = ld_archive__submit(a, job, 0);
    if (rc != 0)
      read_fail(a, job, rc, "request not accepted by the driver");
  }
}

/* Submits a read (query, count) at once when every message accepted so far is written, which is
 * the common case and costs one comparison. Otherwise holds it until they are, and writes the
 * batch that is filling up now instead of letting it linger; while the archive opens, holds it
 * until the open. Its deadline runs from now either way. */
static int submit_read(ld_archive_t *a, ld_archive_job_t *job) {
  if (a->state == LD_ARCHIVE_ST_OPEN && written_seq(a) == a->accepted_seq)
    return ld_archive__submit(a, job, a->cfg.request_timeout_ms);
  job->seq = a->accepted_seq;
  job->deadline_ms = ld_now_ms() + a->cfg.request_timeout_ms;
  arm_deadline(a, job);
  list_append(&a->reads_head, &a->reads_tail, job);
  flush_pending(a, false);
  return 0;
}

/* A held read's deadline passed: it times out as a submitted one would. */
static void read_expired(ld_archive_t *a, ld_archive_job_t *job) {
  list_unlink(&a->reads_head, &a->reads_tail, job);
  job->abandoned = true;
  job->on_timeout(job);
  ld_archive__job_free(job);
}

static void on_deadline_timer(uv_timer_t *t) {
  ld_archive_t *a = t->data;
  ld_timer_t *tm;
  while ((tm = ld_timerheap_pop_expired(&a->deadlines, ld_now_ms())) != NULL) {
    ld_archive_job_t *job = job_of_timer(tm);
    if (!job->submitted && job->kind == LD_ARCHIVE_JOB_INSERT) {
      pending_fail(a, job, LD_ERR_TIMEOUT);
      release_reads(a);
      continue;
    }
    if (!job->submitted) {
      read_expired(a, job);
      continue;
    }
    job->abandoned = true;
    if (job->on_timeout != NULL)
      job->on_timeout(job);
  }
  rearm_deadlines(a);
}

/* ---- ingest ------------------------------------------------------------------------------------
 */

static int ingest(ld_archive_t *a, const char *pubsub_topic, const ld_waku_message_t *msg,
                  const uint8_t hash[LD_WAKU_HASH_LEN], ld_archive_done_fn done, void *user_data,
                  bool check_time) {
  if (a == NULL || pubsub_topic == NULL || msg == NULL || hash == NULL)
    return LD_ERR_INVALID_ARG;
  if (a->state == LD_ARCHIVE_ST_CLOSING)
    return LD_ERR_CLOSED;
  if (msg->ephemeral) {
    a->stats.rejected_ephemeral++;
    return LD_ARCHIVE_EPHEMERAL;
  }
  if (check_time) {
    int64_t now = ld_archive_driver_now_ns(a->drv);
    if (msg->timestamp < now - LD_ARCHIVE_MAX_TS_VARIANCE_NS) {
      a->stats.rejected_too_old++;
      return LD_ARCHIVE_TOO_OLD;
    }
    if (msg->timestamp > now + LD_ARCHIVE_MAX_TS_VARIANCE_NS) {
      a->stats.rejected_future++;
      return LD_ARCHIVE_FUTURE;
    }
  }
  if (a->backlog_rows >= LD_ARCHIVE_MAX_PENDING_ROWS ||
      a->backlog_bytes >= LD_ARCHIVE_MAX_PENDING_BYTES)
    return LD_ERR_LIMIT;
  ld_archive_job_t *chunk = pending_chunk(a);
  if (chunk == NULL ||
      ld_archive_batch_add(&chunk->batch, pubsub_topic, msg, hash, done, user_data) != 0)
    return LD_ERR_NOMEM;
  a->accepted_seq++;
  a->backlog_rows++;
  a->backlog_bytes += chunk->batch.rows[chunk->batch.n - 1].bytes;
  if (a->state != LD_ARCHIVE_ST_OPEN)
    return LD_ARCHIVE_ACCEPTED; /* written once open */
  if (chunk->batch.n >= a->drv->ops->max_batch_rows)
    flush_pending(a, false);
  else if (!uv_is_active((uv_handle_t *)&a->flush_timer))
    uv_timer_start(&a->flush_timer, on_flush_timer, LD_ARCHIVE_BATCH_LINGER_MS, 0);
  return LD_ARCHIVE_ACCEPTED;
}

int ld_archive_handle_message(ld_archive_t *a, const char *pubsub_topic,
                              const ld_waku_message_t *msg, const uint8_t hash[LD_WAKU_HASH_LEN],
                              ld_archive_done_fn done, void *user_data) {
  return ingest(a, pubsub_topic, msg, hash, done, user_data, true);
}

int ld_archive_insert(ld_archive_t *a, const char *pubsub_topic, const ld_waku_message_t *msg,
                      const uint8_t hash[LD_WAKU_HASH_LEN], ld_archive_done_fn done,
                      void *user_data) {
  return ingest(a, pubsub_topic, msg, hash, done, user_data, false);
}

/* ---- queries -----------------------------------------------------------------------------------
 */

static const char *query_problem(const ld_archive_query_t *q) {
  static const uint8_t zero[LD_WAKU_HASH_LEN];
  if (q->n_content_topics > 0 && q->content_topics == NULL)
    return "content topics missing";
  for (size_t i = 0; q->content_topics != NULL && i < q->n_content_topics; i++)
    if (q->content_topics[i] == NULL)
      return "NULL content topic";
  if (q->has_cursor && memcmp(q->cursor, zero, sizeof zero) == 0)
    return "all zeroes cursor hash";
  if (q->has_cursor && q->n_content_topics > LD_ARCHIVE_MAX_CONTENT_TOPICS)
    return "too many content topics";
  if (q->n_content_topics > LD_ARCHIVE_MAX_QUERY_CONTENT_TOPICS)
    return "too many content topics";
  if (q->n_hashes > LD_ARCHIVE_MAX_HASHES)
    return "too many hashes";
  if (q->n_hashes > 0 && q->hashes == NULL)
    return "hashes missing";
  if (q->has_time_start && q->has_time_end && q->time_start > q->time_end)
    return "time_start after time_end";
  return NULL;
}

/* Copies the query's strings and hashes into one block owned by the job. */
static int copy_query(ld_archive_job_t *job, const ld_archive_query_t *q) {
  size_t nct = q->n_content_topics, bytes = nct * sizeof(char *) + q->n_hashes * LD_WAKU_HASH_LEN;
  for (size_t i = 0; i < nct; i++)
    bytes += strlen(q->content_topics[i]) + 1;
  size_t plen = q->pubsub_topic != NULL ? strlen(q->pubsub_topic) + 1 : 0;
  char *block = malloc(bytes + plen + 1);
  if (block == NULL)
    return LD_ERR_NOMEM;
  job->storage = block;
  job->query = *q;
  const char **cts = (const char **)(void *)block;
  char *w = block + nct * sizeof(char *);
  if (q->n_hashes > 0) {
    memcpy(w, q->hashes, q->n_hashes * LD_WAKU_HASH_LEN);
    job->query.hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])(void *)w;
    w += q->n_hashes * LD_WAKU_HASH_LEN;
  }
  for (size_t i = 0; i < nct; i++) {
    size_t n = strlen(q->content_topics[i]) + 1;
    memcpy(w, q->content_topics[i], n);
    cts[i] = w;
    w += n;
  }
  job->query.content_topics = nct > 0 ? cts : NULL;
  if (plen > 0) {
    memcpy(w, q->pubsub_topic, plen);
    job->query.pubsub_topic = w;
  }
  return 0;
}

static void reverse_rows(ld_archive_row_t *rows, size_t n) {
  for (size_t i = 0; i < n / 2; i++) {
    ld_archive_row_t t = rows[i];
    rows[i] = rows[n - 1 - i];
    rows[n - 1 - i] = t;
  }
}

static void query_done(ld_archive_job_t *job) {
  ld_archive_t *a = job->owner;
  if (job->err < 0) {
    a->stats.query_errors++;
    job->cb.query(job->err, job->why[0] ? job->why : ld_strerror(job->err), NULL, job->user_data);
    ld_archive__job_free(job);
    return;
  }
  ld_archive_result_t res = {0};
  size_t take = job->rows.n < job->page ? job->rows.n : job->page;
  if (job->rows.n > job->page) {
    res.has_cursor = true;
    memcpy(res.cursor, job->rows.rows[take - 1].hash, LD_WAKU_HASH_LEN);
  }
  if (!job->query.forward)
    reverse_rows(job->rows.rows, take);
  res.rows = job->rows.rows;
  res.n_rows = take;
  job->cb.query(0, "", &res, job->user_data);
  ld_archive__job_free(job);
}

static void query_timeout(ld_archive_job_t *job) {
  ld_archive_t *a = job->owner;
  a->stats.query_errors++;
  job->cb.query(LD_ERR_TIMEOUT, "database request timed out", NULL, job->user_data);
}

static uint32_t page_size(uint32_t limit) {
  if (limit == 0)
    return LD_ARCHIVE_DEFAULT_PAGE_SIZE;
  return limit > LD_ARCHIVE_MAX_PAGE_SIZE ? LD_ARCHIVE_MAX_PAGE_SIZE : limit;
}

int ld_archive_query(ld_archive_t *a, const ld_archive_query_t *q, ld_archive_query_fn done,
                     void *user_data) {
  if (a == NULL || q == NULL || done == NULL)
    return LD_ERR_INVALID_ARG;
  if (a->state == LD_ARCHIVE_ST_CLOSING)
    return LD_ERR_CLOSED;
  ld_archive_job_t *job = ld_archive__job_new(a, LD_ARCHIVE_JOB_QUERY);
  if (job == NULL)
    return LD_ERR_NOMEM;
  job->cb.query = done;
  job->user_data = user_data;
  job->on_done = query_done;
  job->on_timeout = query_timeout;
  a->stats.queries++;
  const char *problem = query_problem(q);
  if (problem != NULL) {
    ld_archive_job_fail(job, LD_ERR_INVALID_ARG, "%s", problem);
    ld_archive__defer(a, job);
    return 0;
  }
  if (copy_query(job, q) != 0) {
    ld_archive__job_free(job);
    a->stats.queries--;
    return LD_ERR_NOMEM;
  }
  job->page = page_size(q->limit);
  job->query.limit = job->page + 1;
  int rc = submit_read(a, job);
  if (rc != 0) {
    ld_archive__job_free(job);
    a->stats.queries--;
    return rc;
  }
  return 0;
}

/* ---- key listing --------------------------------------------------------------------------------
 */

static void list_done(ld_archive_job_t *job) {
  ld_archive_t *a = job->owner;
  if (job->err < 0) {
    a->stats.query_errors++;
    job->cb.list(job->err, job->why[0] ? job->why : ld_strerror(job->err), NULL, 0, false,
                 job->user_data);
    ld_archive__job_free(job);
    return;
  }
  size_t take = job->rows.n < job->page ? job->rows.n : job->page;
  ld_archive_key_t *keys = take > 0 ? malloc(take * sizeof *keys) : NULL;
  if (take > 0 && keys == NULL) {
    job->cb.list(LD_ERR_NOMEM, "out of memory", NULL, 0, false, job->user_data);
    ld_archive__job_free(job);
    return;
  }
  for (size_t i = 0; i < take; i++) {
    const ld_archive_row_t *row = &job->rows.rows[i];
    keys[i].timestamp = row->msg.timestamp;
    memcpy(keys[i].hash, row->hash, LD_WAKU_HASH_LEN);
    keys[i].pubsub_topic = row->pubsub_topic;
  }
  job->cb.list(0, "", keys, take, job->rows.n > job->page, job->user_data);
  free(keys);
  ld_archive__job_free(job);
}

static void list_timeout(ld_archive_job_t *job) {
  ld_archive_t *a = job->owner;
  a->stats.query_errors++;
  job->cb.list(LD_ERR_TIMEOUT, "database request timed out", NULL, 0, false, job->user_data);
}

static uint32_t list_page_size(uint32_t limit) {
  if (limit == 0)
    return LD_ARCHIVE_DEFAULT_LIST_PAGE;
  return limit > LD_ARCHIVE_MAX_LIST_PAGE ? LD_ARCHIVE_MAX_LIST_PAGE : limit;
}

int ld_archive_list_keys(ld_archive_t *a, const ld_archive_listing_t *l, ld_archive_list_fn done,
                         void *user_data) {
  if (a == NULL || l == NULL || done == NULL)
    return LD_ERR_INVALID_ARG;
  if (a->state == LD_ARCHIVE_ST_CLOSING)
    return LD_ERR_CLOSED;
  ld_archive_job_t *job = ld_archive__job_new(a, LD_ARCHIVE_JOB_LIST_KEYS);
  if (job == NULL)
    return LD_ERR_NOMEM;
  job->cb.list = done;
  job->user_data = user_data;
  job->on_done = list_done;
  job->on_timeout = list_timeout;
  a->stats.queries++;
  if (l->time_start > l->time_end) {
    ld_archive_job_fail(job, LD_ERR_INVALID_ARG, "time_start after time_end");
    ld_archive__defer(a, job);
    return 0;
  }
  job->query.has_time_start = job->query.has_time_end = true;
  job->query.time_start = l->time_start;
  job->query.time_end = l->time_end;
  job->query.forward = true;
  job->query.include_data = true;
  job->query.has_cursor = l->has_after;
  memcpy(job->query.cursor, l->after_hash, LD_WAKU_HASH_LEN);
  job->ts = l->after_ts;
  job->page = list_page_size(l->limit);
  job->query.limit = job->page + 1;
  int rc = submit_read(a, job);
  if (rc != 0) {
    ld_archive__job_free(job);
    a->stats.queries--;
  }
  return rc;
}

/* ---- count, figures ----------------------------------------------------------------------------
 */

static void count_done(ld_archive_job_t *job) {
  job->cb.count(job->err, job->err < 0 ? 0 : job->value, job->user_data);
  ld_archive__job_free(job);
}

static void count_timeout(ld_archive_job_t *job) {
  job->cb.count(LD_ERR_TIMEOUT, 0, job->user_data);
}

int ld_archive_count(ld_archive_t *a, ld_archive_count_fn done, void *user_data) {
  if (a == NULL || done == NULL)
    return LD_ERR_INVALID_ARG;
  if (a->state == LD_ARCHIVE_ST_CLOSING)
    return LD_ERR_CLOSED;
  ld_archive_job_t *job = ld_archive__job_new(a, LD_ARCHIVE_JOB_COUNT);
  if (job == NULL)
    return LD_ERR_NOMEM;
  job->cb.count = done;
  job->user_data = user_data;
  job->on_done = count_done;
  job->on_timeout = count_timeout;
  int rc = submit_read(a, job);
  if (rc != 0)
    ld_archive__job_free(job);
  return rc;
}

void ld_archive_stats(const ld_archive_t *a, ld_archive_stats_t *out) {
  if (a == NULL || out == NULL)
    return;
  *out = a->stats;
}

const char *ld_archive_driver_name(const ld_archive_t *a) {
  return a != NULL && a->drv != NULL ? a->drv->ops->name : "none";
}

/* ---- periodic housekeeping ---------------------------------------------------------------------
 */

static void maintain_done(ld_archive_job_t *job) {
  ld_archive_t *a = job->owner;
  a->maintaining = false;
  if (job->err < 0)
    LD_WARN(LOG_TOPIC, "%s housekeeping failed: %s", a->drv->ops->name, job->why);
  ld_archive__job_free(job);
}

static void maintain_timeout(ld_archive_job_t *job) {
  ld_archive_t *a = job->owner;
  a->maintaining = false;
  LD_WARN(LOG_TOPIC, "%s housekeeping timed out", a->drv->ops->name);
}

static void on_maintain_timer(uv_timer_t *t) {
  ld_archive_t *a = t->data;
  if (a->maintaining || a->state != LD_ARCHIVE_ST_OPEN)
    return;
  ld_archive_job_t *job = ld_archive__job_new(a, LD_ARCHIVE_JOB_MAINTAIN);
  if (job == NULL)
    return;
  job->on_done = maintain_done;
  job->on_timeout = maintain_timeout;
  if (ld_archive__submit(a, job, LD_ARCHIVE_MAINTENANCE_TIMEOUT_MS) != 0) {
    ld_archive__job_free(job);
    return;
  }
  a->maintaining = true;
}

/* ---- open and close ----------------------------------------------------------------------------
 */

static void archive_free(ld_archive_t *a) {
  ld_timerheap_clear(&a->deadlines);
  ld_archive__retention_free(a);
  uv_mutex_destroy(&a->done_mu);
  free(a->url);
  free(a);
}

static void on_handle_closed(uv_handle_t *h) {
  ld_archive_t *a = h->data;
  if (--a->handles_open > 0)
    return;
  if (a->close_cb != NULL)
    a->close_cb(a->cb_data);
  else if (a->open_cb != NULL)
    a->open_cb(NULL, a->open_err, a->open_why, a->cb_data);
  archive_free(a);
}

static void close_handles(ld_archive_t *a) {
  uv_close((uv_handle_t *)&a->async, on_handle_closed);
  uv_close((uv_handle_t *)&a->deadline_timer, on_handle_closed);
  uv_close((uv_handle_t *)&a->flush_timer, on_handle_closed);
  uv_close((uv_handle_t *)&a->retention_timer, on_handle_closed);
  uv_close((uv_handle_t *)&a->maintain_timer, on_handle_closed);
}

static void close_done(ld_archive_job_t *job) {
  ld_archive_t *a = job->owner;
  ld_archive__job_free(job);
  a->drv->ops->free(a->drv);
  a->drv = NULL;
  close_handles(a);
}

static void close_driver(ld_archive_t *a) {
  ld_archive_job_t *job = ld_archive__job_new(a, LD_ARCHIVE_JOB_CLOSE);
  if (job == NULL) {
    /* Without memory for the close job the driver cannot be closed cleanly. */
    LD_ERROR(LOG_TOPIC, "no memory to close the %s archive", a->drv->ops->name);
    abort();
  }
  job->on_done = close_done;
  job->submitted = true;
  a->jobs_out++;
  a->drv->ops->close(a->drv, job);
}

/* The work taken while opening fails with `err`: the messages with it, the reads with `why`. */
static void fail_held(ld_archive_t *a, int err, const char *why) {
  while (a->pending_head != NULL)
    pending_fail(a, a->pending_head, err);
  ld_archive_job_t *job;
  while ((job = list_pop(&a->reads_head, &a->reads_tail)) != NULL)
    read_fail(a, job, err, why);
}

/* The work taken while opening goes to the database: the messages first, each read once the
 * messages accepted before it are written. Their deadlines run from now. */
static void start_held(ld_archive_t *a) {
  for (ld_archive_job_t *chunk = a->pending_head; chunk != NULL; chunk = chunk->next)
    arm_chunk_deadline(a, chunk);
  flush_pending(a, false);
  release_reads(a);
}

static void finish_open(ld_archive_t *a) {
  a->state = LD_ARCHIVE_ST_OPEN;
  start_held(a);
  ld_archive__retention_start_timer(a, 0);
  uint32_t every = a->drv->ops->maintain_interval_ms;
  if (a->drv->ops->maintain != NULL && every > 0)
    uv_timer_start(&a->maintain_timer, on_maintain_timer, every, every);
  ld_archive_open_fn cb = a->open_cb;
  a->open_cb = NULL;
  cb(a, 0, "", a->cb_data);
}

/* ld_archive_hold_opening: archives whose database is open wait here (on the maintenance timer,
 * which starts only once open) until the hold is lifted. */
static atomic_bool g_opening_held;

void ld_archive_hold_opening(bool held) {
  atomic_store(&g_opening_held, held);
}

static void on_opening_held(uv_timer_t *t) {
  if (atomic_load(&g_opening_held))
    return;
  uv_timer_stop(t);
  finish_open(t->data);
}

static void open_done(ld_archive_job_t *job) {
  ld_archive_t *a = job->owner;
  int err = job->err;
  if (err < 0) {
    a->open_err = err;
    snprintf(a->open_why, sizeof a->open_why, "%s", job->why[0] ? job->why : ld_strerror(err));
    ld_archive__job_free(job);
    a->state = LD_ARCHIVE_ST_CLOSING;
    fail_held(a, err, a->open_why);
    close_driver(a);
    return;
  }
  ld_archive__job_free(job);
  if (atomic_load(&g_opening_held)) {
    uv_timer_start(&a->maintain_timer, on_opening_held, OPENING_HELD_POLL_MS, OPENING_HELD_POLL_MS);
    return;
  }
  finish_open(a);
}

void ld_archive_config_default(ld_archive_config_t *cfg) {
  if (cfg == NULL)
    return;
  memset(cfg, 0, sizeof *cfg);
  cfg->max_db_connections = DEFAULT_MAX_DB_CONNECTIONS;
  cfg->memory_capacity = DEFAULT_MEMORY_CAPACITY;
  cfg->request_timeout_ms = DEFAULT_REQUEST_TIMEOUT_MS;
}

typedef int (*driver_open_fn)(const ld_archive_driver_t *env, const char *target,
                              ld_archive_job_t *open_job, ld_archive_driver_t **out);

/* Picks the driver of `url` and the part of the URL it reads. */
static driver_open_fn driver_for(const char *url, const char **target) {
  if (strncmp(url, "sqlite://", 9) == 0 && url[9] != 0) {
    *target = url + 9;
    return ld_archive_sqlite_open;
  }
  if (strncmp(url, "postgres://", 11) == 0 || strncmp(url, "postgresql://", 13) == 0) {
    *target = url;
    return ld_archive_postgres_open;
  }
  if (strncmp(url, "memory://", 9) == 0) {
    *target = url + 9;
    return ld_archive_memory_open;
  }
  return NULL;
}

static int init_handles(ld_archive_t *a, uv_loop_t *loop) {
  if (uv_mutex_init(&a->done_mu) != 0)
    return LD_ERR_NOMEM;
  if (uv_async_init(loop, &a->async, on_async) != 0) {
    uv_mutex_destroy(&a->done_mu);
    return LD_ERR_NOMEM;
  }
  uv_timer_init(loop, &a->deadline_timer);
  uv_timer_init(loop, &a->flush_timer);
  uv_timer_init(loop, &a->retention_timer);
  uv_timer_init(loop, &a->maintain_timer);
  a->async.data = a->deadline_timer.data = a->flush_timer.data = a;
  a->retention_timer.data = a->maintain_timer.data = a;
  a->handles_open = ARCHIVE_HANDLES;
  return 0;
}

static void apply_defaults(ld_archive_config_t *cfg) {
  if (cfg->request_timeout_ms == 0)
    cfg->request_timeout_ms = DEFAULT_REQUEST_TIMEOUT_MS;
  if (cfg->max_db_connections == 0)
    cfg->max_db_connections = DEFAULT_MAX_DB_CONNECTIONS;
  if (cfg->memory_capacity == 0)
    cfg->memory_capacity = DEFAULT_MEMORY_CAPACITY;
}

static int start_driver(ld_archive_t *a, driver_open_fn open_fn, const char *target) {
  ld_archive_driver_t env = {0};
  env.loop = a->loop;
  env.archive = a;
  env.request_timeout_ms = a->cfg.request_timeout_ms;
  env.max_db_connections = a->cfg.max_db_connections;
  env.memory_capacity = a->cfg.memory_capacity;
  env.now_ns = a->cfg.now_ns;
  env.clock_data = a->cfg.clock_data;
  ld_archive_job_t *job = ld_archive__job_new(a, LD_ARCHIVE_JOB_OPEN);
  if (job == NULL)
    return LD_ERR_NOMEM;
  job->on_done = open_done;
  job->deadline_ms = ld_now_ms() + LD_ARCHIVE_MAINTENANCE_TIMEOUT_MS;
  job->submitted = true;
  int rc = open_fn(&env, target, job, &a->drv);
  if (rc != 0) {
    ld_archive__job_free(job);
    return rc;
  }
  a->jobs_out++;
  return 0;
}

int ld_archive_open(uv_loop_t *loop, const ld_archive_config_t *cfg, ld_archive_open_fn done,
                    void *user_data) {
  return ld_archive_open_early(loop, cfg, done, user_data, NULL);
}

int ld_archive_open_early(uv_loop_t *loop, const ld_archive_config_t *cfg, ld_archive_open_fn done,
                          void *user_data, ld_archive_t **out) {
  const char *target = NULL;
  if (loop == NULL || cfg == NULL || cfg->url == NULL || done == NULL ||
      cfg->n_policies > LD_ARCHIVE_MAX_POLICIES)
    return LD_ERR_INVALID_ARG;
  driver_open_fn open_fn = driver_for(cfg->url, &target);
  if (open_fn == NULL)
    return LD_ERR_INVALID_ARG;
  ld_archive_t *a = calloc(1, sizeof *a);
  if (a == NULL || (a->url = strdup(cfg->url)) == NULL) {
    free(a);
    return LD_ERR_NOMEM;
  }
  a->loop = loop;
  a->cfg = *cfg;
  a->cfg.url = a->url;
  apply_defaults(&a->cfg);
  target = a->url + (target - cfg->url);
  ld_timerheap_init(&a->deadlines);
  if (init_handles(a, loop) != 0) {
    free(a->url);
    free(a);
    return LD_ERR_NOMEM;
  }
  int rc = start_driver(a, open_fn, target);
  if (rc != 0) {
    close_handles(a); /* frees `a` without calling anyone */
    return rc;
  }
  a->open_cb = done;
  a->cb_data = user_data;
  if (out != NULL)
    *out = a;
  return 0;
}

void ld_archive_close(ld_archive_t *a, void (*done)(void *user_data), void *user_data) {
  if (a == NULL || a->state == LD_ARCHIVE_ST_CLOSING)
    return;
  a->state = LD_ARCHIVE_ST_CLOSING;
  a->close_cb = done;
  a->cb_data = user_data;
  uv_timer_stop(&a->flush_timer);
  uv_timer_stop(&a->retention_timer);
  uv_timer_stop(&a->maintain_timer);
  flush_pending(a, true);
  ld_archive_job_t *job;
  while ((job = list_pop(&a->reads_head, &a->reads_tail)) != NULL)
    read_fail(a, job, LD_ERR_CLOSED, "archive closed");
  close_driver(a);
}
