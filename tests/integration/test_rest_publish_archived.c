/* Publish, then query, with no pause: a message the REST API of a store node answered 200 for is
 * already in the node's archive, as with nwaku (it archives inside the publish call). A real node
 * in one process (relay, autosharding over 8 shards, store, REST on loopback) publishes
 * RYW_ROUNDS messages, alternating POST /relay/v1/auto/messages and
 * POST /relay/v1/messages/{pubsubTopic}; after each 200:
 *  - the row is in the database the moment the answer is read (a connection of the test's own:
 *    SQLite read-only on the node's file, or libpq on its PostgreSQL schema), the node's loop
 *    not having run since;
 *  - GET /store/v3/messages?hashes=<hash> sent right after the answer returns it.
 * Once with the SQLite file archive and once with PostgreSQL (LD_TEST_PG_URL, a schema of its own;
 * skipped when unset unless LD_REQUIRE_PG is set, then it fails). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <libpq-fe.h>
#include <sqlite3.h>
#include <uv.h>

#include "base/base64.h"
#include "base/clock.h"
#include "base/hex.h"
#include "http_client.h"
#include "node/node.h"
#include "node_harness.h"
#include "waku/core/sharding.h"

#define STEP_MS 15000
#define RYW_ROUNDS 200
#define NUM_SHARDS 8
#define CT "/ryw/1/publish-then-query/proto"
#define CT_ENC "%2Fryw%2F1%2Fpublish-then-query%2Fproto"
#define JSON_HDR "Content-Type: application/json\r\n"

typedef enum backend { B_SQLITE_FILE, B_POSTGRES } backend_t;

static uv_loop_t g_loop;
static backend_t g_backend;
static char g_dir[64];
static char g_url[512];
static char g_pg_schema[64];
static ld_node_t *g_node;
static uint16_t g_rest;
static char g_shard[64]; /* CT's pubsub topic */
static sqlite3 *g_db;
static PGconn *g_pg;

/* ---- the node -------------------------------------------------------------------------------- */

static http_response_t call(const char *method, const char *path, const char *body) {
  http_response_t r;
  assert_int_equal(http_request_on_loop(&g_loop, g_rest, method, path, body ? JSON_HDR : NULL, body,
                                        body ? strlen(body) : 0, &r),
                   0);
  return r;
}

static void expect_ok(const char *method, const char *path, const char *body) {
  http_response_t r = call(method, path, body);
  if (r.status != 200)
    fail_msg("%s %s -> %d %s", method, path, r.status, r.body);
  http_response_free(&r);
}

static void pg_admin(const char *sql) {
  PGconn *c = PQconnectdb(getenv("LD_TEST_PG_URL"));
  assert_int_equal(PQstatus(c), CONNECTION_OK);
  PGresult *r = PQexec(c, sql);
  if (PQresultStatus(r) != PGRES_COMMAND_OK)
    fail_msg("%s: %s", sql, PQerrorMessage(c));
  PQclear(r);
  PQfinish(c);
}

static void pg_drop_schema(void) {
  char sql[192];
  snprintf(sql, sizeof sql, "SET client_min_messages = warning; DROP SCHEMA IF EXISTS %s CASCADE",
           g_pg_schema);
  pg_admin(sql);
}

static void make_url(void) {
  if (g_backend == B_SQLITE_FILE) {
    snprintf(g_url, sizeof g_url, "sqlite://%s/archive.db", g_dir);
    return;
  }
  const char *base = getenv("LD_TEST_PG_URL");
  snprintf(g_url, sizeof g_url, "%s%coptions=-csearch_path%%3D%s", base,
           strchr(base, '?') ? '&' : '?', g_pg_schema);
  pg_drop_schema();
  char sql[128];
  snprintf(sql, sizeof sql, "CREATE SCHEMA %s", g_pg_schema);
  pg_admin(sql);
}

/* The test's own view of the database, opened once the node has created it. */
static void open_own_view(void) {
  if (g_backend == B_SQLITE_FILE) {
    assert_int_equal(sqlite3_open_v2(g_url + 9, &g_db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_busy_timeout(g_db, STEP_MS);
    return;
  }
  g_pg = PQconnectdb(g_url);
  assert_int_equal(PQstatus(g_pg), CONNECTION_OK);
}

/* Whether the row of `hash` is committed, read without running the node's loop. */
static bool stored_now(const uint8_t hash[LD_WAKU_HASH_LEN]) {
  if (g_backend == B_SQLITE_FILE) {
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(g_db, "SELECT count(*) FROM Message WHERE messageHash = ?",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_blob(st, 1, hash, LD_WAKU_HASH_LEN, SQLITE_STATIC);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return n == 1;
  }
  char hex[2 * LD_WAKU_HASH_LEN + 1];
  ld_hex_encode(hash, LD_WAKU_HASH_LEN, hex);
  const char *vals[1] = {hex};
  PGresult *r = PQexecParams(g_pg, "SELECT count(*) FROM messages WHERE messageHash = $1", 1, NULL,
                             vals, NULL, NULL, 0);
  if (PQresultStatus(r) != PGRES_TUPLES_OK)
    fail_msg("postgres: %s", PQerrorMessage(g_pg));
  int n = atoi(PQgetvalue(r, 0, 0));
  PQclear(r);
  return n == 1;
}

static int setup(void **state) {
  (void)state;
  uv_loop_init(&g_loop);
  make_url();
  char err[256];
  ld_node_config_t *cfg = nh_config();
  assert_int_equal(ld_node_config_set_rest(cfg, true, "127.0.0.1", 0, 0, err, sizeof err), 0);
  assert_int_equal(ld_node_config_set_num_shards(cfg, NUM_SHARDS, err, sizeof err), 0);
  cfg->store = true;
  assert_int_equal(ld_node_config_set_store_db_url(cfg, g_url, err, sizeof err), 0);
  g_node = nh_start(&g_loop, cfg);
  g_rest = ld_node_rest_port(g_node);
  assert_true(g_rest > 0);
  assert_true(
      ld_autoshard_pubsub_topic(CT, strlen(CT), NUM_SHARDS, 0, g_shard, sizeof g_shard, NULL) > 0);
  expect_ok("POST", "/relay/v1/auto/subscriptions", "[\"" CT "\"]");
  /* answered once the archive is open (queries wait for it): the database exists from here on */
  expect_ok("GET", "/store/v3/messages?contentTopics=" CT_ENC, NULL);
  open_own_view();
  return 0;
}

static void on_stopped(void *ud) {
  *(bool *)ud = true;
}

static int teardown(void **state) {
  (void)state;
  if (g_db != NULL)
    sqlite3_close(g_db);
  if (g_pg != NULL)
    PQfinish(g_pg);
  g_db = NULL;
  g_pg = NULL;
  bool stopped = false;
  ld_node_stop(g_node, on_stopped, &stopped);
  NH_WAIT_FOR(&g_loop, stopped, STEP_MS);
  uv_run(&g_loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&g_loop), 0);
  if (g_backend == B_SQLITE_FILE) {
    static const char *const suffix[] = {"", "-wal", "-shm"};
    for (size_t i = 0; i < 3; i++) {
      char path[128];
      snprintf(path, sizeof path, "%s/archive.db%s", g_dir, suffix[i]);
      unlink(path);
    }
  } else {
    pg_drop_schema();
  }
  return 0;
}

/* ---- the test -------------------------------------------------------------------------------- */

/* Message i: payload "ryw <i>", CT, timestamp base + i; its JSON body and hash. */
static void make_message(int i, int64_t base, char *json, size_t cap,
                         uint8_t hash[LD_WAKU_HASH_LEN]) {
  char text[32], b64[64];
  int n = snprintf(text, sizeof text, "ryw %d", i);
  assert_true(ld_base64_encode((const uint8_t *)text, (size_t)n, b64, sizeof b64) > 0);
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = (const uint8_t *)text;
  m.payload_len = (size_t)n;
  m.content_topic = CT;
  m.content_topic_len = strlen(CT);
  m.timestamp = base + i;
  assert_int_equal(ld_waku_message_hash(g_shard, &m, hash), 0);
  snprintf(json, cap, "{\"payload\":\"%s\",\"contentTopic\":\"" CT "\",\"timestamp\":%lld}", b64,
           (long long)m.timestamp);
}

/* GET /store/v3/messages for `hash`: the one message, with that hash. */
static void expect_in_store(int i, const uint8_t hash[LD_WAKU_HASH_LEN]) {
  char hex[2 * LD_WAKU_HASH_LEN + 1], path[256];
  ld_hex_encode(hash, LD_WAKU_HASH_LEN, hex);
  snprintf(path, sizeof path, "/store/v3/messages?hashes=0x%s&includeData=true", hex);
  http_response_t r = call("GET", path, NULL);
  assert_int_equal(r.status, 200);
  json_error_t je;
  json_t *o = json_loads(r.body, 0, &je);
  assert_non_null(o);
  json_t *msgs = json_object_get(o, "messages");
  if (json_array_size(msgs) != 1)
    fail_msg("round %d: the store query right after the publish answered %s", i, r.body);
  const char *got = json_string_value(json_object_get(json_array_get(msgs, 0), "messageHash"));
  assert_non_null(got);
  assert_string_equal(got + 2, hex);
  json_decref(o);
  http_response_free(&r);
}

static void publish_then_query_with_no_pause(void **state) {
  (void)state;
  char static_path[128];
  snprintf(static_path, sizeof static_path, "/relay/v1/messages/%%2Fwaku%%2F2%%2Frs%%2F0%%2F%s",
           strrchr(g_shard, '/') + 1);
  int64_t base = (int64_t)ld_wall_ns();
  for (int i = 0; i < RYW_ROUNDS; i++) {
    char json[256];
    uint8_t hash[LD_WAKU_HASH_LEN];
    make_message(i, base, json, sizeof json, hash);
    expect_ok("POST", i % 2 == 0 ? "/relay/v1/auto/messages" : static_path, json);
    if (!stored_now(hash))
      fail_msg("round %d: answered 200 before the message was archived", i);
    expect_in_store(i, hash);
  }
}

int main(void) {
  snprintf(g_dir, sizeof g_dir, "/tmp/ld-rest-ryw-XXXXXX");
  if (mkdtemp(g_dir) == NULL)
    return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(publish_then_query_with_no_pause, setup, teardown),
  };
  g_backend = B_SQLITE_FILE;
  int failed = _cmocka_run_group_tests("sqlite file", tests, 1, NULL, NULL);
  if (getenv("LD_TEST_PG_URL") != NULL) {
    snprintf(g_pg_schema, sizeof g_pg_schema, "ld_rest_ryw_%d", (int)getpid());
    g_backend = B_POSTGRES;
    failed += _cmocka_run_group_tests("postgres", tests, 1, NULL, NULL);
  } else if (getenv("LD_REQUIRE_PG") != NULL) {
    fprintf(stderr, "postgres: LD_REQUIRE_PG is set but LD_TEST_PG_URL is not\n");
    failed++;
  } else {
    fprintf(stderr, "postgres: skipped (set LD_TEST_PG_URL to run it)\n");
  }
  rmdir(g_dir);
  return failed;
}
