/* Edge-mode filter subscriptions over loopback: two service nodes (relay + filter, meshed) and an
 * edge node whose configured filter node is the first. The edge keeps its content topic
 * subscribed at its target number of service peers, receives what the service nodes push, pings
 * them, and when the service node it uses dies it re-subscribes at the other one and keeps
 * receiving. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <uv.h>

#include "base/clock.h"
#include "base/error.h"
#include "messaging/edge_filter.h"
#include "node/node_filter.h"
#include "messaging/service_peers.h"
#include "node/node.h"
#include "waku/core/codecs.h"
#include "waku/filter/client.h"
#include "node_harness.h"

#define STEP_MS 15000
#define TOPIC "/waku/2/rs/0/0"
#define CONTENT "/test/1/edge-filter/proto"

static uv_loop_t g_loop;

#define WAIT_FOR(cond) NH_WAIT_FOR(&g_loop, cond, STEP_MS)

/* ---- nodes ---------------------------------------------------------------------------------- */

static ld_node_config_t *config(bool service) {
  ld_node_config_t *cfg = nh_config();
  cfg->relay = service;
  cfg->filter = service;
  cfg->listen = service;
  return cfg;
}

static ld_node_t *start(ld_node_config_t *cfg) {
  return nh_start(&g_loop, cfg);
}

static void stop(ld_node_t *n) {
  nh_stop(&g_loop, n, STEP_MS);
}

/* Service node A, then B with A as its static peer; returns once they are relay peers. */
static void start_services(ld_node_t **a, ld_node_t **b) {
  *a = start(config(true));
  ld_node_config_t *cfg = config(true);
  nh_add_static(cfg, *a);
  *b = start(cfg);
  WAIT_FOR(ld_gs_service_topic_peers(ld_node_gossipsub(*a), TOPIC, NULL, 0) >= 1 &&
           ld_gs_service_topic_peers(ld_node_gossipsub(*b), TOPIC, NULL, 0) >= 1);
}

/* ---- the edge ------------------------------------------------------------------------------- */

typedef struct edge {
  ld_node_t *node;
  ld_filter_client_t *client;
  ld_service_peers_t *peers;
  ld_edge_filter_t *ef;
  int pushes;
  ld_peerid_t last_from;
  uint8_t last_hash[LD_WAKU_HASH_LEN];
  size_t reports[16];
  size_t n_reports;
  bool dialed;
  int dial_err;
} edge_t;

static void on_push(const ld_filter_push_t *push, void *ud) {
  edge_t *e = ud;
  assert_string_equal(push->pubsub_topic, TOPIC);
  e->pushes++;
  e->last_from = *push->from;
  memcpy(e->last_hash, push->hash, LD_WAKU_HASH_LEN);
}

static void on_peers_changed(size_t n, void *ud) {
  edge_t *e = ud;
  if (e->n_reports < 16)
    e->reports[e->n_reports++] = n;
}

static void on_dial(ld_conn_t *c, int err, void *ud) {
  (void)c;
  edge_t *e = ud;
  e->dial_err = err;
  e->dialed = true;
}

/* An edge whose configured filter node is `configured` and which is connected to `other`. */
static void start_edge(edge_t *e, ld_node_t *configured, ld_node_t *other, uint32_t target,
                       uint32_t ping_interval_ms) {
  char err[256], text[LD_MULTIADDR_TEXT_MAX];
  memset(e, 0, sizeof *e);
  ld_node_config_t *cfg = config(false);
  nh_addr_text(configured, text, sizeof text);
  assert_int_equal(
      ld_node_config_set_service_node(cfg, LD_NODE_SERVICE_FILTER, text, err, sizeof err), 0);
  e->node = start(cfg);
  e->client = ld_node_filter_client(e->node, NULL);
  assert_non_null(e->client);
  e->peers = ld_service_peers_new(e->node, 0);
  assert_non_null(e->peers);

  /* Connected to the other service node, whose protocols identify records. */
  ld_multiaddr_t addrs[4];
  assert_true(ld_node_listen_addrs(other, addrs, 4) >= 1);
  assert_int_equal(ld_switch_dial(ld_node_switch(e->node), &addrs[0], on_dial, e), 0);
  WAIT_FOR(e->dialed);
  assert_int_equal(e->dial_err, 0);
  WAIT_FOR(ld_peerstore_supports(ld_node_peerstore(e->node), ld_node_peer_id(other),
                                 LD_WAKU_FILTER_SUBSCRIBE_CODEC));

  ld_edge_filter_config_t fc;
  ld_edge_filter_config_default(&fc);
  fc.target_peers = target;
  fc.ping_interval_ms = ping_interval_ms;
  fc.ping_retry_ms = 100;
  fc.tick_ms = 100;
  ld_edge_filter_callbacks_t cb = {on_push, on_peers_changed};
  int rc = -1;
  e->ef = ld_edge_filter_new(e->node, e->client, e->peers, &fc, &cb, e, &rc);
  assert_int_equal(rc, 0);
  assert_non_null(e->ef);
}

static void stop_edge(edge_t *e) {
  ld_edge_filter_free(e->ef);
  stop(e->node);
  ld_service_peers_free(e->peers);
}

static bool uses_only(const edge_t *e, const ld_node_t *service) {
  ld_peerid_t ids[4];
  size_t n = ld_edge_filter_peers(e->ef, TOPIC, ids, 4);
  return n == 1 && ld_peerid_equal(&ids[0], ld_node_peer_id((ld_node_t *)service));
}

static void publish(ld_node_t *from, const char *text, uint8_t hash[LD_WAKU_HASH_LEN]) {
  ld_waku_message_t msg;
  ld_waku_message_init(&msg);
  msg.payload = (const uint8_t *)text;
  msg.payload_len = strlen(text);
  msg.content_topic = CONTENT;
  msg.content_topic_len = strlen(CONTENT);
  msg.timestamp = (int64_t)ld_wall_ns();
  assert_true(ld_node_publish(from, TOPIC, &msg, hash) >= 0);
}

/* ---- scenarios ------------------------------------------------------------------------------ */

static void resubscribes_elsewhere_when_its_service_node_dies(void **state) {
  (void)state;
  ld_node_t *a, *b;
  start_services(&a, &b);
  edge_t e;
  start_edge(&e, a, b, 1, 60000);
  assert_int_equal(ld_edge_filter_subscribe(e.ef, TOPIC, CONTENT), 0);
  assert_int_equal(ld_edge_filter_subscribe(e.ef, TOPIC, CONTENT), 0);
  assert_true(ld_edge_filter_subscribed(e.ef, TOPIC, CONTENT));
  /* The configured node comes first. */
  WAIT_FOR(uses_only(&e, a));

  /* Published at B, relayed to A, pushed by A. */
  uint8_t hash[LD_WAKU_HASH_LEN];
  publish(b, "first", hash);
  WAIT_FOR(e.pushes == 1);
  assert_memory_equal(e.last_hash, hash, LD_WAKU_HASH_LEN);
  assert_true(ld_peerid_equal(&e.last_from, ld_node_peer_id(a)));

  /* A dies: two failed pings drop it, B takes over. */
  ld_peerid_t a_id = *ld_node_peer_id(a);
  stop(a);
  WAIT_FOR(uses_only(&e, b));
  assert_int_equal(ld_service_peers_count_connected(e.peers, LD_WAKU_FILTER_SUBSCRIBE_CODEC), 1);
  ld_edge_filter_stats_t st;
  ld_edge_filter_get_stats(e.ef, &st);
  assert_int_equal(st.peers_dropped, 1);
  assert_true(st.ping_failures >= LD_EDGE_FILTER_MAX_PING_FAILURES);
  assert_int_equal(st.subscribes, 2);
  assert_true(ld_service_peers_failed(e.peers, &a_id, ld_now_ms()));

  publish(b, "second", hash);
  WAIT_FOR(e.pushes == 2);
  assert_memory_equal(e.last_hash, hash, LD_WAKU_HASH_LEN);
  assert_true(ld_peerid_equal(&e.last_from, ld_node_peer_id(b)));
  ld_edge_filter_get_stats(e.ef, &st);
  assert_int_equal(st.pushes, 2);

  /* Reported: A up, nobody, B up. */
  assert_int_equal(e.n_reports, 3);
  assert_int_equal(e.reports[0], 1);
  assert_int_equal(e.reports[1], 0);
  assert_int_equal(e.reports[2], 1);

  stop_edge(&e);
  stop(b);
}

static void keeps_two_peers_pings_them_and_unsubscribes(void **state) {
  (void)state;
  ld_node_t *a, *b;
  start_services(&a, &b);
  edge_t e;
  start_edge(&e, a, b, 2, 200);
  assert_int_equal(ld_edge_filter_subscribe(e.ef, TOPIC, CONTENT), 0);
  WAIT_FOR(ld_edge_filter_peers(e.ef, TOPIC, NULL, 0) == 2);
  assert_int_equal(ld_edge_filter_peers(e.ef, NULL, NULL, 0), 2);
  /* The configured node and the identified one, each once. */
  assert_int_equal(ld_service_peers_count_connected(e.peers, LD_WAKU_FILTER_SUBSCRIBE_CODEC), 2);
  assert_int_equal(ld_service_peers_count_connected(e.peers, LD_WAKU_STORE_CODEC), 0);

  /* Both push the same message. */
  uint8_t hash[LD_WAKU_HASH_LEN];
  publish(b, "twice", hash);
  WAIT_FOR(e.pushes == 2);
  assert_memory_equal(e.last_hash, hash, LD_WAKU_HASH_LEN);

  /* A topic added later is subscribed at both; the pings keep succeeding. */
  assert_int_equal(ld_edge_filter_subscribe(e.ef, TOPIC, "/test/1/later/proto"), 0);
  ld_edge_filter_stats_t st;
  WAIT_FOR((ld_edge_filter_get_stats(e.ef, &st), st.subscribes == 4 && st.pings >= 4));
  assert_int_equal(st.subscribe_failures, 0);
  assert_int_equal(st.ping_failures, 0);
  assert_int_equal(st.peers_dropped, 0);
  assert_int_equal(ld_edge_filter_peers(e.ef, TOPIC, NULL, 0), 2);

  assert_int_equal(ld_edge_filter_unsubscribe(e.ef, TOPIC, CONTENT), 0);
  assert_int_equal(ld_edge_filter_unsubscribe(e.ef, TOPIC, CONTENT), LD_ERR_NOT_FOUND);
  assert_false(ld_edge_filter_subscribed(e.ef, TOPIC, CONTENT));
  assert_int_equal(ld_edge_filter_peers(e.ef, TOPIC, NULL, 0), 2);
  assert_int_equal(ld_edge_filter_unsubscribe(e.ef, TOPIC, "/test/1/later/proto"), 0);
  assert_int_equal(ld_edge_filter_peers(e.ef, NULL, NULL, 0), 0);
  WAIT_FOR(e.n_reports >= 2 && e.reports[e.n_reports - 1] == 0);

  stop_edge(&e);
  stop(b);
  stop(a);
}

static void bad_arguments_are_refused(void **state) {
  (void)state;
  ld_node_t *a, *b;
  start_services(&a, &b);
  edge_t e;
  start_edge(&e, a, b, 1, 60000);
  assert_int_equal(ld_edge_filter_subscribe(e.ef, "", CONTENT), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_edge_filter_subscribe(e.ef, TOPIC, NULL), LD_ERR_INVALID_ARG);
  assert_int_equal(ld_edge_filter_unsubscribe(e.ef, TOPIC, CONTENT), LD_ERR_NOT_FOUND);
  ld_edge_filter_callbacks_t none = {NULL, NULL};
  int rc = 0;
  assert_null(ld_edge_filter_new(e.node, e.client, e.peers, NULL, &none, NULL, &rc));
  assert_int_equal(rc, LD_ERR_INVALID_ARG);
  ld_edge_filter_config_t big;
  ld_edge_filter_config_default(&big);
  big.target_peers = LD_EDGE_FILTER_MAX_TARGET_PEERS + 1;
  ld_edge_filter_callbacks_t cb = {on_push, NULL};
  assert_null(ld_edge_filter_new(e.node, e.client, e.peers, &big, &cb, NULL, &rc));
  assert_int_equal(rc, LD_ERR_INVALID_ARG);
  /* Freed with a subscription being set up: nothing is called afterwards. */
  assert_int_equal(ld_edge_filter_subscribe(e.ef, TOPIC, CONTENT), 0);
  nh_pump(&g_loop);
  stop_edge(&e);
  stop(b);
  stop(a);
}

static int setup(void **state) {
  (void)state;
  uv_loop_init(&g_loop);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  while (uv_run(&g_loop, UV_RUN_NOWAIT) != 0)
    ;
  assert_int_equal(uv_loop_close(&g_loop), 0);
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(resubscribes_elsewhere_when_its_service_node_dies, setup,
                                      teardown),
      cmocka_unit_test_setup_teardown(keeps_two_peers_pings_them_and_unsubscribes, setup, teardown),
      cmocka_unit_test_setup_teardown(bad_arguments_are_refused, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
