/* memory://: a bounded in-memory store (nwaku's queue driver). Rows are kept sorted by
 * (timestamp, hash) in a deque of pointers, with a hash index; beyond the capacity the oldest
 * rows go. Every job runs synchronously on the loop and completes on the next loop turn. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/hashmap.h"
#include "waku/archive/driver.h"

/* Bytes counted per row on top of its data (row record, index entry). */
#define MEM_ROW_OVERHEAD 128

typedef struct mem_row {
  int64_t ts;
  uint8_t hash[LD_WAKU_HASH_LEN];
  const char *pubsub_topic;
  size_t pubsub_topic_len;
  ld_waku_message_t msg;
  void *block;
  size_t bytes;
} mem_row_t;

typedef struct mem_driver {
  ld_archive_driver_t base;
  mem_row_t **slots; /* rows live in slots[head .. head + len), ascending */
  size_t head, len, cap;
  ld_hashmap_t *index; /* hash → mem_row_t* */
  size_t capacity;
  uint64_t bytes;
} mem_driver_t;

static int row_cmp(const mem_row_t *r, int64_t ts, const uint8_t *hash) {
  return ld_archive_key_cmp(r->ts, r->hash, ts, hash);
}

/* First position whose row is >= (ts, hash) (or > when `after`). */
static size_t bound(const mem_driver_t *m, int64_t ts, const uint8_t *hash, bool after) {
  size_t lo = m->head, hi = m->head + m->len;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int c = row_cmp(m->slots[mid], ts, hash);
    if (c < 0 || (after && c == 0))
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static void row_free(mem_driver_t *m, mem_row_t *r) {
  ld_hashmap_remove(m->index, r->hash, LD_WAKU_HASH_LEN);
  m->bytes -= r->bytes;
  free(r->block);
  free(r);
}

/* Removes the k oldest rows. */
static void drop_oldest(mem_driver_t *m, size_t k) {
  for (size_t i = 0; i < k; i++)
    row_free(m, m->slots[m->head + i]);
  m->head += k;
  m->len -= k;
  if (m->len == 0)
    m->head = 0;
}

/* Makes room for one more slot at the back. */
static int ensure_room(mem_driver_t *m) {
  if (m->head + m->len < m->cap)
    return 0;
  if (m->head > 0) {
    memmove(m->slots, m->slots + m->head, m->len * sizeof *m->slots);
    m->head = 0;
    return 0;
  }
  size_t cap = m->cap ? m->cap * 2 : 1024;
  mem_row_t **slots = realloc(m->slots, cap * sizeof *slots);
  if (slots == NULL)
    return LD_ERR_NOMEM;
  m->slots = slots;
  m->cap = cap;
  return 0;
}

/* Inserts at sorted position `pos`, shifting the shorter side. */
static int place(mem_driver_t *m, size_t pos, mem_row_t *r) {
  if (m->head > 0 && pos - m->head < m->len / 2) {
    memmove(m->slots + m->head - 1, m->slots + m->head, (pos - m->head) * sizeof *m->slots);
    m->head--;
    m->slots[pos - 1] = r;
    m->len++;
    return 0;
  }
  size_t off = pos - m->head;
  if (ensure_room(m) != 0)
    return LD_ERR_NOMEM;
  pos = m->head + off;
  memmove(m->slots + pos + 1, m->slots + pos, (m->len - off) * sizeof *m->slots);
  m->slots[pos] = r;
  m->len++;
  return 0;
}

static int insert_row(mem_driver_t *m, ld_archive_batch_row_t *br) {
  if (ld_hashmap_contains(m->index, br->hash, LD_WAKU_HASH_LEN))
    return 0;
  int64_t ts = br->msg.timestamp;
  if (m->len >= m->capacity) {
    if (row_cmp(m->slots[m->head], ts, br->hash) > 0)
      return LD_ERR_LIMIT; /* older than everything kept */
    drop_oldest(m, m->len - m->capacity + 1);
  }
  mem_row_t *r = calloc(1, sizeof *r);
  if (r == NULL)
    return LD_ERR_NOMEM;
  r->ts = ts;
  memcpy(r->hash, br->hash, LD_WAKU_HASH_LEN);
  r->pubsub_topic = br->pubsub_topic;
  r->pubsub_topic_len = br->pubsub_topic_len;
  r->msg = br->msg;
  r->block = br->block;
  r->bytes = br->bytes + MEM_ROW_OVERHEAD;
  if (ld_hashmap_put(m->index, r->hash, LD_WAKU_HASH_LEN, r, NULL) != 0 ||
      place(m, bound(m, ts, r->hash, false), r) != 0) {
    ld_hashmap_remove(m->index, r->hash, LD_WAKU_HASH_LEN);
    free(r);
    return LD_ERR_NOMEM;
  }
  br->block = NULL; /* the row owns it now */
  m->bytes += r->bytes;
  return 1;
}

static int mem_insert(ld_archive_driver_t *d, ld_archive_job_t *job) {
  mem_driver_t *m = (mem_driver_t *)d;
  for (size_t i = 0; i < job->batch.n; i++)
    job->batch.rows[i].result = insert_row(m, &job->batch.rows[i]);
  ld_archive_job_complete(d, job);
  return 0;
}

static bool topic_match(const ld_archive_query_t *q, const mem_row_t *r) {
  if (q->pubsub_topic != NULL && (strlen(q->pubsub_topic) != r->pubsub_topic_len ||
                                  memcmp(q->pubsub_topic, r->pubsub_topic, r->pubsub_topic_len)))
    return false;
  if (q->n_content_topics == 0)
    return true;
  for (size_t i = 0; i < q->n_content_topics; i++) {
    const char *ct = q->content_topics[i];
    if (strlen(ct) == r->msg.content_topic_len &&
        memcmp(ct, r->msg.content_topic, r->msg.content_topic_len) == 0)
      return true;
  }
  return false;
}

static bool row_match(const ld_archive_query_t *q, const mem_row_t *r) {
  if ((q->has_time_start && r->ts < q->time_start) || (q->has_time_end && r->ts > q->time_end))
    return false;
  return topic_match(q, r);
}

static int add_row(ld_archive_job_t *job, const mem_row_t *r) {
  return ld_archive_rows_add(&job->rows, r->hash, job->query.include_data, r->pubsub_topic,
                             r->pubsub_topic_len, &r->msg);
}

static int cmp_rows(const void *x, const void *y) {
  const mem_row_t *a = *(mem_row_t *const *)x, *b = *(mem_row_t *const *)y;
  return ld_archive_key_cmp(a->ts, a->hash, b->ts, b->hash);
}

/* Hash lookups: collect the matching rows, sort them, take the page. */
static int query_hashes(mem_driver_t *m, ld_archive_job_t *job, const mem_row_t *cursor) {
  const ld_archive_query_t *q = &job->query;
  mem_row_t *found[LD_ARCHIVE_MAX_HASHES];
  size_t n = 0;
  for (size_t i = 0; i < q->n_hashes && n < LD_ARCHIVE_MAX_HASHES; i++) {
    mem_row_t *r = ld_hashmap_get(m->index, q->hashes[i], LD_WAKU_HASH_LEN);
    if (r == NULL || !row_match(q, r))
      continue;
    if (cursor != NULL) {
      int c = row_cmp(r, cursor->ts, cursor->hash);
      if ((q->forward && c <= 0) || (!q->forward && c >= 0))
        continue;
    }
    bool dup = false;
    for (size_t j = 0; j < n && !dup; j++)
      dup = found[j] == r;
    if (!dup)
      found[n++] = r;
  }
  qsort(found, n, sizeof *found, cmp_rows);
  for (size_t k = 0; k < n && job->rows.n < q->limit; k++)
    if (add_row(job, found[q->forward ? k : n - 1 - k]) != 0)
      return LD_ERR_NOMEM;
  return 0;
}

static int query_scan(mem_driver_t *m, ld_archive_job_t *job, const mem_row_t *cursor) {
  static const uint8_t lo_hash[LD_WAKU_HASH_LEN];
  uint8_t hi_hash[LD_WAKU_HASH_LEN];
  memset(hi_hash, 0xff, sizeof hi_hash);
  const ld_archive_query_t *q = &job->query;
  size_t end = m->head + m->len;
  if (q->forward) {
    size_t i = q->has_time_start ? bound(m, q->time_start, lo_hash, false) : m->head;
    if (cursor != NULL) {
      size_t c = bound(m, cursor->ts, cursor->hash, true);
      i = c > i ? c : i;
    }
    for (; i < end && job->rows.n < q->limit; i++) {
      if (q->has_time_end && m->slots[i]->ts > q->time_end)
        break;
      if (row_match(q, m->slots[i]) && add_row(job, m->slots[i]) != 0)
        return LD_ERR_NOMEM;
    }
    return 0;
  }
  size_t i = q->has_time_end ? bound(m, q->time_end, hi_hash, true) : end;
  if (cursor != NULL) {
    size_t c = bound(m, cursor->ts, cursor->hash, false);
    i = c < i ? c : i;
  }
  for (; i > m->head && job->rows.n < q->limit; i--) {
    const mem_row_t *r = m->slots[i - 1];
    if (q->has_time_start && r->ts < q->time_start)
      break;
    if (row_match(q, r) && add_row(job, r) != 0)
      return LD_ERR_NOMEM;
  }
  return 0;
}

static int mem_query(ld_archive_driver_t *d, ld_archive_job_t *job) {
  mem_driver_t *m = (mem_driver_t *)d;
  const ld_archive_query_t *q = &job->query;
  const mem_row_t *cursor = NULL;
  if (q->has_cursor) {
    cursor = ld_hashmap_get(m->index, q->cursor, LD_WAKU_HASH_LEN);
    if (cursor == NULL) {
      ld_archive_job_fail(job, LD_ERR_NOT_FOUND, "cursor not found");
      ld_archive_job_complete(d, job);
      return 0;
    }
  }
  int rc = q->n_hashes > 0 ? query_hashes(m, job, cursor) : query_scan(m, job, cursor);
  if (rc != 0)
    ld_archive_job_fail(job, rc, "out of memory");
  ld_archive_job_complete(d, job);
  return 0;
}

static int mem_list_keys(ld_archive_driver_t *d, ld_archive_job_t *job) {
  static const uint8_t lo_hash[LD_WAKU_HASH_LEN];
  mem_driver_t *m = (mem_driver_t *)d;
  const ld_archive_query_t *q = &job->query;
  size_t i = bound(m, q->time_start, lo_hash, false), end = m->head + m->len;
  if (q->has_cursor) {
    size_t c = bound(m, job->ts, q->cursor, true);
    i = c > i ? c : i;
  }
  for (; i < end && job->rows.n < q->limit && m->slots[i]->ts <= q->time_end; i++) {
    const mem_row_t *r = m->slots[i];
    if (ld_archive_rows_add_key(&job->rows, r->hash, r->ts, r->pubsub_topic, r->pubsub_topic_len) !=
        0) {
      ld_archive_job_fail(job, LD_ERR_NOMEM, "out of memory");
      break;
    }
  }
  ld_archive_job_complete(d, job);
  return 0;
}

static int mem_count(ld_archive_driver_t *d, ld_archive_job_t *job) {
  job->value = ((mem_driver_t *)d)->len;
  ld_archive_job_complete(d, job);
  return 0;
}

static int mem_delete_older(ld_archive_driver_t *d, ld_archive_job_t *job) {
  static const uint8_t lo_hash[LD_WAKU_HASH_LEN];
  mem_driver_t *m = (mem_driver_t *)d;
  size_t k = bound(m, job->ts, lo_hash, false) - m->head;
  drop_oldest(m, k);
  job->value = k;
  ld_archive_job_complete(d, job);
  return 0;
}

static int mem_keep_newest(ld_archive_driver_t *d, ld_archive_job_t *job) {
  mem_driver_t *m = (mem_driver_t *)d;
  size_t k = m->len > job->n ? m->len - (size_t)job->n : 0;
  drop_oldest(m, k);
  job->value = k;
  ld_archive_job_complete(d, job);
  return 0;
}

static int mem_size(ld_archive_driver_t *d, ld_archive_job_t *job) {
  job->value = ((mem_driver_t *)d)->bytes;
  ld_archive_job_complete(d, job);
  return 0;
}

static void mem_close(ld_archive_driver_t *d, ld_archive_job_t *job) {
  ld_archive_job_complete(d, job);
}

static void mem_free(ld_archive_driver_t *d) {
  mem_driver_t *m = (mem_driver_t *)d;
  drop_oldest(m, m->len);
  ld_hashmap_free(m->index, NULL);
  free(m->slots);
  free(m);
}

static const ld_archive_driver_ops_t mem_ops = {
    .name = "memory",
    .max_batches_in_flight = 1,
    .max_batch_rows = 4096, /* inserted on the loop: keep a turn short */
    .insert = mem_insert,
    .query = mem_query,
    .count = mem_count,
    .delete_older_than = mem_delete_older,
    .keep_newest = mem_keep_newest,
    .size_bytes = mem_size,
    .list_keys = mem_list_keys,
    .close = mem_close,
    .free = mem_free,
};

int ld_archive_memory_open(const ld_archive_driver_t *env, const char *target,
                           ld_archive_job_t *open_job, ld_archive_driver_t **out) {
  (void)target;
  mem_driver_t *m = calloc(1, sizeof *m);
  if (m == NULL)
    return LD_ERR_NOMEM;
  m->base = *env;
  m->base.ops = &mem_ops;
  m->capacity = env->memory_capacity;
  m->index = ld_hashmap_new(1024);
  if (m->index == NULL) {
    free(m);
    return LD_ERR_NOMEM;
  }
  *out = &m->base;
  ld_archive_job_complete(&m->base, open_job);
  return 0;
}
