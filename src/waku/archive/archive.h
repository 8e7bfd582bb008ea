/* The message archive: persistence of relayed messages for the store protocol, behind one driver
 * interface with three drivers (SQLite, the embedded default; PostgreSQL for production; a
 * bounded in-memory queue).
 *
 * Ingest (ld_archive_handle_message) follows nwaku's WakuArchive: ephemeral messages are never
 * stored; the timestamp must lie within ±LD_ARCHIVE_MAX_TS_VARIANCE_NS of now (both bounds
 * inclusive), so a message with timestamp 0 is never stored; the deterministic hash is the key
 * and a duplicate hash is not an error. Stored: hash, pubsub topic, content topic, payload,
 * version, timestamp, meta. Not stored: ephemeral, rate_limit_proof.
 *
 * Queries (ld_archive_query) follow the store v3 semantics of nwaku: ordering key
 * (timestamp, hash) ascending; time_start and time_end both inclusive; a cursor is the hash of
 * a stored message and rows strictly after (forward) or before (backward) its (timestamp, hash)
 * are returned; an unknown or all-zero cursor is LD_ERR_NOT_FOUND / LD_ERR_INVALID_ARG; the
 * result is always in ascending order whichever the direction; when more rows exist than the
 * page holds, the result's cursor is the hash of the last row in query direction.
 *
 * Writes are batched: an accepted message is durable (committed) when its `done` callback runs
 * with 0; a message whose callback has run with 0 survives a crash of the process (SIGKILL).
 * Accepted messages wait at most LD_ARCHIVE_BATCH_LINGER_MS for company, then go to the driver
 * as one transaction per batch (while a batch commits, the next one fills up). A query waits for
 * the writes accepted before it (read-your-writes, see ld_archive_query). Retention policies run
 * on a timer, first right after opening.
 *
 * Storage: SQLite keeps nwaku's schema version 10 (table Message keyed by messageHash, index
 * i_ts; new files keep rows in insertion order, see sqlite/sqlite_schema.h) and adds the index
 * i_ct_ts (contentTopic, timestamp) for content-topic pages; WAL journal, synchronous FULL; one
 * writer thread and two query threads with their own read-only connections. PostgreSQL keeps
 * nwaku's layout (content script version 8): messages and messages_lookup, hourly range partitions
 * created at open, every 10 minutes for the next hour, and on demand for older or newer rows
 * (store-sync ingress). memory:// holds at most memory_capacity messages and evicts the oldest.
 *
 * Threading: every function must be called from the loop thread given to ld_archive_open, and
 * every callback runs on that loop, never from inside an ld_archive_* call. Drivers do their
 * blocking work off the loop (a writer and reader threads for SQLite, a thread per busy pooled
 * connection for PostgreSQL), so a slow or dead database never stalls the loop: its
 * requests fail with LD_ERR_DB (or LD_ERR_TIMEOUT) instead. */
#ifndef LD_WAKU_ARCHIVE_ARCHIVE_H
#define LD_WAKU_ARCHIVE_ARCHIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "waku/core/message.h"

/* nwaku's MaxMessageTimestampVariance: 20 s. */
#define LD_ARCHIVE_MAX_TS_VARIANCE_NS (20ll * 1000 * 1000 * 1000)
/* Store v3 page sizes: absent or 0 → default; above the maximum → clamped. */
#define LD_ARCHIVE_DEFAULT_PAGE_SIZE 20
#define LD_ARCHIVE_MAX_PAGE_SIZE 100
/* Content topics per query at most (nwaku checks it only when a cursor is given). */
#define LD_ARCHIVE_MAX_CONTENT_TOPICS 10
/* Hashes per lookup query at most. */
#define LD_ARCHIVE_MAX_HASHES 100
/* Retention policies at once (--store-message-retention-policy accepts several). */
#define LD_ARCHIVE_MAX_POLICIES 4
/* Default policy: time:172800 (2 days). */
#define LD_ARCHIVE_DEFAULT_RETENTION "time:172800"
/* Retention runs this often (nwaku: every 30 min, retried after 1 min on error). */
#define LD_ARCHIVE_RETENTION_INTERVAL_MS (30u * 60 * 1000)
#define LD_ARCHIVE_RETENTION_RETRY_MS (60u * 1000)
/* Content topics per query at most when no cursor is given (a cap of ours; nwaku has none). */
#define LD_ARCHIVE_MAX_QUERY_CONTENT_TOPICS 100
/* Accepted messages not yet committed at most (rows, bytes): beyond, ingest returns
 * LD_ERR_LIMIT until the database catches up. */
#define LD_ARCHIVE_MAX_PENDING_ROWS 65536
#define LD_ARCHIVE_MAX_PENDING_BYTES (64u * 1024 * 1024)
/* An accepted message waits this long at most for more to share its write transaction. */
#define LD_ARCHIVE_BATCH_LINGER_MS 2
/* Deadline of retention steps and of opening (migrations can be long). */
#define LD_ARCHIVE_MAINTENANCE_TIMEOUT_MS (10u * 60 * 1000)

typedef struct ld_archive ld_archive_t;

/* ---- retention policies ---------------------------------------------------------------------- */

/* What each policy does when retention runs (policies run in the order given):
 *  TIME      rows with timestamp < now − seconds are deleted; postgres first drops the hourly
 *            partitions that end at or before that instant, then deletes the rest.
 *  CAPACITY  when count ≥ 1.3·n, only the newest n + 0.15·n rows are kept (nwaku's integer
 *            arithmetic: n·13/10 and n + (n·3/10)/2).
 *  SIZE      postgres: while pg_database_size > limit, the oldest partition is dropped (never
 *            the one holding now); sqlite: when the bytes of the pages in use (freed pages are
 *            reused, so they do not count) are ≥ limit, the newest 80 % of rows are kept;
 *            memory://: the same on an estimate of the bytes held. */
typedef enum ld_archive_policy_kind {
  LD_ARCHIVE_POLICY_TIME = 1,
  LD_ARCHIVE_POLICY_CAPACITY = 2,
  LD_ARCHIVE_POLICY_SIZE = 3,
} ld_archive_policy_kind_t;

typedef struct ld_archive_policy {
  ld_archive_policy_kind_t kind;
  uint64_t value; /* seconds, rows, or bytes (1024-based "mb"/"gb") */
} ld_archive_policy_t;

/* Parses one `--store-message-retention-policy` value: "time:<s>", "capacity:<n>",
 * "size:<x>mb|gb" (x may have a fraction; case-insensitive kind and unit), or several separated
 * by ';' or ',' (blanks around entries ignored). "" and "none" give 0 policies. Values must be
 * positive (a size of at least one byte); time must fit in int64 nanoseconds. Returns the number
 * of policies written to out[0..max), or LD_ERR_INVALID_ARG with a reason in why[0..why_len)
 * (NUL-terminated; why may be NULL). Pure; any thread. */
int ld_archive_policy_parse(const char *text, ld_archive_policy_t *out, size_t max, char *why,
                            size_t why_len);

/* ---- opening and closing --------------------------------------------------------------------- */

typedef struct ld_archive_config {
  /* "sqlite://<path>" (relative or absolute; the file and a WAL are created), "sqlite://:memory:",
   * "postgres://user:pass@host:port/db" (also "postgresql://"), or "memory://" (bounded queue).
   * Required. */
  const char *url;
  ld_archive_policy_t policies[LD_ARCHIVE_MAX_POLICIES];
  size_t n_policies; /* 0: none (the node passes LD_ARCHIVE_DEFAULT_RETENTION parsed) */
  /* PostgreSQL connections at most (--store-max-num-db-connections); 0 = 50 as nwaku. */
  uint32_t max_db_connections;
  /* memory:// capacity in messages; 0 = 100,000. */
  size_t memory_capacity;
  /* Deadline of one database request (query, insert batch); 0 = 5,000 ms. */
  uint32_t request_timeout_ms;
  /* Clock of ingest checks and time retention, Unix nanoseconds; NULL = real time. Tests use
   * a fake clock. */
  int64_t (*now_ns)(void *clock_data);
  void *clock_data;
} ld_archive_config_t;

void ld_archive_config_default(ld_archive_config_t *cfg);

/* Opened (err 0) or failed (LD_ERR_INVALID_ARG bad URL, LD_ERR_DB cannot connect or migrate,
 * LD_ERR_TIMEOUT, LD_ERR_NOMEM): called once from the loop; on failure `a` is NULL (the archive is
 * already freed) and `why` says what failed (valid during the call only). */
typedef void (*ld_archive_open_fn)(ld_archive_t *a, int err, const char *why, void *user_data);

/* Starts opening the archive described by `cfg` (copied): connects, runs the versioned schema
 * migrations (SQLite schema version 10 as nwaku; PostgreSQL content script version 8 with hourly
 * partitions), starts the retention timer. Returns 0 (then `done` reports), or
 * LD_ERR_INVALID_ARG (unknown scheme, malformed URL) / LD_ERR_NOMEM with `done` never called. */
int ld_archive_open(uv_loop_t *loop, const ld_archive_config_t *cfg, ld_archive_open_fn done,
                    void *user_data);

/* As ld_archive_open, and on success sets *out to the archive at once, so that a node can take
 * work before the database is open (opening a large archive can take long, and nwaku does not
 * serve before it is open): while it opens, ld_archive_handle_message and ld_archive_insert
 * accept messages (the checks and limits apply; they are written once the database is open, and
 * their request_timeout_ms counts from then), and ld_archive_query and ld_archive_count are held
 * until the database is open (their request_timeout_ms counts from the call);
 * ld_archive_apply_retention returns LD_ERR_CLOSED. When opening fails, the held messages' `done`
 * get the open error and the held reads fail with it, before `done` reports the failure; *out is
 * invalid once `done` has run with an error. ld_archive_close must wait until `done` has run. */
int ld_archive_open_early(uv_loop_t *loop, const ld_archive_config_t *cfg, ld_archive_open_fn done,
                          void *user_data, ld_archive_t **out);

/* Stops the timers, fails the queued requests that have not started with LD_ERR_CLOSED, waits
 * for the running ones, commits what was accepted, closes the database and calls `done` (may be
 * NULL) from the loop; then the archive is freed. */
void ld_archive_close(ld_archive_t *a, void (*done)(void *user_data), void *user_data);

/* "sqlite", "postgres" or "memory". */
const char *ld_archive_driver_name(const ld_archive_t *a);

/* ---- ingest ---------------------------------------------------------------------------------- */

/* Why a message was not stored (ld_archive_handle_message's result). */
typedef enum ld_archive_verdict {
  LD_ARCHIVE_ACCEPTED = 0,
  LD_ARCHIVE_EPHEMERAL = 1,
  LD_ARCHIVE_TOO_OLD = 2, /* nwaku's invalid_message_too_old */
  LD_ARCHIVE_FUTURE = 3,  /* nwaku's invalid_message_future_timestamp */
} ld_archive_verdict_t;

/* The message is durable (err 0; also when the hash was already stored) or could not be stored
 * (LD_ERR_DB, LD_ERR_CLOSED, LD_ERR_TIMEOUT: not committed within request_timeout_ms of being
 * accepted — it may still be committed later; LD_ERR_LIMIT: memory:// is full of newer messages).
 */
typedef void (*ld_archive_done_fn)(int err, void *user_data);

/* Applies the ingest checks to `msg` on `pubsub_topic` (NUL-terminated) with its deterministic
 * `hash` (trusted, not recomputed), and when accepted copies it into the next write batch (the
 * caller's buffers are not kept). Returns the verdict (≥ 0) — `done` (may be NULL) is called only
 * for LD_ARCHIVE_ACCEPTED, never before this function returns — or LD_ERR_NOMEM /
 * LD_ERR_CLOSED / LD_ERR_INVALID_ARG (NULL argument) / LD_ERR_LIMIT (more than
 * LD_ARCHIVE_MAX_PENDING_ROWS or _BYTES waiting for the database) with `done` never called. */
int ld_archive_handle_message(ld_archive_t *a, const char *pubsub_topic,
                              const ld_waku_message_t *msg, const uint8_t hash[LD_WAKU_HASH_LEN],
                              ld_archive_done_fn done, void *user_data);

/* Stores without the timestamp check (store-sync ingress; ephemeral still refused). Same
 * contract as ld_archive_handle_message. */
int ld_archive_insert(ld_archive_t *a, const char *pubsub_topic, const ld_waku_message_t *msg,
                      const uint8_t hash[LD_WAKU_HASH_LEN], ld_archive_done_fn done,
                      void *user_data);

/* ---- queries --------------------------------------------------------------------------------- */

typedef struct ld_archive_query {
  const char *pubsub_topic; /* NULL: any */
  const char *const *content_topics;
  size_t
      n_content_topics; /* 0: any; more than LD_ARCHIVE_MAX_CONTENT_TOPICS with a cursor: error */
  bool has_time_start;
  int64_t time_start; /* ns, inclusive */
  bool has_time_end;
  int64_t time_end; /* ns, inclusive (nwaku) */
  const uint8_t (*hashes)[LD_WAKU_HASH_LEN];
  size_t n_hashes; /* 0: no hash filter; at most LD_ARCHIVE_MAX_HASHES */
  bool has_cursor;
  uint8_t cursor[LD_WAKU_HASH_LEN];
  bool forward;
  uint32_t limit; /* 0 → LD_ARCHIVE_DEFAULT_PAGE_SIZE; > max → LD_ARCHIVE_MAX_PAGE_SIZE */
  bool include_data;
} ld_archive_query_t;

/* One row of a result. With include_data false only `hash` is set (pubsub_topic NULL, msg
 * empty). */
typedef struct ld_archive_row {
  uint8_t hash[LD_WAKU_HASH_LEN];
  const char *pubsub_topic;
  ld_waku_message_t msg; /* borrowed views into the result */
} ld_archive_row_t;

typedef struct ld_archive_result {
  const ld_archive_row_t *rows;
  size_t n_rows; /* ascending (timestamp, hash) */
  bool has_cursor;
  uint8_t cursor[LD_WAKU_HASH_LEN];
} ld_archive_result_t;

/* The answer to a query: err 0 and `res` (valid only during the call), or an error and a
 * reason (`why`, never NULL): LD_ERR_INVALID_ARG (INVALID_QUERY: bad cursor, too many content
 * topics or hashes, time_start > time_end), LD_ERR_NOT_FOUND (cursor not stored), LD_ERR_DB
 * (DRIVER_ERROR), LD_ERR_TIMEOUT, LD_ERR_CLOSED, LD_ERR_NOMEM. Called exactly once. */
typedef void (*ld_archive_query_fn)(int err, const char *why, const ld_archive_result_t *res,
                                    void *user_data);

/* Starts `q` (copied, strings included). Returns 0 (then `done` reports), or LD_ERR_CLOSED /
 * LD_ERR_NOMEM / LD_ERR_INVALID_ARG (a, q or done NULL) with `done` never called. Argument errors
 * are reported through `done`, so a store server answers them all in one place: also more than
 * LD_ARCHIVE_MAX_QUERY_CONTENT_TOPICS content topics without a cursor, and a NULL content topic.
 *
 * Read-your-writes: a query (and ld_archive_count) sees every message accepted
 * (LD_ARCHIVE_ACCEPTED) before the call, unless writing that message failed. Every accepted
 * message gets a sequence number; when messages accepted before the call are not written yet, the
 * query is held until the batches holding them have completed, and the batch still lingering is
 * written at once rather than after LD_ARCHIVE_BATCH_LINGER_MS. With nothing outstanding (the
 * common case) it goes to the database at once. A held query's request_timeout_ms counts from the
 * call. */
int ld_archive_query(ld_archive_t *a, const ld_archive_query_t *q, ld_archive_query_fn done,
                     void *user_data);

/* ---- key listing (store-sync) -----------------------------------------------------------------
 */

/* Keys per listing page: absent (0) → default; above the maximum → clamped. */
#define LD_ARCHIVE_DEFAULT_LIST_PAGE 10000
#define LD_ARCHIVE_MAX_LIST_PAGE 50000

/* The (timestamp, hash) keys of the stored messages with time_start ≤ timestamp ≤ time_end, in
 * ascending (timestamp, hash) order, a page at a time: what store-sync fills its item sets from
 * at start (nwaku's initFillStorage pages through full messages; only the keys and the pubsub
 * topic are needed). A page resumes strictly after the key (after_ts, after_hash) when has_after
 * is set (the last key of the previous page). */
typedef struct ld_archive_listing {
  int64_t time_start; /* ns, inclusive */
  int64_t time_end;   /* ns, inclusive */
  bool has_after;
  int64_t after_ts;
  uint8_t after_hash[LD_WAKU_HASH_LEN];
  uint32_t limit; /* 0 → LD_ARCHIVE_DEFAULT_LIST_PAGE; > max → LD_ARCHIVE_MAX_LIST_PAGE */
} ld_archive_listing_t;

typedef struct ld_archive_key {
  int64_t timestamp;
  uint8_t hash[LD_WAKU_HASH_LEN];
  const char *pubsub_topic; /* NUL-terminated */
} ld_archive_key_t;

/* One page: err 0 with keys[0..n) (valid only during the call) and `more` when keys beyond the
 * page exist, or an error and a reason (`why`, never NULL; keys NULL, n 0): LD_ERR_INVALID_ARG
 * (time_start > time_end), LD_ERR_DB, LD_ERR_TIMEOUT, LD_ERR_CLOSED, LD_ERR_NOMEM. Called exactly
 * once. */
typedef void (*ld_archive_list_fn)(int err, const char *why, const ld_archive_key_t *keys, size_t n,
                                   bool more, void *user_data);

/* Starts listing one page of `l` (copied). Returns 0 (then `done` reports), or LD_ERR_CLOSED /
 * LD_ERR_NOMEM / LD_ERR_INVALID_ARG (a, l or done NULL) with `done` never called. Read-your-writes
 * as ld_archive_query. */
int ld_archive_list_keys(ld_archive_t *a, const ld_archive_listing_t *l, ld_archive_list_fn done,
                         void *user_data);

/* ---- maintenance and figures ----------------------------------------------------------------- */

/* Runs the retention policies now (the timer calls the same); `done` (may be NULL) gets 0 or
 * the error. Returns 0, or LD_ERR_CLOSED / LD_ERR_NOMEM with `done` never called. */
int ld_archive_apply_retention(ld_archive_t *a, ld_archive_done_fn done, void *user_data);

/* Number of stored messages (err 0) or an error; for metrics and tests. Returns 0 or
 * LD_ERR_CLOSED / LD_ERR_NOMEM / LD_ERR_INVALID_ARG with `done` never called. */
typedef void (*ld_archive_count_fn)(int err, uint64_t count, void *user_data);
int ld_archive_count(ld_archive_t *a, ld_archive_count_fn done, void *user_data);

/* Counters since open, for metrics (waku_archive_messages, waku_archive_errors, …). */
typedef struct ld_archive_stats {
  uint64_t inserted;   /* rows committed (duplicates excluded) */
  uint64_t duplicates; /* hashes already stored */
  uint64_t rejected_ephemeral, rejected_too_old, rejected_future;
  uint64_t insert_errors; /* rows whose batch failed */
  uint64_t queries, query_errors;
  uint64_t retention_runs, retention_deleted;
} ld_archive_stats_t;

void ld_archive_stats(const ld_archive_t *a, ld_archive_stats_t *out);

/* ---- tests ----------------------------------------------------------------------------------- */

/* For tests of what a node does while its archive opens (a large archive, a long migration):
 * while `held` is true, every archive of the process whose database has opened waits before it
 * reports the open and starts the work it took meanwhile; lifting the hold lets them go on
 * within a few milliseconds. Off unless a test sets it. Any thread. */
void ld_archive_hold_opening(bool held);

#endif
