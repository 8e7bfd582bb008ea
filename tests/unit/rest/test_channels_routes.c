/* The channel paths of the REST server (rest/channels_routes.h) on a real server over loopback,
 * with an ops table whose answers the test chooses: each channel-layer error becomes its status
 * and text, the event cache keeps its bounds (count and payload bytes, the oldest dropped first,
 * a payload too large alone refused) and forgets what a poll handed over, and detach brings the
 * 404 back. The real channel layer behind these paths is exercised by
 * tests/integration/test_rest_channels.c. */
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
#include "rest/channels_routes.h"
#include "rest_call.h"
#include "switch_harness.h"

#define JSON_HDR REST_JSON_HDR

static uv_loop_t g_loop;
static ld_switch_t *g_sw;
static ld_rest_server_t *g_srv;
static uint16_t g_port;
static ld_rest_channels_t *g_rc;
static int g_answer; /* what create / send / close return */

static int op_create(void *ud, const char *id, const char *topic, const char *sender, char *why,
                     size_t cap) {
  (void)ud, (void)id, (void)topic, (void)sender;
  snprintf(why, cap, "%s", g_answer != 0 ? "the state store is read-only" : "");
  return g_answer;
}

static bool op_exists(void *ud, const char *id) {
  (void)ud;
  return strcmp(id, "room") == 0;
}

static int op_send(void *ud, const char *id, const uint8_t *payload, size_t len, bool ephemeral,
                   char request_id[LD_REST_CHANNEL_REQUEST_ID_MAX + 1], char *why, size_t cap) {
  (void)ud, (void)id, (void)payload, (void)len, (void)ephemeral;
  snprintf(request_id, LD_REST_CHANNEL_REQUEST_ID_MAX + 1, "req-1");
  snprintf(why, cap, "%s", g_answer != 0 ? "too many messages in flight" : "");
  return g_answer;
}

static int op_close(void *ud, const char *id, char *why, size_t cap) {
  (void)ud;
  snprintf(why, cap, "unknown channel: %s", id);
  return LD_ERR_NOT_FOUND;
}

static size_t no_addrs(void *ud, ld_multiaddr_t *out, size_t max) {
  (void)ud, (void)out, (void)max;
  return 0;
}

static void on_closed(void *ud) {
  *(bool *)ud = true;
}

static int setup(void **state) {
  (void)state;
  uv_loop_init(&g_loop);
  g_sw = sh_switch_new(&g_loop, NULL);
  ld_rest_context_t ctx;
  memset(&ctx, 0, sizeof ctx);
  ctx.loop = &g_loop;
  ctx.sw = g_sw;
  ctx.listen_addrs = no_addrs;
  ld_rest_config_t cfg;
  ld_rest_config_default(&cfg);
  cfg.port = 0;
  assert_int_equal(ld_rest_server_new(&ctx, &cfg, &g_srv), 0);
  g_port = ld_rest_server_port(g_srv);
  ld_rest_channels_ops_t ops = {op_create, op_exists, op_send, op_close, NULL};
  assert_int_equal(ld_rest_channels_attach(g_srv, &ops, &g_rc), 0);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  ld_rest_channels_detach(g_rc);
  bool closed = false;
  ld_rest_server_close(g_srv, on_closed, &closed);
  while (!closed)
    uv_run(&g_loop, UV_RUN_ONCE);
  sh_switch_close(g_sw, &g_loop);
  uv_run(&g_loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&g_loop), 0);
  return 0;
}

static void expect(const char *method, const char *path, const char *body, int status,
                   const char *text) {
  rest_expect(&g_loop, g_port, method, path, body ? JSON_HDR : NULL, body, status, text);
}

static json_t *poll_events(void) {
  http_response_t r;
  assert_int_equal(
      http_request_on_loop(&g_loop, g_port, "GET", "/channels/v1/events", NULL, NULL, 0, &r), 0);
  assert_int_equal(r.status, 200);
  json_error_t err;
  json_t *j = json_loads(r.body, 0, &err);
  assert_true(json_is_array(j));
  http_response_free(&r);
  return j;
}

static void errors_become_statuses(void **state) {
  (void)state;
  const char *create = "{\"channelId\":\"c\",\"contentTopic\":\"/a/1/b/proto\",\"senderId\":\"s\"}";
  g_answer = LD_ERR_DB;
  expect("POST", "/channels/v1/channels", create, 500,
         "Create failed: the state store is read-only");
  g_answer = LD_ERR_EXISTS;
  expect("POST", "/channels/v1/channels", create, 409, "the state store is read-only");
  g_answer = 0;
  expect("POST", "/channels/v1/channels", create, 200, "{\"channelId\":\"c\"}");
  g_answer = LD_ERR_LIMIT;
  expect("POST", "/channels/v1/channels/room/messages", "{\"payload\":\"AA==\"}", 429,
         "Too many requests in flight: too many messages in flight");
  g_answer = 0;
  expect("POST", "/channels/v1/channels/room/messages", "{\"payload\":\"AA==\"}", 200,
         "{\"requestId\":\"req-1\"}");
  expect("DELETE", "/channels/v1/channels/x", NULL, 404, "unknown channel: x");
  expect("PUT", "/channels/v1/channels/x", NULL, 400, NULL); /* no such method: nwaku's 400 */
}

static void event_cache_keeps_its_bounds(void **state) {
  (void)state;
  char id[32];
  for (int i = 0; i <= LD_REST_CHANNEL_EVENTS_MAX; i++) {
    snprintf(id, sizeof id, "r%d", i);
    ld_rest_channel_event_t ev = {
        .kind = LD_REST_CHANNEL_SENT, .channel_id = "room", .request_id = id};
    assert_int_equal(ld_rest_channels_event(g_rc, &ev, 1), 0);
  }
  assert_int_equal(ld_rest_channels_cached(g_rc), LD_REST_CHANNEL_EVENTS_MAX);
  assert_int_equal(ld_rest_channels_dropped(g_rc), 1);
  json_t *j = poll_events();
  assert_int_equal(json_array_size(j), LD_REST_CHANNEL_EVENTS_MAX);
  json_t *first = json_array_get(j, 0);
  assert_string_equal(json_string_value(json_object_get(first, "requestId")), "r1");
  assert_string_equal(json_string_value(json_object_get(first, "eventType")),
                      "channel_message_sent");
  json_decref(j);
  assert_int_equal(ld_rest_channels_cached(g_rc), 0);
  j = poll_events();
  assert_int_equal(json_array_size(j), 0);
  json_decref(j);

  /* payload bytes: two of 20 MiB do not fit together, one over the cap alone is refused */
  size_t big = 20u * 1024 * 1024;
  uint8_t *payload = calloc(1, LD_REST_CHANNEL_EVENTS_MAX_BYTES + 1);
  assert_non_null(payload);
  ld_rest_channel_event_t ev = {.kind = LD_REST_CHANNEL_RECEIVED,
                                .channel_id = "room",
                                .sender_id = "bob",
                                .payload = payload,
                                .payload_len = big};
  assert_int_equal(ld_rest_channels_event(g_rc, &ev, 2), 0);
  assert_int_equal(ld_rest_channels_event(g_rc, &ev, 3), 0);
  assert_int_equal(ld_rest_channels_cached(g_rc), 1);
  assert_int_equal(ld_rest_channels_dropped(g_rc), 2);
  ev.payload_len = LD_REST_CHANNEL_EVENTS_MAX_BYTES + 1;
  assert_int_equal(ld_rest_channels_event(g_rc, &ev, 4), LD_ERR_TOO_LARGE);
  assert_int_equal(ld_rest_channels_cached(g_rc), 1);
  free(payload);
  ld_rest_channel_event_t bad = {.kind = (ld_rest_channel_event_kind_t)99, .channel_id = "room"};
  assert_int_equal(ld_rest_channels_event(g_rc, &bad, 5), LD_ERR_INVALID_ARG);
  j = poll_events();
  assert_int_equal(json_array_size(j), 1);
  assert_int_equal(json_integer_value(json_object_get(json_array_get(j, 0), "timestamp")), 3);
  assert_string_equal(json_string_value(json_object_get(json_array_get(j, 0), "senderId")), "bob");
  json_decref(j);
}

static void lost_event_has_its_fields(void **state) {
  (void)state;
  ld_rest_channel_event_t ev = {.kind = LD_REST_CHANNEL_LOST,
                                .channel_id = "room",
                                .sender_id = "alice",
                                .message_id = "abc",
                                .message_hash = "0x01",
                                .reason = "Irretrievable"};
  assert_int_equal(ld_rest_channels_event(g_rc, &ev, 7), 0);
  json_t *j = poll_events();
  assert_int_equal(json_array_size(j), 1);
  json_t *e = json_array_get(j, 0);
  const char *want[][2] = {{"eventType", "channel_message_lost"},
                           {"channelId", "room"},
                           {"senderId", "alice"},
                           {"messageId", "abc"},
                           {"messageHash", "0x01"},
                           {"payloadHash", ""},
                           {"reason", "Irretrievable"}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    assert_string_equal(json_string_value(json_object_get(e, want[i][0])), want[i][1]);
  assert_null(json_object_get(e, "requestId"));
  json_decref(j);
}

static void detach_answers_404(void **state) {
  (void)state;
  ld_rest_channels_detach(g_rc);
  g_rc = NULL;
  expect("GET", "/channels/v1/events", NULL, 404, LD_REST_CHANNELS_UNAVAILABLE);
  ld_rest_channels_ops_t incomplete = {op_create, NULL, op_send, op_close, NULL};
  assert_int_equal(ld_rest_channels_attach(g_srv, &incomplete, &g_rc), LD_ERR_INVALID_ARG);
  ld_rest_channels_ops_t ops = {op_create, op_exists, op_send, op_close, NULL};
  assert_int_equal(ld_rest_channels_attach(g_srv, &ops, &g_rc), 0);
  ld_rest_channels_t *second = NULL;
  assert_int_equal(ld_rest_channels_attach(g_srv, &ops, &second), LD_ERR_EXISTS);
  expect("GET", "/channels/v1/events", NULL, 200, "[]");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(errors_become_statuses),
      cmocka_unit_test(event_cache_keeps_its_bounds),
      cmocka_unit_test(lost_event_has_its_fields),
      cmocka_unit_test(detach_answers_404),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
