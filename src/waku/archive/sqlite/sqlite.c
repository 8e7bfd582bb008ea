/* sqlite://: the embedded driver. One writer thread owns the read-write connection and runs
 * every job but queries in order; queries wait in one queue for SQ_READERS reader threads, each
 * with its own read-only connection (WAL lets them read while the writer commits), so concurrent
 * store clients are not served one after another. An in-memory database has one connection, so
 * there the writer runs the queries too. The loop only queues jobs. Schema version 10 of nwaku
 * (table Message keyed by messageHash, index i_ts), WAL journal, every statement prepared and
 * parameterised. Hash lookups find rows by rowid through the writer's in-memory key map
 * (keymap.h), and through the messageHash index when the map cannot answer. */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "base/sq.h"

#include "base/buf.h"
#include "base/error.h"
#include "base/log.h"
#include "waku/archive/driver.h"
#include "waku/archive/sqlite/keymap.h"
#include "waku/archive/sqlite/sqlite_schema.h"

#define LOG_TOPIC "archive"

/* Prepared query shapes kept per connection. */
#define SQ_CACHE_SLOTS 32
/* Page cache of the connection, KiB. */
#define SQ_CACHE_KIB 65536
/* WAL pages between checkpoints: a page rewritten by several batches is copied back once. */
#define SQ_CHECKPOINT_PAGES 20000
/* Reads map the file instead of copying pages through read(2). */
#define SQ_MMAP_BYTES (1ll << 30)
/* Query threads of a file database (one per core of the machines this runs on). */
#define SQ_READERS 2
/* Idle time after a write that makes the writer copy the WAL back into the database file:
 * readers then take every page from the mapped file instead of searching and reading the log. */
#define SQ_IDLE_CHECKPOINT_MS 50

typedef struct sq_cached {
  char *sql;
  sqlite3_stmt *st;
  uint64_t used;
} sq_cached_t;

/* Jobs waiting for one thread (the writer) or a pool of threads (the readers). */
typedef struct sq_queue {
  uv_mutex_t mu;
  uv_cond_t cv;
  ld_archive_jobq_t jobs;
  bool closing;
  unsigned waiting; /* threads asleep on cv */
} sq_queue_t;

typedef struct sq_driver {
  ld_archive_driver_t base;
  char *path;
  uv_thread_t thread;
  sq_queue_t *q;     /* the queue this thread serves */
  sq_queue_t wq, rq; /* writer only: its queue and the readers' shared one */
  /* worker thread only */
  sqlite3 *db;
  sqlite3_stmt *insert_st, *cursor_st;
  sq_cached_t cache[SQ_CACHE_SLOTS];
  uint64_t cache_clock;
  /* query threads (writer only): each is an sq_driver_t with its own connection; they take
   * queries from rq in turn, so a query waits for the first free reader */
  struct sq_driver *readers[SQ_READERS];
  size_t n_readers;
  bool is_reader;
  bool wal_dirty;        /* writer: WAL frames written since the last checkpoint */
  ld_sq_keymap_t keymap; /* writer: hash → rowid candidates, shared with the readers */
  ld_sq_keymap_t *keys;  /* the writer's key map, for every thread */
  int64_t data_version;  /* writer: PRAGMA data_version when the map was built */
} sq_driver_t;

/* ---- statements ---------------------------------------------------------------------------- */

static int db_fail(sq_driver_t *s, ld_archive_job_t *job, const char *what) {
  ld_archive_job_fail(job, LD_ERR_DB, "sqlite %s: %s", what, sqlite3_errmsg(s->db));
  return LD_ERR_DB;
}

/* A prepared statement for `sql` from the cache (reset, bindings cleared), or NULL. */
static sqlite3_stmt *cached(sq_driver_t *s, const char *sql) {
  sq_cached_t *victim = &s->cache[0];
  for (size_t i = 0; i < SQ_CACHE_SLOTS; i++) {
    sq_cached_t *c = &s->cache[i];
    if (c->sql != NULL && strcmp(c->sql, sql) == 0) {
      c->used = ++s->cache_clock;
      sqlite3_reset(c->st);
      sqlite3_clear_bindings(c->st);
      return c->st;
    }
    if (c->used < victim->used)
      victim = c;
  }
  sqlite3_stmt *st = NULL;
  char *copy = strdup(sql);
  if (copy == NULL ||
      sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK) {
    free(copy);
    return NULL;
  }
  sqlite3_finalize(victim->st);
  free(victim->sql);
  victim->sql = copy;
  victim->st = st;
  victim->used = ++s->cache_clock;
  return st;
}

static void cache_clear(sq_driver_t *s) {
  for (size_t i = 0; i < SQ_CACHE_SLOTS; i++) {
    sqlite3_finalize(s->cache[i].st);
    free(s->cache[i].sql);
    memset(&s->cache[i], 0, sizeof s->cache[i]);
  }
}

static int exec(sq_driver_t *s, const char *sql) {
  return sqlite3_exec(s->db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : LD_ERR_DB;
}

/* Runs a cached statement that returns at most one integer (0 when no row). */
static int scalar(sq_driver_t *s, const char *sql, int64_t arg, bool has_arg, int64_t *out) {
  sqlite3_stmt *st = cached(s, sql);
  if (st == NULL)
    return LD_ERR_DB;
  if (has_arg)
    sqlite3_bind_int64(st, 1, arg);
  int rc = sqlite3_step(st);
  *out = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
  sqlite3_reset(st);
  return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : LD_ERR_DB;
}

/* ---- the key map --------------------------------------------------------------------------- */

/* Fills `t` with every row's entry: 0, or why the map cannot be made (for the log). */
static const char *keys_fill(sq_driver_t *s, ld_sq_keytab_t *t) {
  int64_t rows = 0;
  if (scalar(s, "SELECT count(*) FROM Message", 0, false, &rows) != 0)
    return sqlite3_errmsg(s->db);
  int rc = ld_sq_keytab_init(t, (size_t)rows);
  if (rc != 0)
    return rc == LD_ERR_LIMIT ? "too many messages to map" : "out of memory";
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(s->db, "SELECT rowid, messageHash FROM Message", -1, &st, NULL) !=
      SQLITE_OK)
    return sqlite3_errmsg(s->db); /* no rowid: a table written by nwaku */
  while (rc == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    rc = 0;
    if (sqlite3_column_bytes(st, 1) == LD_WAKU_HASH_LEN)
      rc = ld_sq_keytab_put(t, sqlite3_column_blob(st, 1), sqlite3_column_int64(st, 0));
  }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE          ? NULL
         : rc == LD_ERR_INVALID_ARG ? "a rowid out of range"
         : rc == LD_ERR_LIMIT       ? "too many messages to map"
         : rc == LD_ERR_NOMEM       ? "out of memory"
                                    : sqlite3_errmsg(s->db);
}

/* Writer: the key map built anew from every row. A table without rowids (written by nwaku) or a
 * failure leaves it unusable, and lookups use the messageHash index. */
static void keys_rebuild(sq_driver_t *s) {
  int64_t version = 0;
  if (scalar(s, "PRAGMA data_version", 0, false, &version) == 0)
    s->data_version = version;
  ld_sq_keytab_t t;
  const char *why = keys_fill(s, &t);
  if (why == NULL) {
    ld_sq_keymap_replace(&s->keymap, &t);
    return;
  }
  ld_sq_keytab_free(&t);
  ld_sq_keymap_invalidate(&s->keymap);
  LD_INFO(LOG_TOPIC, "sqlite: hash lookups use the messageHash index (%s)", why);
}

/* Writer, before a write: another connection that wrote to the file since the map was built
 * makes the writer rebuild it. */
static void keys_follow_other_writers(sq_driver_t *s) {
  int64_t version;
  if (scalar(s, "PRAGMA data_version", 0, false, &version) == 0 && version != s->data_version)
    keys_rebuild(s);
}

/* Writer, after a committed delete of n rows. */
static void keys_deleted(sq_driver_t *s, uint64_t n) {
  if (ld_sq_keymap_note_deleted(&s->keymap, n))
    keys_rebuild(s);
}

/* ---- inserts ------------------------------------------------------------------------------- */

static void bind_blob(sqlite3_stmt *st, int i, const void *p, size_t n) {
  sqlite3_bind_blob64(st, i, n > 0 ? p : "", n, SQLITE_STATIC);
}

/* 1 stored, 0 duplicate, LD_ERR_TOO_LARGE for a row SQLite refuses alone, LD_ERR_DB otherwise. */
static int insert_one(sq_driver_t *s, const ld_archive_batch_row_t *r) {
  sqlite3_stmt *st = s->insert_st;
  sqlite3_reset(st);
  bind_blob(st, 1, r->hash, LD_WAKU_HASH_LEN);
  bind_blob(st, 2, r->pubsub_topic, r->pubsub_topic_len);
  bind_blob(st, 3, r->msg.content_topic, r->msg.content_topic_len);
  bind_blob(st, 4, r->msg.payload, r->msg.payload_len);
  sqlite3_bind_int64(st, 5, r->msg.version);
  sqlite3_bind_int64(st, 6, r->msg.timestamp);
  if (r->msg.meta_len > 0)
    bind_blob(st, 7, r->msg.meta, r->msg.meta_len);
  else
    sqlite3_bind_null(st, 7);
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc == SQLITE_DONE)
    return sqlite3_changes(s->db) > 0 ? 1 : 0;
  return rc == SQLITE_TOOBIG ? LD_ERR_TOO_LARGE : LD_ERR_DB;
}

typedef struct keyed_row {
  const uint8_t *hash;
  ld_archive_batch_row_t *row;
} keyed_row_t;

static int by_hash(const void *x, const void *y) {
  return memcmp(((const keyed_row_t *)x)->hash, ((const keyed_row_t *)y)->hash, LD_WAKU_HASH_LEN);
}

/* Rows in key order: consecutive inserts then walk the table's pages in order. */
static keyed_row_t *key_order(ld_archive_batch_t *b) {
  keyed_row_t *order = malloc((b->n + 1) * sizeof *order);
  if (order == NULL)
    return NULL;
  for (size_t i = 0; i < b->n; i++)
    order[i] = (keyed_row_t){b->rows[i].hash, &b->rows[i]};
  qsort(order, b->n, sizeof *order, by_hash);
  return order;
}

static void run_insert(sq_driver_t *s, ld_archive_job_t *job) {
  keyed_row_t *order = key_order(&job->batch);
  ld_sq_keyrow_t *added = malloc((job->batch.n + 1) * sizeof *added);
  size_t n_added = 0;
  if (order == NULL || added == NULL) {
    ld_archive_job_fail(job, LD_ERR_NOMEM, "out of memory");
    goto done;
  }
  keys_follow_other_writers(s);
  if (exec(s, "BEGIN IMMEDIATE") != 0) {
    db_fail(s, job, "begin");
    goto done;
  }
  for (size_t i = 0; i < job->batch.n; i++) {
    ld_archive_batch_row_t *row = order[i].row;
    int rc = insert_one(s, row);
    if (rc == LD_ERR_DB) {
      db_fail(s, job, "insert");
      exec(s, "ROLLBACK");
      goto done;
    }
    row->result = rc;
    if (rc == 1)
      added[n_added++] = (ld_sq_keyrow_t){row->hash, sqlite3_last_insert_rowid(s->db)};
  }
  if (exec(s, "COMMIT") != 0) {
    db_fail(s, job, "commit");
    exec(s, "ROLLBACK");
    goto done;
  }
  /* before the batch is acknowledged: a lookup after the acknowledgement finds its rows */
  if (ld_sq_keymap_put(&s->keymap, added, n_added) != 0)
    LD_WARN(LOG_TOPIC, "sqlite: hash lookups use the messageHash index from now on (key map)");
done:
  free(added);
  free(order);
}

/* ---- queries ------------------------------------------------------------------------------- */

/* Rows a hash lookup asks for by rowid: the key map's candidates, sorted by rowid. */
typedef struct sq_rowids {
  const ld_sq_candidate_t *c;
  size_t n;
} sq_rowids_t;

/* The column of the rowid in a query by rowid. */
static int rowid_column(const ld_archive_query_t *q, bool with_ts) {
  return q->include_data ? 7 : with_ts ? 2 : 1;
}

/* The WHERE/ORDER shape of a query; values are bound, never written into the text. A lookup by
 * rowid (by_rowid) has LD_ARCHIVE_MAX_HASHES rowid slots (the unused ones stay NULL) and returns
 * the rowid after the other columns. */
static int build_sql(const ld_archive_query_t *q, bool with_ts, bool by_rowid, ld_buf_t *b) {
  const char *cols = q->include_data
                         ? "SELECT messageHash, pubsubTopic, contentTopic, payload, version, "
                           "timestamp, meta"
                     : with_ts ? "SELECT messageHash, timestamp"
                               : "SELECT messageHash";
  const char *from = by_rowid ? ", rowid FROM Message" : " FROM Message";
  const char *sep = " WHERE ";
  int rc = ld_buf_append(b, cols, strlen(cols));
  rc |= ld_buf_append(b, from, strlen(from));
#define ADD(text)                                                                                  \
  do {                                                                                             \
    rc |= ld_buf_append(b, sep, strlen(sep));                                                      \
    rc |= ld_buf_append(b, text, strlen(text));                                                    \
    sep = " AND ";                                                                                 \
  } while (0)
  if (q->has_cursor)
    ADD(q->forward ? "(timestamp, messageHash) > (?, ?)" : "(timestamp, messageHash) < (?, ?)");
  if (q->pubsub_topic != NULL)
    ADD("pubsubTopic = ?");
  if (q->n_content_topics > 0) {
    ADD("contentTopic IN (?");
    for (size_t i = 1; i < q->n_content_topics; i++)
      rc |= ld_buf_append(b, ", ?", 3);
    rc |= ld_buf_append(b, ")", 1);
  }
  if (q->has_time_start)
    ADD("timestamp >= ?");
  if (q->has_time_end)
    ADD("timestamp <= ?");
  if (q->n_hashes > 0) {
    ADD(by_rowid ? "rowid IN (?" : "messageHash IN (?");
    for (size_t i = 1; i < (by_rowid ? LD_ARCHIVE_MAX_HASHES : q->n_hashes); i++)
      rc |= ld_buf_append(b, ", ?", 3);
    rc |= ld_buf_append(b, ")", 1);
  }
#undef ADD
  /* hash lookups (≤ 100 rows) are sorted by the caller, without SQLite's sorter */
  const char *order = q->n_hashes > 0 ? ""
                      : q->forward    ? " ORDER BY timestamp ASC, messageHash ASC LIMIT ?"
                                      : " ORDER BY timestamp DESC, messageHash DESC LIMIT ?";
  rc |= ld_buf_append(b, order, strlen(order) + 1);
  return rc != 0 ? LD_ERR_NOMEM : 0;
}

static void bind_query(sqlite3_stmt *st, const ld_archive_query_t *q, int64_t cursor_ts,
                       const sq_rowids_t *by_rowid) {
  int i = 1;
  if (q->has_cursor) {
    sqlite3_bind_int64(st, i++, cursor_ts);
    bind_blob(st, i++, q->cursor, LD_WAKU_HASH_LEN);
  }
  if (q->pubsub_topic != NULL)
    bind_blob(st, i++, q->pubsub_topic, strlen(q->pubsub_topic));
  for (size_t k = 0; k < q->n_content_topics; k++)
    bind_blob(st, i++, q->content_topics[k], strlen(q->content_topics[k]));
  if (q->has_time_start)
    sqlite3_bind_int64(st, i++, q->time_start);
  if (q->has_time_end)
    sqlite3_bind_int64(st, i++, q->time_end);
  for (size_t k = 0; by_rowid != NULL && k < by_rowid->n; k++)
    sqlite3_bind_int64(st, i++, by_rowid->c[k].rowid);
  for (size_t k = 0; by_rowid == NULL && k < q->n_hashes; k++)
    bind_blob(st, i++, q->hashes[k], LD_WAKU_HASH_LEN);
  if (q->n_hashes == 0)
    sqlite3_bind_int64(st, i, q->limit);
}

/* Appends the current row; with_ts keeps the timestamp of a hash-only row (for merging). */
static int read_row(sqlite3_stmt *st, ld_archive_job_t *job, bool with_ts) {
  if (sqlite3_column_bytes(st, 0) != LD_WAKU_HASH_LEN)
    return 0; /* a malformed key (not written by us) is skipped */
  const uint8_t *hash = sqlite3_column_blob(st, 0);
  if (!job->query.include_data) {
    int rc = ld_archive_rows_add(&job->rows, hash, false, NULL, 0, NULL);
    if (rc == 0 && with_ts)
      job->rows.rows[job->rows.n - 1].msg.timestamp = sqlite3_column_int64(st, 1);
    return rc;
  }
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  const void *ps = sqlite3_column_blob(st, 1);
  size_t ps_len = (size_t)sqlite3_column_bytes(st, 1);
  m.content_topic = sqlite3_column_blob(st, 2);
  m.content_topic_len = (size_t)sqlite3_column_bytes(st, 2);
  m.payload = sqlite3_column_blob(st, 3);
  m.payload_len = (size_t)sqlite3_column_bytes(st, 3);
  m.version = (uint32_t)sqlite3_column_int64(st, 4);
  m.timestamp = sqlite3_column_int64(st, 5);
  m.meta = sqlite3_column_blob(st, 6);
  m.meta_len = (size_t)sqlite3_column_bytes(st, 6);
  return ld_archive_rows_add(&job->rows, hash, true, ps, ps_len, &m);
}

/* The timestamp of the cursor's row: 0, LD_ERR_NOT_FOUND or LD_ERR_DB. */
static int cursor_ts(sq_driver_t *s, const uint8_t *hash, int64_t *ts) {
  sqlite3_stmt *st = s->cursor_st;
  sqlite3_reset(st);
  bind_blob(st, 1, hash, LD_WAKU_HASH_LEN);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    *ts = sqlite3_column_int64(st, 0);
  sqlite3_reset(st);
  if (rc == SQLITE_ROW)
    return 0;
  return rc == SQLITE_DONE ? LD_ERR_NOT_FOUND : LD_ERR_DB;
}

/* A row found by rowid is one asked for: a candidate with its rowid names the row's hash (the
 * rowid may belong to another message than the map's entry had in mind). */
static bool asked_for(sqlite3_stmt *st, int rowid_col, const ld_archive_query_t *q,
                      const sq_rowids_t *r) {
  if (sqlite3_column_bytes(st, 0) != LD_WAKU_HASH_LEN)
    return false;
  const uint8_t *hash = sqlite3_column_blob(st, 0);
  int64_t rowid = sqlite3_column_int64(st, rowid_col);
  size_t lo = 0, hi = r->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (r->c[mid].rowid < rowid)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (; lo < r->n && r->c[lo].rowid == rowid; lo++)
    if (memcmp(q->hashes[r->c[lo].hash_index], hash, LD_WAKU_HASH_LEN) == 0)
      return true;
  return false;
}

/* Runs one statement of query shape `q` (hashes by rowid when by_rowid is not NULL) and appends
 * its rows to the job. */
static int run_one(sq_driver_t *s, ld_archive_job_t *job, const ld_archive_query_t *q, int64_t ts,
                   bool with_ts, const sq_rowids_t *by_rowid) {
  ld_buf_t sql;
  ld_buf_init(&sql);
  sqlite3_stmt *st =
      build_sql(q, with_ts, by_rowid != NULL, &sql) == 0 ? cached(s, (const char *)sql.data) : NULL;
  ld_buf_clear(&sql);
  if (st == NULL)
    return db_fail(s, job, "prepare");
  bind_query(st, q, ts, by_rowid);
  int rowid_col = rowid_column(q, with_ts);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    if ((by_rowid == NULL || asked_for(st, rowid_col, q, by_rowid)) &&
        read_row(st, job, with_ts) != 0) {
      sqlite3_reset(st);
      ld_archive_job_fail(job, LD_ERR_NOMEM, "out of memory");
      return LD_ERR_NOMEM;
    }
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? 0 : db_fail(s, job, "query");
}

static bool seen_before(const ld_archive_query_t *q, size_t i) {
  for (size_t k = 0; k < i; k++)
    if (strcmp(q->content_topics[k], q->content_topics[i]) == 0)
      return true;
  return false;
}

/* Puts rows gathered by several walks (or unordered) in query order and keeps the page. */
static void sort_rows(ld_archive_job_t *job) {
  const ld_archive_query_t *q = &job->query;
  if (ld_archive_rows_sort(&job->rows, q->forward, q->limit) != 0) {
    ld_archive_job_fail(job, LD_ERR_NOMEM, "out of memory");
    return;
  }
  for (size_t i = 0; !q->include_data && i < job->rows.n; i++)
    job->rows.rows[i].msg.timestamp = 0;
}

/* Several content topics: one indexed walk per topic (contentTopic, timestamp), merged. A single
 * statement with IN (…) would read every row of those topics to sort them. */
static void run_merged(sq_driver_t *s, ld_archive_job_t *job, int64_t ts) {
  const ld_archive_query_t *q = &job->query;
  ld_archive_query_t one = *q;
  one.n_content_topics = 1;
  for (size_t i = 0; i < q->n_content_topics; i++) {
    if (seen_before(q, i))
      continue;
    one.content_topics = &q->content_topics[i];
    if (run_one(s, job, &one, ts, true, NULL) != 0)
      return;
  }
  sort_rows(job);
}

static int cmp_rowid(const void *x, const void *y) {
  int64_t a = ((const ld_sq_candidate_t *)x)->rowid, b = ((const ld_sq_candidate_t *)y)->rowid;
  return a < b ? -1 : a > b;
}

/* A hash lookup through the key map: one B-tree descent per hash instead of two. Returns 0 (the
 * rows are in the job), LD_ERR_UNSUPPORTED when the map cannot answer (unusable, or more
 * candidates than rowid slots) and nothing was done, or the error the job failed with. */
static int run_by_rowid(sq_driver_t *s, ld_archive_job_t *job, int64_t ts) {
  const ld_archive_query_t *q = &job->query;
  ld_sq_candidate_t c[LD_ARCHIVE_MAX_HASHES];
  sq_rowids_t r = {c, 0};
  if (ld_sq_keymap_find(s->keys, q->hashes, q->n_hashes, c, LD_ARCHIVE_MAX_HASHES, &r.n) != 0)
    return LD_ERR_UNSUPPORTED;
  if (r.n == 0)
    return 0; /* none of them is stored */
  qsort(c, r.n, sizeof *c, cmp_rowid);
  return run_one(s, job, q, ts, true, &r);
}

static void run_query(sq_driver_t *s, ld_archive_job_t *job) {
  const ld_archive_query_t *q = &job->query;
  int64_t ts = 0;
  int rc = q->has_cursor ? cursor_ts(s, q->cursor, &ts) : 0;
  if (rc == LD_ERR_NOT_FOUND) {
    ld_archive_job_fail(job, rc, "cursor not found");
    return;
  }
  if (rc != 0) {
    db_fail(s, job, "cursor lookup");
    return;
  }
  if (q->n_hashes > 0) {
    rc = run_by_rowid(s, job, ts);
    if (rc == LD_ERR_UNSUPPORTED)
      rc = run_one(s, job, q, ts, true, NULL);
    if (rc == 0)
      sort_rows(job);
  } else if (q->n_content_topics > 1) {
    run_merged(s, job, ts);
  } else {
    run_one(s, job, q, ts, false, NULL);
  }
}

/* The keys of a time range after the resume key, through the (timestamp, messageHash) order of
 * the index i_ts. */
static void run_list_keys(sq_driver_t *s, ld_archive_job_t *job) {
  const ld_archive_query_t *q = &job->query;
  sqlite3_stmt *st =
      cached(s, q->has_cursor ? "SELECT messageHash, timestamp, pubsubTopic FROM Message "
                                "WHERE timestamp >= ? AND timestamp <= ? AND "
                                "(timestamp, messageHash) > (?, ?) "
                                "ORDER BY timestamp ASC, messageHash ASC LIMIT ?"
                              : "SELECT messageHash, timestamp, pubsubTopic FROM Message "
                                "WHERE timestamp >= ? AND timestamp <= ? "
                                "ORDER BY timestamp ASC, messageHash ASC LIMIT ?");
  if (st == NULL) {
    db_fail(s, job, "prepare");
    return;
  }
  int i = 1;
  sqlite3_bind_int64(st, i++, q->time_start);
  sqlite3_bind_int64(st, i++, q->time_end);
  if (q->has_cursor) {
    sqlite3_bind_int64(st, i++, job->ts);
    bind_blob(st, i++, q->cursor, LD_WAKU_HASH_LEN);
  }
  sqlite3_bind_int64(st, i, q->limit);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const uint8_t *hash = sqlite3_column_blob(st, 0);
    if (sqlite3_column_bytes(st, 0) != LD_WAKU_HASH_LEN)
      continue; /* a malformed key (not written by us) is skipped */
    const char *topic = sqlite3_column_blob(st, 2);
    size_t topic_len = (size_t)sqlite3_column_bytes(st, 2);
    if (ld_archive_rows_add_key(&job->rows, hash, sqlite3_column_int64(st, 1), topic, topic_len) !=
        0) {
      sqlite3_reset(st);
      ld_archive_job_fail(job, LD_ERR_NOMEM, "out of memory");
      return;
    }
  }
  sqlite3_reset(st);
  if (rc != SQLITE_DONE)
    db_fail(s, job, "list keys");
}

/* ---- maintenance --------------------------------------------------------------------------- */

static void run_delete_older(sq_driver_t *s, ld_archive_job_t *job) {
  int64_t unused;
  keys_follow_other_writers(s);
  if (scalar(s, "DELETE FROM Message WHERE timestamp < ?", job->ts, true, &unused) != 0) {
    db_fail(s, job, "delete");
    return;
  }
  job->value = (uint64_t)sqlite3_changes64(s->db);
  keys_deleted(s, job->value);
}

static void run_keep_newest(sq_driver_t *s, ld_archive_job_t *job) {
  keys_follow_other_writers(s);
  if (job->n == 0) {
    if (exec(s, "DELETE FROM Message") != 0)
      db_fail(s, job, "delete");
    job->value = (uint64_t)sqlite3_changes64(s->db);
    keys_deleted(s, job->value);
    return;
  }
  sqlite3_stmt *st = cached(s, "SELECT timestamp, messageHash FROM Message "
                               "ORDER BY timestamp DESC, messageHash DESC LIMIT 1 OFFSET ?");
  if (st == NULL) {
    db_fail(s, job, "prepare");
    return;
  }
  sqlite3_bind_int64(st, 1, (int64_t)(job->n - 1));
  int rc = sqlite3_step(st);
  if (rc != SQLITE_ROW) {
    if (rc != SQLITE_DONE)
      db_fail(s, job, "select");
    sqlite3_reset(st);
    return; /* fewer rows than n: nothing to delete */
  }
  int64_t ts = sqlite3_column_int64(st, 0);
  uint8_t hash[LD_WAKU_HASH_LEN] = {0};
  if (sqlite3_column_bytes(st, 1) == LD_WAKU_HASH_LEN)
    memcpy(hash, sqlite3_column_blob(st, 1), LD_WAKU_HASH_LEN);
  sqlite3_reset(st);
  sqlite3_stmt *del = cached(s, "DELETE FROM Message WHERE (timestamp, messageHash) < (?, ?)");
  if (del == NULL) {
    db_fail(s, job, "prepare");
    return;
  }
  sqlite3_bind_int64(del, 1, ts);
  bind_blob(del, 2, hash, LD_WAKU_HASH_LEN);
  rc = sqlite3_step(del);
  sqlite3_reset(del);
  if (rc != SQLITE_DONE) {
    db_fail(s, job, "delete");
    return;
  }
  job->value = (uint64_t)sqlite3_changes64(s->db);
  keys_deleted(s, job->value);
}

/* Bytes of the pages in use (freed pages are reused, so they do not count). */
static void run_size(sq_driver_t *s, ld_archive_job_t *job) {
  int64_t pages, free_pages, page_size;
  if (scalar(s, "PRAGMA page_count", 0, false, &pages) != 0 ||
      scalar(s, "PRAGMA freelist_count", 0, false, &free_pages) != 0 ||
      scalar(s, "PRAGMA page_size", 0, false, &page_size) != 0) {
    db_fail(s, job, "size");
    return;
  }
  job->value = (uint64_t)((pages - free_pages) * page_size);
}

static void run_count(sq_driver_t *s, ld_archive_job_t *job) {
  int64_t n;
  if (scalar(s, "SELECT COUNT(*) FROM Message", 0, false, &n) != 0)
    db_fail(s, job, "count");
  job->value = (uint64_t)n;
}

/* ---- open and close ------------------------------------------------------------------------ */

static void run_open(sq_driver_t *s, ld_archive_job_t *job) {
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(s->path, &s->db, flags, NULL) != SQLITE_OK) {
    ld_archive_job_fail(job, LD_ERR_DB, "sqlite open %s: %s", s->path,
                        s->db ? sqlite3_errmsg(s->db) : "out of memory");
    return;
  }
  sqlite3_busy_timeout(s->db, (int)s->base.request_timeout_ms);
  char pragmas[256];
  snprintf(pragmas, sizeof pragmas,
           "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA cache_size = -%d; "
           "PRAGMA wal_autocheckpoint = %d; PRAGMA mmap_size = %lld",
           SQ_CACHE_KIB, SQ_CHECKPOINT_PAGES, SQ_MMAP_BYTES);
  if (exec(s, pragmas) != 0) {
    db_fail(s, job, "pragmas");
    return;
  }
  char why[LD_ARCHIVE_WHY_LEN];
  if (ld_archive_sqlite_migrate(s->db, why, sizeof why) != 0) {
    ld_archive_job_fail(job, LD_ERR_DB, "sqlite migration: %s", why);
    return;
  }
  if (sqlite3_prepare_v3(s->db,
                         "INSERT INTO Message (messageHash, pubsubTopic, contentTopic, payload, "
                         "version, timestamp, meta) VALUES (?, ?, ?, ?, ?, ?, ?) "
                         "ON CONFLICT (messageHash) DO NOTHING",
                         -1, SQLITE_PREPARE_PERSISTENT, &s->insert_st, NULL) != SQLITE_OK ||
      sqlite3_prepare_v3(s->db, "SELECT timestamp FROM Message WHERE messageHash = ?", -1,
                         SQLITE_PREPARE_PERSISTENT, &s->cursor_st, NULL) != SQLITE_OK) {
    db_fail(s, job, "prepare");
    return;
  }
  keys_rebuild(s);
}

static void db_close(sq_driver_t *s) {
  cache_clear(s);
  sqlite3_finalize(s->insert_st);
  sqlite3_finalize(s->cursor_st);
  s->insert_st = s->cursor_st = NULL;
  if (s->db != NULL && sqlite3_close(s->db) != SQLITE_OK)
    LD_WARN(LOG_TOPIC, "sqlite close: %s", sqlite3_errmsg(s->db));
  s->db = NULL;
}

/* ---- the worker ---------------------------------------------------------------------------- */

/* A reader's read-only connection, opened at its first query (the writer has created and
 * migrated the database by then). */
static int reader_open(sq_driver_t *s, ld_archive_job_t *job) {
  int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(s->path, &s->db, flags, NULL) != SQLITE_OK) {
    ld_archive_job_fail(job, LD_ERR_DB, "sqlite open %s for reading: %s", s->path,
                        s->db ? sqlite3_errmsg(s->db) : "out of memory");
    sqlite3_close(s->db);
    s->db = NULL;
    return LD_ERR_DB;
  }
  sqlite3_busy_timeout(s->db, (int)s->base.request_timeout_ms);
  char pragmas[128];
  snprintf(pragmas, sizeof pragmas, "PRAGMA cache_size = -%d; PRAGMA mmap_size = %lld",
           SQ_CACHE_KIB / 4, SQ_MMAP_BYTES);
  if (exec(s, pragmas) != 0 ||
      sqlite3_prepare_v3(s->db, "SELECT timestamp FROM Message WHERE messageHash = ?", -1,
                         SQLITE_PREPARE_PERSISTENT, &s->cursor_st, NULL) != SQLITE_OK) {
    db_fail(s, job, "reader set-up");
    db_close(s);
    return LD_ERR_DB;
  }
  return 0;
}

static void run_job(sq_driver_t *s, ld_archive_job_t *job) {
  if (s->is_reader && s->db == NULL && reader_open(s, job) != 0)
    return;
  if (s->db == NULL && job->kind != LD_ARCHIVE_JOB_OPEN) {
    ld_archive_job_fail(job, LD_ERR_DB, "sqlite database not open");
    return;
  }
  switch (job->kind) {
  case LD_ARCHIVE_JOB_OPEN:
    run_open(s, job);
    break;
  case LD_ARCHIVE_JOB_INSERT:
    run_insert(s, job);
    break;
  case LD_ARCHIVE_JOB_QUERY:
    run_query(s, job);
    break;
  case LD_ARCHIVE_JOB_COUNT:
    run_count(s, job);
    break;
  case LD_ARCHIVE_JOB_LIST_KEYS:
    run_list_keys(s, job);
    break;
  case LD_ARCHIVE_JOB_DELETE_OLDER:
    run_delete_older(s, job);
    break;
  case LD_ARCHIVE_JOB_KEEP_NEWEST:
    run_keep_newest(s, job);
    break;
  case LD_ARCHIVE_JOB_SIZE:
    run_size(s, job);
    break;
  default:
    ld_archive_job_fail(job, LD_ERR_UNSUPPORTED, "not supported by sqlite");
  }
}

/* Writer, idle since its last write: a passive checkpoint (readers go on; frames a reader still
 * needs stay in the log). */
static void idle_checkpoint(sq_driver_t *s) {
  s->wal_dirty = false;
  if (sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL) != SQLITE_OK)
    LD_WARN(LOG_TOPIC, "sqlite checkpoint: %s", sqlite3_errmsg(s->db));
}

/* Waits for a job (q->mu held). A writer with uncheckpointed writes waits SQ_IDLE_CHECKPOINT_MS
 * at most, then checkpoints without the lock. */
static void wait_for_job(sq_driver_t *s, sq_queue_t *q) {
  q->waiting++;
  if (!s->wal_dirty) {
    uv_cond_wait(&q->cv, &q->mu);
  } else if (uv_cond_timedwait(&q->cv, &q->mu, SQ_IDLE_CHECKPOINT_MS * 1000000ull) != 0 &&
             q->jobs.head == NULL && !q->closing) {
    q->waiting--;
    uv_mutex_unlock(&q->mu);
    idle_checkpoint(s);
    uv_mutex_lock(&q->mu);
    return;
  }
  q->waiting--;
}

/* The next job, or NULL when a reader was told to stop and nothing is left. */
static ld_archive_job_t *next_job(sq_driver_t *s) {
  sq_queue_t *q = s->q;
  uv_mutex_lock(&q->mu);
  while (q->jobs.head == NULL && !(s->is_reader && q->closing))
    wait_for_job(s, q);
  ld_archive_job_t *job = ld_archive_jobq_pop(&q->jobs);
  uv_mutex_unlock(&q->mu);
  return job;
}

static void stop_readers(sq_driver_t *s);

static bool writes(ld_archive_job_kind_t kind) {
  return kind == LD_ARCHIVE_JOB_INSERT || kind == LD_ARCHIVE_JOB_DELETE_OLDER ||
         kind == LD_ARCHIVE_JOB_KEEP_NEWEST;
}

static void worker(void *arg) {
  sq_driver_t *s = arg;
  for (;;) {
    ld_archive_job_t *job = next_job(s);
    if (job == NULL) { /* a reader told to stop */
      db_close(s);
      return;
    }
    if (job->kind == LD_ARCHIVE_JOB_CLOSE) {
      stop_readers(s); /* their last completions reach the loop before the close's */
      db_close(s);
      ld_archive_job_complete(&s->base, job);
      return;
    }
    run_job(s, job);
    if (s->n_readers > 0 && s->db != NULL && writes(job->kind))
      s->wal_dirty = true;
    ld_archive_job_complete(&s->base, job);
    ld_archive_driver_yield();
  }
}

/* Queries and listings go to the readers' queue when there are readers, everything else to the
 * writer. The wake-up is sent after the unlock (the queues live as long as the driver), so the
 * woken thread does not wake into a held mutex, and only when a thread sleeps. */
static int sq_submit(ld_archive_driver_t *d, ld_archive_job_t *job) {
  sq_driver_t *s = (sq_driver_t *)d;
  bool read = job->kind == LD_ARCHIVE_JOB_QUERY || job->kind == LD_ARCHIVE_JOB_LIST_KEYS;
  sq_queue_t *q = read && s->n_readers > 0 ? &s->rq : &s->wq;
  uv_mutex_lock(&q->mu);
  bool closing = q->closing, wake = !closing && q->waiting > 0;
  if (!closing)
    ld_archive_jobq_push(&q->jobs, job);
  uv_mutex_unlock(&q->mu);
  if (wake)
    uv_cond_signal(&q->cv);
  return closing ? LD_ERR_CLOSED : 0;
}

static bool kept_at_close(const ld_archive_job_t *job) {
  return job->kind == LD_ARCHIVE_JOB_INSERT || job->kind == LD_ARCHIVE_JOB_OPEN;
}

/* Queued jobs other than inserts fail with LD_ERR_CLOSED; inserts still commit. */
static void sq_close(ld_archive_driver_t *d, ld_archive_job_t *job) {
  sq_driver_t *s = (sq_driver_t *)d;
  sq_queue_t *q = &s->wq;
  uv_mutex_lock(&q->mu);
  q->closing = true;
  ld_archive_jobq_close(&q->jobs, d, kept_at_close);
  ld_archive_jobq_push(&q->jobs, job);
  uv_cond_signal(&q->cv);
  uv_mutex_unlock(&q->mu);
}

/* Tells the readers to stop (queued queries fail with LD_ERR_CLOSED), waits for them and frees
 * them. Idempotent. */
static void stop_readers(sq_driver_t *s) {
  if (s->n_readers == 0)
    return;
  uv_mutex_lock(&s->rq.mu);
  s->rq.closing = true;
  ld_archive_jobq_close(&s->rq.jobs, &s->base, NULL);
  uv_cond_broadcast(&s->rq.cv);
  uv_mutex_unlock(&s->rq.mu);
  for (size_t i = 0; i < s->n_readers; i++) {
    uv_thread_join(&s->readers[i]->thread);
    free(s->readers[i]->path);
    free(s->readers[i]);
  }
  s->n_readers = 0;
}

static bool in_memory(const char *path) {
  return strcmp(path, ":memory:") == 0 || strstr(path, "memory") != NULL;
}

static sq_driver_t *reader_new(sq_driver_t *s) {
  sq_driver_t *r = calloc(1, sizeof *r);
  if (r == NULL || (r->path = strdup(s->path)) == NULL) {
    free(r);
    return NULL;
  }
  r->base = s->base;
  r->is_reader = true;
  r->q = &s->rq;
  r->keys = &s->keymap;
  if (uv_thread_create(&r->thread, worker, r) != 0) {
    free(r->path);
    free(r);
    return NULL;
  }
  return r;
}

/* Query threads for a file database; without them (memory, or no resources) the writer runs
 * the queries. */
static void start_readers(sq_driver_t *s) {
  if (in_memory(s->path))
    return;
  while (s->n_readers < SQ_READERS) {
    sq_driver_t *r = reader_new(s);
    if (r == NULL)
      return;
    s->readers[s->n_readers++] = r;
  }
}

static int queue_init(sq_queue_t *q) {
  if (uv_mutex_init(&q->mu) != 0)
    return LD_ERR_NOMEM;
  if (uv_cond_init(&q->cv) != 0) {
    uv_mutex_destroy(&q->mu);
    return LD_ERR_NOMEM;
  }
  return 0;
}

static void queue_destroy(sq_queue_t *q) {
  uv_cond_destroy(&q->cv);
  uv_mutex_destroy(&q->mu);
}

static void sq_free(ld_archive_driver_t *d) {
  sq_driver_t *s = (sq_driver_t *)d;
  uv_thread_join(&s->thread);
  stop_readers(s);
  queue_destroy(&s->wq);
  queue_destroy(&s->rq);
  ld_sq_keymap_destroy(&s->keymap);
  free(s->path);
  free(s);
}

static const ld_archive_driver_ops_t sq_ops = {
    .name = "sqlite",
    .max_batches_in_flight = 1,
    .max_batch_rows = LD_ARCHIVE_MAX_BATCH_ROWS,
    .insert = sq_submit,
    .query = sq_submit,
    .count = sq_submit,
    .delete_older_than = sq_submit,
    .keep_newest = sq_submit,
    .size_bytes = sq_submit,
    .list_keys = sq_submit,
    .close = sq_close,
    .free = sq_free,
};

int ld_archive_sqlite_open(const ld_archive_driver_t *env, const char *target,
                           ld_archive_job_t *open_job, ld_archive_driver_t **out) {
  if (target == NULL || target[0] == 0)
    return LD_ERR_INVALID_ARG;
  if (ld_sq_load() != 0)
    return LD_ERR_IO;
  sq_driver_t *s = calloc(1, sizeof *s);
  if (s == NULL || (s->path = strdup(target)) == NULL) {
    free(s);
    return LD_ERR_NOMEM;
  }
  s->base = *env;
  s->base.ops = &sq_ops;
  s->q = &s->wq;
  s->keys = &s->keymap;
  if (ld_sq_keymap_init(&s->keymap) != 0)
    goto fail;
  if (queue_init(&s->wq) != 0) {
    ld_sq_keymap_destroy(&s->keymap);
    goto fail;
  }
  if (queue_init(&s->rq) != 0) {
    queue_destroy(&s->wq);
    ld_sq_keymap_destroy(&s->keymap);
    goto fail;
  }
  ld_archive_jobq_push(&s->wq.jobs, open_job);
  start_readers(s);
  if (uv_thread_create(&s->thread, worker, s) != 0) {
    stop_readers(s);
    queue_destroy(&s->rq);
    queue_destroy(&s->wq);
    ld_sq_keymap_destroy(&s->keymap);
    goto fail;
  }
  *out = &s->base;
  return 0;
fail:
  free(s->path);
  free(s);
  return LD_ERR_NOMEM;
}
