#include "waku/archive/driver.h"

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

static size_t block_size(size_t plen, const ld_waku_message_t *msg) {
  return plen + 1 + msg->content_topic_len + 1 + msg->payload_len + msg->meta_len;
}

/* Copies topics, payload and meta of a message into `w` (block_size bytes):
 * pubsub ‖ NUL ‖ content topic ‖ NUL ‖ payload ‖ meta; `out` views them. */
static void fill_block(uint8_t *w, const char *pubsub, size_t plen, const ld_waku_message_t *msg,
                       ld_waku_message_t *out, const char **pubsub_out) {
  if (plen > 0)
    memcpy(w, pubsub, plen);
  w[plen] = 0;
  *pubsub_out = (const char *)w;
  w += plen + 1;
  ld_waku_message_init(out);
  if (msg->content_topic_len > 0)
    memcpy(w, msg->content_topic, msg->content_topic_len);
  w[msg->content_topic_len] = 0;
  out->content_topic = (const char *)w;
  out->content_topic_len = msg->content_topic_len;
  w += msg->content_topic_len + 1;
  if (msg->payload_len > 0) {
    memcpy(w, msg->payload, msg->payload_len);
    out->payload = w;
    out->payload_len = msg->payload_len;
    w += msg->payload_len;
  }
  if (msg->meta_len > 0) {
    memcpy(w, msg->meta, msg->meta_len);
    out->meta = w;
    out->meta_len = msg->meta_len;
  }
  out->version = msg->version;
  out->timestamp = msg->timestamp;
}

/* ---- rows of a query result ------------------------------------------------------------------ */

/* Row data lives in chunks of at least this many bytes: a 100-row answer takes a few
 * allocations instead of one per row (and the loop that frees them a few frees). */
#define ROWS_CHUNK_BYTES 16384

struct ld_archive_chunk {
  struct ld_archive_chunk *next;
  size_t used, cap;
  uint8_t data[];
};

/* `bytes` of row data from the newest chunk, or a new one; NULL without memory. */
static uint8_t *rows_alloc(ld_archive_rows_t *r, size_t bytes) {
  ld_archive_chunk_t *c = r->chunks;
  if (c == NULL || c->cap - c->used < bytes) {
    size_t cap = bytes > ROWS_CHUNK_BYTES ? bytes : ROWS_CHUNK_BYTES;
    c = malloc(sizeof *c + cap);
    if (c == NULL)
      return NULL;
    c->next = r->chunks;
    c->used = 0;
    c->cap = cap;
    r->chunks = c;
  }
  uint8_t *p = c->data + c->used;
  c->used += bytes;
  return p;
}

static int rows_grow(ld_archive_rows_t *r) {
  if (r->n < r->cap)
    return 0;
  size_t cap = r->cap ? r->cap * 2 : 32;
  ld_archive_row_t *rows = realloc(r->rows, cap * sizeof *rows);
  if (rows == NULL)
    return LD_ERR_NOMEM;
  r->rows = rows;
  r->cap = cap;
  return 0;
}

int ld_archive_rows_add(ld_archive_rows_t *r, const uint8_t hash[LD_WAKU_HASH_LEN],
                        bool include_data, const char *pubsub_topic, size_t pubsub_topic_len,
                        const ld_waku_message_t *msg) {
  if (rows_grow(r) != 0)
    return LD_ERR_NOMEM;
  ld_archive_row_t *row = &r->rows[r->n];
  memset(row, 0, sizeof *row);
  memcpy(row->hash, hash, LD_WAKU_HASH_LEN);
  ld_waku_message_init(&row->msg);
  if (include_data) {
    uint8_t *block = rows_alloc(r, block_size(pubsub_topic_len, msg));
    if (block == NULL)
      return LD_ERR_NOMEM;
    fill_block(block, pubsub_topic, pubsub_topic_len, msg, &row->msg, &row->pubsub_topic);
  }
  r->n++;
  return 0;
}

int ld_archive_rows_add_key(ld_archive_rows_t *r, const uint8_t hash[LD_WAKU_HASH_LEN],
                            int64_t timestamp, const char *pubsub_topic, size_t pubsub_topic_len) {
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.timestamp = timestamp;
  return ld_archive_rows_add(r, hash, true, pubsub_topic, pubsub_topic_len, &m);
}

void ld_archive_rows_clear(ld_archive_rows_t *r) {
  while (r->chunks != NULL) {
    ld_archive_chunk_t *next = r->chunks->next;
    free(r->chunks);
    r->chunks = next;
  }
  free(r->rows);
  memset(r, 0, sizeof *r);
}

static int row_cmp_up(const void *x, const void *y) {
  const ld_archive_row_t *a = x, *b = y;
  return ld_archive_key_cmp(a->msg.timestamp, a->hash, b->msg.timestamp, b->hash);
}

static int row_cmp_down(const void *x, const void *y) {
  return row_cmp_up(y, x);
}

int ld_archive_rows_sort(ld_archive_rows_t *r, bool ascending, size_t keep) {
  if (r->n > 1)
    qsort(r->rows, r->n, sizeof *r->rows, ascending ? row_cmp_up : row_cmp_down);
  if (r->n > keep)
    r->n = keep; /* the dropped rows' data goes with the container */
  return 0;
}

int ld_archive_batch_add(ld_archive_batch_t *b, const char *pubsub_topic,
                         const ld_waku_message_t *msg, const uint8_t hash[LD_WAKU_HASH_LEN],
                         ld_archive_done_fn done, void *user_data) {
  if (b->n == b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 64;
    ld_archive_batch_row_t *rows = realloc(b->rows, cap * sizeof *rows);
    if (rows == NULL)
      return LD_ERR_NOMEM;
    b->rows = rows;
    b->cap = cap;
  }
  ld_archive_batch_row_t *row = &b->rows[b->n];
  memset(row, 0, sizeof *row);
  row->pubsub_topic_len = strlen(pubsub_topic);
  row->bytes = block_size(row->pubsub_topic_len, msg);
  row->block = malloc(row->bytes);
  if (row->block == NULL)
    return LD_ERR_NOMEM;
  fill_block(row->block, pubsub_topic, row->pubsub_topic_len, msg, &row->msg, &row->pubsub_topic);
  memcpy(row->hash, hash, LD_WAKU_HASH_LEN);
  row->done = done;
  row->user_data = user_data;
  b->bytes += row->bytes;
  b->n++;
  return 0;
}

void ld_archive_batch_clear(ld_archive_batch_t *b) {
  for (size_t i = 0; i < b->n; i++)
    free(b->rows[i].block);
  free(b->rows);
  memset(b, 0, sizeof *b);
}

void ld_archive_job_fail(ld_archive_job_t *job, int err, const char *fmt, ...) {
  job->err = err;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(job->why, sizeof job->why, fmt, ap);
  va_end(ap);
}

int ld_archive_key_cmp(int64_t ts_a, const uint8_t *hash_a, int64_t ts_b, const uint8_t *hash_b) {
  if (ts_a != ts_b)
    return ts_a < ts_b ? -1 : 1;
  return memcmp(hash_a, hash_b, LD_WAKU_HASH_LEN);
}

void ld_archive_driver_yield(void) {
  sched_yield();
}

void ld_archive_jobq_push(ld_archive_jobq_t *q, ld_archive_job_t *job) {
  job->dnext = NULL;
  if (q->tail != NULL)
    q->tail->dnext = job;
  else
    q->head = job;
  q->tail = job;
  q->n++;
}

ld_archive_job_t *ld_archive_jobq_pop(ld_archive_jobq_t *q) {
  ld_archive_job_t *job = q->head;
  if (job != NULL) {
    q->head = job->dnext;
    if (q->head == NULL)
      q->tail = NULL;
    q->n--;
    job->dnext = NULL;
  }
  return job;
}

void ld_archive_jobq_close(ld_archive_jobq_t *q, ld_archive_driver_t *d,
                           bool (*keep)(const ld_archive_job_t *job)) {
  ld_archive_jobq_t all = *q;
  memset(q, 0, sizeof *q);
  ld_archive_job_t *job;
  while ((job = ld_archive_jobq_pop(&all)) != NULL) {
    if (keep != NULL && keep(job)) {
      ld_archive_jobq_push(q, job);
      continue;
    }
    ld_archive_job_fail(job, LD_ERR_CLOSED, "archive closed");
    ld_archive_job_complete(d, job);
  }
}
