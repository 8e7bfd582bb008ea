/* One suite run against every archive backend: sqlite (temporary file), sqlite :memory:,
 * memory:// and postgres (LD_TEST_PG_URL; skipped when unset unless LD_REQUIRE_PG is set, then it
 * fails). Ingest checks, filters, hash lookups, pagination over 10,000 messages, cursor errors,
 * the three retention policies with a fake clock, reopening, read-your-writes (a query right
 * after an accepted message sees it), work taken while the archive opens, the key listing of
 * store-sync (a time range in pages), and the SQLite
 * migrations; for PostgreSQL also the migration from nwaku's version 8 and the hash → timestamp
 * index kept exact through retention and other writers.
 *
 * PostgreSQL runs in a schema of its own per process (search_path in the URL), emptied before
 * each test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>
#include <sqlite3.h>
#include <uv.h>

#include "archive_harness.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/hex.h"
#include "waku/archive/archive.h"
#include "waku/archive/driver.h"
#include "waku/archive/postgres/pg_lookup.h"

#define SEC 1000000000ll
#define HOUR (3600 * SEC)
#define T0H (1699999200ll * SEC) /* an o'clock hour */
#define T0 (T0H + 600 * SEC)
#define PUBSUB_A "/waku/2/rs/1/0"
#define PUBSUB_B "/waku/2/rs/1/7"
#define WAIT_MS 30000

typedef enum backend { B_SQLITE_FILE, B_SQLITE_MEM, B_MEMORY, B_POSTGRES } backend_t;

static const char *const k_ct[] = {"/app/1/alpha/proto", "/app/1/beta/proto", "/app/1/gamma/proto"};

static backend_t g_backend;
static uv_loop_t g_loop;
static int64_t g_now;
static ld_archive_t *g_a;
static char g_dir[64];
static char g_url[512];
static char g_pg_schema[64];

/* ---- loop and clock ------------------------------------------------------------------------- */

static int64_t fake_now(void *data) {
  (void)data;
  return g_now;
}

static uv_timer_t g_guard; /* wakes the loop up while a test waits */

static void guard_tick(uv_timer_t *t) {
  (void)t;
}

static void run_until(const bool *flag) {
  uint64_t end = ld_now_ms() + WAIT_MS;
  uv_timer_start(&g_guard, guard_tick, 20, 20);
  while (!*flag && ld_now_ms() < end)
    uv_run(&g_loop, UV_RUN_ONCE);
  uv_timer_stop(&g_guard);
  assert_true(*flag);
}

/* ---- backends ------------------------------------------------------------------------------- */

static PGresult *pg_admin(const char *sql) {
  PGconn *c = PQconnectdb(getenv("LD_TEST_PG_URL"));
  assert_int_equal(PQstatus(c), CONNECTION_OK);
  PGresult *r = PQexec(c, sql);
  if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK)
    fail_msg("%s: %s", sql, PQerrorMessage(c));
  PQfinish(c);
  return r;
}

/* Partitions of messages and of messages_lookup in this process's schema. */
static int pg_partitions(const char *parent) {
  char sql[256];
  snprintf(sql, sizeof sql,
           "SELECT count(*) FROM pg_inherits WHERE inhparent = to_regclass('%s.%s')", g_pg_schema,
           parent);
  PGresult *r = pg_admin(sql);
  int n = atoi(PQgetvalue(r, 0, 0));
  PQclear(r);
  return n;
}

static void pg_reset_schema(void) {
  char sql[256];
  snprintf(sql, sizeof sql,
           "SET client_min_messages = warning; DROP SCHEMA IF EXISTS %s CASCADE; "
           "CREATE SCHEMA %s",
           g_pg_schema, g_pg_schema);
  PQclear(pg_admin(sql));
}

/* Runs sql with this process's schema first in the search_path. */
static PGresult *pg_in_schema(const char *sql) {
  char *full = malloc(strlen(sql) + 160);
  assert_non_null(full);
  sprintf(full, "SET client_min_messages = warning; SET search_path = %s; %s", g_pg_schema, sql);
  PGresult *r = pg_admin(full);
  free(full);
  return r;
}

static long pg_long(const char *sql) {
  PGresult *r = pg_in_schema(sql);
  assert_int_equal(PQntuples(r), 1);
  long v = atol(PQgetvalue(r, 0, 0));
  PQclear(r);
  return v;
}

/* The hash key → timestamp index holds exactly the keys of messages. */
static void pg_assert_hash_index_exact(void) {
  long missing_or_stale =
      pg_long("SELECT count(*) FROM (SELECT hashtextextended(messageHash, 0) AS hashKey, "
              "timestamp FROM messages) m FULL JOIN ld_messages_key_ts k USING (hashKey, "
              "timestamp) WHERE m.hashKey IS NULL OR k.hashKey IS NULL");
  if (missing_or_stale != 0)
    fail_msg("ld_messages_key_ts differs from messages in %ld keys", missing_or_stale);
}

static void sqlite_remove_files(void) {
  char path[128];
  static const char *const suffix[] = {"", "-wal", "-shm"};
  for (size_t i = 0; i < 3; i++) {
    snprintf(path, sizeof path, "%s/archive.db%s", g_dir, suffix[i]);
    unlink(path);
  }
}

static void make_url(void) {
  switch (g_backend) {
  case B_SQLITE_FILE:
    snprintf(g_url, sizeof g_url, "sqlite://%s/archive.db", g_dir);
    break;
  case B_SQLITE_MEM:
    snprintf(g_url, sizeof g_url, "sqlite://:memory:");
    break;
  case B_MEMORY:
    snprintf(g_url, sizeof g_url, "memory://");
    break;
  case B_POSTGRES: {
    const char *base = getenv("LD_TEST_PG_URL");
    snprintf(g_url, sizeof g_url, "%s%coptions=-csearch_path%%3D%s", base,
             strchr(base, '?') ? '&' : '?', g_pg_schema);
    break;
  }
  }
}

static bool persistent(void) {
  return g_backend == B_SQLITE_FILE || g_backend == B_POSTGRES;
}

static bool partitioned(void) {
  return g_backend == B_POSTGRES;
}

/* ---- open, close ---------------------------------------------------------------------------- */

typedef struct opening {
  bool done;
  int err;
} opening_t;

static void opened(ld_archive_t *a, int err, const char *why, void *ud) {
  opening_t *o = ud;
  o->done = true;
  o->err = err;
  if (err != 0)
    print_message("open failed: %s\n", why);
  g_a = a;
}

static void open_with(const char *policies) {
  ld_archive_config_t cfg;
  ld_archive_config_default(&cfg);
  cfg.url = g_url;
  cfg.now_ns = fake_now;
  cfg.max_db_connections = 8;
  cfg.memory_capacity = 1000000;
  if (policies != NULL) {
    int n = ld_archive_policy_parse(policies, cfg.policies, LD_ARCHIVE_MAX_POLICIES, NULL, 0);
    assert_true(n > 0);
    cfg.n_policies = (size_t)n;
  }
  opening_t o = {0};
  assert_int_equal(ld_archive_open(&g_loop, &cfg, opened, &o), 0);
  run_until(&o.done);
  assert_int_equal(o.err, 0);
}

static void close_archive(void) {
  ah_close(g_a, run_until);
  g_a = NULL;
}

static int setup(void **state) {
  (void)state;
  g_now = T0;
  uv_loop_init(&g_loop);
  uv_timer_init(&g_loop, &g_guard);
  if (g_backend == B_SQLITE_FILE)
    sqlite_remove_files();
  if (g_backend == B_POSTGRES)
    pg_reset_schema();
  make_url();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  if (g_a != NULL)
    close_archive();
  uv_close((uv_handle_t *)&g_guard, NULL);
  uv_run(&g_loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&g_loop), 0);
  return 0;
}

/* ---- messages ------------------------------------------------------------------------------- */

typedef struct msg {
  const char *pubsub;
  char payload[48];
  ld_waku_message_t m;
  uint8_t hash[LD_WAKU_HASH_LEN];
} msg_t;

static void make_msg(msg_t *out, int i, int64_t ts, const char *pubsub, const char *ct) {
  memset(out, 0, sizeof *out);
  out->pubsub = pubsub;
  snprintf(out->payload, sizeof out->payload, "payload %d", i);
  ld_waku_message_init(&out->m);
  out->m.payload = (const uint8_t *)out->payload;
  out->m.payload_len = strlen(out->payload);
  out->m.content_topic = ct;
  out->m.content_topic_len = strlen(ct);
  out->m.timestamp = ts;
  assert_int_equal(ld_waku_message_hash(pubsub, &out->m, out->hash), 0);
}

typedef struct ack {
  int calls, ok, last_err;
} ack_t;

static void acked(int err, void *ud) {
  ack_t *a = ud;
  a->calls++;
  a->ok += err == 0;
  a->last_err = err;
}

static void wait_acks(ack_t *ack, int n) {
  uint64_t end = ld_now_ms() + WAIT_MS;
  uv_timer_start(&g_guard, guard_tick, 20, 20);
  while (ack->calls < n && ld_now_ms() < end)
    uv_run(&g_loop, UV_RUN_ONCE);
  uv_timer_stop(&g_guard);
  assert_int_equal(ack->calls, n);
}

/* Stores m[0..n) without the timestamp check and waits until every one is committed. */
static void store_all(msg_t *m, int n) {
  ack_t ack = {0};
  for (int i = 0; i < n; i++) {
    int rc;
    while ((rc = ld_archive_insert(g_a, m[i].pubsub, &m[i].m, m[i].hash, acked, &ack)) ==
           LD_ERR_LIMIT)
      uv_run(&g_loop, UV_RUN_NOWAIT);
    assert_int_equal(rc, LD_ARCHIVE_ACCEPTED);
  }
  wait_acks(&ack, n);
  assert_int_equal(ack.ok, n);
}

/* ---- queries -------------------------------------------------------------------------------- */

typedef struct row {
  uint8_t hash[LD_WAKU_HASH_LEN];
  int64_t ts;
  bool has_pubsub;
  char pubsub[32];
  char payload[64];
  size_t payload_len;
  char ct[32];
  uint8_t meta[64];
  size_t meta_len;
  uint32_t version;
} row_t;

typedef struct answer {
  bool done;
  int err;
  char why[160];
  size_t n;
  row_t rows[LD_ARCHIVE_MAX_PAGE_SIZE];
  bool has_cursor;
  uint8_t cursor[LD_WAKU_HASH_LEN];
} answer_t;

static void copy_row(row_t *o, const ld_archive_row_t *r) {
  memcpy(o->hash, r->hash, LD_WAKU_HASH_LEN);
  o->ts = r->msg.timestamp;
  o->has_pubsub = r->pubsub_topic != NULL;
  if (o->has_pubsub)
    snprintf(o->pubsub, sizeof o->pubsub, "%s", r->pubsub_topic);
  o->payload_len = r->msg.payload_len < sizeof o->payload ? r->msg.payload_len : 0;
  if (o->payload_len > 0)
    memcpy(o->payload, r->msg.payload, o->payload_len);
  snprintf(o->ct, sizeof o->ct, "%.*s", (int)r->msg.content_topic_len, r->msg.content_topic);
  o->meta_len = r->msg.meta_len <= sizeof o->meta ? r->msg.meta_len : 0;
  if (o->meta_len > 0)
    memcpy(o->meta, r->msg.meta, o->meta_len);
  o->version = r->msg.version;
}

static void answered(int err, const char *why, const ld_archive_result_t *res, void *ud) {
  answer_t *a = ud;
  assert_non_null(why);
  a->done = true;
  a->err = err;
  snprintf(a->why, sizeof a->why, "%s", why);
  if (err != 0)
    return;
  assert_true(res->n_rows <= LD_ARCHIVE_MAX_PAGE_SIZE);
  a->n = res->n_rows;
  for (size_t i = 0; i < res->n_rows; i++)
    copy_row(&a->rows[i], &res->rows[i]);
  a->has_cursor = res->has_cursor;
  memcpy(a->cursor, res->cursor, LD_WAKU_HASH_LEN);
}

static answer_t *query(const ld_archive_query_t *q) {
  static answer_t a;
  memset(&a, 0, sizeof a);
  assert_int_equal(ld_archive_query(g_a, q, answered, &a), 0);
  assert_false(a.done);
  run_until(&a.done);
  return &a;
}

static uint64_t count(void) {
  return ah_count(g_a, run_until);
}

static void retention_now(void) {
  ack_t ret = {0};
  assert_int_equal(ld_archive_apply_retention(g_a, acked, &ret), 0);
  wait_acks(&ret, 1);
  assert_int_equal(ret.last_err, 0);
}

/* Opens with policies and lets the run that follows opening finish on the empty archive, so
 * that it cannot interleave with the test's own inserts. */
static void open_with_policies(const char *policies) {
  open_with(policies);
  retention_now();
}

static bool present(const msg_t *m) {
  const uint8_t(*h)[LD_WAKU_HASH_LEN] = (const uint8_t(*)[LD_WAKU_HASH_LEN])m->hash;
  ld_archive_query_t q = {.forward = true, .hashes = h, .n_hashes = 1};
  answer_t *a = query(&q);
  assert_int_equal(a->err, 0);
  return a->n == 1;
}

/* ---- ingest --------------------------------------------------------------------------------- */

static void ingest_checks(void **state) {
  (void)state;
  open_with(NULL);
  msg_t m[7];
  make_msg(&m[0], 0, g_now - LD_ARCHIVE_MAX_TS_VARIANCE_NS, PUBSUB_A, k_ct[0]);
  make_msg(&m[1], 1, g_now + LD_ARCHIVE_MAX_TS_VARIANCE_NS, PUBSUB_A, k_ct[0]);
  make_msg(&m[2], 2, g_now - LD_ARCHIVE_MAX_TS_VARIANCE_NS - 1, PUBSUB_A, k_ct[0]);
  make_msg(&m[3], 3, g_now + LD_ARCHIVE_MAX_TS_VARIANCE_NS + 1, PUBSUB_A, k_ct[0]);
  make_msg(&m[4], 4, 0, PUBSUB_A, k_ct[0]);
  make_msg(&m[5], 5, g_now, PUBSUB_A, k_ct[0]);
  m[5].m.ephemeral = true;
  make_msg(&m[6], 6, g_now, PUBSUB_A, k_ct[1]);
  static const int expect[] = {LD_ARCHIVE_ACCEPTED, LD_ARCHIVE_ACCEPTED, LD_ARCHIVE_TOO_OLD,
                               LD_ARCHIVE_FUTURE,   LD_ARCHIVE_TOO_OLD,  LD_ARCHIVE_EPHEMERAL,
                               LD_ARCHIVE_ACCEPTED};
  ack_t ack = {0};
  for (int i = 0; i < 7; i++)
    assert_int_equal(ld_archive_handle_message(g_a, m[i].pubsub, &m[i].m, m[i].hash, acked, &ack),
                     expect[i]);
  /* the same message again, and once more after it is committed */
  assert_int_equal(ld_archive_handle_message(g_a, PUBSUB_A, &m[6].m, m[6].hash, acked, &ack),
                   LD_ARCHIVE_ACCEPTED);
  assert_int_equal(ack.calls, 0);
  wait_acks(&ack, 4);
  assert_int_equal(ld_archive_handle_message(g_a, PUBSUB_A, &m[6].m, m[6].hash, acked, &ack),
                   LD_ARCHIVE_ACCEPTED);
  wait_acks(&ack, 5);
  assert_int_equal(ack.ok, 5);
  /* store-sync ingress: no time window, ephemeral still refused */
  assert_int_equal(ld_archive_insert(g_a, PUBSUB_A, &m[2].m, m[2].hash, acked, &ack),
                   LD_ARCHIVE_ACCEPTED);
  assert_int_equal(ld_archive_insert(g_a, PUBSUB_A, &m[5].m, m[5].hash, acked, &ack),
                   LD_ARCHIVE_EPHEMERAL);
  wait_acks(&ack, 6);
  assert_int_equal(ack.ok, 6);
  assert_true(count() == 4);
  assert_true(present(&m[0]) && present(&m[1]) && present(&m[2]) && present(&m[6]));
  assert_false(present(&m[3]) || present(&m[4]) || present(&m[5]));
  ld_archive_stats_t st;
  ld_archive_stats(g_a, &st);
  assert_true(st.inserted == 4 && st.duplicates == 2 && st.rejected_too_old == 2 &&
              st.rejected_future == 1 && st.rejected_ephemeral == 2 && st.insert_errors == 0);
}

static void round_trip_of_every_field(void **state) {
  (void)state;
  open_with(NULL);
  static const uint8_t payload[] = {0x00, 0x01, 0xff, 'x', 0x00, 0x7f, 0x80};
  uint8_t meta[LD_WAKU_MAX_META_LEN];
  for (size_t i = 0; i < sizeof meta; i++)
    meta[i] = (uint8_t)i;
  msg_t m[2];
  make_msg(&m[0], 0, T0, PUBSUB_B, k_ct[2]);
  m[0].m.payload = payload;
  m[0].m.payload_len = sizeof payload;
  m[0].m.meta = meta;
  m[0].m.meta_len = sizeof meta;
  m[0].m.version = 7;
  static const uint8_t proof[] = {1, 2, 3};
  m[0].m.proof = proof; /* never stored */
  m[0].m.proof_len = sizeof proof;
  assert_int_equal(ld_waku_message_hash(PUBSUB_B, &m[0].m, m[0].hash), 0);
  make_msg(&m[1], 1, T0 + 1, PUBSUB_A, k_ct[0]);
  m[1].m.payload_len = 0; /* empty payload, no meta */
  assert_int_equal(ld_waku_message_hash(PUBSUB_A, &m[1].m, m[1].hash), 0);
  store_all(m, 2);
  ld_archive_query_t q = {.forward = true, .include_data = true};
  answer_t *a = query(&q);
  assert_int_equal(a->err, 0);
  assert_int_equal(a->n, 2);
  row_t *r = &a->rows[0];
  assert_memory_equal(r->hash, m[0].hash, LD_WAKU_HASH_LEN);
  assert_string_equal(r->pubsub, PUBSUB_B);
  assert_string_equal(r->ct, k_ct[2]);
  assert_int_equal(r->payload_len, sizeof payload);
  assert_memory_equal(r->payload, payload, sizeof payload);
  assert_int_equal(r->meta_len, sizeof meta);
  assert_memory_equal(r->meta, meta, sizeof meta);
  assert_int_equal(r->version, 7);
  assert_true(r->ts == T0);
  assert_int_equal(a->rows[1].payload_len, 0);
  assert_int_equal(a->rows[1].meta_len, 0);
  assert_false(a->has_cursor);
  /* include_data false: hashes only */
  q.include_data = false;
  a = query(&q);
  assert_int_equal(a->n, 2);
  assert_false(a->rows[0].has_pubsub);
  assert_int_equal(a->rows[0].payload_len, 0);
  assert_memory_equal(a->rows[1].hash, m[1].hash, LD_WAKU_HASH_LEN);
}

static void topics_that_postgres_cannot_hold(void **state) {
  (void)state;
  open_with(NULL);
  msg_t m;
  make_msg(&m, 0, T0, PUBSUB_A, "/app/1/\xff\xfe/proto");
  ack_t ack = {0};
  assert_int_equal(ld_archive_insert(g_a, PUBSUB_A, &m.m, m.hash, acked, &ack),
                   LD_ARCHIVE_ACCEPTED);
  wait_acks(&ack, 1);
  assert_int_equal(ack.last_err, partitioned() ? LD_ERR_BAD_ENCODING : 0);
  const char *ct = "/app/1/\xff\xfe/proto";
  ld_archive_query_t q = {.forward = true, .content_topics = &ct, .n_content_topics = 1};
  answer_t *a = query(&q);
  assert_int_equal(a->err, 0);
  assert_int_equal(a->n, partitioned() ? 0 : 1);
}

/* ---- filters -------------------------------------------------------------------------------- */

enum { FN = 60 };

/* 60 messages one second apart: pubsub A for even i, B for odd; content topic i % 3. */
static msg_t *filter_set(void) {
  static msg_t m[FN];
  for (int i = 0; i < FN; i++)
    make_msg(&m[i], i, T0 + i * SEC, i % 2 ? PUBSUB_B : PUBSUB_A, k_ct[i % 3]);
  store_all(m, FN);
  return m;
}

static void expect_indexes(const answer_t *a, const msg_t *m, const int *idx, size_t n) {
  assert_int_equal(a->err, 0);
  assert_int_equal(a->n, n);
  for (size_t i = 0; i < n; i++)
    assert_memory_equal(a->rows[i].hash, m[idx[i]].hash, LD_WAKU_HASH_LEN);
}

static void content_pubsub_and_time_filters(void **state) {
  (void)state;
  open_with(NULL);
  msg_t *m = filter_set();
  int idx[FN];
  size_t n = 0;
  /* pubsub A and content topic beta: i even and i % 3 == 1 */
  for (int i = 0; i < FN; i++)
    if (i % 2 == 0 && i % 3 == 1)
      idx[n++] = i;
  ld_archive_query_t q = {.forward = true,
                          .limit = 100,
                          .pubsub_topic = PUBSUB_A,
                          .content_topics = &k_ct[1],
                          .n_content_topics = 1};
  expect_indexes(query(&q), m, idx, n);
  /* two content topics, any pubsub topic, time window [10 s, 20 s], both ends inclusive */
  q = (ld_archive_query_t){.forward = true,
                           .limit = 100,
                           .content_topics = k_ct,
                           .n_content_topics = 2,
                           .has_time_start = true,
                           .time_start = T0 + 10 * SEC,
                           .has_time_end = true,
                           .time_end = T0 + 20 * SEC};
  n = 0;
  for (int i = 10; i <= 20; i++)
    if (i % 3 != 2)
      idx[n++] = i;
  expect_indexes(query(&q), m, idx, n);
  /* the same backward: same rows, still ascending */
  q.forward = false;
  expect_indexes(query(&q), m, idx, n);
  /* an exact instant */
  q = (ld_archive_query_t){.forward = true,
                           .has_time_start = true,
                           .time_start = T0 + 33 * SEC,
                           .has_time_end = true,
                           .time_end = T0 + 33 * SEC};
  idx[0] = 33;
  expect_indexes(query(&q), m, idx, 1);
  /* only an end, only a start */
  q = (ld_archive_query_t){.forward = true, .has_time_end = true, .time_end = T0 + 2 * SEC};
  int first[] = {0, 1, 2};
  expect_indexes(query(&q), m, first, 3);
  q = (ld_archive_query_t){.forward = true, .has_time_start = true, .time_start = T0 + 58 * SEC};
  int last[] = {58, 59};
  expect_indexes(query(&q), m, last, 2);
  /* nothing matches */
  const char *other = "/app/1/none/proto";
  q = (ld_archive_query_t){.forward = true, .content_topics = &other, .n_content_topics = 1};
  expect_indexes(query(&q), m, idx, 0);
  q = (ld_archive_query_t){.forward = true, .pubsub_topic = "/waku/2/rs/9/9"};
  expect_indexes(query(&q), m, idx, 0);
}

/* Lookups by hash over the filter set (stored by the caller), with every kind of option. */
static void check_hash_lookups(msg_t *m) {
  uint8_t hashes[LD_ARCHIVE_MAX_HASHES][LD_WAKU_HASH_LEN];
  int want[] = {59, 3, 17, 40, 3};
  for (int i = 0; i < 5; i++)
    memcpy(hashes[i], m[want[i]].hash, LD_WAKU_HASH_LEN);
  memset(hashes[5], 0xab, LD_WAKU_HASH_LEN); /* not stored */
  ld_archive_query_t q = {.forward = true,
                          .include_data = true,
                          .hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes,
                          .n_hashes = 6};
  int sorted[] = {3, 17, 40, 59};
  answer_t *a = query(&q);
  expect_indexes(a, m, sorted, 4);
  assert_string_equal(a->rows[0].pubsub, PUBSUB_B);
  assert_true(a->rows[2].ts == T0 + 40 * SEC);
  /* presence query: hashes only, backward, one per page */
  q.include_data = false;
  q.forward = false;
  q.limit = 1;
  a = query(&q);
  expect_indexes(a, m, &sorted[3], 1);
  assert_true(a->has_cursor);
  q.has_cursor = true;
  memcpy(q.cursor, a->cursor, LD_WAKU_HASH_LEN);
  expect_indexes(query(&q), m, &sorted[2], 1);
  /* a hash lookup combined with a content filter */
  q = (ld_archive_query_t){.forward = true,
                           .hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes,
                           .n_hashes = 6,
                           .content_topics = &k_ct[2],
                           .n_content_topics = 1};
  int ct2[] = {17, 59};
  expect_indexes(query(&q), m, ct2, 2);
  /* 100 hashes at most */
  for (int i = 0; i < LD_ARCHIVE_MAX_HASHES; i++)
    memcpy(hashes[i], m[i % FN].hash, LD_WAKU_HASH_LEN);
  q = (ld_archive_query_t){.forward = true,
                           .limit = 100,
                           .hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes,
                           .n_hashes = LD_ARCHIVE_MAX_HASHES};
  a = query(&q);
  assert_int_equal(a->err, 0);
  assert_int_equal(a->n, FN);
}

static void hash_lookups(void **state) {
  (void)state;
  open_with(NULL);
  check_hash_lookups(filter_set());
}

/* Keys that share their first bytes (a hash is the caller's to give): each lookup returns exactly
 * the rows whose whole hash matches, alone or together, and a key that only shares the prefix
 * finds nothing. */
static void hash_lookups_with_shared_prefixes(void **state) {
  (void)state;
  open_with(NULL);
  msg_t m[3];
  for (int i = 0; i < 3; i++) {
    make_msg(&m[i], i, T0 + i * SEC, PUBSUB_A, k_ct[0]);
    memset(m[i].hash, 0xc3, 8);
    m[i].hash[31] = (uint8_t)i;
  }
  store_all(m, 3);
  uint8_t hashes[4][LD_WAKU_HASH_LEN];
  for (int i = 0; i < 3; i++) {
    answer_t *a;
    memcpy(hashes[0], m[i].hash, LD_WAKU_HASH_LEN);
    ld_archive_query_t q = {.forward = true,
                            .include_data = true,
                            .hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes,
                            .n_hashes = 1};
    a = query(&q);
    assert_int_equal(a->err, 0);
    assert_int_equal(a->n, 1);
    assert_memory_equal(a->rows[0].hash, m[i].hash, LD_WAKU_HASH_LEN);
    assert_int_equal(a->rows[0].payload_len, strlen(m[i].payload));
  }
  memcpy(hashes[0], m[2].hash, LD_WAKU_HASH_LEN);
  hashes[0][31] = 9; /* the prefix of all three, stored under none */
  memcpy(hashes[1], m[0].hash, LD_WAKU_HASH_LEN);
  memcpy(hashes[2], m[2].hash, LD_WAKU_HASH_LEN);
  ld_archive_query_t q = {.forward = true,
                          .include_data = true,
                          .hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes,
                          .n_hashes = 1};
  answer_t *a = query(&q);
  assert_int_equal(a->err, 0);
  assert_int_equal(a->n, 0);
  q.n_hashes = 3;
  a = query(&q);
  assert_int_equal(a->n, 2);
  assert_memory_equal(a->rows[0].hash, m[0].hash, LD_WAKU_HASH_LEN);
  assert_memory_equal(a->rows[1].hash, m[2].hash, LD_WAKU_HASH_LEN);
}

/* Messages deleted by retention are not found; stored again, they are, under the same hash. */
static void hash_lookups_after_retention_and_restore(void **state) {
  (void)state;
  g_now = T0 + 100 * SEC;
  open_with_policies("time:60");
  enum { N = 40 };
  msg_t m[N];
  for (int i = 0; i < N; i++) /* the first 5 are older than a minute */
    make_msg(&m[i], i, T0 + (35 + i) * SEC, PUBSUB_A, k_ct[i % 3]);
  store_all(m, N);
  retention_now();
  assert_true(count() == N - 5);
  for (int i = 0; i < N; i++)
    if (present(&m[i]) != (i >= 5))
      fail_msg("message %d %s", i, i >= 5 ? "deleted" : "kept");
  store_all(m, 5);
  for (int i = 0; i < N; i++)
    if (!present(&m[i]))
      fail_msg("message %d not found after it was stored again", i);
  /* most of them go now (on SQLite the key map is rebuilt), and some come back */
  g_now += 30 * SEC;
  retention_now();
  assert_true(count() == 5);
  store_all(m, 10);
  for (int i = 0; i < N; i++)
    if (present(&m[i]) != (i < 10 || i >= 35))
      fail_msg("message %d %s", i, i < 10 || i >= 35 ? "not found" : "found");
}

static void query_argument_errors(void **state) {
  (void)state;
  open_with(NULL);
  msg_t *m = filter_set();
  ld_archive_query_t q = {.forward = true, .has_cursor = true};
  answer_t *a = query(&q); /* all-zero cursor */
  assert_int_equal(a->err, LD_ERR_INVALID_ARG);
  assert_non_null(strstr(a->why, "zero"));
  memset(q.cursor, 0x5a, LD_WAKU_HASH_LEN); /* unknown cursor */
  a = query(&q);
  assert_int_equal(a->err, LD_ERR_NOT_FOUND);
  const char *many[LD_ARCHIVE_MAX_CONTENT_TOPICS + 1];
  for (size_t i = 0; i <= LD_ARCHIVE_MAX_CONTENT_TOPICS; i++)
    many[i] = k_ct[i % 3];
  memcpy(q.cursor, m[5].hash, LD_WAKU_HASH_LEN);
  q.content_topics = many;
  q.n_content_topics = LD_ARCHIVE_MAX_CONTENT_TOPICS + 1;
  a = query(&q); /* too many content topics with a cursor */
  assert_int_equal(a->err, LD_ERR_INVALID_ARG);
  q.n_content_topics = LD_ARCHIVE_MAX_CONTENT_TOPICS; /* ten are fine */
  a = query(&q);
  assert_int_equal(a->err, 0);
  assert_int_equal(a->n, 20);
  q.has_cursor = false; /* eleven without a cursor are fine too (nwaku) */
  q.n_content_topics = LD_ARCHIVE_MAX_CONTENT_TOPICS + 1;
  a = query(&q);
  assert_int_equal(a->err, 0);
  q = (ld_archive_query_t){.forward = true,
                           .n_hashes = LD_ARCHIVE_MAX_HASHES + 1,
                           .hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])m[0].hash};
  assert_int_equal(query(&q)->err, LD_ERR_INVALID_ARG);
  q = (ld_archive_query_t){.forward = true,
                           .has_time_start = true,
                           .time_start = T0 + 2,
                           .has_time_end = true,
                           .time_end = T0 + 1};
  assert_int_equal(query(&q)->err, LD_ERR_INVALID_ARG);
  /* page sizes: 0 → 20, above 100 → 100 */
  q = (ld_archive_query_t){.forward = true, .limit = 0};
  a = query(&q);
  assert_int_equal(a->n, LD_ARCHIVE_DEFAULT_PAGE_SIZE);
  assert_true(a->has_cursor);
  assert_memory_equal(a->cursor, m[19].hash, LD_WAKU_HASH_LEN);
  q.limit = 1000;
  a = query(&q);
  assert_int_equal(a->n, FN);
  assert_false(a->has_cursor);
  /* exactly a page of rows: no cursor */
  q.limit = FN;
  a = query(&q);
  assert_int_equal(a->n, FN);
  assert_false(a->has_cursor);
  ld_archive_stats_t st;
  ld_archive_stats(g_a, &st);
  assert_true(st.query_errors == 5);
}

/* ---- pagination ----------------------------------------------------------------------------- */

enum { PN = 10000 };

static int cmp_key(const row_t *a, const row_t *b) {
  if (a->ts != b->ts)
    return a->ts < b->ts ? -1 : 1;
  return memcmp(a->hash, b->hash, LD_WAKU_HASH_LEN);
}

static int cmp_hash(const void *x, const void *y) {
  return memcmp(x, y, LD_WAKU_HASH_LEN);
}

/* hash → timestamp of the stored messages, for pages without data */
typedef struct keyed {
  uint8_t hash[LD_WAKU_HASH_LEN];
  int64_t ts;
} keyed_t;

static keyed_t *g_keys;
static size_t g_n_keys;

static void index_keys(const msg_t *m, size_t n) {
  g_keys = realloc(g_keys, n * sizeof *g_keys);
  for (size_t i = 0; i < n; i++) {
    memcpy(g_keys[i].hash, m[i].hash, LD_WAKU_HASH_LEN);
    g_keys[i].ts = m[i].m.timestamp;
  }
  g_n_keys = n;
  qsort(g_keys, n, sizeof *g_keys, cmp_hash);
}

static void fill_ts(row_t *r) {
  keyed_t *k = bsearch(r->hash, g_keys, g_n_keys, sizeof *g_keys, cmp_hash);
  assert_non_null(k);
  if (r->has_pubsub)
    assert_true(r->ts == k->ts);
  r->ts = k->ts;
}

/* Pages through the query and checks coverage: every expected message exactly once, ascending
 * within each page, pages in query direction, cursor = last row in query direction. */
static void page_through(ld_archive_query_t q, uint8_t (*expected)[LD_WAKU_HASH_LEN], size_t n) {
  uint8_t(*seen)[LD_WAKU_HASH_LEN] = calloc(n + LD_ARCHIVE_MAX_PAGE_SIZE, LD_WAKU_HASH_LEN);
  size_t got = 0;
  row_t prev_page_edge = {0};
  bool have_edge = false;
  uint32_t page = q.limit == 0 ? LD_ARCHIVE_DEFAULT_PAGE_SIZE : q.limit;
  for (;;) {
    answer_t *a = query(&q);
    assert_int_equal(a->err, 0);
    assert_true(a->n <= page);
    for (size_t i = 0; i < a->n; i++)
      fill_ts(&a->rows[i]);
    for (size_t i = 1; i < a->n; i++)
      assert_true(cmp_key(&a->rows[i - 1], &a->rows[i]) < 0);
    if (a->n > 0 && have_edge) {
      if (q.forward)
        assert_true(cmp_key(&prev_page_edge, &a->rows[0]) < 0);
      else
        assert_true(cmp_key(&a->rows[a->n - 1], &prev_page_edge) < 0);
    }
    for (size_t i = 0; i < a->n && got < n + LD_ARCHIVE_MAX_PAGE_SIZE; i++)
      memcpy(seen[got++], a->rows[i].hash, LD_WAKU_HASH_LEN);
    if (!a->has_cursor)
      break;
    assert_int_equal(a->n, page);
    const row_t *edge = q.forward ? &a->rows[a->n - 1] : &a->rows[0];
    assert_memory_equal(a->cursor, edge->hash, LD_WAKU_HASH_LEN);
    prev_page_edge = *edge;
    have_edge = true;
    q.has_cursor = true;
    memcpy(q.cursor, a->cursor, LD_WAKU_HASH_LEN);
  }
  assert_int_equal(got, n);
  qsort(seen, got, LD_WAKU_HASH_LEN, cmp_hash);
  qsort(expected, n, LD_WAKU_HASH_LEN, cmp_hash);
  for (size_t i = 0; i < n; i++)
    assert_memory_equal(seen[i], expected[i], LD_WAKU_HASH_LEN);
  free(seen);
}

static void pagination_over_10000_messages(void **state) {
  (void)state;
  open_with(NULL);
  msg_t *m = calloc(PN, sizeof *m);
  for (int i = 0; i < PN; i++) /* three messages per millisecond: ties ordered by hash */
    make_msg(&m[i], i, T0 + (int64_t)(i / 3) * 1000000, i % 2 ? PUBSUB_B : PUBSUB_A, k_ct[i % 3]);
  store_all(m, PN);
  index_keys(m, PN);
  assert_true(count() == PN);
  uint8_t(*all)[LD_WAKU_HASH_LEN] = calloc(PN, LD_WAKU_HASH_LEN);
  for (int i = 0; i < PN; i++)
    memcpy(all[i], m[i].hash, LD_WAKU_HASH_LEN);
  page_through((ld_archive_query_t){.forward = true, .limit = 100}, all, PN);
  page_through((ld_archive_query_t){.forward = false, .limit = 100}, all, PN);
  page_through((ld_archive_query_t){.forward = false, .limit = 0, .include_data = true}, all, PN);
  /* a filtered walk: content topic gamma on pubsub B in a window, pages of 37 */
  size_t n = 0;
  int64_t lo = T0 + 500 * 1000000ll, hi = T0 + 2500 * 1000000ll;
  for (int i = 0; i < PN; i++)
    if (i % 3 == 2 && i % 2 == 1 && m[i].m.timestamp >= lo && m[i].m.timestamp <= hi)
      memcpy(all[n++], m[i].hash, LD_WAKU_HASH_LEN);
  ld_archive_query_t q = {.forward = true,
                          .limit = 37,
                          .pubsub_topic = PUBSUB_B,
                          .content_topics = &k_ct[2],
                          .n_content_topics = 1,
                          .has_time_start = true,
                          .time_start = lo,
                          .has_time_end = true,
                          .time_end = hi,
                          .include_data = true};
  page_through(q, all, n);
  q.forward = false;
  n = 0;
  for (int i = 0; i < PN; i++)
    if (i % 3 == 2 && i % 2 == 1 && m[i].m.timestamp >= lo && m[i].m.timestamp <= hi)
      memcpy(all[n++], m[i].hash, LD_WAKU_HASH_LEN);
  page_through(q, all, n);
  free(all);
  free(m);
  free(g_keys);
  g_keys = NULL;
}

static void many_queries_in_flight(void **state) {
  (void)state;
  open_with(NULL);
  msg_t *m = filter_set();
  enum { Q = 32 };
  static answer_t a[Q];
  ld_archive_query_t q = {.forward = true, .limit = 10, .include_data = true};
  for (int i = 0; i < Q; i++) {
    memset(&a[i], 0, sizeof a[i]);
    q.content_topics = &k_ct[i % 3];
    q.n_content_topics = 1;
    assert_int_equal(ld_archive_query(g_a, &q, answered, &a[i]), 0);
  }
  for (int i = 0; i < Q; i++) {
    run_until(&a[i].done);
    assert_int_equal(a[i].err, 0);
    assert_int_equal(a[i].n, 10);
    assert_memory_equal(a[i].rows[0].hash, m[i % 3].hash, LD_WAKU_HASH_LEN);
  }
}

/* Hash lookups in flight together (on SQLite two readers and the writer's key map, on PostgreSQL
 * several connections): each answer holds exactly its own hashes' rows, in its direction and page
 * size, also where the lookups share hashes or ask for unknown ones. */
enum { CL_MSGS = 240, CL_QUERIES = 24 };
static msg_t *g_cl_msgs;

static int by_ts_then_hash(const void *x, const void *y) {
  const msg_t *a = g_cl_msgs + *(const int *)x, *b = g_cl_msgs + *(const int *)y;
  if (a->m.timestamp != b->m.timestamp)
    return a->m.timestamp < b->m.timestamp ? -1 : 1;
  return memcmp(a->hash, b->hash, LD_WAKU_HASH_LEN);
}

static void concurrent_hash_lookups(void **state) {
  (void)state;
  open_with(NULL);
  msg_t *m = calloc(CL_MSGS, sizeof *m);
  g_cl_msgs = m;
  for (int i = 0; i < CL_MSGS; i++) /* timestamps repeat: ties go by hash */
    make_msg(&m[i], i, T0 + (i % 60) * SEC, PUBSUB_A, k_ct[i % 3]);
  store_all(m, CL_MSGS);
  answer_t *a = calloc(CL_QUERIES, sizeof *a);
  uint8_t(*hashes)[LD_ARCHIVE_MAX_HASHES][LD_WAKU_HASH_LEN] = calloc(CL_QUERIES, sizeof *hashes);
  int(*asked)[LD_ARCHIVE_MAX_HASHES] = calloc(CL_QUERIES, sizeof *asked);
  size_t n_asked[CL_QUERIES];
  for (int k = 0; k < CL_QUERIES; k++) {
    size_t n = 0;
    for (int i = 0; i < LD_ARCHIVE_MAX_HASHES; i++) {
      int idx = (k * 37 + i * 7) % CL_MSGS; /* overlapping sets of stored messages */
      if (i % 10 == 9) {
        memset(hashes[k][i], 0xe0 + k, LD_WAKU_HASH_LEN); /* not stored */
        continue;
      }
      memcpy(hashes[k][i], m[idx].hash, LD_WAKU_HASH_LEN);
      bool dup = false;
      for (size_t j = 0; j < n; j++)
        dup |= asked[k][j] == idx;
      if (!dup)
        asked[k][n++] = idx;
    }
    n_asked[k] = n;
    ld_archive_query_t q = {.forward = k % 2 == 0,
                            .include_data = true,
                            .limit = (uint32_t)(k % 3 == 0 ? 100 : 15 + k),
                            .hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes[k],
                            .n_hashes = LD_ARCHIVE_MAX_HASHES};
    assert_int_equal(ld_archive_query(g_a, &q, answered, &a[k]), 0);
  }
  for (int k = 0; k < CL_QUERIES; k++) {
    run_until(&a[k].done);
    assert_int_equal(a[k].err, 0);
    qsort(asked[k], n_asked[k], sizeof asked[k][0], by_ts_then_hash);
    size_t limit = k % 3 == 0 ? 100 : 15 + (size_t)k;
    size_t want = n_asked[k] < limit ? n_asked[k] : limit;
    size_t first = k % 2 == 0 ? 0 : n_asked[k] - want; /* backward: the newest, ascending */
    assert_int_equal(a[k].n, want);
    assert_int_equal(a[k].has_cursor, n_asked[k] > limit);
    for (size_t r = 0; r < want; r++) {
      const msg_t *e = &m[asked[k][first + r]];
      assert_memory_equal(a[k].rows[r].hash, e->hash, LD_WAKU_HASH_LEN);
      assert_true(a[k].rows[r].ts == e->m.timestamp);
      assert_int_equal(a[k].rows[r].payload_len, strlen(e->payload));
      assert_memory_equal(a[k].rows[r].payload, e->payload, strlen(e->payload));
    }
  }
  free(asked);
  free(hashes);
  free(a);
  free(m);
}

/* ---- retention ------------------------------------------------------------------------------ */

/* 10 messages in each of six hours: hour k, minute j. */
static msg_t *hourly_set(void) {
  static msg_t m[60];
  for (int k = 0; k < 6; k++)
    for (int j = 0; j < 10; j++)
      make_msg(&m[k * 10 + j], k * 10 + j, T0H + k * HOUR + j * 60 * SEC, PUBSUB_A, k_ct[j % 3]);
  store_all(m, 60);
  return m;
}

static void time_retention(void **state) {
  (void)state;
  g_now = T0H + 5 * HOUR + 5 * 60 * SEC;
  open_with_policies("time:10800");
  msg_t *m = hourly_set();
  if (partitioned()) /* hours 0–5 and the next one, created ahead */
    assert_true(pg_partitions("messages") == 7 && pg_partitions("messages_lookup") == 7);
  retention_now(); /* cutoff: hour 2, minute 5 */
  assert_true(count() == 35);
  if (partitioned()) { /* hours 0 and 1 dropped whole */
    assert_true(pg_partitions("messages") == 5 && pg_partitions("messages_lookup") == 5);
    pg_assert_hash_index_exact();
  }
  for (int i = 0; i < 60; i++)
    if (present(&m[i]) != (i >= 25))
      fail_msg("message %d %s", i, i >= 25 ? "deleted" : "kept");
  ld_archive_stats_t st;
  ld_archive_stats(g_a, &st);
  assert_true(st.retention_deleted == 25);
  assert_true(st.retention_runs >= 1);
  /* later, everything but the last hour's second half goes */
  g_now += HOUR;
  retention_now();
  assert_true(count() == 25); /* hour 3 from minute 5 on, hours 4 and 5 */
  if (partitioned())
    pg_assert_hash_index_exact();
}

static void capacity_retention(void **state) {
  (void)state;
  open_with_policies("capacity:100");
  msg_t *m = calloc(130, sizeof *m);
  for (int i = 0; i < 130; i++)
    make_msg(&m[i], i, T0 + i * SEC, PUBSUB_A, k_ct[0]);
  store_all(m, 129);
  retention_now();
  assert_true(count() == 129);
  store_all(&m[129], 1);
  retention_now();
  assert_true(count() == 115);
  assert_false(present(&m[14]));
  assert_true(present(&m[15]));
  if (partitioned())
    pg_assert_hash_index_exact();
  free(m);
}

static void size_retention(void **state) {
  (void)state;
  g_now = T0H + 5 * HOUR + 30 * 60 * SEC;
  open_with_policies("size:0.000001mb"); /* one byte */
  msg_t *m = hourly_set();
  retention_now();
  if (partitioned()) {
    /* every partition but the current hour's (and the next one's) is dropped */
    assert_true(count() == 10);
    assert_int_equal(pg_partitions("messages"), 2);
    assert_true(present(&m[50]) && !present(&m[49]));
    pg_assert_hash_index_exact();
  } else {
    /* the newest 80 % are kept */
    assert_true(count() == 48);
    assert_true(present(&m[12]) && !present(&m[11]));
  }
  ld_archive_stats_t st;
  ld_archive_stats(g_a, &st);
  assert_true(st.retention_deleted == (partitioned() ? 50 : 12));
}

static void several_policies_in_one_run(void **state) {
  (void)state;
  g_now = T0H + 5 * HOUR + 5 * 60 * SEC;
  open_with_policies("time:10800;capacity:20");
  hourly_set();
  retention_now();
  assert_true(count() == 23); /* 35 after time; 35 >= 26 → keep 23 */
  if (partitioned())
    pg_assert_hash_index_exact();
}

/* ---- durability across close ---------------------------------------------------------------- */

static void reopen_keeps_data(void **state) {
  (void)state;
  if (!persistent())
    skip();
  open_with(NULL);
  msg_t *m = filter_set();
  close_archive();
  open_with(NULL);
  assert_true(count() == FN);
  ld_archive_query_t q = {.forward = false, .limit = 3, .include_data = true};
  int last[] = {57, 58, 59};
  answer_t *a = query(&q);
  expect_indexes(a, m, last, 3);
  assert_string_equal(a->rows[2].pubsub, PUBSUB_B);
}

static void close_with_work_in_flight(void **state) {
  (void)state;
  open_with(NULL);
  enum { N = 3000 };
  msg_t *m = calloc(N, sizeof *m);
  ack_t ack = {0};
  for (int i = 0; i < N; i++) {
    make_msg(&m[i], i, T0 + i, PUBSUB_A, k_ct[0]);
    assert_int_equal(ld_archive_insert(g_a, PUBSUB_A, &m[i].m, m[i].hash, acked, &ack),
                     LD_ARCHIVE_ACCEPTED);
  }
  answer_t a = {0};
  ld_archive_query_t q = {.forward = true};
  assert_int_equal(ld_archive_query(g_a, &q, answered, &a), 0);
  close_archive(); /* accepted messages are committed, the query answers or is closed */
  assert_int_equal(ack.calls, N);
  assert_int_equal(ack.ok, N);
  assert_true(a.done);
  assert_true(a.err == 0 || a.err == LD_ERR_CLOSED);
  if (persistent()) {
    open_with(NULL);
    assert_true(count() == N);
  }
  free(m);
}

/* ---- read-your-writes ----------------------------------------------------------------------- */

typedef struct counted_answer {
  bool done;
  int err;
  uint64_t n;
} counted_answer_t;

static void counted(int err, uint64_t n, void *ud) {
  counted_answer_t *c = ud;
  c->done = true;
  c->err = err;
  c->n = n;
}

/* Publish-then-query, RYW_ROUNDS times: each message is accepted and, with no loop turn in
 * between, looked up by its hash and counted; the answers must hold it. Every few rounds the loop
 * runs one turn without waiting, so that some queries arrive while a batch is lingering, some
 * while one is being written and some while later messages pile up behind them. */
enum { RYW_ROUNDS = 200 };

static void a_query_sees_every_message_accepted_before_it(void **state) {
  (void)state;
  open_with(NULL);
  msg_t *m = calloc(RYW_ROUNDS, sizeof *m);
  answer_t *a = calloc(RYW_ROUNDS, sizeof *a);
  counted_answer_t *c = calloc(RYW_ROUNDS, sizeof *c);
  ack_t ack = {0};
  for (int i = 0; i < RYW_ROUNDS; i++) {
    make_msg(&m[i], i, g_now - i, PUBSUB_A, k_ct[i % 3]);
    assert_int_equal(ld_archive_handle_message(g_a, PUBSUB_A, &m[i].m, m[i].hash, acked, &ack),
                     LD_ARCHIVE_ACCEPTED);
    const uint8_t(*h)[LD_WAKU_HASH_LEN] = (const uint8_t(*)[LD_WAKU_HASH_LEN])m[i].hash;
    ld_archive_query_t q = {.forward = true, .hashes = h, .n_hashes = 1, .include_data = true};
    assert_int_equal(ld_archive_query(g_a, &q, answered, &a[i]), 0);
    assert_int_equal(ld_archive_count(g_a, counted, &c[i]), 0);
    if (i % 7 == 3)
      uv_run(&g_loop, UV_RUN_NOWAIT);
    if (i % 50 == 49) /* and sometimes the whole answer first */
      run_until(&a[i].done);
  }
  for (int i = 0; i < RYW_ROUNDS; i++) {
    run_until(&a[i].done);
    run_until(&c[i].done);
    if (a[i].err != 0 || a[i].n != 1)
      fail_msg("query %d right after its message was accepted: err %d, %zu rows", i, a[i].err,
               a[i].n);
    assert_memory_equal(a[i].rows[0].hash, m[i].hash, LD_WAKU_HASH_LEN);
    assert_int_equal(c[i].err, 0);
    if (c[i].n < (uint64_t)i + 1)
      fail_msg("count %d right after its message was accepted: %llu", i,
               (unsigned long long)c[i].n);
  }
  wait_acks(&ack, RYW_ROUNDS);
  assert_int_equal(ack.ok, RYW_ROUNDS);
  free(c);
  free(a);
  free(m);
}

/* A page query by content topic right after a burst of messages holds all of them. */
static void a_page_after_a_burst_holds_the_whole_burst(void **state) {
  (void)state;
  open_with(NULL);
  enum { N = 60 };
  msg_t m[N];
  for (int i = 0; i < N; i++) {
    make_msg(&m[i], i, g_now + i, PUBSUB_B, k_ct[2]);
    assert_int_equal(ld_archive_handle_message(g_a, PUBSUB_B, &m[i].m, m[i].hash, NULL, NULL),
                     LD_ARCHIVE_ACCEPTED);
  }
  ld_archive_query_t q = {.forward = true,
                          .content_topics = &k_ct[2],
                          .n_content_topics = 1,
                          .limit = LD_ARCHIVE_MAX_PAGE_SIZE};
  answer_t *a = query(&q);
  assert_int_equal(a->err, 0);
  assert_int_equal(a->n, N);
  for (int i = 0; i < N; i++)
    assert_memory_equal(a->rows[i].hash, m[i].hash, LD_WAKU_HASH_LEN);
}

/* ---- work taken while opening --------------------------------------------------------------- */

typedef struct early {
  bool opened;
  int err;
  ld_archive_t *a;
  int answers_before_open; /* answers and acknowledgements seen before the open callback */
} early_t;

static early_t g_early;

static void early_opened(ld_archive_t *a, int err, const char *why, void *ud) {
  (void)why;
  early_t *e = ud;
  e->opened = true;
  e->err = err;
  e->a = a;
}

static void early_acked(int err, void *ud) {
  g_early.answers_before_open += !g_early.opened;
  acked(err, ud);
}

static void early_answered(int err, const char *why, const ld_archive_result_t *res, void *ud) {
  g_early.answers_before_open += !g_early.opened;
  answered(err, why, res, ud);
}

static void early_counted(int err, uint64_t n, void *ud) {
  g_early.answers_before_open += !g_early.opened;
  counted(err, n, ud);
}

/* Messages and queries given to an archive that is still opening wait for the open: the messages
 * are written once it is open, and the queries, answered after the open, see them. */
/* ---- key listing (store-sync) -----------------------------------------------------------------
 */

#define LN 2500

typedef struct listing {
  bool done;
  int err;
  char why[160];
  size_t n;
  ld_archive_key_t last;
  bool more;
  msg_t *m; /* the stored messages, to check each key against */
  int n_msgs;
  int *seen; /* per message: times listed */
  bool ordered;
  bool topics_right;
  int64_t prev_ts;
  uint8_t prev_hash[LD_WAKU_HASH_LEN];
  bool has_prev;
} listing_t;

static int msg_of(const listing_t *l, const uint8_t *hash) {
  for (int i = 0; i < l->n_msgs; i++)
    if (memcmp(l->m[i].hash, hash, LD_WAKU_HASH_LEN) == 0)
      return i;
  return -1;
}

static void listed(int err, const char *why, const ld_archive_key_t *keys, size_t n, bool more,
                   void *ud) {
  listing_t *l = ud;
  l->done = true;
  l->err = err;
  snprintf(l->why, sizeof l->why, "%s", why);
  l->n = n;
  l->more = more;
  for (size_t k = 0; k < n; k++) {
    const ld_archive_key_t *key = &keys[k];
    if (l->has_prev && ld_archive_key_cmp(l->prev_ts, l->prev_hash, key->timestamp, key->hash) >= 0)
      l->ordered = false;
    l->has_prev = true;
    l->prev_ts = key->timestamp;
    memcpy(l->prev_hash, key->hash, LD_WAKU_HASH_LEN);
    int i = msg_of(l, key->hash);
    if (i < 0 || l->m[i].m.timestamp != key->timestamp ||
        strcmp(l->m[i].pubsub, key->pubsub_topic) != 0)
      l->topics_right = false;
    if (i >= 0)
      l->seen[i]++;
  }
  if (n > 0)
    l->last = keys[n - 1];
}

/* A time range listed in pages: every stored key inside the range (bounds included) exactly once,
 * in ascending (timestamp, hash) order, with its own timestamp and pubsub topic; nothing outside
 * it; `more` on every page but the last. */
static void key_listing_pages_a_time_range(void **state) {
  (void)state;
  open_with(NULL);
  msg_t *m = calloc(LN, sizeof *m);
  assert_non_null(m);
  for (int i = 0; i < LN; i++) /* five per millisecond: ties ordered by hash */
    make_msg(&m[i], i, T0 + (int64_t)(i / 5) * 1000000, i % 3 ? PUBSUB_A : PUBSUB_B, k_ct[i % 3]);
  store_all(m, LN);
  int64_t lo = m[500].m.timestamp, hi = m[2000].m.timestamp; /* both bounds hold five keys */
  listing_t l = {.m = m, .n_msgs = LN, .ordered = true, .topics_right = true};
  l.seen = calloc(LN, sizeof *l.seen);
  assert_non_null(l.seen);
  ld_archive_listing_t q = {.time_start = lo, .time_end = hi, .limit = 333};
  size_t pages = 0, total = 0;
  for (;;) {
    l.done = false;
    assert_int_equal(ld_archive_list_keys(g_a, &q, listed, &l), 0);
    run_until(&l.done);
    assert_int_equal(l.err, 0);
    pages++;
    total += l.n;
    if (!l.more)
      break;
    assert_int_equal(l.n, 333);
    q.has_after = true;
    q.after_ts = l.last.timestamp;
    memcpy(q.after_hash, l.last.hash, LD_WAKU_HASH_LEN);
  }
  assert_true(l.ordered);
  assert_true(l.topics_right);
  int expected = 0;
  for (int i = 0; i < LN; i++) {
    bool inside = m[i].m.timestamp >= lo && m[i].m.timestamp <= hi;
    expected += inside;
    assert_int_equal(l.seen[i], inside ? 1 : 0);
  }
  assert_int_equal(total, (size_t)expected);
  assert_int_equal(pages, ((size_t)expected + 332) / 333);
  /* the default page holds everything here; a reversed range is an argument error */
  memset(l.seen, 0, LN * sizeof *l.seen);
  l.has_prev = false;
  l.done = false;
  ld_archive_listing_t all = {.time_start = INT64_MIN, .time_end = INT64_MAX};
  assert_int_equal(ld_archive_list_keys(g_a, &all, listed, &l), 0);
  run_until(&l.done);
  assert_int_equal(l.err, 0);
  assert_int_equal(l.n, LN);
  assert_false(l.more);
  assert_true(l.ordered);
  l.done = false;
  ld_archive_listing_t reversed = {.time_start = hi, .time_end = lo};
  assert_int_equal(ld_archive_list_keys(g_a, &reversed, listed, &l), 0);
  run_until(&l.done);
  assert_int_equal(l.err, LD_ERR_INVALID_ARG);
  assert_int_equal(l.n, 0);
  free(l.seen);
  free(m);
}

static void work_taken_while_opening_waits_for_the_open(void **state) {
  (void)state;
  ld_archive_config_t cfg;
  ld_archive_config_default(&cfg);
  cfg.url = g_url;
  cfg.now_ns = fake_now;
  memset(&g_early, 0, sizeof g_early);
  ld_archive_t *a = NULL;
  assert_int_equal(ld_archive_open_early(&g_loop, &cfg, early_opened, &g_early, &a), 0);
  assert_non_null(a);
  enum { N = 25 };
  msg_t m[N];
  ack_t ack = {0};
  for (int i = 0; i < N; i++) {
    make_msg(&m[i], i, g_now + i, PUBSUB_A, k_ct[0]);
    assert_int_equal(ld_archive_handle_message(a, PUBSUB_A, &m[i].m, m[i].hash, early_acked, &ack),
                     LD_ARCHIVE_ACCEPTED);
  }
  msg_t old;
  make_msg(&old, 99, g_now - LD_ARCHIVE_MAX_TS_VARIANCE_NS - 1, PUBSUB_A, k_ct[0]);
  assert_int_equal(ld_archive_handle_message(a, PUBSUB_A, &old.m, old.hash, early_acked, &ack),
                   LD_ARCHIVE_TOO_OLD); /* the checks apply while opening too */
  static answer_t page;
  memset(&page, 0, sizeof page);
  ld_archive_query_t q = {.forward = true,
                          .content_topics = &k_ct[0],
                          .n_content_topics = 1,
                          .limit = LD_ARCHIVE_MAX_PAGE_SIZE};
  assert_int_equal(ld_archive_query(a, &q, early_answered, &page), 0);
  counted_answer_t c = {0};
  assert_int_equal(ld_archive_count(a, early_counted, &c), 0);
  assert_int_equal(ld_archive_apply_retention(a, acked, &ack), LD_ERR_CLOSED);
  assert_false(g_early.opened);
  run_until(&g_early.opened);
  assert_int_equal(g_early.err, 0);
  assert_ptr_equal(g_early.a, a);
  g_a = a;
  run_until(&page.done);
  run_until(&c.done);
  wait_acks(&ack, N);
  assert_int_equal(ack.ok, N);
  assert_int_equal(g_early.answers_before_open, 0);
  assert_int_equal(page.err, 0);
  assert_int_equal(page.n, N);
  for (int i = 0; i < N; i++)
    assert_memory_equal(page.rows[i].hash, m[i].hash, LD_WAKU_HASH_LEN);
  assert_int_equal(c.err, 0);
  assert_int_equal(c.n, N);
}

/* ---- sqlite migrations ---------------------------------------------------------------------- */

static sqlite3 *sqlite_raw(void) {
  char path[128];
  snprintf(path, sizeof path, "%s/archive.db", g_dir);
  sqlite3 *db;
  assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
  return db;
}

static int sqlite_int(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
  int v = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
  sqlite3_finalize(st);
  return v;
}

static void migrates_an_empty_file(void **state) {
  (void)state;
  FILE *f = fopen(g_url + 9, "w"); /* a zero-byte file */
  assert_non_null(f);
  fclose(f);
  open_with(NULL);
  assert_true(count() == 0);
  close_archive();
  sqlite3 *db = sqlite_raw();
  assert_int_equal(sqlite_int(db, "PRAGMA user_version"), 10);
  assert_int_equal(sqlite_int(db, "SELECT count(*) FROM sqlite_master WHERE name = 'i_ts'"), 1);
  assert_int_equal(sqlite_int(db, "SELECT count(*) FROM pragma_table_info('Message')"), 7);
  sqlite3_close(db);
}

static void migrates_nwaku_version_9(void **state) {
  (void)state;
  sqlite3 *db = sqlite_raw();
  const char *v9 =
      "CREATE TABLE message (pubsubTopic BLOB NOT NULL, contentTopic BLOB NOT NULL, "
      "payload BLOB, version INTEGER NOT NULL, timestamp INTEGER NOT NULL, id BLOB, "
      "messageHash BLOB, storedAt INTEGER NOT NULL, meta BLOB, "
      "CONSTRAINT messageIndex PRIMARY KEY (messageHash)) WITHOUT ROWID;"
      "INSERT INTO message VALUES (CAST('/waku/2/rs/1/0' AS BLOB), CAST('/a/1/b/proto' AS BLOB), "
      "x'0102', 1, 5, x'00', x'" /* messageHash */
      "1111111111111111111111111111111111111111111111111111111111111111', 1700000000000000000, "
      "x'aa');"
      "PRAGMA user_version = 9;";
  assert_int_equal(sqlite3_exec(db, v9, NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(db);
  open_with(NULL);
  uint8_t h[1][LD_WAKU_HASH_LEN];
  memset(h[0], 0x11, LD_WAKU_HASH_LEN);
  ld_archive_query_t q = {.forward = true,
                          .include_data = true,
                          .hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])h,
                          .n_hashes = 1};
  answer_t *a = query(&q);
  assert_int_equal(a->n, 1);
  assert_true(a->rows[0].ts == 1700000000000000000ll); /* storedAt became the timestamp */
  assert_int_equal(a->rows[0].meta_len, 1);
  assert_int_equal(a->rows[0].payload_len, 2);
  assert_string_equal(a->rows[0].ct, "/a/1/b/proto");
  close_archive();
  db = sqlite_raw();
  assert_int_equal(sqlite_int(db, "PRAGMA user_version"), 10);
  sqlite3_close(db);
}

/* Rows another connection writes to the file while the archive is open: after the archive's
 * next write, lookups by hash find the rows it added and not the ones it deleted. */
static void lookups_follow_another_writer(void **state) {
  (void)state;
  open_with(NULL);
  msg_t m[4];
  for (int i = 0; i < 4; i++)
    make_msg(&m[i], i, T0 + i * SEC, PUBSUB_A, k_ct[0]);
  store_all(m, 2);
  assert_true(present(&m[0]));
  sqlite3 *db = sqlite_raw();
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(db,
                                      "INSERT INTO Message (messageHash, pubsubTopic, "
                                      "contentTopic, payload, version, timestamp, meta) "
                                      "VALUES (?, ?, ?, ?, 0, ?, NULL)",
                                      -1, &st, NULL),
                   SQLITE_OK);
  sqlite3_bind_blob(st, 1, m[2].hash, LD_WAKU_HASH_LEN, SQLITE_STATIC);
  sqlite3_bind_blob(st, 2, PUBSUB_A, (int)strlen(PUBSUB_A), SQLITE_STATIC);
  sqlite3_bind_blob(st, 3, k_ct[0], (int)strlen(k_ct[0]), SQLITE_STATIC);
  sqlite3_bind_blob(st, 4, m[2].payload, (int)strlen(m[2].payload), SQLITE_STATIC);
  sqlite3_bind_int64(st, 5, m[2].m.timestamp);
  assert_int_equal(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  assert_int_equal(
      sqlite3_prepare_v2(db, "DELETE FROM Message WHERE messageHash = ?", -1, &st, NULL),
      SQLITE_OK);
  sqlite3_bind_blob(st, 1, m[0].hash, LD_WAKU_HASH_LEN, SQLITE_STATIC);
  assert_int_equal(sqlite3_step(st), SQLITE_DONE);
  sqlite3_finalize(st);
  sqlite3_close(db);
  store_all(&m[3], 1);
  assert_false(present(&m[0]));
  assert_true(present(&m[1]));
  assert_true(present(&m[2]));
  assert_true(present(&m[3]));
}

static void refuses_unknown_versions(void **state) {
  (void)state;
  sqlite3 *db = sqlite_raw();
  assert_int_equal(
      sqlite3_exec(db, "CREATE TABLE x (a); PRAGMA user_version = 11", NULL, NULL, NULL),
      SQLITE_OK);
  sqlite3_close(db);
  ld_archive_config_t cfg;
  ld_archive_config_default(&cfg);
  cfg.url = g_url;
  opening_t o = {0};
  assert_int_equal(ld_archive_open(&g_loop, &cfg, opened, &o), 0);
  run_until(&o.done);
  assert_int_equal(o.err, LD_ERR_DB);
  assert_null(g_a);
}

/* ---- postgres: the hash → timestamp index ---------------------------------------------------- */

/* Inserts m into messages (and messages_lookup) with plain SQL, as another writer would. */
static void pg_insert_raw(const msg_t *m) {
  char hash[2 * LD_WAKU_HASH_LEN + 1], payload[2 * sizeof m->payload + 1], sql[1024];
  ld_hex_encode(m->hash, LD_WAKU_HASH_LEN, hash);
  ld_hex_encode((const uint8_t *)m->payload, m->m.payload_len, payload);
  snprintf(sql, sizeof sql,
           "INSERT INTO messages (id, messageHash, pubsubTopic, contentTopic, payload, version, "
           "timestamp) VALUES ('0', '%s', '%s', '%.*s', '%s', 0, %lld);"
           "INSERT INTO messages_lookup (messageHash, timestamp) VALUES ('%s', %lld)",
           hash, m->pubsub, (int)m->m.content_topic_len, m->m.content_topic, payload,
           (long long)m->m.timestamp, hash, (long long)m->m.timestamp);
  PQclear(pg_in_schema(sql));
}

/* nwaku's content script 8 with the partition of hour T0H, without our extension. */
static void pg_create_nwaku_v8(void) {
  char sql[2048];
  long long lo = T0H / SEC, hi = (T0H + HOUR) / SEC;
  snprintf(sql, sizeof sql,
           "CREATE TABLE version (version INTEGER NOT NULL); INSERT INTO version VALUES (8);"
           "CREATE TABLE messages (pubsubTopic VARCHAR NOT NULL, contentTopic VARCHAR NOT NULL, "
           "payload VARCHAR, version INTEGER NOT NULL, id VARCHAR NOT NULL, "
           "messageHash VARCHAR NOT NULL, timestamp BIGINT NOT NULL, meta VARCHAR DEFAULT NULL, "
           "CONSTRAINT messageIndex PRIMARY KEY (messageHash, timestamp)) "
           "PARTITION BY RANGE (timestamp);"
           "CREATE INDEX idx_messages_messagehash ON messages (messageHash);"
           "CREATE INDEX idx_messages_timestamp ON messages (timestamp);"
           "CREATE TABLE messages_lookup (timestamp BIGINT NOT NULL, messageHash VARCHAR NOT NULL, "
           "CONSTRAINT messageIndexLookupTable PRIMARY KEY (messageHash, timestamp)) "
           "PARTITION BY RANGE (timestamp);"
           "CREATE TABLE messages_%lld_%lld PARTITION OF messages FOR VALUES FROM (%lld) TO (%lld);"
           "CREATE TABLE lookup_%lld_%lld PARTITION OF messages_lookup "
           "FOR VALUES FROM (%lld) TO (%lld)",
           lo, hi, (long long)T0H, (long long)(T0H + HOUR), lo, hi, (long long)T0H,
           (long long)(T0H + HOUR));
  PQclear(pg_in_schema(sql));
}

static void pg_migrates_nwaku_version_8(void **state) {
  (void)state;
  pg_create_nwaku_v8();
  msg_t m[3];
  for (int i = 0; i < 3; i++) {
    make_msg(&m[i], i, T0 + i * SEC, PUBSUB_A, k_ct[i]);
    pg_insert_raw(&m[i]);
  }
  open_with(NULL);
  assert_int_equal(pg_long("SELECT max(version) FROM ld_archive_version"), 2);
  assert_int_equal(pg_long("SELECT max(version) FROM version"), 8); /* nwaku's row untouched */
  assert_int_equal(pg_long("SELECT count(*) FROM information_schema.columns "
                           "WHERE table_schema = current_schema() AND table_name = 'messages'"),
                   8);
  pg_assert_hash_index_exact();
  uint8_t h[3][LD_WAKU_HASH_LEN];
  for (int i = 0; i < 3; i++)
    memcpy(h[2 - i], m[i].hash, LD_WAKU_HASH_LEN);
  ld_archive_query_t q = {.forward = true,
                          .include_data = true,
                          .hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])h,
                          .n_hashes = 3};
  answer_t *a = query(&q);
  assert_int_equal(a->err, 0);
  assert_int_equal(a->n, 3);
  for (int i = 0; i < 3; i++) {
    assert_memory_equal(a->rows[i].hash, m[i].hash, LD_WAKU_HASH_LEN);
    assert_int_equal(a->rows[i].payload_len, m[i].m.payload_len);
    assert_memory_equal(a->rows[i].payload, m[i].payload, m[i].m.payload_len);
    assert_string_equal(a->rows[i].ct, k_ct[i]);
  }
  /* a cursor stored before the migration */
  ld_archive_query_t c = {.forward = true, .has_cursor = true, .limit = 10};
  memcpy(c.cursor, m[0].hash, LD_WAKU_HASH_LEN);
  a = query(&c);
  assert_int_equal(a->err, 0);
  assert_int_equal(a->n, 2);
  assert_memory_equal(a->rows[0].hash, m[1].hash, LD_WAKU_HASH_LEN);
  /* new messages keep the index exact; reopening migrates nothing twice */
  msg_t n;
  make_msg(&n, 9, T0 + 9 * SEC, PUBSUB_B, k_ct[0]);
  store_all(&n, 1);
  close_archive();
  open_with(NULL);
  assert_true(count() == 4);
  assert_int_equal(pg_long("SELECT count(*) FROM ld_archive_version"), 1);
  pg_assert_hash_index_exact();
}

/* Extension 1 as it was: the hash → timestamp index on the hex text, with its insert trigger. */
static void pg_create_extension_v1(void) {
  PQclear(pg_in_schema(
      "CREATE TABLE ld_archive_version (version INTEGER NOT NULL);"
      "INSERT INTO ld_archive_version VALUES (1);"
      "CREATE TABLE ld_messages_hash_ts (messageHash VARCHAR NOT NULL, timestamp BIGINT NOT NULL,"
      " CONSTRAINT messageHashTsIndex PRIMARY KEY (messageHash, timestamp));"
      "INSERT INTO ld_messages_hash_ts SELECT messageHash, timestamp FROM messages;"
      "CREATE FUNCTION ld_messages_hash_ts_add() RETURNS trigger LANGUAGE plpgsql AS $f$"
      " BEGIN INSERT INTO ld_messages_hash_ts SELECT messageHash, timestamp FROM ld_new;"
      " RETURN NULL; END $f$;"
      "CREATE TRIGGER ld_messages_hash_ts_add AFTER INSERT ON messages"
      " REFERENCING NEW TABLE AS ld_new FOR EACH STATEMENT EXECUTE FUNCTION "
      "ld_messages_hash_ts_add()"));
}

static void pg_migrates_extension_version_1(void **state) {
  (void)state;
  pg_create_nwaku_v8();
  msg_t m[3];
  for (int i = 0; i < 2; i++) {
    make_msg(&m[i], i, T0 + i * SEC, PUBSUB_A, k_ct[i]);
    pg_insert_raw(&m[i]);
  }
  pg_create_extension_v1();
  open_with(NULL);
  assert_int_equal(pg_long("SELECT max(version) FROM ld_archive_version"), 2);
  assert_int_equal(pg_long("SELECT count(*) FROM ld_archive_version"), 1);
  assert_int_equal(pg_long("SELECT (to_regclass('ld_messages_hash_ts') IS NULL)::int"), 1);
  assert_int_equal(pg_long("SELECT count(*) FROM pg_proc WHERE proname LIKE 'ld_messages_hash_ts%' "
                           "AND pronamespace = current_schema()::regnamespace"),
                   0);
  pg_assert_hash_index_exact();
  make_msg(&m[2], 2, T0 + 2 * SEC, PUBSUB_B, k_ct[2]);
  store_all(&m[2], 1); /* only the new trigger fires */
  pg_assert_hash_index_exact();
  for (int i = 0; i < 3; i++)
    assert_true(present(&m[i]));
}

/* With LD_PG_TWO_STEP_PARTITIONS partitions and more, lookups read their pairs first and set up
 * only the partitions in range: the same answers, also for hashes spread over partitions. */
static void pg_lookups_over_many_partitions(void **state) {
  (void)state;
  open_with(NULL);
  close_archive();
  char sql[512];
  for (int h = 1; h <= LD_PG_TWO_STEP_PARTITIONS; h++) {
    long long lo = (T0H - h * HOUR) / SEC, hi = (T0H - (h - 1) * HOUR) / SEC;
    snprintf(sql, sizeof sql,
             "CREATE TABLE messages_%lld_%lld PARTITION OF messages FOR VALUES FROM (%lld) TO "
             "(%lld); CREATE TABLE lookup_%lld_%lld PARTITION OF messages_lookup FOR VALUES "
             "FROM (%lld) TO (%lld)",
             lo, hi, lo * SEC, hi * SEC, lo, hi, lo * SEC, hi * SEC);
    PQclear(pg_in_schema(sql));
  }
  msg_t old[3];
  for (int i = 0; i < 3; i++) {
    make_msg(&old[i], 100 + i, T0H - (10 * i + 1) * HOUR + SEC, PUBSUB_A, k_ct[i]);
    pg_insert_raw(&old[i]);
  }
  open_with(NULL); /* loads the partitions: more than LD_PG_TWO_STEP_PARTITIONS */
  assert_true(pg_partitions("messages") > LD_PG_TWO_STEP_PARTITIONS);
  msg_t *m = filter_set();
  check_hash_lookups(m);
  uint8_t hashes[4][LD_WAKU_HASH_LEN];
  memcpy(hashes[0], m[5].hash, LD_WAKU_HASH_LEN);
  for (int i = 0; i < 3; i++)
    memcpy(hashes[i + 1], old[i].hash, LD_WAKU_HASH_LEN);
  ld_archive_query_t q = {.forward = false,
                          .include_data = true,
                          .hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes,
                          .n_hashes = 4};
  answer_t *a = query(&q);
  assert_int_equal(a->err, 0);
  assert_int_equal(a->n, 4); /* in time order: old[2], old[1], old[0], m[5] */
  assert_memory_equal(a->rows[3].hash, m[5].hash, LD_WAKU_HASH_LEN);
  for (int i = 0; i < 3; i++) {
    assert_memory_equal(a->rows[2 - i].hash, old[i].hash, LD_WAKU_HASH_LEN);
    assert_int_equal(a->rows[2 - i].payload_len, old[i].m.payload_len);
    assert_memory_equal(a->rows[2 - i].payload, old[i].payload, old[i].m.payload_len);
  }
  q.limit = 2; /* the newest two, backward */
  a = query(&q);
  assert_int_equal(a->n, 2);
  assert_memory_equal(a->rows[0].hash, old[0].hash, LD_WAKU_HASH_LEN);
  assert_memory_equal(a->rows[1].hash, m[5].hash, LD_WAKU_HASH_LEN);
}

static void pg_hash_index_follows_other_writers(void **state) {
  (void)state;
  open_with(NULL);
  msg_t m[5];
  for (int i = 0; i < 4; i++)
    make_msg(&m[i], i, T0 + i * SEC, PUBSUB_A, k_ct[0]);
  store_all(m, 3);
  pg_insert_raw(&m[3]); /* another writer's insert */
  assert_true(present(&m[3]));
  char sql[512], hash[2 * LD_WAKU_HASH_LEN + 1];
  ld_hex_encode(m[0].hash, LD_WAKU_HASH_LEN, hash);
  snprintf(sql, sizeof sql, "DELETE FROM messages WHERE messageHash = '%s'", hash);
  PQclear(pg_in_schema(sql)); /* another writer's delete */
  assert_false(present(&m[0]));
  pg_assert_hash_index_exact();
  /* another writer's older partition, filled, then dropped without any trigger firing */
  long long lo = (T0H - 2 * HOUR) / SEC, hi = (T0H - HOUR) / SEC;
  snprintf(sql, sizeof sql,
           "CREATE TABLE messages_%lld_%lld PARTITION OF messages FOR VALUES FROM (%lld) TO "
           "(%lld); CREATE TABLE lookup_%lld_%lld PARTITION OF messages_lookup FOR VALUES FROM "
           "(%lld) TO (%lld)",
           lo, hi, (long long)(T0H - 2 * HOUR), (long long)(T0H - HOUR), lo, hi,
           (long long)(T0H - 2 * HOUR), (long long)(T0H - HOUR));
  PQclear(pg_in_schema(sql));
  make_msg(&m[4], 4, T0H - 2 * HOUR + SEC, PUBSUB_A, k_ct[0]);
  pg_insert_raw(&m[4]);
  assert_true(present(&m[4]));
  snprintf(sql, sizeof sql, "DROP TABLE messages_%lld_%lld; DROP TABLE lookup_%lld_%lld", lo, hi,
           lo, hi);
  PQclear(pg_in_schema(sql));
  assert_false(present(&m[4])); /* the stale index row finds nothing */
  assert_int_equal(pg_long("SELECT count(*) FROM ld_messages_key_ts"), 4);
  close_archive();
  open_with(NULL); /* housekeeping forgets keys older than every partition */
  pg_assert_hash_index_exact();
  assert_int_equal(pg_long("SELECT count(*) FROM ld_messages_key_ts"), 3);
  assert_true(present(&m[1]) && present(&m[2]) && present(&m[3]));
  PQclear(pg_in_schema("TRUNCATE messages"));
  assert_int_equal(pg_long("SELECT count(*) FROM ld_messages_key_ts"), 0);
}

static void pg_refuses_newer_extension(void **state) {
  (void)state;
  open_with(NULL);
  close_archive();
  PQclear(pg_in_schema("UPDATE ld_archive_version SET version = 3"));
  ld_archive_config_t cfg;
  ld_archive_config_default(&cfg);
  cfg.url = g_url;
  opening_t o = {0};
  assert_int_equal(ld_archive_open(&g_loop, &cfg, opened, &o), 0);
  run_until(&o.done);
  assert_int_equal(o.err, LD_ERR_DB);
  assert_null(g_a);
}

/* ---- groups --------------------------------------------------------------------------------- */

/* An archive that cannot open fails the work it took meanwhile with the open error, each piece
 * once, before it reports the failure. */
static void work_taken_while_opening_fails_with_the_open(void **state) {
  (void)state;
  ld_archive_config_t cfg;
  ld_archive_config_default(&cfg);
  char url[160];
  snprintf(url, sizeof url, "sqlite://%s/no-such-directory/archive.db", g_dir);
  cfg.url = url;
  cfg.now_ns = fake_now;
  memset(&g_early, 0, sizeof g_early);
  ld_archive_t *a = NULL;
  assert_int_equal(ld_archive_open_early(&g_loop, &cfg, early_opened, &g_early, &a), 0);
  msg_t m[3];
  ack_t ack = {0};
  for (int i = 0; i < 3; i++) {
    make_msg(&m[i], i, g_now, PUBSUB_A, k_ct[0]);
    assert_int_equal(ld_archive_handle_message(a, PUBSUB_A, &m[i].m, m[i].hash, acked, &ack),
                     LD_ARCHIVE_ACCEPTED);
  }
  static answer_t page;
  memset(&page, 0, sizeof page);
  ld_archive_query_t q = {.forward = true};
  assert_int_equal(ld_archive_query(a, &q, answered, &page), 0);
  run_until(&g_early.opened);
  assert_int_equal(g_early.err, LD_ERR_DB);
  assert_null(g_early.a);
  assert_true(page.done);
  assert_int_equal(page.err, LD_ERR_DB);
  assert_int_equal(ack.calls, 3);
  assert_int_equal(ack.ok, 0);
  assert_int_equal(ack.last_err, LD_ERR_DB);
}

#define SUITE_TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

static const struct CMUnitTest k_suite[] = {
    SUITE_TEST(ingest_checks),
    SUITE_TEST(round_trip_of_every_field),
    SUITE_TEST(topics_that_postgres_cannot_hold),
    SUITE_TEST(content_pubsub_and_time_filters),
    SUITE_TEST(hash_lookups),
    SUITE_TEST(hash_lookups_with_shared_prefixes),
    SUITE_TEST(hash_lookups_after_retention_and_restore),
    SUITE_TEST(query_argument_errors),
    SUITE_TEST(pagination_over_10000_messages),
    SUITE_TEST(many_queries_in_flight),
    SUITE_TEST(concurrent_hash_lookups),
    SUITE_TEST(time_retention),
    SUITE_TEST(capacity_retention),
    SUITE_TEST(size_retention),
    SUITE_TEST(several_policies_in_one_run),
    SUITE_TEST(reopen_keeps_data),
    SUITE_TEST(close_with_work_in_flight),
    SUITE_TEST(a_query_sees_every_message_accepted_before_it),
    SUITE_TEST(a_page_after_a_burst_holds_the_whole_burst),
    SUITE_TEST(work_taken_while_opening_waits_for_the_open),
    SUITE_TEST(key_listing_pages_a_time_range),
};

static const struct CMUnitTest k_sqlite_only[] = {
    SUITE_TEST(migrates_an_empty_file),
    SUITE_TEST(migrates_nwaku_version_9),
    SUITE_TEST(lookups_follow_another_writer),
    SUITE_TEST(refuses_unknown_versions),
    SUITE_TEST(work_taken_while_opening_fails_with_the_open),
};

static const struct CMUnitTest k_postgres_only[] = {
    SUITE_TEST(pg_migrates_nwaku_version_8),     SUITE_TEST(pg_migrates_extension_version_1),
    SUITE_TEST(pg_lookups_over_many_partitions), SUITE_TEST(pg_hash_index_follows_other_writers),
    SUITE_TEST(pg_refuses_newer_extension),
};

static int run_backend(backend_t b, const char *name) {
  g_backend = b;
  return _cmocka_run_group_tests(name, k_suite, sizeof k_suite / sizeof k_suite[0], NULL, NULL);
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/ld-archive-XXXXXX");
  if (mkdtemp(g_dir) == NULL)
    return 1;
  int failed = 0;
  failed += run_backend(B_SQLITE_FILE, "sqlite file");
  failed += run_backend(B_SQLITE_MEM, "sqlite :memory:");
  failed += run_backend(B_MEMORY, "memory://");
  g_backend = B_SQLITE_FILE;
  failed += _cmocka_run_group_tests("sqlite migrations", k_sqlite_only,
                                    sizeof k_sqlite_only / sizeof k_sqlite_only[0], NULL, NULL);
  if (getenv("LD_TEST_PG_URL") != NULL) {
    snprintf(g_pg_schema, sizeof g_pg_schema, "ld_archive_%d", (int)getpid());
    failed += run_backend(B_POSTGRES, "postgres");
    failed +=
        _cmocka_run_group_tests("postgres layout", k_postgres_only,
                                sizeof k_postgres_only / sizeof k_postgres_only[0], NULL, NULL);
    char sql[256];
    snprintf(sql, sizeof sql, "SET client_min_messages = warning; DROP SCHEMA IF EXISTS %s CASCADE",
             g_pg_schema);
    PQclear(pg_admin(sql));
  } else if (getenv("LD_REQUIRE_PG") != NULL) {
    fprintf(stderr, "postgres: LD_REQUIRE_PG is set but LD_TEST_PG_URL is not\n");
    failed++;
  } else {
    fprintf(stderr, "postgres: skipped (set LD_TEST_PG_URL to run it)\n");
  }
  sqlite_remove_files();
  rmdir(g_dir);
  return failed;
}
