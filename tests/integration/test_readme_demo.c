/* The README's demo, as a new user runs it: the node `scripts/run-node.sh` starts with its
 * defaults (cluster 0, autosharding over 8 shards, relay, lightpush, filter, store, REST on; the
 * ports, which the demo leaves at their defaults, at 0 through WAKUNODE2_* variables, on
 * 127.0.0.1), two `subscribe` commands given only --peer and --content-topic (one over relay,
 * one with --filter), and a message POSTed to the Messaging API (/messaging/v1/messages): both
 * subscribers print it on the topic's autosharding shard, and /messaging/v1/events/send shows
 * it propagated. The programs run as child processes ($LD_BIN, $LD_SOURCE_DIR). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <signal.h>
#include <unistd.h>
#include <uv.h>

#include "base/clock.h"
#include "child_harness.h"
#include "http_client.h"
#include "node_harness.h"
#include "waku/core/sharding.h"

#define STEP_MS 30000
#define DEMO_TOPIC "/demo/1/chat/proto" /* the README's T */
#define DEMO_SHARDS 8                   /* run-node.sh's --num-shards-in-network */
#define TEXT "hello from the demo"
#define TEXT_BASE64 "aGVsbG8gZnJvbSB0aGUgZGVtbw=="

static uv_loop_t g_loop;
static const char *g_bin;
static char g_dir[] = "/tmp/ld_readme_demo_XXXXXX";
static ch_child_t *g_node;
static ch_child_t *g_subscribers[2]; /* relay, filter */
static char g_addr[256];
static uint16_t g_rest_port;
static char g_shard_topic[64]; /* the autosharding shard of DEMO_TOPIC */
static uv_timer_t g_ticker;    /* turns the loop while the children are silent */

#define WAIT_FOR(cond) NH_WAIT_FOR(&g_loop, cond, STEP_MS)

/* ---- the node, as run-node.sh starts it --------------------------------------------------------
 */

/* Copies the text after `prefix` in `log` up to the first character of `stop` (or the end). */
static bool log_value(const char *log, const char *prefix, const char *stop, char *out,
                      size_t cap) {
  const char *p = strstr(log, prefix);
  if (p == NULL)
    return false;
  p += strlen(prefix);
  size_t len = strcspn(p, stop);
  if (p[len] == '\0' || len == 0 || len >= cap)
    return false; /* the line is not complete yet */
  memcpy(out, p, len);
  out[len] = '\0';
  return true;
}

/* The node's TCP address (with /p2p/…; its log names it before the WebSocket one) and REST
 * port, once its log (on stderr) has both. */
static bool node_ready(void) {
  char port[16];
  const char *log = g_node->stderr_buf;
  if (!log_value(log, "Listening on ", " \n", g_addr, sizeof g_addr) ||
      !log_value(log, "REST service started at http://127.0.0.1:", "/", port, sizeof port))
    return false;
  g_rest_port = (uint16_t)atoi(port);
  return strstr(g_addr, "/tcp/") != NULL && strstr(g_addr, "/ws") == NULL && g_rest_port != 0;
}

static void start_demo_node(void) {
  const char *src = getenv("LD_SOURCE_DIR");
  assert_non_null(src);
  char script[1024];
  snprintf(script, sizeof script, "%s/scripts/run-node.sh", src);
  /* the demo's defaults are run-node.sh's; only the ports and the address come from here */
  setenv("LOGOSDELIVERY_BIN", g_bin, 1);
  setenv("WAKUNODE2_LISTEN_ADDRESS", "127.0.0.1", 1);
  setenv("WAKUNODE2_TCP_PORT", "0", 1);
  setenv("WAKUNODE2_WEBSOCKET_PORT", "0", 1);
  setenv("WAKUNODE2_REST_PORT", "0", 1);
  setenv("WAKUNODE2_METRICS_SERVER_PORT", "0", 1);
  const char *args[] = {script, NULL};
  g_node = ch_spawn(&g_loop, "bash", args);
  uint64_t deadline = ld_now_ms() + STEP_MS;
  while (!node_ready() && !g_node->exited && ld_now_ms() < deadline)
    nh_pump(&g_loop);
  if (!node_ready())
    fail_msg("the node did not start: '%s'", g_node->stderr_buf);
}

/* ---- HTTP ---------------------------------------------------------------------------------------
 */

static json_t *rest(const char *method, const char *path, const char *body, int status) {
  http_response_t r;
  const char *headers = body != NULL ? "Content-Type: application/json\r\n" : NULL;
  assert_int_equal(http_request_on_loop(&g_loop, g_rest_port, method, path, headers, body,
                                        body != NULL ? strlen(body) : 0, &r),
                   0);
  if (r.status != status)
    fail_msg("%s %s: %d '%s'", method, path, r.status, r.body);
  json_t *j = json_loads(r.body, 0, NULL);
  if (j == NULL)
    fail_msg("%s %s: not JSON: '%s'", method, path, r.body);
  http_response_free(&r);
  return j;
}

static const char *str(json_t *o, const char *key) {
  const char *v = json_string_value(json_object_get(o, key));
  return v != NULL ? v : "";
}

/* Whether /messaging/v1/events/send (which hands each event out once) has shown, now or on an
 * earlier call, `request_id` propagated. */
static bool propagated(const char *request_id) {
  static bool seen;
  json_t *sends = rest("GET", "/messaging/v1/events/send", NULL, 200);
  for (size_t i = 0; i < json_array_size(sends); i++) {
    json_t *st = json_array_get(sends, i);
    json_t *events = json_object_get(st, "events");
    for (size_t e = 0; strcmp(str(st, "requestId"), request_id) == 0 && e < json_array_size(events);
         e++) {
      const char *kind = str(json_array_get(events, e), "kind");
      if (strcmp(kind, "error") == 0)
        fail_msg("send failed: %s", json_dumps(st, 0));
      seen = seen || strcmp(kind, "propagated") == 0;
    }
  }
  json_decref(sends);
  if (!seen)
    nh_run_for(&g_loop, 100);
  return seen;
}

/* ---- the demo -----------------------------------------------------------------------------------
 */

/* The subscriber's first output line, parsed, once it has one. */
static json_t *first_line(const ch_child_t *sub) {
  const char *nl = strchr(sub->stdout_buf, '\n');
  return nl != NULL ? json_loadb(sub->stdout_buf, (size_t)(nl - sub->stdout_buf), 0, NULL) : NULL;
}

static void expect_message(ch_child_t *sub) {
  WAIT_FOR(strchr(sub->stdout_buf, '\n') != NULL);
  json_t *line = first_line(sub);
  if (line == NULL)
    fail_msg("not a JSON line: '%s'", sub->stdout_buf);
  assert_string_equal(str(line, "text"), TEXT);
  assert_string_equal(str(line, "payload"), TEXT_BASE64);
  assert_string_equal(str(line, "contentTopic"), DEMO_TOPIC);
  assert_string_equal(str(line, "pubsubTopic"), g_shard_topic);
  json_decref(line);
}

static void stop_subscriber(ch_child_t *sub) {
  assert_int_equal(uv_process_kill(&sub->proc, SIGINT), 0);
  ch_expect_success(sub, STEP_MS);
}

static void messaging_api_message_reaches_relay_and_filter_subscribers(void **state) {
  (void)state;
  const char *relay_args[] = {"subscribe", "--peer", g_addr, "--content-topic", DEMO_TOPIC, NULL};
  const char *filter_args[] = {"subscribe",       "--filter", "--peer", g_addr,
                               "--content-topic", DEMO_TOPIC, NULL};
  ch_child_t *relay = g_subscribers[0] = ch_spawn(&g_loop, g_bin, relay_args);
  ch_child_t *filter = g_subscribers[1] = ch_spawn(&g_loop, g_bin, filter_args);
  WAIT_FOR(strstr(relay->stderr_buf, "subscribe: receiving") != NULL);
  WAIT_FOR(strstr(filter->stderr_buf, "subscribe: receiving") != NULL);
  /* each says which topic it uses, and that it is the node's */
  char expect[160];
  snprintf(expect, sizeof expect, "subscribe: pubsub topic %s (autosharding of %s over %d shards",
           g_shard_topic, DEMO_TOPIC, DEMO_SHARDS);
  if (strstr(relay->stderr_buf, expect) == NULL || strstr(filter->stderr_buf, expect) == NULL)
    fail_msg("no '%s' in '%s' / '%s'", expect, relay->stderr_buf, filter->stderr_buf);

  json_t *answer =
      rest("POST", "/messaging/v1/messages",
           "{\"contentTopic\":\"" DEMO_TOPIC "\",\"payload\":\"" TEXT_BASE64 "\"}", 200);
  char request_id[128];
  snprintf(request_id, sizeof request_id, "%s", str(answer, "requestId"));
  json_decref(answer);
  assert_true(request_id[0] != '\0');

  expect_message(relay);
  expect_message(filter);
  WAIT_FOR(propagated(request_id));
  stop_subscriber(relay);
  stop_subscriber(filter);
}

static void on_tick(uv_timer_t *t) {
  (void)t;
}

/* ---- setup --------------------------------------------------------------------------------------
 */

static int setup(void **state) {
  (void)state;
  g_bin = getenv("LD_BIN");
  if (g_bin == NULL || mkdtemp(g_dir) == NULL || chdir(g_dir) != 0) /* its store.sqlite3 */
    return -1;
  uv_loop_init(&g_loop);
  uv_timer_init(&g_loop, &g_ticker);
  uv_timer_start(&g_ticker, on_tick, 50, 50);
  ld_relay_shard_t shard;
  if (ld_autoshard(DEMO_TOPIC, strlen(DEMO_TOPIC), DEMO_SHARDS, 0, &shard, NULL) != 0)
    return -1;
  ld_pubsub_topic_format(shard, g_shard_topic, sizeof g_shard_topic);
  start_demo_node();
  return 0;
}

static int teardown(void **state) {
  (void)state;
  int rc = 0;
  for (size_t i = 0; i < 2; i++) /* left running by a failure */
    if (g_subscribers[i] != NULL) {
      if (!g_subscribers[i]->exited)
        uv_process_kill(&g_subscribers[i]->proc, SIGKILL);
      ch_finish(g_subscribers[i], STEP_MS);
      free(g_subscribers[i]);
    }
  if (g_node != NULL) {
    uv_process_kill(&g_node->proc, SIGINT);
    if (ch_finish(g_node, STEP_MS) != 0) {
      fprintf(stderr, "node: exit %lld, stderr '%s'\n", (long long)g_node->status,
              g_node->stderr_buf);
      rc = -1;
    }
    free(g_node);
  }
  uv_close((uv_handle_t *)&g_ticker, NULL);
  uv_run(&g_loop, UV_RUN_NOWAIT);
  const char *files[] = {"store.sqlite3", "store.sqlite3-wal", "store.sqlite3-shm"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
    unlink(files[i]);
  if (chdir("/") != 0 || rmdir(g_dir) != 0)
    rc = -1;
  return uv_loop_close(&g_loop) == 0 ? rc : -1;
}

int main(void) {
  if (!ch_program_ready())
    return 0;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(messaging_api_message_reaches_relay_and_filter_subscribers),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
