/* The archive's internal driver interface: the work items (jobs) the archive hands to a driver,
 * the row and batch containers they carry, and the vtable every driver (sqlite/, postgres/,
 * memory/) implements.
 *
 * Life of a job: the archive fills a job, arms its deadline and passes it to one driver entry
 * point. The entry returns 0 and later completes the job exactly once with
 * ld_archive_job_complete (from any thread; the archive's handler then runs on the loop), or
 * returns an error and never completes it. The driver owns the job from the call until it
 * completes it; the archive never frees a job it has handed over before that. A job whose
 * deadline passed is reported to the user as LD_ERR_TIMEOUT by the archive and freed silently
 * when the driver finally completes it.
 *
 * Entry points are called on the loop thread. Drivers do disk and network work on their own
 * threads (SQLite's writer and readers, PostgreSQL's connection threads) and never block the
 * loop. */
#ifndef LD_WAKU_ARCHIVE_DRIVER_H
#define LD_WAKU_ARCHIVE_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "base/timerheap.h"
#include "waku/archive/archive.h"

/* Rows in one write batch at most; a batch is one transaction. Large batches matter for SQLite:
 * rows keyed by a random hash land on random pages, and a page written once per transaction
 * carries every row of the batch that fell on it. */
#define LD_ARCHIVE_MAX_BATCH_ROWS 32768
/* Reasons are cut to this many bytes. */
#define LD_ARCHIVE_WHY_LEN 160

/* ---- rows of a query result ------------------------------------------------------------------ */

/* Rows in query direction. The rows' views point into chunks the container owns. */
typedef struct ld_archive_chunk ld_archive_chunk_t;
typedef struct ld_archive_rows {
  ld_archive_row_t *rows;
  ld_archive_chunk_t *chunks;
  size_t n, cap;
} ld_archive_rows_t;

/* Appends one row, copying every field (a NUL is added after both topics). With
 * include_data false only the hash is kept. Returns 0 or LD_ERR_NOMEM. Any thread (one at a
 * time per container). */
int ld_archive_rows_add(ld_archive_rows_t *r, const uint8_t hash[LD_WAKU_HASH_LEN],
                        bool include_data, const char *pubsub_topic, size_t pubsub_topic_len,
                        const ld_waku_message_t *msg);
/* Appends one key of a listing (LIST_KEYS): the hash, msg.timestamp and the pubsub topic (copied,
 * NUL added); the rest of the message stays empty. Returns 0 or LD_ERR_NOMEM. */
int ld_archive_rows_add_key(ld_archive_rows_t *r, const uint8_t hash[LD_WAKU_HASH_LEN],
                            int64_t timestamp, const char *pubsub_topic, size_t pubsub_topic_len);
void ld_archive_rows_clear(ld_archive_rows_t *r);
/* Sorts the rows by (msg.timestamp, hash), ascending or descending, and keeps the first `keep`.
 * Returns 0 or LD_ERR_NOMEM (rows unchanged). */
int ld_archive_rows_sort(ld_archive_rows_t *r, bool ascending, size_t keep);

/* ---- write batches ------------------------------------------------------------------------- */

/* One accepted message. pubsub_topic (NUL-terminated) and the message's views live in `block`,
 * owned by the row. When the job ends with err 0 the driver has set every row's `result`: 1
 * stored, 0 duplicate, or a negative LD_ERR_* for that row alone; when the job's err is negative
 * the whole batch failed (nothing of it committed). */
typedef struct ld_archive_batch_row {
  uint8_t hash[LD_WAKU_HASH_LEN];
  const char *pubsub_topic;
  size_t pubsub_topic_len;
  ld_waku_message_t msg;
  void *block;
  size_t bytes; /* size of block */
  int result;
  ld_archive_done_fn done;
  void *user_data;
  bool reported; /* archive: the outcome went to `done` */
} ld_archive_batch_row_t;

typedef struct ld_archive_batch {
  ld_archive_batch_row_t *rows;
  size_t n, cap;
  size_t bytes; /* sum of rows' bytes */
} ld_archive_batch_t;

/* Appends a copy of (pubsub_topic, msg, hash) without ephemeral flag and proof. Returns 0 or
 * LD_ERR_NOMEM. */
int ld_archive_batch_add(ld_archive_batch_t *b, const char *pubsub_topic,
                         const ld_waku_message_t *msg, const uint8_t hash[LD_WAKU_HASH_LEN],
                         ld_archive_done_fn done, void *user_data);
/* Frees the rows' storage (callbacks are not called) and empties the batch. */
void ld_archive_batch_clear(ld_archive_batch_t *b);

/* ---- jobs ------------------------------------------------------------------------------------ */

typedef enum ld_archive_job_kind {
  LD_ARCHIVE_JOB_OPEN = 1,
  LD_ARCHIVE_JOB_CLOSE,
  LD_ARCHIVE_JOB_INSERT,
  LD_ARCHIVE_JOB_QUERY,
  LD_ARCHIVE_JOB_COUNT,
  LD_ARCHIVE_JOB_DELETE_OLDER,
  LD_ARCHIVE_JOB_KEEP_NEWEST,
  LD_ARCHIVE_JOB_SIZE,
  LD_ARCHIVE_JOB_DROP_OLDEST,
  LD_ARCHIVE_JOB_MAINTAIN,
  LD_ARCHIVE_JOB_LIST_KEYS,
} ld_archive_job_kind_t;

typedef struct ld_archive_job ld_archive_job_t;
typedef struct ld_archive_driver ld_archive_driver_t;

/* Runs on the loop when the job completed (or timed out, with `abandoned` set). */
typedef void (*ld_archive_job_fn)(ld_archive_job_t *job);

struct ld_archive_job {
  ld_archive_job_kind_t kind;
  /* inputs */
  ld_archive_batch_t batch; /* INSERT */
  /* QUERY: limit is the number of rows to fetch (page + 1). LIST_KEYS: time_start and time_end
   * (both set), limit (page + 1), and with has_cursor the key (ts, cursor) to resume after */
  ld_archive_query_t query;
  int64_t ts; /* DELETE_OLDER: cutoff (exclusive); DROP_OLDEST: now (ns); LIST_KEYS: see query */
  uint64_t n; /* KEEP_NEWEST: rows to keep */
  uint64_t deadline_ms; /* ld_now_ms() deadline; 0 = none. Read-only for drivers */
  /* outputs */
  int err;
  char why[LD_ARCHIVE_WHY_LEN];
  uint64_t value; /* COUNT/SIZE: the figure; DELETE_*, KEEP_NEWEST, DROP_OLDEST: rows gone */
  ld_archive_rows_t rows; /* QUERY */
  /* archive bookkeeping (drivers leave it alone) */
  ld_archive_job_fn on_done;
  ld_archive_job_fn on_timeout; /* deadline passed: must not read the outputs */
  void *owner;
  union {
    ld_archive_query_fn query;
    ld_archive_list_fn list;
    ld_archive_count_fn count;
    ld_archive_done_fn done;
  } cb;
  void *user_data;
  void *storage;          /* owned copies of the query's strings and hashes */
  uint32_t page;          /* QUERY: page size */
  ld_timer_t timer;       /* deadline, in the archive's heap */
  bool submitted;         /* handed to the driver */
  bool abandoned;         /* reported as timed out; freed when the driver completes it */
  ld_archive_job_t *next; /* archive queues */
  /* INSERT: sequence number of its first message; QUERY, COUNT held back: the last message
   * accepted before it, which it waits for */
  uint64_t seq;
  ld_archive_job_t *flight_next; /* INSERT at the driver: the next younger one */
  /* driver bookkeeping */
  ld_archive_job_t *dnext;
  void *dpriv;
};

/* Sets job->err and a formatted reason (printf-style). Any thread. */
void ld_archive_job_fail(ld_archive_job_t *job, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Hands a job back to the archive: thread-safe, never calls the handler directly (the loop
 * runs it on its next turn). */
void ld_archive_job_complete(ld_archive_driver_t *d, ld_archive_job_t *job);

/* A FIFO of jobs linked through `dnext`, for a driver's queues. No locking of its own. */
typedef struct ld_archive_jobq {
  ld_archive_job_t *head, *tail;
  size_t n;
} ld_archive_jobq_t;

void ld_archive_jobq_push(ld_archive_jobq_t *q, ld_archive_job_t *job);
/* The oldest job, or NULL when empty. */
ld_archive_job_t *ld_archive_jobq_pop(ld_archive_jobq_t *q);
/* Fails with LD_ERR_CLOSED ("archive closed") and completes every job in `q` that `keep` does
 * not keep (all when `keep` is NULL); the kept ones stay in order. */
void ld_archive_jobq_close(ld_archive_jobq_t *q, ld_archive_driver_t *d,
                           bool (*keep)(const ld_archive_job_t *job));

/* For a driver's own thread that completed a job and goes on to its next one: gives up the core
 * to the loop the completion woke. When every core is busy with database work the scheduler
 * would otherwise let the thread run its next job to the end of its time slice (1-3 ms) while
 * the finished answer, and the node's network, wait for the loop to get a core. */
void ld_archive_driver_yield(void);

/* ---- drivers -----------------------------------------------------------------------------------
 */

/* Every entry returns 0 (the job will be completed) or a negative error (never completed).
 * `drop_oldest` and `maintain` may be NULL. */
typedef struct ld_archive_driver_ops {
  const char *name;
  unsigned max_batches_in_flight; /* insert jobs at once */
  size_t max_batch_rows;          /* rows per insert job, at most LD_ARCHIVE_MAX_BATCH_ROWS */
  uint32_t maintain_interval_ms;  /* period of `maintain` (0: never) */
  int (*insert)(ld_archive_driver_t *d, ld_archive_job_t *job);
  int (*query)(ld_archive_driver_t *d, ld_archive_job_t *job);
  int (*count)(ld_archive_driver_t *d, ld_archive_job_t *job);
  /* Deletes rows with timestamp < job->ts. */
  int (*delete_older_than)(ld_archive_driver_t *d, ld_archive_job_t *job);
  /* Keeps the job->n newest rows in (timestamp, hash) order, deletes the others. */
  int (*keep_newest)(ld_archive_driver_t *d, ld_archive_job_t *job);
  /* Bytes the stored data takes (value). */
  int (*size_bytes)(ld_archive_driver_t *d, ld_archive_job_t *job);
  /* Drops the oldest time partition unless it holds job->ts; LD_ERR_NOT_FOUND when none can go. */
  int (*drop_oldest)(ld_archive_driver_t *d, ld_archive_job_t *job);
  /* Periodic housekeeping (partitions ahead). */
  int (*maintain)(ld_archive_driver_t *d, ld_archive_job_t *job);
  /* LIST_KEYS: rows with time_start ≤ timestamp ≤ time_end (and after the resume key), ascending
   * (timestamp, hash), at most query.limit, added with ld_archive_rows_add_key. */
  int (*list_keys)(ld_archive_driver_t *d, ld_archive_job_t *job);
  /* Finishes the insert jobs it holds, fails the other queued jobs with LD_ERR_CLOSED, closes
   * the database and completes `job` last. Never fails. */
  void (*close)(ld_archive_driver_t *d, ld_archive_job_t *job);
  /* Frees the driver after its close job completed. */
  void (*free)(ld_archive_driver_t *d);
} ld_archive_driver_ops_t;

/* What the archive gives a driver; drivers embed it as their first member. */
struct ld_archive_driver {
  const ld_archive_driver_ops_t *ops;
  uv_loop_t *loop;
  void *archive; /* for ld_archive_job_complete */
  uint32_t request_timeout_ms;
  uint32_t max_db_connections;
  size_t memory_capacity;
  int64_t (*now_ns)(void *clock_data);
  void *clock_data;
};

/* The archive's clock (the configured one or real time). Any thread. */
int64_t ld_archive_driver_now_ns(const ld_archive_driver_t *d);

/* Driver constructors: allocate the driver from `env` (copied) and the URL remainder `target`
 * (path for sqlite, the whole URL for postgres), and start `open_job`, which completes when the
 * database is ready or failed. On error nothing is allocated and the job is not completed
 * (LD_ERR_IO: the sqlite and postgres drivers load libsqlite3 / libpq at their first open, and
 * the library could not be loaded). After a failed open job the archive still calls close and
 * free. */
int ld_archive_sqlite_open(const ld_archive_driver_t *env, const char *target,
                           ld_archive_job_t *open_job, ld_archive_driver_t **out);
int ld_archive_postgres_open(const ld_archive_driver_t *env, const char *target,
                             ld_archive_job_t *open_job, ld_archive_driver_t **out);
int ld_archive_memory_open(const ld_archive_driver_t *env, const char *target,
                           ld_archive_job_t *open_job, ld_archive_driver_t **out);

/* ---- helpers shared by the drivers ------------------------------------------------------------
 */

/* Byte order of the store ordering key: timestamp, then hash bytes. */
int ld_archive_key_cmp(int64_t ts_a, const uint8_t *hash_a, int64_t ts_b, const uint8_t *hash_b);

#endif
