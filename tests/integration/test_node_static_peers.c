/* Nodes started from configurations in one process over loopback: a static peer is dialed at
 * start and redialed with back-off after the peer restarts (same key, same port), the relay mesh
 * forms again and messages flow; the configured service nodes are dialed and kept the same way
 * (each peer once, static-peer events for the static nodes only); a static peer of another cluster
 * keeps being refused; a node on 0.0.0.0 announces interface addresses; a port in use fails the
 * start cleanly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <signal.h>
#include <uv.h>

#include "base/clock.h"
#include "base/error.h"
#include "node/events.h"
#include "node/node.h"
#include "waku/core/topics.h"
#include "node_harness.h"

#define STEP_MS 15000
#define KEY_A "5a0ab2f71f2a6b1e4c5d7b2f9e3c1a08d4b6e2f7c9a1b3d5e7f90213a4c6e8b1"
#define KEY_B "0f3e9b21c7d84a56e1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718"
#define TOPIC "/waku/2/rs/0/3"

static uv_loop_t g_loop;

#define WAIT_FOR(cond) NH_WAIT_FOR(&g_loop, cond, STEP_MS)

typedef struct watch {
  int static_up, static_down, dial_errors;
  char static_addrs[512]; /* the addresses static-peer events named, space-separated */
  int messages;
  char last_payload[64];
  bool stopped;
} watch_t;

static void on_static(int kind, const void *payload, void *ud) {
  (void)kind;
  const ld_event_static_peer_t *ev = payload;
  watch_t *w = ud;
  char text[LD_MULTIADDR_TEXT_MAX];
  ld_multiaddr_to_text(ev->addr, text, sizeof text);
  if (strstr(w->static_addrs, text) == NULL &&
      strlen(w->static_addrs) + strlen(text) + 2 < sizeof w->static_addrs) {
    strcat(w->static_addrs, text);
    strcat(w->static_addrs, " ");
  }
  if (ev->dial_error != 0)
    w->dial_errors++;
  else if (ev->connected)
    w->static_up++;
  else
    w->static_down++;
}

static void on_message(int kind, const void *payload, void *ud) {
  (void)kind;
  const ld_fanout_message_t *m = payload;
  watch_t *w = ud;
  if (m->own)
    return;
  w->messages++;
  size_t n = m->msg->payload_len < sizeof w->last_payload - 1 ? m->msg->payload_len
                                                              : sizeof w->last_payload - 1;
  memcpy(w->last_payload, m->msg->payload, n);
  w->last_payload[n] = '\0';
}

static void on_stopped(void *ud) {
  ((watch_t *)ud)->stopped = true;
}

static ld_node_config_t *base_config(void) {
  ld_node_config_t *cfg = malloc(sizeof *cfg);
  char err[256];
  ld_node_config_default(cfg);
  assert_int_equal(ld_node_config_set_listen(cfg, "127.0.0.1", 0, 0, err, sizeof err), 0);
  assert_int_equal(ld_node_config_add_shard(cfg, "3", err, sizeof err), 0);
  cfg->colocation_limit = 0;
  cfg->reconnect_min_ms = 100;
  cfg->reconnect_max_ms = 800;
  return cfg;
}

static ld_node_t *start_node(const ld_node_config_t *cfg, watch_t *w) {
  char err[256];
  ld_node_config_t copy = *cfg;
  assert_int_equal(ld_node_config_finalize(&copy, err, sizeof err), 0);
  int rc = 0;
  ld_node_t *n = ld_node_new(&g_loop, &copy, &rc);
  assert_non_null(n);
  ld_broker_subscribe(ld_node_broker(n), LD_EVENT_STATIC_PEER, on_static, w);
  ld_broker_subscribe(ld_node_broker(n), LD_EVENT_MESSAGE, on_message, w);
  assert_int_equal(ld_node_start(n), 0);
  return n;
}

static void stop_node(ld_node_t *n) {
  nh_stop(&g_loop, n, STEP_MS);
}

static uint16_t port_of(ld_node_t *n) {
  ld_multiaddr_t addrs[4];
  assert_true(ld_node_listen_addrs(n, addrs, 4) >= 1);
  struct sockaddr_storage ss;
  assert_int_equal(ld_multiaddr_to_sockaddr(&addrs[0], &ss), 0);
  return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

static int publish_text(ld_node_t *n, const char *text) {
  ld_waku_message_t msg;
  ld_waku_message_init(&msg);
  msg.payload = (const uint8_t *)text;
  msg.payload_len = strlen(text);
  msg.content_topic = "/test/1/static/proto";
  msg.content_topic_len = strlen(msg.content_topic);
  uint8_t hash[LD_WAKU_HASH_LEN];
  return ld_node_publish(n, TOPIC, &msg, hash);
}

static size_t topic_peers(ld_node_t *n) {
  return ld_gs_service_topic_peers(ld_node_gossipsub(n), TOPIC, NULL, 0);
}

static void static_peer_reconnects_after_the_peer_restarts(void **state) {
  (void)state;
  char err[256];
  watch_t wa = {0}, wb = {0};
  ld_node_config_t *ca = base_config();
  assert_int_equal(ld_node_config_set_nodekey_hex(ca, KEY_A, err, sizeof err), 0);
  ld_node_t *a = start_node(ca, &wa);
  uint16_t port = port_of(a);
  char text[LD_MULTIADDR_TEXT_MAX], peer_id[LD_PEERID_TEXT_MAX];
  ld_peerid_to_text(ld_node_peer_id(a), peer_id, sizeof peer_id);
  snprintf(text, sizeof text, "/ip4/127.0.0.1/tcp/%u/p2p/%s", port, peer_id);

  ld_node_config_t *cb = base_config();
  assert_int_equal(ld_node_config_add_static_node(cb, text, err, sizeof err), 0);
  ld_node_t *b = start_node(cb, &wb);
  ld_static_peers_t *sp = ld_node_static_peers(b);
  assert_non_null(sp);
  WAIT_FOR(ld_static_peers_state(sp, 0) == LD_STATIC_PEER_CONNECTED && wb.static_up >= 1);
  WAIT_FOR(topic_peers(a) == 1 && topic_peers(b) == 1);
  assert_true(publish_text(a, "before restart") >= 1);
  WAIT_FOR(wb.messages == 1);
  assert_string_equal(wb.last_payload, "before restart");

  /* A goes away: B notices, fails to redial while A is down, backing off */
  stop_node(a);
  WAIT_FOR(ld_static_peers_state(sp, 0) != LD_STATIC_PEER_CONNECTED);
  /* the drop of a young connection counts as the first failure, refused dials as the next */
  WAIT_FOR(ld_static_peers_failures(sp, 0) >= 3);
  assert_true(wb.dial_errors >= 2);
  uint64_t attempts_down = ld_static_peers_attempts(sp, 0);
  nh_run_for(&g_loop, 500);
  /* back-off: at most a couple of attempts in half a second (100, 200, 400, 800 ms steps) */
  assert_true(ld_static_peers_attempts(sp, 0) - attempts_down <= 2);

  /* A comes back with the same key on the same port */
  assert_int_equal(ld_node_config_set_listen(ca, "127.0.0.1", port, 0, err, sizeof err), 0);
  memset(&wa, 0, sizeof wa);
  a = start_node(ca, &wa);
  WAIT_FOR(ld_static_peers_state(sp, 0) == LD_STATIC_PEER_CONNECTED);
  WAIT_FOR(topic_peers(a) == 1 && topic_peers(b) == 1);
  assert_true(publish_text(a, "after restart") >= 1);
  WAIT_FOR(wb.messages == 2);
  assert_string_equal(wb.last_payload, "after restart");
  /* and the other way round */
  assert_true(publish_text(b, "from b") >= 1);
  WAIT_FOR(wa.messages == 1);
  assert_string_equal(wa.last_payload, "from b");

  stop_node(b);
  stop_node(a);
  free(ca);
  free(cb);
}

/* "/ip4/127.0.0.1/tcp/<port>/p2p/<id>" of a started node. */
static void addr_text(ld_node_t *n, char *out, size_t cap) {
  ld_multiaddr_t addr;
  assert_true(ld_node_listen_addrs(n, &addr, 1) == 1);
  assert_true(ld_multiaddr_to_text(&addr, out, cap) > 0);
}

/* C has A as static node and store node, B as lightpush and filter node: the engine keeps A and
 * B connected, each once; B is redialed when it comes back after a restart. */
static void configured_service_nodes_are_dialed_and_kept(void **state) {
  (void)state;
  char err[256], a_text[LD_MULTIADDR_TEXT_MAX], b_text[LD_MULTIADDR_TEXT_MAX];
  watch_t wa = {0}, wb = {0}, wc = {0};
  ld_node_config_t *ca = base_config();
  ld_node_t *a = start_node(ca, &wa);
  addr_text(a, a_text, sizeof a_text);
  ld_node_config_t *cb = base_config();
  assert_int_equal(ld_node_config_set_nodekey_hex(cb, KEY_B, err, sizeof err), 0);
  ld_node_t *b = start_node(cb, &wb);
  uint16_t b_port = port_of(b);
  addr_text(b, b_text, sizeof b_text);

  ld_node_config_t *cc = base_config();
  assert_int_equal(ld_node_config_add_static_node(cc, a_text, err, sizeof err), 0);
  assert_int_equal(
      ld_node_config_set_service_node(cc, LD_NODE_SERVICE_STORE, a_text, err, sizeof err), 0);
  assert_int_equal(
      ld_node_config_set_service_node(cc, LD_NODE_SERVICE_LIGHTPUSH, b_text, err, sizeof err), 0);
  assert_int_equal(
      ld_node_config_set_service_node(cc, LD_NODE_SERVICE_FILTER, b_text, err, sizeof err), 0);
  ld_node_t *c = start_node(cc, &wc);
  ld_static_peers_t *sp = ld_node_static_peers(c);
  assert_non_null(sp);
  assert_int_equal(ld_static_peers_count(sp), 2);
  assert_true(ld_peerid_equal(ld_static_peers_peer(sp, 0), ld_node_peer_id(a)));
  assert_true(ld_peerid_equal(ld_static_peers_peer(sp, 1), ld_node_peer_id(b)));
  WAIT_FOR(ld_static_peers_state(sp, 0) == LD_STATIC_PEER_CONNECTED &&
           ld_static_peers_state(sp, 1) == LD_STATIC_PEER_CONNECTED);
  /* relay nodes both: they become gossipsub peers like any connection */
  WAIT_FOR(topic_peers(c) == 2);

  /* B goes away and comes back with the same key on the same port: C dials it again */
  stop_node(b);
  WAIT_FOR(ld_static_peers_state(sp, 1) != LD_STATIC_PEER_CONNECTED);
  WAIT_FOR(ld_static_peers_failures(sp, 1) >= 2);
  assert_int_equal(ld_node_config_set_listen(cb, "127.0.0.1", b_port, 0, err, sizeof err), 0);
  b = start_node(cb, &wb);
  WAIT_FOR(ld_static_peers_state(sp, 1) == LD_STATIC_PEER_CONNECTED);
  WAIT_FOR(topic_peers(c) == 2);
  /* the static-peer events named A only */
  char expect[LD_MULTIADDR_TEXT_MAX + 2];
  snprintf(expect, sizeof expect, "%s ", a_text);
  assert_string_equal(wc.static_addrs, expect);
  assert_true(wc.dial_errors == 0);

  stop_node(c);
  stop_node(b);
  stop_node(a);
  free(ca);
  free(cb);
  free(cc);
}

static void a_static_peer_of_another_cluster_is_refused_again_and_again(void **state) {
  (void)state;
  char err[256];
  watch_t wa = {0}, wc = {0};
  ld_node_config_t *ca = base_config();
  ld_node_t *a = start_node(ca, &wa);
  ld_multiaddr_t addr;
  assert_true(ld_node_listen_addrs(a, &addr, 1) == 1);
  char text[LD_MULTIADDR_TEXT_MAX];
  ld_multiaddr_to_text(&addr, text, sizeof text);

  ld_node_config_t *cc = base_config();
  assert_int_equal(ld_node_config_set_cluster_id(cc, 7, err, sizeof err), 0);
  assert_int_equal(ld_node_config_add_static_node(cc, text, err, sizeof err), 0);
  ld_node_t *c = start_node(cc, &wc);
  ld_static_peers_t *sp = ld_node_static_peers(c);
  WAIT_FOR(ld_static_peers_failures(sp, 0) >= 3);
  assert_true(ld_static_peers_state(sp, 0) != LD_STATIC_PEER_CONNECTED ||
              ld_static_peers_failures(sp, 0) >= 3);
  assert_int_equal(topic_peers(a), 0);
  stop_node(c);
  stop_node(a);
  free(ca);
  free(cc);
}

static void unspecified_listen_addresses_are_announced_as_interfaces(void **state) {
  (void)state;
  char err[256];
  watch_t w = {0};
  ld_node_config_t *cfg = base_config();
  assert_int_equal(ld_node_config_set_listen(cfg, "0.0.0.0", 0, 0, err, sizeof err), 0);
  ld_node_t *n = start_node(cfg, &w);
  ld_multiaddr_t addrs[LD_NODE_MAX_LISTEN_ADDRS];
  size_t count = ld_node_listen_addrs(n, addrs, LD_NODE_MAX_LISTEN_ADDRS);
  assert_true(count >= 1);
  bool loopback = false;
  for (size_t i = 0; i < count && i < LD_NODE_MAX_LISTEN_ADDRS; i++) {
    char text[LD_MULTIADDR_TEXT_MAX];
    ld_multiaddr_to_text(&addrs[i], text, sizeof text);
    assert_null(strstr(text, "/0.0.0.0/"));
    assert_non_null(strstr(text, "/p2p/"));
    loopback = loopback || strncmp(text, "/ip4/127.0.0.1/tcp/", 19) == 0;
  }
  assert_true(loopback);
  /* the provider answers the same */
  ld_multiaddr_t via[LD_NODE_MAX_LISTEN_ADDRS];
  ld_request_addrs_t req = {via, LD_NODE_MAX_LISTEN_ADDRS, 0};
  assert_int_equal(ld_broker_request(ld_node_broker(n), LD_PROVIDE_LISTEN_ADDRS, NULL, &req), 0);
  assert_int_equal(req.total, count);
  stop_node(n);
  free(cfg);
}

static void a_port_in_use_fails_the_start_and_the_node_still_stops(void **state) {
  (void)state;
  char err[256];
  watch_t wa = {0};
  ld_node_config_t *ca = base_config();
  ca->rest.enabled = true;
  ca->rest.port = 0;
  ca->metrics.enabled = true;
  ca->metrics.port = 0;
  ld_node_t *a = start_node(ca, &wa);
  assert_true(ld_node_rest_port(a) > 0);
  assert_true(ld_node_metrics_port(a) > 0);
  assert_int_equal(ld_node_start(a), LD_ERR_STATE);

  ld_node_config_t *cd = base_config();
  assert_int_equal(ld_node_config_set_listen(cd, "127.0.0.1", port_of(a), 0, err, sizeof err), 0);
  assert_int_equal(ld_node_config_finalize(cd, err, sizeof err), 0);
  int rc = 0;
  ld_node_t *d = ld_node_new(&g_loop, cd, &rc);
  assert_non_null(d);
  assert_int_equal(ld_node_start(d), LD_ERR_ADDR_IN_USE);
  stop_node(d);

  /* REST on the same port as A's REST server */
  free(cd);
  cd = base_config();
  cd->rest.enabled = true;
  cd->rest.port = ld_node_rest_port(a);
  assert_int_equal(ld_node_config_finalize(cd, err, sizeof err), 0);
  d = ld_node_new(&g_loop, cd, &rc);
  assert_int_equal(ld_node_start(d), LD_ERR_ADDR_IN_USE);
  stop_node(d);
  stop_node(a);
  free(ca);
  free(cd);
}

static void relay_off_mounts_no_relay(void **state) {
  (void)state;
  watch_t w = {0};
  ld_node_config_t *cfg = base_config();
  cfg->relay = false;
  ld_node_t *n = start_node(cfg, &w);
  assert_null(ld_node_relay(n));
  assert_null(ld_node_gossipsub(n));
  assert_non_null(ld_node_metadata(n));
  assert_int_equal(ld_node_subscribe(n, TOPIC), LD_ERR_UNSUPPORTED);
  assert_int_equal(publish_text(n, "x"), LD_ERR_UNSUPPORTED);
  ld_relay_health_t h;
  assert_int_equal(ld_broker_request(ld_node_broker(n), LD_PROVIDE_TOPIC_HEALTH, TOPIC, &h),
                   LD_ERR_UNSUPPORTED);
  stop_node(n);
  free(cfg);
}

typedef struct stopper {
  ld_node_t *node;
  watch_t *watch;
  int calls;
} stopper_t;

static void stop_on_connection(int kind, const void *payload, void *ud) {
  (void)kind;
  (void)payload;
  stopper_t *s = ud;
  if (s->calls++ == 0) {
    ld_node_stop(s->node, on_stopped, s->watch);
    ld_node_stop(s->node, NULL, NULL); /* a second stop is a no-op */
  }
}

static void a_node_stops_from_inside_a_listener(void **state) {
  (void)state;
  char err[256];
  watch_t wa = {0}, wb = {0};
  ld_node_config_t *ca = base_config();
  ld_node_t *a = start_node(ca, &wa);
  stopper_t stopper = {a, &wa, 0};
  ld_broker_subscribe(ld_node_broker(a), LD_EVENT_CONNECTION, stop_on_connection, &stopper);
  ld_multiaddr_t addr;
  assert_int_equal(ld_node_listen_addrs(a, &addr, 1), 1);
  char text[LD_MULTIADDR_TEXT_MAX];
  ld_multiaddr_to_text(&addr, text, sizeof text);
  ld_node_config_t *cb = base_config();
  assert_int_equal(ld_node_config_add_static_node(cb, text, err, sizeof err), 0);
  ld_node_t *b = start_node(cb, &wb);
  WAIT_FOR(wa.stopped);
  assert_int_equal(stopper.calls, 1);
  /* B lost A and keeps trying */
  WAIT_FOR(ld_static_peers_failures(ld_node_static_peers(b), 0) >= 2);
  stop_node(b);
  free(ca);
  free(cb);
}

static int setup(void **state) {
  (void)state;
  uv_loop_init(&g_loop);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  nh_run_for(&g_loop, 50);
  uv_run(&g_loop, UV_RUN_NOWAIT);
  return uv_loop_close(&g_loop) == 0 ? 0 : -1;
}

int main(void) {
  signal(SIGPIPE, SIG_IGN); /* as the program does: a closed peer is a write error */
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(static_peer_reconnects_after_the_peer_restarts),
      cmocka_unit_test(configured_service_nodes_are_dialed_and_kept),
      cmocka_unit_test(a_static_peer_of_another_cluster_is_refused_again_and_again),
      cmocka_unit_test(unspecified_listen_addresses_are_announced_as_interfaces),
      cmocka_unit_test(a_port_in_use_fails_the_start_and_the_node_still_stops),
      cmocka_unit_test(relay_off_mounts_no_relay),
      cmocka_unit_test(a_node_stops_from_inside_a_listener),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
