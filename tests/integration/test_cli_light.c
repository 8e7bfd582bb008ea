/* The light variants of the program's sub-commands (the program from $LD_BIN, as child
 * processes) against nodes running in this process: a service node (relay, lightpush, filter,
 * store on memory://) with one relay peer on shard 0. `send --lightpush` pushes what two
 * `subscribe --filter` (one ending at --count, one at SIGINT, both unsubscribing) receive and
 * what `query --hash` finds; a filter subscriber subscribes again after the service forgot it;
 * `query` pages forward and backward, continues from a cursor, walks every page with --all, looks
 * up hashes, filters by time and prints hashes only with --no-data. Error paths: an unreachable
 * peer, a peer without the protocol, a peer of another cluster, error statuses of the services,
 * bad flags. */
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
#include <uv.h>

#include "base/clock.h"
#include "child_harness.h"
#include "base/error.h"
#include "node/events.h"
#include "node/node.h"
#include "node_harness.h"
#include "waku/core/sharding.h"

#define STEP_MS 30000
#define CT_CHAT "/cli/1/light/proto"
#define CT_STORE "/cli/1/store/proto"
#define SHARD0 "/waku/2/rs/0/0" /* where the store tests publish */
#define N_STORED 5
#define UNREACHABLE "/ip4/127.0.0.1/tcp/1/p2p/16Uiu2HAkx3GoZmXmHbBcphAVJAU6gDuFWWLyBgAaEpyPzbZqccLQ"
#define MAX_LINES 16
#define ZERO_HASH "0x0000000000000000000000000000000000000000000000000000000000000000"

static uv_loop_t g_loop;
static const char *g_bin;
/* CT_CHAT's shard: the service serves shards 0..7, so the commands autoshard over 8 */
static char g_chat_topic[64];

#define WAIT_FOR(cond) NH_WAIT_FOR(&g_loop, cond, STEP_MS)

/* ---- child processes (tests/support/child_harness.h) ---------------------------------------- */

/* Runs the program to its end; the caller frees the child. */
static ch_child_t *run(const char *const *args) {
  ch_child_t *c = ch_spawn(&g_loop, g_bin, args);
  ch_finish(c, STEP_MS);
  return c;
}

static size_t count_lines(const char *s) {
  size_t n = 0;
  for (; *s != '\0'; s++)
    n += *s == '\n';
  return n;
}

/* Parses stdout, one JSON object per line; returns the number of lines. */
static size_t parse_lines(const ch_child_t *c, json_t **out, size_t max) {
  size_t n = 0;
  const char *p = c->stdout_buf;
  while (*p != '\0' && n < max) {
    const char *nl = strchr(p, '\n');
    size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
    json_error_t jerr;
    out[n] = json_loadb(p, len, 0, &jerr);
    if (out[n] == NULL)
      fail_msg("not a JSON line: '%.*s'", (int)len, p);
    n++;
    p += len + (nl != NULL ? 1 : 0);
  }
  return n;
}

static void free_lines(json_t **lines, size_t n) {
  for (size_t i = 0; i < n; i++)
    json_decref(lines[i]);
}

static const char *str(json_t *o, const char *key) {
  const char *v = json_string_value(json_object_get(o, key));
  return v != NULL ? v : "";
}

/* ---- the nodes ------------------------------------------------------------------------------- */

typedef struct received {
  int count;
  char hash[LD_WAKU_HASH_HEX_LEN + 1];
} received_t;

static ld_node_t *g_service, *g_peer;
static char g_service_addr[LD_MULTIADDR_TEXT_MAX], g_peer_addr[LD_MULTIADDR_TEXT_MAX];
static received_t g_service_rx, g_peer_rx;

static void on_message(int kind, const void *payload, void *ud) {
  (void)kind;
  const ld_fanout_message_t *m = payload;
  received_t *r = ud;
  r->count++;
  ld_waku_hash_to_hex(m->hash, r->hash);
}

static void on_stopped(void *ud) {
  *(bool *)ud = true;
}

static ld_node_config_t *base_config(void) {
  ld_node_config_t *cfg = malloc(sizeof *cfg);
  char err[256];
  ld_node_config_default(cfg);
  assert_int_equal(ld_node_config_set_listen(cfg, "127.0.0.1", 0, 0, err, sizeof err), 0);
  return cfg;
}

static ld_node_t *start_node(ld_node_config_t *cfg, received_t *r, char *addr, size_t cap) {
  ld_node_t *n = nh_start_subscribed(&g_loop, cfg, LD_EVENT_MESSAGE, on_message, r);
  nh_only_addr_text(n, addr, cap);
  return n;
}

/* relay (shards 0..7 of cluster 0), lightpush, filter and store. */
static ld_node_t *start_service(uint32_t filter_ttl_s, received_t *r, char *addr, size_t cap) {
  ld_node_config_t *cfg = base_config();
  char err[256];
  cfg->lightpush = cfg->filter = cfg->store = true;
  cfg->filter_subscription_timeout_s = filter_ttl_s;
  assert_int_equal(ld_node_config_set_store_db_url(cfg, "memory://", err, sizeof err), 0);
  return start_node(cfg, r, addr, cap);
}

/* relay on shard 0 and CT_CHAT's shard only, connected to the service. */
static ld_node_t *start_relay_peer(const char *service) {
  ld_node_config_t *cfg = base_config();
  char err[256], chat_shard[8];
  snprintf(chat_shard, sizeof chat_shard, "%s", strrchr(g_chat_topic, '/') + 1);
  assert_int_equal(ld_node_config_add_shard(cfg, "0", err, sizeof err), 0);
  assert_int_equal(ld_node_config_add_shard(cfg, chat_shard, err, sizeof err), 0);
  assert_int_equal(ld_node_config_add_static_node(cfg, service, err, sizeof err), 0);
  return start_node(cfg, &g_peer_rx, g_peer_addr, sizeof g_peer_addr);
}

static void stop_node(ld_node_t *n) {
  nh_stop(&g_loop, n, STEP_MS);
}

static size_t service_topic_peers(ld_node_t *n, const char *topic) {
  return ld_gs_service_topic_peers(ld_node_gossipsub(n), topic, NULL, 0);
}

/* Publishes on the service itself (its own messages reach its archive and filter). */
static void publish(ld_node_t *n, const char *topic, const char *ct, const char *text, int64_t ts,
                    char hash[LD_WAKU_HASH_HEX_LEN + 1]) {
  ld_waku_message_t msg;
  ld_waku_message_init(&msg);
  msg.payload = (const uint8_t *)text;
  msg.payload_len = strlen(text);
  msg.content_topic = ct;
  msg.content_topic_len = strlen(ct);
  msg.timestamp = ts;
  uint8_t h[LD_WAKU_HASH_LEN];
  assert_true(ld_node_publish(n, topic, &msg, h) >= 0);
  if (hash != NULL)
    ld_waku_hash_to_hex(h, hash);
}

/* ---- lightpush and filter -------------------------------------------------------------------- */

static void send_light(const char *text, const char *meta, char hash[LD_WAKU_HASH_HEX_LEN + 1]) {
  const char *args[] = {"send",  "--peer", g_service_addr, "--content-topic",
                        CT_CHAT, "--meta", meta,           "--lightpush",
                        text,    NULL};
  if (meta == NULL) {
    args[5] = "--lightpush";
    args[6] = text;
    args[7] = NULL;
  }
  ch_child_t *c = ch_spawn(&g_loop, g_bin, args);
  ch_expect_success(c, STEP_MS);
  assert_int_equal(count_lines(c->stdout_buf), 1);
  assert_int_equal(strlen(c->stdout_buf), LD_WAKU_HASH_HEX_LEN + 1);
  memcpy(hash, c->stdout_buf, LD_WAKU_HASH_HEX_LEN);
  hash[LD_WAKU_HASH_HEX_LEN] = '\0';
  assert_memory_equal(hash, "0x", 2);
  if (strstr(c->stderr_buf, "relayed the message to 1 peer") == NULL)
    fail_msg("stderr '%s'", c->stderr_buf);
  free(c);
}

static void expect_two_messages(ch_child_t *sub, const char *h1, const char *h2) {
  json_t *lines[MAX_LINES];
  size_t n = parse_lines(sub, lines, MAX_LINES);
  assert_int_equal(n, 2);
  assert_string_equal(str(lines[0], "hash"), h1);
  assert_string_equal(str(lines[0], "text"), "first light message");
  assert_string_equal(str(lines[0], "payload"), "Zmlyc3QgbGlnaHQgbWVzc2FnZQ==");
  assert_string_equal(str(lines[0], "pubsubTopic"), g_chat_topic);
  assert_string_equal(str(lines[0], "contentTopic"), CT_CHAT);
  assert_true(json_integer_value(json_object_get(lines[0], "timestamp")) > 0);
  assert_null(json_object_get(lines[0], "meta"));
  assert_string_equal(str(lines[1], "hash"), h2);
  assert_string_equal(str(lines[1], "text"), "second");
  assert_string_equal(str(lines[1], "meta"), "Cgs=");
  free_lines(lines, n);
  if (strstr(sub->stderr_buf, "subscribe: unsubscribed from") == NULL)
    fail_msg("subscriber stderr '%s'", sub->stderr_buf);
}

static void expect_hash_lookup(const char *hash) {
  const char *args[] = {"query", "--peer", g_service_addr, "--hash", hash, NULL};
  ch_child_t *c = run(args);
  if (c->status != 0)
    fail_msg("exit %lld, stderr '%s'", (long long)c->status, c->stderr_buf);
  json_t *lines[MAX_LINES];
  size_t n = parse_lines(c, lines, MAX_LINES);
  assert_int_equal(n, 1);
  assert_string_equal(str(lines[0], "hash"), hash);
  assert_string_equal(str(lines[0], "text"), "first light message");
  free_lines(lines, n);
  free(c);
}

static void lightpush_reaches_filter_subscribers_and_the_store(void **state) {
  (void)state;
  const char *counted[] = {"subscribe",
                           "--peer",
                           g_service_addr,
                           "--content-topic",
                           CT_CHAT,
                           "--filter",
                           "--count",
                           "2",
                           "--timeout",
                           "60",
                           NULL};
  const char *open_ended[] = {"subscribe", "--peer", g_service_addr, "--content-topic", CT_CHAT,
                              "--filter",  NULL};
  ch_child_t *a = ch_spawn(&g_loop, g_bin, counted), *b = ch_spawn(&g_loop, g_bin, open_ended);
  char receiving[128];
  snprintf(receiving, sizeof receiving, "subscribe: receiving " CT_CHAT " on %s", g_chat_topic);
  WAIT_FOR(strstr(a->stderr_buf, receiving) != NULL);
  WAIT_FOR(strstr(b->stderr_buf, "subscribe: receiving") != NULL);

  char h1[LD_WAKU_HASH_HEX_LEN + 1], h2[LD_WAKU_HASH_HEX_LEN + 1];
  int before = g_peer_rx.count;
  send_light("first light message", NULL, h1);
  send_light("second", "0a0b", h2);
  WAIT_FOR(g_peer_rx.count == before + 2); /* the service relayed both */
  assert_string_equal(g_peer_rx.hash, h2);

  ch_expect_success(a, STEP_MS);
  expect_two_messages(a, h1, h2);
  WAIT_FOR(count_lines(b->stdout_buf) == 2);
  assert_int_equal(uv_process_kill(&b->proc, SIGINT), 0);
  ch_expect_success(b, STEP_MS);
  expect_two_messages(b, h1, h2);
  free(a);
  free(b);
  expect_hash_lookup(h1);
}

static void filter_subscribes_again_when_the_service_forgets(void **state) {
  (void)state;
  received_t rx = {0};
  char addr[LD_MULTIADDR_TEXT_MAX];
  ld_node_t *svc = start_service(1, &rx, addr, sizeof addr); /* forgets after 1 s */
  const char *args[] = {"subscribe", "--peer",          addr, "--content-topic", CT_CHAT,
                        "--filter",  "--ping-interval", "2",  "--count",         "1",
                        NULL};
  ch_child_t *sub = ch_spawn(&g_loop, g_bin, args);
  WAIT_FOR(strstr(sub->stderr_buf, "subscribe: receiving") != NULL);
  WAIT_FOR(strstr(sub->stderr_buf, "lost the subscription; subscribing again") != NULL);
  /* the first subscription has expired: only the renewed one can bring a message */
  for (int i = 0; !sub->exited && i < 200; i++) {
    char text[32];
    snprintf(text, sizeof text, "renewed %d", i);
    publish(svc, g_chat_topic, CT_CHAT, text, 0, NULL);
    uint64_t until = ld_now_ms() + 100;
    while (!sub->exited && ld_now_ms() < until)
      nh_pump(&g_loop);
  }
  ch_expect_success(sub, STEP_MS);
  json_t *lines[MAX_LINES];
  size_t n = parse_lines(sub, lines, MAX_LINES);
  assert_int_equal(n, 1);
  assert_memory_equal(str(lines[0], "text"), "renewed ", 8);
  free_lines(lines, n);
  free(sub);
  stop_node(svc);
}

/* ---- store ----------------------------------------------------------------------------------- */

static char g_stored[N_STORED][LD_WAKU_HASH_HEX_LEN + 1];
static int64_t g_stored_ts[N_STORED];

static void store_messages(void) {
  int64_t base = (int64_t)ld_wall_ns() - 5 * 1000 * 1000 * 1000ll;
  int before = g_service_rx.count;
  for (int i = 0; i < N_STORED; i++) {
    char text[32];
    snprintf(text, sizeof text, "stored %d", i);
    g_stored_ts[i] = base + i * 1000;
    publish(g_service, SHARD0, CT_STORE, text, g_stored_ts[i], g_stored[i]);
  }
  WAIT_FOR(g_service_rx.count == before + N_STORED);
}

/* Runs `query --peer <service> <extra…>`, expects exit 0, and parses its lines. */
static size_t query(const char *const *extra, json_t **lines) {
  const char *args[32] = {"query", "--peer", g_service_addr};
  size_t n = 3;
  for (size_t i = 0; extra[i] != NULL && n < 31; i++)
    args[n++] = extra[i];
  args[n] = NULL;
  ch_child_t *c = run(args);
  if (c->status != 0)
    fail_msg("exit %lld, stderr '%s'", (long long)c->status, c->stderr_buf);
  size_t k = parse_lines(c, lines, MAX_LINES);
  free(c);
  return k;
}

static void expect_stored(json_t *line, int i) {
  char text[32];
  snprintf(text, sizeof text, "stored %d", i);
  assert_string_equal(str(line, "hash"), g_stored[i]);
  assert_string_equal(str(line, "text"), text);
  assert_string_equal(str(line, "contentTopic"), CT_STORE);
  assert_string_equal(str(line, "pubsubTopic"), SHARD0);
  assert_int_equal(json_integer_value(json_object_get(line, "timestamp")), g_stored_ts[i]);
}

#define TOPIC_ARGS "--pubsub-topic", SHARD0, "--content-topic", CT_STORE

static void query_pages_forward_and_from_a_cursor(void **state) {
  (void)state;
  store_messages();
  json_t *lines[MAX_LINES];
  const char *first[] = {TOPIC_ARGS, "--page-size", "2", NULL};
  size_t n = query(first, lines);
  assert_int_equal(n, 3);
  expect_stored(lines[0], 0);
  expect_stored(lines[1], 1);
  char cursor[LD_WAKU_HASH_HEX_LEN + 1];
  snprintf(cursor, sizeof cursor, "%s", str(lines[2], "cursor"));
  assert_string_equal(cursor, g_stored[1]);
  free_lines(lines, n);

  const char *next[] = {TOPIC_ARGS, "--page-size", "2", "--cursor", cursor, NULL};
  n = query(next, lines);
  assert_int_equal(n, 3);
  expect_stored(lines[0], 2);
  expect_stored(lines[1], 3);
  assert_string_equal(str(lines[2], "cursor"), g_stored[3]);
  free_lines(lines, n);
}

/* --all with stderr not a terminal: one plain line per page, then the summary. */
static void expect_query_all_progress(const char *const *extra) {
  const char *args[32] = {"query", "--peer", g_service_addr};
  size_t n = 3;
  for (size_t i = 0; extra[i] != NULL && n < 31; i++)
    args[n++] = extra[i];
  args[n] = NULL;
  ch_child_t *c = run(args);
  assert_int_equal(c->status, 0);
  if (strstr(c->stderr_buf, "query: page 1: 2 messages (2 in all,") == NULL ||
      strstr(c->stderr_buf, "query: page 3: 1 messages (5 in all,") == NULL ||
      strstr(c->stderr_buf, "query: 3 pages, 5 messages in ") == NULL ||
      strchr(c->stderr_buf, '\r') != NULL)
    fail_msg("stderr '%s'", c->stderr_buf);
  free(c);
}

static void query_backward_all_hashes_times_and_no_data(void **state) {
  (void)state;
  json_t *lines[MAX_LINES];
  const char *backward[] = {TOPIC_ARGS, "--page-size", "2", "--backward", NULL};
  size_t n = query(backward, lines);
  assert_int_equal(n, 3); /* the newest two, in ascending order, and the cursor */
  expect_stored(lines[0], 3);
  expect_stored(lines[1], 4);
  assert_string_equal(str(lines[2], "cursor"), g_stored[3]);
  free_lines(lines, n);

  const char *all[] = {TOPIC_ARGS, "--page-size", "2", "--all", NULL};
  n = query(all, lines);
  assert_int_equal(n, N_STORED);
  for (int i = 0; i < N_STORED; i++)
    expect_stored(lines[i], i);
  free_lines(lines, n);
  expect_query_all_progress(all);

  const char *hashes[] = {"--hash", g_stored[4], "--hash", g_stored[2], NULL};
  n = query(hashes, lines);
  assert_int_equal(n, 2);
  expect_stored(lines[0], 2);
  expect_stored(lines[1], 4);
  free_lines(lines, n);

  char from[32], to[32];
  snprintf(from, sizeof from, "%lld", (long long)g_stored_ts[1]);
  snprintf(to, sizeof to, "%lld", (long long)g_stored_ts[3]);
  const char *times[] = {TOPIC_ARGS, "--start-time", from, "--end-time", to, NULL};
  n = query(times, lines);
  assert_int_equal(n, 3);
  for (int i = 0; i < 3; i++)
    expect_stored(lines[i], i + 1);
  free_lines(lines, n);

  const char *no_data[] = {TOPIC_ARGS, "--no-data", NULL};
  n = query(no_data, lines);
  assert_int_equal(n, N_STORED);
  for (int i = 0; i < N_STORED; i++) {
    assert_string_equal(str(lines[i], "hash"), g_stored[i]);
    assert_int_equal(json_object_size(lines[i]), 1);
  }
  free_lines(lines, n);
}

/* ---- failures -------------------------------------------------------------------------------- */

typedef struct failure {
  const char *args[20];
  int64_t status;
  const char *needle;
} failure_t;

static void expect_failures(const failure_t *cases, size_t n) {
  for (size_t i = 0; i < n; i++) {
    ch_child_t *c = run(cases[i].args);
    if (c->status != cases[i].status || strstr(c->stderr_buf, cases[i].needle) == NULL)
      fail_msg("case %zu (%s): exit %lld, stderr '%s'", i, cases[i].args[0], (long long)c->status,
               c->stderr_buf);
    assert_int_equal(c->out_len, 0);
    free(c);
  }
}

static void unreachable_unsupported_and_foreign_peers(void **state) {
  (void)state;
  const failure_t cases[] = {
      {{"send", "--peer", UNREACHABLE, "--content-topic", CT_CHAT, "--lightpush", "x", NULL},
       2,
       "cannot reach"},
      {{"subscribe", "--peer", UNREACHABLE, "--content-topic", CT_CHAT, "--filter", NULL},
       2,
       "cannot reach"},
      {{"query", "--peer", UNREACHABLE, NULL}, 2, "cannot reach"},
      /* the relay peer serves none of the three */
      {{"send", "--peer", g_peer_addr, "--content-topic", CT_CHAT, "--lightpush", "x", NULL},
       4,
       "lightpush failed: 503"},
      {{"subscribe", "--peer", g_peer_addr, "--content-topic", CT_CHAT, "--filter", NULL},
       4,
       "filter subscription failed: 504"},
      {{"query", "--peer", g_peer_addr, NULL}, 4, "store query failed: 504"},
      /* the service is in cluster 0 */
      {{"send", "--peer", g_service_addr, "--content-topic", CT_CHAT, "--cluster-id", "9",
        "--lightpush", "x", NULL},
       2,
       "is not in cluster 9 but in cluster 0 (CLUSTER_MISMATCH)"},
      {{"subscribe", "--peer", g_service_addr, "--content-topic", CT_CHAT, "--cluster-id", "9",
        "--filter", NULL},
       2,
       "is not in cluster 9 but in cluster 0 (CLUSTER_MISMATCH)"},
      {{"query", "--peer", g_service_addr, "--pubsub-topic", "/waku/2/rs/9/0", NULL},
       2,
       "is not in cluster 9 but in cluster 0 (CLUSTER_MISMATCH)"},
  };
  expect_failures(cases, sizeof cases / sizeof cases[0]);
}

static void services_answering_with_an_error_status(void **state) {
  (void)state;
  char unknown[LD_WAKU_HASH_HEX_LEN + 1] = "0x";
  memset(unknown + 2, 'e', LD_WAKU_HASH_HEX_LEN - 2);
  const failure_t cases[] = {
      /* the service is on shard 5, its relay peer is not */
      {{"send", "--peer", g_service_addr, "--content-topic", CT_CHAT, "--pubsub-topic",
        "/waku/2/rs/0/5", "--lightpush", "x", NULL},
       7,
       "lightpush failed: 505 NO_PEERS_TO_RELAY: No peers for topic"},
      {{"query", "--peer", g_service_addr, "--cursor", unknown, NULL},
       7,
       "store query failed: 300"},
  };
  expect_failures(cases, sizeof cases / sizeof cases[0]);
}

static void bad_flags_are_named(void **state) {
  (void)state;
  const char *p = g_service_addr;
  const failure_t cases[] = {
      {{"query", "--peer", p, "--page-size", "abc", NULL}, 1, "query: --page-size: expected an"},
      {{"query", "--peer", p, "--page-size", "0", NULL}, 1, "--page-size: value 0 out of range"},
      {{"query", "--peer", p, "--hash", "0x1234", NULL}, 1, "--hash '0x1234': expected 64 hex"},
      {{"query", "--peer", p, "--cursor", ZERO_HASH, NULL}, 1, "--cursor: an all-zero cursor"},
      {{"query", "--peer", p, "--start-time", "5", "--end-time", "4", NULL},
       1,
       "--start-time 5 is after --end-time 4"},
      {{"query", "--peer", p, "--bogus", NULL}, 1, "unknown flag --bogus"},
      {{"query", "--peer", p, "extra", NULL}, 1, "unexpected argument 'extra'"},
      {{"query", "--page-size", "5", NULL}, 1, "query: --peer is required"},
      {{"send", "--peer", p, "--content-topic", CT_CHAT, "--lightpush", NULL}, 1, "usage"},
      {{"send", "--peer", p, "--content-topic", CT_CHAT, "--filter", "x", NULL},
       1,
       "unknown flag --filter"},
      {{"subscribe", "--peer", p, "--content-topic", CT_CHAT, "--lightpush", NULL},
       1,
       "unknown flag --lightpush"},
      {{"subscribe", "--peer", p, "--content-topic", CT_CHAT, "--filter", "--ping-interval", "0",
        NULL},
       1,
       "--ping-interval: value 0 out of range"},
      {{"subscribe", "--peer", p, "--content-topic", "bad", "--filter", NULL},
       1,
       "--content-topic 'bad'"},
  };
  expect_failures(cases, sizeof cases / sizeof cases[0]);
}

/* ---- setup ----------------------------------------------------------------------------------- */

static int setup(void **state) {
  (void)state;
  g_bin = getenv("LD_BIN");
  if (g_bin == NULL)
    return -1;
  uv_loop_init(&g_loop);
  ld_relay_shard_t chat;
  if (ld_autoshard(CT_CHAT, strlen(CT_CHAT), 8, 0, &chat, NULL) != 0)
    return -1;
  ld_pubsub_topic_format(chat, g_chat_topic, sizeof g_chat_topic);
  g_service = start_service(LD_NODE_DEFAULT_FILTER_TIMEOUT_S, &g_service_rx, g_service_addr,
                            sizeof g_service_addr);
  g_peer = start_relay_peer(g_service_addr);
  uint64_t deadline = ld_now_ms() + STEP_MS;
  while ((service_topic_peers(g_service, SHARD0) == 0 ||
          service_topic_peers(g_service, g_chat_topic) == 0) &&
         ld_now_ms() < deadline)
    nh_pump(&g_loop);
  return service_topic_peers(g_service, SHARD0) > 0 &&
                 service_topic_peers(g_service, g_chat_topic) > 0
             ? 0
             : -1;
}

static int teardown(void **state) {
  (void)state;
  bool a = false, b = false;
  ld_node_stop(g_peer, on_stopped, &a);
  ld_node_stop(g_service, on_stopped, &b);
  uint64_t end = ld_now_ms() + STEP_MS;
  while (!(a && b) && ld_now_ms() < end)
    nh_pump(&g_loop);
  end = ld_now_ms() + 50;
  while (ld_now_ms() < end)
    nh_pump(&g_loop);
  return a && b && uv_loop_close(&g_loop) == 0 ? 0 : -1;
}

int main(void) {
  if (!ch_program_ready())
    return 0;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(lightpush_reaches_filter_subscribers_and_the_store),
      cmocka_unit_test(filter_subscribes_again_when_the_service_forgets),
      cmocka_unit_test(query_pages_forward_and_from_a_cursor),
      cmocka_unit_test(query_backward_all_hashes_times_and_no_data),
      cmocka_unit_test(unreachable_unsupported_and_foreign_peers),
      cmocka_unit_test(services_answering_with_an_error_status),
      cmocka_unit_test(bad_flags_are_named),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
