/* The REST API of real nodes in one process over loopback, driven by a small HTTP client:
 * A and B use autosharding over 8 shards with the admin API on; C uses static sharding without
 * the admin API; D runs without relay. Every endpoint is checked for its status code and JSON,
 * including the bad requests. */
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

#include "base/clock.h"
#include "base/error.h"
#include "base/log.h"
#include "http_client.h"
#include "node_harness.h"
#include "rest_call.h"
#include "node/node.h"
#include "rest/httpd.h"
#include "waku/enr/enr.h"
#include "waku/core/sharding.h"

#define STEP_MS 15000
#define JSON_HDR REST_JSON_HDR
#define SHARD0 "/waku/2/rs/0/0"
#define SHARD0_ENC "%2Fwaku%2F2%2Frs%2F0%2F0"
#define CT "/toy/1/chat/proto"
#define CT_ENC "%2Ftoy%2F1%2Fchat%2Fproto"

typedef struct tnode {
  ld_node_t *node;
  uint16_t rest;
  char addr[LD_MULTIADDR_TEXT_MAX];
  bool stopped;
} tnode_t;

static uv_loop_t g_loop;
static tnode_t g_a, g_b, g_c, g_d;

static void pump(void) {
  uv_run(&g_loop, UV_RUN_ONCE);
}

static void on_tick(uv_timer_t *t) {
  (void)t;
}

static void run_for(uint64_t ms) {
  uv_timer_t t;
  uv_timer_init(&g_loop, &t);
  uv_timer_start(&t, on_tick, ms, 0);
  uint64_t end = ld_now_ms() + ms;
  while (ld_now_ms() < end)
    pump();
  uv_close((uv_handle_t *)&t, NULL);
  pump();
}

/* ---- nodes ----------------------------------------------------------------------------------- */

static void start(tnode_t *t, bool admin, bool relay, int num_shards) {
  char err[256];
  ld_node_config_t *cfg = nh_config();
  assert_int_equal(ld_node_config_set_rest(cfg, true, "127.0.0.1", 0, 0, err, sizeof err), 0);
  assert_int_equal(ld_node_config_set_num_shards(cfg, num_shards, err, sizeof err), 0);
  cfg->rest_admin = admin;
  cfg->relay = relay;
  t->node = nh_start(&g_loop, cfg);
  t->rest = ld_node_rest_port(t->node);
  assert_true(t->rest > 0);
  nh_addr_text(t->node, t->addr, sizeof t->addr);
}

static void on_stopped(void *ud) {
  ((tnode_t *)ud)->stopped = true;
}

static void stop(tnode_t *t) {
  ld_node_stop(t->node, on_stopped, t);
  uint64_t deadline = ld_now_ms() + STEP_MS;
  while (!t->stopped && ld_now_ms() < deadline)
    pump();
  assert_true(t->stopped);
}

static int setup(void **state) {
  (void)state;
  uv_loop_init(&g_loop);
  start(&g_a, true, true, 8);
  start(&g_b, true, true, 8);
  start(&g_c, false, true, 0);
  start(&g_d, true, false, 0);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  stop(&g_a);
  stop(&g_b);
  stop(&g_c);
  stop(&g_d);
  uv_run(&g_loop, UV_RUN_NOWAIT);
  return 0;
}

/* A valid peer ID nobody uses. */
static const char *unknown_peer(void) {
  static char text[LD_PEERID_TEXT_MAX];
  if (text[0] == '\0') {
    ld_privkey_t key;
    ld_pubkey_t pub;
    ld_peerid_t id;
    assert_int_equal(ld_privkey_generate(&key, LD_KEY_SECP256K1), 0);
    ld_privkey_public(&key, &pub);
    assert_int_equal(ld_peerid_from_pubkey(&id, &pub), 0);
    assert_true(ld_peerid_to_text(&id, text, sizeof text) > 0);
  }
  return text;
}

/* ---- requests -------------------------------------------------------------------------------- */

static http_response_t call(const tnode_t *t, const char *method, const char *path,
                            const char *body) {
  return rest_call_json(&g_loop, t->rest, method, path, body);
}

/* Asserts the status and, when `text` is not NULL, the exact body. */
static void expect(const tnode_t *t, const char *method, const char *path, const char *body,
                   int status, const char *text) {
  rest_expect(&g_loop, t->rest, method, path, body ? JSON_HDR : NULL, body, status, text);
}

static json_t *get_json(const tnode_t *t, const char *path) {
  return rest_json_status(&g_loop, t->rest, "GET", path, NULL, 200);
}

/* ---- debug, health --------------------------------------------------------------------------- */

static void debug_info_and_version(void **state) {
  (void)state;
  json_t *info = get_json(&g_a, "/debug/v1/info");
  json_t *addrs = json_object_get(info, "listenAddresses");
  assert_true(json_is_array(addrs));
  assert_true(json_array_size(addrs) >= 1);
  assert_string_equal(json_string_value(json_array_get(addrs, 0)), g_a.addr);
  assert_non_null(strstr(g_a.addr, "/p2p/"));
  /* the node's ENR, signed with its key and carrying its relay shards */
  const char *enr_text = json_string_value(json_object_get(info, "enrUri"));
  assert_non_null(enr_text);
  ld_enr_t enr;
  assert_int_equal(ld_enr_parse_text(&enr, enr_text), 0);
  ld_peerid_t id;
  assert_int_equal(ld_enr_peer_id(&enr, &id), 0);
  assert_true(ld_peerid_equal(&id, ld_node_peer_id(g_a.node)));
  json_decref(info);
  info = get_json(&g_a, "/info");
  assert_non_null(json_object_get(info, "listenAddresses"));
  json_decref(info);
  expect(&g_a, "GET", "/debug/v1/version", NULL, 200, "v" LD_VERSION);
  expect(&g_a, "GET", "/version", NULL, 200, "v" LD_VERSION);
}

static const char *relay_health(const tnode_t *t, char *buf, size_t cap) {
  json_t *h = get_json(t, "/health");
  assert_string_equal(json_string_value(json_object_get(h, "nodeHealth")), "READY");
  json_t *list = json_object_get(h, "protocolsHealth");
  assert_int_equal(json_array_size(list), 15);
  json_t *relay = json_array_get(list, 0);
  snprintf(buf, cap, "%s", json_string_value(json_object_get(relay, "Relay")));
  json_t *store = json_array_get(list, 5);
  assert_string_equal(json_string_value(json_object_get(store, "Store")), "NOT_MOUNTED");
  json_decref(h);
  return buf;
}

static void health_before_peers(void **state) {
  (void)state;
  char buf[32];
  assert_string_equal(relay_health(&g_c, buf, sizeof buf), "NOT_READY");
  http_response_t r = call(&g_c, "GET", "/health", NULL);
  assert_non_null(strstr(r.body, "{\"Relay\":\"NOT_READY\",\"desc\":\"No connected peers\"}"));
  assert_non_null(strstr(r.body, "{\"Rln Relay\":\"NOT_MOUNTED\"}"));
  http_response_free(&r);
  json_t *h = get_json(&g_d, "/health");
  json_t *relay = json_array_get(json_object_get(h, "protocolsHealth"), 0);
  assert_string_equal(json_string_value(json_object_get(relay, "Relay")), "NOT_MOUNTED");
  json_decref(h);
}

/* ---- admin ----------------------------------------------------------------------------------- */

static void admin_connects_and_lists_peers(void **state) {
  (void)state;
  json_t *peers = get_json(&g_a, "/admin/v1/peers");
  assert_int_equal(json_array_size(peers), 0);
  json_decref(peers);
  char body[LD_MULTIADDR_TEXT_MAX + 8];
  snprintf(body, sizeof body, "[\"%s\"]", g_b.addr);
  expect(&g_a, "POST", "/admin/v1/peers", body, 200, "OK");
  expect(&g_a, "POST", "/admin/v1/peers", "[]", 200, "OK");
  /* identify and metadata fill the entry */
  const char *b_id = strstr(g_b.addr, "/p2p/") + 5;
  json_t *entry = NULL;
  uint64_t deadline = ld_now_ms() + STEP_MS;
  while (ld_now_ms() < deadline) {
    peers = get_json(&g_a, "/admin/v1/peers");
    entry = json_array_size(peers) == 1 ? json_incref(json_array_get(peers, 0)) : NULL;
    json_decref(peers);
    if (entry != NULL && json_array_size(json_object_get(entry, "shards")) > 0 &&
        json_array_size(json_object_get(entry, "protocols")) > 0)
      break;
    json_decref(entry);
    entry = NULL;
    run_for(50);
  }
  assert_non_null(entry);
  assert_non_null(strstr(json_string_value(json_object_get(entry, "multiaddr")), b_id));
  assert_string_equal(json_string_value(json_object_get(entry, "connected")), "Connected");
  assert_string_equal(json_string_value(json_object_get(entry, "origin")), "UnknownOrigin");
  assert_non_null(strstr(json_string_value(json_object_get(entry, "agent")), "logosdelivery"));
  json_t *shard = json_array_get(json_object_get(entry, "shards"), 0);
  assert_true(json_is_integer(shard));
  bool relay = false;
  json_t *protos = json_object_get(entry, "protocols");
  for (size_t i = 0; i < json_array_size(protos); i++)
    relay |= strcmp(json_string_value(json_array_get(protos, i)), "/vac/waku/relay/2.0.0") == 0;
  assert_true(relay);
  json_decref(entry);
  /* the connected list and a single peer */
  peers = get_json(&g_a, "/admin/v1/peers/connected");
  assert_int_equal(json_array_size(peers), 1);
  json_decref(peers);
  char path[256];
  snprintf(path, sizeof path, "/admin/v1/peer/%s", b_id);
  entry = get_json(&g_a, path);
  assert_string_equal(json_string_value(json_object_get(entry, "connected")), "Connected");
  json_decref(entry);
  char text[256];
  snprintf(path, sizeof path, "/admin/v1/peer/%s", unknown_peer());
  snprintf(text, sizeof text, "Peer with ID %s not found", unknown_peer());
  expect(&g_a, "GET", path, NULL, 404, text);
  expect(&g_a, "GET", "/admin/v1/peer/notapeer", NULL, 400, "Invalid argument:invalid peer ID");
  /* relay becomes ready on both sides */
  char buf[32];
  deadline = ld_now_ms() + STEP_MS;
  while (strcmp(relay_health(&g_a, buf, sizeof buf), "READY") != 0 && ld_now_ms() < deadline)
    run_for(50);
  assert_string_equal(buf, "READY");
}

static void admin_bad_requests(void **state) {
  (void)state;
  expect(&g_a, "POST", "/admin/v1/peers", NULL, 400, "Missing content body");
  expect(&g_a, "POST", "/admin/v1/peers", "[\"x\"", 400, NULL);
  http_response_t r = call(&g_a, "POST", "/admin/v1/peers", "{\"a\":1}");
  assert_int_equal(r.status, 400);
  assert_non_null(strstr(r.body, "Failed to decode request: "));
  http_response_free(&r);
  expect(&g_a, "POST", "/admin/v1/peers", "[\"/ip4/127.0.0.1/tcp/1\"]", 400,
         "Couldn't parse remote peer info: multiaddress without /p2p/<peer id>");
  expect(&g_a, "POST", "/admin/v1/peers", "[\"not a multiaddr\"]", 400,
         "Couldn't parse remote peer info: invalid multiaddress");
  char unreachable[160];
  snprintf(unreachable, sizeof unreachable, "/ip4/127.0.0.1/tcp/1/p2p/%s", unknown_peer());
  char body[LD_MULTIADDR_TEXT_MAX + 256], text[256];
  snprintf(body, sizeof body, "[\"%s\",\"%s\"]", g_b.addr, unreachable);
  snprintf(text, sizeof text, "Failed to connect to peer at index: 1 - %s", unreachable);
  expect(&g_a, "POST", "/admin/v1/peers", body, 400, text);
  /* the refused peer is known now, not connected */
  json_t *peers = get_json(&g_a, "/admin/v1/peers");
  bool found = false;
  for (size_t i = 0; i < json_array_size(peers); i++) {
    json_t *p = json_array_get(peers, i);
    if (strcmp(json_string_value(json_object_get(p, "multiaddr")), unreachable) == 0) {
      found = true;
      assert_string_equal(json_string_value(json_object_get(p, "connected")), "NotConnected");
    }
  }
  assert_true(found);
  json_decref(peers);
  /* log level */
  ld_log_level_t before = ld_log_get_level();
  expect(&g_a, "POST", "/admin/v1/log-level/DEBUG", NULL, 200, "OK");
  assert_int_equal(ld_log_get_level(), LD_LOG_DEBUG);
  ld_log_set_level(before);
  expect(&g_a, "POST", "/admin/v1/log-level/LOUD", NULL, 400,
         "Invalid log-level: LOUD. Please specify one of TRACE, DEBUG, INFO, NOTICE, WARN, ERROR "
         "or FATAL");
}

/* ---- relay, static shards -------------------------------------------------------------------- */

#define TS_BIG "1712345678901234567"

static void relay_messages_flow_between_nodes(void **state) {
  (void)state;
  expect(&g_a, "POST", "/relay/v1/subscriptions", "[\"" SHARD0 "\"]", 200, "OK");
  expect(&g_b, "POST", "/relay/v1/subscriptions", "[\"" SHARD0 "\"]", 200, "OK");
  expect(&g_a, "POST", "/relay/v1/subscriptions", "[]", 200, "OK");
  run_for(300);
  /* nothing yet: an empty list */
  expect(&g_b, "GET", "/relay/v1/messages/" SHARD0_ENC, NULL, 200, "[]");
  const char *msg = "{\"payload\":\"aGVsbG8=\",\"contentTopic\":\"/app/1/static/proto\","
                    "\"timestamp\":" TS_BIG ",\"meta\":\"bWV0YQ==\",\"ephemeral\":true}";
  expect(&g_a, "POST", "/relay/v1/messages/" SHARD0_ENC, msg, 200, "OK");
  /* the publisher's own cache has it */
  http_response_t r = call(&g_a, "GET", "/relay/v1/messages/" SHARD0_ENC, NULL);
  assert_int_equal(r.status, 200);
  assert_non_null(strstr(r.body, "\"timestamp\":" TS_BIG));
  http_response_free(&r);
  /* and it reaches B */
  char body[1024] = "[]";
  uint64_t deadline = ld_now_ms() + STEP_MS;
  while (strcmp(body, "[]") == 0 && ld_now_ms() < deadline) {
    r = call(&g_b, "GET", "/relay/v1/messages/" SHARD0_ENC, NULL);
    assert_int_equal(r.status, 200);
    snprintf(body, sizeof body, "%s", r.body);
    http_response_free(&r);
    if (strcmp(body, "[]") == 0)
      run_for(50);
  }
  assert_string_equal(body, "[{\"payload\":\"aGVsbG8=\",\"contentTopic\":\"/app/1/static/proto\","
                            "\"version\":0,\"timestamp\":" TS_BIG
                            ",\"meta\":\"bWV0YQ==\",\"ephemeral\":true,\"proof\":\"\"}]");
  /* cleared by the GET */
  expect(&g_b, "GET", "/relay/v1/messages/" SHARD0_ENC, NULL, 200, "[]");
  /* a missing timestamp becomes now */
  uint64_t before = ld_wall_ns();
  expect(&g_a, "POST", "/relay/v1/messages/" SHARD0_ENC,
         "{\"payload\":\"AQ==\",\"contentTopic\":\"/app/1/static/proto\"}", 200, "OK");
  json_t *list = get_json(&g_a, "/relay/v1/messages/" SHARD0_ENC);
  assert_int_equal(json_array_size(list), 1);
  json_int_t ts = json_integer_value(json_object_get(json_array_get(list, 0), "timestamp"));
  assert_true(ts >= (json_int_t)before && ts <= (json_int_t)ld_wall_ns());
  json_decref(list);
}

static void relay_bad_requests(void **state) {
  (void)state;
  const char *ok = "{\"payload\":\"aGk=\",\"contentTopic\":\"/a/1/c/p\"}";
  expect(&g_a, "POST", "/relay/v1/messages/%2Fwaku%2F2%2Frs%2F0%2F7", ok, 400,
         "Failed to publish: Node not subscribed to topic: /waku/2/rs/0/7");
  expect(&g_a, "GET", "/relay/v1/messages/%2Fwaku%2F2%2Frs%2F0%2F7", NULL, 404,
         ""); /* nwaku: no body for a pubsub topic */
  expect(&g_a, "POST", "/relay/v1/messages/" SHARD0_ENC, "{\"contentTopic\":\"/a/1/c/p\"}", 400,
         "Field `payload` is missing or empty");
  expect(&g_a, "POST", "/relay/v1/messages/" SHARD0_ENC, "{\"payload\":\"aGk=\"}", 400,
         "Field `contentTopic` is missing or empty");
  expect(&g_a, "POST", "/relay/v1/messages/" SHARD0_ENC,
         "{\"payload\":\"aGk=\",\"contentTopic\":\"\"}", 400,
         "Field `contentTopic` is missing or empty");
  expect(&g_a, "POST", "/relay/v1/messages/" SHARD0_ENC,
         "{\"payload\":7,\"contentTopic\":\"/a/1/c/p\"}", 400,
         "Field `payload` is missing or empty");
  expect(&g_a, "POST", "/relay/v1/messages/" SHARD0_ENC,
         "{\"payload\":\"aGk=\",\"contentTopic\":\"/a/1/c/p\",\"timestamp\":1.5}", 400,
         "Field `timestamp` must be an int64");
  expect(&g_a, "POST", "/relay/v1/messages/" SHARD0_ENC, NULL, 400, "Missing content body");
  http_response_t r;
  assert_int_equal(http_request_on_loop(&g_loop, g_a.rest, "POST", "/relay/v1/messages/" SHARD0_ENC,
                                        "Content-Type: application/x-www-form-urlencoded\r\n", ok,
                                        strlen(ok), &r),
                   0);
  assert_int_equal(r.status, 400);
  assert_string_equal(r.body, "Wrong Content-Type, expected application/json or text/plain");
  http_response_free(&r);
  expect(&g_a, "POST", "/relay/v1/subscriptions", "[\"foo\",\"" SHARD0 "\",\"/waku/2/rs/x/1\"]",
         400, "Invalid pubsub topic(s): @[\"foo\", \"/waku/2/rs/x/1\"]");
  expect(&g_a, "POST", "/relay/v1/subscriptions", "{}", 400, NULL);
  expect(&g_a, "DELETE", "/relay/v1/subscriptions", "[\"bar\"]", 400,
         "Invalid pubsub topic(s): @[\"bar\"]");
  expect(&g_a, "GET", "/relay/v1/messages/%zz", NULL, 400,
         "Invalid path parameter: bad percent-encoding");
  expect(&g_a, "OPTIONS", "/relay/v1/subscriptions", NULL, 200, "OK");
  /* a body over the cap */
  size_t big = LD_HTTPD_DEFAULT_MAX_BODY + 1;
  char *huge = malloc(big);
  memset(huge, ' ', big);
  assert_int_equal(http_request_on_loop(&g_loop, g_a.rest, "POST", "/relay/v1/subscriptions",
                                        JSON_HDR, huge, big, &r),
                   0);
  assert_int_equal(r.status, 413);
  http_response_free(&r);
  free(huge);
}

static void unsubscribing_forgets_the_topic(void **state) {
  (void)state;
  expect(&g_b, "POST", "/relay/v1/subscriptions", "[\"/waku/2/rs/0/3\"]", 200, "OK");
  expect(&g_b, "GET", "/relay/v1/messages/%2Fwaku%2F2%2Frs%2F0%2F3", NULL, 200, "[]");
  expect(&g_b, "DELETE", "/relay/v1/subscriptions", "[\"/waku/2/rs/0/3\"]", 200, "OK");
  expect(&g_b, "GET", "/relay/v1/messages/%2Fwaku%2F2%2Frs%2F0%2F3", NULL, 404, NULL);
  expect(&g_b, "POST", "/relay/v1/messages/%2Fwaku%2F2%2Frs%2F0%2F3",
         "{\"payload\":\"aGk=\",\"contentTopic\":\"/a/1/c/p\"}", 400,
         "Failed to publish: Node not subscribed to topic: /waku/2/rs/0/3");
}

/* ---- relay, autosharding --------------------------------------------------------------------- */

static void auto_messages_flow_between_nodes(void **state) {
  (void)state;
  expect(&g_a, "POST", "/relay/v1/auto/subscriptions", "[\"" CT "\"]", 200, "OK");
  expect(&g_b, "POST", "/relay/v1/auto/subscriptions", "[\"" CT "\"]", 200, "OK");
  expect(&g_b, "GET", "/relay/v1/auto/messages/" CT_ENC, NULL, 200, "[]");
  run_for(300);
  expect(&g_a, "POST", "/relay/v1/auto/messages",
         "{\"payload\":\"YXV0bw==\",\"contentTopic\":\"" CT "\",\"timestamp\":" TS_BIG "}", 200,
         "OK");
  char body[1024] = "[]";
  uint64_t deadline = ld_now_ms() + STEP_MS;
  while (strcmp(body, "[]") == 0 && ld_now_ms() < deadline) {
    http_response_t r = call(&g_b, "GET", "/relay/v1/auto/messages/" CT_ENC, NULL);
    assert_int_equal(r.status, 200);
    snprintf(body, sizeof body, "%s", r.body);
    http_response_free(&r);
    if (strcmp(body, "[]") == 0)
      run_for(50);
  }
  assert_string_equal(body, "[{\"payload\":\"YXV0bw==\",\"contentTopic\":\"" CT "\",\"version\":0,"
                            "\"timestamp\":" TS_BIG ",\"ephemeral\":false,\"proof\":\"\"}]");
  /* the shard's pubsub topic is readable too, and the message was taken with the GET above */
  char shard[64], path[128];
  assert_true(ld_autoshard_pubsub_topic(CT, strlen(CT), 8, 0, shard, sizeof shard, NULL) > 0);
  snprintf(path, sizeof path, "/relay/v1/messages/%%2Fwaku%%2F2%%2Frs%%2F0%%2F%s",
           strrchr(shard, '/') + 1);
  expect(&g_b, "GET", path, NULL, 200, "[]");
  expect(&g_b, "DELETE", "/relay/v1/auto/subscriptions", "[\"" CT "\"]", 200, "OK");
  expect(&g_b, "GET", "/relay/v1/auto/messages/" CT_ENC, NULL, 404, NULL);
}

static void auto_bad_requests(void **state) {
  (void)state;
  expect(
      &g_a, "POST", "/relay/v1/auto/subscriptions", "[\"nope\"]", 500,
      "Subscribe failed:Autosharding error: invalid format: content-topic must start with slash");
  expect(&g_a, "GET", "/relay/v1/auto/messages/%2Fnever%2F1%2Fx%2Fp", NULL, 404,
         "/never/1/x/p"); /* nwaku: the content topic */
  expect(&g_a, "POST", "/relay/v1/auto/messages", "{\"payload\":\"aGk=\",\"contentTopic\":\"x\"}",
         400, NULL);
  expect(&g_a, "POST", "/relay/v1/auto/messages", "{\"payload\":\"aGk=\"}", 400,
         "Field `contentTopic` is missing or empty");
  /* C uses static sharding */
  expect(&g_c, "POST", "/relay/v1/auto/messages",
         "{\"payload\":\"aGk=\",\"contentTopic\":\"" CT "\"}", 400,
         "Failed to publish. Autosharding is disabled");
  expect(&g_c, "POST", "/relay/v1/auto/subscriptions", "[\"" CT "\"]", 500,
         "Subscribe failed:Static sharding is used, relay subscriptions must specify a pubsub "
         "topic");
}

/* ---- long paths and heads -------------------------------------------------------------------- */

#define LONG_TOPIC_X 10000

/* "/app/1/xxx…/proto" with LONG_TOPIC_X x's, raw (`enc` false) or percent-encoded. */
static char *long_topic(bool enc) {
  const char *slash = enc ? "%2F" : "/";
  size_t cap = LONG_TOPIC_X + 64;
  char *t = malloc(cap);
  assert_non_null(t);
  int n = snprintf(t, cap, "%sapp%s1%s", slash, slash, slash);
  memset(t + n, 'x', LONG_TOPIC_X);
  snprintf(t + n + LONG_TOPIC_X, cap - (size_t)n - LONG_TOPIC_X, "%sproto", slash);
  return t;
}

/* A 10,000-character content topic in the path (nwaku accepts request heads up to 64 KiB): 404
 * with the topic as nwaku words it while not subscribed, then its messages as JSON. */
static void long_paths_reach_their_handler(void **state) {
  (void)state;
  char *topic = long_topic(false), *enc = long_topic(true);
  size_t cap = strlen(enc) + strlen(topic) + 256;
  char *path = malloc(cap), *body = malloc(cap);
  assert_non_null(path);
  assert_non_null(body);
  snprintf(path, cap, "/relay/v1/auto/messages/%s", enc);
  assert_true(strlen(path) > 4096);
  expect(&g_a, "GET", path, NULL, 404, topic);
  snprintf(body, cap, "[\"%s\"]", topic);
  expect(&g_a, "POST", "/relay/v1/auto/subscriptions", body, 200, "OK");
  expect(&g_a, "GET", path, NULL, 200, "[]");
  snprintf(body, cap, "{\"payload\":\"bG9uZw==\",\"contentTopic\":\"%s\",\"timestamp\":%s}", topic,
           TS_BIG);
  expect(&g_a, "POST", "/relay/v1/auto/messages", body, 200, "OK");
  json_t *list = get_json(&g_a, path);
  assert_int_equal(json_array_size(list), 1);
  json_t *m = json_array_get(list, 0);
  assert_string_equal(json_string_value(json_object_get(m, "contentTopic")), topic);
  assert_string_equal(json_string_value(json_object_get(m, "payload")), "bG9uZw==");
  json_decref(list);
  snprintf(body, cap, "[\"%s\"]", topic);
  expect(&g_a, "DELETE", "/relay/v1/auto/subscriptions", body, 200, "OK");
  free(path);
  free(body);
  free(topic);
  free(enc);
}

/* GET /debug/v1/version with a padding header making the head exactly `size` bytes. */
static http_response_t head_of(size_t size) {
  static const char start[] = "GET /debug/v1/version HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                              "Connection: close\r\nX-Pad: ";
  char *head = malloc(size + 1);
  assert_non_null(head);
  size_t n = strlen(start), pad = size - n - 4;
  memcpy(head, start, n);
  memset(head + n, 'p', pad);
  memcpy(head + n + pad, "\r\n\r\n", 4);
  http_response_t r;
  assert_int_equal(http_raw_on_loop(&g_loop, g_a.rest, head, size, &r), 0);
  free(head);
  return r;
}

/* nwaku (chronos) reads request heads of up to 64 KiB; one byte more is answered 431 and the
 * connection closed (nwaku's body is empty, ours JSON). */
static void heads_up_to_64_kib_are_read(void **state) {
  (void)state;
  char buf[64];
  http_response_t r = head_of(LD_HTTPD_MAX_HEAD);
  assert_int_equal(r.status, 200);
  assert_string_equal(r.body, "v" LD_VERSION);
  http_response_free(&r);
  r = head_of(LD_HTTPD_MAX_HEAD + 1);
  assert_int_equal(r.status, 431);
  assert_string_equal(r.body, LD_HTTPD_HEAD_TOO_LARGE_JSON);
  assert_string_equal(http_header(&r, "Content-Type", buf, sizeof buf), "application/json");
  assert_string_equal(http_header(&r, "Connection", buf, sizeof buf), "close");
  http_response_free(&r);
  r = head_of(4 * LD_HTTPD_MAX_HEAD); /* beyond what the server buffers: 431 as well */
  assert_int_equal(r.status, 431);
  http_response_free(&r);
  expect(&g_a, "GET", "/debug/v1/version", NULL, 200, "v" LD_VERSION);
}

/* ---- routing --------------------------------------------------------------------------------- */

static void unknown_paths_and_missing_groups(void **state) {
  (void)state;
  const char *bad = "Bad request initiated. Invalid path or method used.";
  expect(&g_a, "GET", "/nothing/here", NULL, 400, bad);
  expect(&g_a, "DELETE", "/health", NULL, 400, bad);
  expect(&g_a, "GET", "/relay/v1/subscriptions", NULL, 400, bad);
  expect(&g_c, "GET", "/admin/v1/peers", NULL, 404,
         "/admin endpoints are not available. Please check your configuration: --rest-admin=true");
  expect(&g_d, "GET", "/relay/v1/messages/" SHARD0_ENC, NULL, 404,
         "/relay endpoints are not available. Please check your configuration: --relay");
  /* store is always served (nwaku): without a store of its own or a store peer, 412 */
  expect(&g_a, "GET", "/store/v3/messages", NULL, 412,
         "No suitable service peer & no discovery method");
  expect(&g_a, "GET", "/filter/v2/messages/x", NULL, 404, "/filter endpoints are not available.");
  /* garbage on the socket does not disturb the server */
  http_response_t r;
  http_raw_on_loop(&g_loop, g_a.rest, "\x01\x02garbage\r\n\r\n", 13, &r);
  http_response_free(&r);
  expect(&g_a, "GET", "/debug/v1/version", NULL, 200, "v" LD_VERSION);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(debug_info_and_version),
      cmocka_unit_test(health_before_peers),
      cmocka_unit_test(admin_connects_and_lists_peers),
      cmocka_unit_test(admin_bad_requests),
      cmocka_unit_test(relay_messages_flow_between_nodes),
      cmocka_unit_test(relay_bad_requests),
      cmocka_unit_test(unsubscribing_forgets_the_topic),
      cmocka_unit_test(auto_messages_flow_between_nodes),
      cmocka_unit_test(auto_bad_requests),
      cmocka_unit_test(unknown_paths_and_missing_groups),
      cmocka_unit_test(long_paths_reach_their_handler),
      cmocka_unit_test(heads_up_to_64_kib_are_read),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
