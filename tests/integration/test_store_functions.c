/* The store's three functions (key-value, key presence, wayback; waku/store/functions.h) switched
 * on and off one by one on a real node: relay, store on a memory:// archive and REST on loopback,
 * in one process. The node is given messages through REST relay publishes, then asked the four
 * kinds of store v3 query twice, over the wire (a store client on a switch of the test's own,
 * dialing the node's TCP address) and through GET /store/v3/messages without peerAddr:
 * - a query whose functions are all enabled is answered 200 with exactly the expected hashes
 *   (with bodies when include_data is set);
 * - a query that needs a disabled function is answered 503 "SERVICE_UNAVAILABLE: not supported by
 *   this store node: <functions>", never silence;
 * - REST gives the same status, description and hashes as the wire. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <uv.h>

#include "base/base64.h"
#include "base/clock.h"
#include "base/hex.h"
#include "http_client.h"
#include "node/node.h"
#include "node_harness.h"
#include "switch_harness.h"
#include "waku/store/client.h"
#include "waku/store/functions.h"

#define STEP_MS 15000
#define N_MSGS 30
#define PUBSUB "/waku/2/rs/0/0"
#define PUBSUB_ENC "%2Fwaku%2F2%2Frs%2F0%2F0"
#define CT "/functions/1/store/proto"
#define CT_ENC "%2Ffunctions%2F1%2Fstore%2Fproto"
#define JSON_HDR "Content-Type: application/json\r\n"
#define PAGE 50 /* every message on one page */

static uv_loop_t g_loop;
static ld_node_t *g_node;
static uint16_t g_rest;
static ld_switch_t *g_client;
static ld_multiaddr_t g_node_addr;
static uint8_t g_hashes[N_MSGS][LD_WAKU_HASH_LEN]; /* in publish (= timestamp) order */

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

static void publish(int i, int64_t ts) {
  char text[32], b64[64], json[256];
  int n = snprintf(text, sizeof text, "functions %d", i);
  assert_true(ld_base64_encode((const uint8_t *)text, (size_t)n, b64, sizeof b64) > 0);
  ld_waku_message_t m;
  ld_waku_message_init(&m);
  m.payload = (const uint8_t *)text;
  m.payload_len = (size_t)n;
  m.content_topic = CT;
  m.content_topic_len = strlen(CT);
  m.timestamp = ts;
  assert_int_equal(ld_waku_message_hash(PUBSUB, &m, g_hashes[i]), 0);
  snprintf(json, sizeof json, "{\"payload\":\"%s\",\"contentTopic\":\"" CT "\",\"timestamp\":%lld}",
           b64, (long long)ts);
  expect_ok("POST", "/relay/v1/messages/" PUBSUB_ENC, json);
}

/* Starts the node with the functions in `enabled`, publishes the messages, dials it. */
static void start(uint32_t enabled) {
  uv_loop_init(&g_loop);
  char err[256], addr[LD_MULTIADDR_TEXT_MAX];
  ld_node_config_t *cfg = nh_config();
  assert_int_equal(ld_node_config_set_rest(cfg, true, "127.0.0.1", 0, 0, err, sizeof err), 0);
  cfg->store = true;
  assert_int_equal(ld_node_config_set_store_db_url(cfg, "memory://", err, sizeof err), 0);
  cfg->store_key_value = (enabled & LD_STORE_FN_KEY_VALUE) != 0;
  cfg->store_key_presence = (enabled & LD_STORE_FN_KEY_PRESENCE) != 0;
  cfg->store_wayback = (enabled & LD_STORE_FN_WAYBACK) != 0;
  g_node = nh_start(&g_loop, cfg);
  g_rest = ld_node_rest_port(g_node);
  assert_true(g_rest > 0);
  expect_ok("POST", "/relay/v1/subscriptions", "[\"" PUBSUB "\"]");
  int64_t base = (int64_t)ld_wall_ns() - N_MSGS * INT64_C(1000000);
  for (int i = 0; i < N_MSGS; i++)
    publish(i, base + i * INT64_C(1000000));
  nh_addr_text(g_node, addr, sizeof addr);
  assert_int_equal(ld_multiaddr_parse(&g_node_addr, addr), 0);
  g_client = sh_switch_new(&g_loop, NULL);
}

static void on_stopped(void *ud) {
  *(bool *)ud = true;
}

static void stop(void) {
  sh_switch_close(g_client, &g_loop);
  bool stopped = false;
  ld_node_stop(g_node, on_stopped, &stopped);
  NH_WAIT_FOR(&g_loop, stopped, STEP_MS);
  uv_run(&g_loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&g_loop), 0);
}

/* ---- the four kinds of query ----------------------------------------------------------------- */

typedef enum kind { K_KEY_VALUE, K_PRESENCE, K_WAYBACK, K_FULL, K_COUNT } kind_t;

static const char *const k_kind_names[K_COUNT] = {"key-value", "presence", "wayback", "full"};

/* Hash queries ask for messages 3 and 7 (and one hash nobody published). */
static const int k_asked[2] = {3, 7};
static const uint8_t k_unknown[LD_WAKU_HASH_LEN] = {0xde, 0xad};

static void build_query(kind_t k, ld_store_query_t *q, uint8_t (*hashes)[LD_WAKU_HASH_LEN]) {
  static const char *const topics[1] = {CT};
  ld_store_query_init(q);
  q->request_id = "functions-test";
  q->include_data = k == K_KEY_VALUE || k == K_FULL;
  q->has_limit = true;
  q->limit = PAGE;
  q->forward = false;
  q->has_forward = true;
  if (k == K_KEY_VALUE || k == K_PRESENCE) {
    memcpy(hashes[0], g_hashes[k_asked[0]], LD_WAKU_HASH_LEN);
    memcpy(hashes[1], g_hashes[k_asked[1]], LD_WAKU_HASH_LEN);
    memcpy(hashes[2], k_unknown, LD_WAKU_HASH_LEN);
    q->hashes = (const uint8_t(*)[LD_WAKU_HASH_LEN])hashes;
    q->n_hashes = 3;
  } else {
    q->pubsub_topic = PUBSUB;
    q->content_topics = topics;
    q->n_content_topics = 1;
  }
}

/* The same query as REST parameters. */
static void build_path(kind_t k, char *out, size_t cap) {
  const char *data = k == K_KEY_VALUE || k == K_FULL ? "true" : "false";
  if (k == K_KEY_VALUE || k == K_PRESENCE) {
    char a[2 * LD_WAKU_HASH_LEN + 1], b[2 * LD_WAKU_HASH_LEN + 1], c[2 * LD_WAKU_HASH_LEN + 1];
    ld_hex_encode(g_hashes[k_asked[0]], LD_WAKU_HASH_LEN, a);
    ld_hex_encode(g_hashes[k_asked[1]], LD_WAKU_HASH_LEN, b);
    ld_hex_encode(k_unknown, LD_WAKU_HASH_LEN, c);
    snprintf(out, cap,
             "/store/v3/messages?hashes=0x%s,0x%s,0x%s&includeData=%s&pageSize=%d&ascending=false",
             a, b, c, data, PAGE);
  } else {
    snprintf(out, cap,
             "/store/v3/"
             "messages?pubsubTopic=%s&contentTopics=%s&includeData=%s&pageSize=%d&ascending=false",
             PUBSUB_ENC, CT_ENC, data, PAGE);
  }
}

/* What a kind needs, as functions.h maps it. */
static uint32_t needs(kind_t k) {
  static const uint32_t n[K_COUNT] = {LD_STORE_FN_KEY_VALUE, LD_STORE_FN_KEY_PRESENCE,
                                      LD_STORE_FN_WAYBACK,
                                      LD_STORE_FN_WAYBACK | LD_STORE_FN_KEY_VALUE};
  return n[k];
}

/* ---- one answer, as the wire or REST gave it ------------------------------------------------- */

typedef struct answer {
  uint32_t status;
  char desc[256];
  size_t n;
  uint8_t hashes[PAGE][LD_WAKU_HASH_LEN];
  bool with_data[PAGE];
} answer_t;

typedef struct wire_wait {
  bool done;
  int err;
  answer_t *out;
} wire_wait_t;

static void on_wire(int err, ld_store_response_t *res, void *ud) {
  wire_wait_t *w = ud;
  w->done = true;
  w->err = err;
  w->out->status = res->status_code;
  snprintf(w->out->desc, sizeof w->out->desc, "%s", res->status_desc);
  w->out->n = res->n_entries;
  for (size_t i = 0; i < res->n_entries && i < PAGE; i++) {
    memcpy(w->out->hashes[i], res->entries[i].hash, LD_WAKU_HASH_LEN);
    w->out->with_data[i] = res->entries[i].pubsub_topic != NULL;
  }
}

static bool wire_done(void *ud) {
  return ((wire_wait_t *)ud)->done;
}

static void ask_wire(kind_t k, answer_t *out) {
  ld_store_query_t q;
  uint8_t hashes[3][LD_WAKU_HASH_LEN];
  build_query(k, &q, hashes);
  wire_wait_t w = {.out = out};
  ld_store_target_t to = {.addr = &g_node_addr};
  assert_int_equal(ld_store_client_query(g_client, &to, &q, NULL, on_wire, &w, NULL), 0);
  assert_true(sh_run_until(&g_loop, wire_done, &w, STEP_MS));
  assert_int_equal(w.err, 0); /* the server answered, whatever its status */
}

static void ask_rest(kind_t k, answer_t *out) {
  char path[512];
  build_path(k, path, sizeof path);
  http_response_t r = call("GET", path, NULL);
  if (r.status != 200)
    fail_msg("GET %s -> %d %s", path, r.status, r.body);
  json_error_t je;
  json_t *o = json_loads(r.body, 0, &je);
  assert_non_null(o);
  out->status = (uint32_t)json_integer_value(json_object_get(o, "statusCode"));
  const char *desc = json_string_value(json_object_get(o, "statusDesc"));
  snprintf(out->desc, sizeof out->desc, "%s", desc != NULL ? desc : "(none)");
  json_t *msgs = json_object_get(o, "messages");
  out->n = json_array_size(msgs);
  assert_true(out->n <= PAGE);
  for (size_t i = 0; i < out->n; i++) {
    json_t *e = json_array_get(msgs, i);
    const char *hex = json_string_value(json_object_get(e, "messageHash"));
    assert_non_null(hex);
    size_t len = 0;
    assert_int_equal(
        ld_hex_decode(hex + 2, strlen(hex + 2), out->hashes[i], LD_WAKU_HASH_LEN, &len), 0);
    assert_int_equal(len, LD_WAKU_HASH_LEN);
    out->with_data[i] = json_object_get(e, "message") != NULL;
  }
  json_decref(o);
  http_response_free(&r);
}

/* ---- checks ---------------------------------------------------------------------------------- */

static void expect_served(kind_t k, const answer_t *a, const char *via) {
  if (a->status != 200)
    fail_msg("%s %s: %u %s", via, k_kind_names[k], a->status, a->desc);
  assert_string_equal(a->desc, "OK");
  bool data = k == K_KEY_VALUE || k == K_FULL;
  size_t want = k == K_KEY_VALUE || k == K_PRESENCE ? 2 : N_MSGS;
  if (a->n != want)
    fail_msg("%s %s: %zu entries, expected %zu", via, k_kind_names[k], a->n, want);
  for (size_t i = 0; i < a->n; i++) {
    int idx = want == 2 ? k_asked[i] : (int)i; /* ascending whatever the direction */
    assert_memory_equal(a->hashes[i], g_hashes[idx], LD_WAKU_HASH_LEN);
    assert_int_equal(a->with_data[i], data);
  }
}

static void expect_refused(kind_t k, uint32_t off, const answer_t *a, const char *via) {
  char names[64], want[160];
  ld_store_functions_text(off, names, sizeof names);
  snprintf(want, sizeof want, "SERVICE_UNAVAILABLE: not supported by this store node: %s", names);
  if (a->status != 503)
    fail_msg("%s %s: %u %s, expected 503", via, k_kind_names[k], a->status, a->desc);
  assert_string_equal(a->desc, want);
  assert_int_equal(a->n, 0);
}

static void expect_same(const answer_t *wire, const answer_t *rest) {
  assert_int_equal(wire->status, rest->status);
  assert_string_equal(wire->desc, rest->desc);
  assert_int_equal(wire->n, rest->n);
  for (size_t i = 0; i < wire->n; i++) {
    assert_memory_equal(wire->hashes[i], rest->hashes[i], LD_WAKU_HASH_LEN);
    assert_int_equal(wire->with_data[i], rest->with_data[i]);
  }
}

static void check_with(uint32_t enabled) {
  start(enabled);
  for (kind_t k = 0; k < K_COUNT; k++) {
    answer_t wire, rest;
    memset(&wire, 0, sizeof wire);
    memset(&rest, 0, sizeof rest);
    ask_wire(k, &wire);
    ask_rest(k, &rest);
    uint32_t off = needs(k) & ~enabled;
    if (off == 0) {
      expect_served(k, &wire, "wire");
      expect_served(k, &rest, "rest");
    } else {
      expect_refused(k, off, &wire, "wire");
      expect_refused(k, off, &rest, "rest");
    }
    expect_same(&wire, &rest);
  }
  stop();
}

static void all_three_enabled(void **state) {
  (void)state;
  check_with(LD_STORE_FN_ALL);
}

static void key_value_disabled(void **state) {
  (void)state;
  check_with(LD_STORE_FN_ALL & ~LD_STORE_FN_KEY_VALUE);
}

static void key_presence_disabled(void **state) {
  (void)state;
  check_with(LD_STORE_FN_ALL & ~LD_STORE_FN_KEY_PRESENCE);
}

static void wayback_disabled(void **state) {
  (void)state;
  check_with(LD_STORE_FN_ALL & ~LD_STORE_FN_WAYBACK);
}

static void only_key_presence(void **state) {
  (void)state;
  check_with(LD_STORE_FN_KEY_PRESENCE);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(all_three_enabled),     cmocka_unit_test(key_value_disabled),
      cmocka_unit_test(key_presence_disabled), cmocka_unit_test(wayback_disabled),
      cmocka_unit_test(only_key_presence),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
