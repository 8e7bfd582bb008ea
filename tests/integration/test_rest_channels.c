/* Reliable channels over REST on real nodes in one process over loopback. A and B are relay nodes
 * with autosharding over 8 shards (B dials A), each with a messaging client and a channel manager
 * attached to its REST server (channels/channels_rest.h). A channel created on both through
 * POST /channels/v1/channels carries a message POSTed to A: B's /channels/v1/events shows it
 * received (sender, payload), A's shows it sent and delivered under the answered request ID.
 * Then every error with its status and text (malformed JSON, missing fields, unknown channel,
 * oversized payload by the channel's limit and by the server's body cap, a duplicate channel),
 * OPTIONS, close, and the paths' 404 once the manager is detached. The program's --channels flag
 * mounts the same paths on a `logosdelivery` process. */
#include <setjmp.h>
#include <signal.h>
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
#include "channels/channels.h"
#include "channels/channels_rest.h"
#include "child_harness.h"
#include "http_client.h"
#include "messaging/messaging.h"
#include "node/node.h"
#include "rest/channels_routes.h"
#include "node_harness.h"
#include "rest_call.h"

#define STEP_MS 30000
#define JSON_HDR REST_JSON_HDR
#define CT "/rest/1/channel/proto"
#define SEGMENT_SIZE 256

typedef struct tnode {
  ld_node_t *node;
  ld_messaging_t *m;
  ld_channels_t *ch;
  uint16_t rest;
  char addr[LD_MULTIADDR_TEXT_MAX];
  bool freed;
} tnode_t;

static uv_loop_t g_loop;
static tnode_t g_a, g_b;

/* ---- nodes ----------------------------------------------------------------------------------- */

static void start(tnode_t *t, const char *static_node) {
  char err[256];
  ld_node_config_t *cfg = nh_config();
  assert_int_equal(ld_node_config_set_rest(cfg, true, "127.0.0.1", 0, 0, err, sizeof err), 0);
  assert_int_equal(ld_node_config_set_num_shards(cfg, 8, err, sizeof err), 0);
  if (static_node != NULL)
    assert_int_equal(ld_node_config_add_static_node(cfg, static_node, err, sizeof err), 0);
  t->node = nh_start(&g_loop, cfg);
  t->rest = ld_node_rest_port(t->node);
  assert_true(t->rest > 0);
  nh_addr_text(t->node, t->addr, sizeof t->addr);
  ld_messaging_config_t mc;
  ld_messaging_config_default(&mc);
  mc.reliability = false; /* no store peer here */
  int rc = 0;
  t->m = ld_messaging_new(t->node, &mc, &rc);
  assert_non_null(t->m);
  ld_channels_config_t cc;
  ld_channels_config_default(&cc);
  cc.segment_size = SEGMENT_SIZE; /* so that the channel's own payload limit is reachable */
  t->ch = ld_channels_new(&g_loop, t->m, &cc, &rc);
  assert_non_null(t->ch);
  assert_int_equal(ld_channels_rest_attach(t->ch, t->m), 0);
}

static void on_freed(void *ud) {
  ((tnode_t *)ud)->freed = true;
}

static void stop(tnode_t *t) {
  if (t->ch != NULL) {
    ld_channels_rest_detach(t->ch, t->m);
    ld_channels_free(t->ch);
  }
  ld_messaging_free(t->m, on_freed, t);
  NH_WAIT_FOR(&g_loop, t->freed, STEP_MS);
  nh_stop(&g_loop, t->node, STEP_MS);
}

/* ---- requests -------------------------------------------------------------------------------- */

static http_response_t call_port(uint16_t port, const char *method, const char *path,
                                 const char *body) {
  return rest_call_json(&g_loop, port, method, path, body);
}

/* Asserts the status and, when `text` is not NULL, the exact body. */
static void expect(const tnode_t *t, const char *method, const char *path, const char *body,
                   int status, const char *text) {
  rest_expect(&g_loop, t->rest, method, path, body ? JSON_HDR : NULL, body, status, text);
}

/* Asserts the status and that the body starts with `prefix`. */
static void expect_prefix(const tnode_t *t, const char *method, const char *path, const char *body,
                          int status, const char *prefix) {
  http_response_t r = call_port(t->rest, method, path, body);
  if (r.status != status || strncmp(r.body, prefix, strlen(prefix)) != 0)
    print_error("%s %s -> %d %s\n", method, path, r.status, r.body);
  assert_int_equal(r.status, status);
  assert_memory_equal(r.body, prefix, strlen(prefix));
  http_response_free(&r);
}

static json_t *get_json_status(const tnode_t *t, const char *method, const char *path,
                               const char *body, int status) {
  return rest_json_status(&g_loop, t->rest, method, path, body, status);
}

static void create_channel(const tnode_t *t, const char *id, const char *sender) {
  char body[256];
  snprintf(body, sizeof body, "{\"channelId\":\"%s\",\"contentTopic\":\"%s\",\"senderId\":\"%s\"}",
           id, CT, sender);
  json_t *j = get_json_status(t, "POST", "/channels/v1/channels", body, 200);
  assert_string_equal(rest_str(j, "channelId"), id);
  json_decref(j);
}

/* The first event of `kind` (and `request_id` when not NULL) in `all`, or NULL. */
static const json_t *find_event(const json_t *all, const char *kind, const char *request_id) {
  size_t i;
  const json_t *ev;
  json_array_foreach(all, i, ev) {
    if (strcmp(rest_str(ev, "eventType"), kind) != 0)
      continue;
    if (request_id == NULL || strcmp(rest_str(ev, "requestId"), request_id) == 0)
      return ev;
  }
  return NULL;
}

/* Polls /channels/v1/events on `t` until an event of `kind` is in `all` (the endpoint forgets
 * what it answered, so everything polled is kept in `all`). */
static const json_t *poll_for(const tnode_t *t, json_t *all, const char *kind,
                              const char *request_id) {
  uint64_t deadline = ld_now_ms() + STEP_MS;
  const json_t *ev = find_event(all, kind, request_id);
  while (ev == NULL && ld_now_ms() < deadline) {
    json_t *j = get_json_status(t, "GET", "/channels/v1/events", NULL, 200);
    assert_true(json_is_array(j));
    json_array_extend(all, j);
    json_decref(j);
    if ((ev = find_event(all, kind, request_id)) == NULL)
      nh_run_for(&g_loop, 100);
  }
  if (ev == NULL)
    print_error("no %s event in %s\n", kind, json_dumps(all, 0));
  assert_non_null(ev);
  return ev;
}

/* ---- setup ----------------------------------------------------------------------------------- */

static int setup(void **state) {
  (void)state;
  uv_loop_init(&g_loop);
  start(&g_a, NULL);
  start(&g_b, g_a.addr);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  stop(&g_a);
  stop(&g_b);
  uv_run(&g_loop, UV_RUN_NOWAIT);
  return 0;
}

/* ---- tests ----------------------------------------------------------------------------------- */

static void message_travels_with_its_events(void **state) {
  (void)state;
  create_channel(&g_a, "room", "alice");
  create_channel(&g_b, "room", "bob");
  json_t *j = get_json_status(&g_a, "GET", "/channels/v1/channels/room", NULL, 200);
  assert_string_equal(rest_str(j, "channelId"), "room");
  assert_true(json_is_true(json_object_get(j, "exists")));
  json_decref(j);

  /* "hello channel" */
  j = get_json_status(&g_a, "POST", "/channels/v1/channels/room/messages",
                      "{\"payload\":\"aGVsbG8gY2hhbm5lbA==\"}", 200);
  char request_id[LD_REST_CHANNEL_REQUEST_ID_MAX + 1];
  snprintf(request_id, sizeof request_id, "%s", rest_str(j, "requestId"));
  assert_int_equal(strlen(request_id), LD_CHANNEL_REQUEST_ID_LEN);
  json_decref(j);

  json_t *on_b = json_array();
  const json_t *got = poll_for(&g_b, on_b, "channel_message_received", NULL);
  assert_string_equal(rest_str(got, "channelId"), "room");
  assert_string_equal(rest_str(got, "senderId"), "alice");
  assert_string_equal(rest_str(got, "payload"), "aGVsbG8gY2hhbm5lbA==");
  assert_true(json_integer_value(json_object_get(got, "timestamp")) > 0);
  json_decref(on_b);

  json_t *on_a = json_array();
  const json_t *sent = poll_for(&g_a, on_a, "channel_message_sent", request_id);
  assert_string_equal(rest_str(sent, "channelId"), "room");
  assert_null(json_object_get(sent, "payload"));
  /* B acknowledges by its causal history / bloom filter (its sync messages) */
  poll_for(&g_a, on_a, "channel_message_delivered", request_id);
  assert_null(find_event(on_a, "channel_message_error", NULL));
  assert_null(find_event(on_a, "channel_message_delivery_error", NULL));
  json_decref(on_a);
  /* evict after poll: nothing new on B */
  j = get_json_status(&g_b, "GET", "/channels/v1/events", NULL, 200);
  assert_null(find_event(j, "channel_message_received", NULL));
  json_decref(j);
}

static void bad_requests_say_why(void **state) {
  (void)state;
  const char *create = "/channels/v1/channels";
  expect_prefix(&g_a, "POST", create, "{\"channelId\":", 400,
                "Invalid content body, could not decode");
  expect(&g_a, "POST", create, "[1]", 400,
         "Invalid content body, could not decode: expected a JSON object");
  expect(&g_a, "POST", create, "{\"channelId\":\"x\",\"contentTopic\":\"" CT "\"}", 400,
         "Invalid channel: field `senderId` is missing or not a string");
  expect(&g_a, "POST", create,
         "{\"channelId\":\" \",\"contentTopic\":\"" CT "\",\"senderId\":\"s\"}", 400,
         "Invalid channel: field `channelId` is empty");
  expect_prefix(&g_a, "POST", create,
                "{\"channelId\":\"x\",\"contentTopic\":\"no topic\",\"senderId\":\"s\"}", 400,
                "Invalid channel: ");
  expect(&g_a, "POST", create,
         "{\"channelId\":\"room\",\"contentTopic\":\"" CT "\",\"senderId\":\"s\"}", 409,
         "channel already exists: room");

  expect(&g_a, "GET", "/channels/v1/channels/nope", NULL, 404, "unknown channel: nope");
  expect(&g_a, "POST", "/channels/v1/channels/nope/messages", "{\"payload\":\"AA==\"}", 404,
         "unknown channel: nope");
  expect(&g_a, "DELETE", "/channels/v1/channels/nope", NULL, 404, "unknown channel: nope");

  const char *send = "/channels/v1/channels/room/messages";
  expect_prefix(&g_a, "POST", send, "{\"payload\"", 400, "Invalid content body, could not decode");
  expect(&g_a, "POST", send, "{}", 400,
         "Invalid message: field `payload` is missing or not a string");
  expect(&g_a, "POST", send, "{\"payload\":\"@@@\"}", 400,
         "Invalid message: incorrect base64 string in field `payload`");
  expect(&g_a, "POST", send, "{\"payload\":\"\"}", 400, "Invalid message: empty payload");
  expect(&g_a, "POST", send, "{\"payload\":\"AA==\",\"ephemeral\":1}", 400,
         "Invalid message: field `ephemeral` must be a boolean");

  /* over what the channel can segment: 256 segments of SEGMENT_SIZE bytes at most */
  size_t n = 256 * SEGMENT_SIZE;
  char *big = malloc(n / 3 * 4 + 64);
  assert_non_null(big);
  int used = snprintf(big, 32, "{\"payload\":\"");
  memset(big + used, 'A', n / 3 * 4);
  snprintf(big + used + n / 3 * 4, 32, "\"}");
  expect_prefix(&g_a, "POST", send, big, 413, "Payload too large: payload of ");
  free(big);
  /* an ephemeral message is never segmented */
  n = SEGMENT_SIZE * 3;
  big = malloc(n / 3 * 4 + 64);
  used = snprintf(big, 32, "{\"payload\":\"");
  memset(big + used, 'A', n / 3 * 4);
  snprintf(big + used + n / 3 * 4, 64, "\",\"ephemeral\":true}");
  expect_prefix(&g_a, "POST", send, big, 413, "Payload too large: payload of 768 bytes");
  free(big);
  /* over the server's body cap (base64 of 150 KiB plus 64 KiB) */
  n = 1024 * 1024;
  big = malloc(n + 64);
  used = snprintf(big, 32, "{\"payload\":\"");
  memset(big + used, 'A', n);
  snprintf(big + used + n, 32, "\"}");
  expect(&g_a, "POST", send, big, 413, NULL);
  free(big);
}

static void options_and_close(void **state) {
  (void)state;
  static const char *const paths[] = {"/channels/v1/channels", "/channels/v1/channels/room",
                                      "/channels/v1/channels/room/messages", "/channels/v1/events"};
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
    expect(&g_a, "OPTIONS", paths[i], NULL, 200, "OK");
  create_channel(&g_a, "closing", "alice");
  expect(&g_a, "DELETE", "/channels/v1/channels/closing", NULL, 200, "OK");
  expect(&g_a, "GET", "/channels/v1/channels/closing", NULL, 404, "unknown channel: closing");
  expect(&g_a, "DELETE", "/channels/v1/channels/closing", NULL, 404, "unknown channel: closing");
}

static void detached_paths_answer_404(void **state) {
  (void)state;
  ld_channels_rest_detach(g_b.ch, g_b.m);
  expect(&g_b, "GET", "/channels/v1/events", NULL, 404, LD_REST_CHANNELS_UNAVAILABLE);
  expect(&g_b, "POST", "/channels/v1/channels", "{}", 404, LD_REST_CHANNELS_UNAVAILABLE);
  expect(&g_b, "GET", "/channels/v1/channels/room", NULL, 404, LD_REST_CHANNELS_UNAVAILABLE);
  /* the manager keeps running; attached again, the paths come back */
  assert_true(ld_channels_exists(g_b.ch, "room"));
  assert_int_equal(ld_channels_rest_attach(g_b.ch, g_b.m), 0);
  assert_int_equal(ld_channels_rest_attach(g_b.ch, g_b.m), LD_ERR_EXISTS);
  expect(&g_b, "GET", "/channels/v1/channels/room", NULL, 200, NULL);
}

/* The port in "<marker><port>/" of the child's log, or 0. */
static uint16_t logged_port(const ch_child_t *c, const char *marker) {
  const char *bufs[2] = {c->stderr_buf, c->stdout_buf};
  for (int i = 0; i < 2; i++) {
    const char *p = strstr(bufs[i], marker);
    if (p != NULL && strchr(p + strlen(marker), '/') != NULL)
      return (uint16_t)atoi(p + strlen(marker));
  }
  return 0;
}

#define CREATE_BODY "{\"channelId\":\"c\",\"contentTopic\":\"" CT "\",\"senderId\":\"s\"}"

/* The node program: --channels with --rest mounts /channels/v1; without it the paths say how. */
static void node_program_mounts_with_flag(void **state) {
  (void)state;
  const char *bin = getenv("LD_BIN");
  if (bin == NULL)
    skip();
  for (int with = 0; with < 2; with++) {
    const char *args[] = {"--tcp-port=0",
                          "--listen-address=127.0.0.1",
                          "--rest=true",
                          "--rest-port=0",
                          "--num-shards-in-network=8",
                          with ? "--channels=true" : "--channels=false",
                          NULL};
    ch_child_t *c = ch_spawn(&g_loop, bin, args);
    NH_WAIT_FOR(&g_loop,
                strstr(c->stderr_buf, "Node setup complete") != NULL ||
                    strstr(c->stdout_buf, "Node setup complete") != NULL || c->exited,
                STEP_MS);
    uint16_t rest = logged_port(c, "REST service started at http://127.0.0.1:");
    assert_true(rest > 0);
    http_response_t r = call_port(rest, "POST", "/channels/v1/channels", CREATE_BODY);
    if (with) {
      assert_int_equal(r.status, 200);
      http_response_free(&r);
      r = call_port(rest, "GET", "/channels/v1/channels/c", NULL);
      assert_int_equal(r.status, 200);
    } else {
      assert_int_equal(r.status, 404);
      assert_string_equal(r.body, LD_REST_CHANNELS_UNAVAILABLE);
    }
    http_response_free(&r);
    assert_int_equal(uv_process_kill(&c->proc, SIGTERM), 0);
    ch_expect_success(c, STEP_MS);
    free(c);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(message_travels_with_its_events),
      cmocka_unit_test(bad_requests_say_why),
      cmocka_unit_test(options_and_close),
      cmocka_unit_test(detached_paths_answer_404),
      cmocka_unit_test(node_program_mounts_with_flag),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
