/* Archive figures at a million stored messages, for sqlite and postgres: ingest rate through
 * ld_archive_insert (the last 100,000 messages, on top of the rest loaded by a bulk path), and
 * store-query latency (p50/p99) for a 20-message page by content topic and time range and for a
 * 100-hash lookup, with 1 client and with 16 concurrent clients; then publish-then-query rounds
 * (a message inserted and its hash looked up at once, which waits for the write). Prints
 * figures; never fails on a time.
 *
 *   bench_archive [--rows N] [--ingest N] [--queries N] [--db-connections N] [--sqlite-only]
 *                 [--postgres-only] [--reuse] [--lookups-only] [--days N] [--ryw N]
 *
 * SQLite uses /tmp/ld-bench-archive.db; PostgreSQL the server of LD_BENCH_PG_URL (or
 * LD_TEST_PG_URL) in a schema ld_bench, dropped at the end. PostgreSQL queries run right after
 * the load and, when the server has the pg_prewarm extension, once more with the tables and
 * indexes in shared buffers (a server that has been answering for a while); the server's
 * shared_buffers is printed. LD_BENCH_KEEP=1 keeps the PostgreSQL tables; a later run with
 * --reuse and the LD_BENCH_BASE it printed queries them again without loading. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>
#include <sqlite3.h>
#include <uv.h>

#include "bench_clock.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/hex.h"
#include "waku/archive/archive.h"

#define SEC 1000000000ll
#define HOUR (3600 * SEC)
#define N_TOPICS 20
#define N_SHARDS 8
#define PAYLOAD_LEN 200
#define SQLITE_PATH "/tmp/ld-bench-archive.db"
#define PG_SCHEMA "ld_bench"

static size_t g_rows = 1000000, g_ingest = 100000, g_queries = 2000;
static size_t g_ryw_rounds = 1000; /* --ryw N: publish-then-query rounds (0: none) */
static int64_t g_span = 24 * HOUR; /* --days N: the time the messages spread over */
static uint32_t g_db_connections;  /* 0: the archive's default */
static bool g_reuse;               /* --reuse: query the tables a kept run left */
static bool g_lookups_only;        /* --lookups-only: no page queries */
static int64_t g_base;             /* timestamp of row 0 */
static uint8_t (*g_hash)[LD_WAKU_HASH_LEN];
static uv_loop_t g_loop;
static ld_archive_t *g_a;
static char g_topics[N_TOPICS][40], g_shards[N_SHARDS][24];

/* ---- the messages: row i is a pure function of i ----------------------------------------------
 */

typedef struct gen {
  char payload[PAYLOAD_LEN];
  ld_waku_message_t m;
  const char *pubsub;
} gen_t;

static int64_t ts_of(size_t i) {
  return g_base + (int64_t)((double)i * (double)g_span / (double)g_rows);
}

static void gen(size_t i, gen_t *g) {
  uint64_t x = i * 0x9e3779b97f4a7c15ull + 1;
  for (size_t k = 0; k < PAYLOAD_LEN; k++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    g->payload[k] = (char)('a' + x % 26);
  }
  ld_waku_message_init(&g->m);
  g->m.payload = (const uint8_t *)g->payload;
  g->m.payload_len = PAYLOAD_LEN;
  g->m.content_topic = g_topics[i % N_TOPICS];
  g->m.content_topic_len = strlen(g_topics[i % N_TOPICS]);
  g->m.timestamp = ts_of(i);
  g->pubsub = g_shards[i % N_TOPICS % N_SHARDS];
}

static void make_hashes(void) {
  g_hash = malloc(g_rows * LD_WAKU_HASH_LEN);
  gen_t g;
  for (size_t i = 0; i < g_rows; i++) {
    gen(i, &g);
    ld_waku_message_hash(g.pubsub, &g.m, g_hash[i]);
  }
}

/* ---- loop helpers ---------------------------------------------------------------------------- */

static void wait_flag(const bool *flag) {
  while (!*flag)
    uv_run(&g_loop, UV_RUN_ONCE);
}

static void opened(ld_archive_t *a, int err, const char *why, void *ud) {
  if (err != 0) {
    fprintf(stderr, "open failed: %s\n", why);
    exit(1);
  }
  g_a = a;
  *(bool *)ud = true;
}

static void open_archive(const char *url) {
  ld_archive_config_t cfg;
  ld_archive_config_default(&cfg);
  cfg.url = url;
  cfg.request_timeout_ms = 60000;
  if (g_db_connections > 0)
    cfg.max_db_connections = g_db_connections;
  bool done = false;
  if (ld_archive_open(&g_loop, &cfg, opened, &done) != 0)
    exit(1);
  wait_flag(&done);
}

static void closed(void *ud) {
  *(bool *)ud = true;
}

static void close_archive(void) {
  bool done = false;
  ld_archive_close(g_a, closed, &done);
  wait_flag(&done);
  g_a = NULL;
}

static void count_cb(int err, uint64_t n, void *ud) {
  *(uint64_t *)ud = err == 0 ? n : 0;
}

static uint64_t count(void) {
  uint64_t n = UINT64_MAX;
  ld_archive_count(g_a, count_cb, &n);
  while (n == UINT64_MAX)
    uv_run(&g_loop, UV_RUN_ONCE);
  return n;
}

/* ---- ingest through the archive ------------------------------------------------------------- */

typedef struct ingest {
  size_t acked, failed;
} ingest_t;

static void acked(int err, void *ud) {
  ingest_t *in = ud;
  in->acked++;
  in->failed += err != 0;
}

/* Inserts rows [from, to) as fast as the archive takes them; returns messages per second. */
static double ingest(size_t from, size_t to) {
  ingest_t in = {0};
  gen_t g;
  uint64_t t0 = ld_now_ns();
  for (size_t i = from; i < to; i++) {
    gen(i, &g);
    while (ld_archive_insert(g_a, g.pubsub, &g.m, g_hash[i], acked, &in) == LD_ERR_LIMIT)
      uv_run(&g_loop, UV_RUN_ONCE);
    if ((i & 255) == 0)
      uv_run(&g_loop, UV_RUN_NOWAIT);
  }
  while (in.acked < to - from)
    uv_run(&g_loop, UV_RUN_ONCE);
  double s = (double)(ld_now_ns() - t0) / 1e9;
  if (in.failed > 0)
    fprintf(stderr, "ingest: %zu failed\n", in.failed);
  return (double)(to - from) / s;
}

/* ---- queries --------------------------------------------------------------------------------- */

/* Pages by topic and time; lookups of hashes of any age; lookups of hashes of the newest hour
 * (what send confirmations ask). */
typedef enum qkind { Q_TOPIC_TIME, Q_HASHES, Q_RECENT_HASHES } qkind_t;

typedef struct qrun {
  qkind_t kind;
  uint64_t *lat;
  size_t issued, done, total, rows, errors;
  uint64_t rng;
} qrun_t;

typedef struct qone {
  qrun_t *run;
  uint64_t t0;
} qone_t;

static uint64_t next_rand(qrun_t *r) {
  r->rng ^= r->rng << 13, r->rng ^= r->rng >> 7, r->rng ^= r->rng << 17;
  return r->rng;
}

static void issue(qrun_t *r);

static void answered(int err, const char *why, const ld_archive_result_t *res, void *ud) {
  qone_t *q = ud;
  qrun_t *r = q->run;
  r->lat[r->done++] = ld_now_ns() - q->t0;
  if (err != 0) {
    if (r->errors++ == 0)
      fprintf(stderr, "query failed: %s\n", why);
  } else {
    r->rows += res->n_rows;
  }
  free(q);
  if (r->issued < r->total)
    issue(r);
}

static void issue(qrun_t *r) {
  static uint8_t hashes[LD_ARCHIVE_MAX_HASHES][LD_WAKU_HASH_LEN];
  ld_archive_query_t q = {.forward = next_rand(r) & 1, .include_data = true};
  size_t t = next_rand(r) % N_TOPICS;
  const char *ct = g_topics[t];
  if (r->kind == Q_TOPIC_TIME) {
    q.pubsub_topic = g_shards[t % N_SHARDS];
    q.content_topics = &ct;
    q.n_content_topics = 1;
    q.has_time_start = q.has_time_end = true;
    q.time_start = g_base + (int64_t)(next_rand(r) % (uint64_t)(g_span - HOUR));
    q.time_end = q.time_start + HOUR;
    q.limit = 20;
  } else {
    size_t recent = (size_t)((double)g_rows * (double)HOUR / (double)g_span);
    size_t from = r->kind == Q_RECENT_HASHES ? g_rows - recent : 0;
    for (size_t i = 0; i < LD_ARCHIVE_MAX_HASHES; i++)
      memcpy(hashes[i], g_hash[from + next_rand(r) % (g_rows - from)], LD_WAKU_HASH_LEN);
    q.hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes;
    q.n_hashes = LD_ARCHIVE_MAX_HASHES;
    q.limit = 100;
  }
  qone_t *one = malloc(sizeof *one);
  one->run = r;
  one->t0 = ld_now_ns();
  r->issued++;
  if (ld_archive_query(g_a, &q, answered, one) != 0)
    exit(1);
}

/* Runs `total` queries of one kind, `clients` at a time; returns the seconds taken. */
static double run_queries(qrun_t *r, unsigned clients) {
  uint64_t t0 = ld_now_ns();
  for (unsigned c = 0; c < clients && r->issued < r->total; c++)
    issue(r);
  while (r->done < r->total)
    uv_run(&g_loop, UV_RUN_ONCE);
  return (double)(ld_now_ns() - t0) / 1e9;
}

/* Measured after a warm-up of 8 queries per client, unmeasured: every pooled connection the
 * clients need is open and has planned its statements, as on a server that has been answering. */
static void latency(const char *driver, qkind_t kind, unsigned clients) {
  qrun_t warm = {.kind = kind, .total = 8u * clients, .rng = 0x7654321u + clients};
  warm.lat = calloc(warm.total, sizeof *warm.lat);
  run_queries(&warm, clients);
  free(warm.lat);
  qrun_t r = {.kind = kind, .total = g_queries, .rng = 0x1234567u + clients};
  r.lat = calloc(r.total, sizeof *r.lat);
  double s = run_queries(&r, clients);
  bench_sort_u64(r.lat, r.total);
  printf("%-8s %-28s %2u client%s  p50 %7.2f ms  p99 %7.2f ms  %7.0f q/s  %5.1f rows/q  "
         "(p90 %.2f, max %.2f ms)%s\n",
         driver,
         kind == Q_TOPIC_TIME ? "page of 20 by topic + time"
         : kind == Q_HASHES   ? "lookup of 100 hashes"
                              : "lookup of 100 of the last hour",
         clients, clients > 1 ? "s" : " ", (double)bench_pct_u64(r.lat, r.total, 50) / 1e6,
         (double)bench_pct_u64(r.lat, r.total, 99) / 1e6, (double)r.total / s,
         (double)r.rows / (double)r.total, (double)bench_pct_u64(r.lat, r.total, 90) / 1e6,
         (double)r.lat[r.total - 1] / 1e6, r.errors ? "  (errors)" : "");
  free(r.lat);
}

static void all_latencies(const char *driver) {
  if (!g_lookups_only) {
    latency(driver, Q_TOPIC_TIME, 1);
    latency(driver, Q_TOPIC_TIME, 16);
  }
  latency(driver, Q_HASHES, 1);
  latency(driver, Q_HASHES, 16);
  latency(driver, Q_RECENT_HASHES, 1);
  latency(driver, Q_RECENT_HASHES, 16);
}

/* ---- publish then query ---------------------------------------------------------------------- */

typedef struct ryw_answer {
  bool done;
  size_t rows;
} ryw_answer_t;

static void ryw_answered(int err, const char *why, const ld_archive_result_t *res, void *ud) {
  ryw_answer_t *a = ud;
  a->done = true;
  if (err != 0)
    fprintf(stderr, "query failed: %s\n", why);
  else
    a->rows = res->n_rows;
}

/* `n` rounds, one after the other: a new message is inserted and its hash looked up at once,
 * with no loop turn in between. The lookup waits for the write (read-your-writes): its latency
 * is that of the write plus the lookup. */
static void publish_then_query(const char *driver, size_t n) {
  if (n == 0)
    return;
  uint64_t *lat = calloc(n, sizeof *lat);
  size_t found = 0;
  for (size_t k = 0; k < n; k++) {
    gen_t g;
    gen(g_rows + k, &g);
    uint8_t hash[1][LD_WAKU_HASH_LEN];
    ld_waku_message_hash(g.pubsub, &g.m, hash[0]);
    ld_archive_query_t q = {
        .forward = true, .hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])hash, .n_hashes = 1};
    ryw_answer_t a = {0};
    uint64_t t0 = ld_now_ns();
    if (ld_archive_insert(g_a, g.pubsub, &g.m, hash[0], NULL, NULL) != LD_ARCHIVE_ACCEPTED ||
        ld_archive_query(g_a, &q, ryw_answered, &a) != 0)
      exit(1);
    while (!a.done)
      uv_run(&g_loop, UV_RUN_ONCE);
    lat[k] = ld_now_ns() - t0;
    found += a.rows == 1;
  }
  bench_sort_u64(lat, n);
  printf("%-8s publish, then its hash at once, %zu rounds: p50 %.2f ms  p99 %.2f ms  "
         "(max %.2f ms), found %zu of %zu\n",
         driver, n, (double)bench_pct_u64(lat, n, 50) / 1e6,
         (double)bench_pct_u64(lat, n, 99) / 1e6, (double)lat[n - 1] / 1e6, found, n);
  free(lat);
}

/* ---- sqlite ---------------------------------------------------------------------------------- */

static int cmp_by_hash(const void *a, const void *b) {
  return memcmp(g_hash[*(const uint32_t *)a], g_hash[*(const uint32_t *)b], LD_WAKU_HASH_LEN);
}

static void must(sqlite3 *db, int rc) {
  if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
    fprintf(stderr, "sqlite: %s\n", sqlite3_errmsg(db));
    exit(1);
  }
}

/* Bulk path: one transaction, rows in key order, index built afterwards. */
static void sqlite_bulk(size_t n) {
  uint32_t *order = malloc(n * sizeof *order);
  for (size_t i = 0; i < n; i++)
    order[i] = (uint32_t)i;
  qsort(order, n, sizeof *order, cmp_by_hash);
  sqlite3 *db = NULL;
  if (sqlite3_open(SQLITE_PATH, &db) != SQLITE_OK)
    must(db, SQLITE_ERROR);
  must(db, sqlite3_exec(db,
                        "PRAGMA synchronous = OFF; PRAGMA cache_size = -262144; "
                        "DROP INDEX i_ts; DROP INDEX i_ct_ts; BEGIN",
                        NULL, NULL, NULL));
  sqlite3_stmt *st;
  must(db, sqlite3_prepare_v2(db,
                              "INSERT INTO Message (messageHash, pubsubTopic, contentTopic, "
                              "payload, version, timestamp, meta) VALUES (?, ?, ?, ?, 0, ?, NULL)",
                              -1, &st, NULL));
  gen_t g;
  for (size_t k = 0; k < n; k++) {
    size_t i = order[k];
    gen(i, &g);
    sqlite3_bind_blob(st, 1, g_hash[i], LD_WAKU_HASH_LEN, SQLITE_STATIC);
    sqlite3_bind_blob(st, 2, g.pubsub, (int)strlen(g.pubsub), SQLITE_STATIC);
    sqlite3_bind_blob(st, 3, g.m.content_topic, (int)g.m.content_topic_len, SQLITE_STATIC);
    sqlite3_bind_blob(st, 4, g.payload, PAYLOAD_LEN, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, g.m.timestamp);
    must(db, sqlite3_step(st));
    sqlite3_reset(st);
  }
  sqlite3_finalize(st);
  must(db, sqlite3_exec(db,
                        "COMMIT; CREATE INDEX i_ts ON Message (timestamp); "
                        "CREATE INDEX i_ct_ts ON Message (contentTopic, timestamp)",
                        NULL, NULL, NULL));
  sqlite3_close(db);
  free(order);
}

static void bench_sqlite(void) {
  static const char *const files[] = {SQLITE_PATH, SQLITE_PATH "-wal", SQLITE_PATH "-shm"};
  for (size_t i = 0; i < 3; i++)
    unlink(files[i]);
  const char *url = "sqlite://" SQLITE_PATH;
  open_archive(url); /* creates the schema */
  close_archive();
  uint64_t t0 = ld_now_ns();
  sqlite_bulk(g_rows - g_ingest);
  printf("sqlite   bulk load of %zu rows: %.1f s\n", g_rows - g_ingest,
         (double)(ld_now_ns() - t0) / 1e9);
  t0 = ld_now_ns();
  open_archive(url);
  printf("sqlite   open of the loaded file (the key map built from its rows): %.2f s\n",
         (double)(ld_now_ns() - t0) / 1e9);
  double rate = ingest(g_rows - g_ingest, g_rows);
  printf("sqlite   ingest through the archive: %.0f msg/s (%zu messages onto %zu)\n", rate,
         g_ingest, g_rows - g_ingest);
  printf("sqlite   stored: %llu messages\n", (unsigned long long)count());
  all_latencies("sqlite");
  publish_then_query("sqlite", g_ryw_rounds);
  close_archive();
}

/* ---- postgres -------------------------------------------------------------------------------- */

static PGconn *pg_connect(const char *url) {
  PGconn *c = PQconnectdb(url);
  if (PQstatus(c) != CONNECTION_OK) {
    fprintf(stderr, "postgres: %s", PQerrorMessage(c));
    exit(1);
  }
  return c;
}

static void pg_must(PGconn *c, const char *sql) {
  PGresult *r = PQexec(c, sql);
  ExecStatusType s = PQresultStatus(r);
  if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) {
    fprintf(stderr, "postgres: %s: %s", sql, PQerrorMessage(c));
    exit(1);
  }
  PQclear(r);
}

/* The first column of the first row of `sql` as text ("" when none). */
static void pg_text(PGconn *c, const char *sql, char *out, size_t cap) {
  PGresult *r = PQexec(c, sql);
  snprintf(out, cap, "%s",
           PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0 ? PQgetvalue(r, 0, 0) : "");
  PQclear(r);
}

/* Loads the benchmark's tables and indexes into shared buffers (pg_prewarm), as they are on a
 * server that has been answering queries for a while. False when the extension is missing. */
static bool pg_prewarm_all(PGconn *c) {
  char blocks[32];
  pg_text(c,
          "SELECT sum(public.pg_prewarm(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = "
          "c.relnamespace WHERE n.nspname = '" PG_SCHEMA "' AND c.relkind IN ('r', 'i') AND "
          "EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_prewarm')",
          blocks, sizeof blocks);
  if (blocks[0] == '\0')
    return false;
  printf("postgres prewarmed %s blocks of " PG_SCHEMA "\n", blocks);
  return true;
}

/* Writes the load's dirty pages out (CHECKPOINT, which needs the pg_checkpoint role), so that the
 * checkpointer does not spread them over the minutes the queries are measured in. */
static void pg_checkpoint(PGconn *c) {
  PGresult *r = PQexec(c, "CHECKPOINT");
  if (PQresultStatus(r) != PGRES_COMMAND_OK)
    printf("postgres no CHECKPOINT after the load: %s", PQerrorMessage(c));
  PQclear(r);
}

static bool hour_start(size_t i) {
  return i == 0 || ts_of(i) / HOUR != ts_of(i - 1) / HOUR;
}

/* Creates the hourly partitions the way the archive does: one message per hour through it. */
static void pg_seed_partitions(size_t n) {
  ingest_t in = {0};
  size_t sent = 0;
  gen_t g;
  for (size_t i = 0; i < n; i++) {
    if (!hour_start(i))
      continue;
    gen(i, &g);
    ld_archive_insert(g_a, g.pubsub, &g.m, g_hash[i], acked, &in);
    sent++;
  }
  while (in.acked < sent)
    uv_run(&g_loop, UV_RUN_ONCE);
}

static void pg_copy(PGconn *c, size_t n) {
  pg_must(c, "SET client_min_messages = warning");
  PGresult *r = PQexec(c, "COPY messages (messageHash, pubsubTopic, contentTopic, payload, "
                          "version, timestamp, id) FROM STDIN");
  if (PQresultStatus(r) != PGRES_COPY_IN) {
    fprintf(stderr, "postgres: COPY: %s", PQerrorMessage(c));
    exit(1);
  }
  PQclear(r);
  static char line[2 * PAYLOAD_LEN + 256];
  gen_t g;
  for (size_t i = 0; i < n; i++) {
    if (hour_start(i))
      continue;
    gen(i, &g);
    char hash[2 * LD_WAKU_HASH_LEN + 1], payload[2 * PAYLOAD_LEN + 1];
    ld_hex_encode(g_hash[i], LD_WAKU_HASH_LEN, hash);
    ld_hex_encode(g.m.payload, PAYLOAD_LEN, payload);
    int len = snprintf(line, sizeof line, "%s\t%s\t%s\t%s\t0\t%lld\t0\n", hash, g.pubsub,
                       g.m.content_topic, payload, (long long)g.m.timestamp);
    if (PQputCopyData(c, line, len) != 1)
      exit(1);
  }
  if (PQputCopyEnd(c, NULL) != 1)
    exit(1);
  while ((r = PQgetResult(c)) != NULL) {
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
      fprintf(stderr, "postgres: COPY: %s", PQerrorMessage(c));
      exit(1);
    }
    PQclear(r);
  }
  pg_must(c, "INSERT INTO messages_lookup (messageHash, timestamp) SELECT messageHash, timestamp "
             "FROM messages ON CONFLICT DO NOTHING");
  pg_must(c, "ANALYZE messages; ANALYZE messages_lookup");
}

/* The benchmark's partitions (of messages and of messages_lookup) in pg_tables. */
#define PG_PARTITIONS                                                                              \
  "FROM pg_tables WHERE schemaname = '" PG_SCHEMA "' AND tablename ~ '^(messages|lookup)_-?[0-9]'"

/* Drops the benchmark's schema; its partitions first, 60 per transaction (a month of hourly
 * partitions in one DROP … CASCADE outgrows the server's lock table). */
static void pg_drop_schema(PGconn *c) {
  for (;;) {
    char left[32];
    pg_text(c, "SELECT count(*) " PG_PARTITIONS, left, sizeof left);
    if (strtol(left, NULL, 10) == 0)
      break;
    pg_must(c, "SET client_min_messages = warning; DO $$DECLARE r record; BEGIN FOR r IN SELECT "
               "tablename " PG_PARTITIONS " LIMIT 60 LOOP EXECUTE "
               "format('DROP TABLE IF EXISTS " PG_SCHEMA ".%I', r.tablename); END LOOP; END$$");
  }
  pg_must(c, "SET client_min_messages = warning; DROP SCHEMA IF EXISTS " PG_SCHEMA " CASCADE");
}

static void pg_queries(PGconn *c);

static void bench_postgres(const char *base_url) {
  char url[512];
  snprintf(url, sizeof url, "%s%coptions=-csearch_path%%3D" PG_SCHEMA, base_url,
           strchr(base_url, '?') ? '&' : '?');
  PGconn *c = pg_connect(base_url);
  if (g_reuse) {
    PQfinish(c);
    c = pg_connect(url);
    open_archive(url);
    printf("postgres reusing the kept tables: %llu messages\n", (unsigned long long)count());
    pg_queries(c);
    return;
  }
  pg_drop_schema(c);
  pg_must(c, "CREATE SCHEMA " PG_SCHEMA);
  PQfinish(c);
  open_archive(url);
  uint64_t t0 = ld_now_ns();
  pg_seed_partitions(g_rows - g_ingest);
  c = pg_connect(url);
  pg_copy(c, g_rows - g_ingest);
  printf("postgres bulk load of %zu rows: %.1f s\n", g_rows - g_ingest,
         (double)(ld_now_ns() - t0) / 1e9);
  double rate = ingest(g_rows - g_ingest, g_rows);
  printf("postgres ingest through the archive: %.0f msg/s (%zu messages onto %zu)\n", rate,
         g_ingest, g_rows - g_ingest);
  /* As a maintained server would be after a bulk load: vacuumed (visibility maps for index-only
   * probes, no autovacuum running under the queries), analyzed and checkpointed. */
  pg_must(c, "VACUUM ANALYZE messages");
  pg_must(c, "VACUUM ANALYZE ld_messages_key_ts");
  pg_must(c, "VACUUM ANALYZE messages_lookup");
  pg_checkpoint(c);
  printf("postgres stored: %llu messages\n", (unsigned long long)count());
  pg_queries(c);
}

/* The query figures, the archive open on the loaded tables; closes both. */
static void pg_queries(PGconn *c) {
  char buffers[32];
  pg_text(c, "SHOW shared_buffers", buffers, sizeof buffers);
  printf("postgres shared_buffers %s; queries right after the load:\n", buffers);
  all_latencies("postgres");
  if (pg_prewarm_all(c)) {
    printf("postgres after pg_prewarm (as much of the tables as shared_buffers holds):\n");
    all_latencies("postgres");
  }
  publish_then_query("postgres", g_ryw_rounds);
  close_archive();
  if (getenv("LD_BENCH_KEEP") == NULL)
    pg_drop_schema(c);
  PQfinish(c);
}

/* ---- main ------------------------------------------------------------------------------------ */

int main(int argc, char **argv) {
  bool sqlite = true, postgres = true;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc)
      g_rows = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--ingest") == 0 && i + 1 < argc)
      g_ingest = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--queries") == 0 && i + 1 < argc)
      g_queries = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--db-connections") == 0 && i + 1 < argc)
      g_db_connections = (uint32_t)strtoul(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--sqlite-only") == 0)
      postgres = false;
    else if (strcmp(argv[i], "--postgres-only") == 0)
      sqlite = false;
    else if (strcmp(argv[i], "--reuse") == 0)
      g_reuse = true;
    else if (strcmp(argv[i], "--lookups-only") == 0)
      g_lookups_only = true;
    else if (strcmp(argv[i], "--ryw") == 0 && i + 1 < argc)
      g_ryw_rounds = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--days") == 0 && i + 1 < argc)
      g_span = (int64_t)strtoul(argv[++i], NULL, 10) * 24 * HOUR;
  }
  if (g_ingest >= g_rows || g_queries == 0)
    return 2;
  for (int i = 0; i < N_TOPICS; i++)
    snprintf(g_topics[i], sizeof g_topics[i], "/bench/1/topic-%02d/proto", i);
  for (int i = 0; i < N_SHARDS; i++)
    snprintf(g_shards[i], sizeof g_shards[i], "/waku/2/rs/1/%d", i);
  g_base = getenv("LD_BENCH_BASE") != NULL ? strtoll(getenv("LD_BENCH_BASE"), NULL, 10)
                                           : (int64_t)ld_wall_ns() - g_span;
  printf("# LD_BENCH_BASE=%lld\n", (long long)g_base);
  uv_loop_init(&g_loop);
  make_hashes();
  printf("# %zu messages of %d bytes over %lld h, %d content topics on %d shards\n", g_rows,
         PAYLOAD_LEN, (long long)(g_span / HOUR), N_TOPICS, N_SHARDS);
  if (sqlite)
    bench_sqlite();
  const char *pg = getenv("LD_BENCH_PG_URL") ? getenv("LD_BENCH_PG_URL") : getenv("LD_TEST_PG_URL");
  if (postgres && pg != NULL)
    bench_postgres(pg);
  else if (postgres)
    printf("postgres skipped: set LD_BENCH_PG_URL or LD_TEST_PG_URL\n");
  uv_run(&g_loop, UV_RUN_DEFAULT);
  uv_loop_close(&g_loop);
  free(g_hash);
  return 0;
}
