/* The Messaging API over REST on real nodes in one process over loopback. A and B are relay
 * nodes with autosharding over 8 shards (B dials A), each with a messaging client; K runs the
 * kernel only. A message POSTed to A's /messaging/v1/messages reaches B's received events and
 * B's records, A's send timeline shows it propagated, and both records answer by request ID and
 * hash; then the paging of /messages, the draft's subscription paths, every 400 and 404 with its
 * text, OPTIONS, /health's connectionStatus, evict-after-poll, and detach / attach. */
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
#include "http_client.h"
#include "messaging/messaging.h"
#include "messaging/messaging_rest.h"
#include "node/node.h"
#include "rest/server_groups.h"
#include "waku/core/sharding.h"
#include "node_harness.h"
#include "rest_call.h"

#define STEP_MS 20000
#define JSON_HDR REST_JSON_HDR
#define CT "/rest/1/chat/proto"
#define CT_ENC "%2Frest%2F1%2Fchat%2Fproto"
#define CT2 "/rest/1/other/proto"

typedef struct tnode {
  ld_node_t *node;
  ld_messaging_t *m;
  uint16_t rest;
  char addr[LD_MULTIADDR_TEXT_MAX];
  bool freed;
} tnode_t;

static uv_loop_t g_loop;
static tnode_t g_a, g_b, g_k;
static char g_request_id[LD_MESSAGING_REQUEST_ID_LEN + 1];
static char g_hash[LD_WAKU_HASH_HEX_LEN + 1];

/* ---- nodes ----------------------------------------------------------------------------------- */

static void start(tnode_t *t, int num_shards, const char *static_node, bool messaging) {
  char err[256];
  ld_node_config_t *cfg = nh_config();
  assert_int_equal(ld_node_config_set_rest(cfg, true, "127.0.0.1", 0, 0, err, sizeof err), 0);
  assert_int_equal(ld_node_config_set_num_shards(cfg, num_shards, err, sizeof err), 0);
  if (static_node != NULL)
    assert_int_equal(ld_node_config_add_static_node(cfg, static_node, err, sizeof err), 0);
  t->node = nh_start(&g_loop, cfg);
  t->rest = ld_node_rest_port(t->node);
  assert_true(t->rest > 0);
  nh_addr_text(t->node, t->addr, sizeof t->addr);
  if (!messaging)
    return;
  ld_messaging_config_t mc;
  ld_messaging_config_default(&mc);
  mc.reliability = false; /* no store peer here */
  int rc = 0;
  t->m = ld_messaging_new(t->node, &mc, &rc);
  assert_non_null(t->m);
}

static void on_freed(void *ud) {
  ((tnode_t *)ud)->freed = true;
}

static void stop(tnode_t *t) {
  if (t->m != NULL) {
    ld_messaging_free(t->m, on_freed, t);
    NH_WAIT_FOR(&g_loop, t->freed, STEP_MS);
  }
  nh_stop(&g_loop, t->node, STEP_MS);
}

/* ---- requests -------------------------------------------------------------------------------- */

static http_response_t call(const tnode_t *t, const char *method, const char *path,
                            const char *body) {
  return rest_call_json(&g_loop, t->rest, method, path, body);
}

/* Asserts the status and, when `text` is not NULL, the exact body. */
static void expect_h(const tnode_t *t, const char *method, const char *path, const char *headers,
                     const char *body, int status, const char *text) {
  rest_expect(&g_loop, t->rest, method, path, headers, body, status, text);
}

static void expect(const tnode_t *t, const char *method, const char *path, const char *body,
                   int status, const char *text) {
  expect_h(t, method, path, body ? JSON_HDR : NULL, body, status, text);
}

/* The answer's JSON, after checking the status and the media type. */
static json_t *get_json_status(const tnode_t *t, const char *method, const char *path,
                               const char *body, int status) {
  return rest_json_status(&g_loop, t->rest, method, path, body, status);
}

static json_t *get_json(const tnode_t *t, const char *path) {
  return get_json_status(t, "GET", path, NULL, 200);
}

/* Asserts a draft error answer {"error": text}. */
static void expect_error(const tnode_t *t, const char *method, const char *path, const char *body,
                         int status, const char *text) {
  json_t *j = get_json_status(t, method, path, body, status);
  assert_int_equal(json_object_size(j), 1);
  assert_string_equal(json_string_value(json_object_get(j, "error")), text);
  json_decref(j);
}

/* Sends `payload_b64` on `topic` through A's REST; returns the request ID (static storage). */
static const char *send_via_rest(const char *topic, const char *payload_b64) {
  static char id[64];
  char body[256];
  snprintf(body, sizeof body, "{\"payload\":\"%s\",\"contentTopic\":\"%s\"}", payload_b64, topic);
  json_t *j = get_json_status(&g_a, "POST", "/messaging/v1/messages", body, 200);
  snprintf(id, sizeof id, "%s", rest_str(j, "requestId"));
  assert_int_equal(json_object_size(j), 1);
  json_decref(j);
  assert_int_equal(strlen(id), LD_MESSAGING_REQUEST_ID_LEN);
  assert_int_equal(strspn(id, "0123456789abcdef"), LD_MESSAGING_REQUEST_ID_LEN);
  return id;
}

/* Polls GET `path` on `t` (a JSON array) until `enough(list)` or the step deadline; returns the
 * concatenation of everything polled (the endpoints forget what they answered). */
static json_t *poll_until(const tnode_t *t, const char *path, size_t want) {
  json_t *all = json_array();
  uint64_t deadline = ld_now_ms() + STEP_MS;
  while (json_array_size(all) < want && ld_now_ms() < deadline) {
    json_t *j = get_json(t, path);
    assert_true(json_is_array(j));
    json_array_extend(all, j);
    json_decref(j);
    if (json_array_size(all) < want)
      nh_run_for(&g_loop, 100);
  }
  return all;
}

/* ---- setup ----------------------------------------------------------------------------------- */

static int setup(void **state) {
  (void)state;
  uv_loop_init(&g_loop);
  start(&g_a, 8, NULL, true);
  start(&g_b, 8, g_a.addr, true);
  start(&g_k, 0, NULL, false);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  stop(&g_a);
  stop(&g_b);
  stop(&g_k);
  uv_run(&g_loop, UV_RUN_NOWAIT);
  return 0;
}

/* ---- tests ----------------------------------------------------------------------------------- */

static void kernel_only_node_answers_404(void **state) {
  (void)state;
  static const char *const paths[] = {
      "/messaging/v1/events/received", "/messaging/v1/events/send", "/messaging/v1/messages",
      "/message?requestId=x",          "/messages?contentTopic=x",  "/subscriptions",
  };
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
    expect(&g_k, "GET", paths[i], NULL, 404, LD_REST_MESSAGING_UNAVAILABLE);
  expect(&g_k, "POST", "/messaging/v1/messages", "{}", 404, LD_REST_MESSAGING_UNAVAILABLE);
  expect(&g_k, "POST", "/subscribe", "{}", 404, LD_REST_MESSAGING_UNAVAILABLE);
  expect(&g_k, "OPTIONS", "/messaging/v1/subscriptions", NULL, 404, LD_REST_MESSAGING_UNAVAILABLE);
  json_t *h = get_json(&g_k, "/health");
  assert_null(json_object_get(h, "connectionStatus"));
  assert_string_equal(rest_str(h, "nodeHealth"), "READY");
  json_decref(h);
}

static void static_sharding_refuses_with_503(void **state) {
  (void)state;
  ld_messaging_config_t mc;
  ld_messaging_config_default(&mc);
  mc.reliability = false;
  int rc = 0;
  g_k.m = ld_messaging_new(g_k.node, &mc, &rc);
  assert_non_null(g_k.m);
  static const char *const text = "autosharding is not configured: content-topic subscriptions "
                                  "and sends need --preset or --num-shards-in-network";
  expect(&g_k, "POST", "/messaging/v1/subscriptions", "[\"" CT "\"]", 503, text);
  expect(&g_k, "DELETE", "/messaging/v1/subscriptions", "[\"" CT "\"]", 503, text);
  expect(&g_k, "POST", "/messaging/v1/messages",
         "{\"payload\":\"AA==\",\"contentTopic\":\"" CT "\"}", 503, text);
  expect_error(&g_k, "POST", "/subscribe", "{\"contentTopic\":\"" CT "\"}", 503, text);
  /* the topic is checked first */
  expect(&g_k, "POST", "/messaging/v1/subscriptions", "[\"/2/a/b/c/d\"]", 400,
         "unsupported content topic generation in: '/2/a/b/c/d': only generation 0 is supported");
  json_t *h = get_json(&g_k, "/health");
  assert_non_null(json_object_get(h, "connectionStatus"));
  json_decref(h);
  /* freeing the client takes its paths away */
  ld_messaging_free(g_k.m, on_freed, &g_k);
  g_k.m = NULL;
  NH_WAIT_FOR(&g_loop, g_k.freed, STEP_MS);
  expect(&g_k, "GET", "/messaging/v1/events/received", NULL, 404, LD_REST_MESSAGING_UNAVAILABLE);
  h = get_json(&g_k, "/health");
  assert_null(json_object_get(h, "connectionStatus"));
  json_decref(h);
}

static void health_reports_connection_status(void **state) {
  (void)state;
  http_response_t r = call(&g_a, "GET", "/health", NULL);
  assert_int_equal(r.status, 200);
  const char *status = ld_connection_status_name(ld_messaging_connection_status(g_a.m));
  char expected[128];
  snprintf(expected, sizeof expected, "{\"nodeHealth\":\"READY\",\"connectionStatus\":\"%s\",",
           status);
  if (strncmp(r.body, expected, strlen(expected)) != 0)
    print_error("%s\n", r.body);
  assert_true(strncmp(r.body, expected, strlen(expected)) == 0);
  assert_non_null(strstr(r.body, "\"protocolsHealth\":[{\"Relay\":"));
  http_response_free(&r);
}

static void options_answer_ok(void **state) {
  (void)state;
  static const char *const paths[] = {
      "/messaging/v1/subscriptions",
      "/messaging/v1/messages",
      "/messaging/v1/events/send",
      "/messaging/v1/events/send/abc",
      "/messaging/v1/events/received",
      "/message",
      "/messages",
      "/subscribe",
      "/unsubscribe",
      "/subscriptions",
  };
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
    expect(&g_a, "OPTIONS", paths[i], NULL, 200, "OK");
}

static void message_travels_from_a_to_b(void **state) {
  (void)state;
  expect(&g_b, "POST", "/messaging/v1/subscriptions", "[\"" CT "\"]", 200, "OK");
  /* nothing received yet, and polls answer [] */
  json_t *none = get_json(&g_b, "/messaging/v1/events/received");
  assert_int_equal(json_array_size(none), 0);
  json_decref(none);
  snprintf(g_request_id, sizeof g_request_id, "%s", send_via_rest(CT, "aGVsbG8gQg=="));
  json_t *got = poll_until(&g_b, "/messaging/v1/events/received", 1);
  assert_int_equal(json_array_size(got), 1);
  json_t *rec = json_array_get(got, 0);
  snprintf(g_hash, sizeof g_hash, "%s", rest_str(rec, "messageHash"));
  assert_int_equal(strlen(g_hash), LD_WAKU_HASH_HEX_LEN);
  assert_true(strncmp(g_hash, "0x", 2) == 0);
  json_t *msg = json_object_get(rec, "message");
  assert_string_equal(rest_str(msg, "payload"), "aGVsbG8gQg==");
  assert_string_equal(rest_str(msg, "contentTopic"), CT);
  assert_int_equal(json_integer_value(json_object_get(msg, "version")), 0);
  assert_true(json_integer_value(json_object_get(msg, "timestamp")) > 0);
  assert_true(json_is_false(json_object_get(msg, "ephemeral")));
  json_decref(got);
  /* evicted after the poll */
  none = get_json(&g_b, "/messaging/v1/events/received");
  assert_int_equal(json_array_size(none), 0);
  json_decref(none);

  /* A's send timeline: propagated, with the hash B saw */
  char path[128];
  snprintf(path, sizeof path, "/messaging/v1/events/send/%s", g_request_id);
  bool propagated = false;
  uint64_t deadline = ld_now_ms() + STEP_MS;
  while (!propagated && ld_now_ms() < deadline) {
    http_response_t r = call(&g_a, "GET", path, NULL);
    if (r.status == 200) {
      json_t *st = json_loads(r.body, 0, NULL);
      assert_non_null(st);
      assert_string_equal(rest_str(st, "requestId"), g_request_id);
      json_t *events = json_object_get(st, "events");
      for (size_t i = 0; i < json_array_size(events); i++) {
        json_t *ev = json_array_get(events, i);
        assert_true(json_integer_value(json_object_get(ev, "timestamp")) > 0);
        if (strcmp(rest_str(ev, "kind"), "propagated") == 0) {
          assert_string_equal(rest_str(ev, "messageHash"), g_hash);
          propagated = true;
        }
        assert_string_not_equal(rest_str(ev, "kind"), "error");
      }
      json_decref(st);
    } else {
      char text[128];
      snprintf(text, sizeof text, "No send events for requestId: %s", g_request_id);
      assert_int_equal(r.status, 404);
      assert_string_equal(r.body, text);
      nh_run_for(&g_loop, 100);
    }
    http_response_free(&r);
  }
  assert_true(propagated);
}

static void records_answer_by_request_id_and_hash(void **state) {
  (void)state;
  char path[160];
  snprintf(path, sizeof path, "/message?requestId=%s", g_request_id);
  json_t *own = get_json(&g_a, path);
  assert_string_equal(rest_str(own, "requestId"), g_request_id);
  assert_true(json_is_boolean(json_object_get(own, "sending")));
  assert_true(json_is_boolean(json_object_get(own, "sent")));
  assert_true(json_is_boolean(json_object_get(own, "stored")));
  assert_true(json_is_boolean(json_object_get(own, "received")));
  assert_null(json_object_get(own, "error"));
  assert_string_equal(rest_str(own, "messageHash"), g_hash);
  json_t *msg = json_object_get(own, "message");
  assert_string_equal(rest_str(msg, "payload"), "aGVsbG8gQg==");
  assert_string_equal(rest_str(msg, "contentTopic"), CT);
  assert_null(json_object_get(msg, "meta")); /* unset fields are left out */
  assert_null(json_object_get(msg, "proof"));
  assert_null(json_object_get(msg, "version"));
  json_decref(own);

  snprintf(path, sizeof path, "/message?hash=%s", g_hash);
  json_t *by_hash = get_json(&g_a, path);
  assert_string_equal(rest_str(by_hash, "requestId"), g_request_id);
  json_decref(by_hash);
  /* B's record: received through its subscription, no send fields */
  json_t *theirs = get_json(&g_b, path);
  assert_true(json_is_true(json_object_get(theirs, "received")));
  assert_null(json_object_get(theirs, "requestId"));
  assert_null(json_object_get(theirs, "sending"));
  assert_null(json_object_get(theirs, "sent"));
  assert_string_equal(rest_str(json_object_get(theirs, "message"), "payload"), "aGVsbG8gQg==");
  json_decref(theirs);
  /* without the 0x prefix, upper case */
  char upper[LD_WAKU_HASH_HEX_LEN + 1];
  for (size_t i = 2; i <= LD_WAKU_HASH_HEX_LEN; i++)
    upper[i - 2] = (char)(g_hash[i] >= 'a' && g_hash[i] <= 'f' ? g_hash[i] - 32 : g_hash[i]);
  snprintf(path, sizeof path, "/message?hash=%s", upper);
  json_decref(get_json(&g_b, path));

  json_t *list = get_json(&g_b, "/messages?contentTopic=" CT_ENC);
  assert_int_equal(json_array_size(list), 1);
  assert_string_equal(rest_str(json_array_get(list, 0), "messageHash"), g_hash);
  json_decref(list);
}

static void paging_follows_skip_and_take(void **state) {
  (void)state;
  char ids[3][LD_MESSAGING_REQUEST_ID_LEN + 1];
  static const char *const payloads[] = {"bTE=", "bTI=", "bTM="};
  for (size_t i = 0; i < 3; i++)
    snprintf(ids[i], sizeof ids[i], "%s", send_via_rest(CT, payloads[i]));
  json_t *all = NULL;
  uint64_t deadline = ld_now_ms() + STEP_MS;
  while (ld_now_ms() < deadline) {
    all = get_json(&g_b, "/messages?contentTopic=" CT_ENC);
    if (json_array_size(all) == 4)
      break;
    json_decref(all);
    all = NULL;
    nh_run_for(&g_loop, 100);
  }
  assert_non_null(all);
  json_t *page = get_json(&g_b, "/messages?contentTopic=" CT_ENC "&skip=1&take=2");
  assert_int_equal(json_array_size(page), 2);
  assert_true(json_equal(json_array_get(page, 0), json_array_get(all, 1)));
  assert_true(json_equal(json_array_get(page, 1), json_array_get(all, 2)));
  json_decref(page);
  page = get_json(&g_b, "/messages?contentTopic=" CT_ENC "&skip=3");
  assert_int_equal(json_array_size(page), 1);
  assert_true(json_equal(json_array_get(page, 0), json_array_get(all, 3)));
  json_decref(page);
  page = get_json(&g_b, "/messages?take=100&contentTopic=" CT_ENC);
  assert_true(json_equal(page, all));
  json_decref(page);
  static const char *const empty[] = {
      "/messages?contentTopic=" CT_ENC "&skip=4",
      "/messages?contentTopic=" CT_ENC "&skip=1000",
      "/messages?contentTopic=" CT_ENC "&take=0",
  };
  for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++) {
    page = get_json(&g_b, empty[i]);
    assert_true(json_is_array(page));
    assert_int_equal(json_array_size(page), 0);
    json_decref(page);
  }
  json_decref(all);
  expect_error(&g_b, "GET", "/messages?contentTopic=" CT_ENC "&skip=abc", NULL, 400,
               "Invalid skip 'abc': expected a number from 0 to 1000000000");
  expect_error(&g_b, "GET", "/messages?contentTopic=" CT_ENC "&take=-1", NULL, 400,
               "Invalid take '-1': expected a number from 0 to 1000000000");
  expect_error(&g_b, "GET", "/messages?contentTopic=%2Fnone%2F1%2Fx%2Fproto", NULL, 404,
               "No messages found for contentTopic '/none/1/x/proto'");
  expect_error(&g_b, "GET", "/messages", NULL, 400,
               "Missing query parameter: contentTopic or subscriptionId");
  /* A's send timelines, all at once: each request propagated once, then forgotten */
  bool seen[3] = {false, false, false};
  uint64_t until = ld_now_ms() + STEP_MS;
  while (!(seen[0] && seen[1] && seen[2]) && ld_now_ms() < until) {
    json_t *sends = get_json(&g_a, "/messaging/v1/events/send");
    for (size_t i = 0; i < json_array_size(sends); i++) {
      json_t *st = json_array_get(sends, i);
      json_t *events = json_object_get(st, "events");
      for (size_t k = 0; k < 3; k++)
        for (size_t e = 0;
             strcmp(rest_str(st, "requestId"), ids[k]) == 0 && e < json_array_size(events); e++)
          if (strcmp(rest_str(json_array_get(events, e), "kind"), "propagated") == 0) {
            assert_false(seen[k]);
            seen[k] = true;
          }
    }
    json_decref(sends);
    nh_run_for(&g_loop, 50);
  }
  assert_true(seen[0] && seen[1] && seen[2]);
  json_t *again = get_json(&g_a, "/messaging/v1/events/send");
  for (size_t i = 0; i < json_array_size(again); i++) {
    json_t *events = json_object_get(json_array_get(again, i), "events");
    for (size_t e = 0; e < json_array_size(events); e++)
      assert_string_not_equal(rest_str(json_array_get(events, e), "kind"), "propagated");
  }
  json_decref(again);
}

static void draft_subscription_paths(void **state) {
  (void)state;
  json_t *j = get_json_status(&g_b, "POST", "/subscribe", "{\"contentTopic\":\"" CT2 "\"}", 200);
  char id[64];
  snprintf(id, sizeof id, "%s", rest_str(j, "subscriptionId"));
  json_decref(j);
  char expected[160];
  assert_true(ld_messaging_subscription_id(g_b.m, CT2, expected));
  assert_string_equal(id, expected);
  char ct_id[64];
  assert_true(ld_messaging_subscription_id(g_b.m, CT, ct_id));
  /* with its own shard's pubsub topic it is the same subscription; another shard is refused */
  ld_relay_shard_t shard;
  assert_int_equal(ld_autoshard(CT2, strlen(CT2), 8, 0, &shard, NULL), 0);
  char body[256], text[256];
  snprintf(body, sizeof body, "{\"pubsubTopic\":\"/waku/2/rs/0/%u\",\"contentTopic\":\"" CT2 "\"}",
           shard.shard_id);
  j = get_json_status(&g_b, "POST", "/subscribe", body, 200);
  assert_string_equal(rest_str(j, "subscriptionId"), id);
  json_decref(j);
  unsigned other = (shard.shard_id + 1u) % 8u;
  snprintf(body, sizeof body, "{\"pubsubTopic\":\"/waku/2/rs/0/%u\",\"contentTopic\":\"" CT2 "\"}",
           other);
  snprintf(text, sizeof text,
           "contentTopic '" CT2 "' belongs to shard %u, not to '/waku/2/rs/0/%u'", shard.shard_id,
           other);
  expect_error(&g_b, "POST", "/subscribe", body, 400, text);
  json_t *subs = get_json(&g_b, "/subscriptions");
  bool has_ct = false, has_ct2 = false;
  for (size_t i = 0; i < json_array_size(subs); i++) {
    const char *s = json_string_value(json_array_get(subs, i));
    has_ct |= strcmp(s, ct_id) == 0;
    has_ct2 |= strcmp(s, id) == 0;
  }
  assert_true(has_ct && has_ct2);
  json_decref(subs);
  char path[128];
  snprintf(path, sizeof path, "/messages?subscriptionId=%s", id);
  snprintf(expected, sizeof expected, "No messages found for subscriptionId '%s'", id);
  expect_error(&g_b, "GET", path, NULL, 404, expected);
  snprintf(path, sizeof path, "/messages?subscriptionId=%s&take=1", ct_id);
  json_t *page = get_json(&g_b, path);
  assert_int_equal(json_array_size(page), 1);
  assert_string_equal(rest_str(json_array_get(page, 0), "messageHash"), g_hash);
  json_decref(page);

  expect_error(&g_b, "POST", "/subscribe",
               "{\"pubsubTopic\":\"/waku/2/rs/5/0\",\"contentTopic\":\"" CT2 "\"}", 404,
               "Failed to subscribe: clusterId 5 is not supported.");
  expect_error(&g_b, "POST", "/subscribe", "{\"pubsubTopic\":\"/waku/2/rs/0/0\"}", 400,
               "Field `contentTopic` is missing or empty");
  expect_error(
      &g_b, "POST", "/subscribe", "{\"contentTopic\":\"nope\"}", 400,
      "invalid content topic: 'nope': invalid format: content-topic must start with slash");
  snprintf(body, sizeof body, "{\"subscriptionId\":\"%s\"}", id);
  j = get_json_status(&g_b, "POST", "/unsubscribe", body, 200);
  assert_string_equal(rest_str(j, "status"), "ok");
  json_decref(j);
  assert_false(ld_messaging_subscribed(g_b.m, CT2));
  subs = get_json(&g_b, "/subscriptions");
  for (size_t i = 0; i < json_array_size(subs); i++)
    assert_string_not_equal(json_string_value(json_array_get(subs, i)), id);
  json_decref(subs);
  /* an unknown ID is ignored */
  j = get_json_status(&g_b, "POST", "/unsubscribe", "{\"subscriptionId\":\"unknown\"}", 200);
  json_decref(j);
  expect_error(&g_b, "POST", "/unsubscribe", "{}", 400,
               "Field `subscriptionId` is missing or empty");
  expect_error(&g_b, "POST", "/subscribe", NULL, 400, "Missing content body");
}

static void bad_requests_say_why(void **state) {
  (void)state;
  static const char *form = "Content-Type: application/x-www-form-urlencoded\r\n";
  expect(&g_a, "POST", "/messaging/v1/messages", NULL, 400, "Missing content body");
  expect_h(&g_a, "POST", "/messaging/v1/messages", form, "{}", 400,
           "Wrong Content-Type, expected application/json or text/plain");
  expect_h(&g_a, "POST", "/messaging/v1/subscriptions", form, "[]", 400,
           "Wrong Content-Type, expected application/json or text/plain");
  http_response_t r = call(&g_a, "POST", "/messaging/v1/messages", "{\"payload\":");
  assert_int_equal(r.status, 400);
  assert_true(strncmp(r.body, "Invalid content body, could not decode: ", 40) == 0);
  http_response_free(&r);
  expect(&g_a, "POST", "/messaging/v1/messages", "{\"contentTopic\":\"" CT "\"}", 400,
         "Invalid content body, could not decode: Field `payload` is missing or empty");
  expect(&g_a, "POST", "/messaging/v1/messages", "{\"payload\":\"\",\"contentTopic\":\"" CT "\"}",
         400, "Invalid content body, could not decode: Field `payload` is missing or empty");
  expect(&g_a, "POST", "/messaging/v1/messages", "{\"payload\":\"AA==\"}", 400,
         "Invalid content body, could not decode: Field `contentTopic` is missing or empty");
  expect(&g_a, "POST", "/messaging/v1/messages",
         "{\"payload\":\"AA==\",\"contentTopic\":\"" CT "\",\"ephemeral\":1}", 400,
         "Invalid content body, could not decode: Field `ephemeral` must be a boolean");
  expect(&g_a, "POST", "/messaging/v1/messages",
         "{\"payload\":\"!!!!\",\"contentTopic\":\"" CT "\"}", 400,
         "Invalid message: Incorrect base64 string in field `payload`");
  expect(&g_a, "POST", "/messaging/v1/messages",
         "{\"payload\":\"AA==\",\"contentTopic\":\"" CT "\",\"meta\":\"@\"}", 400,
         "Invalid message: Incorrect base64 string in field `meta`");
  expect(&g_a, "POST", "/messaging/v1/messages", "{\"payload\":\"AA==\",\"contentTopic\":\"/a/b\"}",
         400,
         "Invalid message: invalid content topic: '/a/b': invalid format: Invalid content topic "
         "structure. Expected either /<application>/<version>/<topic-name>/<encoding> or "
         "/<gen>/<application>/<version>/<topic-name>/<encoding>");
  expect(&g_a, "POST", "/messaging/v1/subscriptions", "{\"topics\":[]}", 400,
         "Invalid content body, could not decode: Expected a JSON array of strings");
  expect(&g_a, "POST", "/messaging/v1/subscriptions", "[\"" CT "\",\"x\"]", 400,
         "invalid content topic: 'x': invalid format: content-topic must start with slash");
  expect(&g_a, "DELETE", "/messaging/v1/subscriptions", "[\"/rest/1/x/proto/extra/more\"]", 400,
         NULL);
  r = call(&g_a, "DELETE", "/messaging/v1/subscriptions", "[\"/never/1/subscribed/proto\"]");
  assert_int_equal(r.status, 500);
  assert_true(strncmp(r.body, "Unsubscribe failed: ", 20) == 0);
  http_response_free(&r);
  expect(&g_a, "GET", "/messaging/v1/events/send/0123456789abcdef0123", NULL, 404,
         "No send events for requestId: 0123456789abcdef0123");
  expect(&g_a, "GET",
         "/messaging/v1/events/send/"
         "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0",
         NULL, 400, "Invalid requestId");
  expect(&g_a, "GET", "/messaging/v1/events/send/a%20b", NULL, 400, "Invalid requestId");
  expect_error(&g_a, "GET", "/message?requestId=nope", NULL, 404,
               "Message with requestId 'nope' not found");
  const char *zero = "0x0000000000000000000000000000000000000000000000000000000000000000";
  char path[128], text[128];
  snprintf(path, sizeof path, "/message?hash=%s", zero);
  snprintf(text, sizeof text, "Message with hash '%s' not found", zero);
  expect_error(&g_a, "GET", path, NULL, 404, text);
  expect_error(&g_a, "GET", "/message?hash=zz", NULL, 400, "Invalid hash 'zz'");
  expect_error(&g_a, "GET", "/message", NULL, 400, "Missing query parameter: requestId or hash");
  /* methods a path does not have are the server's usual 400 */
  expect(&g_a, "GET", "/messaging/v1/messages", NULL, 400,
         "Bad request initiated. Invalid path or method used.");
}

static void detach_and_attach_again(void **state) {
  (void)state;
  ld_messaging_rest_detach(g_b.m);
  expect(&g_b, "GET", "/messaging/v1/events/received", NULL, 404, LD_REST_MESSAGING_UNAVAILABLE);
  expect(&g_b, "GET", "/subscriptions", NULL, 404, LD_REST_MESSAGING_UNAVAILABLE);
  json_t *h = get_json(&g_b, "/health");
  assert_null(json_object_get(h, "connectionStatus"));
  json_decref(h);
  ld_messaging_rest_detach(g_b.m); /* a second detach is a no-op */
  assert_int_equal(ld_messaging_rest_attach(g_b.m), 0);
  assert_int_equal(ld_messaging_rest_attach(g_b.m), LD_ERR_EXISTS);
  json_t *none = get_json(&g_b, "/messaging/v1/events/received");
  assert_int_equal(json_array_size(none), 0);
  json_decref(none);
  h = get_json(&g_b, "/health");
  assert_non_null(json_object_get(h, "connectionStatus"));
  json_decref(h);
  /* the records live in the client: still there */
  json_t *list = get_json(&g_b, "/messages?contentTopic=" CT_ENC);
  assert_int_equal(json_array_size(list), 4);
  json_decref(list);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(kernel_only_node_answers_404),
      cmocka_unit_test(static_sharding_refuses_with_503),
      cmocka_unit_test(health_reports_connection_status),
      cmocka_unit_test(options_answer_ok),
      cmocka_unit_test(message_travels_from_a_to_b),
      cmocka_unit_test(records_answer_by_request_id_and_hash),
      cmocka_unit_test(paging_follows_skip_and_take),
      cmocka_unit_test(draft_subscription_paths),
      cmocka_unit_test(bad_requests_say_why),
      cmocka_unit_test(detach_and_attach_again),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
